"""The policy, its per-trajectory loss, and the two training loops (fixed weights; BOOST).

- :class:`DialoguePolicy`: an MLP over the observation of each turn, (..., D) -> (..., A) logits;
  :meth:`~DialoguePolicy.hidden` gives the last hidden layer (pooled into trajectory features).
- :func:`trajectory_nll`: ``l_i`` = mean NLL of the agent's turns of trajectory i (the inner loss's
  term; optionally scaled by the caller for return-weighted objectives).
- :func:`train_weighted`: the inner level alone, ``L_in = mean_batch w_i l_i`` with fixed weights
  (uniform, real-only, top-q, RWR, domain-classifier, oracle, temperature sweep).
- :func:`train_boost`: BOOST: the same inner steps with weights from the head, alternating with an
  outer (hypergradient) step of the head on real validation trajectories every ``outer_every`` steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import nonnegative_float, positive_float, positive_int

from .hypergrad import TrajectoryReweighter
from .tasks import Trajectories, check_pool

__all__ = [
    "BoostConfig",
    "DialoguePolicy",
    "InnerConfig",
    "trajectory_features",
    "train_boost",
    "train_weighted",
    "trajectory_nll",
    "val_nll",
]


class DialoguePolicy(nn.Module):
    """MLP policy: observation (..., obs_dim) -> action logits (..., n_actions); two hidden layers."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64) -> None:
        super().__init__()
        h = positive_int(hidden, "hidden")
        self.body = nn.Sequential(
            nn.Linear(positive_int(obs_dim, "obs_dim"), h), nn.ReLU(), nn.Linear(h, h), nn.ReLU()
        )
        self.out = nn.Linear(h, positive_int(n_actions, "n_actions"))

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(x))


def trajectory_nll(logits: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """(B, T, A) logits, batch with act (B, T) and mask (B, T) -> (B,) mean NLL over agent turns."""
    mask = batch["mask"]
    nll = nn.functional.cross_entropy(logits.flatten(0, 1), batch["act"].flatten(), reduction="none").view_as(
        mask
    )
    return (nll * mask).sum(1) / mask.sum(1).clamp(min=1.0)


@torch.no_grad()
def val_nll(policy: nn.Module, val: Trajectories) -> float:
    b = val.batch(np.arange(len(val)))
    return float(trajectory_nll(policy(b["inputs"]), b).mean())


@torch.no_grad()
def trajectory_features(policy: DialoguePolicy, pool: Trajectories, max_turns: int) -> torch.Tensor:
    """(n, H + 3) standardised features: the policy's last hidden state mean-pooled over the agent's
    turns, the trajectory's NLL under the policy, its length / max_turns and its return."""
    b = pool.batch(np.arange(len(pool)))
    h = policy.hidden(b["inputs"])
    m = b["mask"].unsqueeze(-1)
    pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
    nll = trajectory_nll(policy.out(h), b)
    dev = b["inputs"].device
    length = torch.as_tensor(pool.length / max_turns, dtype=torch.float32, device=dev)
    extra = torch.stack([nll, length, torch.as_tensor(pool.ret, dtype=torch.float32, device=dev)], 1)
    f = torch.cat([pooled, extra], 1)
    return (f - f.mean(0)) / f.std(0).clamp(min=1e-6)


@dataclass(frozen=True)
class InnerConfig:
    """The inner budget every method shares: ``steps`` AdamW steps of ``batch`` trajectories."""

    steps: int = 400
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.0
    hidden: int = 64

    def __post_init__(self) -> None:
        positive_int(self.steps, "steps")
        positive_int(self.batch, "batch")
        positive_float(self.lr, "lr")
        nonnegative_float(self.weight_decay, "weight_decay")
        positive_int(self.hidden, "hidden")


@dataclass(frozen=True)
class BoostConfig:
    """BOOST's outer level: head lr and optimiser (Adam, or SGD with momentum 0.9), look-ahead lr
    and unrolled steps K, outer-step period, feature refresh period, head width, head temperature,
    warm-up inner steps before the first outer step, the weight of the ESS penalty
    ``lambda (B / ESS - 1)`` in the outer objective, and whether the head weighs the real trajectories
    of a batch too (``reweight_real``: mean 1 over the whole batch) or only its synthetic part (real
    ones then keep weight 1)."""

    head_lr: float = 1e-2
    lookahead_lr: float = 0.5
    unroll_steps: int = 1
    outer_every: int = 2
    refresh_every: int = 25
    head_hidden: int = 32
    temperature: float = 1.0
    warmup: int = 25
    ess_penalty: float = 0.3
    optimizer: str = "adam"
    reweight_real: bool = True

    def __post_init__(self) -> None:
        positive_float(self.head_lr, "head_lr")
        positive_float(self.lookahead_lr, "lookahead_lr")
        positive_int(self.unroll_steps, "unroll_steps")
        positive_int(self.outer_every, "outer_every")
        positive_int(self.refresh_every, "refresh_every")
        positive_int(self.head_hidden, "head_hidden")
        positive_float(self.temperature, "temperature")
        nonnegative_float(self.ess_penalty, "ess_penalty")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"optimizer: expected 'adam' or 'sgd', got {self.optimizer!r}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup: expected a non-negative int, got {self.warmup!r}")


