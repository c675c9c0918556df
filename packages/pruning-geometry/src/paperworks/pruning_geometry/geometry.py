"""Layerwise geometry profiles (mean norm, mean pairwise distance) and the distortion between two.

TAPIOCA characterises a task's "adapted geometry" by the layerwise profiles of its ID inputs'
representations and measures how OOD inputs distort it. Our definitions (README, Fidelity; the paper's
exact ones are not public):

- representation of input ``i`` at depth ``l``: the hidden state at the last position
  (``pool="last"``, the position the prediction is read from) or the mean over positions
  (``pool="mean"``), ``h_{i,l}`` in ``R^d``, at the output of each decoder layer ``l = 0..L-1``
  (before the final norm; the embeddings are not a depth: with last-position pooling a fixed final
  token gives every input the same embedding);
- norm profile ``n_l = mean_i ||h_{i,l}||_2``;
- distance profile ``d_l = mean_{i<j} ||h_{i,l} - h_{j,l}||_2``;
- distortion ``D(A, B) = D_norm + D_dist`` with
  ``D_norm = mean_l (log n_l^A - log n_l^B)^2`` and ``D_dist = mean_l (log d_l^A - log d_l^B)^2``,
  averaged (not summed) over the depths so that models of different depth compare; ``depths=``
  restricts the mean to some layers (e.g. the layers a pruned model keeps).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import one_of

from .layers import find_layers

__all__ = ["Distortion", "Profile", "distortion", "mean_norm", "mean_pairwise_distance", "profiles"]


def _check_reps(h: torch.Tensor, name: str, min_rows: int) -> torch.Tensor:
    if not isinstance(h, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor of shape (n, d), got {type(h).__name__}")
    if h.ndim != 2:
        raise ValueError(f"{name}: expected shape (n, d), got {tuple(h.shape)}")
    if h.shape[0] < min_rows:
        raise ValueError(f"{name}: expected at least {min_rows} representations, got {h.shape[0]}")
    if not torch.isfinite(h).all():
        raise ValueError(f"{name}: expected finite values")
    return h


def mean_norm(h: torch.Tensor) -> float:
    """``mean_i ||h_i||_2`` of representations ``h`` of shape ``(n, d)``, ``n >= 1``."""
    h = _check_reps(h, "h", 1)
    return float(torch.linalg.vector_norm(h.double(), dim=1).mean())


def mean_pairwise_distance(h: torch.Tensor) -> float:
    """``mean_{i<j} ||h_i - h_j||_2`` of representations ``h`` of shape ``(n, d)``, ``n >= 2``."""
    h = _check_reps(h, "h", 2).double()
    n = h.shape[0]
    dist = torch.cdist(h, h, compute_mode="donot_use_mm_for_euclid_dist")
    iu = torch.triu_indices(n, n, offset=1)
    return float(dist[iu[0], iu[1]].mean())


@dataclass(frozen=True)
class Profile:
    """Layerwise profiles of one input set: ``norms[l]``, ``dists[l]`` at the output of layer ``l``."""

    norms: np.ndarray
    dists: np.ndarray

    @property
    def depths(self) -> int:
        return int(self.norms.size)


@dataclass(frozen=True)
class Distortion:
    """``D = norm + dist``: mean squared log-ratio of two profiles' norms and distances."""

    norm: float
    dist: float

    @property
    def total(self) -> float:
        return self.norm + self.dist


def _pool(h: torch.Tensor, pool: str) -> torch.Tensor:
    return h[:, -1, :] if pool == "last" else h.mean(dim=1)


def _call(model: nn.Module, inputs):
    if isinstance(inputs, Mapping):
        return model(**inputs)
    return model(inputs)


def _batch_size(inputs) -> int:
    if isinstance(inputs, Mapping):
        for key in ("input_ids", "inputs_embeds", "inputs"):
            if key in inputs and isinstance(inputs[key], torch.Tensor):
                return int(inputs[key].shape[0])
        first = next((v for v in inputs.values() if isinstance(v, torch.Tensor)), None)
        if first is None:
            raise TypeError("inputs: expected a tensor or a mapping holding at least one tensor")
        return int(first.shape[0])
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(
            f"inputs: expected a tensor or a mapping of model kwargs, got {type(inputs).__name__}"
        )
    return int(inputs.shape[0])


@torch.inference_mode()
def profiles(model: nn.Module, inputs, *, pool: str = "last", layers_attr: str | None = None) -> Profile:
    """Layerwise norm and pairwise-distance profiles of ``model`` on a batch of ``inputs``.

    ``inputs``: a tensor passed as ``model(inputs)`` (e.g. ``input_ids`` of shape ``(n, T)``) or a
    mapping passed as ``model(**inputs)``; ``n >= 2``. The hidden states are read with forward
    hooks on the decoder layers (the model is unchanged). Returns a :class:`Profile` of ``L``
    depths (one per layer output).
    """
    one_of(pool, "pool", ("last", "mean"))
    n = _batch_size(inputs)
    if n < 2:
        raise ValueError(f"inputs: expected a batch of at least 2 inputs (pairwise distances), got {n}")
    _, _, layers = find_layers(model, layers_attr)
    states: list[torch.Tensor] = []

    def post(module, args, kwargs, output):
        h = output[0] if isinstance(output, tuple) else output
        states.append(_pool(h, pool).detach())

    handles = [layer.register_forward_hook(post, with_kwargs=True) for layer in layers]
    try:
        _call(model, inputs)
    finally:
        for h in handles:
            h.remove()
    if len(states) != len(layers):
        raise RuntimeError(f"profiles: expected {len(layers)} hidden states, the hooks saw {len(states)}")
    norms = np.array([mean_norm(h) for h in states])
    dists = np.array([mean_pairwise_distance(h) for h in states])
    return Profile(norms=norms, dists=dists)


def distortion(a: Profile, b: Profile, depths=None) -> Distortion:
    """``D(a, b)``: mean over depths of squared log-ratios of norms and of pairwise distances.

    ``depths``: the layer indices to average over (default: all).
    """
    for name, p in (("a", a), ("b", b)):
        if not isinstance(p, Profile):
            raise TypeError(f"{name}: expected a Profile, got {type(p).__name__}")
    if a.depths != b.depths:
        raise ValueError(f"a, b: expected profiles of one depth, got {a.depths} and {b.depths}")
    if depths is None:
        idx = np.arange(a.depths)
    else:
        idx = np.asarray(list(depths), dtype=int)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= a.depths or np.unique(idx).size != idx.size:
            raise ValueError(
                f"depths: expected distinct layer indices in 0..{a.depths - 1}, got {list(depths)}"
            )
    for name, p in (("a", a), ("b", b)):
        if np.any(p.norms[idx] <= 0) or np.any(p.dists[idx] <= 0):
            raise ValueError(f"{name}: expected positive norms and distances at the depths (a log ratio)")
    dn = float(np.mean((np.log(a.norms[idx]) - np.log(b.norms[idx])) ** 2))
    dd = float(np.mean((np.log(a.dists[idx]) - np.log(b.dists[idx])) ** 2))
    return Distortion(norm=dn, dist=dd)
