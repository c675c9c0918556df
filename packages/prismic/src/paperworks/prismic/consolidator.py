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

from paperworks.core.validate import positive_int

from ._checks import float_tensor, seed_int
from .grpo import GRPOConfig, _group_advantages, _grpo_loss
from .optim import Adam
from .ranking import _ndcg, _ranks

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
        n_signals, hidden = positive_int(n_signals, "n_signals"), positive_int(hidden, "hidden")
        self.signal = nn.Embedding(n_signals, hidden)
        self.feature = nn.Linear(2, hidden)
        self.head = nn.Sequential(nn.Tanh(), nn.Linear(hidden, 1))
        nn.init.zeros_(self.head[1].weight)
        nn.init.zeros_(self.head[1].bias)  # the reference policy keeps each fragment with p = 0.5

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        n = self.signal.num_embeddings
        if features.ndim != 3 or features.shape[1:] != (n, 2):
            raise ValueError(f"features: expected shape (U, {n}, 2), got {tuple(features.shape)}")
        s = torch.arange(features.shape[1], device=features.device)
        return self.head(self.signal(s)[None] + self.feature(features)).squeeze(-1)


def _selection(selection: object, name: str = "selection") -> torch.Tensor:
    z = selection if isinstance(selection, torch.Tensor) else float_tensor(selection, name)
    if z.is_complex():
        raise TypeError(f"{name}: expected a 0/1 (or bool) tensor, got dtype {z.dtype}")
    if ((z != 0) & (z != 1)).any():
        raise ValueError(f"{name}: expected entries in {{0, 1}} (keep / drop a fragment)")
    return z


def consolidate(queries: torch.Tensor, selection: torch.Tensor) -> torch.Tensor:
    """Consolidated query embeddings. ``queries``: ``(U, S, d)``; ``selection``: ``(U, S)`` or
    ``(U, G, S)`` in {0, 1}. Returns ``(U, d)`` or ``(U, G, d)``, unit rows (zero rows when empty)."""
    queries = float_tensor(queries, "queries")
    if queries.ndim != 3:
        raise ValueError(f"queries: expected shape (n_users, n_signals, d), got {tuple(queries.shape)}")
    z = _selection(selection)
    if z.ndim == 2:
        if z.shape != queries.shape[:2]:
            raise ValueError(f"selection: expected shape {tuple(queries.shape[:2])}, got {tuple(z.shape)}")
    elif not (z.ndim == 3 and z.shape[0] == queries.shape[0] and z.shape[2] == queries.shape[1]):
        raise ValueError(
            f"selection: expected shape (U, S) or (U, G, S) with U, S = {tuple(queries.shape[:2])}, "
            f"got {tuple(z.shape)}"
        )
    return _consolidate(queries, z.to(device=queries.device))


