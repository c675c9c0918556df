"""The consolidator (PRISMIC step 2): a policy that merges candidate queries, trained with GRPO.

The paper's consolidator is an LLM that rewrites several candidate queries into one. Ours is a small
torch policy over the ``S`` signal fragments of a user: for each fragment it emits a logit from
(signal identity, the fragment's support, the cosine between the fragment and the mean embedding of
the user's history) and samples a keep/drop decision, one Bernoulli "token" per fragment. The
consolidated query embedding is the normalised sum of the kept fragments' embeddings,

    q(z) = sum_s z_s e_s / || sum_s z_s e_s ||      (0 when nothing is kept),

and the reward of a selection is NDCG@k of the user's true next item when all ``N`` items are ranked by
``cos(q(z), item text)``. GRPO (:mod:`paperworks.prismic.grpo`) samples ``G`` selections per user from the
old policy, normalises rewards within the group, and updates with the clipped ratio and a k3 KL to the
initial (reference) policy. At prediction the greedy selection ``p_s > 0.5`` is used (the single most
likely fragment when none passes).
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from .grpo import GRPOConfig, group_advantages, grpo_loss
from .optim import Adam
from .ranking import _ranks, ndcg_from_ranks, target_ranks

__all__ = [
    "GRPOConsolidator",
    "SignalPolicy",
    "consolidate",
    "fragment_scores",
    "reward_from_fragment_scores",
    "selection_reward",
]


class SignalPolicy(nn.Module):
    """Per-fragment keep logits. ``forward(features (U, S, 2)) -> logits (U, S)``."""

    def __init__(self, n_signals: int, hidden: int = 32) -> None:
        super().__init__()
        self.signal = nn.Embedding(n_signals, hidden)
        self.feature = nn.Linear(2, hidden)
        self.head = nn.Sequential(nn.Tanh(), nn.Linear(hidden, 1))
        nn.init.zeros_(self.head[1].weight)
        nn.init.zeros_(self.head[1].bias)  # the reference policy keeps each fragment with p = 0.5

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        s = torch.arange(features.shape[1], device=features.device)
        return self.head(self.signal(s)[None] + self.feature(features)).squeeze(-1)


def consolidate(queries: torch.Tensor, selection: torch.Tensor) -> torch.Tensor:
    """Consolidated query embeddings. ``queries``: ``(U, S, d)``; ``selection``: ``(U, S)`` or
    ``(U, G, S)`` in {0, 1}. Returns ``(U, d)`` or ``(U, G, d)``, unit rows (zero rows when empty)."""
    if queries.ndim != 3:
        raise ValueError(f"queries: expected shape (n_users, n_signals, d), got {tuple(queries.shape)}")
    z = selection.to(queries.dtype)
    if z.ndim == 2:
        if z.shape != queries.shape[:2]:
            raise ValueError(f"selection: expected shape {tuple(queries.shape[:2])}, got {tuple(z.shape)}")
        q = torch.einsum("us,usd->ud", z, queries)
    elif z.ndim == 3 and z.shape[0] == queries.shape[0] and z.shape[2] == queries.shape[1]:
        q = torch.einsum("ugs,usd->ugd", z, queries)
    else:
        raise ValueError(
            f"selection: expected shape (U, S) or (U, G, S) with U, S = {tuple(queries.shape[:2])}"
        )
    return q / q.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def selection_reward(
    queries: torch.Tensor, selection: torch.Tensor, items: torch.Tensor, targets: torch.Tensor, k: int = 10
) -> torch.Tensor:
    """NDCG@k reward of selections ``(U, G, S)``: rank all items ``items`` ``(N, d)`` (unit rows) by cosine
    with the consolidated query; ``targets``: ``(U,)`` 0-based rows of ``items``. Returns ``(U, G)``;
    an empty selection scores 0."""
    q = consolidate(queries, selection)
    scores = q @ items.T
    ranks = target_ranks(scores, targets[:, None].expand(-1, selection.shape[1]).contiguous())
    reward = ndcg_from_ranks(ranks, k)
    return torch.where(selection.sum(-1) > 0, reward, torch.zeros_like(reward))


def fragment_scores(queries: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """``(U, S, N)``: dot product of every fragment embedding with every item (for
    :func:`reward_from_fragment_scores`)."""
    return torch.einsum("usd,nd->usn", queries, items)


def reward_from_fragment_scores(
    frag: torch.Tensor, selection: torch.Tensor, targets: torch.Tensor, k: int = 10
) -> torch.Tensor:
    """:func:`selection_reward` from precomputed :func:`fragment_scores` ``(U, S, N)``.

    ``q(z) . item = sum_s z_s (e_s . item) / ||sum_s z_s e_s||`` and the positive norm does not change
    the ranking within a row, so the rank of the target only needs ``z @ frag``: ``U x G x S x N``
    multiply-adds per batch instead of ``U x G x d x N``. Same value as :func:`selection_reward` up to
    floating-point rounding of near-ties.
    """
    z = selection.to(frag.dtype)
    scores = torch.einsum("ugs,usn->ugn", z, frag)  # finite: frag and z are (fit checks its inputs)
    ranks = _ranks(scores, targets[:, None].expand(-1, selection.shape[1]).contiguous())
    reward = ndcg_from_ranks(ranks, k)
    return torch.where(selection.sum(-1) > 0, reward, torch.zeros_like(reward))


def _check(name: str, x: np.ndarray | torch.Tensor, ndim: int) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(x, dtype=np.float32) if not isinstance(x, torch.Tensor) else x).float()
    if t.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name}: expected finite values (found NaN or inf)")
    return t


class GRPOConsolidator:
    """Learns which signal fragments to merge per user with GRPO (scikit-learn-style ``fit``/``predict``).

    ``fit(queries (U, S, d), support (U, S), context (U, d), items (N, d), targets (U,))``: ``queries``
    are the candidate-query embeddings, ``context`` the mean history embedding of each user, ``items``
    the item text embeddings (row ``i - 1`` for item id ``i``) and ``targets`` the 1-based next item ids.
    Fitted attributes: ``policy_``, ``reference_``, ``reward_curve_`` (mean group reward per iteration),
    ``keep_rate_`` (``(S,)`` greedy keep frequency on the training users).
    """

    def __init__(
        self, config: GRPOConfig | None = None, *, k: int = 10, hidden: int = 32, seed: int = 0
    ) -> None:
        self.config = config or GRPOConfig()
        self.k, self.hidden, self.seed = k, hidden, seed

    @staticmethod
    def features(queries: torch.Tensor, support: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """``(U, S, 2)``: support and cosine(fragment, user context)."""
        ctx = context / context.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        cos = torch.einsum("usd,ud->us", queries, ctx)
        return torch.stack([support, cos], -1)

    def _inputs(self, queries, support, context):
        q = _check("queries", queries, 3)
        s = _check("support", support, 2)
        c = _check("context", context, 2)
        if s.shape != q.shape[:2]:
            raise ValueError(f"support: expected shape {tuple(q.shape[:2])}, got {tuple(s.shape)}")
        if c.shape != (q.shape[0], q.shape[2]):
            raise ValueError(f"context: expected shape {(q.shape[0], q.shape[2])}, got {tuple(c.shape)}")
        if q.shape[0] == 0:
            raise ValueError("queries: expected at least one user (empty batch)")
        return q, self.features(q, s, c)

    def fit(self, queries, support, context, items, targets) -> GRPOConsolidator:
        cfg = self.config
        q, feats = self._inputs(queries, support, context)
        it = _check("items", items, 2)
        if it.shape[1] != q.shape[2]:
            raise ValueError(f"items: expected width {q.shape[2]}, got {it.shape[1]}")
        t = torch.as_tensor(np.asarray(targets), dtype=torch.int64)
        if t.shape != (q.shape[0],):
            raise ValueError(f"targets: expected shape ({q.shape[0]},), got {tuple(t.shape)}")
        if t.min() < 1 or t.max() > it.shape[0]:
            raise ValueError(f"targets: unknown item id (expected 1..{it.shape[0]})")
        t = t - 1
        gen = torch.Generator().manual_seed(self.seed)
        torch.manual_seed(self.seed)
        policy = SignalPolicy(q.shape[1], self.hidden)
        reference = copy.deepcopy(policy).requires_grad_(False)
        opt = Adam(policy.parameters(), lr=cfg.lr)
        n_u, g = q.shape[0], cfg.group_size
        curve = []
        frag = fragment_scores(q, it)  # once: the group rewards then cost S (not d) products per item
        for _ in range(cfg.iterations):
            idx = torch.randperm(n_u, generator=gen)[: cfg.users_per_step]
            f, fr, tt = feats[idx], frag[idx], t[idx]
            with torch.no_grad():
                logit_old = policy(f)[:, None, :].expand(-1, g, -1)
                z = torch.bernoulli(torch.sigmoid(logit_old), generator=gen)
                logp_old = _bernoulli_logp(logit_old, z)
                logp_ref = _bernoulli_logp(reference(f)[:, None, :].expand(-1, g, -1), z)
                reward = reward_from_fragment_scores(fr, z, tt, self.k)
                adv = group_advantages(reward, cfg.adv_eps)
            curve.append(float(reward.mean()))
            for _ in range(cfg.inner_steps):
                logp = _bernoulli_logp(policy(f)[:, None, :].expand(-1, g, -1), z)
                loss = grpo_loss(logp, logp_old, logp_ref, adv, clip_eps=cfg.clip_eps, beta=cfg.beta)
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.policy_, self.reference_, self.reward_curve_ = policy.eval(), reference, curve
        self.keep_rate_ = self._greedy(feats).float().mean(0).numpy()
        return self

    def _greedy(self, feats: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            logits = self.policy_(feats)
        keep = logits > 0
        none = ~keep.any(1)
        keep[none, logits[none].argmax(1)] = True
        return keep

    def predict(self, queries, support, context) -> np.ndarray:
        """Greedy selections ``(U, S)`` bool."""
        if not hasattr(self, "policy_"):
            raise RuntimeError("GRPOConsolidator: call fit() before predict()")
        _, feats = self._inputs(queries, support, context)
        return self._greedy(feats).numpy()

    def transform(self, queries, support, context) -> torch.Tensor:
        """Consolidated query embeddings ``(U, d)`` of the greedy selections."""
        sel = torch.as_tensor(self.predict(queries, support, context))
        return consolidate(_check("queries", queries, 3), sel)


def _bernoulli_logp(logits: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """log pi(z) per decision for Bernoulli(sigmoid(logits)): ``z log p + (1 - z) log(1 - p)``."""
    return -nn.functional.binary_cross_entropy_with_logits(logits, z, reduction="none")
