"""Multi-task PPO with Critic Balancing (TOPPO) on a batched task family; vanilla MT-PPO by configuration.

One shared task-conditioned actor and one shared critic (input ``[observation, task one-hot]``, ``K``
per-task value heads in every variant), GAE, the clipped surrogate (Schulman et al. 2017), separate Adam
optimisers for actor and critic. TOPPO's modules, each switched by :class:`PPOConfig`:

- ``popart``: per-task PopArt heads (:class:`~paperworks.toppo.popart.PopArt`); the critic regresses
  normalised targets ``(y - mu_k) / sigma_k`` and the policy sees per-task normalised advantages
  ``A / sigma_k`` (multi-task PopArt, Hessel et al. 2019). Without it, rewards are divided by a single
  running standard deviation of the discounted return (the usual PPO reward normalisation, as in
  SB3's ``VecNormalize`` / CleanRL), the strongest simple vanilla setting;
- ``layer_norm``: pre-activation LayerNorm in the critic's hidden layers (LN-c);
- ``actor_combiner`` / ``critic_combiner``: per-task gradients on each side's shared parameters
  combined by PCGrad, CAGrad or FairGrad (``"mean"`` = vanilla: the mean loss over the minibatch).

Truncated episodes are bootstrapped (``r + gamma V(final obs)``). Per update the critic's per-task
gradient Gram diagnostics are recorded on the first minibatch (:mod:`~paperworks.toppo.diagnostics`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from paperworks.core.validate import fraction, one_of, positive_float, positive_int

from .combiners import COMBINERS, GradientCombiner
from .diagnostics import gram_diagnostics
from .networks import GaussianActor, LNCritic
from .tasks import BatchedMultiTaskEnv, TaskSpec

__all__ = ["MultiTaskPPO", "PPOConfig", "evaluate_policy", "parameter_count"]


@dataclass(frozen=True)
class PPOConfig:
    """PPO settings and TOPPO's switches. Clip, GAE lambda, epochs, Adam eps, gradient-norm clip and the
    annealed learning rate follow CleanRL's continuous-control PPO; ``gamma = 0.95`` (shared with
    SAC) suits the 200-step tasks; ``lr`` is tuned per method in the experiment."""

    popart: bool = True
    layer_norm: bool = True
    actor_combiner: str = "pcgrad"
    critic_combiner: str = "fairgrad"
    hidden: tuple[int, ...] = (64, 64)
    n_per_task: int = 16
    n_steps: int = 64
    epochs: int = 4
    minibatches: int = 4
    lr: float = 3e-3
    anneal_lr: bool = True
    gamma: float = 0.95
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.0
    max_grad_norm: float = 0.5
    popart_beta: float = 0.1
    cagrad_c: float = 0.4
    fairgrad_alpha: float = 1.0

    def __post_init__(self) -> None:
        one_of(self.actor_combiner, "actor_combiner", COMBINERS)
        one_of(self.critic_combiner, "critic_combiner", COMBINERS)
        for k in ("n_per_task", "n_steps", "epochs", "minibatches"):
            positive_int(getattr(self, k), k)
        for k in ("lr", "max_grad_norm", "popart_beta", "fairgrad_alpha", "clip"):
            positive_float(getattr(self, k), k)
        fraction(self.gamma, "gamma")
        fraction(self.gae_lambda, "gae_lambda")

    @classmethod
    def vanilla(cls, **kw) -> PPOConfig:
        """Multi-task PPO without Critic Balancing (plain heads, no LN-c, mean gradients)."""
        return cls(popart=False, layer_norm=False, actor_combiner="mean", critic_combiner="mean", **kw)

    def without(self, module: str) -> PPOConfig:
        """TOPPO minus one module: ``"popart"``, ``"layer_norm"`` or ``"combiners"``."""
        one_of(module, "module", ("popart", "layer_norm", "combiners"))
        if module == "combiners":
            return replace(self, actor_combiner="mean", critic_combiner="mean")
        return replace(self, **{module: False})


class _RunningVar:
    """Running variance (parallel Welford) of a stream of batches."""

    def __init__(self) -> None:
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4

    def update(self, x: np.ndarray) -> None:
        m, v, n = float(x.mean()), float(x.var()), x.size
        delta, tot = m - self.mean, self.count + n
        self.mean += delta * n / tot
        self.var = (self.var * self.count + v * n + delta**2 * self.count * n / tot) / tot
        self.count = tot


def parameter_count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _task_means(x: torch.Tensor, ids: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-task means of ``x (B,)`` for the tasks present in ``ids``: ``(means (Kp,), present ids)``."""
    n = torch.zeros(k, dtype=x.dtype).index_add_(0, ids, torch.ones_like(x))
    s = torch.zeros(k, dtype=x.dtype).index_add_(0, ids, x)
    present = torch.nonzero(n > 0).squeeze(1)
    return s[present] / n[present], present


