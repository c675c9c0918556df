import math

import pytest

from paperworks.core import INCONCLUSIVE_1_SEED
from paperworks.omnisteer.experiments import METHODS, QUICK, OmniSteerExperiment

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def quick_report():
    return OmniSteerExperiment().run(quick=True, seeds=1)


def test_quick_report_structure_and_sanity(quick_report):
    m = quick_report.per_seed[0]
    assert [c.claim.key for c in quick_report.claims] == [c.key for c in OmniSteerExperiment.claims]
    for name in METHODS:
        for q in ("rsr", "bar", "acc"):
            assert 0.0 <= m[f"{q}_{name}_pts"] <= 100.0
    assert all(math.isfinite(v) for v in m.values())
    assert 1 / 3 - 1e-9 <= m["energy_share_min"] <= 1.0
    assert m["dissolution_ratio"] > 0
    assert 0 <= m["grid_index_omnisteer"] < len(QUICK.strength_grid)
    md = quick_report.to_markdown()
    assert "Test-split rates by method" in md and "OmniSteer" in md


def test_quick_claims_one_seed_verdicts(quick_report):
    m = quick_report.per_seed[0]
    by = {c.claim.key: c for c in quick_report.claims}
    for c in quick_report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED and c.n == 1
    assert by["rsr_gain"].estimate == pytest.approx(m["rsr_omnisteer_pts"] - m["rsr_none_pts"])
    assert by["beats_fixed"].estimate == pytest.approx(
        m["bar_omnisteer_pts"] - m["bar_fixed_golden_matched_pts"]
    )
    assert by["vulnerability"].claim.kind == "mechanism" and by["rsr_gain"].claim.kind == "paper"


def test_figure_is_a_png(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = OmniSteerExperiment().figures(quick_report, tmp_path)
    assert names and (tmp_path / names[0]).stat().st_size > 10_000
    assert (tmp_path / names[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_seed_repeats():
    tiny = {
        "base_steps": 8,
        "n_align_per_cell": 8,
        "n_val_per_cell": 8,
        "n_test_per_cell": 8,
        "adapter_steps": 2,
    }
    a = OmniSteerExperiment().configure(tiny).run_one(3, quick=True).metrics
    b = OmniSteerExperiment().configure(tiny).run_one(3, quick=True).metrics
    assert a == b


def test_auc_matches_pairwise_counting_and_probe_separates():
    import numpy as np
    import torch

    from paperworks.omnisteer.experiments import _auc, _bisect_strength, _probe_scores

    rng = np.random.default_rng(0)
    s, y = rng.integers(0, 5, 40).astype(float), rng.integers(0, 2, 40)
    pairs = [(a, b) for a in s[y == 1] for b in s[y == 0]]
    brute = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs) / len(pairs)
    assert _auc(s, y) == pytest.approx(brute)
    x = torch.randn(200, 6, dtype=torch.float64)
    lab = (x[:, 2] > 0).long()
    assert _auc(_probe_scores(x[:100], lab[:100], x[100:]), lab[100:]) > 0.95
    # bisection: RSR a step at strength 3 -> the smallest strength reaching it, near 3 from above
    mult, ok = _bisect_strength(lambda m: float(m >= 3.0), 1.0, 1 / 16, 64, 8)
    assert ok and 3.0 <= mult < 3.0 * 1.1
    assert _bisect_strength(lambda m: 0.0, 1.0, 1 / 16, 64, 3) == (64.0, False)
