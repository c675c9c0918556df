"""TaskKV's step features, structured residual scorer and entropy-based regime classifier.

Step features (per trajectory, per layer) come from what a KV-compression hook sees: the *content*
keys of the cache (before RoPE, :func:`~.rope.unrotate_keys`) and the attention of an observation
window (the last queries of the context) on the cache.

* attention mass ``a_s``: window attention summed over the tokens of step ``s`` (mean over heads and
  window queries), the SnapKV signal pooled per step;
* intent alignment ``i_s``: cosine similarity between the step's mean content key and the instruction
  step's (after removing the mean over steps), the similarity of a step to the task instruction.
  Content keys, not the cached RoPE keys: a rotated key also encodes its position, so identical
  content at different positions would score differently;
* redundancy: the largest such similarity to any *other* step (repeated traces score high);
* relative position ``s / (n_steps - 1)`` and the share of the window attention the step's best token gets.

The scorer's score is ``prior + r_theta(x)`` where ``prior = z(a) + z(i)`` (z: standardised within the
trajectory) is fixed, and ``r_theta`` is a small MLP (zero-initialised output, so it starts at the
prior) trained to denoise the prior towards the signed utility labels. The labels are mapped onto
the prior's location and scale over the steps the loss sees (the candidate steps), so a zero
correction is the prior, a label that ranks like the prior leaves it unchanged, and the loss measures
only disagreement; an L2 penalty ``ridge * mean(r^2)`` (default 1) keeps the correction small:
pointwise the optimum moves the prior ``1 / (1 + ridge)`` of the way to the label.

The regime classifier thresholds a confidence signal in [0, 1] (1: no confident ranking); above the
threshold retention falls back to contiguous (recency) steps. The signal is read from unstandardised
quantities: by default the normalised entropy of the raw window-attention mass over the droppable
steps (:func:`attention_entropy`); :func:`score_entropy` (the entropy of ``softmax(score)``) is the
alternative. The threshold is fit for success (:meth:`RegimeClassifier.fit`).

Ragged batches: every function takes an optional ``mask`` (batch, n_steps) of the step slots that
exist (per-row step layouts, :func:`~.retention.step_layout`); missing slots are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from paperworks.core import torch_threads

from ._validation import as_tensor, check_tensor, validate
from .retention import StepLayout, seq_len_of, step_layout

__all__ = [
    "FEATURE_NAMES",
    "RegimeClassifier",
    "ResidualStepScorer",
    "attention_entropy",
    "regime_auc",
    "score_entropy",
    "step_features",
]

FEATURE_NAMES = ("attention_mass", "intent_alignment", "redundancy", "position", "peak_attention")
_Z_FLOOR = 1e-3  # z-scores divide by max(std, this): a feature flat to 1e-3 within a row stays flat


def _masked_zscore(x: torch.Tensor, mask: torch.Tensor | None, dim: int = 1) -> torch.Tensor:
    """z-score along ``dim`` over the entries ``mask`` keeps (the others are set to 0)."""
    if mask is None:
        mask = torch.ones_like(x, dtype=torch.bool)
    m = mask.to(x.dtype)
    n = m.sum(dim, keepdim=True).clamp_min(1.0)
    mean = (x * m).sum(dim, keepdim=True) / n
    var = (((x - mean) * m) ** 2).sum(dim, keepdim=True) / (n - 1).clamp_min(1.0)
    return torch.where(mask, (x - mean) / var.sqrt().clamp_min(_Z_FLOOR), torch.zeros_like(x))


def _broadcast_mask(mask, shape: tuple[int, int], name: str = "mask") -> torch.Tensor | None:
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"{name}: expected a bool tensor of shape {shape}, got {type(mask).__name__}")
    if mask.ndim == 1:
        mask = mask.expand(shape[0], -1)
    if tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {shape}, got {tuple(mask.shape)}")
    return mask


def step_features(
    keys: torch.Tensor,
    window_attention: torch.Tensor,
    offsets,
    instruction_step: int = 0,
    intent_keys: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-step features of one layer, shape (batch, n_steps, 5), in the order of ``FEATURE_NAMES``.

    keys: (batch, kv_heads, seq, d) content keys (before RoPE); window_attention: (batch, heads,
    window, seq), the attention of the window queries on the cache (causal inside the window), non-
    negative; offsets: shared (n_steps + 1,) or per row (:func:`~.retention.step_layout`; missing step
    slots of shorter rows get zero features); intent_keys: (batch, kv_heads * d), the instruction's
    mean content key, when the intent is not a step of this cache (streaming; then
    ``instruction_step`` is unused). Vectorised: per-step sums are one scatter over the sequence axis.
    """
    keys = check_tensor(keys, "keys", ndim=4, floating=True)
    window_attention = check_tensor(
        window_attention, "window_attention", ndim=4, floating=True, nonnegative=True
    )
    b, _, seq, _ = keys.shape
    if window_attention.shape[0] != b or window_attention.shape[-1] != seq:
        raise ValueError(
            f"window_attention: expected (batch={b}, heads, window, seq={seq}), "
            f"got {tuple(window_attention.shape)}"
        )
    lay = step_layout(offsets, seq, b, device=keys.device)
    n_min = int(lay.n_steps.min())
    instruction_step = validate.int_in_range(instruction_step, "instruction_step", 0, n_min - 1)
    if intent_keys is not None:
        D = keys.shape[1] * keys.shape[3]
        intent_keys = check_tensor(intent_keys, "intent_keys", ndim=2, floating=True)
        if tuple(intent_keys.shape) != (b, D):
            raise ValueError(f"intent_keys: expected shape ({b}, {D}), got {tuple(intent_keys.shape)}")
    return _step_features(keys, window_attention, lay, instruction_step, intent_keys)


