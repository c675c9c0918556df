"""Pandora's Bidder: a specialist decides alone whether to self-assess before claiming a query.

Setting (our reading of the paper's decentralised extension). The platform offers query ``q`` to
specialist ``S`` at a price ``p_q`` (what ``S`` pays to claim it; here the best competing claim,
so the query goes to ``S`` only if ``S`` expects to beat the competition). ``S``'s payoff from
serving the query is its value ``U_q``, of which it holds the cheap belief ``N(m, s^2)``; at cost
``c`` it can self-assess (the expensive estimator, noise ``tau``) and refine the belief by eq. (1)
of :mod:`.gaussian`. Accepting pays ``U - p``; declining pays 0. This is Pandora's problem with one
box, an outside option ``p`` and nonobligatory inspection, so the value-of-information rule is
optimal for ``S``: self-assess iff ``r_lo < p < r`` (one-box VOI positive), then accept iff the
(refined) estimate exceeds ``p``. Baselines: ``"never"`` (accept iff ``m > p``) and ``"always"``
(always self-assess).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import as_finite, as_nonneg, as_positive
from .gaussian import posterior_mean, preposterior_std, reservation_value

__all__ = ["BidResult", "PandorasBidder", "market_outcome"]

_STRATEGIES = ("voi", "never", "always")


@dataclass
class BidResult:
    """``accept`` (n,) bool, ``inspected`` (n,) bool, ``estimate`` (n,) the belief acted on,
    ``inspection_cost`` (n,) paid."""

    accept: np.ndarray
    inspected: np.ndarray
    estimate: np.ndarray
    inspection_cost: np.ndarray


class PandorasBidder:
    """One specialist's decision rule, vectorised over ``n`` offered queries.

    ``tau`` >= 0: self-assessment noise std; ``inspection_cost`` >= 0: its cost in value units;
    ``strategy``: ``"voi"`` (Pandora's Bidder), ``"never"`` or ``"always"``.
    """

    def __init__(self, tau: float, inspection_cost: float, strategy: str = "voi") -> None:
        if strategy not in _STRATEGIES:
            raise ValueError(f"strategy: expected one of {_STRATEGIES}, got {strategy!r}")
        self.tau = float(as_nonneg(tau, "tau"))
        self.inspection_cost = float(as_nonneg(inspection_cost, "inspection_cost"))
        self.strategy = strategy

    def decide(self, m: np.ndarray, s: np.ndarray, price: np.ndarray, readings: np.ndarray) -> BidResult:
        """``m``, ``s`` (> 0), ``price``, ``readings`` (the self-assessment ``Y``, used only where
        inspected): all (n,)."""
        m = as_finite(m, "m", ndim=1)
        s = as_positive(s, "s", ndim=1)
        price = as_finite(price, "price", ndim=1)
        y = as_finite(readings, "readings", ndim=1)
        for name, arr in (("s", s), ("price", price), ("readings", y)):
            if arr.shape != m.shape:
                raise ValueError(f"{name}: expected shape {m.shape} (the shape of m), got {arr.shape}")
        tau = np.full(m.shape, self.tau)
        cost = np.full(m.shape, self.inspection_cost)
        if self.strategy == "never":
            inspected = np.zeros(m.shape, dtype=bool)
        elif self.strategy == "always":
            inspected = np.ones(m.shape, dtype=bool)
        else:
            r = reservation_value(m, preposterior_std(s, tau), cost)
            inspected = (price < r) & (price > 2.0 * m - r)
        estimate = np.where(inspected, posterior_mean(m, s, tau, y), m)
        return BidResult(estimate > price, inspected, estimate, cost * inspected)


def market_outcome(
    bid: BidResult, own_value: np.ndarray, price: np.ndarray, competitor_value: np.ndarray
) -> dict[str, float]:
    """Welfare and the specialist's utility when it faces price ``price`` (n,).

    If ``S`` accepts, the query's social value is ``own_value``; otherwise it goes to the competitor
    whose claim set the price, of true value ``competitor_value``. Self-assessment costs count
    against both. Returns ``welfare`` (mean), ``efficiency`` (welfare / mean first-best
    ``max(own, competitor)``) and ``utility`` (mean ``(U - p) 1[accept] - cost``).
    """
    own = as_finite(own_value, "own_value", ndim=1)
    p = as_finite(price, "price", ndim=1)
    comp = as_finite(competitor_value, "competitor_value", ndim=1)
    if not (own.shape == p.shape == comp.shape == bid.accept.shape):
        raise ValueError("own_value, price, competitor_value and the bid must share one (n,) shape")
    welfare = np.where(bid.accept, own, comp) - bid.inspection_cost
    best = np.maximum(own, comp)
    utility = np.where(bid.accept, own - p, 0.0) - bid.inspection_cost
    return {
        "welfare": float(welfare.mean()),
        "efficiency": float(welfare.mean() / best.mean()),
        "utility": float(utility.mean()),
        "self_assess_rate": float(bid.inspected.mean()),
    }
