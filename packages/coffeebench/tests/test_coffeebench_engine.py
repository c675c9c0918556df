import math

import pytest

from paperworks.coffeebench import (
    Economy,
    EconomyConfig,
    Episode,
    HeuristicRoaster,
    Negotiator,
    PassiveAgent,
    ReferenceFarmer,
    ReferenceRetailer,
    passive_net_income,
    reference_agents,
    run_episode,
    shop_sales,
)

SURE = EconomyConfig(ship_loss_prob=0.0, ship_delay_prob=0.0, days=20)


def _day(e: Economy) -> None:
    e.end_day()
    e.begin_day()


def _sell(e: Economy, qty=10.0, price=9.0, terms=2):
    """roaster_A lists roasted coffee, retailer_A bids the ask, roaster_A accepts (ships next day)."""
    lid = e.call(
        "roaster_A", "post_listing", {"item_id": "roasted_coffee_kg", "qty": qty, "asking_price": price}
    )["listing_id"]
    oid = e.call(
        "retailer_A",
        "make_offer",
        {"listing_id": lid, "offered_price": price, "qty": qty, "payment_terms_days": terms},
    )["offer_id"]
    r = e.call("roaster_A", "accept_offer", {"offer_id": oid})
    assert r["status"] == "ok", r
    return r


def test_ledger_identity_every_day_for_every_firm():
    agents = reference_agents(Negotiator(), HeuristicRoaster(undercut=True))
    ep = Episode(EconomyConfig(days=30), 3, agents)
    e = ep.economy
    while (fid := ep.next_actor()) is not None:
        day = e.day
        ep.apply(fid, agents[fid].act(ep.observation(fid)))
        if e.day != day or ep.next_actor() is None:
            for f in e.firms:
                bs = e.balance_sheet(f)
                assert abs(bs["imbalance"]) < 1e-6, (f, bs)
                assert math.isclose(e.ledger_net_income(f), bs["net_income"], abs_tol=1e-6)


@pytest.mark.parametrize("days", [1, 7, 90])
def test_passive_roaster_equals_the_closed_form(days):
    cfg = EconomyConfig(days=days)
    ni = run_episode({"roaster_A": PassiveAgent()}, config=cfg, seed=days).metrics["roaster_A"]["net_income"]
    # by hand for 90 days: 90 x 30 + 30 x 5.88 x (1 - 0.995^90)
    assert abs(ni - passive_net_income(cfg)) < 0.005
    if days == 90:
        assert abs(ni - (-(90 * 30 + 30 * 5.88 * (1 - 0.995**90)))) < 0.005
        assert round(ni) == -2764


def test_spoilage_against_a_hand_calculation():
    e = Economy(SURE, 0)
    e.begin_day()
    for _ in range(3):
        _day(e)
    f = e.firms["roaster_A"]
    assert math.isclose(f.inv["roasted_coffee_kg"], 30 * 0.995**3, rel_tol=1e-12)
    spoiled = -e.ledger_totals("roaster_A")["spoilage"]
    assert math.isclose(spoiled, 30 * 5.88 * (1 - 0.995**3), rel_tol=1e-12)


def test_late_fee_against_a_hand_calculation():
    e = Economy(SURE, 0)
    e.begin_day()
    _sell(e, qty=10.0, price=9.0, terms=2)
    _day(e)  # day 1: delivered, invoice due day 3
    inv = e.firms["retailer_A"].ap[0]
    assert (inv.issue_day, inv.due_day, inv.amount) == (1, 3, 90.0)
    for _ in range(6):  # days 1..6 end; overdue at the ends of days 4, 5, 6
        _day(e)
    assert math.isclose(inv.late_fees, 3 * 90.0 * 0.001, rel_tol=1e-12)
    assert math.isclose(-e.ledger_totals("retailer_A")["interest_expense"], 0.27, rel_tol=1e-9)
    assert math.isclose(e.ledger_totals("roaster_A")["interest_revenue"], 0.27, rel_tol=1e-9)
    r = e.call("retailer_A", "pay_invoice", {"invoice_id": inv.id})
    assert r["status"] == "ok" and math.isclose(r["paid"], 90.27, abs_tol=0.005)
    again = e.call("retailer_A", "pay_invoice", {"invoice_id": inv.id})
    assert again["status"] == "error" and "settled" in again["message"]


def test_return_within_the_window_credits_the_invoice_and_keeps_the_books():
    e = Economy(SURE, 0)
    e.begin_day()
    _sell(e, qty=10.0, price=9.0, terms=30)
    _day(e)
    inv = e.firms["retailer_A"].ap[0]
    r = e.call("retailer_A", "return_shipment", {"invoice_id": inv.id, "quantity_kg": 4.0})
    assert r["status"] == "ok" and r["credit"] == 36.0
    assert math.isclose(inv.outstanding, 54.0)
    for f in e.firms:
        assert abs(e.balance_sheet(f)["imbalance"]) < 1e-9
    too_many = e.call("retailer_A", "return_shipment", {"invoice_id": inv.id, "quantity_kg": 7.0})
    assert too_many["status"] == "error" and "quantity_kg" in too_many["message"]


def test_same_seed_same_run_and_seeds_differ():
    a = run_episode({"roaster_A": Negotiator()}, config=EconomyConfig(days=15), seed=5)
    b = run_episode({"roaster_A": Negotiator()}, config=EconomyConfig(days=15), seed=5)
    c = run_episode({"roaster_A": Negotiator()}, config=EconomyConfig(days=15), seed=6)
    assert a.metrics == b.metrics and a.daily_net_income == b.daily_net_income
    assert a.metrics != c.metrics


