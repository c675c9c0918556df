"""Generated multi-turn tasks with checkable success: a 20-questions / key-finding dialogue.

Generative model (what is latent, what is observed):

- A *task* is a type ``k`` (one of ``len(ranges)``; type k's secret lies in ``[0, ranges[k])``) and a
  secret ``s`` drawn uniformly in that range (latent). The agent sees the type.
- Each turn the agent either asks ``"is s < t?"`` (``t`` in 1..N-1, ``N = max(ranges)``) and hears
  yes/no, or guesses ``g`` in 0..N-1, which ends the dialogue: success iff ``g == s``. At most
  ``max_turns`` turns; no guess by then is a failure. Return = success * (1 - 0.1 (turns - 1)).
- Observation before each agent turn (what the policy reads): one-hot type, the answered-question
  vector (entry t-1 is +1 after "s < t? yes", -1 after "no", 0 if not asked), one-hot turn index.
- Behaviour policies: the *bisection expert* (keeps the consistent interval, asks its midpoint,
  guesses when one value is left) mixed, per turn with probability ``eps`` (latent quality
  ``1 - eps``), with *linear search* (asks "is it the lowest remaining value?"), which cannot finish
  the large ranges in time.
- *Real* trajectories: the real environment, ``eps = real_eps``. *Synthetic* ones: simulators with
  shifted answer semantics, answering "s < t?" as if it were "s < t + delta" (``delta`` latent, the
  task shift; the simulator's own expert knows it, so its questions and guesses are systematically
  off under the real semantics), and ``eps ~ U(0, 1)``. ``realism = 1 - delta / max_delta`` and
  ``quality = 1 - eps`` are the per-trajectory truth that the analysis claims are measured against.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from paperworks.core.validate import as_generator, fraction, positive_int

__all__ = ["DialogueTaskConfig", "Trajectories", "check_pool", "exact_success", "generate", "merge"]


@dataclass(frozen=True)
class DialogueTaskConfig:
    """The task family: secret ranges per type, turn limit, real behaviour noise, maximum shift."""

    ranges: tuple[int, ...] = (8, 12, 16, 24)
    max_turns: int = 7
    real_eps: float = 0.1
    max_delta: int = 3

    def __post_init__(self) -> None:
        if not self.ranges or any(positive_int(r, "ranges") < 2 for r in self.ranges):
            raise ValueError(f"ranges: expected secret ranges >= 2, got {self.ranges}")
        positive_int(self.max_turns, "max_turns")
        fraction(self.real_eps, "real_eps")
        if isinstance(self.max_delta, bool) or not isinstance(self.max_delta, int) or self.max_delta < 1:
            raise ValueError(f"max_delta: expected a positive int, got {self.max_delta!r}")

    @property
    def n_max(self) -> int:
        return max(self.ranges)

    @property
    def n_types(self) -> int:
        return len(self.ranges)

    @property
    def n_actions(self) -> int:
        """Asks t = 1..N-1 (actions 0..N-2), then guesses g = 0..N-1 (actions N-1..2N-2)."""
        return 2 * self.n_max - 1

    @property
    def obs_dim(self) -> int:
        return self.n_types + (self.n_max - 1) + self.max_turns


# the per-trajectory NumPy fields of :class:`Trajectories` (subset and merge carry each of them)
_PER_TRAJECTORY = (
    "ids",
    "type",
    "secret",
    "ret",
    "success",
    "length",
    "is_real",
    "delta",
    "eps",
    "realism",
    "quality",
)


@dataclass
class Trajectories:
    """A pool of trajectories, padded to ``max_turns``: obs (n, T, D), act (n, T), mask (n, T), and per
    trajectory: ids, type, secret, return, success, length, is_real, delta, eps, realism, quality."""

    obs: torch.Tensor
    act: torch.Tensor
    mask: torch.Tensor
    ids: np.ndarray
    type: np.ndarray
    secret: np.ndarray
    ret: np.ndarray
    success: np.ndarray
    length: np.ndarray
    is_real: np.ndarray
    delta: np.ndarray
    eps: np.ndarray
    realism: np.ndarray = field(default_factory=lambda: np.zeros(0))
    quality: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return int(self.obs.shape[0])

    def subset(self, idx: np.ndarray) -> Trajectories:
        idx = np.asarray(idx)
        ti = torch.as_tensor(idx, dtype=torch.long)
        arrays = {k: getattr(self, k)[idx] for k in _PER_TRAJECTORY}
        return Trajectories(self.obs[ti], self.act[ti], self.mask[ti], **arrays)

    def to(self, device: str | torch.device) -> Trajectories:
        """The same pool with its tensors on ``device``."""
        out = self.subset(np.arange(len(self)))
        out.obs, out.act, out.mask = self.obs.to(device), self.act.to(device), self.mask.to(device)
        return out

    def batch(self, idx: np.ndarray | torch.Tensor) -> dict[str, torch.Tensor]:
        """The policy's batch for trajectories ``idx``: inputs (B, T, D), act (B, T), mask (B, T)."""
        ti = torch.as_tensor(idx, dtype=torch.long, device=self.obs.device)
        return {"inputs": self.obs[ti], "act": self.act[ti], "mask": self.mask[ti]}


