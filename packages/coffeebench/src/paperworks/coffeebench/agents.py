"""Scripted agents: the paper's reference policies and our behavioural analogues of its findings.

An agent is anything with ``reset(firm_id, rng)`` and ``act(observation) -> call | None``, where a
call is ``{"name": tool, "arguments": {...}}`` and ``None`` is a turn without a tool call (a no-op
that ends the firm's day, as in the paper). The observation is :meth:`Economy.observe`'s status
plus ``last_result``, the previous call's result (``None`` on a day's first turn).

Scripted agents here are generators of one business day's routine (:class:`ScriptedAgent`); each
call costs 30 virtual minutes like an LLM's.

- :class:`PassiveAgent`: never calls a tool (the paper's "do-nothing floor").
- :class:`HeuristicRoaster`: the paper's scripted roaster (markup 1.5 over cost for listings, accepts
  bids on its own listings at or above 1.2 times cost, no messages, commodity only; like the
  authors' routine it skips offers that are not bids on its listings, so it never answers a
  private proposal); ``undercut=True`` makes it undercut the cheapest competing listing down to
  ``floor_markup`` (price war), ``idle_prob=q`` makes it skip a whole day with probability ``q``
  (idle drift).
- :class:`ReactiveTrader`: the heuristic plus answers to what reaches it (reads messages, accepts
  private proposals that pay: a retailer's request for roasted goods at or above the floor, a
  farmer's green at or below the market's cheapest ask); never initiates a negotiation.
- :class:`Negotiator`: the reactive trader plus proactive negotiation: private bids to both
  farmers below their list price, private supply offers to both retailers, and a specialty line
  (made-to-order specialty green from a farmer, roasted and sold to retailers).
- :class:`ReferenceFarmer`, :class:`ReferenceRetailer`: the fixed counterparties (ours; the
  paper's are LLM agents). Besides trading on the marketplace they start proposals of their own,
  so a reactive roaster has something to answer: a farmer holding a surplus offers a lot of
  green to a roaster below its list price, a retailer still short after the marketplace asks a
  roaster for the rest at the cheapest ask it saw. Which roaster is asked is drawn with the
  firm's own seeded generator (never by name), so neither roaster seat is favoured.
"""

from __future__ import annotations

import abc
from collections.abc import Generator
from typing import Any

import numpy as np

from paperworks.core.validate import fraction, nonnegative_float, positive_float

from .config import EconomyConfig

__all__ = [
    "Agent",
    "HeuristicRoaster",
    "Negotiator",
    "PassiveAgent",
    "ReactiveTrader",
    "ReferenceFarmer",
    "ReferenceRetailer",
    "ScriptedAgent",
    "reference_agents",
]

Call = dict[str, Any]
Routine = Generator[Call, dict, None]
_CFG = EconomyConfig()
# cost basis per kg used when a firm holds none of an item (the authors' starter values)
DEFAULT_COST = {
    "green_coffee_kg": 2.0,
    "green_specialty_kg": 10.0,
    "roasted_coffee_kg": (2.0 + 3.0) / 0.85,
    "roasted_specialty_kg": (10.0 + 5.0) / 0.82,
}
ROASTERS = ("roaster_A", "roaster_B")


def call(name: str, **arguments: Any) -> Call:
    return {"name": name, "arguments": arguments}


class Agent(abc.ABC):
    """Protocol of an agent (a base class for convenience)."""

    name = "agent"

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        self.firm_id = firm_id
        self.rng = rng

    @abc.abstractmethod
    def act(self, observation: dict[str, Any]) -> Call | None:
        """One turn: a tool call, or ``None`` for a turn without one."""


class PassiveAgent(Agent):
    """Never calls a tool: every turn is a no-op that ends the day."""

    name = "passive"

    def act(self, observation: dict[str, Any]) -> Call | None:
        return None


