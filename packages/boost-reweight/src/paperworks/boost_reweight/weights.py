"""Trajectory weights and the bound's three diagnostics (our reading of BOOST's PAC-Bayes trade-off).

- :func:`normalize_weights`: logits -> weights with mean 1 (``n * softmax(logits / temperature)``);
- :func:`effective_sample_size`: ``(sum w)^2 / sum w^2`` (the ESS term of the bound);
- :func:`task_shift_proxy`: the weighted mean of a domain classifier's synthetic-vs-real log-odds
  ``log((1 - p_real) / p_real)`` (the task-shift term; lower = more real-like);
- :func:`type_coverage`: the normalised entropy of the weighted task-type distribution (diversity);
- :class:`ReweightingHead`: the lightweight head ``h_phi``: an MLP from trajectory features to one
  logit per trajectory, zero-initialised output so that it starts at uniform weights.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import positive_float, positive_int

__all__ = [
    "ReweightingHead",
    "effective_sample_size",
    "normalize_weights",
    "task_shift_proxy",
    "type_coverage",
]


def _finite_tensor(x: object, name: str, ndim: int) -> torch.Tensor:
    t = torch.as_tensor(x)
    if t.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d tensor, got shape {tuple(t.shape)}")
    if t.numel() == 0:
        raise ValueError(f"{name}: expected a non-empty tensor")
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name}: expected finite values (found NaN or inf)")
    return t


def normalize_weights(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Weights with mean 1: ``w = n * softmax(logits / temperature)``.

    ``logits``: (n,) head outputs; ``temperature`` > 0 (large: uniform, small: concentrated on the
    largest logit). Differentiable in ``logits``. Returns (n,) positive weights summing to n.
    """
    t = positive_float(temperature, "temperature")
    z = _finite_tensor(logits, "logits", 1)
    return z.numel() * torch.softmax(z / t, dim=0)


def effective_sample_size(weights: object) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of non-negative weights (n for uniform)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights: expected a non-empty 1-d array, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights: expected finite non-negative weights with a positive sum")
    return float(w.sum() ** 2 / (w**2).sum())


def task_shift_proxy(weights: object, p_real: object, eps: float = 1e-6) -> float:
    """Weighted mean synthetic-vs-real log-odds ``sum_i w_i log((1 - p_i) / p_i) / sum_i w_i``.

    ``p_real``: (n,) a domain classifier's probability that trajectory i is real. Uniform weights give
    the pool's mean log-odds; weight on real-looking trajectories lowers it.
    """
    w = np.asarray(weights, dtype=float)
    p = np.asarray(p_real, dtype=float)
    if w.ndim != 1 or w.shape != p.shape or w.size == 0:
        raise ValueError(
            f"weights, p_real: expected two non-empty 1-d arrays of one length, got {w.shape}, {p.shape}"
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError("p_real: expected probabilities in [0, 1]")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights: expected finite non-negative weights with a positive sum")
    p = np.clip(p, eps, 1 - eps)
    return float((w * np.log((1 - p) / p)).sum() / w.sum())


def type_coverage(weights: object, types: object, n_types: int) -> float:
    """Normalised entropy (in [0, 1]) of the weight mass per task type: 1 = every type equally covered."""
    k = positive_int(n_types, "n_types")
    w = np.asarray(weights, dtype=float)
    ty = np.asarray(types)
    if w.ndim != 1 or w.shape != ty.shape or w.size == 0:
        raise ValueError(
            f"weights, types: expected two non-empty 1-d arrays of one length, got {w.shape}, {ty.shape}"
        )
    if not np.issubdtype(ty.dtype, np.integer) or ty.min() < 0 or ty.max() >= k:
        raise ValueError(f"types: expected integers in [0, {k})")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights: expected finite non-negative weights with a positive sum")
    if k == 1:
        return 1.0
    mass = np.bincount(ty, weights=w, minlength=k) / w.sum()
    nz = mass[mass > 0]
    return float(-(nz * np.log(nz)).sum() / math.log(k))


class ReweightingHead(nn.Module):
    """The reweighting head ``h_phi``: features (n, d) -> logits (n,), turned into mean-1 weights.

    A one-hidden-layer MLP (``hidden`` units, ReLU). The output layer starts at zero, so the head
    starts at uniform weights. :meth:`weights` gives ``n * softmax(h_phi(x) / temperature)``.
    """

    def __init__(self, in_features: int, hidden: int = 32, temperature: float = 1.0) -> None:
        super().__init__()
        self.in_features = positive_int(in_features, "in_features")
        self.temperature = positive_float(temperature, "temperature")
        self.net = nn.Sequential(
            nn.Linear(self.in_features, positive_int(hidden, "hidden")), nn.ReLU(), nn.Linear(hidden, 1)
        )
        nn.init.zeros_(self.net[2].weight)
        nn.init.zeros_(self.net[2].bias)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """(n, in_features) -> (n,) logits."""
        if features.ndim != 2 or features.shape[1] != self.in_features:
            raise ValueError(f"features: expected shape (n, {self.in_features}), got {tuple(features.shape)}")
        return self.net(features).squeeze(-1)

    def weights(self, features: torch.Tensor, temperature: float | None = None) -> torch.Tensor:
        """(n, in_features) -> (n,) weights with mean 1."""
        return normalize_weights(self(features), self.temperature if temperature is None else temperature)