def _encode(cfg: DialogueTaskConfig, ty: int, answers: np.ndarray, turn: int) -> np.ndarray:
    o = np.zeros(cfg.obs_dim, dtype=np.float32)
    o[ty] = 1.0
    o[cfg.n_types : cfg.n_types + cfg.n_max - 1] = answers
    o[cfg.n_types + cfg.n_max - 1 + turn] = 1.0
    return o


def generate(
    cfg: DialogueTaskConfig,
    n: int,
    rng: object,
    *,
    real: bool,
    delta_probs: tuple[float, ...] | None = None,
    id_prefix: str = "t",
    type_probs: tuple[float, ...] | None = None,
) -> Trajectories:
    """``n`` trajectories: real ones (``real=True``: delta 0, eps = ``cfg.real_eps``) or synthetic
    ones (delta ~ ``delta_probs`` over 0..max_delta, eps ~ U(0, 1)). Ids are ``f"{id_prefix}{i}"``."""
    n = positive_int(n, "n")
    g = as_generator(rng)
    k = cfg.n_types
    tp = np.full(k, 1 / k) if type_probs is None else np.asarray(type_probs, dtype=float)
    T, N = cfg.max_turns, cfg.n_max
    obs = np.zeros((n, T, cfg.obs_dim), dtype=np.float32)
    act = np.zeros((n, T), dtype=np.int64)
    mask = np.zeros((n, T), dtype=np.float32)
    types = g.choice(k, size=n, p=tp)
    secrets = np.array([g.integers(0, cfg.ranges[t]) for t in types])
    if real:
        deltas, eps = np.zeros(n, dtype=int), np.full(n, cfg.real_eps)
    else:
        dp = np.asarray(
            delta_probs if delta_probs is not None else np.full(cfg.max_delta + 1, 1 / (cfg.max_delta + 1))
        )
        if dp.shape != (cfg.max_delta + 1,) or abs(dp.sum() - 1) > 1e-6 or np.any(dp < 0):
            raise ValueError(
                f"delta_probs: expected {cfg.max_delta + 1} probabilities summing to 1, got {tuple(dp)}"
            )
        deltas, eps = g.choice(cfg.max_delta + 1, size=n, p=dp), g.uniform(0, 1, size=n)
    ret, succ, length = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int)
    for i in range(n):
        ty, s, d = int(types[i]), int(secrets[i]), int(deltas[i])
        lo, hi = 0, cfg.ranges[ty] - 1  # the behaviour policy's belief, in the simulator's semantics
        answers = np.zeros(N - 1, dtype=np.float32)
        done = False
        for turn in range(T):
            obs[i, turn] = _encode(cfg, ty, answers, turn)
            mask[i, turn] = 1.0
            if lo == hi:
                a = N - 1 + lo  # guess
            else:
                m = lo + 1 if g.uniform() < eps[i] else (lo + hi + 1) // 2  # effective threshold
                t = int(np.clip(m - d, 1, N - 1))  # the question as asked (real-semantics threshold)
                a = t - 1
            act[i, turn] = a
            if a >= N - 1:
                succ[i] = float(a - (N - 1) == s)
                ret[i] = succ[i] * (1 - 0.1 * turn)
                length[i] = turn + 1
                done = True
                break
            t = a + 1
            yes = s < t + d  # the simulator's semantics (d = 0: the real environment)
            answers[t - 1] = 1.0 if yes else -1.0
            if yes:
                hi = min(hi, t + d - 1)
            else:
                lo = max(lo, t + d)
            hi = max(hi, lo)
        if not done:
            length[i] = T
    ids = np.array([f"{id_prefix}{i}" for i in range(n)])
    realism = 1.0 - deltas / cfg.max_delta
    return Trajectories(
        torch.from_numpy(obs),
        torch.from_numpy(act),
        torch.from_numpy(mask),
        ids,
        types,
        secrets,
        ret,
        succ,
        length,
        np.full(n, bool(real)),
        deltas,
        eps,
        realism,
        1.0 - eps,
    )


