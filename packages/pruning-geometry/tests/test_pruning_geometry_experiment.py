import math

import pytest
import torch

from paperworks.core import load_experiment
from paperworks.pruning_geometry.experiments import QUICK, PruningGeometryConfig, spearman
from paperworks.pruning_geometry.quick_models import MODEL_DIR, train_model


@pytest.fixture(scope="module")
def quick_report():
    exp = load_experiment("pruning-geometry")
    return exp, exp.run(quick=True)


def test_quick_run_claims_and_competence(quick_report):
    exp, report = quick_report
    assert {c.key for c in exp.claims} == {r.claim.key for r in report.claims}
    seed = report.per_seed[0]
    assert all(math.isfinite(v) for v in seed.values())
    # the models are competent in distribution but below ceiling (so pruning could raise ID accuracy and
    # "no ID benefit" can fail), and the OOD task is neither trivial nor at floor (chance: 10% for the LM)
    assert 0.85 < seed["lm_id_val_full"] < 0.99 and 0.85 < seed["lm_id_full"] < 0.99
    assert 0.6 < seed["poly_id_val_full"] < 0.95 and 0.6 < seed["poly_id_full"] < 0.95
    assert 0.12 < seed["lm_ood_full"] < 0.8 and 0.1 < seed["poly_ood_full"] < 0.9
    # OOD distorts the profiles far more than a second ID sample does
    for f in ("poly", "lm"):
        assert seed[f"{f}_D_full"] > 10 * seed[f"{f}_D_idid"]
        assert seed[f"{f}_curve_D_a0"] == pytest.approx(seed[f"{f}_D_tale"])
    # a depth where TALE removed nothing is flagged as having nothing to measure
    table = report.tables["Claims with nothing to measure (TALE removed no layer)"]
    for f in ("poly", "lm"):
        for r in (1, 2, 3):
            nothing = seed[f"{f}_d{r}_n_removed"] == 0
            assert (f"ood_benefit_{f}_depth{r}: nothing to measure" in table) == nothing


def test_quick_figure(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    exp, report = quick_report
    names = exp.figures(report, tmp_path)
    assert names and (tmp_path / names[0]).stat().st_size > 10_000


def test_shipped_model_regenerates():
    torch.manual_seed(123)  # the script must not depend on the global state
    new = train_model("lm", 2, 0, QUICK)
    old = torch.load(MODEL_DIR / "lm_L2.pt", weights_only=True)
    state = new.state_dict()
    assert state.keys() == old.keys()
    for k in old:
        torch.testing.assert_close(state[k], old[k], atol=1e-5, rtol=1e-5)


def test_config_checks_and_spearman():
    with pytest.raises(ValueError, match="depths"):
        PruningGeometryConfig(depths=(4, 4, 8))
    with pytest.raises(ValueError, match="alphas"):
        PruningGeometryConfig(alphas=(0.0, 0.5, 1.0))
    assert spearman([0, 1, 2], [3, 3, 3]) == 0.0
    assert spearman([0, 1, 2], [3, 2, 1]) == pytest.approx(-1.0)
