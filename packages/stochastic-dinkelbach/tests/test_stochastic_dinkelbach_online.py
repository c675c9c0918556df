"""The online trackers: identities of the Newton step, OFO, vectorised = scalar, convergence, concave rule."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.stochastic_dinkelbach import (
    ConcaveUtility,
    DinkelbachTracker,
    GaussianStream,
    OnlineConcaveUtility,
    get_metric,
    ofo_tracker,
    run_trackers,
)


@pytest.fixture(scope="module")
def stream():
    _, y, eta = GaussianStream().sample(3000, 0, shape=(3,))
    return eta, y


@pytest.mark.parametrize("step", ["newton", "sqrt"])
@pytest.mark.parametrize("name", ["f1", "f2", "jaccard"])
def test_vectorised_run_equals_the_scalar_updates(stream, name, step):
    eta, y = stream
    res = DinkelbachTracker(name, step=step).run(eta, y)
    for r in range(eta.shape[0]):
        tr = DinkelbachTracker(name, step=step)
        preds = [tr.learn_one(p, t) for p, t in zip(eta[r], y[r])]
        assert np.array_equal(preds, res.predictions[r])
        assert tr.lambda_ == pytest.approx(res.final_lambda[r], abs=1e-12)
        assert tr.score_ == pytest.approx(res.metric_value[r])
        assert tr.score_ == pytest.approx(get_metric(name).score(y[r], np.array(preds)))


def test_newton_step_makes_lambda_the_running_metric_with_its_prior(stream):
    eta, y = stream
    m = get_metric("f1")
    tr = DinkelbachTracker(m, init=0.4, prior_weight=3.0)
    num, den = m.increments
    A, B = 0.0, 0.0
    for p, t in zip(eta[0, :500], y[0, :500]):
        pred = tr.learn_one(p, t)
        cell = {(1, 1): 0, (1, 0): 1, (0, 1): 2, (0, 0): 3}[(pred, int(t))]
        A, B = A + num[cell], B + den[cell]
        assert tr.lambda_ == pytest.approx((3.0 * 0.4 + A) / (3.0 + B), abs=1e-12)


def test_ofo_is_the_literal_algorithm(stream):
    """Busa-Fekete et al. (2015): a_t = sum y yhat, b_t = sum y + sum yhat, predict 1 iff p > a/b (F/2)."""
    eta, y = stream
    res = ofo_tracker().run(eta[1], y[1])
    a = b = 0
    for t, (p, lab) in enumerate(zip(eta[1], y[1])):
        thr = a / b if b else 0.0
        pred = int(p > thr)
        assert pred == res.predictions[t]
        a += lab * pred
        b += lab + pred


def test_tracking_the_true_eta_converges_to_the_pu_optimum():
    gen = GaussianStream()
    _, y, eta = gen.sample(20_000, 5, shape=(2,))
    for name in ("f1", "f2", "jaccard"):
        m = get_metric(name)
        opt = gen.pu_optimum(m)
        res = DinkelbachTracker(m).run(eta, y)
        assert np.all(np.abs(res.final_lambda - opt.value) < 0.03)
        # the online-to-batch classifier is near-optimal on the population
        regret = opt.value - gen.metric_of_threshold(m, m.threshold(res.final_lambda))
        assert np.all((regret >= -1e-12) & (regret < 5e-3))


def test_run_trackers_with_sources_and_shared_streams(stream):
    eta, y = stream
    noisy = np.clip(eta + 0.1, 0, 1)
    trs = [DinkelbachTracker("f1"), DinkelbachTracker("jaccard")]
    preds, *_ = run_trackers(trs, np.stack([eta, noisy]), y, sources=[1, 0])
    assert np.array_equal(preds[0], trs[0].run(noisy, y).predictions)
    assert np.array_equal(preds[1], trs[1].run(eta, y).predictions)
    with pytest.raises(ValueError, match="sources"):
        run_trackers(trs, np.stack([eta]), y, sources=[0, 1])


@pytest.mark.parametrize("kind", ["gmean", "hmean", "qmean"])
def test_concave_utility_gradient_against_finite_differences(kind):
    u = ConcaveUtility(kind)
    c = np.array([30.0, 12.0, 9.0, 70.0])
    g = np.array(u.gradient(*c))
    h = 1e-5
    fd = [(u.value(*(c + h * e)) - u.value(*(c - h * e))) / (2 * h) for e in np.eye(4)]
    assert np.allclose(g, fd, atol=1e-7)


def test_concave_rule_vectorised_equals_scalar_and_reaches_the_optimum(stream):
    eta, y = stream
    learner = OnlineConcaveUtility("gmean")
    preds = learner.run(eta, y)
    for r in range(eta.shape[0]):
        one = OnlineConcaveUtility("gmean")
        assert np.array_equal([one.learn_one(p, t) for p, t in zip(eta[r], y[r])], preds[r])
    from paperworks.stochastic_dinkelbach import best_fixed_threshold

    u = ConcaveUtility("gmean")
    best, _ = best_fixed_threshold(eta[0], y[0], u)
    one = OnlineConcaveUtility("gmean")
    for p, t in zip(eta[0], y[0]):
        one.learn_one(p, t)
    assert best - one.score_ < 0.02


def test_tracker_bad_input(stream):
    eta, y = stream
    with pytest.raises(ValueError, match="step"):
        DinkelbachTracker("f1", step="adam")
    with pytest.raises(ValueError, match="init"):
        DinkelbachTracker("f1", init=1.5)
    with pytest.raises(ValueError, match="prior_weight"):
        DinkelbachTracker("f1", prior_weight=-1)
    tr = DinkelbachTracker("f1")
    with pytest.raises(ValueError, match=r"probs: expected probabilities in \[0, 1\]"):
        tr.run(eta[0] + 1, y[0])
    with pytest.raises(ValueError, match=r"labels in \{0, 1\}"):
        tr.run(eta[0], y[0] * 2)
    with pytest.raises(ValueError, match="empty"):
        tr.run(np.array([]), np.array([]))
    with pytest.raises(ValueError, match="kind"):
        ConcaveUtility("auc")
