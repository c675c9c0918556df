"""TaskKV's structured residual scorer and entropy-based regime classifier.

Step features (per trajectory, per layer) come from what a KV-compression hook sees: the keys and the
attention of an observation window (the last queries of the context) on the cache.

* attention mass ``a_s``: window attention summed over the tokens of step ``s`` (mean over heads and
  window queries), the SnapKV signal pooled per step;
* intent alignment ``i_s``: cosine similarity between the step's mean key and the instruction step's
  mean key (after removing the mean over steps), the similarity of a step to the task instruction;
* redundancy: the largest such similarity to any *other* step (repeated traces score high);
* relative position ``s / (n_steps - 1)`` and the share of the window attention the step's best token gets.

The scorer's score is ``prior + r_theta(x)`` where ``prior = z(a) + z(i)`` (z: standardised within the
trajectory) is fixed, and ``r_theta`` is a small MLP (zero-initialised output, so it starts at the
prior) trained to denoise the prior towards the signed utility labels. The labels are standardised
within the trajectory and put on the prior's scale (times the prior's within-trajectory standard
deviation), so a zero correction is the prior and the loss measures only disagreement; an L2 penalty
``ridge * mean(r^2)`` (default 1) keeps the correction small: pointwise the optimum moves the prior
``1 / (1 + ridge)`` of the way to the label (halfway by default), so it can reorder steps the prior
ranks close together but not overturn it wholesale. The regime classifier thresholds the normalised
entropy of ``softmax(score)`` over the candidate steps: above the threshold the ranking is not
confident and retention falls back to contiguous (recency) steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from paperworks.core import torch_threads

__all__ = [
    "FEATURE_NAMES",
    "RegimeClassifier",
    "ResidualStepScorer",
    "score_entropy",
    "step_features",
]

FEATURE_NAMES = ("attention_mass", "intent_alignment", "redundancy", "position", "peak_attention")


def _zscore(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return (x - x.mean(dim, keepdim=True)) / (x.std(dim, keepdim=True) + 1e-6)


def step_features(
    keys: torch.Tensor, window_attention: torch.Tensor, offsets, instruction_step: int = 0
) -> torch.Tensor:
    """Per-step features of one layer, shape (batch, n_steps, 5), in the order of ``FEATURE_NAMES``.

    keys: (batch, kv_heads, seq, d); window_attention: (batch, heads, window, seq) attention of the
    window queries on the cache (rows may be causal-masked inside the window); offsets: (n_steps + 1,).
    Vectorised: per-step sums are one ``index_add`` over the sequence axis.
    """
    if keys.ndim != 4 or window_attention.ndim != 4:
        raise ValueError(
            f"keys/window_attention: expected 4-D tensors, got {tuple(keys.shape)} "
            f"and {tuple(window_attention.shape)}"
        )
    b, _, seq, _ = keys.shape
    if window_attention.shape[0] != b or window_attention.shape[-1] != seq:
        raise ValueError(
            f"window_attention: expected (batch={b}, heads, window, seq={seq}), "
            f"got {tuple(window_attention.shape)}"
        )
    off = np.asarray(offsets, dtype=np.int64)
    n_steps = len(off) - 1
    if not 0 <= instruction_step < n_steps:
        raise ValueError(f"instruction_step: expected a step in [0, {n_steps}), got {instruction_step}")
    lengths = torch.as_tensor(np.diff(off), dtype=keys.dtype, device=keys.device)
    token_step = torch.as_tensor(np.repeat(np.arange(n_steps), np.diff(off)), device=keys.device)
    attn = window_attention.float().mean(dim=(1, 2))  # (b, seq)
    mass = torch.zeros(b, n_steps, device=keys.device).index_add_(1, token_step, attn)
    peak = torch.full((b, n_steps), -1.0, device=keys.device).scatter_reduce(
        1, token_step.expand(b, seq), attn, reduce="amax", include_self=True
    )
    flat = keys.float().permute(0, 2, 1, 3).reshape(b, seq, -1)  # (b, seq, heads*d)
    mean_k = torch.zeros(b, n_steps, flat.shape[-1], device=keys.device).index_add_(1, token_step, flat)
    mean_k = mean_k / lengths[None, :, None]
    mean_k = mean_k - mean_k.mean(1, keepdim=True)
    unit = mean_k / (mean_k.norm(dim=-1, keepdim=True) + 1e-6)
    sim = unit @ unit.transpose(1, 2)  # (b, S, S)
    intent = sim[:, instruction_step]
    eye = torch.eye(n_steps, dtype=torch.bool, device=keys.device)
    redundancy = sim.masked_fill(eye, -2.0).amax(-1)
    pos = torch.linspace(0.0, 1.0, n_steps, device=keys.device).expand(b, n_steps)
    return torch.stack([mass, intent, redundancy, pos, peak / (mass + 1e-9)], dim=-1)


def _standardise_features(feats: torch.Tensor) -> torch.Tensor:
    """z-score every feature within its trajectory, except position (kept in [0, 1])."""
    z = _zscore(feats, dim=1)
    z[..., 3] = feats[..., 3]
    return z


def _adam_fit(params: list[torch.Tensor], loss_fn, iters: int, lr: float) -> float:
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    loss = torch.tensor(float("nan"))
    for t in range(1, iters + 1):
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, mi, vi in zip(params, grads, m, v, strict=True):
                mi.mul_(0.9).add_(g, alpha=0.1)
                vi.mul_(0.999).addcmul_(g, g, value=0.001)
                p.sub_(lr * (mi / (1 - 0.9**t)) / ((vi / (1 - 0.999**t)).sqrt() + 1e-8))
    return float(loss.detach())


class ResidualStepScorer:
    """Structured residual scorer (contribution 2): ``score = z(attention) + z(intent) + r_theta(features)``.

    Estimator API (scikit-learn style). ``fit(features, labels)`` with features (n, n_steps, 5) from
    :func:`step_features` and signed utility labels (n, n_steps) (see :mod:`.utility`); steps listed in
    ``exclude_steps`` (pinned ones) are left out of the loss. Fitted attributes: ``weights_`` (the MLP
    parameters), ``n_features_in_``, ``train_loss_``, ``prior_loss_`` (the loss of the priors alone).
    ``hidden`` is the MLP width; ``ridge`` the L2 penalty on the residual's output, relative to the
    squared error (module docstring: ``ridge = 1`` lets the correction go at most halfway to the label).
    """

    def __init__(
        self, hidden: int = 16, iters: int = 300, lr: float = 1e-2, ridge: float = 1.0, seed: int = 0
    ):
        if hidden < 1 or iters < 1 or lr <= 0 or ridge < 0:
            raise ValueError("ResidualStepScorer: expected hidden >= 1, iters >= 1, lr > 0, ridge >= 0")
        self.hidden, self.iters, self.lr, self.ridge, self.seed = hidden, iters, lr, ridge, seed

    @staticmethod
    def prior(features: torch.Tensor) -> torch.Tensor:
        """The fixed prior ``z(attention mass) + z(intent alignment)``, shape (n, n_steps)."""
        z = _standardise_features(features)
        return z[..., 0] + z[..., 1]

    def _check(self, features: torch.Tensor) -> torch.Tensor:
        if (
            not isinstance(features, torch.Tensor)
            or features.ndim != 3
            or features.shape[-1] != len(FEATURE_NAMES)
        ):
            shape = tuple(features.shape) if isinstance(features, torch.Tensor) else type(features).__name__
            raise ValueError(f"features: expected a tensor (n, n_steps, {len(FEATURE_NAMES)}), got {shape}")
        if features.shape[0] == 0:
            raise ValueError("features: expected a non-empty batch")
        if not torch.isfinite(features).all():
            raise ValueError("features: contains NaN or inf")
        return features.float()

    def _residual(self, z: torch.Tensor, w: list[torch.Tensor]) -> torch.Tensor:
        h = torch.tanh(z @ w[0] + w[1])
        return (h @ w[2]).squeeze(-1) + w[3]

    def fit(self, features: torch.Tensor, labels: torch.Tensor, exclude_steps=()) -> ResidualStepScorer:
        feats = self._check(features)
        if not isinstance(labels, torch.Tensor) or labels.shape != feats.shape[:2]:
            raise ValueError(f"labels: expected a tensor of shape {tuple(feats.shape[:2])}")
        if not torch.isfinite(labels).all():
            raise ValueError("labels: contains NaN or inf")
        mask = torch.ones(feats.shape[1], dtype=torch.bool)
        mask[list(exclude_steps)] = False
        z = _standardise_features(feats)[:, mask]
        prior = (z[..., 0] + z[..., 1]).detach()
        y = _zscore(labels.float()[:, mask], dim=1) * prior.std(1, keepdim=True)  # on the prior's scale
        gen = torch.Generator().manual_seed(self.seed)
        f = z.shape[-1]
        w = [
            (torch.randn(f, self.hidden, generator=gen) / f**0.5).requires_grad_(),
            torch.zeros(self.hidden).requires_grad_(),
            torch.zeros(self.hidden, 1).requires_grad_(),  # zero-initialised: starts at the prior
            torch.zeros(()).requires_grad_(),
        ]

        def loss_fn():
            r = self._residual(z, w)
            return ((prior + r - y) ** 2).mean() + self.ridge * (r**2).mean()

        self.prior_loss_ = float(((prior - y) ** 2).mean())
        # a tiny MLP: one thread is ~40x faster than two on a busy 2-core machine (measured)
        with torch.enable_grad(), torch_threads(1):
            self.train_loss_ = _adam_fit(w, loss_fn, self.iters, self.lr)
        self.weights_ = [p.detach() for p in w]
        self.n_features_in_ = f
        return self

    def predict(self, features: torch.Tensor) -> torch.Tensor:
        """Step scores (n, n_steps): the prior plus the learned correction (higher = keep)."""
        if not hasattr(self, "weights_"):
            raise RuntimeError("ResidualStepScorer: call fit() before predict()")
        z = _standardise_features(self._check(features))
        return z[..., 0] + z[..., 1] + self._residual(z, self.weights_)


def score_entropy(
    scores: torch.Tensor, candidates: torch.Tensor | None = None, temperature: float = 1.0
) -> torch.Tensor:
    """Normalised entropy in [0, 1] of ``softmax(scores / temperature)`` over candidate steps, shape (n,).

    scores: (n, n_steps); candidates: bool (n_steps,) of steps the policy may drop (default all).
    1 means a flat, unconfident ranking; 0 a single decisive step.
    """
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(f"scores: expected (n, n_steps >= 2), got {tuple(scores.shape)}")
    if temperature <= 0:
        raise ValueError(f"temperature: expected > 0, got {temperature}")
    s = scores if candidates is None else scores[:, candidates]
    logp = torch.log_softmax(s.float() / temperature, dim=1)
    ent = -(logp.exp() * logp).sum(1)
    return ent / np.log(s.shape[1])


@dataclass
class RegimeClassifier:
    """Entropy-based regime classifier (contribution 3): fall back to contiguous retention when uncertain.

    ``predict(entropy)`` is True (fall back) where ``entropy > threshold_``. ``fit(entropy, recency_better)``
    picks the threshold that best separates trajectories where contiguous retention did better than the
    scorer's ranking (accuracy over the training trajectories, ties to the larger threshold).
    """

    threshold: float = 0.95

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold: expected a normalised entropy in [0, 1], got {self.threshold}")
        self.threshold_ = float(self.threshold)

    def fit(self, entropy, recency_better) -> RegimeClassifier:
        e = np.asarray(entropy, dtype=float)
        y = np.asarray(recency_better, dtype=bool)
        if e.ndim != 1 or e.shape != y.shape or e.size == 0:
            raise ValueError("entropy/recency_better: expected two 1-D arrays of one non-zero length")
        if not np.all(np.isfinite(e)):
            raise ValueError("entropy: contains NaN or inf")
        cand = np.sort(np.concatenate([e, [1.0]]))  # 1.0: never fall back
        acc = ((e[None, :] > cand[:, None]) == y[None, :]).mean(1)
        best = np.flatnonzero(acc == acc.max())
        self.threshold_ = float(cand[best[-1]])
        self.train_accuracy_ = float(acc.max())
        return self

    def predict(self, entropy) -> np.ndarray:
        return np.asarray(entropy, dtype=float) > self.threshold_
