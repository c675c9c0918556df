import networkx as nx
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from paperworks.smnc_dag import SMNC, RelationCues, SMNCConfig, check_data, enforce_acyclic
from paperworks.smnc_dag.data import (
    simulate_dag,
    simulate_linear_sem,
    simulate_nonlinear_sem,
    simulate_weights,
)
from paperworks.smnc_dag.metrics import StructureMetrics, count_accuracy

FAST = {"T": 4, "s": (1.0, 0.9, 0.8, 0.7), "warm_iter": 300, "max_iter": 600}


def _linear(d=6, n=500, seed=0):
    rng = np.random.default_rng(seed)
    B = simulate_dag(d, 1, "ER", rng)
    W = simulate_weights(B, rng)
    return B, simulate_linear_sem(W, n, rng)


def test_exact_recovery_on_easy_linear_case_and_acyclic_output():
    B, X = _linear()
    est = SMNC(**FAST).fit(X)
    assert count_accuracy(B, est.graph_)["shd"] == 0
    g = est.to_networkx()
    assert nx.is_directed_acyclic_graph(g)
    assert set(g.edges()) == {tuple(map(int, e)) for e in np.argwhere(B)}
    assert est.adjacency_.shape == est.gate_.shape == (6, 6)
    assert est.predict(X).shape == X.shape


def test_predict_centres_by_the_training_mean():
    _, X = _linear(seed=2)
    X = X + 5.0  # a mean far from 0
    est = SMNC(**FAST).fit(X)
    full = est.predict(X)
    np.testing.assert_allclose(full[:6], est.predict(X[:6]), rtol=1e-12)
    np.testing.assert_allclose(est.predict(X[:1]), full[:1], rtol=1e-12)  # one row is enough
    np.testing.assert_allclose(full, (X - est.mean_) @ est.adjacency_ + est.mean_, rtol=1e-12)


def test_sklearn_estimator_contract():
    est = SMNC(lr=0.03, warm_iter=10)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin is not est
    assert est.set_params(T=2).T == 2
    _, X = _linear(seed=1)
    est.set_params(max_iter=10, warm_iter=10).fit(X, None)
    assert est.n_features_in_ == 6 and not hasattr(clone(est), "graph_")
    with pytest.raises(ValueError, match=r"^lr: "):
        SMNC(lr=-1.0).fit(X)  # validated at fit, as scikit-learn does


def test_sklearn_check_estimator():
    fast = SMNC(T=2, s=(1.0, 0.9), warm_iter=15, max_iter=15)
    failed = check_estimator(fast, on_fail=None)
    bad = [f"{r['check_name']}: {r['exception']}" for r in failed if r["status"] == "failed"]
    assert not bad, bad
    assert sum(r["status"] == "passed" for r in failed) > 30


def test_seeded_determinism_and_factorisations():
    _, X = _linear(seed=1)
    a = SMNC(random_state=3, factorization="lowrank", **FAST).fit(X).adjacency_
    b = SMNC(random_state=3, factorization="lowrank", **FAST).fit(X).adjacency_
    np.testing.assert_array_equal(a, b)
    for fact in ("none", "full"):
        est = SMNC(factorization=fact, closure="product", **FAST).fit(X)
        assert nx.is_directed_acyclic_graph(est.to_networkx())


def test_graph_is_acyclic_even_when_threshold_leaves_a_cycle():
    B = np.zeros((3, 3), bool)
    B[0, 1] = B[1, 2] = B[2, 0] = True
    w = np.array([[0, 2.0, 0], [0, 0, 1.5], [0.4, 0, 0]])
    out = enforce_acyclic(B, w)
    assert nx.is_directed_acyclic_graph(nx.DiGraph(out)) and not out[2, 0] and out[0, 1] and out[1, 2]
    assert B[2, 0]  # the input is not modified


