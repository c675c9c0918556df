"""Group-relative policy optimisation (GRPO; Shao et al. 2024, DeepSeekMath, arXiv 2402.03300, eq. 3).

For a prompt (here: a user) the old policy samples a group of ``G`` outputs ``o_1..o_G`` (here: a
selection of signal fragments, one binary decision per signal = one "token"), each scored with a reward
``r_i``. Outcome supervision gives every token of output ``i`` the group-normalised advantage

    A_i = (r_i - mean(r)) / (std(r) + eps)                                   (group_advantages)

and the objective, maximised, is

    J = mean_i 1/|o_i| sum_t [ min(rho_it A_i, clip(rho_it, 1 - e, 1 + e) A_i) - beta KL_it ]
    rho_it = pi(o_it) / pi_old(o_it),
    KL_it  = pi_ref/pi - log(pi_ref/pi) - 1            (the unbiased, non-negative "k3" estimator)

:func:`grpo_loss` returns ``-J`` (a loss to minimise); :class:`GRPOLoss` is its module twin.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from paperworks.core.validate import fraction, nonnegative_float, positive_float, positive_int

from ._checks import float_tensor

__all__ = ["GRPOConfig", "GRPOLoss", "group_advantages", "grpo_loss", "k3_kl"]


@dataclass(frozen=True)
class GRPOConfig:
    """GRPO hyper-parameters. DeepSeekMath's defaults: G=64, clip 0.2, beta 0.04, one inner step;
    ours are laptop-sized (G=8, 2 inner steps)."""

    group_size: int = 8
    clip_eps: float = 0.2
    beta: float = 0.04
    inner_steps: int = 2
    iterations: int = 60
    users_per_step: int = 256
    lr: float = 0.03
    adv_eps: float = 1e-4

    def __post_init__(self) -> None:
        for k in ("group_size", "inner_steps", "iterations", "users_per_step"):
            positive_int(getattr(self, k), k)
        if self.group_size < 2:
            raise ValueError(f"group_size: GRPO needs groups of >= 2 samples, got {self.group_size}")
        fraction(self.clip_eps, "clip_eps", open_low=True, open_high=True)
        nonnegative_float(self.beta, "beta")
        positive_float(self.lr, "lr")
        positive_float(self.adv_eps, "adv_eps")


def group_advantages(rewards: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """Group-normalised advantages ``(r - mean_g r) / (std_g r + eps)``; ``rewards``: ``(B, G)``.

    ``std`` is the population standard deviation over the group (``unbiased=False``); a group whose
    rewards are all equal gets advantage 0. Returns ``(B, G)``.
    """
    rewards = float_tensor(rewards, "rewards")
    if rewards.ndim != 2 or rewards.shape[1] < 2 or rewards.shape[0] == 0:
        raise ValueError(
            f"rewards: expected shape (n_groups >= 1, group_size >= 2), got {tuple(rewards.shape)}"
        )
    return _group_advantages(rewards, positive_float(eps, "eps"))


def _group_advantages(rewards: torch.Tensor, eps: float) -> torch.Tensor:
    mean = rewards.mean(1, keepdim=True)
    std = rewards.std(1, unbiased=False, keepdim=True)
    return (rewards - mean) / (std + eps)


# log-probabilities may exceed 0 by float rounding only
_LOGP_SLACK = 1e-5


def _check_logp(x: object, name: str) -> torch.Tensor:
    t = float_tensor(x, name)
    if t.numel() and t.max() > _LOGP_SLACK:
        raise ValueError(f"{name}: expected log-probabilities <= 0, got max {float(t.max()):.4g}")
    return t


def k3_kl(logp: torch.Tensor, logp_ref: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(pi || pi_ref) from samples of pi: ``exp(d) - d - 1``, d = ref - logp.

    ``logp``, ``logp_ref``: log-probabilities (<= 0) of the same shape. Returns that shape, >= 0.
    """
    logp, logp_ref = _check_logp(logp, "logp"), _check_logp(logp_ref, "logp_ref")
    if logp.shape != logp_ref.shape:
        raise ValueError(
            f"logp_ref: expected the shape of logp {tuple(logp.shape)}, got {tuple(logp_ref.shape)}"
        )
    return _k3(logp, logp_ref)


