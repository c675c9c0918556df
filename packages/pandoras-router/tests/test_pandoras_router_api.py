"""Public API: errors at the boundary, the router object, the RouterBench loader, baselines."""

import csv

import numpy as np
import pytest

from paperworks.pandoras_router import (
    CheapValueEstimator,
    PandorasBidder,
    PandorasRouter,
    RouteLLMRouter,
    exhaustive,
    load_routerbench,
    make_domain,
    pandoras_route,
    random_subset,
    reservation_value,
)


def _inputs(n=50, k=4, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, k))
    s = rng.uniform(0.2, 1.0, k)
    tau = rng.uniform(0.05, 0.3, k)
    cost = rng.uniform(0.01, 0.1, k)
    y = m + rng.normal(size=(n, k))
    return m, s, tau, cost, y


@pytest.mark.parametrize(
    ("field", "bad", "match"),
    [
        ("cost", np.array([0.1, -0.1, 0.1, 0.1]), "cost: expected non-negative"),
        ("cost", np.array([0.1, np.nan, 0.1, 0.1]), "cost: expected finite"),
        ("s", np.array([0.1, 0.0, 0.1, 0.1]), "s: expected strictly positive"),
        ("s", np.array([0.1, 0.2]), r"s: expected shape \(4,\) or \(50, 4\)"),
        ("tau", np.ones((3, 4)), r"tau: expected shape"),
        ("y", np.ones((50, 3)), r"readings: expected shape \(50, 4\)"),
    ],
)
def test_bad_input_names_the_argument(field, bad, match):
    m, s, tau, cost, y = _inputs()
    args = {"s": s, "tau": tau, "cost": cost, "y": y}
    args[field] = bad
    with pytest.raises(ValueError, match=match):
        pandoras_route(m, args["s"], args["tau"], args["cost"], args["y"])


def test_empty_and_malformed_specialists():
    with pytest.raises(ValueError, match="specialists: expected at least one"):
        PandorasRouter([], tau=[], inspection_cost=[])
    with pytest.raises(ValueError, match=r"tau: expected one value per specialist"):
        PandorasRouter(["a", "b"], tau=[0.1], inspection_cost=[0.1, 0.1])
    with pytest.raises(ValueError, match="m: expected a non-empty array"):
        pandoras_route(np.zeros((3, 0)), np.zeros(0) + 1, np.zeros(0), np.zeros(0), np.zeros((3, 0)))
    with pytest.raises(ValueError, match="m: expected a 2-d array"):
        pandoras_route(np.zeros(3), 1.0, 0.1, 0.1, np.zeros(3))
    with pytest.raises(ValueError, match="sigma: expected strictly positive"):
        reservation_value(np.zeros(2), np.array([1.0, -1.0]), np.ones(2))


def test_router_object_with_callables_matches_arrays_and_audits():
    m, s, tau, cost, y = _inputs()
    calls = []

    def expensive(queries, rows, cols):
        calls.append(rows.size)
        return y[rows, cols]

    router = PandorasRouter(
        list("abcd"), tau=tau, inspection_cost=cost, cheap=lambda q: (m, s), expensive=expensive
    )
    res = router.route(queries=None)
    ref = pandoras_route(m, s, tau, cost, y)
    assert np.array_equal(res.choice, ref.choice)
    assert np.array_equal(res.inspected, ref.inspected)
    assert sum(calls) == int(ref.inspected.sum())
    i = int(np.argmax(res.n_inspections))
    audit = res.audit(i)
    assert len(audit["inspections"]) == res.n_inspections[i]
    assert audit["estimation_cost"] == pytest.approx(sum(st["cost"] for st in audit["inspections"]))
    for st in audit["inspections"]:  # each inspection was worth it when made: r_lo < alternative < r
        assert st["lower_reservation_value"] < st["best_alternative"] < st["reservation_value"]
        assert st["value_of_information"] > 0
    assert audit["routed_to"] in "abcd"
    with pytest.raises(ValueError, match="expensive estimator must return"):
        PandorasRouter(
            list("abcd"),
            tau=tau,
            inspection_cost=cost,
            cheap=lambda q: (m, s),
            expensive=lambda q, r, c: np.zeros(1),
        ).route()


