"""Baseline weightings of the synthetic pool (real trajectories keep weight 1 in every method).

Each returns weights over the synthetic trajectories with mean 1 (zeros allowed):

- :func:`topq_weights`: keep the top fraction ``q`` by return (quality filtering / filtered BC);
- :func:`rwr_weights`: reward-weighted regression, ``w ∝ exp(return / beta)``;
- :func:`domain_classifier_weights`: importance weights ``(p / (1 - p))^gamma`` from a real-vs-synthetic
  classifier (:class:`DomainClassifier`, L2 logistic regression, balanced classes), clipped;
- :func:`oracle_weights`: the truth (realism and quality), an upper reference no real method has.
"""

from __future__ import annotations

import numpy as np
import torch

from paperworks.core.validate import fraction, positive_float

__all__ = ["DomainClassifier", "domain_classifier_weights", "oracle_weights", "rwr_weights", "topq_weights"]


def _mean1(w: np.ndarray) -> np.ndarray:
    if w.sum() <= 0:
        raise ValueError("weights: all zero")
    return w / w.mean()


def topq_weights(returns: np.ndarray, q: float) -> np.ndarray:
    """1 on the top ``q`` fraction of trajectories by return (ties broken by order), else 0."""
    q = fraction(q, "q", open_low=True)
    r = np.asarray(returns, dtype=float)
    k = max(1, round(q * r.size))
    w = np.zeros(r.size)
    w[np.argsort(-r, kind="stable")[:k]] = 1.0
    return _mean1(w)


def rwr_weights(returns: np.ndarray, beta: float) -> np.ndarray:
    """Reward-weighted regression: ``exp((R - max R) / beta)``, mean 1."""
    b = positive_float(beta, "beta")
    r = np.asarray(returns, dtype=float)
    return _mean1(np.exp((r - r.max()) / b))


class DomainClassifier:
    """L2-regularised logistic regression real (1) vs synthetic (0) on trajectory features, classes
    balanced; :meth:`p_real` gives P(real | features)."""

    def __init__(self, l2: float = 1e-2, steps: int = 300, lr: float = 0.1) -> None:
        self.l2, self.steps, self.lr = positive_float(l2, "l2"), steps, positive_float(lr, "lr")

    def fit(self, x: torch.Tensor, is_real: np.ndarray) -> DomainClassifier:
        y = torch.as_tensor(np.asarray(is_real, dtype=np.float32))
        if not (0 < float(y.sum()) < y.numel()):
            raise ValueError("is_real: expected both real and synthetic trajectories")
        x = x.detach().float()
        wpos = 0.5 / y.mean()
        wneg = 0.5 / (1 - y.mean())
        sw = torch.where(y > 0, wpos, wneg)
        self.w = torch.zeros(x.shape[1], requires_grad=True)
        self.b = torch.zeros((), requires_grad=True)
        opt = torch.optim.Adam([self.w, self.b], lr=self.lr)
        for _ in range(self.steps):
            z = x @ self.w + self.b
            loss = (sw * torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none")).mean()
            loss = loss + self.l2 * (self.w**2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return self

    @torch.no_grad()
    def p_real(self, x: torch.Tensor) -> np.ndarray:
        return torch.sigmoid(x.float() @ self.w + self.b).numpy().astype(float)


def domain_classifier_weights(p_real: np.ndarray, gamma: float, clip: float = 20.0) -> np.ndarray:
    """Importance weights ``(p / (1 - p))^gamma`` clipped at ``clip`` times their median, mean 1."""
    g = positive_float(gamma, "gamma")
    p = np.clip(np.asarray(p_real, dtype=float), 1e-6, 1 - 1e-6)
    w = (p / (1 - p)) ** g
    w = np.minimum(w, clip * np.median(w))
    return _mean1(w)


def oracle_weights(realism: np.ndarray, quality: np.ndarray, gamma: float) -> np.ndarray:
    """The truth: ``1[realism == 1] * quality^gamma`` (an upper reference), mean 1."""
    g = positive_float(gamma, "gamma")
    return _mean1((np.asarray(realism) >= 1.0 - 1e-9) * np.asarray(quality, dtype=float) ** g)
