import math

from paperworks.smnc_dag.experiments import SMNCExperiment


def test_quick_experiment_report_structure():
    report = SMNCExperiment().run(quick=True, seeds=1)
    assert report.slug == "smnc-dag"
    assert len(report.claims) == len(SMNCExperiment.claims)
    s = report.summary
    for name in ("smnc", "dagma", "product", "single", "smnc_anc"):
        assert 0 <= s[f"ER5.{name}.shd"].mean <= 20
        assert 0 <= s[f"ER5.{name}.tpr"].mean <= 1
    assert math.isnan(s["shd_gain_vs_notears"].mean)  # NOTEARS runs in full mode only
    assert s["closure.smnc_grad_slope_error"].mean < 1e-6
    assert "Closure studies (planted cycles)" in report.tables
    assert "| SMNC (separated + normalised closure) |" in next(iter(report.tables.values()))