class ScriptedAgent(Agent):
    """An agent whose day is a generator: ``obs = yield call(...)``; returning ends the day."""

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        super().reset(firm_id, rng)
        self._day = -1
        self._gen: Routine | None = None

    def act(self, observation: dict[str, Any]) -> Call | None:
        try:
            if observation["day"] != self._day or self._gen is None:
                self._day = observation["day"]
                self._gen = self.routine(observation)
                return next(self._gen)
            return self._gen.send(observation)
        except StopIteration:
            self._gen = None
            return None

    def routine(self, obs: dict) -> Routine:
        return
        yield  # pragma: no cover

    # helpers shared by the routines
    @staticmethod
    def cost(obs: dict, item: str) -> float:
        return float(obs["cost_per_kg"].get(item, DEFAULT_COST[item]))

    @staticmethod
    def room(obs: dict) -> float:
        return float(obs["inventory_cap_kg"] - obs["committed_kg"])

    def pay_due(self, obs: dict) -> Routine:
        for row in list(obs["payables_due"]):
            obs = yield call("pay_invoice", invoice_id=row["invoice_id"])
        return obs

    def relist(self, obs: dict, item: str, price: float, keep: float = 0.0) -> Routine:
        """Keep one listing of ``item`` for what is held (less ``keep``) at ``price`` (updated in place)."""
        held = float(obs["inventory"].get(item, 0.0)) - keep
        mine = [li for li in obs["my_listings"] if li["item_id"] == item]
        if (
            len(mine) == 1
            and abs(mine[0]["qty"] - held) < 0.5
            and abs(mine[0]["asking_price"] - price) < 0.005
        ):
            return obs
        qty = float(np.floor(held * 100) / 100)
        for li in mine[1:] if qty >= 1.0 else mine:
            obs = yield call("withdraw_listing", listing_id=li["listing_id"])
        if qty < 1.0:
            return obs
        if mine:
            obs = yield call(
                "update_listing",
                listing_id=mine[0]["listing_id"],
                qty=qty,
                asking_price=round(float(price), 2),
            )
        else:
            obs = yield call("post_listing", item_id=item, qty=qty, asking_price=round(float(price), 2))
        return obs


