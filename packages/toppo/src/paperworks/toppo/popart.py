"""Per-task PopArt value heads (van Hasselt et al. 2016, arXiv 1602.07714; multi-task: Hessel et al.
2019, arXiv 1809.04474).

``K`` linear heads on a shared feature ``h (B, H)``: head ``k`` outputs the *normalised* value
``n_k(h) = w_k . h + b_k``; the unnormalised value is ``sigma_k n_k(h) + mu_k``. ART: per-task running
first and second moments of the value targets, ``mu_k <- (1 - beta_t) mu_k + beta_t mean(y_k)``, ``nu_k``
likewise for ``y_k^2``, with ``beta_t = max(beta, 1/t_k)`` (the first update takes the batch moments);
``sigma_k = sqrt(max(nu_k - mu_k^2, sigma_floor^2))``. POP (eq. 6 of van Hasselt et al.): on every
statistics change, ``w_k <- w_k sigma_k / sigma_k'`` and ``b_k <- (sigma_k b_k + mu_k - mu_k') / sigma_k'``,
so the unnormalised outputs are unchanged (tested). Tasks absent from a batch keep their statistics.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperworks.core.validate import fraction, positive_float, positive_int

__all__ = ["MultiHeadValue", "PopArt", "popart_preserve"]


def _check_ids(task_ids: torch.Tensor, n_tasks: int) -> torch.Tensor:
    if task_ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise TypeError(f"task_ids: expected an integer tensor, got {task_ids.dtype}")
    if task_ids.numel() and (int(task_ids.min()) < 0 or int(task_ids.max()) >= n_tasks):
        raise ValueError(
            f"task_ids: expected ids in [0, {n_tasks - 1}], got range "
            f"[{int(task_ids.min())}, {int(task_ids.max())}]"
        )
    return task_ids.long()


class MultiHeadValue(nn.Module):
    """``K`` linear value heads: ``forward(h (B, H), task_ids (B,)) -> (B,)`` (head ``task_ids[i]``)."""

    def __init__(self, in_features: int, n_tasks: int):
        super().__init__()
        self.in_features = positive_int(in_features, "in_features")
        self.n_tasks = positive_int(n_tasks, "n_tasks")
        bound = 1.0 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(n_tasks, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.zeros(n_tasks))

    def forward(self, h: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        if h.ndim != 2 or h.shape[1] != self.in_features:
            raise ValueError(f"h: expected shape (B, {self.in_features}), got {tuple(h.shape)}")
        ids = _check_ids(task_ids, self.n_tasks)
        return (h * self.weight[ids]).sum(-1) + self.bias[ids]

    # a plain head has no statistics: values are already unnormalised
    def unnormalise(self, v: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        return v

    def normalise(self, y: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        return y


def popart_preserve(weight, bias, mu, sigma, new_mu, new_sigma):
    """POP: ``(w sigma / sigma', (sigma b + mu - mu') / sigma')`` row-wise.

    ``weight (K, H)``; ``bias``, ``mu``, ``sigma``, ``new_mu``, ``new_sigma`` ``(K,)``.
    """
    new_w = weight * (sigma / new_sigma)[:, None]
    new_b = (sigma * bias + mu - new_mu) / new_sigma
    return new_w, new_b


class PopArt(MultiHeadValue):
    """Per-task PopArt heads: ``forward`` returns normalised values; see the module docstring.

    Buffers ``mu``, ``nu`` (second moment), ``count`` (updates seen per task): ``3 K`` numbers of state,
    no extra parameters beyond the ``K`` heads.
    """

    def __init__(self, in_features: int, n_tasks: int, beta: float = 0.1, sigma_floor: float = 1e-4):
        super().__init__(in_features, n_tasks)
        self.beta = fraction(beta, "beta", open_low=True)
        self.sigma_floor = positive_float(sigma_floor, "sigma_floor")
        self.register_buffer("mu", torch.zeros(n_tasks))
        self.register_buffer("nu", torch.ones(n_tasks))
        self.register_buffer("count", torch.zeros(n_tasks))

    @property
    def sigma(self) -> torch.Tensor:
        return torch.sqrt(torch.clamp(self.nu - self.mu**2, min=self.sigma_floor**2))

    def unnormalise(self, v: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        ids = _check_ids(task_ids, self.n_tasks)
        return v * self.sigma[ids] + self.mu[ids]

    def normalise(self, y: torch.Tensor, task_ids: torch.Tensor) -> torch.Tensor:
        ids = _check_ids(task_ids, self.n_tasks)
        return (y - self.mu[ids]) / self.sigma[ids]

    @torch.no_grad()
    def update(self, targets: torch.Tensor, task_ids: torch.Tensor) -> None:
        """ART then POP with the targets of one batch (``targets (B,)``, unnormalised)."""
        if targets.ndim != 1 or targets.shape != task_ids.shape:
            raise ValueError(
                f"targets: expected shape {tuple(task_ids.shape)} like task_ids, got {tuple(targets.shape)}"
            )
        if not torch.isfinite(targets).all():
            raise ValueError("targets: expected finite values")
        ids = _check_ids(task_ids, self.n_tasks)
        k = self.n_tasks
        n = torch.zeros(k, dtype=targets.dtype, device=targets.device).index_add_(
            0, ids, torch.ones_like(targets)
        )
        s1 = torch.zeros_like(n).index_add_(0, ids, targets)
        s2 = torch.zeros_like(n).index_add_(0, ids, targets**2)
        present = n > 0
        m1 = s1 / n.clamp(min=1)
        m2 = s2 / n.clamp(min=1)
        count = self.count + present.to(self.count.dtype)
        beta = torch.where(
            present, torch.maximum(torch.full_like(count, self.beta), 1.0 / count.clamp(min=1)), 0.0
        )
        old_mu, old_sigma = self.mu.clone(), self.sigma.clone()
        self.mu.copy_((1 - beta) * self.mu + beta * m1)
        self.nu.copy_((1 - beta) * self.nu + beta * m2)
        self.count.copy_(count)
        new_w, new_b = popart_preserve(self.weight, self.bias, old_mu, old_sigma, self.mu, self.sigma)
        self.weight.copy_(new_w)
        self.bias.copy_(new_b)