def test_free_inspection_means_exhaustive_and_prohibitive_means_cheap():
    m, s, tau, _, y = _inputs()
    free = pandoras_route(m, s, tau, np.zeros(4), y)
    assert free.inspected.all()
    assert np.array_equal(free.choice, exhaustive(m, s, tau, np.zeros(4), y).choice)
    dear = pandoras_route(m, s, tau, np.full(4, 100.0), y)
    assert not dear.inspected.any()
    assert np.array_equal(dear.choice, m.argmax(axis=1))


def test_random_subset_matches_budget():
    m, s, tau, cost, y = _inputs()
    counts = np.random.default_rng(3).integers(0, 5, m.shape[0])
    res = random_subset(m, s, tau, cost, y, counts, np.random.default_rng(0))
    assert np.array_equal(res.n_inspections, counts)


def test_estimators_recover_signal():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    W = rng.normal(size=(5, 2))
    V = X @ W + 0.1 * rng.normal(size=(400, 2))
    est = CheapValueEstimator(alpha=1e-3).fit(X, V)
    assert np.allclose(est.sigma_, 0.1, rtol=0.15)
    labels = (X[:, 0] > 0).astype(int)
    clf = RouteLLMRouter(alpha=0.1).fit(X, labels)
    assert (clf.route(X, 0.5) == labels).mean() > 0.95
    assert clf.predict_proba(X).shape == (400, 2)
    with pytest.raises(ValueError, match="y: Only binary classification is supported"):
        clf.fit(X, np.arange(400) % 3)


def test_bidder_rules():
    m = np.array([0.0, 0.0, 0.0])
    s = np.full(3, 0.5)
    price = np.array([-5.0, 0.1, 5.0])  # far below, near, far above the belief
    y = np.array([1.0, 1.0, 1.0])
    bid = PandorasBidder(tau=0.1, inspection_cost=0.01).decide(m, s, price, y)
    assert bid.inspected.tolist() == [False, True, False]
    assert bid.accept.tolist() == [True, True, False]
    with pytest.raises(ValueError, match="strategy"):
        PandorasBidder(0.1, 0.01, strategy="greedy")


def test_routerbench_loader_reads_the_published_layout(tmp_path):
    path = tmp_path / "routerbench_0shot.csv"
    header = [
        "sample_id",
        "prompt",
        "eval_name",
        "gpt-4",
        "gpt-4|model_response",
        "gpt-4|total_cost",
        "mistral-7b",
        "mistral-7b|model_response",
        "mistral-7b|total_cost",
        "oracle_model_to_route_to",
    ]
    rows = [
        ["mmlu.1", '["What is 2+2?"]', "mmlu", "1.0", "4", "0.0031", "0.0", "5", "0.0001", "gpt-4"],
        ["gsm8k.7", "Tom has 3 apples...", "gsm8k", "1.0", "6", "0.0042", "1.0", "6", "0.0002", "mistral-7b"],
        [
            "mmlu.2",
            "['Capital of France?', 'Answer briefly']",
            "mmlu",
            "0.0",
            "x",
            "0.002",
            "1.0",
            "Paris",
            "0.0001",
            "mistral-7b",
        ],
    ]
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([header, *rows])
    data = load_routerbench(path, inspect_price=0.001)
    assert data.specialists == ("gpt-4", "mistral-7b")
    assert data.texts[0] == "What is 2+2?"
    assert data.texts[2] == "Capital of France? Answer briefly"
    assert data.quality.tolist() == [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    assert data.price[1].tolist() == [0.0042, 0.0002]
    assert data.topic.tolist() == [1, 0, 1]
    bad = tmp_path / "bad.csv"
    bad.write_text("sample_id,prompt\n1,hi\n")
    with pytest.raises(ValueError, match="eval_name"):
        load_routerbench(bad, inspect_price=0.001)
    with pytest.raises(FileNotFoundError):
        load_routerbench(tmp_path / "missing.csv", inspect_price=0.001)


def test_make_domain_shapes_and_errors():
    d = make_domain("multi_llm", 30, 0)
    assert d.quality.shape == (30, 11) and len(d.texts) == 30
    assert ((d.quality > 0) & (d.quality < 1)).all() and (d.price > 0).all()
    with pytest.raises(ValueError, match="name: expected one of"):
        make_domain("vision", 30, 0)