def _step_features(keys, window_attention, lay: StepLayout, instruction_step: int, intent_keys=None):
    """:func:`step_features` on checked inputs and a layout on the keys' device."""
    b, _, seq, _ = keys.shape
    S = lay.max_steps
    dev = keys.device
    valid = lay.valid
    ts = lay.token_step  # (b, seq)
    attn = window_attention.float().mean(dim=(1, 2))  # (b, seq)
    mass = torch.zeros(b, S, device=dev).scatter_add_(1, ts, attn)
    peak = torch.zeros(b, S, device=dev).scatter_reduce(1, ts, attn, reduce="amax", include_self=True)
    flat = keys.float().permute(0, 2, 1, 3).reshape(b, seq, -1)  # (b, seq, heads*d)
    D = flat.shape[-1]
    sums = torch.zeros(b, S, D, device=dev).scatter_add_(1, ts[..., None].expand(b, seq, D), flat)
    lengths = lay.lengths.to(dev).clamp_min(1).float()
    mean_k = sums / lengths[..., None]
    vm = valid[..., None].float()
    n_valid = valid.sum(1, keepdim=True).float()[..., None]
    centred = (mean_k - (mean_k * vm).sum(1, keepdim=True) / n_valid) * vm
    # a floor relative to the keys' scale: steps of (numerically) identical content centre to ~0 and
    # stay ~0 instead of being blown up to unit vectors of rounding noise
    scale = (mean_k.norm(dim=-1) * valid).sum(1, keepdim=True) / n_valid[..., 0]  # (b, 1)
    unit = centred / centred.norm(dim=-1, keepdim=True).clamp_min(1e-3 * scale[..., None] + 1e-12)
    sim = unit @ unit.transpose(1, 2)  # (b, S, S)
    if intent_keys is None:
        intent = sim[:, instruction_step]
    else:
        ci = intent_keys.to(dev).float() - (mean_k * vm).sum(1) / n_valid[..., 0]
        ci = ci / ci.norm(dim=-1, keepdim=True).clamp_min(1e-3 * scale + 1e-12)
        intent = (unit @ ci[..., None]).squeeze(-1)
    others = valid[:, None, :] & ~torch.eye(S, dtype=torch.bool, device=dev)[None]
    redundancy = sim.masked_fill(~others, -2.0).amax(-1)
    redundancy = torch.where(others.any(-1), redundancy, torch.zeros_like(redundancy))
    steps = torch.arange(S, device=dev, dtype=torch.float32)
    pos = steps[None] / (lay.n_steps.to(dev)[:, None].float() - 1).clamp_min(1.0)
    share = peak / (mass + 1e-9)
    out = torch.stack([mass, intent, redundancy, pos, share], dim=-1)
    return out * valid[..., None]


