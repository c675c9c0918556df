"""Bad input: a battery of invalid calls on every exported function and class.

Each case must raise TypeError (wrong type) or ValueError (wrong value) from the package's own checks,
with a one-line message that starts with the name of the offending argument.
"""

import numpy as np
import pytest

import paperworks.angular_mean as am

T = np.array([[1.0, 0.0], [0.0, 1.0]])  # two voters in d = 2
A = np.array([0.5, 0.5])
TH = np.array([1.0, 1.0])  # a rule
X = np.random.default_rng(0).standard_normal((3, 5, 2))  # 3 batches of 5 items
POOL = np.random.default_rng(1).standard_normal((6, 2))

BAD_VOTERS = [
    None,
    "ab",
    np.array([1.0, 0.0]),  # 1-d
    np.zeros((0, 2)),  # no voter
    np.zeros((2, 0)),  # no dimension
    np.array([[np.nan, 1.0]]),
    np.array([[np.inf, 1.0]]),
    np.array([[1.0, 0.0], [0.0, 0.0]]),  # a zero vector
    np.array([[1 + 1j, 0.0]]),  # complex
    np.array([["a", "b"]]),
    np.array([[True, False]]),
    [[1.0, 0.0], [1.0]],  # ragged
]
BAD_ALPHA = [
    "x",
    [0.5],  # wrong length
    [1.2, -0.2],
    [0.3, 0.3],  # does not sum to 1
    [np.nan, 0.5],
    [[0.5, 0.5]],  # 2-d
]
BAD_THETA = [None, np.ones(3), np.zeros(2), np.array([np.inf, 1.0]), np.ones((1, 2)), "ab", np.array([])]
BAD_COV = ["x", np.eye(3), np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([[1.0, 0.5], [0.0, 1.0]]), np.ones(2)]
BAD_ITEMS = [None, np.ones((1, 2)), np.ones((5, 3)), np.ones(2), np.zeros((0, 4, 2)), np.full((4, 2), np.nan)]
BAD_POS_INT = [0, -1, 1.5, "8", True, None]
BAD_TOL = [-1.0, "1e-3", np.nan, np.inf, None, True]
BAD_POS_TOL = [0.0, -1.0, "1e-3", np.nan, None]
BAD_SEED = [-1, 1.5, "0", None, True]


