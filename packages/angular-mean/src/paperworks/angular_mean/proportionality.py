"""Individual proportionality (IP), long-run and per batch.

A rule theta* satisfies IP for voters (theta_i, alpha_i) when every voter type agrees with its
rankings to at least its population share: agreement_i >= alpha_i. Long-run IP asks this of the
long-run (expected) agreement; per-batch IP of the agreement within every batch. The violation of
a rule is max_i max(0, alpha_i - agreement_i) (0 when IP holds).

The per-batch gap has two readings, both reported by :class:`PerBatchIP`:

* ``gap`` = E_X[max_i (alpha_i - A_i(X))_+]: the expected shortfall of the worst-off type *of each
  batch* (the type that is short changes from batch to batch);
* ``worst_type_gap`` = max_i E_X[(alpha_i - A_i(X))_+]: the expected shortfall of the type that is
  worst off *on average over batches*.

The second is never larger than the first (a max of means is at most the mean of maxes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array

from ._validation import check_fractions, check_theta, check_tol, check_voters
from .agreement import _pair_counts, long_run_agreement

__all__ = ["IPResult", "PerBatchIP", "ip_violation", "long_run_ip", "per_batch_ip", "per_batch_ip_many"]


def ip_violation(agreement: object, alpha: object) -> np.ndarray | float:
    """max_i max(0, alpha_i - agreement_i): agreement (n,) -> float, or (B, n) -> (B,)."""
    a = finite_array(agreement, "agreement", allow_empty=True)
    if a.ndim not in (1, 2) or a.size == 0:
        raise ValueError(f"agreement: expected a non-empty array of shape (n,) or (B, n), got {a.shape}")
    if np.any(a < -1e-12) or np.any(a > 1 + 1e-12):
        raise ValueError("agreement: expected finite values in [0, 1]")
    al = check_fractions(alpha, a.shape[-1])
    v = np.maximum(al - a, 0.0).max(axis=-1)
    return float(v) if a.ndim == 1 else v


@dataclass(frozen=True)
class IPResult:
    """Long-run IP of one rule: agreement (n,), alpha (n,), slack = agreement - alpha, violation."""

    agreement: np.ndarray
    alpha: np.ndarray
    violation: float
    satisfied: bool

    @property
    def slack(self) -> np.ndarray:
        return self.agreement - self.alpha


def long_run_ip(
    theta: object,
    thetas: object,
    alpha: object = None,
    *,
    cov: object = None,
    items: object = None,
    n_pairs: int | None = None,
    seed: int = 0,
    tol: float = 1e-9,
) -> IPResult:
    """Long-run IP of rule ``theta`` (d,) for voters ``thetas`` (n, d) with fractions ``alpha`` (n,).

    Agreement is exact for Gaussian items (``items`` None, with ``cov``), exact over all pairs of
    an item pool, or Monte Carlo with ``n_pairs`` (see :func:`long_run_agreement`). ``tol`` >= 0:
    the shortfall allowed before IP counts as violated.
    """
    tol = check_tol(tol)
    thetas = check_voters(thetas)
    check_theta(theta, thetas.shape[1])
    al = check_fractions(alpha, thetas.shape[0])
    agr = long_run_agreement(theta, thetas, items=items, cov=cov, n_pairs=n_pairs, seed=seed)
    v = float(np.maximum(al - agr, 0.0).max())
    return IPResult(agr, al, v, v <= tol)


@dataclass(frozen=True)
class PerBatchIP:
    """Per-batch IP over B batches: agreement (B, n), violation (B,), rate of violated batches, gaps.

    ``shortfall`` (B, n): (alpha_i - A_i(X))_+ per batch and type; ``violation`` (B,): its max over
    types.
    """

    agreement: np.ndarray
    shortfall: np.ndarray
    tol: float

    @property
    def violation(self) -> np.ndarray:
        """max_i (alpha_i - A_i(X))_+ per batch, shape (B,)."""
        return self.shortfall.max(axis=1)

    @property
    def violation_rate(self) -> float:
        return float(np.mean(self.violation > self.tol))

    @property
    def gap(self) -> float:
        """Expected per-batch violation E_X[max_i (alpha_i - agreement_i(X))_+]."""
        return float(np.mean(self.violation))

    @property
    def worst_type_gap(self) -> float:
        """The worst type's expected per-batch shortfall max_i E_X[(alpha_i - agreement_i(X))_+]."""
        return float(self.shortfall.mean(axis=0).max())


def per_batch_ip(
    theta: object, thetas: object, alpha: object, batches: object, *, tol: float = 1e-9
) -> PerBatchIP:
    """Per-batch IP of ``theta`` on batches (B, m, d) (or one batch (m, d)) for voters (n, d) with
    fractions (n,); ``tol`` >= 0 is the shortfall allowed before a batch counts as violated."""
    thetas = check_voters(thetas)
    theta = check_theta(theta, thetas.shape[1])
    return per_batch_ip_many(theta[None], thetas, alpha, batches, tol=tol)[0]


def per_batch_ip_many(
    rules: object, thetas: object, alpha: object, batches: object, *, tol: float = 1e-9
) -> list[PerBatchIP]:
    """:func:`per_batch_ip` of several rules (R, d) on the same batches (B, m, d): one PerBatchIP each.

    The voters' pair orders are computed once for all rules (cheaper than R separate calls).
    """
    from ._validation import check_items

    tol = check_tol(tol)
    thetas = check_voters(thetas)
    al = check_fractions(alpha, thetas.shape[0])
    rules = finite_array(rules, "rules", allow_empty=True)
    if rules.ndim != 2 or rules.shape[0] == 0 or rules.shape[1] != thetas.shape[1]:
        raise ValueError(
            f"rules: expected shape (R, {thetas.shape[1]}) with R >= 1 (one scoring vector per row), "
            f"got {rules.shape}"
        )
    for i, r in enumerate(rules):
        check_theta(r, thetas.shape[1], name=f"rules[{i}]")
    x = check_items(batches, thetas.shape[1], name="batches")
    x = x[None] if x.ndim == 2 else x
    m = x.shape[1]
    agr = _pair_counts(rules, thetas, x) / (m * (m - 1) / 2)  # (R, B, n)
    return [PerBatchIP(a, np.maximum(al - a, 0.0), tol) for a in agr]
