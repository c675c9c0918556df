import dataclasses
import json
import math

import pytest

from paperworks.smnc_dag.experiments import QUICK, SMNCExperiment, SMNCExperimentConfig

EXACT = {"product-decays", "grad-1-over-L"}


@pytest.fixture(scope="module")
def report():
    return SMNCExperiment().run(quick=True, seeds=1)


def test_quick_experiment_report_structure(report):
    assert report.slug == "smnc-dag"
    assert len(report.claims) == len(SMNCExperiment.claims)
    s = report.summary
    for name in ("smnc", "dagma", "product", "single", "smnc_anc", "notears"):
        assert 0 <= s[f"ER5.{name}.shd"].mean <= 20
        assert 0 <= s[f"ER5.{name}.tpr"].mean <= 1
    # the gains are differences of the per-method SHDs on the same data (one setting in quick)
    for gain, a, b in (
        ("shd_gain_vs_dagma", "dagma", "smnc"),
        ("shd_gain_vs_notears", "notears", "smnc"),
        ("shd_gain_vs_product", "product", "smnc"),
        ("shd_gain_vs_single", "single", "smnc"),
        ("shd_gain_from_ancestry", "smnc", "smnc_anc"),
    ):
        assert s[gain].mean == s[f"ER5.{a}.shd"].mean - s[f"ER5.{b}.shd"].mean
    assert s["closure.smnc_grad_slope_error"].mean < 1e-6
    assert "Closure studies (planted cycles)" in report.tables
    assert "| SMNC (separated + normalised closure) |" in next(iter(report.tables.values()))
    assert "| NOTEARS linear |" in next(iter(report.tables.values()))


def test_quick_verdicts_one_seed(report):
    by_key = {r.claim.key: r for r in report.claims}
    for key, r in by_key.items():
        assert r.n == 1
        assert r.estimate == report.per_seed[0][r.claim.metric]
        if key in EXACT:
            # identities: judged on the value itself, reported apart from the evidence
            assert r.claim.exact and r.verdict == "holds" and r.estimate <= 1e-6
        else:
            assert not r.claim.exact
            assert r.verdict == "inconclusive (1 seed)" and r.lo is None and r.hi is None
    assert by_key["cycles-survive"].claim.kind == "mechanism"
    paired = {k for k, r in by_key.items() if r.claim.paired}
    assert paired == {
        "beats-dagma",
        "beats-notears",
        "normalisation-ablation",
        "separation-ablation",
        "ancestry-helps",
    }


def test_config_quick_and_full_are_one_frozen_dataclass(report):
    exp = SMNCExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is SMNCExperimentConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.survival_steps = 1
    assert quick != full and full == SMNCExperimentConfig()
    assert report.config == json.loads(json.dumps(dataclasses.asdict(quick)))
    assert exp.default_seeds >= 5


@pytest.mark.parametrize(
    "bad",
    [
        {"settings": ()},
        {"settings": (("XX", 5, 200),)},
        {"settings": (("ER", 5, 4),)},
        {"closure_lengths": (2, 3, 8)},
        {"closure_lengths": (2, 4)},
        {"notears_max_d": 4, "settings": (("ER", 5, 200),)},
        {"ancestry_fraction": 0.0},
        {"survival_steps": 0},
        {"closure_p": 1.0},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError):
        SMNCExperimentConfig(**bad)


def test_full_config_is_the_documented_run():
    full = SMNCExperimentConfig()
    assert [d for _, d, _ in full.settings] == [10, 20, 20]
    assert math.isclose(full.ancestry_fraction, 0.3)