@pytest.mark.parametrize(
    ("name", "args", "fragment"),
    [
        ("fly_to_moon", {}, "unknown tool"),
        ("roast", {"green_item_id": "green_coffee_kg", "qty_kg": 1, "colour": "dark"}, "unknown arguments"),
        (
            "post_listing",
            {"item_id": "roasted_coffee_kg", "qty": -3, "asking_price": 9},
            "qty: expected a positive",
        ),
        ("post_listing", {"item_id": "roasted_coffee_kg", "qty": 3, "asking_price": -1}, "asking_price"),
        ("post_listing", {"item_id": "roasted_coffee_kg", "qty": 300, "asking_price": 9}, "qty: you hold"),
        ("post_listing", {"item_id": "roasted_coffee_kg"}, "missing arguments"),
        ("roast", {"green_item_id": "green_coffee_kg", "qty_kg": "lots"}, "expected a number"),
        ("produce_item", {"item_id": "green_coffee_kg", "quantity": 5}, "only for farmers"),
        ("pay_invoice", {"invoice_id": "I999"}, "no invoice"),
        ("make_offer", {"listing_id": "L404", "offered_price": 2, "qty": 1}, "no open listing"),
        ("roast", '{"green_item_id": ', "not valid JSON"),
    ],
)
def test_bad_tool_calls_come_back_as_errors_naming_the_argument(name, args, fragment):
    e = Economy(SURE, 0)
    e.begin_day()
    r = e.call("roaster_A", name, args)
    assert r["status"] == "error" and fragment in r["message"], r


def test_caps_bankruptcy_and_no_tool_call():
    e = Economy(SURE, 0)
    e.begin_day()
    assert (
        e.call("farmer_A", "produce_item", {"item_id": "green_coffee_kg", "quantity": 30})["status"] == "ok"
    )
    over = e.call("farmer_A", "produce_item", {"item_id": "green_coffee_kg", "quantity": 1})
    assert over["status"] == "error" and "daily cap" in over["message"]
    lid = e.call("farmer_A", "post_listing", {"item_id": "green_coffee_kg", "qty": 60, "asking_price": 3})[
        "listing_id"
    ]
    capped = e.call("retailer_A", "make_offer", {"listing_id": lid, "offered_price": 3, "qty": 60})
    assert capped["status"] == "error" and "cap" in capped["message"]  # 25 kg held + 60 > 80
    e.firms["roaster_B"].cash = -1.0
    r = e.call("roaster_B", "view_listings", {})
    assert r["status"] == "error" and e.firms["roaster_B"].bankrupt
    assert "bankrupt" in e.call("roaster_B", "wait_for_next_day", {})["message"]
    ep = Episode(SURE, 0, reference_agents(PassiveAgent()))
    while ep.next_actor() != "roaster_A":
        fid = ep.next_actor()
        ep.apply(fid, ep.agents[fid].act(ep.observation(fid)))
    r = ep.apply("roaster_A", None)
    assert r["status"] == "ok" and "no-op" in r["message"] and ep.economy.firms["roaster_A"].day_over
    for _ in range(ep.config.calls_per_day + 1):  # the day's calls run out
        e.call("roaster_A", "view_listings", {})
    assert "day is over" in e.call("roaster_A", "view_listings", {})["message"]


@pytest.mark.parametrize(
    "bad",
    [
        {"days": 0},
        {"spoilage_per_day": 1.5},
        {"daily_opex": {"farmer": 1.0}},
        {"roast_yield": {"green_coffee_kg": 0.0, "green_specialty_kg": 0.8}},
        {"warp_speed": 9},
    ],
)
def test_malformed_configs_raise(bad):
    with pytest.raises(ValueError, match="EconomyConfig"):
        EconomyConfig().replace(**bad)


def test_bad_programmer_inputs_raise():
    with pytest.raises(ValueError, match="seed"):
        Economy(seed=-1)
    with pytest.raises(ValueError, match="firm_id"):
        Economy().call("roaster_C", "view_listings", {})
    with pytest.raises(ValueError, match="idle_prob"):
        HeuristicRoaster(idle_prob=1.5)


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: passive_net_income("90 days"), "config"),
        (lambda: ReferenceFarmer(markup=-2.0), "markup"),
        (lambda: ReferenceRetailer(ask_kg=0.0), "ask_kg"),
        (lambda: Negotiator(bid=float("nan")), "bid"),
        (lambda: HeuristicRoaster(markup="1.5"), "markup"),
        (lambda: shop_sales({"retailer_A": (-1.0, 5.0)}, **_MARKET), "price"),
        (lambda: shop_sales({"retailer_A": (20.0, 5.0)}, **{**_MARKET, "p_res": 0.0}), "p_res"),
    ],
)
def test_bad_policy_and_demand_arguments_raise_naming_them(make, fragment):
    with pytest.raises((TypeError, ValueError), match=fragment):
        make()


_MARKET = dict(loyalty={}, base=80.0, hi=130.0, floor=5.0, p_res=30.0, festival=1.0, eps=0.0)


def test_shop_sales_against_a_hand_calculation():
    # two shops at $15 and $24, loyalty 1: pbar 19.5, pool 80 x (1 - 19.5/30) = 28;
    # attractiveness 0.5 and 0.2 -> shares 5/7 and 2/7; plus 5 kg of regulars each
    out = shop_sales({"retailer_A": (15.0, 100.0), "retailer_B": (24.0, 6.0)}, **_MARKET)
    assert out["retailer_A"] == pytest.approx(28 * 5 / 7 + 5)
    assert out["retailer_B"] == pytest.approx(6.0)  # 28 x 2/7 + 5 = 13 kg wanted, 6 held
