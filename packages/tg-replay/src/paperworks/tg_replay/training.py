"""The off-policy training loop of the reproduction: a DQN on a gymnasium vector environment.

``num_envs`` copies of a classic-control task step together (gymnasium's NumPy-vectorised
``CartPole-v1``); every vector step adds ``num_envs`` transitions and performs
``updates_per_vector_step`` DQN updates of ``batch_size`` transitions drawn by the sampler, so the
replay volume is ``V = updates_per_vector_step * batch_size / num_envs`` replayed transitions per
environment step (paper, Sec. 3). The buffer keeps every transition (capacity = total steps),
so the replay distribution, not eviction, decides what is replayed. A greedy evaluation on
``eval_envs`` fresh episodes runs at ``n_evals`` evenly spaced checkpoints; the area under that
curve (mean normalised return) is the sample-efficiency score.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from .buffer import RingBuffer
from .diagnostics import ReplayMonitor
from .dqn import DQNConfig, NumpyDQN
from .per import PrioritizedSampler
from .samplers import Sampler

__all__ = ["RunConfig", "RunResult", "run_dqn"]


@dataclass(frozen=True)
class RunConfig:
    """Budget and schedule of one DQN run."""

    env_id: str = "CartPole-v1"
    total_steps: int = 20_000
    num_envs: int = 4
    batch_size: int = 64
    updates_per_vector_step: int = 1
    learning_starts: int = 500
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_fraction: float = 0.25
    n_evals: int = 10
    eval_envs: int = 8
    max_return: float = 500.0
    dqn: DQNConfig = field(default_factory=DQNConfig)

    def __post_init__(self) -> None:
        for name in (
            "total_steps",
            "num_envs",
            "batch_size",
            "updates_per_vector_step",
            "n_evals",
            "eval_envs",
        ):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        if not 0 <= self.eps_end <= self.eps_start <= 1:
            raise ValueError(
                f"eps_start, eps_end: expected 0 <= eps_end <= eps_start <= 1, "
                f"got {self.eps_start}, {self.eps_end}"
            )
        if not 0 < self.eps_fraction <= 1:
            raise ValueError(f"eps_fraction: expected a fraction in (0, 1], got {self.eps_fraction}")

    @property
    def replay_volume(self) -> float:
        """Replayed transitions per environment step."""
        return self.updates_per_vector_step * self.batch_size / self.num_envs


@dataclass(frozen=True)
class RunResult:
    """Evaluation curve (returns at each checkpoint, shape ``(n_evals,)``) and replay statistics."""

    eval_steps: np.ndarray
    eval_returns: np.ndarray
    auc: float
    final: float
    replay_volume: float
    mean_relative_age: float
    sample_time_s: float
    update_time_s: float
    wall_time_s: float


def _make_vec(env_id: str, n: int, seed: int):
    import gymnasium as gym

    try:
        env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    except Exception:  # tasks without a native vector implementation
        env = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync")
    obs, _ = env.reset(seed=seed)
    return env, obs


def _evaluate(agent: NumpyDQN, cfg: RunConfig, seed: int) -> float:
    env, obs = _make_vec(cfg.env_id, cfg.eval_envs, seed)
    returns = np.zeros(cfg.eval_envs)
    alive = np.ones(cfg.eval_envs, dtype=bool)
    while alive.any():
        action = agent.q_values(obs).argmax(axis=1)
        obs, reward, term, trunc, _ = env.step(action)
        returns += reward * alive
        alive &= ~(term | trunc)
    env.close()
    return float(returns.mean())


def run_dqn(
    sampler_factory: Callable[[int], Sampler | PrioritizedSampler],
    cfg: RunConfig,
    *,
    seed: int,
) -> RunResult:
    """Train a :class:`NumpyDQN` with the replay sampler ``sampler_factory(capacity)``; evaluate greedily.

    BLAS is held to one thread: the matrices are tiny, and a multi-threaded BLAS on a shared
    2-core machine spends more time synchronising than computing.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _run_dqn(sampler_factory, cfg, seed=seed)


def _run_dqn(
    sampler_factory: Callable[[int], Sampler | PrioritizedSampler],
    cfg: RunConfig,
    *,
    seed: int,
) -> RunResult:
    t_start = time.perf_counter()
    rng = np.random.default_rng(seed)
    env, obs = _make_vec(cfg.env_id, cfg.num_envs, seed)
    obs_dim = int(np.prod(env.single_observation_space.shape))
    n_actions = int(env.single_action_space.n)
    agent = NumpyDQN(obs_dim, n_actions, cfg.dqn, seed=seed)
    capacity = cfg.total_steps
    sampler = sampler_factory(capacity)
    buffer = RingBuffer(capacity, (obs_dim,), sampler=sampler, seed=seed + 1)
    monitor = ReplayMonitor()
    n_vec_steps = cfg.total_steps // cfg.num_envs
    eval_at = set(np.linspace(n_vec_steps / cfg.n_evals, n_vec_steps, cfg.n_evals).astype(int).tolist())
    eval_steps, eval_returns = [], []
    prev_done = np.zeros(cfg.num_envs, dtype=bool)
    t_sample = t_update = 0.0
    per = isinstance(sampler, PrioritizedSampler)
    for it in range(1, n_vec_steps + 1):
        steps = it * cfg.num_envs
        frac = min(1.0, steps / (cfg.eps_fraction * cfg.total_steps))
        eps = cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)
        action = agent.act(obs, eps, rng)
        next_obs, reward, term, trunc, _ = env.step(action)
        keep = ~prev_done  # NEXT_STEP autoreset: the step after an episode end only resets
        if keep.any():
            buffer.add(obs[keep], action[keep], reward[keep], next_obs[keep], term[keep].astype(np.float32))
            monitor.step(int(keep.sum()))
        prev_done = term | trunc
        obs = next_obs
        if len(buffer) >= cfg.learning_starts:
            for _ in range(cfg.updates_per_vector_step):
                t0 = time.perf_counter()
                slots, ages, weights = buffer.sample_slots(cfg.batch_size)
                t1 = time.perf_counter()
                td = agent.update(
                    buffer.obs[slots],
                    buffer.action[slots],
                    buffer.reward[slots],
                    buffer.next_obs[slots],
                    buffer.done[slots],
                    weights if per else None,
                )
                t_update += time.perf_counter() - t1
                t_sample += t1 - t0
                if per:
                    buffer.update_priorities(slots, td)
                monitor.update(ages, len(buffer))
        if it in eval_at:
            eval_steps.append(steps)
            eval_returns.append(_evaluate(agent, cfg, seed=10_000 + 97 * seed + it))
    env.close()
    stats = monitor.compute()
    curve = np.asarray(eval_returns) / cfg.max_return
    return RunResult(
        eval_steps=np.asarray(eval_steps),
        eval_returns=np.asarray(eval_returns),
        auc=float(curve.mean()),
        final=float(curve[-1]),
        replay_volume=stats.replay_volume,
        mean_relative_age=stats.mean_relative_age,
        sample_time_s=t_sample,
        update_time_s=t_update,
        wall_time_s=time.perf_counter() - t_start,
    )