class HeuristicRoaster(ScriptedAgent):
    """The paper's scripted roaster: view offers, accept those at >= ``floor_markup`` x cost, pay what
    is due, roast all green held (commodity), list all roasted at ``markup`` x cost, bid the asking
    price of the cheapest green listing for up to ``green_target`` kg held, end the day."""

    name = "heuristic"

    def __init__(
        self,
        markup: float = 1.5,
        floor_markup: float = 1.2,
        *,
        green_target: float = 50.0,
        undercut: bool = False,
        undercut_step: float = 0.25,
        idle_prob: float = 0.0,
    ) -> None:
        self.markup = positive_float(markup, "markup")
        self.floor_markup = positive_float(floor_markup, "floor_markup")
        self.green_target = nonnegative_float(green_target, "green_target")
        self.undercut = bool(undercut)
        self.undercut_step = nonnegative_float(undercut_step, "undercut_step")
        self.idle_prob = fraction(idle_prob, "idle_prob")
        if undercut:
            self.name = "undercutter"
        elif idle_prob > 0:
            self.name = f"idle_q{idle_prob:g}"

    def routine(self, obs: dict) -> Routine:
        if self.idle_prob > 0 and self.rng.random() < self.idle_prob:
            return
        obs = yield from self.answer(obs)
        obs = yield from self.pay_due(obs)
        obs = yield from self.roast_all(obs)
        obs = yield from self.list_roasted(obs)
        obs = yield from self.procure(obs)

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        super().reset(firm_id, rng)
        self._green_ask: tuple[int, float] | None = None  # (day seen, cheapest green ask)

    def answer(self, obs: dict) -> Routine:
        """Accept bids on our own listings that pay (the authors' routine skips any other offer)."""
        obs = yield call("view_offers", direction="incoming")
        offers = sorted(obs["last_result"].get("offers", []), key=lambda o: -o["price"])
        for o in offers:
            if o["seller"] == self.firm_id and not o["private"] and self.pays(obs, o):
                if obs["inventory"].get(o["item_id"], 0.0) + 1e-9 >= o["qty"]:
                    obs = yield call("accept_offer", offer_id=o["offer_id"])
        return obs

    def pays(self, obs: dict, offer: dict) -> bool:
        """A bid worth accepting: at or above ``floor_markup`` x cost, or at or above the asking price
        of our own listing it bids on (a seller honours its posted price)."""
        if offer["price"] >= self.floor_markup * self.cost(obs, offer["item_id"]):
            return True
        ask = {li["listing_id"]: li["asking_price"] for li in obs["my_listings"]}.get(offer["listing_id"])
        return ask is not None and offer["price"] >= ask - 1e-9

    def roast_all(self, obs: dict) -> Routine:
        used = 0.0
        for green in ("green_specialty_kg", "green_coffee_kg"):
            kg = float(obs["inventory"].get(green, 0.0))
            qty = np.floor(min(kg, _CFG.roast_cap_green_kg - used) * 100) / 100
            if qty >= 1.0:
                obs = yield call("roast", green_item_id=green, qty_kg=float(qty))
                used += qty
        return obs

    def list_price(self, obs: dict, item: str) -> float:
        price = self.markup * self.cost(obs, item)
        if self.undercut and self._rival_ask.get(item) is not None:
            price = max(
                self.floor_markup * self.cost(obs, item),
                min(price, self._rival_ask[item] - self.undercut_step),
            )
        return price

    def list_roasted(self, obs: dict) -> Routine:
        self._rival_ask: dict[str, float] = {}
        if self.undercut:
            obs = yield call("view_listings", item_id="roasted_coffee_kg")
            rival = [
                li["asking_price"]
                for li in obs["last_result"].get("listings", [])
                if li["seller"].startswith("roaster")
            ]
            self._rival_ask["roasted_coffee_kg"] = min(rival) if rival else None
        for item in ("roasted_specialty_kg", "roasted_coffee_kg"):
            if obs["inventory"].get(item, 0.0) >= 1.0 or any(
                li["item_id"] == item for li in obs["my_listings"]
            ):
                obs = yield from self.relist(obs, item, self.list_price(obs, item))
        return obs

    def procure(self, obs: dict) -> Routine:
        want = (
            self.green_target
            - obs["inventory"].get("green_coffee_kg", 0.0)
            - obs["inbound_kg"].get("green_coffee_kg", 0.0)
        )
        want = min(want, self.room(obs))
        if want < 1.0:
            return obs
        obs = yield call("view_listings", item_id="green_coffee_kg")
        self.note_green_ask(obs)
        for li in obs["last_result"].get("listings", []):
            if want < 1.0:
                break
            qty = float(np.floor(min(want, li["qty"]) * 100) / 100)
            if qty >= 1.0:
                obs = yield call(
                    "make_offer", listing_id=li["listing_id"], offered_price=li["asking_price"], qty=qty
                )
                if obs["last_result"]["status"] == "ok":
                    want -= qty
        return obs

    def note_green_ask(self, obs: dict) -> None:
        rows = obs["last_result"].get("listings", [])
        if rows:
            self._green_ask = (obs["day"], float(rows[0]["asking_price"]))


class ReactiveTrader(HeuristicRoaster):
    """The heuristic roaster plus replies: reads its messages and answers every offer awaiting it,
    private proposals included. It accepts a bid for its goods at >= ``floor_markup`` x cost with
    the stock to fill it, and a sale of green to it at or below the market's cheapest ask (it looks
    the market up first when it has not seen it today; for specialty green, which nobody lists,
    ``markup`` x the authors' cost of $10) while the lot fits under its cap and keeps green held
    plus inbound within two days of roasting (``2 x green_target``). It never starts a
    negotiation."""

    name = "reactive"

    def answer(self, obs: dict) -> Routine:
        if obs["unread_messages"]:
            obs = yield call("view_messages")
        obs = yield call("view_offers", direction="incoming")
        offers = obs["last_result"].get("offers", [])
        if any(o["buyer"] == self.firm_id and o["item_id"] == "green_coffee_kg" for o in offers) and (
            self._green_ask is None or self._green_ask[0] != obs["day"]
        ):
            obs = yield call("view_listings", item_id="green_coffee_kg")
            self.note_green_ask(obs)
        # our goods: highest bid first; supplies to us: cheapest first (stable: arrival order on ties)
        offers = sorted(offers, key=lambda o: -o["price"] if o["seller"] == self.firm_id else o["price"])
        for o in offers:
            item = o["item_id"]
            if o["seller"] == self.firm_id:
                ok = self.pays(obs, o) and obs["inventory"].get(item, 0.0) + 1e-9 >= o["qty"]
            else:
                held = obs["inventory"].get(item, 0.0) + obs["inbound_kg"].get(item, 0.0)
                ok = (
                    item.startswith("green")
                    and o["price"] <= self.max_green_price(item) + 1e-9
                    and o["qty"] <= self.room(obs) + 1e-9
                    and held + o["qty"] <= 2.0 * max(self.green_target, o["qty"]) + 1e-9
                )
            if ok:
                obs = yield call("accept_offer", offer_id=o["offer_id"])
        return obs

    def max_green_price(self, item: str) -> float:
        """The most it pays for green: the cheapest ask it saw (commodity), else ``markup`` x cost."""
        if item == "green_coffee_kg" and self._green_ask is not None:
            return self._green_ask[1]
        return self.markup * DEFAULT_COST[item]


