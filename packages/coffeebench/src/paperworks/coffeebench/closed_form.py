"""Closed forms of our economy, computed from the constants alone (no engine): the passive firm's loss.

A firm that never acts pays its role's daily opex on each of ``days`` days and loses a fraction
``r`` of every held kg each day (compounded), each kg valued at its starter cost basis, so

    NI_passive = -( days * opex_role + sum_items kg_0 * c_0 * (1 - (1 - r)^days) ).

Paper (Section 5, the roaster's "do-nothing floor"): about -$2,764 over 90 days.
"""

from __future__ import annotations

from .config import ROLES, EconomyConfig

__all__ = ["passive_net_income"]


def passive_net_income(config: EconomyConfig | None = None, role: str = "roaster") -> float:
    """Net income of a firm of ``role`` that takes no action for the whole run (a closed form)."""
    c = config if config is not None else EconomyConfig()
    if not isinstance(c, EconomyConfig):
        raise TypeError(f"config: expected an EconomyConfig or None, got {type(c).__name__}")
    if role not in ROLES:
        raise ValueError(f"role: expected one of {ROLES}, got {role!r}")
    kept = (1.0 - c.spoilage_per_day) ** c.days
    spoiled = sum(kg * per_kg * (1.0 - kept) for kg, per_kg in c.starter_stock[role].values())
    return -(c.days * c.daily_opex[role] + spoiled)
