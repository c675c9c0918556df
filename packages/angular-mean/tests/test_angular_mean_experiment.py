"""Data generators, determinism, and the quick reproduction."""

import dataclasses
import json
import warnings

import numpy as np
import pytest

from paperworks.angular_mean import (
    DATASETS,
    REGIMES,
    AmbiguousRuleWarning,
    angular_mean,
    gaussian_agreement,
    high_disagreement_instance,
    long_run_agreement,
    preference_dataset,
)
from paperworks.angular_mean.experiments import AngularMeanConfig, AngularMeanExperiment
from paperworks.core import Progress
from paperworks.core.claims import INCONCLUSIVE_1_SEED, SlopeClaim


def test_high_disagreement_instance_structure():
    thetas, alpha = high_disagreement_instance(5, 10, 0.3, seed=0)
    assert thetas.shape == (5, 10) and alpha.sum() == pytest.approx(1.0)
    assert alpha[-1] == pytest.approx(0.3)
    u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)
    cos = u[:-1] @ u[-1]
    assert np.all(cos < np.cos(np.deg2rad(120)))  # the minority opposes every bloc member
    again, _ = high_disagreement_instance(5, 10, 0.3, seed=0)
    np.testing.assert_array_equal(again, thetas)


@pytest.mark.parametrize("name", DATASETS)
def test_preference_datasets(name):
    from sklearn import datasets

    raw = {
        "wine": datasets.load_wine,
        "breast_cancer": datasets.load_breast_cancer,
        "diabetes": datasets.load_diabetes,
    }
    n_rows, n_cols = raw[name](return_X_y=True)[0].shape
    for regime in REGIMES:
        d1 = preference_dataset(name, regime, seed=1)
        d2 = preference_dataset(name, regime, seed=1)
        np.testing.assert_array_equal(d1.thetas, d2.thetas)
        assert d1.items.shape == (n_rows, n_cols)  # every row of the scikit-learn data set
        assert d1.alpha.sum() == pytest.approx(1.0) and np.all(d1.alpha > 0)
        assert d1.thetas.shape == (len(d1.groups), d1.items.shape[1])
        # whitened items: sample covariance the identity
        cov = np.cov(d1.items, rowvar=False)
        np.testing.assert_allclose(cov, np.eye(len(cov)), atol=1e-6)
    # the homogeneous regime's voters agree far more with each other than the opposed one's
    hom = preference_dataset(name, "homogeneous", seed=0)
    dis = preference_dataset(name, "disagreement", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AmbiguousRuleWarning)
        t_h = angular_mean(hom.thetas, hom.alpha)
    # the disagreement types' centroid directions are balanced and span fewer than d dimensions: the
    # angular mean leaves their span, and every direction off it does as well (not unique)
    with pytest.warns(AmbiguousRuleWarning):
        t_d = angular_mean(dis.thetas, dis.alpha)
    assert gaussian_agreement(t_h, hom.thetas).min() > gaussian_agreement(t_d, dis.thetas).max()
    agr = long_run_agreement(t_d, dis.thetas, items=dis.items)
    assert np.all((agr > 0) & (agr < 1))


def test_groups_come_from_the_data_and_kmeans():
    from sklearn import datasets

    wine = preference_dataset("wine", "disagreement", seed=0)
    target = datasets.load_wine(return_X_y=True)[1]
    np.testing.assert_allclose(np.sort(wine.alpha), np.sort(np.bincount(target) / len(target)), atol=0.1)
    assert wine.groups == ("cultivar_0", "cultivar_1", "cultivar_2")
    bc = preference_dataset("breast_cancer", "disagreement", seed=0)
    assert bc.groups == tuple(f"community_{g}" for g in range(4))


