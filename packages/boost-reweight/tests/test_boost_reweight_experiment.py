import math

import pytest

from paperworks.boost_reweight.experiments import METHODS, QUICK, BoostReweightConfig, BoostReweightExperiment
from paperworks.core import INCONCLUSIVE_1_SEED


@pytest.fixture(scope="module")
def quick_report():
    return BoostReweightExperiment().run(quick=True, seeds=1)


def test_quick_report_structure_and_one_seed_verdicts(quick_report):
    m = quick_report.per_seed[0]
    assert [c.claim.key for c in quick_report.claims] == [c.key for c in BoostReweightExperiment.claims]
    for c in quick_report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED and c.n == 1
    for name in METHODS:
        assert 0.0 <= m[f"success_{name}"] <= 1.0
    assert m["success_best_baseline"] == max(
        m[f"success_{b}"] for b in ("real_only", "uniform", "topq", "rwr", "dc")
    )
    assert all(math.isfinite(v) for v in m.values())
    # neither at floor nor at ceiling for real-only and uniform; the oracle is a real upper reference
    assert 0.05 < m["success_real_only"] < 0.95 and 0.05 < m["success_uniform"] < 0.95
    assert m["success_oracle"] > m["success_uniform"]
    # the sweep's ESS is the uniform pool size at T = inf and falls at the sharpest temperature
    assert m["sweep_ess/t0"] == pytest.approx(QUICK.n_synthetic)
    assert m["sweep_ess/t2"] < m["sweep_ess/t0"]
    assert "Success rate by method" in quick_report.to_markdown()


def test_figure_is_written(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = BoostReweightExperiment().figures(quick_report, tmp_path)
    assert names and (tmp_path / names[0]).stat().st_size > 10_000


def test_config_is_frozen_and_checked():
    cfg = BoostReweightConfig()
    with pytest.raises(AttributeError):
        cfg.n_real = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="grid"):
        BoostReweightConfig(q_grid=(0.5,))
    with pytest.raises(ValueError, match="temperatures"):
        BoostReweightConfig(temperatures=(float("inf"), 1.0, -1.0))
    assert type(QUICK) is type(cfg)
