"""Data generators, determinism, and the quick reproduction."""

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
from paperworks.angular_mean.experiments import AngularMeanExperiment


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
