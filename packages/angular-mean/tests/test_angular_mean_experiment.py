"""Data generators, determinism, and the quick reproduction."""

import dataclasses
import json

import numpy as np
import pytest

from paperworks.angular_mean import (
    DATASETS,
    REGIMES,
    angular_mean,
    gaussian_agreement,
    high_disagreement_instance,
    long_run_agreement,
    preference_dataset,
)
from paperworks.angular_mean.experiments import AngularMeanConfig, AngularMeanExperiment
from paperworks.core.claims import INCONCLUSIVE_1_SEED


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
    for regime in REGIMES:
        d1 = preference_dataset(name, regime, seed=1)
        d2 = preference_dataset(name, regime, seed=1)
        np.testing.assert_array_equal(d1.thetas, d2.thetas)
        assert d1.alpha.sum() == pytest.approx(1.0) and np.all(d1.alpha > 0)
        assert d1.thetas.shape == (len(d1.groups), d1.items.shape[1])
        # whitened items: sample covariance the identity
        cov = np.cov(d1.items, rowvar=False)
        np.testing.assert_allclose(cov, np.eye(len(cov)), atol=1e-6)
    # the homogeneous regime's voters agree far more with each other than the opposed one's
    hom = preference_dataset(name, "homogeneous", seed=0)
    dis = preference_dataset(name, "disagreement", seed=0)
    t_h, t_d = angular_mean(hom.thetas, hom.alpha), angular_mean(dis.thetas, dis.alpha)
    assert gaussian_agreement(t_h, hom.thetas).min() > gaussian_agreement(t_d, dis.thetas).max()
    agr = long_run_agreement(t_d, dis.thetas, items=dis.items)
    assert np.all((agr > 0) & (agr < 1))


def test_quick_experiment_runs_and_is_deterministic():
    exp = AngularMeanExperiment()
    report = exp.run(quick=True, seeds=[0])
    assert [c.claim.key for c in report.claims] == [c.key for c in exp.claims]
    s = {k: v.mean for k, v in report.summary.items()}
    for key in ("angular_ip_rate", "arith_ip_rate", "perbatch_min_violation_rate", "homog_rule_spread"):
        assert 0.0 <= s[key] <= 1.0
    # IP is a theorem for the angular mean (exact closed form); its violation must vanish
    assert s["angular_mean_violation"] <= 1e-6
    assert s["mc_vs_closed_form_max_abs"] < 0.05
    assert s["perbatch_grid_check_abs"] == 0.0
    assert s["gap_angular_m128"] <= s["gap_angular_m2"]
    assert len(report.tables) == 3
    again = exp.run_seed(0, quick=True, progress=__import__("paperworks.core").core.Progress(enabled=False))
    assert again == report.per_seed[0]
    # one seed, no per-seed standard error: no interval, so no verdict either way
    by_key = {r.claim.key: r for r in report.claims}
    assert all(r.verdict == INCONCLUSIVE_1_SEED and r.lo is None for r in report.claims)
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
    with pytest.raises(ValueError, match="minority_range"):
        AngularMeanConfig(minority_range=(0.3, 0.6))


def test_claims_declare_pairing_and_kind():
    claims = {c.key: c for c in AngularMeanExperiment.claims}
    # comparisons of rules on the same seed and items are paired
    assert claims["homogeneous_alike"].paired and claims["disagreement_angular_better"].paired
    # the preference data and the prior-work statement are not the paper's evidence
    for key in ("arith_majoritarian", "homogeneous_alike", "disagreement_angular_better"):
        assert claims[key].kind == "mechanism"
    assert AngularMeanExperiment.default_seeds >= 5
