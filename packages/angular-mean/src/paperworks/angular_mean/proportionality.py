"""Individual proportionality (IP), long-run and per batch.

A rule theta* satisfies IP for voters (theta_i, alpha_i) when every voter type agrees with its
rankings to at least its population share: agreement_i >= alpha_i. Long-run IP asks this of the
long-run (expected) agreement; per-batch IP of the agreement within every batch. The violation of
a rule is max_i max(0, alpha_i - agreement_i) (0 when IP holds); the per-batch gap is its
expectation over batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_fractions, check_theta, check_voters
from .agreement import batch_agreement, long_run_agreement

__all__ = ["IPResult", "PerBatchIP", "ip_violation", "long_run_ip", "per_batch_ip"]


def ip_violation(agreement: object, alpha: object) -> np.ndarray | float:
    """max_i max(0, alpha_i - agreement_i): agreement (n,) -> float, or (B, n) -> (B,)."""
    a = np.asarray(agreement, dtype=float)
    if a.ndim not in (1, 2) or a.shape[-1] == 0:
        raise ValueError(f"agreement: expected shape (n,) or (B, n), got {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < -1e-12) or np.any(a > 1 + 1e-12):
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
    an item pool, or Monte Carlo with ``n_pairs`` (see :func:`long_run_agreement`).
    """
    thetas = check_voters(thetas)
    check_theta(theta, thetas.shape[1])
    al = check_fractions(alpha, thetas.shape[0])
    agr = long_run_agreement(theta, thetas, items=items, cov=cov, n_pairs=n_pairs, seed=seed)
    v = float(np.maximum(al - agr, 0.0).max())
    return IPResult(agr, al, v, v <= tol)


@dataclass(frozen=True)
class PerBatchIP:
    """Per-batch IP over B batches: agreement (B, n), violation (B,), rate of violated batches, gap."""

    agreement: np.ndarray
    violation: np.ndarray
    tol: float

    @property
    def violation_rate(self) -> float:
        return float(np.mean(self.violation > self.tol))

    @property
    def gap(self) -> float:
        """Expected per-batch violation E_X[max_i (alpha_i - agreement_i(X))_+]."""
        return float(np.mean(self.violation))


def per_batch_ip(
    theta: object, thetas: object, alpha: object, batches: object, *, tol: float = 1e-9
) -> PerBatchIP:
    """Per-batch IP of ``theta`` on batches (B, m, d) for voters (n, d) with fractions (n,)."""
    thetas = check_voters(thetas)
    al = check_fractions(alpha, thetas.shape[0])
    agr = batch_agreement(theta, thetas, batches)
    if agr.ndim == 1:
        agr = agr[None]
    return PerBatchIP(agr, np.maximum(al - agr, 0.0).max(axis=1), tol)