def check_pool(pool: Trajectories, obs_dim: int, n_actions: int, name: str = "pool") -> None:
    """Raise a one-line error when ``pool`` does not fit a policy of (``obs_dim``, ``n_actions``): a
    different observation width or action vocabulary, NaN observations, trajectories with no agent
    turns, or an empty pool."""
    if len(pool) == 0:
        raise ValueError(f"{name}: the pool is empty")
    if pool.obs.ndim != 3 or pool.obs.shape[2] != obs_dim:
        raise ValueError(
            f"{name}: observations have width {tuple(pool.obs.shape)[2:]}, the policy expects {obs_dim} "
            "(mismatched vocabularies)"
        )
    if pool.act.shape != pool.obs.shape[:2] or pool.mask.shape != pool.obs.shape[:2]:
        raise ValueError(f"{name}: act and mask must have shape {tuple(pool.obs.shape[:2])}")
    if not bool(torch.isfinite(pool.obs).all()):
        raise ValueError(f"{name}: observations contain NaN or inf")
    on = pool.mask > 0
    if bool(on.any()) and (int(pool.act[on].min()) < 0 or int(pool.act[on].max()) >= n_actions):
        raise ValueError(
            f"{name}: actions outside the policy's vocabulary of {n_actions} (mismatched vocabularies)"
        )
    empty = torch.nonzero(pool.mask.sum(1) == 0).flatten().tolist()
    if empty:
        raise ValueError(f"{name}: trajectories {[str(pool.ids[i]) for i in empty[:5]]} have no agent turns")


def merge(*pools: Trajectories) -> Trajectories:
    """One pool from several (ids must stay unique)."""
    if not pools:
        raise ValueError("pools: expected at least one pool")
    cat = {k: np.concatenate([getattr(p, k) for p in pools]) for k in _PER_TRAJECTORY}
    if len(set(cat["ids"].tolist())) != len(cat["ids"]):
        raise ValueError("pools: trajectory ids collide across pools")
    return Trajectories(
        torch.cat([p.obs for p in pools]),
        torch.cat([p.act for p in pools]),
        torch.cat([p.mask for p in pools]),
        **cat,
    )


@torch.no_grad()
def exact_success(policy: torch.nn.Module, cfg: DialogueTaskConfig) -> float:
    """Expected success of the greedy policy in the *real* environment, exactly: every (type, secret)
    task is rolled out once (the policy is deterministic) and weighted by the task prior (uniform type,
    uniform secret)."""
    N, T = cfg.n_max, cfg.max_turns
    first = next(iter(policy.parameters()), None)
    dev = first.device if first is not None else torch.device("cpu")
    types = np.concatenate([np.full(r, k) for k, r in enumerate(cfg.ranges)])
    secrets = np.concatenate([np.arange(r) for r in cfg.ranges])
    prior = np.concatenate([np.full(r, 1 / (cfg.n_types * r)) for r in cfg.ranges])
    m = types.size
    answers = torch.zeros(m, N - 1, device=dev)
    done = torch.zeros(m, dtype=torch.bool, device=dev)
    success = torch.zeros(m, device=dev)
    type_oh = torch.nn.functional.one_hot(torch.as_tensor(types, device=dev), cfg.n_types).float()
    s = torch.as_tensor(secrets, device=dev)
    rows = torch.arange(m, device=dev)
    for turn in range(T):
        turn_oh = torch.zeros(m, T, device=dev)
        turn_oh[:, turn] = 1.0
        x = torch.cat([type_oh, answers, turn_oh], dim=1)
        a = policy(x).argmax(-1)
        guess = a >= N - 1
        newly = guess & ~done
        success[newly] = ((a - (N - 1)) == s).float()[newly]
        ask = ~guess & ~done
        t = (a + 1).clamp(max=N - 1)
        val = torch.where(s < t, 1.0, -1.0)
        idx = (t - 1).clamp(min=0)
        cur = answers[rows, idx]
        answers[rows, idx] = torch.where(ask, val, cur)
        done = done | guess
    return float((success.cpu().numpy() * prior).sum())
