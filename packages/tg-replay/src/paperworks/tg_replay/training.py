"""The off-policy training loop of the reproduction: agents, one per replay sampler, trained side by side.

:func:`run_population` trains ``M`` agents on one task with the same budget, each replaying through
its own sampler: a DQN on discrete-action tasks (CartPole-v1, Acrobot-v1), TD3 on continuous ones
(Pendulum-v1). Every agent has ``num_envs`` copies of the task; every vector step adds
``num_envs`` transitions per agent and makes ``updates_per_vector_step`` updates of ``batch_size``
transitions, so the replay volume is ``V = updates_per_vector_step * batch_size / num_envs``
replayed transitions per environment step (paper, Sec. 3). The buffer keeps every transition
(capacity = the budget), so the replay distribution, not eviction, decides what is replayed.

Paired by construction: all agents start from the same initial network, their task copies reset
from the same streams, and exploration uses one coin, one random action and one noise draw per
column shared by all agents (common random numbers); the agents differ only in what they replay.

The learning curve is the mean return of the training episodes that end in each of ``n_windows``
equal parts of the budget (the behaviour policy: epsilon-greedy for DQN, noisy for TD3), so every
episode an agent plays counts and no extra simulation is spent; the area under that curve (mean
normalised return) is the sample-efficiency score. A greedy evaluation on ``eval_envs`` fresh
episodes (the same start states for every agent) at ``n_evals`` checkpoints is optional.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from gymnasium.spaces import Discrete as _Discrete
from threadpoolctl import threadpool_limits

from paperworks.core.validate import (
    finite_float,
    fraction,
    nonnegative_float,
    nonnegative_int,
    one_of,
    positive_int,
)

from .dqn import DQNConfig, DQNPopulation
from .per import PrioritizedSampler
from .samplers import Sampler
from .tasks import TASKS, VectorTask, make_task
from .td3 import TD3Config, TD3Population

__all__ = ["RunConfig", "RunResult", "run_dqn", "run_population", "run_td3"]


@dataclass(frozen=True)
class RunConfig:
    """Budget and schedule of one run (every agent of a population gets all of it).

    ``total_steps`` environment steps per agent (also the buffer capacity), on ``num_envs`` copies;
    ``updates_per_vector_step`` updates of ``batch_size`` transitions once ``learning_starts``
    transitions are stored. DQN explores epsilon-greedily (``eps_start`` to ``eps_end``, linearly over
    ``eps_fraction`` of the budget); TD3 acts uniformly at random until ``learning_starts``, then adds
    Gaussian noise of ``action_noise * max_action``. ``n_windows``: parts of the budget over which the
    training episodes' returns are averaged (the learning curve). ``n_evals`` (0 = none) evaluations
    on ``eval_envs`` episodes each, greedy (DQN: epsilon-greedy with ``eval_epsilon``; TD3: the
    deterministic policy).
    """

    env_id: str = "CartPole-v1"
    total_steps: int = 20_000
    num_envs: int = 4
    batch_size: int = 64
    updates_per_vector_step: int = 2
    learning_starts: int = 1000
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_fraction: float = 0.2
    action_noise: float = 0.1
    n_windows: int = 10
    eval_epsilon: float = 0.0
    n_evals: int = 0
    eval_envs: int = 8
    dqn: DQNConfig = field(default_factory=DQNConfig)
    td3: TD3Config = field(default_factory=TD3Config)

    def __post_init__(self) -> None:
        one_of(self.env_id, "env_id", TASKS)
        for name in (
            "total_steps",
            "num_envs",
            "batch_size",
            "updates_per_vector_step",
            "n_windows",
            "eval_envs",
        ):
            positive_int(getattr(self, name), name)
        nonnegative_int(self.learning_starts, "learning_starts")
        if self.learning_starts >= self.total_steps:
            raise ValueError(
                f"learning_starts: expected fewer than total_steps={self.total_steps}, "
                f"got {self.learning_starts}"
            )
        nonnegative_int(self.n_evals, "n_evals")
        if self.total_steps // self.num_envs < max(self.n_evals, self.n_windows):
            raise ValueError(
                f"n_windows, n_evals: {max(self.n_evals, self.n_windows)} parts need at least as many "
                "vector steps "
                f"(total_steps // num_envs = {self.total_steps // self.num_envs})"
            )
        fraction(self.eps_start, "eps_start")
        fraction(self.eps_end, "eps_end")
        if self.eps_end > self.eps_start:
            raise ValueError(
                f"eps_start, eps_end: expected eps_end <= eps_start, got {self.eps_start}, {self.eps_end}"
            )
        fraction(self.eps_fraction, "eps_fraction", open_low=True)
        nonnegative_float(self.action_noise, "action_noise")
        fraction(self.eval_epsilon, "eval_epsilon")
        if not isinstance(self.dqn, DQNConfig):
            raise TypeError(f"dqn: expected a DQNConfig, got {type(self.dqn).__name__}")
        if not isinstance(self.td3, TD3Config):
            raise TypeError(f"td3: expected a TD3Config, got {type(self.td3).__name__}")

    @property
    def replay_volume(self) -> float:
        """Replayed transitions per environment step, ``updates_per_vector_step * batch_size / num_envs``."""
        return self.updates_per_vector_step * self.batch_size / self.num_envs

    @property
    def agent(self) -> str:
        """``"dqn"`` for a discrete-action task, ``"td3"`` for a continuous one."""
        return "dqn" if isinstance(TASKS[self.env_id].single_action_space, _Discrete) else "td3"


@dataclass(frozen=True)
class RunResult:
    """One agent's run: its learning curve (shape ``(n_windows,)``) and its replay statistics.

    ``curve_steps``: the environment step (per agent) at the end of each window; ``curve_returns``:
    the mean return of the training episodes that ended in each window (a window where none ended
    takes the previous window's value); ``curve_scores``: the same normalised by the task's return
    range (0 worst, 1 best); ``auc``: mean of ``curve_scores``; ``final``: the last score;
    ``episodes``: training episodes finished. ``eval_steps`` / ``eval_returns``: the optional greedy
    evaluations (empty when ``n_evals = 0``). ``replay_volume``: replayed transitions per environment
    step, measured over the whole run (the learning-start phase replays nothing); ``mean_age`` /
    ``mean_relative_age``: of the replayed transitions (relative: age over the oldest age, 0.5 =
    uniform). Times in seconds:
    ``sample_time_s`` in this agent's sampler, ``update_time_s`` in the population's updates.
    """

    sampler: str
    curve_steps: np.ndarray
    curve_returns: np.ndarray
    curve_scores: np.ndarray
    auc: float
    final: float
    episodes: int
    eval_steps: np.ndarray
    eval_returns: np.ndarray
    replay_volume: float
    mean_age: float
    mean_relative_age: float
    sample_time_s: float
    update_time_s: float
    wall_time_s: float


def _check_samplers(samplers: object, capacity: int) -> list[Sampler | PrioritizedSampler]:
    if isinstance(samplers, Sampler | PrioritizedSampler) or not isinstance(samplers, Sequence):
        raise TypeError("samplers: expected a sequence of Sampler or PrioritizedSampler objects")
    if not samplers:
        raise ValueError("samplers: expected at least one sampler")
    out = []
    for i, s in enumerate(samplers):
        if not isinstance(s, Sampler | PrioritizedSampler):
            raise TypeError(
                f"samplers[{i}]: expected a Sampler or PrioritizedSampler, got {type(s).__name__}"
            )
        if isinstance(s, PrioritizedSampler) and s.capacity != capacity:
            raise ValueError(
                f"samplers[{i}]: PrioritizedSampler capacity {s.capacity} != total_steps {capacity}"
            )
        out.append(s)
    if sum(isinstance(s, PrioritizedSampler) for s in out) and len({id(s) for s in out}) != len(out):
        raise ValueError("samplers: a PrioritizedSampler holds one agent's priorities; pass one per agent")
    return out


def run_population(
    samplers: Sequence[Sampler | PrioritizedSampler],
    cfg: RunConfig,
    *,
    seed: int,
    batch_sizes: Sequence[int] | None = None,
    time_limit_s: float | None = None,
) -> list[RunResult]:
    """Train one agent per sampler on ``cfg.env_id`` with ``cfg``'s budget; one :class:`RunResult` each.

    DQN on discrete-action tasks, TD3 on continuous ones (``cfg.agent``). ``batch_sizes``: one batch
    size per agent (default ``cfg.batch_size`` for all), so agents at several replay volumes train in
    one population: every update draws ``max(batch_sizes)`` transitions per agent and gives the
    surplus zero weight, which is the same gradient as a batch of the agent's own size. BLAS is held
    to one thread: the matrices are small, and a multi-threaded BLAS on a shared 2-core machine
    spends more time synchronising than computing. ``time_limit_s``: stop with an error once a run
    exceeds it.
    """
    if not isinstance(cfg, RunConfig):
        raise TypeError(f"cfg: expected a RunConfig, got {type(cfg).__name__}")
    seed = nonnegative_int(seed, "seed")
    samplers = _check_samplers(samplers, cfg.total_steps)
    if batch_sizes is None:
        sizes = [cfg.batch_size] * len(samplers)
    else:
        if isinstance(batch_sizes, str) or not isinstance(batch_sizes, Sequence):
            raise TypeError(f"batch_sizes: expected a sequence of ints, got {type(batch_sizes).__name__}")
        if len(batch_sizes) != len(samplers):
            raise ValueError(
                f"batch_sizes: expected one per sampler ({len(samplers)}), got {len(batch_sizes)}"
            )
        sizes = [positive_int(b, f"batch_sizes[{i}]") for i, b in enumerate(batch_sizes)]
    if time_limit_s is not None:
        time_limit_s = finite_float(time_limit_s, "time_limit_s")
    with threadpool_limits(limits=1, user_api="blas"):
        return _Trainer(samplers, cfg, seed, sizes, time_limit_s).run()


def run_dqn(
    sampler_factory: Callable[[int], Sampler | PrioritizedSampler], cfg: RunConfig, *, seed: int
) -> RunResult:
    """One DQN agent with the sampler ``sampler_factory(capacity)`` (``capacity = cfg.total_steps``)."""
    if cfg.agent != "dqn":
        space = TASKS[cfg.env_id].single_action_space
        raise ValueError(
            f"cfg.env_id: DQN needs a discrete action space; {cfg.env_id} has {space}; use run_td3"
        )
    return run_population([sampler_factory(cfg.total_steps)], cfg, seed=seed)[0]


def run_td3(
    sampler_factory: Callable[[int], Sampler | PrioritizedSampler], cfg: RunConfig, *, seed: int
) -> RunResult:
    """One TD3 agent with the sampler ``sampler_factory(capacity)`` (``capacity = cfg.total_steps``)."""
    if cfg.agent != "td3":
        space = TASKS[cfg.env_id].single_action_space
        raise ValueError(
            f"cfg.env_id: TD3 needs a continuous action space; {cfg.env_id} has {space}; use run_dqn"
        )
    return run_population([sampler_factory(cfg.total_steps)], cfg, seed=seed)[0]


class _Trainer:
    def __init__(
        self,
        samplers: list[Sampler | PrioritizedSampler],
        cfg: RunConfig,
        seed: int,
        batch_sizes: list[int],
        time_limit_s: float | None,
    ) -> None:
        self.samplers, self.cfg, self.seed, self.time_limit_s = samplers, cfg, seed, time_limit_s
        self.m = m = len(samplers)
        self.batch_sizes = np.asarray(batch_sizes, dtype=np.int64)
        self.batch = int(self.batch_sizes.max())
        self.valid = np.arange(self.batch)[None, :] < self.batch_sizes[:, None]  # (m, batch)
        uniform_batch = bool((self.batch_sizes == self.batch).all())
        # per-sample weight batch / B_k on an agent's own B_k samples, 0 on the surplus
        self.mask_weights = None if uniform_batch else self.valid * (self.batch / self.batch_sizes[:, None])
        e = cfg.num_envs
        self.task = make_task(cfg.env_id, m * e, seed, streams=np.tile(np.arange(e), m))
        self.discrete = self.task.discrete
        d = self.task.obs_dim
        if self.discrete:
            self.agent: DQNPopulation | TD3Population = DQNPopulation(
                m, d, int(self.task.single_action_space.n), cfg.dqn, seed=seed
            )
            act_shape: tuple[int, ...] = ()
            act_dtype: type = np.int64
        else:
            space = self.task.single_action_space
            self.max_action = float(space.high[0])
            self.agent = TD3Population(m, d, space.shape[0], self.max_action, cfg.td3, seed=seed)
            act_shape, act_dtype = tuple(space.shape), np.float32
        cap = self.cap = cfg.total_steps
        self.obs = np.zeros((m, cap, d), np.float32)
        self.next_obs = np.zeros((m, cap, d), np.float32)
        self.action = np.zeros((m, cap, *act_shape), act_dtype)
        self.reward = np.zeros((m, cap), np.float32)
        self.done = np.zeros((m, cap), np.float32)
        self.cursor = self.size = 0
        self.rng = np.random.default_rng([seed, 0])  # exploration, shared by all agents
        self.sampler_rngs = [np.random.default_rng([seed, 1]) for _ in range(m)]
        self.rows = np.arange(m)[:, None]

    def _write(
        self, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray, done: np.ndarray
    ) -> None:
        e = obs.shape[1]
        slots = (self.cursor + np.arange(e)) % self.cap
        self.obs[:, slots] = obs
        self.action[:, slots] = action
        self.reward[:, slots] = reward
        self.next_obs[:, slots] = next_obs
        self.done[:, slots] = done
        self.cursor = int((self.cursor + e) % self.cap)
        self.size = min(self.cap, self.size + e)
        for s in self.samplers:
            if isinstance(s, PrioritizedSampler):
                s.add(slots)

    def _draw(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        batch = self.batch
        ages = np.empty((self.m, batch), np.int64)
        slots = np.empty((self.m, batch), np.int64)
        weights = None if self.mask_weights is None else self.mask_weights.copy()
        for k, (s, rng) in enumerate(zip(self.samplers, self.sampler_rngs, strict=True)):
            b = int(self.batch_sizes[k])
            t0 = time.perf_counter()
            if isinstance(s, PrioritizedSampler):
                sl, w = s.sample(b, rng=rng)
                if weights is None:
                    weights = np.ones((self.m, batch))
                weights[k, :b] *= w
                slots[k, :b], slots[k, b:] = sl, sl[0]
                ages[k, :b], ages[k, b:] = (self.cursor - 1 - sl) % self.cap, 0
            else:
                ages[k, :b] = s.sample(self.size, b, rng=rng)
                ages[k, b:] = 0
                slots[k] = (self.cursor - 1 - ages[k]) % self.cap
            self.sample_s[k] += time.perf_counter() - t0
        return ages, slots, weights

    def run(self) -> list[RunResult]:
        cfg, m, e = self.cfg, self.m, self.cfg.num_envs
        t_start = time.perf_counter()
        n_vec = cfg.total_steps // e
        eval_at = (
            set(np.linspace(n_vec / cfg.n_evals, n_vec, cfg.n_evals).astype(int).tolist())
            if cfg.n_evals
            else set()
        )
        eval_steps, eval_returns = [], []
        n_win = cfg.n_windows
        win_sum, win_count = np.zeros((m, n_win)), np.zeros((m, n_win))
        episode_return = np.zeros(m * e)
        self.sample_s = np.zeros(m)
        update_s = 0.0
        replayed = np.zeros(m)
        age_sum, rel_sum = np.zeros(m), np.zeros(m)
        obs = self.task.reset().reshape(m, e, -1)
        d = obs.shape[2]
        per = [isinstance(s, PrioritizedSampler) for s in self.samplers]
        for it in range(1, n_vec + 1):
            steps = it * e
            if self.discrete:
                frac = min(1.0, steps / (cfg.eps_fraction * cfg.total_steps))
                eps = cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)
                action = self.agent._act(obs, eps, self.rng)
                flat_action = action.reshape(m * e)
            else:
                if self.size < cfg.learning_starts:
                    draw = self.rng.uniform(-self.max_action, self.max_action, (e, self.agent.act_dim))
                    action = np.broadcast_to(draw.astype(np.float32), (m, e, self.agent.act_dim))
                else:
                    action = self.agent._act(obs, cfg.action_noise, self.rng)
                flat_action = action.reshape(m * e, -1)
            next_obs, reward, term, trunc, obs_next = self.task._step(flat_action)
            episode_return += reward
            ended = term | trunc
            if ended.any():
                idx = np.flatnonzero(ended)
                w = min(n_win - 1, (it - 1) * n_win // n_vec)
                np.add.at(win_sum[:, w], idx // e, episode_return[idx])
                np.add.at(win_count[:, w], idx // e, 1)
                episode_return[idx] = 0.0
            self._write(
                obs,
                action,
                reward.reshape(m, e),
                next_obs.reshape(m, e, d),
                term.reshape(m, e).astype(np.float32),
            )
            obs = obs_next.reshape(m, e, d)
            if self.size >= cfg.learning_starts:
                for _ in range(cfg.updates_per_vector_step):
                    ages, slots, weights = self._draw()
                    t1 = time.perf_counter()
                    td = self.agent._update(
                        self.obs[self.rows, slots],
                        self.action[self.rows, slots],
                        self.reward[self.rows, slots],
                        self.next_obs[self.rows, slots],
                        self.done[self.rows, slots],
                        weights,
                    )
                    update_s += time.perf_counter() - t1
                    for k in np.flatnonzero(per):
                        b = int(self.batch_sizes[k])
                        self.samplers[k].update_priorities(slots[k, :b], td[k, :b])
                    replayed += self.batch_sizes
                    batch_age = ages.sum(axis=1)  # surplus ages are 0
                    age_sum += batch_age
                    if self.size > 1:
                        rel_sum += batch_age / (self.size - 1)
            if it in eval_at:
                eval_steps.append(steps)
                eval_returns.append(self._evaluate(seed=10_000 + 97 * self.seed + it))
            if (
                self.time_limit_s is not None
                and it % 256 == 0
                and time.perf_counter() - t_start > self.time_limit_s
            ):
                raise TimeoutError(
                    f"run_population: {cfg.env_id} exceeded time_limit_s={self.time_limit_s:g} "
                    f"after {steps} of {cfg.total_steps} steps"
                )
        returns = _fill_windows(win_sum, win_count, episode_return.reshape(m, e).mean(axis=1))
        scores = self.task.normalise(returns)
        curve_steps = np.array([((w + 1) * n_vec // n_win) * e for w in range(n_win)])
        evals = np.asarray(eval_returns).T if eval_returns else np.zeros((m, 0))
        wall = time.perf_counter() - t_start
        env_steps = n_vec * e
        out = []
        for k, s in enumerate(self.samplers):
            out.append(
                RunResult(
                    sampler=repr(s),
                    curve_steps=curve_steps,
                    curve_returns=returns[k],
                    curve_scores=scores[k],
                    auc=float(scores[k].mean()),
                    final=float(scores[k, -1]),
                    episodes=int(win_count[k].sum()),
                    eval_steps=np.asarray(eval_steps, dtype=np.int64),
                    eval_returns=evals[k],
                    replay_volume=float(replayed[k] / env_steps),
                    mean_age=float(age_sum[k] / replayed[k]) if replayed[k] else math.nan,
                    mean_relative_age=float(rel_sum[k] / replayed[k]) if replayed[k] else math.nan,
                    sample_time_s=float(self.sample_s[k]),
                    update_time_s=update_s,
                    wall_time_s=wall,
                )
            )
        return out

    def _evaluate(self, seed: int) -> np.ndarray:
        """Mean return of each agent's greedy policy over ``eval_envs`` episodes (same starts for all)."""
        cfg, m = self.cfg, self.m
        n = cfg.eval_envs
        task: VectorTask = make_task(cfg.env_id, m * n, seed, streams=np.tile(np.arange(n), m))
        obs = task.reset()
        eval_rng = np.random.default_rng([seed, 2])
        returns = np.zeros(m * n)
        alive = np.ones(m * n, dtype=bool)
        d = obs.shape[1]
        while alive.any():
            x = obs.reshape(m, n, d)
            if self.discrete:
                if cfg.eval_epsilon > 0:
                    a = self.agent._act(x, cfg.eval_epsilon, eval_rng).reshape(m * n)
                else:
                    a = self.agent.greedy(x).reshape(m * n)
            else:
                a = self.agent._policy(x).reshape(m * n, -1)
            _, reward, term, trunc, obs = task._step(a)
            returns += reward * alive
            alive &= ~(term | trunc)
        return returns.reshape(m, n).mean(axis=1)


def _fill_windows(total: np.ndarray, count: np.ndarray, running: np.ndarray) -> np.ndarray:
    """Mean return per window ``(m, W)``; a window with no finished episode takes the previous window's
    value (the first ones the first finished window's; with no finished episode at all, the running
    episodes' returns so far)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / count
    for k in range(out.shape[0]):
        row = out[k]
        ok = np.flatnonzero(count[k] > 0)
        if ok.size == 0:
            row[:] = running[k]
            continue
        row[: ok[0]] = row[ok[0]]
        for w in range(ok[0] + 1, row.size):
            if count[k, w] == 0:
                row[w] = row[w - 1]
    return out
