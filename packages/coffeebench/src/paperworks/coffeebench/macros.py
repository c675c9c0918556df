"""A fixed menu of macro actions and a numeric observation, for the RL environments.

Each macro decodes, from the firm's current state, into one concrete tool call (one turn, 30
virtual minutes); a macro that does not apply to the firm's role or state decodes to ``None``
(a turn without a tool call: the day ends) and is masked out by :func:`action_mask`.

=====  ============================================================================================
index  macro
=====  ============================================================================================
0      wait_for_next_day
1      accept the best open offer awaiting the firm (highest bid on its goods, cheapest supply)
2      pay the payable due soonest
3      farmer: produce commodity green to the daily cap; roaster: roast all green held; retailer:
       price every roasted item at 2 x cost
4-6    list (or update) all held goods the firm sells at 1.2, 1.5, 2.0 x cost (farmer: green,
       roaster: roasted)
7      bid the asking price of the cheapest listing of the firm's input (roaster: green, retailer:
       roasted) for what fits under the cap
8      retailer: lower every retail price by 10%; others: nothing
9      retailer: raise every retail price by 10%; others: nothing
=====  ============================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .config import GREEN_ITEMS, ITEMS, RETAIL_ITEMS, ROLES
from .engine import EPS, Economy

__all__ = ["N_ACTIONS", "OBS_SIZE", "action_mask", "decode", "encode_observation"]

N_ACTIONS = 10
OBS_SIZE = 18
_SELLS = {"farmer": GREEN_ITEMS[:1], "roaster": RETAIL_ITEMS, "retailer": ()}
_BUYS = {"farmer": None, "roaster": GREEN_ITEMS[0], "retailer": RETAIL_ITEMS[0]}
MARKUPS = {4: 1.2, 5: 1.5, 6: 2.0}


def encode_observation(econ: Economy, firm_id: str) -> np.ndarray:
    """``(OBS_SIZE,)`` float32: time, cash, stock, obligations and role of the firm, scaled to O(1)."""
    f = econ.firm(firm_id)
    c = econ.config
    calls_left = 0 if f.day_over else (c.day_minutes - f.minutes_used) // c.minutes_per_call
    v = [
        econ.day / c.days,
        calls_left / c.calls_per_day,
        f.cash / 1e4,
        *(f.inv[k] / 100.0 for k in ITEMS),
        econ.committed_kg(f) / max(c.inventory_cap[f.role], 1.0),
        sum(1 for o in econ.offers.values() if o.status == "open" and o.acceptor == f.id) / 10.0,
        sum(1 for i in f.ap if not i.paid and i.outstanding > EPS and i.due_day <= econ.day + 1) / 10.0,
        sum(i.outstanding for i in f.ap) / 1e4,
        sum(1 for m in f.inbox if not m["read"]) / 10.0,
        f.net_income / 1e4,
        *(f.retail_price.get(k, 0.0) / 100.0 for k in RETAIL_ITEMS),
        *(1.0 if f.role == r else 0.0 for r in ROLES),
    ]
    return np.clip(np.asarray(v, dtype=np.float32), -100.0, 100.0)


def decode(econ: Economy, firm_id: str, action: int) -> dict[str, Any] | None:
    """The tool call macro ``action`` stands for now, or ``None`` when it does not apply."""
    if isinstance(action, bool) or not isinstance(action, int | np.integer) or not 0 <= action < N_ACTIONS:
        raise ValueError(f"action: expected an integer in [0, {N_ACTIONS}), got {action!r}")
    a = int(action)
    f = econ.firm(firm_id)
    c = econ.config
    if a == 0:
        return {"name": "wait_for_next_day", "arguments": {}}
    if a == 1:
        offers = [o for o in econ.offers.values() if o.status == "open" and o.acceptor == f.id]
        mine = [o for o in offers if o.seller == f.id and f.inv[o.item] + EPS >= o.qty]
        theirs = [o for o in offers if o.buyer == f.id]
        best = max(mine, key=lambda o: o.price, default=None) or min(
            theirs, key=lambda o: o.price, default=None
        )
        return None if best is None else {"name": "accept_offer", "arguments": {"offer_id": best.id}}
    if a == 2:
        due = [
            i
            for i in f.ap
            if not i.paid
            and i.outstanding > EPS
            and not econ.firms[i.issuer].bankrupt
            and i.outstanding <= f.cash
        ]
        if not due:
            return None
        return {
            "name": "pay_invoice",
            "arguments": {"invoice_id": min(due, key=lambda i: (i.due_day, i.id)).id},
        }
    if a == 3:
        if f.role == "farmer":
            item = GREEN_ITEMS[0]
            qty = min(
                c.production_cap[item] - f.produced_today.get(item, 0.0),
                c.inventory_cap["farmer"] - econ.committed_kg(f),
            )
            qty = float(np.floor(qty))
            return (
                {"name": "produce_item", "arguments": {"item_id": item, "quantity": qty}}
                if qty >= 1
                else None
            )
        if f.role == "roaster":
            for g in GREEN_ITEMS:
                qty = float(np.floor(min(f.inv[g], c.roast_cap_green_kg - f.roasted_today) * 100) / 100)
                if qty >= 1:
                    return {"name": "roast", "arguments": {"green_item_id": g, "qty_kg": qty}}
            return None
        for k in RETAIL_ITEMS:
            if f.inv[k] > EPS:
                price = round(max(2.0 * f.unit_cost(k), 1.0), 2)
                if abs(price - f.retail_price.get(k, 0.0)) > 0.005:
                    return {"name": "set_retail_price", "arguments": {"item_id": k, "price_per_unit": price}}
        return None
    if a in MARKUPS:
        for k in _SELLS[f.role]:
            qty = float(np.floor(f.inv[k] * 100) / 100)
            if qty < 1:
                continue
            price = round(MARKUPS[a] * f.unit_cost(k), 2)
            mine = [li for li in econ.listings.values() if li.open and li.seller == f.id and li.item == k]
            if mine:
                return {
                    "name": "update_listing",
                    "arguments": {"listing_id": mine[0].id, "qty": qty, "asking_price": price},
                }
            return {"name": "post_listing", "arguments": {"item_id": k, "qty": qty, "asking_price": price}}
        return None
    if a == 7:
        item = _BUYS[f.role]
        if item is None:
            return None
        room = c.inventory_cap[f.role] - econ.committed_kg(f)
        rows = sorted(
            (li for li in econ.listings.values() if li.open and li.item == item and li.seller != f.id),
            key=lambda li: (li.price, int(li.id[1:])),  # cheapest, then oldest
        )
        if not rows or room < 1:
            return None
        li = rows[0]
        qty = float(np.floor(min(room, li.qty) * 100) / 100)
        return (
            {"name": "make_offer", "arguments": {"listing_id": li.id, "offered_price": li.price, "qty": qty}}
            if qty >= 1
            else None
        )
    if f.role != "retailer":
        return None
    factor = 0.9 if a == 8 else 1.1
    for k in RETAIL_ITEMS:
        if f.inv[k] > EPS:
            return {
                "name": "set_retail_price",
                "arguments": {"item_id": k, "price_per_unit": round(f.retail_price[k] * factor, 2)},
            }
    return None


def action_mask(econ: Economy, firm_id: str) -> np.ndarray:
    """``(N_ACTIONS,)`` int8: 1 where the macro decodes to a tool call now."""
    return np.array([decode(econ, firm_id, a) is not None for a in range(N_ACTIONS)], dtype=np.int8)
