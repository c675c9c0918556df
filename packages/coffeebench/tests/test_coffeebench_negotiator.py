"""The proactive negotiator makes no call the rules must refuse, and keeps the offers it makes.

Its first builds accepted made-to-order specialty lots before they could exist (the production
lag), retried offers that had failed, accepted more bids on a listing than it still held, and
let its stock promised in open private offers also be listed and sold, so retailers' acceptances
of its offers failed: about 8% of its calls on a 30-day run came back as errors (187 of 2,323
over seeds 0-4), and up to 15% on one seed.
"""

import pytest

from paperworks.coffeebench import EconomyConfig, Episode, Negotiator, reference_agents

# Bound on the share of the negotiator's calls the engine refuses. It acts only on what it can
# see, so a few refusals stay possible for what it cannot (a farmer countering without the
# stock to fill it: 2 in 450 negotiator-days before the fix); 1% leaves room for those while
# the old routine fails it eightfold.
MAX_ERROR_RATE = 0.01


@pytest.fixture(scope="module")
def run_30_days():
    events: list[dict] = []
    ep = Episode(EconomyConfig(days=30), 3, reference_agents(Negotiator()), log=events.append)
    result = ep.play()
    return ep, result, events


def test_negotiator_rejected_call_rate_is_small(run_30_days):
    _, result, events = run_30_days
    m = result.metrics["roaster_A"]
    calls = [e for e in events if e["event"] == "tool_call" and e["firm"] == "roaster_A"]
    assert m["tool_calls"] == len(calls) > 300
    rate = m["tool_errors"] / m["tool_calls"]
    assert rate < MAX_ERROR_RATE, [e["error"] for e in calls if e["status"] == "error"][:5]


def test_counterparties_can_take_every_negotiator_offer(run_30_days):
    """A retailer or farmer accepting one of the negotiator's offers never finds it unfillable."""
    ep, _, events = run_30_days
    offers = ep.economy.offers
    ours = {oid for oid, o in offers.items() if o.proposer == "roaster_A"}
    failed = [
        e
        for e in events
        if e["event"] == "tool_call"
        and e["tool"] == "accept_offer"
        and e["status"] == "error"
        and (e["arguments"] or {}).get("offer_id") in ours
    ]
    assert not failed, failed[:3]
    sold = [o for o in offers.values() if o.proposer == "roaster_A" and o.seller == "roaster_A"]
    assert any(o.status == "accepted" for o in sold)  # its supply offers do trade


def test_specialty_lots_are_taken_once_they_can_exist(run_30_days):
    """Every specialty lot a farmer offers the negotiator (made to order) is accepted, and no
    acceptance is tried before the production lag has passed since the offer."""
    ep, _, events = run_30_days
    lag = ep.config.production_lag_days
    offers = ep.economy.offers
    lots = {
        oid: o
        for oid, o in offers.items()
        if o.item == "green_specialty_kg" and o.proposer.startswith("farmer") and o.buyer == "roaster_A"
    }
    assert len(lots) >= 3
    tries = [
        e
        for e in events
        if e["event"] == "tool_call"
        and e["firm"] == "roaster_A"
        and e["tool"] == "accept_offer"
        and (e["arguments"] or {}).get("offer_id") in lots
    ]
    assert tries and all(e["day"] >= lots[e["arguments"]["offer_id"]].day + lag for e in tries)
    assert all(e["status"] == "ok" for e in tries)
    assert all(o.status in ("accepted", "open") for o in lots.values())
