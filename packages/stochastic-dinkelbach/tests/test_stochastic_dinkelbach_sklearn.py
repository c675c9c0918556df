"""Field integration: a real scikit-learn meta-estimator (SGDClassifier inside), river-style learning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import TunedThresholdClassifierCV

from paperworks.stochastic_dinkelbach import (
    DinkelbachClassifier,
    DinkelbachTracker,
    GaussianStream,
    OnlineLogisticRegression,
    prequential_logistic,
)


@pytest.fixture(scope="module")
def data():
    x, y, _ = GaussianStream().sample(600, 0)
    return x, y


def test_clone_and_params():
    clf = DinkelbachClassifier(SGDClassifier(loss="log_loss"), metric="f1", step="sqrt")
    params = clf.get_params()
    assert params["metric"] == "f1" and params["step"] == "sqrt" and "estimator__alpha" in params
    twin = clone(clf).set_params(metric="jaccard", estimator__alpha=1e-3)
    assert twin.metric == "jaccard" and twin.estimator.alpha == 1e-3 and clf.metric == "f1"


def test_with_sgdclassifier_the_protocol_is_per_instance(data):
    x, y = data
    n = 200
    clf = DinkelbachClassifier(SGDClassifier(loss="log_loss", random_state=0), metric="f1")
    clf.fit(x[:n], y[:n])
    # the same rounds by hand: predict with the estimator so far, step the root, learn the row
    est = SGDClassifier(loss="log_loss", random_state=0)
    tr = DinkelbachTracker("f1")
    for i in range(n):
        p = est.predict_proba(x[i : i + 1])[0, 1] if i else 0.5
        tr.update_one(tr.predict_one(p), int(y[i]))
        est.partial_fit(x[i : i + 1], y[i : i + 1], classes=[0, 1])
    assert clf.lambda_ == pytest.approx(tr.lambda_)
    assert clf.online_confusion_ == dict(zip(("TP", "FP", "FN", "TN"), tr.counts_))
    assert np.allclose(clf.predict_proba(x)[:, 1], est.predict_proba(x)[:, 1])
    assert np.array_equal(clf.predict(x), (est.predict_proba(x)[:, 1] > tr.threshold_).astype(int))
    # partial_fit in batches is the same stream
    clf2 = DinkelbachClassifier(SGDClassifier(loss="log_loss", random_state=0), metric="f1")
    for lo in range(0, n, 50):
        clf2.partial_fit(x[lo : lo + 50], y[lo : lo + 50], classes=[0, 1])
    assert clf2.lambda_ == pytest.approx(clf.lambda_) and clf2.n_seen_ == n
    assert 0 <= clf.score(x, y) <= 1


def test_builtin_estimator_path_equals_the_vectorised_stream(data):
    x, y = data
    clf = DinkelbachClassifier(metric="f2").fit(x, y)
    probs, w = prequential_logistic(x[None], y[None], checkpoints=(len(y),))
    res = DinkelbachTracker("f2").run(probs[0], y)
    assert clf.lambda_ == pytest.approx(float(res.final_lambda))
    assert np.allclose(clf.estimator_.coef_[0], w[len(y)][0, :-1])
    olr = OnlineLogisticRegression().fit(x, y)
    assert np.allclose(olr.coef_, clf.estimator_.coef_) and olr.t_ == len(y)


@pytest.mark.parametrize("estimator", [None, SGDClassifier(loss="log_loss", random_state=0)])
def test_river_style_learn_one_equals_partial_fit(data, estimator):
    x, y = data
    names = [f"f{j}" for j in range(x.shape[1])]
    a = DinkelbachClassifier(estimator, metric="jaccard")
    b = DinkelbachClassifier(estimator, metric="jaccard")
    for i in range(150):
        row = dict(zip(names, x[i]))
        pred = a.predict_one(row)
        assert pred in (0, 1) and set(a.predict_proba_one(row)) == {0, 1}
        a.learn_one(row, int(y[i]))
        b.partial_fit(x[i : i + 1], y[i : i + 1], classes=[0, 1])
    assert a.lambda_ == pytest.approx(b.lambda_) and a.online_confusion_ == b.online_confusion_
    with pytest.raises(ValueError, match="features"):
        a.learn_one({"other": 1.0}, 1)


def test_river_peer_agrees_on_the_online_f1():
    metrics = pytest.importorskip("river.metrics")
    x, y, _ = GaussianStream().sample(400, 3)
    clf = DinkelbachClassifier(metric="f1")
    f1 = metrics.F1()
    for i in range(len(y)):
        row = {f"x{j}": v for j, v in enumerate(x[i])}
        f1.update(bool(y[i]), bool(clf.predict_one(row)))
        clf.learn_one(row, int(y[i]))
    assert clf.online_score_ == pytest.approx(f1.get())


def test_tunedthresholdclassifiercv_accepts_our_estimator(data):
    x, y = data
    tuned = TunedThresholdClassifierCV(OnlineLogisticRegression(), scoring="f1", cv=3).fit(x, y)
    assert 0 < tuned.best_threshold_ < 1


LABELS_01 = "labels must be in {0, 1} (the metric's positive class); the check uses other labels"
EXPECTED_FAILURES = {
    "check_estimators_dtypes": LABELS_01,
    "check_dtype_object": LABELS_01,
    "check_classifier_data_not_an_array": LABELS_01,
    "check_classifiers_classes": LABELS_01,
    "check_fit2d_1feature": LABELS_01,
    "check_classifiers_regression_target": "our message names the argument and the expected labels instead",
    "check_classifier_not_supporting_multiclass": "binary by design: 3 classes raise our labels error",
}


@pytest.mark.parametrize(
    "estimator", [OnlineLogisticRegression(), DinkelbachClassifier()], ids=lambda e: type(e).__name__
)
def test_scikit_learn_estimator_checks(estimator):
    from sklearn.utils.estimator_checks import check_estimator

    expected = dict(EXPECTED_FAILURES)
    if isinstance(estimator, DinkelbachClassifier):
        expected["check_classifiers_train"] = "predicts for F1 (threshold tau(lambda)), not for accuracy"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None, expected_failed_checks=expected)
    bad = [f for f in results if f["status"] == "failed"]
    assert not bad, [(f["check_name"], str(f["exception"])[-200:]) for f in bad]
    assert sum(f["status"] == "passed" for f in results) >= 40


def test_bad_input(data):
    x, y = data
    with pytest.raises(ValueError, match=r"labels in \{0, 1\}"):
        DinkelbachClassifier().fit(x[:10], y[:10] + 1)
    with pytest.raises(ValueError, match="not linear-fractional"):
        DinkelbachClassifier(metric="mcc").fit(x[:10], y[:10])
    with pytest.raises(TypeError, match="partial_fit"):
        from sklearn.svm import SVC

        DinkelbachClassifier(SVC(probability=True)).fit(x[:10], y[:10])
    with pytest.raises(ValueError, match="beta"):
        DinkelbachClassifier(metric="fbeta", beta=0).fit(x[:10], y[:10])
    with pytest.raises(ValueError):
        DinkelbachClassifier().fit(x[:0], y[:0])
