"""Economy constants: the paper's where known (authors' public code, SakanaAI/CoffeeBench), ours otherwise.

Every constant below is a field of :class:`EconomyConfig` (frozen, validated). Sources:

- ``[code]``: the authors' public repository (``coffeebench/environment.py`` and ``main.py``),
  read for the rules, nothing copied;
- ``[ours]``: our choice, documented in the README's Fidelity section.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "FIRMS",
    "GREEN_ITEMS",
    "ITEMS",
    "RETAIL_ITEMS",
    "ROLES",
    "EconomyConfig",
    "role_of",
]

ROLES = ("farmer", "roaster", "retailer")
FIRMS = ("farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B")
GREEN_ITEMS = ("green_coffee_kg", "green_specialty_kg")
RETAIL_ITEMS = ("roasted_coffee_kg", "roasted_specialty_kg")
ITEMS = GREEN_ITEMS + RETAIL_ITEMS
# green input -> roasted output
RECIPE_OUTPUT = {"green_coffee_kg": "roasted_coffee_kg", "green_specialty_kg": "roasted_specialty_kg"}


def role_of(firm_id: str) -> str:
    """``"farmer_A" -> "farmer"``; raises on an unknown firm id."""
    if firm_id not in FIRMS:
        raise ValueError(f"firm_id: expected one of {FIRMS}, got {firm_id!r}")
    return firm_id.split("_")[0]


@dataclass(frozen=True)
class EconomyConfig:
    """All rules of one economy. Defaults are the paper's (``[code]``) unless marked ``[ours]``.

    Time: ``days`` business days, each ``day_minutes`` long (09:00-19:00 [code]), a tool call costs
    ``minutes_per_call`` (30 [code]): 20 calls per firm per day.
    Money: ``start_cash`` per firm [code]; ``daily_opex`` per role [code]; ``late_fee_per_day`` on
    the principal of an overdue invoice [code]; invoices due ``net_days`` after delivery [code];
    returns within ``return_window_days`` of the invoice [code].
    Goods (kg, real numbers): ``spoilage_per_day`` compounded on every held kg (continuous, [ours]:
    the authors carry a fractional remainder over integer units); ``inventory_cap`` per role on kg
    held plus kg already committed inbound [code]; farmer ``production_cap``/``production_cost``
    per green item and ``production_lag_days`` [code]; roaster ``roast_cap_green_kg`` shared by
    both recipes, ``roast_labor``/``roast_yield`` per green item, ``roast_lag_days`` [code].
    Shipping: ``ship_days`` after acceptance, delayed ``ship_delay_days`` with probability
    ``ship_delay_prob`` and lost with ``ship_loss_prob`` [code].
    Consumers (hidden, [ours] in form, the authors' shape): see :mod:`paperworks.coffeebench.demand`.
    """

    days: int = 90
    day_minutes: int = 600
    minutes_per_call: int = 30
    start_cash: float = 15_000.0
    daily_opex: dict = field(default_factory=lambda: dict(farmer=25.0, roaster=30.0, retailer=50.0))
    spoilage_per_day: float = 0.005
    late_fee_per_day: float = 0.001
    net_days: int = 30
    return_window_days: int = 14
    inventory_cap: dict = field(default_factory=lambda: dict(farmer=120.0, roaster=120.0, retailer=80.0))
    production_cap: dict = field(default_factory=lambda: dict(green_coffee_kg=30.0, green_specialty_kg=10.0))
    production_cost: dict = field(default_factory=lambda: dict(green_coffee_kg=2.0, green_specialty_kg=10.0))
    production_lag_days: int = 2
    roast_cap_green_kg: float = 50.0
    roast_labor: dict = field(default_factory=lambda: dict(green_coffee_kg=3.0, green_specialty_kg=5.0))
    roast_yield: dict = field(default_factory=lambda: dict(green_coffee_kg=0.85, green_specialty_kg=0.82))
    roast_lag_days: int = 1
    ship_days: int = 1
    ship_delay_prob: float = 0.07
    ship_delay_days: int = 1
    ship_loss_prob: float = 0.015
    # consumers
    demand_base: dict = field(default_factory=lambda: dict(roasted_coffee_kg=80.0, roasted_specialty_kg=15.0))
    demand_hi: dict = field(
        default_factory=lambda: dict(roasted_coffee_kg=130.0, roasted_specialty_kg=130.0 * 15.0 / 80.0)
    )
    demand_sigma: float = 0.5
    demand_floor: dict = field(default_factory=lambda: dict(roasted_coffee_kg=5.0, roasted_specialty_kg=1.0))
    reservation_price: dict = field(
        default_factory=lambda: dict(roasted_coffee_kg=30.0, roasted_specialty_kg=80.0)
    )
    default_retail_price: dict = field(
        default_factory=lambda: dict(roasted_coffee_kg=18.0, roasted_specialty_kg=50.0)
    )
    festival_days: tuple = (40, 53)
    festival_multiplier: float = 3.0
    loyalty_range: tuple = (0.85, 1.15)
    # starter stock: kg and cost basis per kg, per role [code]
    starter_stock: dict = field(
        default_factory=lambda: {
            "farmer": {"green_coffee_kg": (60.0, 2.0)},
            "roaster": {"roasted_coffee_kg": (30.0, 5.88)},
            "retailer": {"roasted_coffee_kg": (25.0, 10.0)},
        }
    )

    def __post_init__(self) -> None:
        for name in ("days", "day_minutes", "minutes_per_call", "net_days", "production_lag_days"):
            _pos_int(self, name)
        for name in ("return_window_days", "roast_lag_days", "ship_days", "ship_delay_days"):
            _pos_int(self, name, least=0)
        if self.minutes_per_call > self.day_minutes:
            raise ValueError("EconomyConfig.minutes_per_call: expected <= day_minutes")
        for name in ("start_cash", "roast_cap_green_kg", "festival_multiplier"):
            _nonneg(self, name, getattr(self, name))
        for name in ("spoilage_per_day", "late_fee_per_day", "ship_delay_prob", "ship_loss_prob"):
            v = getattr(self, name)
            if not _num(v) or not 0.0 <= v < 1.0:
                raise ValueError(f"EconomyConfig.{name}: expected a number in [0, 1), got {v!r}")
        if self.ship_delay_prob + self.ship_loss_prob > 1.0:
            raise ValueError("EconomyConfig.ship_delay_prob + ship_loss_prob: expected <= 1")
        _nonneg(self, "demand_sigma", self.demand_sigma)
        for name, keys in (
            ("daily_opex", ROLES),
            ("inventory_cap", ROLES),
            ("production_cap", GREEN_ITEMS),
            ("production_cost", GREEN_ITEMS),
            ("roast_labor", GREEN_ITEMS),
            ("roast_yield", GREEN_ITEMS),
            ("demand_base", RETAIL_ITEMS),
            ("demand_hi", RETAIL_ITEMS),
            ("demand_floor", RETAIL_ITEMS),
            ("reservation_price", RETAIL_ITEMS),
            ("default_retail_price", RETAIL_ITEMS),
        ):
            d = getattr(self, name)
            if not isinstance(d, dict) or set(d) != set(keys):
                raise ValueError(f"EconomyConfig.{name}: expected a dict with keys {keys}, got {d!r}")
            for k, v in d.items():
                _nonneg(self, f"{name}[{k!r}]", v)
        for k, y in self.roast_yield.items():
            if not 0.0 < y <= 1.0:
                raise ValueError(f"EconomyConfig.roast_yield[{k!r}]: expected a number in (0, 1], got {y!r}")
        for k, p in self.reservation_price.items():
            if p <= 0:
                raise ValueError(f"EconomyConfig.reservation_price[{k!r}]: expected > 0, got {p!r}")
        fd = self.festival_days
        if not (
            isinstance(fd, tuple) and len(fd) == 2 and all(isinstance(x, int) for x in fd) and fd[0] <= fd[1]
        ):
            raise ValueError(f"EconomyConfig.festival_days: expected (first, last) integers, got {fd!r}")
        lo_hi = self.loyalty_range
        if not (isinstance(lo_hi, tuple) and len(lo_hi) == 2 and 0 < lo_hi[0] <= lo_hi[1]):
            raise ValueError(
                f"EconomyConfig.loyalty_range: expected (lo, hi) with 0 < lo <= hi, got {lo_hi!r}"
            )
        if not isinstance(self.starter_stock, dict) or set(self.starter_stock) != set(ROLES):
            raise ValueError(f"EconomyConfig.starter_stock: expected a dict with keys {ROLES}")
        for role, stock in self.starter_stock.items():
            for item, pair in stock.items():
                if item not in ITEMS or not (isinstance(pair, tuple) and len(pair) == 2):
                    raise ValueError(
                        f"EconomyConfig.starter_stock[{role!r}]: expected item -> (kg, cost per "
                        f"kg), got {item!r}: {pair!r}"
                    )
                _nonneg(self, f"starter_stock[{role!r}][{item!r}]", pair[0])
                _nonneg(self, f"starter_stock[{role!r}][{item!r}]", pair[1])

    @property
    def calls_per_day(self) -> int:
        return self.day_minutes // self.minutes_per_call

    def replace(self, **changes: Any) -> EconomyConfig:
        """A copy with ``changes`` (validated); unknown names raise."""
        known = {f.name for f in fields(self)}
        bad = sorted(set(changes) - known)
        if bad:
            raise ValueError(f"EconomyConfig: unknown settings {bad}")
        kw = {f.name: getattr(self, f.name) for f in fields(self)}
        kw.update(changes)
        return EconomyConfig(**kw)


def _num(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _nonneg(cfg: EconomyConfig, name: str, v: object) -> None:
    if not _num(v) or v < 0:
        raise ValueError(f"EconomyConfig.{name}: expected a finite number >= 0, got {v!r}")


def _pos_int(cfg: EconomyConfig, name: str, least: int = 1) -> None:
    v = getattr(cfg, name)
    if isinstance(v, bool) or not isinstance(v, int) or v < least:
        raise ValueError(f"EconomyConfig.{name}: expected an integer >= {least}, got {v!r}")
