"""ListCascade and the baselines: version-space invariants, equal rates at K = 2, weighted ERM, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.listcascade import (
    FullInformationERM,
    ListCascade,
    NonRealizableError,
    Stream,
    UniformExploration,
    all_functions,
    geometric_weights,
    random_class,
    run_protocol,
    sample_complexity,
    two_label_class,
)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 5),
    st.integers(2, 4),
    st.integers(1, 60),
    st.integers(0, 2**31 - 1),
    st.sampled_from(["listcascade", "iw", "vs"]),
)
def test_version_space_always_contains_the_target(d, k, m, seed, kind):
    rng = np.random.default_rng(seed)
    h = random_class(d, k, min(m, k**d), rng)
    target = h[rng.integers(h.shape[0])]
    learner = (
        ListCascade(h, k, rng=seed)
        if kind == "listcascade"
        else UniformExploration(h, k, estimator=kind if kind == "iw" else "consistent", rng=seed)
    )
    for x in rng.integers(0, d, size=40).tolist():
        before = learner.size
        y = learner.propose(x)
        assert 0 <= y < k
        if kind == "listcascade":
            assert y in learner.candidates(x)  # ListCascade only plays labels still possible
        learner.update(x, y, y == target[x])
        assert learner.size <= before
        assert np.any(np.all(learner.version_space == target, axis=1))  # realizable: h* never eliminated
        assert learner.candidates(x)[0] == learner.predict(np.array([x]))[0]
    # once every point is known the output is the target
    if learner.known().all():
        assert np.array_equal(learner.predict(np.arange(d)), target)


def test_cascade_walks_down_the_list_and_collapses_on_correct():
    h = all_functions(1, 4)  # one point, four labels
    lc = ListCascade(h, 4, tie_break="smallest")
    assert lc.candidates(0).tolist() == [0, 1, 2, 3]
    for wrong in (0, 1):
        assert lc.propose(0) == wrong
        assert lc.update(0, wrong, False)
    assert lc.candidates(0).tolist() == [2, 3]
    assert lc.update(0, 2, True) and lc.known().all() and lc.size == 1
    assert not lc.update(0, 2, True)  # a known point teaches nothing


def test_most_voted_label_first():
    h = np.array([[0, 0], [0, 1], [0, 2], [1, 0]])  # at point 0, label 0 has three votes
    lc = ListCascade(h, 3, rng=0)
    assert lc.candidates(0).tolist() == [0, 1] and lc.propose(0) == 0
    assert lc.votes[1].tolist() == [2, 1, 1]


@pytest.mark.parametrize("make", [lambda r: all_functions(6, 2), lambda r: two_label_class(5, 6, r)])
def test_listcascade_equals_full_information_with_two_candidates(make):
    # K = 2 (or two labels per point): a wrong prediction names the label, so the version spaces agree
    # round by round on the same stream, and so do the error curves and m(eps) (equal rates)
    rng = np.random.default_rng(3)
    h = make(rng)
    k = int(h.max()) + 1
    w = geometric_weights(h.shape[1])
    curves = {"lc": [], "full": []}
    for draw in range(8):
        target = h[rng.integers(h.shape[0])]
        for name, cls in (("lc", ListCascade), ("full", FullInformationERM)):
            stream = Stream(w, seed=draw)
            curves[name].append(run_protocol(cls(h, k, rng=draw), target, w, stream, stop_mass=0.02))
    for a, b in zip(curves["lc"], curves["full"]):
        assert np.array_equal(a.times, b.times) and np.array_equal(a.errors, b.errors)
    for eps in (0.2, 0.05, 0.02):
        assert sample_complexity(curves["lc"], eps) == sample_complexity(curves["full"], eps)


def test_listcascade_pays_for_bandit_feedback_with_many_labels():
    h = all_functions(4, 6)
    w = geometric_weights(4)
    lc_rounds, full_rounds = [], []
    for draw in range(10):
        target = h[draw * 97]
        a = run_protocol(ListCascade(h, 6, rng=draw), target, w, Stream(w, draw), stop_mass=0.05)
        b = run_protocol(FullInformationERM(h, 6, rng=draw), target, w, Stream(w, draw), stop_mass=0.05)
        assert a.informative >= b.informative  # full information needs one round per point
        lc_rounds.append(a.rounds)
        full_rounds.append(b.rounds)
    assert np.mean(lc_rounds) > np.mean(full_rounds)


def test_weighted_erm_is_the_version_space_of_confirmed_rounds():
    rng = np.random.default_rng(1)
    h = random_class(5, 3, 80, rng)
    target = h[7]
    iw = UniformExploration(h, 3, estimator="iw", rng=0)
    confirmed = np.ones(h.shape[0], dtype=bool)
    n_ok = 0
    for x in rng.integers(0, 5, size=200).tolist():
        y = iw.propose(x)
        ok = y == target[x]
        iw.update(x, y, ok)
        if ok:
            confirmed &= h[:, x] == y
            n_ok += 1
        assert set(iw.alive.tolist()) == set(np.flatnonzero(confirmed).tolist())
    assert n_ok > 0
    # the weighted count is K = 3 per confirmed round, and the target gets every one of them
    assert iw.iw_scores[np.flatnonzero((h == target).all(axis=1))[0]] == 3 * n_ok == iw.iw_scores.max()


def test_consistent_uniform_uses_wrong_feedback():
    h = all_functions(1, 3)
    vs = UniformExploration(h, 3, estimator="consistent", rng=0)
    iw = UniformExploration(h, 3, estimator="iw", rng=0)
    assert vs.update(0, 1, False) and vs.candidates(0).tolist() != [] and 1 not in vs.candidates(0)
    assert not iw.update(0, 1, False) and iw.size == 3


def test_non_realizable_feedback_raises():
    h = np.array([[0, 0], [1, 1]])
    lc = ListCascade(h, 3)
    with pytest.raises(NonRealizableError, match="not in H"):
        lc.update(0, 2, True)  # no hypothesis predicts 2
    lc.update(0, 0, True)
    with pytest.raises(NonRealizableError):
        lc.update(1, 0, False)
    w = geometric_weights(2)
    with pytest.raises(NonRealizableError, match="target"):
        run_protocol(ListCascade(h, 2), np.array([0, 1]), w, Stream(w, 0), stop_mass=0.1)


def test_bad_input_names_the_argument():
    h = all_functions(3, 2)
    lc = ListCascade(h, 2)
    with pytest.raises(ValueError, match="x: expected an int >= 0 <= 2"):
        lc.propose(3)
    with pytest.raises(ValueError, match="y_pred"):
        lc.update(0, 5, True)
    with pytest.raises(TypeError, match="correct"):
        lc.update(0, 1, "yes")
    with pytest.raises(ValueError, match=r"labels in 0\.\.1"):
        ListCascade(np.array([[0, 3]]), 2)
    with pytest.raises(ValueError, match="tie_break"):
        ListCascade(h, 2, tie_break="first")
    with pytest.raises(ValueError, match="estimator"):
        UniformExploration(h, 2, estimator="ips")
    with pytest.raises(ValueError, match="hypotheses: expected a non-empty"):
        ListCascade(np.zeros((0, 2), dtype=int))


def test_same_seed_same_run():
    h = random_class(5, 4, 100, np.random.default_rng(0))
    w = geometric_weights(5)
    runs = [
        run_protocol(UniformExploration(h, 4, rng=5), h[3], w, Stream(w, 9), stop_mass=0.05) for _ in range(2)
    ]
    assert np.array_equal(runs[0].times, runs[1].times) and np.array_equal(runs[0].errors, runs[1].errors)
