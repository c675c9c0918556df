"""The hidden consumer demand model (ours, in the shape of the authors' public code).

Generative model, per retail item ``k`` and day ``t`` (latent: the noise ``eps`` and each retailer's
loyalty ``l_i``, drawn once per seed; observed by agents: only their own sales):

- ``eps_t ~ N(0, sigma)``, one draw per (item, day), shared by the market;
- festival multiplier ``f_t`` (``festival_multiplier`` on ``festival_days``, else 1);
- active shops: retailers not bankrupt, with a positive price and stock; ``pbar`` their mean price;
- elastic pool ``M_t = min(f_t * hi, max(0, f_t * D0 + eps_t) * max(0, 1 - pbar / p_res))``;
- shop ``i``'s share ``s_i = l_i a_i / sum_j l_j a_j`` with attractiveness ``a_i = max(0, 1 - p_i / p_res)``;
- floor demand ``F`` (regulars) for every shop priced at or below ``p_res``;
- shop ``i`` sells ``min(M_t s_i + F [p_i <= p_res], stock_i)`` kg, paid in cash.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import as_generator, finite_float, nonnegative_float, positive_float

from .config import RETAIL_ITEMS, EconomyConfig

__all__ = ["DemandModel", "shop_sales"]


class DemandModel:
    """The latent draws of one seed: noise paths ``(items, days)`` and loyalty per retailer."""

    def __init__(self, config: EconomyConfig, rng: np.random.Generator, retailers: tuple[str, ...]) -> None:
        if not isinstance(config, EconomyConfig):
            raise TypeError(f"config: expected an EconomyConfig, got {type(config).__name__}")
        rng = as_generator(rng, "rng")
        self.config = config
        lo, hi = config.loyalty_range
        self.loyalty = {r: float(rng.uniform(lo, hi)) for r in retailers}
        self.eps = {k: rng.normal(0.0, config.demand_sigma, size=config.days + 2) for k in RETAIL_ITEMS}

    def festival(self, day: int) -> float:
        a, b = self.config.festival_days
        return float(self.config.festival_multiplier) if a <= day <= b else 1.0

    def sales(self, item: str, day: int, shops: dict[str, tuple[float, float]]) -> dict[str, float]:
        """kg sold per shop; ``shops``: retailer -> (price, stock) of the active shops."""
        c = self.config
        eps = float(self.eps[item][day]) if day < len(self.eps[item]) else 0.0
        return shop_sales(
            shops,
            loyalty=self.loyalty,
            base=c.demand_base[item],
            hi=c.demand_hi[item],
            floor=c.demand_floor[item],
            p_res=c.reservation_price[item],
            festival=self.festival(day),
            eps=eps,
        )


def shop_sales(
    shops: dict[str, tuple[float, float]],
    *,
    loyalty: dict[str, float],
    base: float,
    hi: float,
    floor: float,
    p_res: float,
    festival: float,
    eps: float,
) -> dict[str, float]:
    """The sales rule of the module docstring, for one item and day (a pure function).

    ``shops``: shop -> (price, stock), finite and >= 0 (a shop with price or stock 0 is closed);
    ``loyalty``: shop -> multiplier > 0 (1 where missing). Returns kg sold per open shop."""
    p_res = positive_float(p_res, "p_res")
    base, hi = nonnegative_float(base, "base"), nonnegative_float(hi, "hi")
    floor, festival = nonnegative_float(floor, "floor"), nonnegative_float(festival, "festival")
    eps = finite_float(eps, "eps")
    for s, pq in shops.items():
        if not (isinstance(pq, tuple | list) and len(pq) == 2):
            raise ValueError(f"shops[{s!r}]: expected (price, stock), got {pq!r}")
        nonnegative_float(pq[0], f"shops[{s!r}] price")
        nonnegative_float(pq[1], f"shops[{s!r}] stock")
    active = {s: (p, q) for s, (p, q) in shops.items() if p > 0 and q > 0}
    if not active:
        return {}
    pbar = sum(p for p, _ in active.values()) / len(active)
    pool = min(festival * hi, max(0.0, festival * base + eps) * max(0.0, 1.0 - pbar / p_res))
    attr = {s: loyalty.get(s, 1.0) * max(0.0, 1.0 - p / p_res) for s, (p, _) in active.items()}
    total = sum(attr.values())
    out = {}
    for s, (p, q) in active.items():
        elastic = pool * attr[s] / total if total > 0 else 0.0
        regulars = floor if p <= p_res else 0.0
        out[s] = min(elastic + regulars, q)
    return out
