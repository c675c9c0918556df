"""The economy: six firms, a marketplace, shipping, invoices and the truth ledger (Sections 3-4 of the paper).

One :class:`Economy` holds the whole state of a run. A business day is
:meth:`Economy.begin_day` (opex, production and roasting that finish, deliveries, and the day's
turn order ``day_order``: a uniformly random permutation of the firms from the run's seed), then
firms' tool calls through :meth:`Economy.call` (each costs ``minutes_per_call`` of that firm's
day), then :meth:`Economy.end_day` (consumer sales, spoilage, late fees, the daily snapshot).

Fairness between seats: nothing in the rules depends on a firm's name or on the order of the
firm table. Who moves first each day is drawn afresh (``day_order``), and listings at equal
asking prices are shown in a fresh random order at each view (a separate seeded stream), so two
firms of one role that play the same policy have the same distribution of outcomes in either
seat. Every money flow
is booked on the firm's truth ledger; :meth:`Economy.balance_sheet` checks
``assets = liabilities + equity`` with ``equity = initial equity + net income``.

Agent mistakes (unknown tool, bad argument, an action past a cap, paying an unknown or settled
invoice, acting while bankrupt) come back as ``{"status": "error", "message": ...}`` results, as an
LLM would see them; programmer errors (unknown firm id, malformed config) raise ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .config import FIRMS, GREEN_ITEMS, ITEMS, RECIPE_OUTPUT, RETAIL_ITEMS, EconomyConfig, role_of
from .demand import DemandModel
from .tools import TOOL_ROLES, ToolError, validate_call

__all__ = ["Economy", "Firm", "Invoice", "NI_KINDS"]

# ledger kinds that move net income, with their sign (``return_adjustment`` is signed itself)
NI_KINDS = {
    "revenue": 1,
    "sale_reversal": -1,
    "cogs": -1,
    "cogs_reversal": 1,
    "opex": -1,
    "spoilage": -1,
    "interest_expense": -1,
    "interest_revenue": 1,
    "writedown": -1,
    "bad_debt": -1,
    "return_adjustment": 1,
}
EPS = 1e-9


@dataclass
class Invoice:
    id: str
    issuer: str
    payer: str
    item: str
    qty: float
    unit_price: float
    amount: float
    unit_cost: float
    issue_day: int
    due_day: int
    credited: float = 0.0
    late_fees: float = 0.0
    returned_qty: float = 0.0
    paid: bool = False
    written_off: bool = False

    @property
    def outstanding(self) -> float:
        return 0.0 if self.paid else self.amount - self.credited + self.late_fees

    def row(self, today: int) -> dict[str, Any]:
        return {
            "invoice_id": self.id,
            "issuer": self.issuer,
            "payer": self.payer,
            "item_id": self.item,
            "qty": round(self.qty - self.returned_qty, 4),
            "amount": round(self.amount, 2),
            "outstanding": round(self.outstanding, 2),
            "late_fees": round(self.late_fees, 4),
            "issue_day": self.issue_day,
            "due_day": self.due_day,
            "days_to_due": self.due_day - today,
            "paid": self.paid,
        }


@dataclass
class Listing:
    id: str
    seller: str
    item: str
    qty: float
    price: float
    terms: int
    open: bool = True


@dataclass
class Offer:
    id: str
    listing_id: str | None
    buyer: str
    seller: str
    proposer: str
    item: str
    qty: float
    price: float
    terms: int
    day: int
    status: str = "open"

    @property
    def acceptor(self) -> str:
        return self.seller if self.proposer == self.buyer else self.buyer

    def row(self) -> dict[str, Any]:
        return {
            "offer_id": self.id,
            "listing_id": self.listing_id,
            "buyer": self.buyer,
            "seller": self.seller,
            "from": self.proposer,
            "item_id": self.item,
            "qty": self.qty,
            "price": self.price,
            "payment_terms_days": self.terms,
            "day": self.day,
            "status": self.status,
            "private": self.listing_id is None,
        }


@dataclass
class Shipment:
    id: str
    seller: str
    buyer: str
    item: str
    qty: float
    price: float
    terms: int
    reserved_cost: float
    delivery_day: int
    lost: bool


@dataclass
class Firm:
    id: str
    role: str
    cash: float
    inv: dict[str, float]
    inv_cost: dict[str, float]
    retail_price: dict[str, float] = field(default_factory=dict)
    wip: list[tuple[int, str, float, float]] = field(default_factory=list)  # (ready day, item, kg, cost)
    ar: list[Invoice] = field(default_factory=list)
    ap: list[Invoice] = field(default_factory=list)
    ledger: list[tuple[int, str, float]] = field(default_factory=list)  # (day, kind, signed NI effect)
    net_income: float = 0.0
    equity0: float = 0.0
    bankrupt: bool = False
    bankrupt_day: int | None = None
    minutes_used: int = 0
    day_over: bool = False
    produced_today: dict[str, float] = field(default_factory=dict)
    roasted_today: float = 0.0
    inbox: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def unit_cost(self, item: str) -> float:
        q = self.inv.get(item, 0.0)
        return self.inv_cost.get(item, 0.0) / q if q > EPS else 0.0


class Economy:
    """State and rules of one seeded run. ``log``: optional callback receiving event dicts."""

    def __init__(
        self,
        config: EconomyConfig | None = None,
        seed: int = 0,
        log: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        if config is None:
            config = EconomyConfig()
        if not isinstance(config, EconomyConfig):
            raise ValueError(f"config: expected an EconomyConfig, got {type(config).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
        self.config = config
        self.seed = int(seed)
        self._log = log
        root = np.random.SeedSequence([self.seed, 54])
        s_demand, s_ship, s_order, s_ties = root.spawn(4)
        retailers = tuple(f for f in FIRMS if role_of(f) == "retailer")
        self.demand = DemandModel(config, np.random.default_rng(s_demand), retailers)
        self._ship_rng = np.random.default_rng(s_ship)
        self._order_rng = np.random.default_rng(s_order)
        self._tie_rng = np.random.default_rng(s_ties)
        self.day_order: tuple[str, ...] = FIRMS
        self.day = 0
        self.started = False
        self.finished = False
        self.firms: dict[str, Firm] = {}
        for fid in FIRMS:
            role = role_of(fid)
            stock = config.starter_stock[role]
            inv = {k: 0.0 for k in ITEMS}
            cost = {k: 0.0 for k in ITEMS}
            for item, (kg, per_kg) in stock.items():
                inv[item] = float(kg)
                cost[item] = float(kg) * float(per_kg)
            f = Firm(fid, role, float(config.start_cash), inv, cost)
            if role == "retailer":
                f.retail_price = dict(config.default_retail_price)
            f.equity0 = f.cash + sum(cost.values())
            self.firms[fid] = f
        self.listings: dict[str, Listing] = {}
        self.offers: dict[str, Offer] = {}
        self.shipments: list[Shipment] = []
        self.invoices: dict[str, Invoice] = {}
        self.consumer_sales: list[dict[str, Any]] = []
        self.daily: list[dict[str, Any]] = []
        self._ids = {"L": 0, "O": 0, "S": 0, "I": 0, "M": 0}

    # ------------------------------------------------------------------ helpers
    def _id(self, prefix: str) -> str:
        self._ids[prefix] += 1
        return f"{prefix}{self._ids[prefix]}"

    def _emit(self, event: str, **data: Any) -> None:
        if self._log is not None:
            self._log({"event": event, "day": self.day, **data})

    def _book(self, firm: Firm, kind: str, amount: float) -> None:
        """Truth ledger: ``amount`` >= 0 of ``kind``; its NI effect is signed by :data:`NI_KINDS`."""
        effect = NI_KINDS[kind] * amount
        firm.ledger.append((self.day, kind, effect))
        firm.net_income += effect

    def firm(self, firm_id: str) -> Firm:
        if firm_id not in self.firms:
            raise ValueError(f"firm_id: expected one of {FIRMS}, got {firm_id!r}")
        return self.firms[firm_id]

    def committed_kg(self, firm: Firm) -> float:
        """kg held + kg inbound (accepted shipments) + kg in production or roasting."""
        inbound = sum(s.qty for s in self.shipments if s.buyer == firm.id)
        return sum(firm.inv.values()) + inbound + sum(w[2] for w in firm.wip)

    def _take(self, firm: Firm, item: str, qty: float) -> float:
        """Remove ``qty`` kg at weighted-average cost; returns the cost removed."""
        have = firm.inv[item]
        if qty > have + EPS:
            raise ToolError(f"qty: you hold {have:.2f} kg of {item}, asked for {qty:g}")
        qty = min(qty, have)
        value = firm.inv_cost[item] * (qty / have) if have > EPS else 0.0
        firm.inv[item] = have - qty
        firm.inv_cost[item] -= value
        if firm.inv[item] <= EPS:
            firm.inv[item] = 0.0
            firm.inv_cost[item] = 0.0
        return value

    def _put(self, firm: Firm, item: str, qty: float, value: float) -> None:
        firm.inv[item] += qty
        firm.inv_cost[item] += value

    # ------------------------------------------------------------------ day cycle
    def begin_day(self) -> None:
        """Start-of-day mechanics: opex, finished production/roasting, deliveries, bankruptcies."""
        if self.finished:
            raise ValueError("begin_day: the run is over (all days played)")
        c = self.config
        for f in self.firms.values():
            f.minutes_used = 0
            f.day_over = f.bankrupt
            f.produced_today = {}
            f.roasted_today = 0.0
            if f.bankrupt:
                continue
            opex = c.daily_opex[f.role]
            f.cash -= opex
            self._book(f, "opex", opex)
            done = [w for w in f.wip if w[0] <= self.day]
            f.wip = [w for w in f.wip if w[0] > self.day]
            for _, item, kg, cost in done:
                self._put(f, item, kg, cost)
        for s in [s for s in self.shipments if s.delivery_day <= self.day]:
            self._deliver(s)
        for f in self.firms.values():
            if not f.bankrupt and f.cash < -EPS:
                self._go_bankrupt(f, "cash below zero at the start of the day")
        # today's turn order: a fresh uniform permutation (one draw a day, bankrupt firms included)
        self.day_order = tuple(FIRMS[i] for i in self._order_rng.permutation(len(FIRMS)))
        self.started = True

    def _deliver(self, s: Shipment) -> None:
        self.shipments.remove(s)
        seller, buyer = self.firms[s.seller], self.firms[s.buyer]
        if s.lost:
            self._book(seller, "writedown", s.reserved_cost)
            self._emit("shipment_lost", shipment=s.id, seller=s.seller, buyer=s.buyer, qty=s.qty)
            return
        amount = s.qty * s.price
        inv = Invoice(
            self._id("I"),
            s.seller,
            s.buyer,
            s.item,
            s.qty,
            s.price,
            amount,
            s.reserved_cost / s.qty if s.qty > 0 else 0.0,
            self.day,
            self.day + s.terms,
        )
        self.invoices[inv.id] = inv
        seller.ar.append(inv)
        buyer.ap.append(inv)
        self._book(seller, "revenue", amount)
        self._book(seller, "cogs", s.reserved_cost)
        self._put(buyer, s.item, s.qty, amount)
        self._emit(
            "delivery",
            shipment=s.id,
            invoice=inv.id,
            seller=s.seller,
            buyer=s.buyer,
            qty=s.qty,
            price=s.price,
        )

    def end_day(self) -> dict[str, Any]:
        """End-of-day mechanics: consumer sales, spoilage, late fees; returns the day's snapshot."""
        if not self.started:
            raise ValueError("end_day: call begin_day first")
        c = self.config
        for item in RETAIL_ITEMS:
            shops = {
                f.id: (f.retail_price.get(item, 0.0), f.inv[item])
                for f in self.firms.values()
                if f.role == "retailer" and not f.bankrupt
            }
            for shop, qty in self.demand.sales(item, self.day, shops).items():
                if qty <= EPS:
                    continue
                f = self.firms[shop]
                price = f.retail_price[item]
                cogs = self._take(f, item, qty)
                f.cash += qty * price
                self._book(f, "revenue", qty * price)
                self._book(f, "cogs", cogs)
                self.consumer_sales.append(
                    {"day": self.day, "shop": shop, "item": item, "qty": qty, "price": price}
                )
        r = c.spoilage_per_day
        for f in self.firms.values():
            if f.bankrupt:
                continue
            for item in ITEMS:
                if f.inv[item] > EPS and r > 0:
                    value = f.inv_cost[item] * r
                    f.inv[item] *= 1.0 - r
                    f.inv_cost[item] -= value
                    self._book(f, "spoilage", value)
        for inv in self.invoices.values():
            if inv.paid or inv.due_day >= self.day or inv.amount - inv.credited <= EPS:
                continue
            issuer, payer = self.firms[inv.issuer], self.firms[inv.payer]
            if issuer.bankrupt or payer.bankrupt:
                continue
            fee = (inv.amount - inv.credited) * c.late_fee_per_day
            inv.late_fees += fee
            self._book(payer, "interest_expense", fee)
            self._book(issuer, "interest_revenue", fee)
        snap = {"day": self.day, "net_income": {f.id: f.net_income for f in self.firms.values()}}
        snap["cash"] = {f.id: f.cash for f in self.firms.values()}
        self.daily.append(snap)
        self._emit("day_end", net_income={k: round(v, 4) for k, v in snap["net_income"].items()})
        for o in self.offers.values():  # offers live three days
            if o.status == "open" and self.day - o.day >= 2:
                o.status = "expired"
        self.day += 1
        self.started = False
        if self.day >= c.days:
            self.finished = True
        return snap

    # ------------------------------------------------------------------ bankruptcy
    def _go_bankrupt(self, f: Firm, reason: str) -> None:
        f.bankrupt = True
        f.bankrupt_day = self.day
        f.day_over = True
        for inv in f.ap:  # creditors write off what this firm owes them
            creditor = self.firms[inv.issuer]
            if not inv.paid and not inv.written_off and not creditor.bankrupt and inv.outstanding > EPS:
                inv.written_off = True
                self._book(creditor, "bad_debt", inv.outstanding)
        for s in [s for s in self.shipments if f.id in (s.buyer, s.seller)]:
            self.shipments.remove(s)
            self._put(self.firms[s.seller], s.item, s.qty, s.reserved_cost)
        for li in self.listings.values():
            if li.seller == f.id:
                li.open = False
        for o in self.offers.values():
            if o.status == "open" and f.id in (o.buyer, o.seller):
                o.status = "withdrawn"
        self._emit("bankrupt", firm=f.id, reason=reason, net_income=f.net_income)

    # ------------------------------------------------------------------ accounting views
    def balance_sheet(self, firm_id: str) -> dict[str, float]:
        """Assets, liabilities and equity of a firm from its balances (not its ledger)."""
        f = self.firm(firm_id)
        in_transit = sum(s.reserved_cost for s in self.shipments if s.seller == f.id)
        ar = sum(i.outstanding for i in f.ar if not i.written_off)
        ap = sum(i.outstanding for i in f.ap)
        inventory = sum(f.inv_cost.values())
        wip = sum(w[3] for w in f.wip)
        assets = f.cash + inventory + wip + in_transit + ar
        return {
            "cash": f.cash,
            "inventory": inventory,
            "work_in_progress": wip,
            "in_transit": in_transit,
            "receivables": ar,
            "assets": assets,
            "liabilities": ap,
            "initial_equity": f.equity0,
            "net_income": f.net_income,
            "equity": f.equity0 + f.net_income,
            "imbalance": assets - ap - (f.equity0 + f.net_income),
        }

    def ledger_net_income(self, firm_id: str) -> float:
        """Net income summed from the ledger's entries (the running total is a cache of this)."""
        return float(math.fsum(e[2] for e in self.firm(firm_id).ledger))

    def ledger_totals(self, firm_id: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for _, kind, eff in self.firm(firm_id).ledger:
            out[kind] = out.get(kind, 0.0) + eff
        return out

    # ------------------------------------------------------------------ observation
    def observe(self, firm_id: str) -> dict[str, Any]:
        """What a firm sees of its own state at the start of a turn (the paper's status header)."""
        f = self.firm(firm_id)
        c = self.config
        start = 9 * 60 + f.minutes_used
        return {
            "firm": f.id,
            "role": f.role,
            "day": self.day,
            "days_left": c.days - self.day,
            "clock": f"{start // 60:02d}:{start % 60:02d}",
            "calls_left": 0 if f.day_over else (c.day_minutes - f.minutes_used) // c.minutes_per_call,
            "bankrupt": f.bankrupt,
            "cash": f.cash,
            "inventory": {k: v for k, v in f.inv.items() if v > EPS},
            "cost_per_kg": {k: f.unit_cost(k) for k in ITEMS if f.inv[k] > EPS},
            "committed_kg": self.committed_kg(f),
            "inventory_cap_kg": c.inventory_cap[f.role],
            "inbound_kg": {
                k: sum(s.qty for s in self.shipments if s.buyer == f.id and s.item == k)
                for k in ITEMS
                if any(s.buyer == f.id and s.item == k for s in self.shipments)
            },
            "in_production": [{"ready_day": w[0], "item_id": w[1], "kg": w[2]} for w in f.wip],
            "retail_prices": dict(f.retail_price),
            "my_listings": [
                {"listing_id": li.id, "item_id": li.item, "qty": li.qty, "asking_price": li.price}
                for li in self.listings.values()
                if li.open and li.seller == f.id
            ],
            "payables_due": [
                i.row(self.day)
                for i in f.ap
                if not i.paid
                and i.outstanding > EPS
                and not self.firms[i.issuer].bankrupt
                and i.due_day <= self.day + 1
            ],
            "open_payables": sum(1 for i in f.ap if not i.paid and i.outstanding > EPS),
            "incoming_offers": sum(
                1 for o in self.offers.values() if o.status == "open" and o.acceptor == f.id
            ),
            "unread_messages": sum(1 for m in f.inbox if not m["read"]),
            "net_income": f.net_income,
        }

    # ------------------------------------------------------------------ tool calls
    def call(self, firm_id: str, name: str, arguments: Any = None) -> dict[str, Any]:
        """One tool call by ``firm_id``; returns the tool's JSON result (errors included)."""
        f = self.firm(firm_id)
        if self.finished or not self.started:
            return self._result(f, name, arguments, error="no business day is open")
        if f.bankrupt:
            return self._result(f, name, arguments, error="your firm is bankrupt: no further actions")
        if f.cash < -EPS:
            self._go_bankrupt(f, "cash below zero at the start of a turn")
            return self._result(f, name, arguments, error="cash below zero: your firm is now bankrupt")
        if f.day_over:
            return self._result(f, name, arguments, error="your business day is over; wait for the next day")
        f.minutes_used += self.config.minutes_per_call
        if f.minutes_used >= self.config.day_minutes:
            f.day_over = True
        try:
            args = validate_call(name, arguments)
            roles = TOOL_ROLES[name]
            if f.role not in roles:
                raise ToolError(f"{name}: only for {' or '.join(roles)}s; you are a {f.role}")
            out = getattr(self, f"_t_{name}")(f, **args)
        except ToolError as e:
            return self._result(f, name, arguments, error=str(e))
        return self._result(f, name, arguments, out=out)

    def _result(
        self, f: Firm, name: str, arguments: Any, *, out: dict | None = None, error: str | None = None
    ) -> dict:
        status = "error" if error is not None else "ok"
        key = f"{name}:{status}" if isinstance(name, str) else f"?:{status}"
        f.counts[key] = f.counts.get(key, 0) + 1
        self._emit(
            "tool_call",
            firm=f.id,
            minute=f.minutes_used,
            tool=name,
            arguments=arguments,
            status=status,
            error=error,
        )
        return {"status": "error", "message": error} if error is not None else {"status": "ok", **(out or {})}

    # --- views
    def _t_view_listings(self, f: Firm, item_id: str | None = None) -> dict:
        if item_id is not None and item_id not in ITEMS:
            raise ToolError(f"item_id: unknown item {item_id!r}; items are {list(ITEMS)}")
        rows = [
            {
                "listing_id": li.id,
                "seller": li.seller,
                "item_id": li.item,
                "qty": li.qty,
                "asking_price": li.price,
                "payment_terms_days": li.terms,
            }
            for li in self.listings.values()
            if li.open and li.seller != f.id and (item_id is None or li.item == item_id)
        ]
        # cheapest first; equal asks in a fresh random order at each view (no seat wins ties)
        keys = self._tie_rng.random(len(rows))
        order = sorted(range(len(rows)), key=lambda i: (rows[i]["asking_price"], keys[i]))
        return {"listings": [rows[i] for i in order]}

    def _t_view_offers(self, f: Firm, direction: str = "incoming") -> dict:
        if direction not in ("incoming", "outgoing", "all"):
            raise ToolError("direction: expected 'incoming', 'outgoing' or 'all'")
        rows = []
        for o in self.offers.values():
            if o.status != "open":
                continue
            inc, out = o.acceptor == f.id, o.proposer == f.id
            if (
                (direction == "incoming" and inc)
                or (direction == "outgoing" and out)
                or (direction == "all" and (inc or out))
            ):
                rows.append(o.row())
        return {"offers": rows}

    def _t_view_messages(self, f: Firm, unread_only: bool = True) -> dict:
        rows = [m for m in f.inbox if not (unread_only and m["read"])]
        for m in rows:
            m["read"] = True
        return {"messages": [{k: v for k, v in m.items() if k != "read"} for m in rows]}

    def _t_view_payables(self, f: Firm) -> dict:
        return {"invoices": [i.row(self.day) for i in f.ap if not i.paid and i.outstanding > EPS]}

    def _t_view_receivables(self, f: Firm) -> dict:
        return {
            "invoices": [
                i.row(self.day) for i in f.ar if not i.paid and not i.written_off and i.outstanding > EPS
            ]
        }

    def _t_view_trial_balance(self, f: Firm) -> dict:
        bs = self.balance_sheet(f.id)
        return {
            "balance_sheet": {k: round(v, 2) for k, v in bs.items()},
            "income": {k: round(v, 2) for k, v in self.ledger_totals(f.id).items()},
            "inventory_kg": {k: round(v, 3) for k, v in f.inv.items() if v > EPS},
            "cost_per_kg": {k: round(f.unit_cost(k), 4) for k in ITEMS if f.inv[k] > EPS},
        }

    def _t_view_consumer_sales(self, f: Firm, days_back: int = 7) -> dict:
        if days_back < 1:
            raise ToolError("days_back: expected an integer >= 1")
        rows = [s for s in self.consumer_sales if s["shop"] == f.id and s["day"] >= self.day - days_back]
        return {"sales": rows}

    def _t_wait_for_next_day(self, f: Firm) -> dict:
        f.day_over = True
        return {"message": f"day {self.day} closed for {f.id}"}

    # --- market
    def _t_post_listing(
        self, f: Firm, item_id: str, qty: float, asking_price: float, payment_terms_days: int = 30
    ) -> dict:
        _item(item_id)
        _positive("qty", qty)
        _positive("asking_price", asking_price)
        _terms(payment_terms_days)
        listed = sum(
            li.qty for li in self.listings.values() if li.open and li.seller == f.id and li.item == item_id
        )
        if listed + qty > f.inv[item_id] + EPS:
            raise ToolError(
                f"qty: you hold {f.inv[item_id]:.2f} kg of {item_id} and already list {listed:.2f} "
                f"kg; cannot list {qty:g} more"
            )
        li = Listing(self._id("L"), f.id, item_id, float(qty), float(asking_price), int(payment_terms_days))
        self.listings[li.id] = li
        return {"listing_id": li.id}

    def _t_update_listing(
        self, f: Firm, listing_id: str, qty: float | None = None, asking_price: float | None = None
    ) -> dict:
        li = self.listings.get(listing_id)
        if li is None or li.seller != f.id or not li.open:
            raise ToolError(f"listing_id: no open listing {listing_id!r} of yours")
        if qty is None and asking_price is None:
            raise ToolError("update_listing: give qty, asking_price or both")
        if qty is not None:
            _positive("qty", qty)
            others = sum(
                x.qty
                for x in self.listings.values()
                if x.open and x.seller == f.id and x.item == li.item and x.id != li.id
            )
            if others + qty > f.inv[li.item] + EPS:
                raise ToolError(f"qty: you hold {f.inv[li.item]:.2f} kg of {li.item}; cannot list {qty:g} kg")
            li.qty = float(qty)
        if asking_price is not None:
            _positive("asking_price", asking_price)
            li.price = float(asking_price)
        return {"listing_id": li.id, "qty": li.qty, "asking_price": li.price}

    def _t_withdraw_listing(self, f: Firm, listing_id: str) -> dict:
        li = self.listings.get(listing_id)
        if li is None or li.seller != f.id:
            raise ToolError(f"listing_id: no listing {listing_id!r} of yours")
        if not li.open:
            raise ToolError(f"listing_id: listing {listing_id!r} is already closed")
        li.open = False
        for o in self.offers.values():
            if o.listing_id == li.id and o.status == "open":
                o.status = "withdrawn"
        return {"listing_id": li.id}

    def _check_room(self, buyer: Firm, qty: float) -> None:
        cap = self.config.inventory_cap[buyer.role]
        have = self.committed_kg(buyer)
        if have + qty > cap + EPS:
            raise ToolError(
                f"qty: {buyer.id} holds or expects {have:.1f} kg; {qty:g} more passes its cap of {cap:g} kg"
            )

    def _t_make_offer(
        self, f: Firm, listing_id: str, offered_price: float, qty: float, payment_terms_days: int = 30
    ) -> dict:
        li = self.listings.get(listing_id)
        if li is None or not li.open:
            raise ToolError(f"listing_id: no open listing {listing_id!r}")
        if li.seller == f.id:
            raise ToolError("listing_id: that is your own listing")
        _positive("offered_price", offered_price)
        _positive("qty", qty)
        _terms(payment_terms_days)
        if qty > li.qty + EPS:
            raise ToolError(f"qty: the listing has {li.qty:g} kg, asked for {qty:g}")
        self._check_room(f, qty)
        o = Offer(
            self._id("O"),
            li.id,
            f.id,
            li.seller,
            f.id,
            li.item,
            float(qty),
            float(offered_price),
            int(payment_terms_days),
            self.day,
        )
        self.offers[o.id] = o
        return {"offer_id": o.id, "seller": li.seller}

    def _t_propose_deal(
        self,
        f: Firm,
        to: str,
        side: str,
        item_id: str,
        qty: float,
        price: float,
        payment_terms_days: int = 30,
        message: str = "",
    ) -> dict:
        if to not in self.firms or to == f.id:
            raise ToolError(f"to: expected another firm of {list(FIRMS)}, got {to!r}")
        if side not in ("buy", "sell"):
            raise ToolError("side: expected 'buy' (you buy from them) or 'sell' (you sell to them)")
        _item(item_id)
        _positive("qty", qty)
        _positive("price", price)
        _terms(payment_terms_days)
        other = self.firms[to]
        if other.bankrupt:
            raise ToolError(f"to: {to} is bankrupt")
        buyer, seller = (f, other) if side == "buy" else (other, f)
        if side == "buy":
            self._check_room(f, qty)
        o = Offer(
            self._id("O"),
            None,
            buyer.id,
            seller.id,
            f.id,
            item_id,
            float(qty),
            float(price),
            int(payment_terms_days),
            self.day,
        )
        self.offers[o.id] = o
        self._message(
            f, other, message or f"proposal: I {side} {qty:g} kg {item_id} at ${price:.2f}/kg", o.id
        )
        f.counts["negotiations"] = f.counts.get("negotiations", 0) + 1
        other.counts["proposals_received"] = other.counts.get("proposals_received", 0) + 1
        return {"offer_id": o.id}

    def _message(self, f: Firm, to: Firm, text: str, offer_id: str | None = None) -> str:
        mid = self._id("M")
        to.inbox.append(
            {
                "message_id": mid,
                "from": f.id,
                "day": self.day,
                "text": text,
                "offer_id": offer_id,
                "read": False,
            }
        )
        f.counts["messages"] = f.counts.get("messages", 0) + 1
        self._emit("message", sender=f.id, to=to.id, text=text, offer=offer_id)
        return mid

    def _t_send_message(self, f: Firm, to: str, text: str) -> dict:
        if to not in self.firms or to == f.id:
            raise ToolError(f"to: expected another firm of {list(FIRMS)}, got {to!r}")
        if not text.strip():
            raise ToolError("text: expected a non-empty message")
        return {"message_id": self._message(f, self.firms[to], text[:2000])}

    def _t_reject_offer(self, f: Firm, offer_id: str) -> dict:
        o = self.offers.get(offer_id)
        if o is None or o.acceptor != f.id or o.status != "open":
            raise ToolError(f"offer_id: no open offer {offer_id!r} awaiting your answer")
        o.status = "rejected"
        return {"offer_id": o.id}

    def _t_withdraw_offer(self, f: Firm, offer_id: str) -> dict:
        o = self.offers.get(offer_id)
        if o is None or o.proposer != f.id or o.status != "open":
            raise ToolError(f"offer_id: no open offer {offer_id!r} of yours")
        o.status = "withdrawn"
        return {"offer_id": o.id}

    def _t_accept_offer(self, f: Firm, offer_id: str) -> dict:
        o = self.offers.get(offer_id)
        if o is None or o.acceptor != f.id:
            raise ToolError(f"offer_id: no offer {offer_id!r} awaiting your answer")
        if o.status != "open":
            raise ToolError(f"offer_id: offer {offer_id!r} is {o.status}")
        seller, buyer = self.firms[o.seller], self.firms[o.buyer]
        if buyer.bankrupt or seller.bankrupt:
            raise ToolError("offer_id: a party to the offer is bankrupt")
        if o.listing_id is not None:
            li = self.listings[o.listing_id]
            if not li.open or li.qty + EPS < o.qty:
                raise ToolError(f"offer_id: listing {li.id} no longer has {o.qty:g} kg")
        if seller.inv[o.item] + EPS < o.qty:
            raise ToolError(
                f"offer_id: {seller.id} holds {seller.inv[o.item]:.2f} kg of {o.item}, the offer "
                f"needs {o.qty:g}"
            )
        self._check_room(buyer, o.qty)
        reserved = self._take(seller, o.item, o.qty)
        if o.listing_id is not None:
            li = self.listings[o.listing_id]
            li.qty -= o.qty
            if li.qty <= EPS:
                li.open = False
        o.status = "accepted"
        if o.listing_id is None:
            f.counts["proposals_accepted"] = f.counts.get("proposals_accepted", 0) + 1
        u = float(self._ship_rng.random())
        c = self.config
        lost = u < c.ship_loss_prob
        delay = c.ship_delay_days if (not lost and u < c.ship_loss_prob + c.ship_delay_prob) else 0
        s = Shipment(
            self._id("S"),
            seller.id,
            buyer.id,
            o.item,
            o.qty,
            o.price,
            o.terms,
            reserved,
            self.day + c.ship_days + delay,
            lost,
        )
        if c.ship_days + delay == 0:
            s.delivery_day = self.day
        self.shipments.append(s)
        self._emit(
            "deal",
            offer=o.id,
            shipment=s.id,
            seller=s.seller,
            buyer=s.buyer,
            item=s.item,
            qty=s.qty,
            price=s.price,
        )
        if s.delivery_day <= self.day:
            self._deliver(s)
        return {
            "shipment_id": s.id,
            "buyer": s.buyer,
            "seller": s.seller,
            "item_id": s.item,
            "qty": s.qty,
            "price": s.price,
            "ships_on_day": self.day + c.ship_days,
        }

    # --- invoices
    def _t_pay_invoice(self, f: Firm, invoice_id: str) -> dict:
        inv = self.invoices.get(invoice_id)
        if inv is None or inv.payer != f.id:
            raise ToolError(f"invoice_id: no invoice {invoice_id!r} payable by you")
        if inv.paid or inv.outstanding <= EPS:
            raise ToolError(f"invoice_id: invoice {invoice_id!r} is already settled")
        issuer = self.firms[inv.issuer]
        if issuer.bankrupt:
            raise ToolError(f"invoice_id: the issuer {issuer.id} is bankrupt; the invoice is frozen")
        amt = inv.outstanding
        if amt > f.cash + EPS:
            raise ToolError(f"invoice_id: it needs ${amt:.2f}, you have ${f.cash:.2f}")
        f.cash -= amt
        issuer.cash += amt
        inv.paid = True
        self._emit("payment", invoice=inv.id, payer=f.id, issuer=issuer.id, amount=amt)
        return {"invoice_id": inv.id, "paid": round(amt, 2)}

    def _t_return_shipment(self, f: Firm, invoice_id: str, quantity_kg: float, reason: str = "") -> dict:
        inv = self.invoices.get(invoice_id)
        if inv is None or inv.payer != f.id:
            raise ToolError(f"invoice_id: no invoice {invoice_id!r} of goods you bought")
        if self.day - inv.issue_day > self.config.return_window_days:
            raise ToolError(f"invoice_id: the {self.config.return_window_days}-day return window has passed")
        _positive("quantity_kg", quantity_kg)
        left = inv.qty - inv.returned_qty
        if quantity_kg > left + EPS:
            raise ToolError(f"quantity_kg: {left:.2f} kg of that invoice can still be returned")
        seller = self.firms[inv.issuer]
        if seller.bankrupt or inv.written_off:
            raise ToolError("invoice_id: the seller is bankrupt; no returns")
        value = self._take(f, inv.item, quantity_kg)
        credit = quantity_kg * inv.unit_price
        self._put(seller, inv.item, quantity_kg, quantity_kg * inv.unit_cost)
        if inv.paid:
            f.cash += credit
            seller.cash -= credit
        else:
            inv.credited += credit
        inv.returned_qty += quantity_kg
        self._book(f, "return_adjustment", credit - value)
        self._book(seller, "sale_reversal", credit)
        self._book(seller, "cogs_reversal", quantity_kg * inv.unit_cost)
        return {"invoice_id": inv.id, "returned_kg": quantity_kg, "credit": round(credit, 2)}

    # --- production
    def _t_produce_item(self, f: Firm, item_id: str, quantity: float) -> dict:
        if item_id not in GREEN_ITEMS:
            raise ToolError(f"item_id: farmers produce {list(GREEN_ITEMS)}, got {item_id!r}")
        _positive("quantity", quantity)
        c = self.config
        used = f.produced_today.get(item_id, 0.0)
        cap = c.production_cap[item_id]
        if used + quantity > cap + EPS:
            raise ToolError(
                f"quantity: daily cap of {item_id} is {cap:g} kg, {used:g} already produced today"
            )
        self._check_room(f, quantity)
        cost = quantity * c.production_cost[item_id]
        if cost > f.cash + EPS:
            raise ToolError(f"quantity: it costs ${cost:.2f}, you have ${f.cash:.2f}")
        f.cash -= cost
        f.produced_today[item_id] = used + quantity
        ready = self.day + c.production_lag_days
        f.wip.append((ready, item_id, float(quantity), cost))
        return {"item_id": item_id, "kg": quantity, "cost": round(cost, 2), "ready_day": ready}

    def _t_roast(self, f: Firm, green_item_id: str, qty_kg: float) -> dict:
        if green_item_id not in GREEN_ITEMS:
            raise ToolError(f"green_item_id: expected one of {list(GREEN_ITEMS)}, got {green_item_id!r}")
        _positive("qty_kg", qty_kg)
        c = self.config
        if f.roasted_today + qty_kg > c.roast_cap_green_kg + EPS:
            raise ToolError(
                f"qty_kg: roasting cap is {c.roast_cap_green_kg:g} kg of green a day, "
                f"{f.roasted_today:g} used"
            )
        if f.inv[green_item_id] + EPS < qty_kg:
            raise ToolError(f"qty_kg: you hold {f.inv[green_item_id]:.2f} kg of {green_item_id}")
        labor = qty_kg * c.roast_labor[green_item_id]
        if labor > f.cash + EPS:
            raise ToolError(f"qty_kg: labour costs ${labor:.2f}, you have ${f.cash:.2f}")
        value = self._take(f, green_item_id, qty_kg)
        f.cash -= labor
        f.roasted_today += qty_kg
        out_kg = qty_kg * c.roast_yield[green_item_id]
        ready = self.day + c.roast_lag_days
        f.wip.append((ready, RECIPE_OUTPUT[green_item_id], out_kg, value + labor))
        if ready <= self.day:
            f.wip.pop()
            self._put(f, RECIPE_OUTPUT[green_item_id], out_kg, value + labor)
        return {
            "output_item": RECIPE_OUTPUT[green_item_id],
            "kg": out_kg,
            "labor": round(labor, 2),
            "ready_day": ready,
        }

    def _t_set_retail_price(self, f: Firm, item_id: str, price_per_unit: float) -> dict:
        if item_id not in RETAIL_ITEMS:
            raise ToolError(f"item_id: consumers buy {list(RETAIL_ITEMS)}, got {item_id!r}")
        _positive("price_per_unit", price_per_unit)
        f.retail_price[item_id] = float(price_per_unit)
        return {"item_id": item_id, "price": float(price_per_unit)}


def _item(item_id: str) -> None:
    if item_id not in ITEMS:
        raise ToolError(f"item_id: unknown item {item_id!r}; items are {list(ITEMS)}")


def _positive(name: str, v: float) -> None:
    if not (math.isfinite(v) and v > 0):
        raise ToolError(f"{name}: expected a positive number, got {v!r}")


def _terms(days: int) -> None:
    if not 0 <= days <= 90:
        raise ToolError(f"payment_terms_days: expected 0 to 90 days, got {days!r}")