def _new_policy(
    obs_dim: int, n_actions: int, cfg: InnerConfig, seed: int, device: torch.device
) -> tuple[DialoguePolicy, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    policy = DialoguePolicy(obs_dim, n_actions, cfg.hidden).to(device)
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    return policy, opt


def train_weighted(
    pool: Trajectories, weights: np.ndarray, cfg: InnerConfig, *, obs_dim: int, n_actions: int, seed: int
) -> DialoguePolicy:
    """Inner level with fixed weights: batches drawn uniformly from the trajectories of positive
    weight, loss ``mean_batch w_i l_i`` with w normalised to mean 1 over those trajectories."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(pool),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"weights: expected {len(pool)} finite non-negative weights with a positive sum")
    check_pool(pool, obs_dim, n_actions)
    keep = np.flatnonzero(w > 0)
    wt = torch.as_tensor(w / w[keep].mean(), dtype=torch.float32, device=pool.obs.device)
    policy, opt = _new_policy(obs_dim, n_actions, cfg, seed, pool.obs.device)
    g = np.random.default_rng(seed + 7919)
    for _ in range(cfg.steps):
        idx = keep[g.integers(0, keep.size, size=cfg.batch)]
        b = pool.batch(idx)
        loss = (wt[idx] * trajectory_nll(policy(b["inputs"]), b)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return policy


def train_boost(
    pool: Trajectories,
    val: Trajectories,
    cfg: InnerConfig,
    bcfg: BoostConfig,
    *,
    obs_dim: int,
    n_actions: int,
    max_turns: int,
    seed: int,
) -> tuple[DialoguePolicy, TrajectoryReweighter, torch.Tensor]:
    """BOOST: inner AdamW steps on ``mean_batch w_i l_i`` with weights from the head (mean 1 over the
    batch; with ``reweight_real=False`` over its synthetic part only, real trajectories keeping weight
    1), alternating with outer steps of the head on the real validation pool. Returns the policy, the
    reweighter and the final features."""
    if len(val) == 0:
        raise ValueError("val: the validation set is empty (the outer level needs real validation tasks)")
    check_pool(pool, obs_dim, n_actions)
    check_pool(val, obs_dim, n_actions, "val")
    leaked = set(val.ids.tolist()) & set(pool.ids[~pool.is_real].tolist())
    if leaked:
        raise ValueError(f"val: {len(leaked)} validation trajectories are in the synthetic pool")
    dev = pool.obs.device
    policy, opt = _new_policy(obs_dim, n_actions, cfg, seed, dev)
    g = np.random.default_rng(seed + 7919)
    syn = ~pool.is_real
    feats = trajectory_features(policy, pool, max_turns)
    val_batch = val.batch(np.arange(len(val)))
    rw = TrajectoryReweighter(
        policy,
        trajectory_nll,
        [val_batch],
        feature_dim=feats.shape[1],
        hidden=bcfg.head_hidden,
        head_lr=bcfg.head_lr,
        lookahead_lr=bcfg.lookahead_lr,
        unroll_steps=bcfg.unroll_steps,
        temperature=bcfg.temperature,
        ess_penalty=bcfg.ess_penalty,
        optimizer=bcfg.optimizer,
    )
    syn_t = torch.as_tensor(syn)  # host-side: which rows of a batch are synthetic
    for step in range(cfg.steps):
        if step % bcfg.refresh_every == 0:
            feats = trajectory_features(policy, pool, max_turns)
        idx = g.integers(0, len(pool), size=cfg.batch)
        b = pool.batch(idx)
        s = torch.ones(cfg.batch, dtype=torch.bool) if bcfg.reweight_real else syn_t[idx]
        if step >= bcfg.warmup and step % bcfg.outer_every == 0 and bool(s.any()):
            sidx = idx[s.numpy()]
            rw.step(pool.batch(sidx), feats[torch.as_tensor(sidx, device=dev)])
        w = torch.ones(cfg.batch, device=dev)
        if bool(s.any()):
            w[s.to(dev)] = rw.weights(feats[torch.as_tensor(idx[s.numpy()], device=dev)])
        loss = (w * trajectory_nll(policy(b["inputs"]), b)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    feats = trajectory_features(policy, pool, max_turns)
    return policy, rw, feats