def _standardise_features(feats: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """z-score every feature within its trajectory (over existing steps), except position (kept in [0, 1])."""
    m = None if mask is None else mask[..., None].expand_as(feats)
    z = _masked_zscore(feats, m, dim=1)
    z[..., 3] = feats[..., 3]
    return z


def _adam_fit(params: list[torch.Tensor], loss_fn, iters: int, lr: float) -> float:
    """Adam with a cosine-decayed step size (to 0 at the last iteration, so the fit settles)."""
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    loss = torch.tensor(float("nan"))
    for t in range(1, iters + 1):
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params)
        step = lr * 0.5 * (1 + np.cos(np.pi * (t - 1) / iters))
        with torch.no_grad():
            for p, g, mi, vi in zip(params, grads, m, v, strict=True):
                mi.mul_(0.9).add_(g, alpha=0.1)
                vi.mul_(0.999).addcmul_(g, g, value=0.001)
                p.sub_(step * (mi / (1 - 0.9**t)) / ((vi / (1 - 0.999**t)).sqrt() + 1e-8))
    return float(loss.detach())


class ResidualStepScorer:
    """Structured residual scorer (contribution 2): ``score = z(attention) + z(intent) + r_theta(features)``.

    Estimator API (scikit-learn style). ``fit(features, labels)`` with features (n, n_steps, 5) from
    :func:`step_features` and signed utility labels (n, n_steps) (see :mod:`.utility`); steps listed in
    ``exclude_steps`` (pinned ones) are left out of the loss, and so are missing slots (``mask``).
    Per trajectory the labels are mapped onto the prior's mean and standard deviation over the steps
    the loss sees; trajectories whose labels are constant there carry no ranking and are left out.
    Fitted attributes: ``weights_`` (the MLP parameters), ``n_features_in_``, ``train_loss_``,
    ``prior_loss_`` (the loss of the priors alone). ``hidden`` is the MLP width; ``ridge`` the L2
    penalty on the residual's output, relative to the squared error.
    """

    def __init__(
        self, hidden: int = 16, iters: int = 300, lr: float = 1e-2, ridge: float = 1.0, seed: int = 0
    ):
        self.hidden = validate.positive_int(hidden, "hidden")
        self.iters = validate.positive_int(iters, "iters")
        self.lr = validate.positive_float(lr, "lr")
        self.ridge = validate.nonnegative_float(ridge, "ridge")
        self.seed = validate.nonnegative_int(seed, "seed")

    def get_params(self, deep: bool = True) -> dict:
        return {
            "hidden": self.hidden,
            "iters": self.iters,
            "lr": self.lr,
            "ridge": self.ridge,
            "seed": self.seed,
        }

    @staticmethod
    def _check(features, mask=None) -> tuple[torch.Tensor, torch.Tensor | None]:
        f = check_tensor(features, "features", ndim=3, floating=True)
        if f.shape[-1] != len(FEATURE_NAMES):
            raise ValueError(
                f"features: expected a tensor (n, n_steps, {len(FEATURE_NAMES)}), got {tuple(f.shape)}"
            )
        return f.float(), _broadcast_mask(mask, tuple(f.shape[:2]))

    @classmethod
    def prior(cls, features: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The fixed prior ``z(attention mass) + z(intent alignment)``, shape (n, n_steps)."""
        f, m = cls._check(features, mask)
        z = _standardise_features(f, m)
        return z[..., 0] + z[..., 1]

    def _residual(self, z: torch.Tensor, w: list[torch.Tensor]) -> torch.Tensor:
        h = torch.tanh(z @ w[0] + w[1])
        return (h @ w[2]).squeeze(-1) + w[3]

    def fit(
        self, features: torch.Tensor, labels: torch.Tensor, exclude_steps=(), mask=None
    ) -> ResidualStepScorer:
        feats, m = self._check(features, mask)
        labels = check_tensor(labels, "labels", ndim=2, floating=True)
        if tuple(labels.shape) != tuple(feats.shape[:2]):
            raise ValueError(
                f"labels: expected a tensor of shape {tuple(feats.shape[:2])}, got {tuple(labels.shape)}"
            )
        n, S = feats.shape[:2]
        seen = torch.ones(n, S, dtype=torch.bool, device=feats.device) if m is None else m.clone()
        for s in exclude_steps:
            s = validate.int_in_range(int(s) if isinstance(s, np.integer) else s, "exclude_steps", -S, S - 1)
            seen[:, s] = False
        z = _standardise_features(feats.double(), m).detach()  # float64: rounding stays far below Adam's eps
        prior = (z[..., 0] + z[..., 1]).detach()
        w8 = seen.float()
        cnt = w8.sum(1, keepdim=True).clamp_min(1.0)

        def loc_scale(x):
            mu = (x * w8).sum(1, keepdim=True) / cnt
            sd = ((((x - mu) * w8) ** 2).sum(1, keepdim=True) / (cnt - 1).clamp_min(1.0)).sqrt()
            return mu, sd

        lab = labels.double().to(feats.device)
        mu_l, sd_l = loc_scale(lab)
        mu_p, sd_p = loc_scale(prior)
        informative = (sd_l > 1e-9) & (cnt >= 2)  # (n, 1): constant labels carry no ranking
        y = mu_p + (lab - mu_l) / sd_l.clamp_min(1e-9) * sd_p  # the labels on the prior's location and scale
        w8 = w8 * informative.float()
        total = w8.sum().clamp_min(1.0)
        if float(w8.sum()) == 0:
            raise ValueError("labels: every trajectory's labels are constant over the candidate steps")
        y = torch.where(w8 > 0, y, prior)
        gen = torch.Generator().manual_seed(self.seed)
        f = z.shape[-1]
        dev, f64 = feats.device, torch.float64
        w = [
            (torch.randn(f, self.hidden, generator=gen) / f**0.5).to(dev, f64).requires_grad_(),
            torch.zeros(self.hidden, device=dev, dtype=f64).requires_grad_(),
            torch.zeros(
                self.hidden, 1, device=dev, dtype=f64
            ).requires_grad_(),  # zero output: starts at the prior
            torch.zeros((), device=dev, dtype=f64).requires_grad_(),
        ]

        def loss_fn():
            r = self._residual(z, w)
            return (((prior + r - y) ** 2 + self.ridge * r**2) * w8).sum() / total

        self.prior_loss_ = float((((prior - y) ** 2) * w8).sum() / total)
        # a tiny MLP: one thread is ~40x faster than two on a busy 2-core machine (measured)
        with torch.enable_grad(), torch_threads(1):
            self.train_loss_ = _adam_fit(w, loss_fn, self.iters, self.lr)
        self.weights_ = [p.detach().float() for p in w]
        self.n_features_in_ = f
        return self

    def predict(self, features: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Step scores (n, n_steps): the prior plus the learned correction (higher = keep)."""
        if not hasattr(self, "weights_"):
            raise RuntimeError("ResidualStepScorer: call fit() before predict()")
        f, m = self._check(features, mask)
        z = _standardise_features(f, m)
        w = [p.to(f.device) for p in self.weights_]
        out = z[..., 0] + z[..., 1] + self._residual(z, w)
        return out if m is None else out * m


def _candidates(candidates, shape: tuple[int, int]) -> torch.Tensor:
    n, S = shape
    if candidates is None:
        return torch.ones(n, S, dtype=torch.bool)
    c = _broadcast_mask(candidates, shape, "candidates")
    counts = c.sum(1)
    if bool((counts < 2).any()):
        raise ValueError(
            f"candidates: expected at least 2 droppable steps per row to rank, got {int(counts.min())} "
            "(with fewer there is no ranking and no regime to detect)"
        )
    return c


def _normalised_entropy(p: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    logp = torch.log(p.clamp_min(1e-30))
    ent = -(torch.where(c, p * logp, torch.zeros_like(p))).sum(1)
    return ent / torch.log(c.sum(1).to(p.dtype))


def score_entropy(
    scores: torch.Tensor, candidates: torch.Tensor | None = None, temperature: float = 1.0
) -> torch.Tensor:
    """Normalised entropy in [0, 1] of ``softmax(scores / temperature)`` over candidate steps, shape (n,).

    scores: (n, n_steps); candidates: bool (n_steps,) or (n, n_steps) of steps the policy may drop
    (default all; at least 2 per row). 1 means a flat, unconfident ranking; 0 a single decisive step.
    """
    scores = as_tensor(scores, "scores", ndim=2, floating=True)
    temperature = validate.positive_float(temperature, "temperature")
    c = _candidates(candidates, tuple(scores.shape)).to(scores.device)
    s = (scores.float() / temperature).masked_fill(~c, -torch.inf)
    return _normalised_entropy(torch.softmax(s, dim=1), c)


def attention_entropy(mass: torch.Tensor, candidates: torch.Tensor | None = None) -> torch.Tensor:
    """Normalised entropy in [0, 1] of the raw attention mass over candidate steps, shape (n,).

    mass: (n, n_steps) non-negative window-attention mass per step (feature 0 of
    :func:`step_features`, not standardised); it is renormalised over the candidates. Attention
    spread evenly over the droppable steps gives 1 (no step stands out: fall back); attention on one
    step gives 0. Rows with no mass on any candidate count as flat (1).
    """
    mass = as_tensor(mass, "mass", ndim=2, floating=True, nonnegative=True)
    c = _candidates(candidates, tuple(mass.shape)).to(mass.device)
    m = torch.where(c, mass.float(), torch.zeros_like(mass, dtype=torch.float32))
    tot = m.sum(1, keepdim=True)
    flat = c.float() / c.sum(1, keepdim=True)
    p = torch.where(tot > 0, m / tot.clamp_min(1e-30), flat)
    return _normalised_entropy(p, c)


def regime_auc(signal, positive) -> float:
    """Area under the ROC curve of ``signal`` for separating ``positive`` rows (e.g. dense tasks) from
    the others (Mann-Whitney, ties count one half): 0.5 is chance, 1 a perfect separation."""
    s = validate.finite_array(
        signal.detach().cpu().numpy() if isinstance(signal, torch.Tensor) else signal, "signal", ndim=1
    )
    y = np.asarray(positive.detach().cpu().numpy() if isinstance(positive, torch.Tensor) else positive)
    if y.shape != s.shape or y.dtype != bool:
        raise ValueError(f"positive: expected a bool array of shape {s.shape}, got {y.dtype} {y.shape}")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("positive: expected both classes among the rows")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@dataclass
class RegimeClassifier:
    """Entropy-based regime classifier (contribution 3): fall back to contiguous retention when uncertain.

    ``predict(signal)`` is True (fall back) where ``signal > threshold_``. ``fit(signal, success_gain,
    loglik_gain)`` picks the threshold that maximises the success of the switched policy on labelled
    trajectories: ``success_gain[i]`` is success(fallback) - success(scorer) on trajectory ``i``
    (0, +1 or -1 for a binary success), ``loglik_gain`` the same for the answer's log-likelihood (tie
    breaker); remaining ties go to the larger threshold (fall back only when it pays). Candidate
    thresholds: 0, the midpoints between sorted distinct signals, and 1 (never fall back).
    Fitted: ``threshold_``, ``train_gain_`` (mean success gain over never falling back),
    ``train_fallback_rate_``.
    """

    threshold: float = 0.95

    def __post_init__(self) -> None:
        self.threshold = validate.fraction(self.threshold, "threshold")
        self.threshold_ = float(self.threshold)

    def fit(self, signal, success_gain, loglik_gain=None) -> RegimeClassifier:
        e = validate.finite_array(_np(signal), "signal", ndim=1)
        g = validate.finite_array(_np(success_gain), "success_gain", shape=(e.size,))
        lg = (
            np.zeros_like(e)
            if loglik_gain is None
            else validate.finite_array(_np(loglik_gain), "loglik_gain", shape=(e.size,))
        )
        if e.min() < 0 or e.max() > 1:
            raise ValueError(
                f"signal: expected a normalised entropy in [0, 1], got {e.min():.4g} .. {e.max():.4g}"
            )
        u = np.unique(e)
        cand = np.unique(np.concatenate([[0.0], (u[1:] + u[:-1]) / 2, [1.0]]))
        fb = e[None, :] > cand[:, None]  # (n_cand, n)
        succ = (fb * g[None]).sum(1)
        ll = (fb * lg[None]).sum(1)
        best = np.lexsort((cand, ll, succ))[-1]  # max success, then log-likelihood, then larger threshold
        self.threshold_ = float(cand[best])
        self.train_gain_ = float(succ[best] / e.size)
        self.train_fallback_rate_ = float(fb[best].mean())
        return self

    def predict(self, signal) -> np.ndarray:
        return validate.finite_array(_np(signal), "signal", ndim=1) > self.threshold_


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _layout_of(offsets, batch: int) -> StepLayout:  # used by the policy
    return step_layout(offsets, seq_len_of(offsets), batch)