def cases():
    """(id, argument name, thunk) for every bad call."""
    out = []

    def add(fn_name, arg, values, call):
        for i, v in enumerate(values):
            out.append(pytest.param(arg, call, v, id=f"{fn_name}-{arg}-{i}"))

    rules = {
        "angular_mean": am.angular_mean,
        "spherical_median": am.spherical_median,
        "maxmin_slack": am.maxmin_slack,
        "normalized_mean": am.normalized_mean,
        "arithmetic_mean": am.arithmetic_mean,
    }
    for name, rule in rules.items():
        add(name, "thetas", BAD_VOTERS, lambda v, r=rule: r(v))
        add(name, "alpha", BAD_ALPHA, lambda v, r=rule: r(T, v))
        add(name, "cov", BAD_COV, lambda v, r=rule: r(T, A, cov=v))
    for name in ("angular_mean", "spherical_median", "maxmin_slack"):
        rule = rules[name]
        add(name, "n_starts", BAD_POS_INT, lambda v, r=rule: r(T, A, n_starts=v))
        add(name, "max_iter", BAD_POS_INT, lambda v, r=rule: r(T, A, max_iter=v))
        add(name, "tol", BAD_POS_TOL, lambda v, r=rule: r(T, A, tol=v))
        add(name, "seed", BAD_SEED, lambda v, r=rule: r(T, A, seed=v))
    add("aggregate", "rule", ["mode", 3, None], lambda v: am.aggregate(v, T, A))
    add("aggregate", "thetas", BAD_VOTERS[:4], lambda v: am.aggregate("angular_mean", v))

    # agreement and proportionality
    add("gaussian_agreement", "theta", BAD_THETA, lambda v: am.gaussian_agreement(v, T))
    add("gaussian_agreement", "thetas", BAD_VOTERS, lambda v: am.gaussian_agreement(TH, v))
    add("gaussian_agreement", "cov", BAD_COV, lambda v: am.gaussian_agreement(TH, T, cov=v))
    add("batch_agreement", "theta", BAD_THETA, lambda v: am.batch_agreement(v, T, X))
    add("batch_agreement", "thetas", BAD_VOTERS[:6], lambda v: am.batch_agreement(TH, v, X))
    add("batch_agreement", "items", BAD_ITEMS, lambda v: am.batch_agreement(TH, T, v))
    add("long_run_agreement", "items", BAD_ITEMS[1:], lambda v: am.long_run_agreement(TH, T, items=v))
    add(
        "long_run_agreement",
        "n_pairs",
        [0, -3, 2.5, "9", True],
        lambda v: am.long_run_agreement(TH, T, items=POOL, n_pairs=v),
    )
    add(
        "long_run_agreement", "seed", BAD_SEED[:3], lambda v: am.long_run_agreement(TH, T, items=POOL, seed=v)
    )
    add("long_run_agreement", "n_pairs", [10], lambda v: am.long_run_agreement(TH, T, n_pairs=v))
    add("long_run_agreement", "cov", [np.eye(2)], lambda v: am.long_run_agreement(TH, T, items=POOL, cov=v))
    add("PairwiseAgreement", "theta", BAD_THETA, lambda v: am.PairwiseAgreement(v, T))
    add("PairwiseAgreement", "thetas", BAD_VOTERS[:6], lambda v: am.PairwiseAgreement(TH, v))
    add("PairwiseAgreement.update", "items", BAD_ITEMS, lambda v: am.PairwiseAgreement(TH, T).update(v))
    add(
        "ip_violation",
        "agreement",
        ["x", np.array([1.5, 0.2]), np.array([np.nan, 0.1]), np.zeros(0), np.ones((2, 2, 2))],
        lambda v: am.ip_violation(v, A),
    )
    add("ip_violation", "alpha", BAD_ALPHA, lambda v: am.ip_violation(np.array([0.5, 0.5]), v))
    add("long_run_ip", "tol", BAD_TOL, lambda v: am.long_run_ip(TH, T, A, tol=v))
    add("long_run_ip", "theta", BAD_THETA[:4], lambda v: am.long_run_ip(v, T, A))
    add("long_run_ip", "alpha", BAD_ALPHA, lambda v: am.long_run_ip(TH, T, v))
    add("long_run_ip", "n_pairs", [0, 1.5], lambda v: am.long_run_ip(TH, T, A, items=POOL, n_pairs=v))
    add("per_batch_ip", "tol", BAD_TOL, lambda v: am.per_batch_ip(TH, T, A, X, tol=v))
    add("per_batch_ip", "batches", BAD_ITEMS, lambda v: am.per_batch_ip(TH, T, A, v))
    add("per_batch_ip", "alpha", BAD_ALPHA, lambda v: am.per_batch_ip(TH, T, v, X))
    add("per_batch_ip", "theta", BAD_THETA[:4], lambda v: am.per_batch_ip(v, T, A, X))
    add(
        "per_batch_ip_many",
        "rules",
        [np.ones(2), np.ones((2, 3)), np.zeros((0, 2)), "x"],
        lambda v: am.per_batch_ip_many(v, T, A, X),
    )
    add(
        "per_batch_ip_many",
        "rules[1]",
        [np.array([[1.0, 0.0], [0.0, 0.0]])],
        lambda v: am.per_batch_ip_many(v, T, A, X),
    )
    add(
        "per_batch_ip_many",
        "tol",
        BAD_TOL[:2],
        lambda v: am.per_batch_ip_many(np.ones((1, 2)), T, A, X, tol=v),
    )
    add("proportionality_slack", "theta", BAD_THETA[:4], lambda v: am.proportionality_slack(v, T, A))
    add("proportionality_slack", "alpha", BAD_ALPHA, lambda v: am.proportionality_slack(TH, T, v))

    # sphere
    add("to_sphere", "thetas", BAD_VOTERS[:8], lambda v: am.to_sphere(v))
    add("to_sphere", "cov", BAD_COV, lambda v: am.to_sphere(T, v))
    add("from_sphere", "t", [BAD_THETA[0], *BAD_THETA[2:6]], lambda v: am.from_sphere(v))
    add("from_sphere", "cov", [np.eye(3), BAD_COV[2]], lambda v: am.from_sphere(TH, v))
    add("angles", "theta", BAD_THETA[:4], lambda v: am.angles(v, T))
    unit_bad = [np.ones((1, 2)), np.zeros((0, 2)), np.ones(2) / np.sqrt(2), np.array([[np.nan, 1.0]]), "x"]
    add("log_map", "t", unit_bad, lambda v: am.log_map(v, T))
    add("log_map", "u", [*unit_bad, np.eye(3)], lambda v: am.log_map(T[:1], v))
    add("exp_map", "t", unit_bad, lambda v: am.exp_map(v, np.zeros((1, 2))))
    add("exp_map", "g", [np.zeros((2, 2)), np.array([[np.inf, 0.0]]), "x"], lambda v: am.exp_map(T[:1], v))

    # data
    add("gaussian_items", "n_batches", BAD_POS_INT, lambda v: am.gaussian_items(v, 4, 2))
    add("gaussian_items", "m", [1, 0, 2.0, "4"], lambda v: am.gaussian_items(3, v, 2))
    add("gaussian_items", "d", BAD_POS_INT, lambda v: am.gaussian_items(3, 4, v))
    add("gaussian_items", "cov", BAD_COV, lambda v: am.gaussian_items(3, 4, 2, cov=v))
    add("gaussian_items", "seed", BAD_SEED, lambda v: am.gaussian_items(3, 4, 2, seed=v))
    add("random_instance", "n_types", BAD_POS_INT, lambda v: am.random_instance(v, 3))
    add("random_instance", "d", [1, 0, 2.5], lambda v: am.random_instance(3, v))
    add("random_instance", "seed", BAD_SEED, lambda v: am.random_instance(3, 3, seed=v))
    add(
        "high_disagreement_instance",
        "n_types",
        [1, 0, 2.5, "5"],
        lambda v: am.high_disagreement_instance(v, 3, 0.2),
    )
    add("high_disagreement_instance", "d", [1, 2.5], lambda v: am.high_disagreement_instance(3, v, 0.2))
    add(
        "high_disagreement_instance",
        "minority",
        [0.0, 0.5, -0.1, np.nan, "0.2", True],
        lambda v: am.high_disagreement_instance(3, 3, v),
    )
    add(
        "high_disagreement_instance",
        "seed",
        BAD_SEED[:3],
        lambda v: am.high_disagreement_instance(3, 3, 0.2, seed=v),
    )
    add("preference_dataset", "name", ["iris", None, 3], lambda v: am.preference_dataset(v, "homogeneous"))
    add("preference_dataset", "regime", ["mixed", None], lambda v: am.preference_dataset("wine", v))
    add(
        "preference_dataset",
        "seed",
        BAD_SEED[:3],
        lambda v: am.preference_dataset("wine", "homogeneous", seed=v),
    )

    # estimators: settings are checked in fit, data as scikit-learn does, weights by the package
    for cls in (am.AngularMean, am.SphericalMedian, am.MaxMinSlack):
        add(cls.__name__, "n_starts", BAD_POS_INT[:4], lambda v, c=cls: c(n_starts=v).fit(T))
        add(cls.__name__, "tol", BAD_POS_TOL[:3], lambda v, c=cls: c(tol=v).fit(T))
        add(cls.__name__, "random_state", [-1, "0", 1.5], lambda v, c=cls: c(random_state=v).fit(T))
    for cls in (am.AngularMean, am.SphericalMedian, am.MaxMinSlack, am.NormalizedMean):
        add(cls.__name__, "cov", BAD_COV[1:3], lambda v, c=cls: c(cov=v).fit(T))
    for cls in (am.AngularMean, am.MaxMinSlack, am.NormalizedMean, am.ArithmeticMean):
        add(
            cls.__name__,
            "sample_weight",
            [[1.0], [-1.0, 2.0], [0.0, 0.0], [np.nan, 1.0], "x"],
            lambda v, c=cls: c().fit(T, sample_weight=v),
        )
        add(cls.__name__, "X", [np.array([[1.0, 0.0], [0.0, 0.0]])], lambda v, c=cls: c().fit(v))
    return out


CASES = cases()


def test_the_battery_is_large():
    assert len(CASES) >= 300


@pytest.mark.parametrize(("arg", "call", "value"), CASES)
def test_bad_input_raises_a_clear_error_naming_the_argument(arg, call, value):
    with pytest.raises((TypeError, ValueError)) as info:
        call(value)
    message = str(info.value)
    assert "\n" not in message, message
    assert message.startswith(f"{arg}:") or message.startswith(f"{arg} "), message
    # raised by the package or the core's validators, never from deep inside NumPy or SciPy
    tb = info.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename
    assert "paperworks" in where, f"raised in {where}: {message}"


def test_state_errors():
    with pytest.raises(RuntimeError, match="before any update"):
        am.PairwiseAgreement(TH, T).compute()
    with pytest.raises(ValueError, match="arithmetic mean is the zero vector"):
        am.arithmetic_mean(np.array([[1.0, 0.0], [-1.0, 0.0]]))
    with pytest.raises(ValueError, match="normalised mean is the zero vector"):
        am.normalized_mean(np.array([[1.0, 0.0], [-2.0, 0.0]]))
