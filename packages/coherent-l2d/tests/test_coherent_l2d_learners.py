import numpy as np
import pytest

from paperworks.coherent_l2d import (
    BRL2D,
    TBPRPO,
    ControlledExpert,
    HierarchicalLabelModel,
    chest_xray_taxonomy,
    is_coherent,
    joint_utility,
    realized_utilities,
)

TAX = chest_xray_taxonomy()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    model = HierarchicalLabelModel(TAX, 8, rng=rng)
    expert = ControlledExpert.specialist(TAX, rng)
    X, Y = model.sample(300, rng)
    M = expert.sample_correct(300, rng)
    return X, Y, M, expert


def test_learners_train_and_tbp_decodes_coherently(data):
    X, Y, M, expert = data
    br = BRL2D(TAX, epochs=40).fit(X[:200], Y[:200], M[:200], expert.cost)
    tbp = TBPRPO(TAX, epochs=40).fit(X[:200], Y[:200], M[:200], expert.cost)
    assert br.losses_[-1] < br.losses_[0] and tbp.losses_[-1] < tbp.losses_[0]
    assert is_coherent(TAX, tbp.predict_actions(X[200:])).all()
    assert is_coherent(TAX, br.predict_projected(X[200:])).all()
    U = realized_utilities(Y[200:], M[200:], expert.cost)
    # both beat always deferring (the expert alone) on held-out cases
    always = (M[200:] - expert.cost).mean()
    for A in (br.predict_actions(X[200:]), tbp.predict_actions(X[200:])):
        assert joint_utility(U, A).mean() / TAX.n > always
    m = tbp.marginals(X[200:210])
    np.testing.assert_allclose(m.sum(-1), 1.0, atol=1e-5)


def test_same_seed_same_model(data):
    X, Y, M, expert = data
    a = TBPRPO(TAX, epochs=3, seed=3).fit(X[:50], Y[:50], M[:50], expert.cost).scores(X[:5])
    b = TBPRPO(TAX, epochs=3, seed=3).fit(X[:50], Y[:50], M[:50], expert.cost).scores(X[:5])
    np.testing.assert_array_equal(a, b)


def test_learner_bad_input(data):
    X, Y, M, expert = data
    with pytest.raises(ValueError, match="M: expected the expert's 0/1 correctness"):
        BRL2D(TAX).fit(X, Y, M[:, :3], expert.cost)
    with pytest.raises(ValueError, match="Y: expected 300 rows"):
        BRL2D(TAX).fit(X, Y[:10], M[:10], expert.cost)
    with pytest.raises(RuntimeError, match="not fitted"):
        TBPRPO(TAX).scores(X)
    with pytest.raises(ValueError, match="temperature"):
        TBPRPO(TAX, temperature=-1.0)
    with pytest.raises(TypeError, match="taxonomy: expected a Taxonomy"):
        BRL2D("chest")


def test_sklearn_estimator(data):
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression

    from paperworks.coherent_l2d import CoherentL2D

    X, Y, _, expert = data
    est = CoherentL2D(LogisticRegression(max_iter=500), TAX, expert.accuracy, expert.cost)
    twin = clone(est)
    assert twin.get_params()["decoder"] == "projection" and twin is not est
    est.fit(X, Y)
    A = est.predict_actions(X)
    assert A.shape == Y.shape and is_coherent(TAX, A).all()
    assert est.decision_function(X[:3]).shape == (3, TAX.n, 3)
    P = est.predict_proba(X)
    assert (P[:, TAX.levels[1]] <= P[:, TAX.parent[TAX.levels[1]]] + 1e-12).all()
    nodewise = clone(est).set_params(decoder="nodewise").fit(X, Y).predict_actions(X)
    assert nodewise.shape == A.shape
    with pytest.raises(ValueError, match="decoder"):
        clone(est).set_params(decoder="greedy").fit(X, Y)
    with pytest.raises(ValueError, match="expert_accuracy: expected shape"):
        CoherentL2D(None, TAX, expert.accuracy[:3], expert.cost).fit(X, Y)
    bad = Y.copy()
    bad[0, TAX.levels[1][0]] = 1
    bad[0, 0] = 0
    with pytest.raises(ValueError, match="contradict the taxonomy"):
        clone(est).fit(X, bad)
