"""Agreement of a voter with the rankings of a collective rule.

Our reading of the paper's agreement measure: the fraction of item pairs of a batch that the
collective rule and the voter order the same way (1 - the normalised Kendall tau distance; a tie
counts one half). Long-run agreement is its expectation over random batches, which for i.i.d.
items equals the probability that one random pair is ordered alike. For items whose pairwise
differences are centred Gaussian with covariance prop. to ``cov`` this has the closed form
1 - angle(L^T theta*, L^T theta_i) / pi (cov = L L^T): a random hyperplane separates two
directions with probability angle / pi.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import positive_int

from ._validation import check_items, check_seed, check_theta, check_voters
from .sphere import angles

__all__ = ["PairwiseAgreement", "batch_agreement", "gaussian_agreement", "long_run_agreement"]

_CHUNK = 4_000_000  # floats per chunk of (batches x pairs x voters)


def gaussian_agreement(theta: object, thetas: object, cov: object = None) -> np.ndarray:
    """Closed-form long-run agreement (n,) for Gaussian items: 1 - angle/pi in the metric of ``cov``."""
    return 1.0 - angles(theta, thetas, cov) / np.pi


def _pair_counts(rules: np.ndarray, thetas: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Concordant pairs (ties: 1/2) per rule, batch and voter, shape (R, B, n).

    rules (R, d), thetas (n, d), items (B, m, d). The voters' pair signs are computed once for all
    rules; sum_p sign_rule(p) sign_voter(p) is one batched matrix product.
    """
    B, m, _ = items.shape
    j, k = np.triu_indices(m, 1)
    n, R = thetas.shape[0], rules.shape[0]
    out = np.empty((R, B, n))
    step = max(1, _CHUNK // max(1, j.size * (n + R)))
    for s in range(0, B, step):
        x = items[s : s + step]
        star = x @ rules.T  # (b, m, R)
        votes = x @ thetas.T  # (b, m, n)
        ds = np.sign(star[:, j, :] - star[:, k, :])  # (b, P, R)
        dv = np.sign(votes[:, j, :] - votes[:, k, :])  # (b, P, n)
        concord = np.matmul(ds.transpose(0, 2, 1), dv)  # (b, R, n)
        out[:, s : s + step] = (0.5 * (j.size + concord)).transpose(1, 0, 2)
    return out


def batch_agreement(theta: object, thetas: object, items: object) -> np.ndarray:
    """Per-batch agreement: fraction of the m(m-1)/2 pairs ordered alike by theta and each voter.

    theta: (d,) collective vector; thetas: (n, d) voters; items: one batch (m, d) -> returns (n,),
    or batches (B, m, d) -> returns (B, n).
    """
    thetas = check_voters(thetas)
    theta = check_theta(theta, thetas.shape[1])
    items = check_items(items, thetas.shape[1])
    single = items.ndim == 2
    x = items[None] if single else items
    m = x.shape[1]
    out = _pair_counts(theta[None], thetas, x)[0] / (m * (m - 1) / 2)
    return out[0] if single else out


def long_run_agreement(
    theta: object,
    thetas: object,
    *,
    items: object = None,
    cov: object = None,
    n_pairs: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Long-run agreement (n,) of each voter with the rule ``theta``.

    * ``items`` None: Gaussian items, exact closed form (:func:`gaussian_agreement`) with ``cov``.
    * ``items`` (N, d), ``n_pairs`` None: batches drawn uniformly from this pool; exact average
      over all N(N-1)/2 pairs.
    * ``items`` (N, d), ``n_pairs`` an int: Monte Carlo over that many uniformly drawn pairs.
    """
    seed = check_seed(seed)
    if n_pairs is not None:
        n_pairs = positive_int(n_pairs, "n_pairs")
    if items is None:
        if n_pairs is not None:
            raise ValueError(
                "n_pairs: applies to an item pool (items=...); Gaussian items use the closed form"
            )
        return gaussian_agreement(theta, thetas, cov)
    if cov is not None:
        raise ValueError("cov: applies to Gaussian items (items=None); an item pool carries its own geometry")
    thetas = check_voters(thetas)
    theta = check_theta(theta, thetas.shape[1])
    pool = check_items(items, thetas.shape[1])
    if pool.ndim != 2:
        raise ValueError(f"items: expected a pool of shape (N, d), got shape {pool.shape}")
    sv = pool @ thetas.T  # (N, n)
    ss = pool @ theta  # (N,)
    N = pool.shape[0]
    if n_pairs is None:
        total = np.zeros(thetas.shape[0])
        count = 0
        rows = max(1, _CHUNK // max(1, N * thetas.shape[0]))
        for s in range(0, N, rows):
            idx = np.arange(s, min(s + rows, N))
            ds = np.sign(ss[idx, None] - ss[None, :])  # (r, N)
            dv = np.sign(sv[idx, None, :] - sv[None, :, :])  # (r, N, n)
            upper = np.arange(N)[None, :] > idx[:, None]  # pairs (j, k), j < k
            total += np.einsum("rk,rkn->n", ds * upper, dv)
            count += int(upper.sum())
        return 0.5 * (1.0 + total / count)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, N, size=n_pairs)
    b = (a + rng.integers(1, N, size=n_pairs)) % N  # a distinct second item
    ds = np.sign(ss[a] - ss[b])
    dv = np.sign(sv[a] - sv[b])
    return 0.5 * (1.0 + ds @ dv / n_pairs)


class PairwiseAgreement:
    """Stateful long-run agreement, torchmetrics-style: ``update(batch)`` then ``compute()``.

    Accumulates concordant pairs of each voter with ``theta`` over batches (m, d) or (B, m, d) and
    returns the pair-weighted running agreement (n,). ``reset()`` clears the state.
    """

    def __init__(self, theta: object, thetas: object) -> None:
        self.thetas = check_voters(thetas)
        self.theta = check_theta(theta, self.thetas.shape[1])
        self.reset()

    def reset(self) -> None:
        self._concordant = np.zeros(self.thetas.shape[0])
        self._pairs = 0

    def update(self, items: object) -> None:
        x = check_items(items, self.thetas.shape[1])
        x = x[None] if x.ndim == 2 else x
        m = x.shape[1]
        self._concordant += _pair_counts(self.theta[None], self.thetas, x)[0].sum(axis=0)
        self._pairs += x.shape[0] * m * (m - 1) // 2

    def compute(self) -> np.ndarray:
        if self._pairs == 0:
            raise RuntimeError("PairwiseAgreement: compute() called before any update()")
        return self._concordant / self._pairs
