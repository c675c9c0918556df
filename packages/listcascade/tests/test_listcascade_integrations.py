"""Field integration with the real libraries: scikit-learn, gymnasium, vowpal wabbit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from paperworks.listcascade import (
    all_functions,
    cbify_lines,
    geometric_weights,
    random_class,
    write_cbify_file,
)

sklearn = pytest.importorskip("sklearn")
gymnasium = pytest.importorskip("gymnasium")
vowpalwabbit = pytest.importorskip("vowpalwabbit")


# -- scikit-learn --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "check",
    [
        "check_no_attributes_set_in_init",
        "check_get_params_invariance",
        "check_set_params",
        "check_parameters_default_constructible",
        "check_estimator_repr",
    ],
)
def test_sklearn_estimator_checks_that_apply(check):
    # the checks that fit on random real-valued X do not apply: X holds point indices of a finite domain
    from sklearn.utils import estimator_checks

    from paperworks.listcascade import BanditPACLearner

    getattr(estimator_checks, check)("BanditPACLearner", BanditPACLearner(all_functions(3, 2)))


def test_estimator_params_clone_and_unfitted():
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    from paperworks.listcascade import BanditPACLearner

    h = all_functions(3, 3)
    est = BanditPACLearner(h, n_labels=3, tie_break="smallest", random_state=4)
    assert set(est.get_params()) == {"hypotheses", "n_labels", "tie_break", "random_state"}
    twin = clone(est)
    assert twin is not est and np.array_equal(twin.hypotheses, h) and twin.random_state == 4
    assert twin.set_params(tie_break="random").tie_break == "random"
    with pytest.raises(NotFittedError):
        est.predict(np.zeros((1, 1), dtype=int))
    with pytest.raises(ValueError, match="hypotheses"):
        BanditPACLearner().fit(np.zeros((2, 1), dtype=int), np.zeros(2, dtype=int))


def test_estimator_learns_from_bandit_feedback_only():
    from paperworks.listcascade import BanditPACLearner

    rng = np.random.default_rng(0)
    h = random_class(6, 4, 300, rng)
    target = h[11]
    X = rng.choice(6, size=(400, 1), p=geometric_weights(6, 0.8))
    est = BanditPACLearner(h, random_state=0).fit(X, target[X[:, 0]])
    assert est.score(np.arange(6)[:, None], target) == 1.0 and est.version_space_size_ >= 1
    assert est.n_rounds_ == 400 and list(est.classes_) == [0, 1, 2, 3]
    # partial_fit with logged feedback: a logged policy's labels and whether each was right
    log = BanditPACLearner(h, random_state=0)
    for x in rng.integers(0, 6, size=300):
        played = int(rng.integers(4))
        log.partial_fit(np.array([[x]]), np.array([played]), np.array([played == target[x]]))
    assert np.any(np.all(log.learner_.version_space == target, axis=1))
    assert all(target[x] in lst for x, lst in enumerate(log.predict_list(np.arange(6)[:, None])))
    with pytest.raises(ValueError, match=r"point indices in 0\.\.5"):
        log.predict(np.array([[6]]))
    with pytest.raises(ValueError, match="y_pred, correct"):
        log.partial_fit(np.array([[0], [1]]), np.array([1]), np.array([True]))


# -- gymnasium -----------------------------------------------------------------------------------------
def test_env_passes_gymnasiums_checker_discrete_and_box():
    from gymnasium.utils.env_checker import check_env

    from paperworks.listcascade import BanditFeedbackEnv

    rng = np.random.default_rng(0)
    envs = [
        BanditFeedbackEnv(np.arange(6), np.array([0, 1, 2, 0, 1, 2])),
        BanditFeedbackEnv(rng.normal(size=(20, 3)), rng.integers(0, 4, 20), sampling="iid", horizon=50),
    ]
    for env in envs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no render modes" is informational
            check_env(env, skip_render_check=True)


def test_env_emits_bandit_feedback_and_drives_listcascade():
    from paperworks.listcascade import BanditFeedbackEnv, ListCascade

    h = all_functions(5, 3)
    target = h[77]
    w = geometric_weights(5)
    env = BanditFeedbackEnv(np.arange(5), target, n_labels=3, sampling="iid", p=w, horizon=300)
    lc = ListCascade(h, 3, rng=0)
    x, info = env.reset(seed=1)
    done = False
    total = 0.0
    while not done:
        a = lc.propose(x)
        x_next, r, done, truncated, info = env.step(a)
        assert set(info) == {"correct", "round"} and r in (0.0, 1.0) and not truncated
        lc.update(x, a, bool(r))
        total += r
        x = x_next
    assert np.array_equal(lc.predict(np.arange(5)), target) and total > 250
    with pytest.raises(ValueError, match="action"):
        env.reset(seed=0)
        env.step(7)


# -- vowpal wabbit --------------------------------------------------------------------------------------
def test_cbify_lines_and_file_run_in_vowpal_wabbit(tmp_path):
    lines = cbify_lines(np.array([0, 3, 1]), np.array([2, 0, 1]))
    assert lines == ["3 |x p0", "1 |x p3", "2 |x p1"]
    feats = cbify_lines(np.array([[0.5, -1.0]]), np.array([1]), n_labels=3)
    assert feats == ["2 |x f0:0.5 f1:-1"]
    with pytest.raises(ValueError, match=r"y: expected labels in 0\.\.1"):
        cbify_lines(np.array([0]), np.array([2]), n_labels=2)
    rng = np.random.default_rng(0)
    target = np.array([2, 0, 3, 1])
    xs = rng.integers(0, 4, size=3000)
    path = write_cbify_file(tmp_path / "train.txt", xs, target[xs])
    vw = vowpalwabbit.Workspace(f"--cbify 4 --quiet -d {path} --random_seed 1")
    vw.finish()  # vowpal wabbit read and learnt from the whole file
    assert path.read_text().count("\n") == 3000


@pytest.mark.parametrize("exploration", ["epsilon", "squarecb"])
def test_vw_cbify_learns_and_its_greedy_policy_is_read_out(exploration):
    from paperworks.listcascade import VWCbify

    target = np.array([2, 0, 3, 1, 1])
    rng = np.random.default_rng(0)
    with VWCbify(4, exploration=exploration, seed=3) as vw:
        xs = rng.integers(0, 5, size=3000).tolist()
        vw.learn_many(xs, [int(target[x]) for x in xs])
        first = vw.greedy_predict(range(5))
        assert np.array_equal(first, target)
        assert np.array_equal(vw.greedy_predict(range(5)), first)  # the readout is deterministic
    with pytest.raises(ValueError, match="exploration"):
        VWCbify(4, exploration="bag")