def test_ancestry_cues_act_on_reachability_not_edges():
    rng = np.random.default_rng(4)
    W = np.zeros((4, 4))
    W[0, 1], W[1, 2], W[2, 3] = 1.2, -1.0, 1.5  # chain 0 -> 1 -> 2 -> 3
    X = simulate_linear_sem(W, 500, rng)
    est = SMNC(**FAST).fit(X, ancestry=[(0, 3)])
    rho = 1 - np.exp(-np.exp(est.closure_logits_))
    assert not est.graph_[0, 3]  # the cue is not turned into a direct edge
    assert rho[0, 3] > 0.5 > rho[3, 0]  # reachable forward, backward excluded
    assert count_accuracy(W, est.graph_)["shd"] == 0


def test_mlp_variant_runs_and_is_acyclic():
    rng = np.random.default_rng(0)
    B = simulate_dag(4, 1, "ER", rng)
    X = simulate_nonlinear_sem(B, 100, rng)
    est = SMNC(model="mlp", T=1, warm_iter=5, max_iter=5).fit(X)
    assert nx.is_directed_acyclic_graph(est.to_networkx())
    assert est.predict(X).shape == X.shape


def test_exports_to_networkx_and_causallearn():
    _, X = _linear()
    est = SMNC(**FAST).fit(X)
    g = est.to_networkx()
    assert nx.is_directed_acyclic_graph(g) and set(g.nodes) == set(range(6))
    assert all(abs(g.edges[e]["weight"]) > 0.3 for e in g.edges)
    cl = est.to_causallearn()
    from causallearn.graph.GeneralGraph import GeneralGraph

    assert isinstance(cl, GeneralGraph)
    nodes = cl.get_nodes()
    assert [n.get_name() for n in nodes] == [f"X{i + 1}" for i in range(6)]
    got = {(i, j) for i in range(6) for j in range(6) if cl.is_directed_from_to(nodes[i], nodes[j])}
    assert got == {tuple(map(int, e)) for e in np.argwhere(est.graph_)}
    with pytest.raises(ValueError, match=r"^node_names: "):
        est.to_causallearn(node_names=["a"] * 6)


def test_bad_input_errors():
    _, X = _linear()
    with pytest.raises(ValueError, match=r"NaN"):
        Xn = X.copy()
        Xn[3, 2] = np.nan
        SMNC().fit(Xn)
    with pytest.raises(ValueError, match=r"constant"):
        Xc = X.copy()
        Xc[:, 1] = 4.0
        SMNC().fit(Xc)
    with pytest.raises(ValueError, match=r"duplicates column 0"):
        Xd = X.copy()
        Xd[:, 3] = Xd[:, 0]
        SMNC().fit(Xd)
    with pytest.raises(ValueError, match=r"sample"):
        SMNC().fit(X[:5])
    with pytest.raises(ValueError, match=r"2-d"):
        check_data(X[:, 0])
    with pytest.raises(ValueError, match=r"cycle"):
        SMNC().fit(X, ancestry=[(0, 1), (1, 2), (2, 0)])
    with pytest.raises(ValueError, match=r"contradiction"):
        RelationCues.from_pairs(6, ancestry=[(0, 1), (1, 2)], forbidden=[(0, 2)])
    with pytest.raises(ValueError, match=r"\[0, 5\]"):
        SMNC().fit(X, ancestry=[(0, 9)])
    with pytest.raises(ValueError, match=r"^closure: "):
        SMNCConfig(closure="sum")
    with pytest.raises(ValueError, match=r"^rank: "):
        SMNC(factorization="lowrank", rank=100).fit(X)
    with pytest.raises(ValueError, match=r"^random_state: "):
        SMNC(random_state=-1).fit(X)
    with pytest.raises(TypeError):
        SMNC(lamda1=0.1)
    with pytest.raises(Exception, match=r"not fitted"):
        SMNC().to_networkx()


def test_metrics():
    T = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    E = np.array([[0, 0, 0], [1, 0, 1], [1, 0, 0]])  # one reversed, one correct, one extra
    acc = count_accuracy(T, E)
    assert acc == {"shd": 2.0, "tpr": 0.5, "fdr": 2 / 3, "nnz": 3.0}
    m = StructureMetrics()
    m.update(T, T)
    m.update(T, E)
    assert m.compute()["shd"] == 1.0