def _k3(logp: torch.Tensor, logp_ref: torch.Tensor) -> torch.Tensor:
    d = logp_ref - logp
    return torch.exp(d) - d - 1.0


def grpo_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    logp_ref: torch.Tensor,
    advantages: torch.Tensor,
    *,
    clip_eps: float = 0.2,
    beta: float = 0.04,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """The GRPO loss ``-J`` (module docstring), a scalar.

    ``logp``, ``logp_old``, ``logp_ref``: per-token log-probabilities ``(B, G, T)`` of the sampled tokens
    under the current, sampling and reference policies; ``advantages``: ``(B, G)``; ``mask``:
    optional ``(B, G, T)`` (1 = real token), default all ones. ``logp_old``/``logp_ref`` are detached.
    """
    logp = _check_logp(logp, "logp")
    if logp.ndim != 3 or logp.numel() == 0:
        raise ValueError(f"logp: expected a non-empty (B, G, T) tensor, got shape {tuple(logp.shape)}")
    logp_old, logp_ref = _check_logp(logp_old, "logp_old"), _check_logp(logp_ref, "logp_ref")
    for name, t in (("logp_old", logp_old), ("logp_ref", logp_ref)):
        if t.shape != logp.shape:
            raise ValueError(f"{name}: expected the shape of logp {tuple(logp.shape)}, got {tuple(t.shape)}")
    advantages = float_tensor(advantages, "advantages")
    if advantages.shape != logp.shape[:2]:
        raise ValueError(f"advantages: expected shape {tuple(logp.shape[:2])}, got {tuple(advantages.shape)}")
    if mask is not None:
        mask = float_tensor(mask, "mask")
        if mask.shape != logp.shape:
            raise ValueError(f"mask: expected the shape of logp {tuple(logp.shape)}, got {tuple(mask.shape)}")
        if ((mask != 0) & (mask != 1)).any():
            raise ValueError("mask: expected 0/1 entries (1 = real token)")
    clip_eps = fraction(clip_eps, "clip_eps", open_low=True, open_high=True)
    beta = nonnegative_float(beta, "beta")
    return _grpo_loss(logp, logp_old, logp_ref, advantages, clip_eps=clip_eps, beta=beta, mask=mask)


def _grpo_loss(logp, logp_old, logp_ref, advantages, *, clip_eps, beta, mask=None) -> torch.Tensor:
    """:func:`grpo_loss` without the checks (the consolidator's training loop: no host syncs)."""
    mask = torch.ones_like(logp) if mask is None else mask.to(logp.dtype)
    ratio = torch.exp(logp - logp_old.detach())
    a = advantages.detach()[..., None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * a)
    per_token = surrogate - beta * _k3(logp, logp_ref.detach())
    lengths = mask.sum(-1).clamp_min(1.0)
    per_output = (per_token * mask).sum(-1) / lengths
    return -per_output.mean()


class GRPOLoss(nn.Module):
    """Module twin of :func:`grpo_loss` (like ``torch.nn.CrossEntropyLoss``)."""

    def __init__(self, clip_eps: float = 0.2, beta: float = 0.04) -> None:
        super().__init__()
        self.clip_eps = fraction(clip_eps, "clip_eps", open_low=True, open_high=True)
        self.beta = nonnegative_float(beta, "beta")

    def forward(self, logp, logp_old, logp_ref, advantages, mask=None) -> torch.Tensor:
        return grpo_loss(
            logp, logp_old, logp_ref, advantages, clip_eps=self.clip_eps, beta=self.beta, mask=mask
        )
