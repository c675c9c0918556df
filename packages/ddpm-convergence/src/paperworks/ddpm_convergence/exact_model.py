"""``ExactScoreModel``: a target's exact score as a diffusers-style epsilon-prediction model (needs torch).

``eps_theta(x, i) = -sqrt(1 - abar_t) s_t(x)`` with diffusers' timestep ``i = t - 1`` (0-based). The
module takes ``sample`` of shape (B, d) or (B, ...) with ``d`` trailing entries (flattened, as an
image-shaped sample would be) and a timestep given as an int, a 0-d tensor or a (B,) tensor, and
returns an object with ``.sample`` (``return_dict=True``, like diffusers' model outputs) or the tuple
``(eps,)``. It computes in float64 and returns ``sample``'s dtype. Use it in any scheduler loop::

    scheduler = DDPMScheduler(trained_betas=schedule.trained_betas(), variance_type="fixed_large",
                              clip_sample=False, num_train_timesteps=schedule.T)
    for i in scheduler.timesteps:
        x = scheduler.step(model(x, i).sample, i, x).prev_sample
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .schedules import Schedule
from .targets import GaussianMixture

__all__ = ["ExactScoreModel", "ExactScoreOutput"]


@dataclass
class ExactScoreOutput:
    """``sample``: the epsilon prediction, shaped like the input."""

    sample: torch.Tensor

    def __getitem__(self, i: int) -> torch.Tensor:
        return (self.sample,)[i]


class ExactScoreModel(torch.nn.Module):
    """A :class:`GaussianMixture`'s exact epsilon prediction under a :class:`Schedule` (module doc)."""

    def __init__(self, target: GaussianMixture, schedule: Schedule) -> None:
        super().__init__()
        if not isinstance(target, GaussianMixture):
            raise TypeError(f"target: expected a GaussianMixture, got {type(target).__name__}")
        if not isinstance(schedule, Schedule):
            raise TypeError(f"schedule: expected a Schedule, got {type(schedule).__name__}")
        self.target, self.schedule = target, schedule

        def buf(a: Any) -> torch.Tensor:
            return torch.tensor(np.array(a, dtype=np.float64))

        self.register_buffer("log_weights", buf(target.weights).log())
        self.register_buffer("means", buf(target.means))
        self.register_buffer("covs", buf(target.covs))
        self.register_buffer("alpha_bars", buf(schedule.alpha_bars))
        self.isotropic = target.isotropic
        if self.isotropic:
            self.register_buffer("variances", buf(target._iso))

    @property
    def d(self) -> int:
        return self.target.d

    def score(self, x: torch.Tensor, t: int) -> torch.Tensor:
        """``s_t(x)`` for x (n, d) float64 and t in 1..T (torch, differentiable in x)."""
        ab = self.alpha_bars[t - 1]
        mu = ab.sqrt() * self.means  # (K, d)
        diff = x[:, None, :] - mu[None]
        d = self.d
        if self.isotropic:
            v = ab * self.variances + (1 - ab)  # (K,)
            sq = (diff * diff).sum(-1)
            logp = self.log_weights - 0.5 * (sq / v + d * torch.log(2 * math.pi * v))
            sk = -diff / v[None, :, None]
        else:
            eye = torch.eye(d, dtype=x.dtype, device=x.device)
            cov = ab * self.covs + (1 - ab) * eye
            chol = torch.linalg.cholesky(cov)
            sol = torch.cholesky_solve(diff.permute(1, 2, 0), chol)  # (K, d, n)
            sk = -sol.permute(2, 0, 1)
            logdet = 2 * torch.log(torch.diagonal(chol, dim1=1, dim2=2)).sum(-1)
            sq = -(diff * sk).sum(-1)
            logp = self.log_weights - 0.5 * (sq + logdet + d * math.log(2 * math.pi))
        w = torch.softmax(logp, dim=1)
        return (w[:, :, None] * sk).sum(1)

    def forward(self, sample: torch.Tensor, timestep: Any, return_dict: bool = True) -> Any:
        if not isinstance(sample, torch.Tensor):
            raise TypeError(f"sample: expected a torch.Tensor, got {type(sample).__name__}")
        if sample.ndim < 2 or sample[0].numel() != self.d:
            raise ValueError(
                f"sample: expected shape (B, {self.d}) or (B, ...) with {self.d} entries, "
                f"got {tuple(sample.shape)}"
            )
        if not torch.isfinite(sample).all():
            raise ValueError("sample: expected finite values")
        x = sample.reshape(sample.shape[0], self.d).to(torch.float64)
        steps = torch.as_tensor(timestep).reshape(-1).to(torch.int64)
        if steps.numel() not in (1, x.shape[0]):
            raise ValueError(f"timestep: expected an int or {x.shape[0]} timesteps, got {steps.numel()}")
        T = self.schedule.T
        if steps.min() < 0 or steps.max() > T - 1:
            raise ValueError(
                f"timestep: expected diffusers timesteps in 0..{T - 1}, got {steps.tolist()[:5]}"
            )
        eps = torch.empty_like(x)
        if steps.numel() == 1:
            steps = steps.expand(x.shape[0])
        for i in torch.unique(steps).tolist():
            rows = steps == i
            t = int(i) + 1
            eps[rows] = -math.sqrt(1 - self.schedule.alpha_bar(t)) * self.score(x[rows], t)
        out = eps.reshape(sample.shape).to(sample.dtype)
        return ExactScoreOutput(out) if return_dict else (out,)