class Negotiator(ReactiveTrader):
    """Proactive negotiation on top of :class:`ReactiveTrader` (the paper's stronger-model behaviour).

    Every day: a private bid to each farmer for commodity green at ``bid`` x its production cost
    (below their list price; a farmer's counter-offer is accepted by :meth:`answer` when it is at
    most the list price), a private bid for ``specialty_kg`` of specialty green to one farmer, and
    private supply offers of roasted goods to each retailer at ``sell_markup`` x cost (commodity)
    and ``specialty_markup`` x cost (specialty).

    It keeps its word and makes no call the rules must refuse (what it knows of them: the
    observation, its open offers, and that specialty green is made to order):

    - it offers goods privately only at or below its own asking price for them (a retailer who
      sees the listing never takes a dearer private offer of the same goods);
    - its open supply offers are promises: their kilograms are held back from its listing and
      from other sales until they are taken or expire, and a new one is made only from stock
      neither listed nor promised, with room for the spoilage of an offer's three-day life; a
      retailer already holding an open offer of an item from it gets no second one;
    - a bid on its listing is accepted only when the listing still has the kilograms, and any sale
      only from stock not promised elsewhere;
    - a made-to-order lot (specialty green: nobody holds it in stock) is accepted no earlier than
      the production lag after it was offered, when the lot can exist;
    - what it orders counts what is already on order: commodity kilograms in its unanswered bids
      count toward its target, and the specialty lot it asked for is taken before cheaper
      commodity lots fill the room it needs;
    - it has one specialty order at a time with each farmer: no new specialty bid to a farmer while
      its earlier bid, or the farmer's counter to it, is still open (the farmer's stock may be
      the earlier lot, already spoken for);
    - an offer whose acceptance failed is not tried again."""

    name = "negotiator"

    def __init__(
        self,
        *,
        bid: float = 1.2,
        sell_markup: float = 1.4,
        specialty_markup: float = 1.7,
        specialty_kg: float = 10.0,
        supply_kg: float = 12.0,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.bid = positive_float(bid, "bid")
        self.sell_markup = positive_float(sell_markup, "sell_markup")
        self.specialty_markup = positive_float(specialty_markup, "specialty_markup")
        self.specialty_kg = nonnegative_float(specialty_kg, "specialty_kg")
        self.supply_kg = nonnegative_float(supply_kg, "supply_kg")

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        super().reset(firm_id, rng)
        self._failed: set[str] = set()  # offers whose acceptance the engine refused
        self._promises: list[dict] = []  # our open private sell offers (rows of view_offers)
        self._spec_open: set[str] = set()  # farmers with an open specialty deal with us
        self._bids_open = 0.0  # kg of commodity green in our unanswered bids
        self._rival_ask: dict[str, float | None] = {}

    def routine(self, obs: dict) -> Routine:
        obs = yield from self.answer(obs)
        obs = yield from self.pay_due(obs)
        obs = yield from self.roast_all(obs)
        obs = yield from self.offer_supply(obs)
        obs = yield from self.list_roasted(obs)
        obs = yield from self.negotiate_green(obs)

    def promised(self, item: str) -> float:
        """kg of ``item`` promised in our open supply offers."""
        return sum(p["qty"] for p in self._promises if p["item_id"] == item)

    def answer(self, obs: dict) -> Routine:
        if obs["unread_messages"]:
            obs = yield call("view_messages")
        obs = yield call("view_offers", direction="all")  # what awaits us, and our own open offers
        rows = obs["last_result"].get("offers", [])
        self._promises = [o for o in rows if o["from"] == self.firm_id and o["seller"] == self.firm_id]
        self._spec_open = {
            o["seller"] for o in rows if o["buyer"] == self.firm_id and o["item_id"] == "green_specialty_kg"
        }
        offers = [o for o in rows if o["from"] != self.firm_id and o["offer_id"] not in self._failed]
        if any(o["buyer"] == self.firm_id and o["item_id"] == "green_coffee_kg" for o in offers) and (
            self._green_ask is None or self._green_ask[0] != obs["day"]
        ):
            obs = yield call("view_listings", item_id="green_coffee_kg")
            self.note_green_ask(obs)
        self._bids_open = sum(  # our commodity bids the farmers have not answered yet
            o["qty"] for o in rows if o["from"] == self.firm_id and o["item_id"] == "green_coffee_kg"
        )
        # our goods: highest bid first; supplies to us: a made-to-order lot we asked for first (it
        # is ours alone and this is its last day), then cheapest first (stable: arrival order on ties)
        offers = sorted(
            offers,
            key=lambda o: (
                (0, -o["price"])
                if o["seller"] == self.firm_id
                else (1, o["item_id"] != "green_specialty_kg", o["price"])
            ),
        )
        for o in offers:
            item = o["item_id"]
            if o["seller"] == self.firm_id:
                unpromised = obs["inventory"].get(item, 0.0) - self.promised(item)
                ok = self.pays(obs, o) and unpromised + 1e-9 >= o["qty"]
                if ok and not o["private"]:
                    left = {li["listing_id"]: li["qty"] for li in obs["my_listings"]}
                    ok = left.get(o["listing_id"], 0.0) + 1e-9 >= o["qty"]
            else:
                held = obs["inventory"].get(item, 0.0) + obs["inbound_kg"].get(item, 0.0)
                ok = (
                    item.startswith("green")
                    and o["price"] <= self.max_green_price(item) + 1e-9
                    and o["qty"] <= self.room(obs) + 1e-9
                    and held + o["qty"] <= 2.0 * max(self.green_target, o["qty"]) + 1e-9
                    and (item != "green_specialty_kg" or obs["day"] >= o["day"] + _CFG.production_lag_days)
                )
            if ok:
                obs = yield call("accept_offer", offer_id=o["offer_id"])
                if obs["last_result"]["status"] != "ok":
                    self._failed.add(o["offer_id"])
                elif item == "green_specialty_kg":
                    self._spec_open.discard(o["seller"])
        return obs

    def offer_supply(self, obs: dict) -> Routine:
        keep = (1.0 - _CFG.spoilage_per_day) ** 2  # an offer made today can be taken after two nights
        for item, mk in (
            ("roasted_coffee_kg", self.sell_markup),
            ("roasted_specialty_kg", self.specialty_markup),
        ):
            price = round(mk * self.cost(obs, item), 2)
            if price > round(self.list_price(obs, item), 2) + 1e-9:
                continue  # dearer than our own listing of the same goods: no buyer takes it
            mine = sum(li["qty"] for li in obs["my_listings"] if li["item_id"] == item)
            free = keep * float(obs["inventory"].get(item, 0.0)) - self.promised(item) - mine
            for shop in ("retailer_A", "retailer_B"):
                if any(p["buyer"] == shop and p["item_id"] == item for p in self._promises):
                    continue  # our open offer to this shop still stands
                qty = float(
                    np.floor(min(free, self.supply_kg if item == "roasted_coffee_kg" else 5.0) * 100) / 100
                )
                if qty < 1.0:
                    break
                obs = yield call(
                    "propose_deal",
                    to=shop,
                    side="sell",
                    item_id=item,
                    qty=qty,
                    price=price,
                    message=f"Supply offer: {qty:g} kg {item} at ${price}/kg, net 30",
                )
                free -= qty
                if obs["last_result"]["status"] == "ok":
                    oid = obs["last_result"]["offer_id"]
                    self._promises.append({"offer_id": oid, "buyer": shop, "item_id": item, "qty": qty})
        return obs

    def relist(self, obs: dict, item: str, price: float, keep: float = 0.0) -> Routine:
        # hold back what our open supply offers promise (private offers reserve nothing in the engine)
        return (yield from super().relist(obs, item, price, keep=keep + self.promised(item)))

    def negotiate_green(self, obs: dict) -> Routine:
        want = (
            self.green_target
            - obs["inventory"].get("green_coffee_kg", 0.0)
            - obs["inbound_kg"].get("green_coffee_kg", 0.0)
            - self._bids_open  # still on order: their counters come back tomorrow
        )
        want = min(want, self.room(obs) - self.specialty_kg)
        price = round(self.bid * DEFAULT_COST["green_coffee_kg"], 2)
        for farmer in ("farmer_A", "farmer_B"):
            qty = float(np.floor(min(want / 2, 30.0) * 100) / 100)
            if qty >= 1.0:
                obs = yield call(
                    "propose_deal",
                    to=farmer,
                    side="buy",
                    item_id="green_coffee_kg",
                    qty=qty,
                    price=price,
                    message=f"Standing order: {qty:g} kg green at ${price}/kg, net 30?",
                )
        spec = obs["inventory"].get("green_specialty_kg", 0.0) + obs["inbound_kg"].get(
            "green_specialty_kg", 0.0
        )
        farmer = ("farmer_A", "farmer_B")[obs["day"] % 2]
        if (
            self.specialty_kg > 0
            and spec < self.specialty_kg
            and self.room(obs) >= self.specialty_kg
            and farmer not in self._spec_open
        ):
            obs = yield call(
                "propose_deal",
                to=farmer,
                side="buy",
                item_id="green_specialty_kg",
                qty=self.specialty_kg,
                price=round(self.bid * DEFAULT_COST["green_specialty_kg"], 2),
                message="Specialty lot to order, please",
            )
        return obs


class ReferenceFarmer(ScriptedAgent):
    """Fixed farmer (ours; the paper's farmers are LLMs). Every day, in this order:

    1. answers the offers awaiting it, highest price first (arrival order on ties): accepts bids
       at >= ``floor`` x production cost it has the stock for, rejects lower ones and counters a
       lower private bid at the floor, and produces specialty green to a private order;
    2. pays what is due; produces commodity green up to ``target`` kg (stock plus production under
       way, at most the daily cap); lists all commodity green held at ``markup`` x cost;
    3. with at least ``surplus_kg`` of commodity green held and no private sale of its own still
       open, proposes ``deal_kg`` of it privately to one roaster, drawn at random, at the midpoint
       of its floor and list prices (a discount to move stock).

    Defaults: list at 2 x cost ($4/kg, inside the authors' stated wholesale band of $2-5/kg),
    floor 1.5 x cost ($3/kg): a farmer selling about half of the roasters' green needs more than
    $1.25/kg over cost to cover its $25 daily opex (README, Fidelity)."""

    name = "reference_farmer"

    def __init__(
        self,
        markup: float = 2.0,
        floor: float = 1.5,
        target: float = 100.0,
        *,
        surplus_kg: float = 80.0,
        deal_kg: float = 20.0,
    ) -> None:
        self.markup = positive_float(markup, "markup")
        self.floor = positive_float(floor, "floor")
        self.target = nonnegative_float(target, "target")
        self.surplus_kg = positive_float(surplus_kg, "surplus_kg")
        self.deal_kg = positive_float(deal_kg, "deal_kg")

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        super().reset(firm_id, rng)
        self._made: set[str] = set()

    def routine(self, obs: dict) -> Routine:
        c = _CFG.production_cost
        if obs["unread_messages"]:
            obs = yield call("view_messages")
        obs = yield call("view_offers", direction="all")
        rows = obs["last_result"].get("offers", [])
        pending_sale = any(o["from"] == self.firm_id and o["seller"] == self.firm_id for o in rows)
        for o in sorted(rows, key=lambda o: -o["price"]):
            if o["seller"] != self.firm_id or o["from"] == self.firm_id:
                continue
            item, floor = o["item_id"], self.floor * c.get(o["item_id"], 0.0)
            if o["price"] + 1e-9 < floor:
                obs = yield call("reject_offer", offer_id=o["offer_id"])
                if o["private"]:
                    obs = yield call(
                        "propose_deal",
                        to=o["buyer"],
                        side="sell",
                        item_id=item,
                        qty=o["qty"],
                        price=round(floor, 2),
                        message=f"Best I can do: ${floor:.2f}/kg",
                    )
                    obs = yield from self.make_to_order(obs, o)  # the counter is an offer to sell
                continue
            if obs["inventory"].get(item, 0.0) + 1e-9 >= o["qty"]:
                obs = yield call("accept_offer", offer_id=o["offer_id"])
            elif o["private"]:
                obs = yield from self.make_to_order(obs, o)
        obs = yield from self.pay_due(obs)
        item = "green_coffee_kg"
        pipeline = obs["inventory"].get(item, 0.0) + sum(
            w["kg"] for w in obs["in_production"] if w["item_id"] == item
        )
        qty = float(np.floor(min(_CFG.production_cap[item], self.target - pipeline, self.room(obs))))
        if qty >= 1.0:
            obs = yield call("produce_item", item_id=item, quantity=qty)
        obs = yield from self.relist(obs, item, self.markup * c[item])
        held = float(obs["inventory"].get(item, 0.0))
        if held >= self.surplus_kg and not pending_sale:
            roaster = ROASTERS[int(self.rng.integers(len(ROASTERS)))]
            price = round(0.5 * (self.markup + self.floor) * c[item], 2)
            qty = float(np.floor(min(self.deal_kg, held) * 100) / 100)
            obs = yield call(
                "propose_deal",
                to=roaster,
                side="sell",
                item_id=item,
                qty=qty,
                price=price,
                message=f"Surplus lot: {qty:g} kg green at ${price}/kg, below my list price",
            )

    def make_to_order(self, obs: dict, offer: dict) -> Routine:
        """Specialty green is made to order: produce what a private order (or our counter to it)
        needs beyond stock and production under way, once per order."""
        item = offer["item_id"]
        if item != "green_specialty_kg" or offer["offer_id"] in self._made:
            return obs
        self._made.add(offer["offer_id"])
        have = obs["inventory"].get(item, 0.0) + sum(
            w["kg"] for w in obs["in_production"] if w["item_id"] == item
        )
        need = min(offer["qty"] - have, _CFG.production_cap[item])
        if need >= 1.0 and need <= self.room(obs):
            obs = yield call("produce_item", item_id=item, quantity=float(need))
        return obs


class ReferenceRetailer(ScriptedAgent):
    """Fixed retailer (ours; the paper's retailers are LLMs). Every day, in this order:

    1. reads its recent consumer sales; accepts private supply offers priced at or below the
       cheapest list price it saw that fit its need (cheapest first, arrival order on ties);
    2. pays what is due; prices each roasted item it holds at ``markup`` x cost within [the
       default price, 0.9 x the reservation price];
    3. restocks to ``cover_days`` days of its recent sales (at least ``min_stock`` kg of commodity:
       sales are censored by stock-outs) by bidding the ask on the cheapest listings;
    4. still short of commodity by ``short_kg`` or more after that, with no private request of its
       own still open, asks one roaster, drawn at random, privately for the rest (at most
       ``ask_kg``) at the cheapest ask it saw."""

    name = "reference_retailer"

    def __init__(
        self,
        markup: float = 2.0,
        cover_days: float = 3.0,
        min_stock: float = 35.0,
        *,
        short_kg: float = 5.0,
        ask_kg: float = 20.0,
    ) -> None:
        self.markup = positive_float(markup, "markup")
        self.cover_days = nonnegative_float(cover_days, "cover_days")
        self.min_stock = nonnegative_float(min_stock, "min_stock")
        self.short_kg = positive_float(short_kg, "short_kg")
        self.ask_kg = positive_float(ask_kg, "ask_kg")

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        super().reset(firm_id, rng)
        self._best_ask = {
            "roasted_coffee_kg": 1.5 * DEFAULT_COST["roasted_coffee_kg"],
            "roasted_specialty_kg": 40.0,
        }
        self._sold = {"roasted_coffee_kg": 20.0, "roasted_specialty_kg": 4.0}

    def need(self, obs: dict, item: str) -> float:
        lo, hi = (
            (self.min_stock, 0.75 * obs["inventory_cap_kg"]) if item == "roasted_coffee_kg" else (6.0, 20.0)
        )
        target = min(max(self.cover_days * self._sold[item], lo), hi)
        have = obs["inventory"].get(item, 0.0) + obs["inbound_kg"].get(item, 0.0)
        return min(target - have, self.room(obs))

    def routine(self, obs: dict) -> Routine:
        obs = yield call("view_consumer_sales", days_back=4)
        sales = obs["last_result"].get("sales", [])
        n = min(4, obs["day"])
        for item in self._sold:
            if n > 0:
                per_day = sum(s["qty"] for s in sales if s["item"] == item and s["day"] >= obs["day"] - 4) / n
                self._sold[item] = max(per_day, 1.0 if item == "roasted_specialty_kg" else 5.0)
        if obs["unread_messages"]:
            obs = yield call("view_messages")
        obs = yield call("view_offers", direction="all")
        rows = obs["last_result"].get("offers", [])
        pending_ask = any(o["from"] == self.firm_id and o["private"] for o in rows)
        for o in sorted(rows, key=lambda o: o["price"]):
            if (
                o["buyer"] == self.firm_id
                and o["from"] != self.firm_id
                and o["price"] <= self._best_ask[o["item_id"]] + 1e-9
                and o["qty"] <= self.need(obs, o["item_id"]) + 1e-9
            ):
                obs = yield call("accept_offer", offer_id=o["offer_id"])
        obs = yield from self.pay_due(obs)
        for item in ("roasted_coffee_kg", "roasted_specialty_kg"):
            held = obs["inventory"].get(item, 0.0)
            if held > 0:
                lo = _CFG.default_retail_price[item]
                price = round(
                    min(max(self.markup * self.cost(obs, item), lo), 0.9 * _CFG.reservation_price[item]), 2
                )
                if abs(price - obs["retail_prices"].get(item, 0.0)) >= 0.5:
                    obs = yield call("set_retail_price", item_id=item, price_per_unit=price)
        for item in ("roasted_coffee_kg", "roasted_specialty_kg"):
            want = self.need(obs, item)
            if want < 1.0:
                continue
            obs = yield call("view_listings", item_id=item)
            rows = obs["last_result"].get("listings", [])
            if rows:
                self._best_ask[item] = rows[0]["asking_price"]
            for li in rows:
                qty = float(np.floor(min(want, li["qty"]) * 100) / 100)
                if qty < 1.0:
                    break
                obs = yield call(
                    "make_offer", listing_id=li["listing_id"], offered_price=li["asking_price"], qty=qty
                )
                if obs["last_result"]["status"] == "ok":
                    want -= qty
            if item == "roasted_coffee_kg" and want >= self.short_kg and not pending_ask:
                roaster = ROASTERS[int(self.rng.integers(len(ROASTERS)))]
                qty = float(np.floor(min(want, self.ask_kg) * 100) / 100)
                price = round(float(self._best_ask[item]), 2)
                obs = yield call(
                    "propose_deal",
                    to=roaster,
                    side="buy",
                    item_id=item,
                    qty=qty,
                    price=price,
                    message=f"Short of stock: could you supply {qty:g} kg at ${price}/kg, net 30?",
                )


def reference_agents(roaster_A: Agent | None = None, roaster_B: Agent | None = None) -> dict[str, Agent]:
    """The six firms' agents: reference farmers and retailers, heuristic roasters unless given."""
    return {
        "farmer_A": ReferenceFarmer(),
        "farmer_B": ReferenceFarmer(),
        "roaster_A": roaster_A if roaster_A is not None else HeuristicRoaster(),
        "roaster_B": roaster_B if roaster_B is not None else HeuristicRoaster(),
        "retailer_A": ReferenceRetailer(),
        "retailer_B": ReferenceRetailer(),
    }