def test_quick_experiment_runs_and_is_deterministic():
    exp = AngularMeanExperiment()
    report = exp.run(quick=True, seeds=[0])
    assert [c.claim.key for c in report.claims] == [c.key for c in exp.claims]
    s = {k: v.mean for k, v in report.summary.items()}
    for key in ("angular_ip_rate", "arith_ip_rate", "perbatch_min_violation_rate", "homog_rule_spread"):
        assert 0.0 <= s[key] <= 1.0
    # IP is a theorem for the angular mean (exact closed form); its violation must vanish, and the
    # IP-optimising baseline satisfies it too
    assert s["angular_mean_violation"] <= 1e-6 and s["maxmin_mean_violation"] <= 1e-6
    assert s["mc_vs_closed_form_max_abs"] < 0.05
    assert s["perbatch_grid_check_abs"] == 0.0
    assert s["gap_angular_m128"] <= s["gap_angular_m2"]
    for m in exp.config(True).batch_sizes:  # a max of means is at most the mean of maxes
        assert s[f"wgap_angular_m{m}"] <= s[f"gap_angular_m{m}"] + 1e-12
    assert abs(s["tight_long_run_slack"]) < 1e-9  # the tight instance is tight
    assert s["disagree_min_ratio_gain_worst"] <= s["disagree_min_ratio_gain"]
    for name in DATASETS:
        lo, hi = (s[f"pref_{name}_disagreement_angular_min_ratio_{b}"] for b in ("lo", "hi"))
        assert lo <= s[f"pref_{name}_disagreement_angular_min_ratio"] <= hi
    assert len(report.tables) == 5
    again = exp.run_seed(0, quick=True, progress=Progress(enabled=False))
    assert again == report.per_seed[0]
    # one seed, no per-seed standard error: no interval, so no verdict either way
    by_key = {r.claim.key: r for r in report.claims}
    assert all(r.verdict == INCONCLUSIVE_1_SEED for r in report.claims)
    assert all(r.lo is None for r in report.claims if not isinstance(r.claim, SlopeClaim))
    # ... but the estimates of the theorem-backed claims sit on the predicted side
    assert by_key["angular_long_run_ip"].estimate >= 1.0
    assert by_key["per_batch_impossible"].estimate > 0.0
    assert by_key["per_batch_gap_shrinks"].estimate <= 0.5
    # the recorded configuration is the quick one, as JSON data
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))
    assert report.config["n_instances"] == 8 and report.config["batch_sizes"] == [2, 4, 8, 16, 32, 64, 128]


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = AngularMeanExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is AngularMeanConfig
    assert dataclasses.is_dataclass(quick) and type(quick).__dataclass_params__.frozen
    assert full == AngularMeanConfig() and quick != full
    assert quick.n_instances < full.n_instances and quick.n_batches < full.n_batches
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.n_instances = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="n_batches"):
        AngularMeanConfig(n_batches=0)
    with pytest.raises(ValueError, match="batch_sizes"):
        AngularMeanConfig(batch_sizes=(2, 8))
    with pytest.raises(ValueError, match="tight_sizes"):
        AngularMeanConfig(tight_sizes=(8, 16, 32))
    with pytest.raises(ValueError, match="minority_range"):
        AngularMeanConfig(minority_range=(0.3, 0.6))


def test_claims_declare_pairing_and_kind():
    claims = {c.key: c for c in AngularMeanExperiment.claims}
    # comparisons of rules on the same seed and items are paired
    assert claims["homogeneous_alike"].paired and claims["disagreement_angular_better"].paired
    # the preference data and the prior-work statement are not the paper's evidence
    assert claims["disagreement_angular_better_each"].paired
    for key in (
        "arith_majoritarian",
        "homogeneous_alike",
        "disagreement_angular_better",
        "disagreement_angular_better_each",
    ):
        assert claims[key].kind == "mechanism"
    # the rates are slopes over >= 3 sizes, judged against bands fixed in advance
    for key in ("per_batch_gap_rate", "per_batch_gap_rate_worst_type", "per_batch_gap_rate_tight"):
        assert isinstance(claims[key], SlopeClaim) and len(claims[key].sizes) >= 3
    assert AngularMeanExperiment.default_seeds >= 5