@torch.no_grad()
def evaluate_policy(
    act: Callable[[torch.Tensor], torch.Tensor], tasks: Sequence[TaskSpec], episodes: int, seed: int
) -> np.ndarray:
    """Mean return per task of ``episodes`` episodes per task; ``act(obs (N, D)) -> actions (N, 1)``."""
    env = BatchedMultiTaskEnv(tasks, episodes, seed=seed)
    obs = env.reset()
    total = np.zeros(env.num_envs)
    alive = np.ones(env.num_envs, dtype=bool)
    for _ in range(max(t.max_steps for t in tasks)):
        a = act(torch.as_tensor(obs)).cpu().numpy()
        obs, r, term, trunc, _ = env.step(np.clip(a, -1, 1))
        total += r * alive
        alive &= ~(term | trunc)
        if not alive.any():
            break
    return np.array([total[env.task_ids == k].mean() for k in range(len(tasks))])


class MultiTaskPPO:
    """Train a multi-task PPO agent on ``tasks``; ``train(total_steps, ...)`` returns a history dict."""

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        config: PPOConfig | None = None,
        *,
        seed: int = 0,
        device: str = "cpu",
    ):
        self.cfg = config or PPOConfig()
        if not isinstance(self.cfg, PPOConfig):
            raise TypeError(f"config: expected a PPOConfig, got {type(self.cfg).__name__}")
        self.tasks = tuple(tasks)
        self.K = len(self.tasks)
        self.seed = int(seed)
        self.device = torch.device(device)
        torch.manual_seed(self.seed)
        self.env = BatchedMultiTaskEnv(self.tasks, self.cfg.n_per_task, seed=self.seed)
        d = self.env.obs_dim
        c = self.cfg
        self.actor = GaussianActor(d, 1, c.hidden).to(self.device)
        self.critic = LNCritic(
            d, self.K, c.hidden, layer_norm=c.layer_norm, popart=c.popart, popart_beta=c.popart_beta
        ).to(self.device)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=c.lr, eps=1e-5, foreach=True)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=c.lr, eps=1e-5, foreach=True)
        self.actor_comb = GradientCombiner(
            self.actor_opt,
            c.actor_combiner,
            c=c.cagrad_c,
            alpha=c.fairgrad_alpha,
            max_grad_norm=c.max_grad_norm,
            seed=self.seed,
        )
        self.critic_comb = GradientCombiner(
            self.critic_opt,
            c.critic_combiner,
            self.critic.shared_parameters(),
            c=c.cagrad_c,
            alpha=c.fairgrad_alpha,
            max_grad_norm=c.max_grad_norm,
            seed=self.seed + 1,
        )
        self.ret_rms = _RunningVar()
        self._disc_ret = np.zeros(self.env.num_envs)
        self.env_steps = 0

    # -------------------------------------------------------------- acting
    @torch.no_grad()
    def act(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        dist = self.actor(obs.to(self.device).float())
        return dist.mean if deterministic else dist.sample()

    def evaluate(self, episodes: int = 16, seed: int = 10_000) -> np.ndarray:
        return evaluate_policy(lambda o: self.act(o), self.tasks, episodes, seed)

    # -------------------------------------------------------------- training
    def _task_grads(self, loss_fn, ids: torch.Tensor, shared, others):
        """One backward per present task on that task's samples: ``(G (Kp, P), mean grads of others)``."""
        rows, acc = [], None
        present = torch.unique(ids)
        for k in present.tolist():
            loss = loss_fn(ids == k)
            gs = torch.autograd.grad(loss, list(shared) + list(others), allow_unused=True)
            gsh, got = gs[: len(shared)], gs[len(shared) :]
            rows.append(
                torch.cat(
                    [(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(gsh, shared)]
                )
            )
            got = [torch.zeros_like(p) if g is None else g for g, p in zip(got, others)]
            acc = got if acc is None else [a + g for a, g in zip(acc, got)]
        others_mean = None if acc is None else [a / len(rows) for a in acc]
        return torch.stack(rows), others_mean

    def _side_step(self, comb: GradientCombiner, loss_fn, ids: torch.Tensor, params) -> None:
        """``loss_fn(mask) -> mean loss over the masked samples of the minibatch``."""
        comb.zero_grad()
        if comb.method == "mean":
            loss_fn(None).backward()
            torch.nn.utils.clip_grad_norm_(params, self.cfg.max_grad_norm)
        else:
            G, others = self._task_grads(loss_fn, ids, comb.shared, comb.others)
            comb.apply(G, others)
        comb.step()

    def train(
        self,
        total_steps: int,
        *,
        eval_at: Sequence[float] = (1.0,),
        eval_episodes: int = 16,
        callback: Callable[[int, int], None] | None = None,
    ) -> dict:
        """Train for ``total_steps`` environment steps (rounded up to whole rollouts).

        ``eval_at``: fractions of the budget at which the deterministic policy is evaluated
        (``eval_episodes`` per task). Returns ``{"eval": {fraction: returns (K,)}, "diagnostics": [...],
        "updates": n}``; ``callback(update, n_updates)`` is called after every update.
        """
        c = self.cfg
        positive_int(total_steps, "total_steps")
        n_env, T = self.env.num_envs, c.n_steps
        n_updates = max(1, math.ceil(total_steps / (n_env * T)))
        eval_points: dict[int, list[float]] = {}
        for f in eval_at:
            eval_points.setdefault(max(1, round(f * n_updates)), []).append(f)
        ids_env = torch.as_tensor(self.env.task_ids)
        obs = torch.as_tensor(self.env.reset())
        hist: dict = {"eval": {}, "diagnostics": [], "updates": n_updates}
        B = n_env * T
        mb = B // c.minibatches
        for update in range(1, n_updates + 1):
            if c.anneal_lr:
                for opt in (self.actor_opt, self.critic_opt):
                    opt.param_groups[0]["lr"] = c.lr * (1.0 - (update - 1) / n_updates)
            buf_obs = torch.zeros(T, n_env, obs.shape[1])
            buf_act = torch.zeros(T, n_env, 1)
            buf_logp = torch.zeros(T, n_env)
            buf_val = torch.zeros(T, n_env)
            buf_rew = torch.zeros(T, n_env)
            buf_done = torch.zeros(T, n_env)
            with torch.no_grad():
                for t in range(T):
                    dist = self.actor(obs)
                    a = dist.sample()
                    buf_obs[t], buf_act[t] = obs, a
                    buf_logp[t] = dist.log_prob(a).sum(-1)
                    buf_val[t] = self.critic.value(obs, ids_env)
                    nxt, r, term, trunc, info = self.env.step(np.clip(a.numpy(), -1.0, 1.0))
                    if not c.popart:  # one running scale of the discounted return, over all tasks
                        self._disc_ret = self._disc_ret * c.gamma + r
                        self.ret_rms.update(self._disc_ret)
                        self._disc_ret[term | trunc] = 0.0
                        r = r / math.sqrt(self.ret_rms.var + 1e-8)
                    r = torch.as_tensor(r, dtype=torch.float32)
                    if trunc.any():
                        where = np.flatnonzero(trunc)
                        pos = np.searchsorted(info["done_index"], where)
                        fin = torch.as_tensor(info["final_obs"][pos])
                        r[where] += c.gamma * self.critic.value(fin, ids_env[where])
                    buf_rew[t] = r
                    buf_done[t] = torch.as_tensor(term | trunc, dtype=torch.float32)
                    obs = torch.as_tensor(nxt)
                last_val = self.critic.value(obs, ids_env)
                adv = torch.zeros(T, n_env)
                gae = torch.zeros(n_env)
                for t in reversed(range(T)):
                    nv = last_val if t == T - 1 else buf_val[t + 1]
                    nonterm = 1.0 - buf_done[t]
                    delta = buf_rew[t] + c.gamma * nv * nonterm - buf_val[t]
                    gae = delta + c.gamma * c.gae_lambda * nonterm * gae
                    adv[t] = gae
                ret = adv + buf_val
            self.env_steps += B
            f_obs = buf_obs.reshape(B, -1)
            f_act = buf_act.reshape(B, 1)
            f_logp = buf_logp.reshape(B)
            f_adv = adv.reshape(B)
            f_ret = ret.reshape(B)
            f_ids = ids_env.repeat(T)
            if c.popart:
                self.critic.head.update(f_ret, f_ids)
                f_adv = f_adv / self.critic.head.sigma[f_ids]
            f_tgt = self.critic.head.normalise(f_ret, f_ids)
            for epoch in range(c.epochs):
                perm = torch.randperm(B)
                for j in range(c.minibatches):
                    idx = perm[j * mb : (j + 1) * mb]
                    o, ids = f_obs[idx], f_ids[idx]
                    act_mb, oldlogp = f_act[idx], f_logp[idx]
                    a_mb = f_adv[idx]
                    a_mb = (a_mb - a_mb.mean()) / (a_mb.std() + 1e-8)
                    tgt = f_tgt[idx]

                    def actor_loss(mask, o=o, act_mb=act_mb, oldlogp=oldlogp, a_mb=a_mb):
                        if mask is not None:
                            o, act_mb, oldlogp, a_mb = o[mask], act_mb[mask], oldlogp[mask], a_mb[mask]
                        dist = self.actor(o)
                        ratio = (dist.log_prob(act_mb).sum(-1) - oldlogp).exp()
                        pg = -torch.min(ratio * a_mb, ratio.clamp(1 - c.clip, 1 + c.clip) * a_mb)
                        return (pg - c.ent_coef * dist.entropy().sum(-1)).mean()

                    def critic_loss(mask, o=o, ids=ids, tgt=tgt):
                        if mask is not None:
                            o, ids, tgt = o[mask], ids[mask], tgt[mask]
                        return (0.5 * (self.critic(o, ids) - tgt) ** 2).mean()

                    self._side_step(self.actor_comb, actor_loss, ids, list(self.actor.parameters()))
                    if epoch == 0 and j == 0:
                        hist["diagnostics"].append(self._diagnose(critic_loss, ids))
                    self._side_step(self.critic_comb, critic_loss, ids, list(self.critic.parameters()))
            if update in eval_points:
                returns = self.evaluate(eval_episodes)
                for f in eval_points[update]:
                    hist["eval"][f] = returns
            if callback is not None:
                callback(update, n_updates)
        return hist

    def _diagnose(self, critic_loss, ids: torch.Tensor) -> dict[str, float]:
        if torch.unique(ids).numel() < 2:
            return {"condition_number": 1.0, "diag_spread": 1.0, "mean_cosine": 1.0}
        G, _ = self._task_grads(critic_loss, ids, self.critic.shared_parameters(), [])
        return gram_diagnostics(G)
