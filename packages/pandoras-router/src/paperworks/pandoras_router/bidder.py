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

from paperworks.core.validate import as_generator, nonnegative_float, one_of

from ._validate import as_finite, as_positive
from .gaussian import posterior_mean, preposterior_std, reservation_value

__all__ = ["MARKETS", "BidResult", "PandorasBidder", "competing_claims", "market_outcome"]

_STRATEGIES = ("voi", "never", "always")
MARKETS = ("noisy", "bayesian")


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
        self.strategy = one_of(strategy, "strategy", _STRATEGIES)
        self.tau = nonnegative_float(tau, "tau")
        self.inspection_cost = nonnegative_float(inspection_cost, "inspection_cost")

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
    bid: BidResult,
    own_value: np.ndarray,
    price: np.ndarray,
    competitor_value: np.ndarray,
    competitor_cost: np.ndarray | float = 0.0,
) -> dict[str, float]:
    """Welfare and the specialist's utility when it faces price ``price`` (n,).

    If ``S`` accepts, the query's social value is ``own_value``; otherwise it goes to the competitor
    whose claim set the price, of true value ``competitor_value``. Self-assessment costs (``S``'s and
    the competitors' ``competitor_cost``, scalar or (n,)) count against welfare. Returns ``welfare``
    (mean), ``efficiency`` (welfare / mean first-best ``max(own, competitor)``), ``utility`` (mean
    ``(U - p) 1[accept] - cost``) and ``self_assess_rate``.
    """
    if not isinstance(bid, BidResult):
        raise TypeError(f"bid: expected a BidResult (PandorasBidder.decide), got {type(bid).__name__}")
    own = as_finite(own_value, "own_value", ndim=1)
    p = as_finite(price, "price", ndim=1)
    comp = as_finite(competitor_value, "competitor_value", ndim=1)
    for name, arr in (("price", p), ("competitor_value", comp)):
        if arr.shape != own.shape:
            raise ValueError(f"{name}: expected shape {own.shape} (the shape of own_value), got {arr.shape}")
    if bid.accept.shape != own.shape:
        raise ValueError(f"bid: expected decisions for {own.shape[0]} queries, got shape {bid.accept.shape}")
    ccost = as_finite(competitor_cost, "competitor_cost")
    if ccost.ndim != 0 and ccost.shape != own.shape:
        raise ValueError(f"competitor_cost: expected a scalar or shape {own.shape}, got {ccost.shape}")
    if (ccost < 0).any():
        raise ValueError("competitor_cost: expected non-negative self-assessment costs")
    welfare = np.where(bid.accept, own, comp) - bid.inspection_cost - ccost
    best = np.maximum(own, comp)
    utility = np.where(bid.accept, own - p, 0.0) - bid.inspection_cost
    return {
        "welfare": float(welfare.mean()),
        "efficiency": float(welfare.mean() / best.mean()),
        "utility": float(utility.mean()),
        "self_assess_rate": float(bid.inspected.mean()),
    }


def competing_claims(
    values: np.ndarray,
    market: str,
    *,
    rng: np.random.Generator | int | None = None,
    noise: float = 0.0,
    shade: float = 0.0,
    m: np.ndarray | None = None,
    s: np.ndarray | None = None,
    tau: np.ndarray | None = None,
    readings: np.ndarray | None = None,
    cost: np.ndarray | None = None,
    strategy: str = "voi",
) -> dict[str, np.ndarray]:
    """The competing claims that price a query for the strategic specialist (our market models).

    ``values`` (n, J): the competitors' true values. ``market``:

    - ``"noisy"``: competitor ``j`` claims ``V_j + N(0, noise^2) - shade`` (``shade`` > 0: price
      shading, bidding below one's estimate as in a first-price auction);
    - ``"bayesian"``: competitors are value-of-information bidders themselves. Competitor ``j``
      holds the cheap belief ``N(m_j, s_j^2)``, self-assesses (reading ``readings``, noise ``tau``,
      cost ``cost``; all (n, J)) when its one-box value of information against the best other
      competitor's cheap estimate is positive (``strategy="voi"``; ``"never"``: cheap claims only)
      and claims its posterior mean, minus ``shade``.

    The price is the highest claim, the query's alternative is that competitor. Returns ``price``
    (n,), ``winner`` (n,) column of the winning competitor, ``competitor_value`` (n,) its true value,
    ``competitor_cost`` (n,) the competitors' self-assessment costs.
    """
    market = one_of(market, "market", MARKETS)
    v = as_finite(values, "values", ndim=2)
    n, j = v.shape
    noise = nonnegative_float(noise, "noise")
    shade = nonnegative_float(shade, "shade")
    spent = np.zeros(n)
    if market == "noisy":
        gen = as_generator(rng, "rng")
        claims = v + gen.normal(0.0, noise, v.shape) - shade
    else:
        strategy = one_of(strategy, "strategy", ("voi", "never"))
        arrays = {}
        for name, arr in (("m", m), ("s", s), ("tau", tau), ("readings", readings), ("cost", cost)):
            if arr is None:
                raise ValueError(f"{name}: the 'bayesian' market needs the competitors' beliefs (n, J)")
            a = as_finite(arr, name, ndim=2)
            if a.shape != v.shape:
                raise ValueError(f"{name}: expected shape {v.shape} (the shape of values), got {a.shape}")
            arrays[name] = a
        mm, ss, tt, yy, cc = (arrays[k] for k in ("m", "s", "tau", "readings", "cost"))
        as_positive(ss, "s")
        if (tt < 0).any() or (cc < 0).any():
            raise ValueError("tau, cost: expected non-negative noise stds and costs")
        if strategy == "never" or j < 2:
            assessed = np.zeros(v.shape, dtype=bool)
        else:
            order = np.sort(mm, axis=1)
            best_other = np.where(mm >= order[:, -1:], order[:, -2:-1], order[:, -1:])
            r = reservation_value(mm, preposterior_std(ss, tt), cc)
            assessed = (best_other < r) & (best_other > 2.0 * mm - r)
        claims = np.where(assessed, posterior_mean(mm, ss, tt, yy), mm) - shade
        spent = (cc * assessed).sum(axis=1)
    winner = np.argmax(claims, axis=1)
    idx = np.arange(n)
    return {
        "price": claims[idx, winner],
        "winner": winner,
        "competitor_value": v[idx, winner],
        "competitor_cost": spent,
    }
