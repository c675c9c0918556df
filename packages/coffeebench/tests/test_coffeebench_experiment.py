import numpy as np
import pytest

from paperworks.coffeebench.experiments import QUICK, CoffeeBenchConfig, CoffeeBenchExperiment, spearman
from paperworks.core import load_experiment


def test_spearman_matches_hand_values():
    assert spearman(np.array([0, 1, 2, 3]), np.array([4.0, 3.0, 2.0, 1.0])) == -1.0
    assert spearman(np.array([0, 1, 2, 3]), np.array([1.0, 3.0, 2.0, 4.0])) == pytest.approx(0.8)
    assert spearman(np.array([0, 1, 2]), np.array([1.0, 1.0, 1.0])) == 0.0


def test_config_validation():
    with pytest.raises(ValueError, match="idle_probs"):
        CoffeeBenchConfig(idle_probs=(0.5, 0.2, 0.1))
    with pytest.raises(ValueError, match="days"):
        CoffeeBenchConfig(days=0)


def test_quick_run_claims_and_figure(tmp_path):
    exp = load_experiment("coffeebench")
    assert isinstance(exp, CoffeeBenchExperiment) and exp.config(True) == QUICK
    report = exp.run(quick=True, seeds=2)
    by = {c.claim.key: c for c in report.claims}
    assert by["passive_closed_form"].verdict == "holds"  # exact, every seed
    assert by["negotiator_messages_more"].verdict == "holds"
    for s in report.per_seed:
        assert all(np.isfinite(v) for v in s.values())
        assert s["passive_gap_abs"] <= 0.005
    plt = pytest.importorskip("matplotlib")
    assert plt
    names = exp.figures(report, tmp_path)
    png = tmp_path / names[0]
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
