"""Metric values against torchmetrics and scikit-learn, thresholds against brute force, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.stochastic_dinkelbach import GaussianStream, LinearFractionalMetric, fbeta, get_metric
from paperworks.stochastic_dinkelbach.metrics import as_labels, as_probabilities


@pytest.fixture(scope="module")
def labels():
    rng = np.random.default_rng(0)
    return [(rng.random(n) < 0.3).astype(int) for n in (1, 7, 50, 500)], [
        (rng.random(n) < 0.4).astype(int) for n in (1, 7, 50, 500)
    ]


def test_values_match_torchmetrics(labels):
    torch = pytest.importorskip("torch")
    tmc = pytest.importorskip("torchmetrics.classification")
    peers = {
        "f1": tmc.BinaryF1Score(),
        "f2": tmc.BinaryFBetaScore(beta=2.0),
        "jaccard": tmc.BinaryJaccardIndex(),
        "accuracy": tmc.BinaryAccuracy(),
        "recall": tmc.BinaryRecall(),
    }
    for ys, ps in zip(*labels):
        for name, peer in peers.items():
            peer.reset()
            ref = float(peer(torch.tensor(ps), torch.tensor(ys)))
            ours = get_metric(name).score(ys, ps)
            assert ours == pytest.approx(ref, abs=1e-6), (name, ys, ps)


def test_values_match_scikit_learn(labels):
    from sklearn.metrics import f1_score, fbeta_score, jaccard_score

    for ys, ps in zip(*labels):
        assert get_metric("f1").score(ys, ps) == pytest.approx(f1_score(ys, ps, zero_division=0))
        assert get_metric("fbeta", beta=0.5).score(ys, ps) == pytest.approx(
            fbeta_score(ys, ps, beta=0.5, zero_division=0)
        )
        assert get_metric("jaccard").score(ys, ps) == pytest.approx(jaccard_score(ys, ps, zero_division=0))


def test_torchmetrics_names_and_explicit_coefficients():
    assert get_metric("BinaryF1Score") == get_metric("f1") == fbeta(1.0)
    assert get_metric("binary_fbeta_score", beta=2) == get_metric("F2")
    assert get_metric("BinaryJaccardIndex").name == "jaccard"
    custom = get_metric((0.0, (1, 0, 0, 0), 0.0, (1, 1, 1, 0)))
    assert custom.value(3, 1, 2, 10) == pytest.approx(get_metric("jaccard").value(3, 1, 2, 10))
    assert isinstance(custom, LinearFractionalMetric) and (custom.lo, custom.hi) == (0.0, 1.0)


@pytest.mark.parametrize("name", ["f1", "f2", "f0.5", "jaccard", "accuracy"])
def test_threshold_is_the_pointwise_maximiser_by_brute_force(name):
    """For each lambda and eta, 1[eta > tau(lambda)] picks the larger E[a - lambda b | pred] (pred 0 or 1)."""
    m = get_metric(name)
    num, den = m.increments
    eta = np.linspace(0, 1, 1001)
    for lam in np.linspace(m.lo, m.hi, 23):
        gain1 = eta * (num[0] - lam * den[0]) + (1 - eta) * (num[1] - lam * den[1])  # predict 1: TP or FP
        gain0 = eta * (num[2] - lam * den[2]) + (1 - eta) * (num[3] - lam * den[3])  # predict 0: FN or TN
        ours = eta > m.threshold(lam)
        clear = np.abs(gain1 - gain0) > 1e-12
        assert np.array_equal(ours[clear], (gain1 > gain0)[clear])


def test_closed_form_thresholds():
    assert get_metric("f1").threshold(0.6) == pytest.approx(0.3)
    assert get_metric("f2").threshold(0.6) == pytest.approx(0.6 / 5)
    assert get_metric("jaccard").threshold(0.6) == pytest.approx(0.6 / 1.6)
    assert get_metric("accuracy").threshold(0.9) == pytest.approx(0.5)


@pytest.mark.parametrize("name", ["f1", "f2", "jaccard"])
def test_population_optimum_against_brute_force_on_known_eta(name):
    gen = GaussianStream()
    m = get_metric(name)
    opt = gen.pu_optimum(m)
    taus = np.linspace(0, 1, 400_001)
    vals = gen.metric_of_threshold(m, taus)
    assert opt.value == pytest.approx(vals.max(), abs=1e-9)
    assert opt.threshold == pytest.approx(taus[vals.argmax()], abs=1e-4)
    assert opt.value >= vals.max() - 1e-12  # no threshold beats the Dinkelbach root
    # the optimum also beats any half-space (random directions)
    rng = np.random.default_rng(1)
    w = rng.standard_normal((200, gen.dim))
    c = rng.standard_normal(200)
    assert np.all(gen.metric_of_halfspace(m, w, c) <= opt.value + 1e-12)


def test_exact_population_confusion_against_monte_carlo():
    gen = GaussianStream(dim=3, prior=0.3, separation=1.0)
    x, y, eta = gen.sample(400_000, 0)
    w, c = np.array([0.5, -0.2, 1.0]), -0.3
    pred = (x @ w + c > 0).astype(int)
    mc = np.array(
        [np.mean((pred == 1) & (y == 1)), np.mean((pred == 1) & (y == 0)), np.mean((pred == 0) & (y == 1))]
    )
    assert np.allclose(gen.confusion_halfspace(w, c)[:3], mc, atol=3e-3)
    r = gen.confusion_noisy_threshold(0.4, 0.1)
    pred = (eta + 0.1 * np.random.default_rng(2).standard_normal(eta.size) > 0.4).astype(int)
    assert r[0] == pytest.approx(np.mean((pred == 1) & (y == 1)), abs=3e-3)
    assert np.allclose(
        gen.confusion_noisy_threshold(0.4, 1e-9, grid=20001), gen.confusion_eta_threshold(0.4), atol=1e-3
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "mcc"}, "not linear-fractional"),
        ({"metric": "G-mean"}, "not linear-fractional"),
        ({"metric": "balanced_accuracy"}, "not linear-fractional"),
        ({"metric": "BinaryPrecision"}, "vanishes"),
        ({"metric": "specificity"}, "vanishes"),
        ({"metric": "roc"}, "unknown name"),
        ({"metric": "fbeta"}, "needs beta"),
        ({"metric": "fbeta", "beta": 0.0}, "beta: expected a number > 0"),
        ({"metric": "fbeta", "beta": -1.0}, "beta"),
        ({"metric": (0.0, (1, 0, 0, 0), 0.0, (1, 0, 0, 0))}, "vanishes"),  # precision-like
        ({"metric": (0.0, (1, 0, 0, 0), 0.0, (1, -2, 1, 0))}, "negative"),
        ({"metric": (0.0, (1, 0, 0, 1), 0.0, (1, 0, 1, 0))}, "unbounded"),
        ({"metric": (0.0, (0, 1, 0, 0), 1.0, (0, 0, 0, 0))}, "Dinkelbach path"),  # rewards false positives
        ({"metric": (0.0, (1, 0, 0), 0.0, (1, 1, 1, 0))}, "4 coefficients"),
        ({"metric": 3.0}, "expected a name"),
    ],
)
def test_bad_metrics_raise_one_line_errors(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message) as err:
        get_metric(**kwargs)
    assert "\n" not in str(err.value)


def test_bad_labels_and_probabilities():
    with pytest.raises(ValueError, match=r"labels in \{0, 1\}"):
        as_labels([0, 1, 2], "y")
    with pytest.raises(ValueError, match="empty stream"):
        as_labels([], "y")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        as_probabilities([0.2, 1.2], "p")
    with pytest.raises(ValueError, match="finite"):
        as_probabilities([0.2, np.nan], "p")
    with pytest.raises(ValueError, match="empty"):
        as_probabilities([], "p")
    with pytest.raises(ValueError, match="y_pred"):
        get_metric("f1").score([0, 1], [1])