def _consolidate(queries: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    z = z.to(queries.dtype)
    q = torch.einsum("us,usd->ud", z, queries) if z.ndim == 2 else torch.einsum("ugs,usd->ugd", z, queries)
    return q / q.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def _targets(targets: object, n: int, shape: tuple[int, ...], name: str = "targets") -> torch.Tensor:
    t = targets if isinstance(targets, torch.Tensor) else torch.as_tensor(np.asarray(targets))
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{name}: expected integer row indices, got dtype {t.dtype}")
    if tuple(t.shape) != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {tuple(t.shape)}")
    if t.numel() and (t.min() < 0 or t.max() >= n):
        raise ValueError(f"{name}: expected 0-based row indices in 0..{n - 1}")
    return t.to(torch.int64)


def selection_reward(
    queries: torch.Tensor, selection: torch.Tensor, items: torch.Tensor, targets: torch.Tensor, k: int = 10
) -> torch.Tensor:
    """NDCG@k reward of selections ``(U, G, S)``: rank all items ``items`` ``(N, d)`` (unit rows) by cosine
    with the consolidated query, ties broken pessimistically (as in the evaluation); ``targets``: ``(U,)``
    0-based rows of ``items``. Returns ``(U, G)``; an empty selection scores 0."""
    k = positive_int(k, "k")
    items = float_tensor(items, "items", ndim=2)
    queries = float_tensor(queries, "queries", ndim=3)
    z = _selection(selection)
    if z.ndim != 3 or z.shape[0] != queries.shape[0] or z.shape[2] != queries.shape[1]:
        raise ValueError(
            f"selection: expected shape (U, G, S) with U, S = {tuple(queries.shape[:2])}, "
            f"got {tuple(z.shape)}"
        )
    if items.shape[1] != queries.shape[2] or items.shape[0] == 0:
        raise ValueError(
            f"items: expected shape (n_items >= 1, {queries.shape[2]}), got {tuple(items.shape)}"
        )
    t = _targets(targets, items.shape[0], (queries.shape[0],))
    scores = _consolidate(queries, z) @ items.T
    ranks = _ranks(scores, t[:, None].expand(-1, z.shape[1]).contiguous())
    reward = _ndcg(ranks, k)
    return torch.where(z.sum(-1) > 0, reward, torch.zeros_like(reward))


def fragment_scores(queries: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """``(U, S, N)``: dot product of every fragment embedding ``queries`` ``(U, S, d)`` with every item
    ``items`` ``(N, d)`` (for :func:`reward_from_fragment_scores`)."""
    queries = float_tensor(queries, "queries", ndim=3)
    items = float_tensor(items, "items", ndim=2)
    if items.shape[1] != queries.shape[2]:
        raise ValueError(f"items: expected width {queries.shape[2]} (the queries'), got {items.shape[1]}")
    return torch.einsum("usd,nd->usn", queries, items)


def reward_from_fragment_scores(
    frag: torch.Tensor, selection: torch.Tensor, targets: torch.Tensor, k: int = 10
) -> torch.Tensor:
    """:func:`selection_reward` from precomputed :func:`fragment_scores` ``(U, S, N)``.

    ``q(z) . item = sum_s z_s (e_s . item) / ||sum_s z_s e_s||`` and the positive norm does not change
    the ranking within a row, so the rank of the target only needs ``z @ frag``: ``U x G x S x N``
    multiply-adds per batch instead of ``U x G x d x N``. Same value as :func:`selection_reward` up to
    floating-point rounding of near-ties. ``selection``: ``(U, G, S)`` in {0, 1}; ``targets``: ``(U,)``.
    """
    k = positive_int(k, "k")
    frag = float_tensor(frag, "frag", ndim=3)
    z = _selection(selection)
    if z.ndim != 3 or z.shape[0] != frag.shape[0] or z.shape[2] != frag.shape[1]:
        raise ValueError(
            f"selection: expected shape (U, G, S) with U, S = {tuple(frag.shape[:2])}, got {tuple(z.shape)}"
        )
    if frag.shape[2] == 0:
        raise ValueError("frag: expected at least one item (last axis)")
    t = _targets(targets, frag.shape[2], (frag.shape[0],))
    return _reward(frag, z, t, k)


def _reward(frag: torch.Tensor, z: torch.Tensor, t: torch.Tensor, k: int) -> torch.Tensor:
    scores = torch.einsum("ugs,usn->ugn", z.to(frag.dtype), frag)
    ranks = _ranks(scores, t[:, None].expand(-1, z.shape[1]).contiguous())
    reward = _ndcg(ranks, k)
    return torch.where(z.sum(-1) > 0, reward, torch.zeros_like(reward))


def _check(name: str, x: object, ndim: int) -> torch.Tensor:
    return float_tensor(x, name, ndim=ndim)


class GRPOConsolidator:
    """Learns which signal fragments to merge per user with GRPO (scikit-learn-style ``fit``/``predict``).

    ``fit(queries (U, S, d), support (U, S), context (U, d), items (N, d), targets (U,))``: ``queries``
    are the candidate-query embeddings, ``context`` the mean history embedding of each user, ``items``
    the item text embeddings (row ``i - 1`` for item id ``i``) and ``targets`` the 1-based next item ids.
    ``device``: where the policy trains (a torch device string; default the CPU). Fitted attributes:
    ``policy_``, ``reference_``, ``reward_curve_`` (mean group reward per iteration), ``keep_rate_``
    (``(S,)`` greedy keep frequency on the training users).
    """

    def __init__(
        self,
        config: GRPOConfig | None = None,
        *,
        k: int = 10,
        hidden: int = 32,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        if config is not None and not isinstance(config, GRPOConfig):
            raise TypeError(f"config: expected a GRPOConfig, got {type(config).__name__}")
        self.config = config or GRPOConfig()
        self.k, self.hidden = positive_int(k, "k"), positive_int(hidden, "hidden")
        self.seed, self.device = seed_int(seed), str(torch.device(device))

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
        if q.shape[0] == 0 or q.shape[1] == 0:
            raise ValueError(f"queries: expected at least one user and one signal, got {tuple(q.shape)}")
        if hasattr(self, "policy_") and q.shape[1] != self.policy_.signal.num_embeddings:
            raise ValueError(
                f"queries: expected {self.policy_.signal.num_embeddings} signals (as in fit), "
                f"got {q.shape[1]}"
            )
        dev = torch.device(self.device)
        q, s, c = q.to(dev), s.to(dev), c.to(dev)
        return q, self.features(q, s, c)

    def fit(self, queries, support, context, items, targets) -> GRPOConsolidator:
        cfg = self.config
        for attr in ("policy_", "reference_"):
            self.__dict__.pop(attr, None)
        q, feats = self._inputs(queries, support, context)
        it = _check("items", items, 2).to(q.device)
        if it.shape[1] != q.shape[2] or it.shape[0] == 0:
            raise ValueError(f"items: expected shape (n_items >= 1, {q.shape[2]}), got {tuple(it.shape)}")
        t = _targets(targets, it.shape[0] + 1, (q.shape[0],))
        if t.min() < 1:
            raise ValueError(f"targets: unknown item id (expected 1-based ids in 1..{it.shape[0]})")
        t = (t - 1).to(q.device)
        gen = torch.Generator().manual_seed(self.seed)  # user batches (CPU)
        dgen = torch.Generator(device=q.device).manual_seed(self.seed)  # group samples (on the device)
        torch.manual_seed(self.seed)
        policy = SignalPolicy(q.shape[1], self.hidden).to(q.device)
        reference = copy.deepcopy(policy).requires_grad_(False)
        opt = Adam(policy.parameters(), lr=cfg.lr)
        n_u, g = q.shape[0], cfg.group_size
        curve = []
        frag = torch.einsum("usd,nd->usn", q, it)  # once: the group rewards then cost S (not d) per item
        for _ in range(cfg.iterations):
            idx = torch.randperm(n_u, generator=gen)[: cfg.users_per_step].to(q.device)
            f, fr, tt = feats[idx], frag[idx], t[idx]
            with torch.no_grad():
                logit_old = policy(f)[:, None, :].expand(-1, g, -1)
                z = torch.bernoulli(torch.sigmoid(logit_old), generator=dgen)
                logp_old = _bernoulli_logp(logit_old, z)
                logp_ref = _bernoulli_logp(reference(f)[:, None, :].expand(-1, g, -1), z)
                reward = _reward(fr, z, tt, self.k)
                adv = _group_advantages(reward, cfg.adv_eps)
            curve.append(reward.mean())
            for _ in range(cfg.inner_steps):
                logp = _bernoulli_logp(policy(f)[:, None, :].expand(-1, g, -1), z)
                loss = _grpo_loss(logp, logp_old, logp_ref, adv, clip_eps=cfg.clip_eps, beta=cfg.beta)
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.policy_, self.reference_ = policy.eval(), reference
        self.reward_curve_ = torch.stack(curve).cpu().tolist() if curve else []
        self.keep_rate_ = self._greedy(feats).float().mean(0).cpu().numpy()
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
        return self._greedy(feats).cpu().numpy()

    def transform(self, queries, support, context) -> torch.Tensor:
        """Consolidated query embeddings ``(U, d)`` of the greedy selections (on the CPU)."""
        sel = torch.as_tensor(self.predict(queries, support, context))
        return _consolidate(_check("queries", queries, 3).cpu(), sel)


def _bernoulli_logp(logits: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """log pi(z) per decision for Bernoulli(sigmoid(logits)): ``z log p + (1 - z) log(1 - p)``."""
    return -nn.functional.binary_cross_entropy_with_logits(logits, z, reduction="none")
