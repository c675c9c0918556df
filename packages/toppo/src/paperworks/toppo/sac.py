"""Multi-task SAC (MT-SAC, the Meta-World baseline: one task-conditioned actor and twin critic, a
learned entropy temperature per task) on the batched task family.

Haarnoja et al. 2018 (arXiv 1812.05905): tanh-squashed Gaussian actor, twin Q networks with Polyak-averaged
targets (``tau = 0.005``), target entropy ``-dim(A)`` per task, temperatures ``alpha_k`` learned by
gradient descent on ``-log alpha_k (log pi + H_target)``. The agent steps ``n_per_task`` environments
per task in parallel and takes ``gradient_steps`` updates of ``batch_size`` transitions from a uniform
replay buffer after every vector step (after ``learning_starts`` uniformly random steps). Truncated
episodes bootstrap from their final observation; terminated ones do not.

For speed on a CPU the twin critics are one batched ensemble (:class:`TwinQ`) and each update is one
backward pass and one Adam step over actor, critics and temperatures (the actor's loss sees detached
critic weights, so the three gradients are each loss's own). Unlike the sequential SAC update, the
actor's step uses the critics from before this step's critic update (the usual one-step lag of fused
implementations). ReLU hidden layers, as in SB3's SAC.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import fraction, nonnegative_int, positive_float, positive_int

from .ppo import evaluate_policy
from .tasks import BatchedMultiTaskEnv, TaskSpec

__all__ = ["MultiTaskSAC", "SACConfig", "TwinQ"]


@dataclass(frozen=True)
class SACConfig:
    """MT-SAC settings (defaults: SB3's SAC where it has one; ``lr`` is tuned in the experiment)."""

    hidden: tuple[int, ...] = (64, 64)
    n_per_task: int = 16
    lr: float = 1e-3
    gamma: float = 0.95
    tau: float = 0.005
    batch_size: int = 256
    buffer_size: int = 300_000
    learning_starts: int = 5_000
    gradient_steps: int = 1
    init_alpha: float = 1.0

    def __post_init__(self) -> None:
        for k in ("n_per_task", "batch_size", "buffer_size", "gradient_steps"):
            positive_int(getattr(self, k), k)
        nonnegative_int(self.learning_starts, "learning_starts")
        positive_float(self.lr, "lr")
        positive_float(self.init_alpha, "init_alpha")
        fraction(self.gamma, "gamma")
        fraction(self.tau, "tau", open_low=True)


class _Actor(nn.Module):
    """tanh-squashed Gaussian policy: ``forward(obs (B, D)) -> (action (B, 1), log prob (B,))``."""

    def __init__(self, d: int, hidden: tuple[int, ...]):
        super().__init__()
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, 2)  # mean and log standard deviation

    def forward(self, obs: torch.Tensor, deterministic: bool = False):
        mu, log_std = self.head(self.body(obs)).chunk(2, -1)
        if deterministic:
            return torch.tanh(mu), None
        log_std = log_std.clamp(-5.0, 2.0)
        eps = torch.randn_like(mu)
        u = mu + log_std.exp() * eps
        a = torch.tanh(u)
        logp = (-0.5 * eps**2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - (2 * (math.log(2) - u - nn.functional.softplus(-2 * u))).sum(-1)
        return a, logp


class TwinQ(nn.Module):
    """Two Q networks evaluated as one batched ensemble (``torch.baddbmm`` over a leading axis of 2).

    ``forward(obs (B, D), act (B, 1), params=None) -> (2, B)``; ``params`` substitutes other weights
    (the detached ones for the actor's loss, the Polyak targets), in :meth:`weights` order.
    """

    def __init__(self, d: int, hidden: tuple[int, ...], n: int = 2):
        super().__init__()
        sizes = [d + 1, *hidden, 1]
        self.w = nn.ParameterList()
        self.b = nn.ParameterList()
        for i, o in itertools.pairwise(sizes):
            bound = 1.0 / math.sqrt(i)  # nn.Linear's default initialisation, per member
            self.w.append(nn.Parameter(torch.empty(n, i, o).uniform_(-bound, bound)))
            self.b.append(nn.Parameter(torch.empty(n, 1, o).uniform_(-bound, bound)))
        self.n = n

    def weights(self) -> list[torch.Tensor]:
        return [t for pair in zip(self.w, self.b, strict=True) for t in pair]

    def forward(self, obs, act, params=None) -> torch.Tensor:
        p = self.weights() if params is None else params
        x = torch.cat([obs, act], -1).expand(self.n, -1, -1)
        n_layers = len(p) // 2
        for j in range(n_layers):
            x = torch.baddbmm(p[2 * j + 1], x, p[2 * j])
            if j < n_layers - 1:
                x = torch.relu(x)
        return x.squeeze(-1)


class MultiTaskSAC:
    """Train MT-SAC on ``tasks``; ``train(total_steps, ...)`` returns ``{"eval": {fraction: returns}}``."""

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        config: SACConfig | None = None,
        *,
        seed: int = 0,
        device: str = "cpu",
    ):
        self.cfg = config or SACConfig()
        if not isinstance(self.cfg, SACConfig):
            raise TypeError(f"config: expected a SACConfig, got {type(self.cfg).__name__}")
        self.tasks = tuple(tasks)
        self.K = len(self.tasks)
        self.seed = int(seed)
        self.device = torch.device(device)
        torch.manual_seed(self.seed)
        self.rng = np.random.default_rng(self.seed)
        self.env = BatchedMultiTaskEnv(self.tasks, self.cfg.n_per_task, seed=self.seed)
        d, h = self.env.obs_dim, self.cfg.hidden
        self.actor = _Actor(d, h).to(self.device)
        self.q = TwinQ(d, h).to(self.device)
        self.q_target = [w.detach().clone() for w in self.q.weights()]
        log_alpha0 = torch.full((self.K,), math.log(self.cfg.init_alpha), device=self.device)
        self.log_alpha = nn.Parameter(log_alpha0)
        # one Adam over actor, critics and temperatures: the three losses touch disjoint parameters
        # (the actor's loss sees detached critic weights), so one backward and one step serve all three
        self.opt = torch.optim.Adam(
            [*self.actor.parameters(), *self.q.parameters(), self.log_alpha], lr=self.cfg.lr, fused=True
        )
        self.target_entropy = -1.0
        n = self.cfg.buffer_size
        # replay rows: [obs (d), next obs (d), action, reward, terminated, task]
        self._d = d
        self._buf = np.zeros((n, 2 * d + 4), dtype=np.float32)
        self._size = self._ptr = 0
        self.env_steps = 0

    parameter_count = property(
        lambda self: sum(p.numel() for m in (self.actor, self.q) for p in m.parameters()) + self.K
    )

    @torch.no_grad()
    def act(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        return self.actor(obs.to(self.device).float(), deterministic)[0]

    def evaluate(self, episodes: int = 16, seed: int = 10_000) -> np.ndarray:
        return evaluate_policy(lambda o: self.act(o), self.tasks, episodes, seed)

    def _store(self, obs, act, rew, nxt, term, task) -> None:
        n = obs.shape[0]
        idx = (self._ptr + np.arange(n)) % self.cfg.buffer_size
        self._buf[idx] = np.concatenate(
            [obs, nxt, act.reshape(n, 1), rew[:, None], term[:, None], task[:, None]], axis=1
        )
        self._ptr = (self._ptr + n) % self.cfg.buffer_size
        self._size = min(self._size + n, self.cfg.buffer_size)

    def losses(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(q_loss, actor_loss, alpha_loss)`` on replay rows ``batch (B, 2 D + 4)``.

        Twin-Q regression on the soft target ``r + gamma (1 - term) (min Q_target(s', a') - alpha_k
        log pi(a'|s'))``; the actor on ``alpha_k log pi - min Q`` with the critic weights detached (so
        its gradient reaches only the actor); the temperatures on ``-log alpha_k (log pi + H_target)``.
        The three touch disjoint parameters, so one backward of their sum gives each its own gradient.
        """
        c, d = self.cfg, self._d
        o, o2 = batch[:, :d], batch[:, d : 2 * d]
        a, r, term = batch[:, 2 * d : 2 * d + 1], batch[:, 2 * d + 1], batch[:, 2 * d + 2]
        task = batch[:, 2 * d + 3].long()
        alpha = self.log_alpha.detach().exp()[task]
        with torch.no_grad():
            a2, logp2 = self.actor(o2)
            q_t = self.q(o2, a2, self.q_target).min(0).values - alpha * logp2
            y = r + c.gamma * (1.0 - term) * q_t
        q_loss = 0.5 * ((self.q(o, a) - y) ** 2).mean(1).sum()
        a_new, logp = self.actor(o)
        frozen = [w.detach() for w in self.q.weights()]
        actor_loss = (alpha * logp - self.q(o, a_new, frozen).min(0).values).mean()
        alpha_loss = -(self.log_alpha[task] * (logp.detach() + self.target_entropy)).mean()
        return q_loss, actor_loss, alpha_loss

    def _update(self) -> None:
        """One SAC gradient step on a uniform batch (all three losses, one Adam step), then Polyak
        averaging of the target critics."""
        i = self.rng.integers(0, self._size, size=self.cfg.batch_size)
        batch = torch.as_tensor(self._buf[i], device=self.device)
        self.opt.zero_grad(set_to_none=True)
        sum(self.losses(batch)).backward()
        self.opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(self.q_target, [w.detach() for w in self.q.weights()], self.cfg.tau)

    def train(
        self,
        total_steps: int,
        *,
        eval_at: Sequence[float] = (1.0,),
        eval_episodes: int = 16,
        callback: Callable[[int, int], None] | None = None,
    ) -> dict:
        """Train for ``total_steps`` environment steps (whole vector steps); evaluate at ``eval_at``."""
        c = self.cfg
        positive_int(total_steps, "total_steps")
        n_env = self.env.num_envs
        n_iters = max(1, math.ceil(total_steps / n_env))
        eval_points: dict[int, list[float]] = {}
        for f in eval_at:
            eval_points.setdefault(max(1, round(f * n_iters)), []).append(f)
        report_every = max(1, n_iters // 50)
        obs = self.env.reset()
        hist: dict = {"eval": {}, "updates": 0}
        for it in range(1, n_iters + 1):
            if self.env_steps < c.learning_starts:
                act = self.rng.uniform(-1, 1, size=(n_env, 1)).astype(np.float32)
            else:
                with torch.no_grad():
                    act = self.actor(torch.as_tensor(obs))[0].numpy()
            nxt, r, term, _, info = self.env.step(act)
            real_next = nxt.copy()
            if "done_index" in info:
                real_next[info["done_index"]] = info["final_obs"]
            self._store(obs, act, r, real_next, term.astype(np.float32), self.env.task_ids)
            obs = nxt
            self.env_steps += n_env
            if self.env_steps >= c.learning_starts:
                for _ in range(c.gradient_steps):
                    self._update()
                    hist["updates"] += 1
            if it in eval_points:
                returns = self.evaluate(eval_episodes)
                for f in eval_points[it]:
                    hist["eval"][f] = returns
            if callback is not None and (it % report_every == 0 or it == n_iters):
                callback(it, n_iters)
        return hist
