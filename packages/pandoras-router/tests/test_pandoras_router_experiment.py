"""The quick reproduction: structure, sanity, verdicts on intervals, the figure, the device, determinism."""

import dataclasses
import json

import pytest

from paperworks.core.claims import HOLDS, INCONCLUSIVE_1_SEED
from paperworks.pandoras_router.experiments import (
    POLICIES,
    QUICK,
    PandorasRouterConfig,
    PandorasRouterExperiment,
    run_domain,
)

DOMAINS = ("multi_llm", "retrieval", "reasoning")


@pytest.fixture(scope="module")
def quick3():
    """Three quick seeds (a few seconds), shared by the tests below."""
    exp = PandorasRouterExperiment(embed="hashing")
    return exp, exp.run(quick=True, seeds=3)


def test_run_domain_is_deterministic_per_seed():
    a, _ = run_domain("reasoning", 200, 3, embed="hashing")
    b, _ = run_domain("reasoning", 200, 3, embed="hashing")
    c, _ = run_domain("reasoning", 200, 4, embed="hashing")
    assert a == b
    assert a != c


def test_quick_experiment_report_structure_and_sanity(quick3):
    exp, report = quick3
    assert report.slug == "pandoras-router"
    assert len(report.claims) == 15
    s = {k: v.mean for k, v in report.summary.items()}
    for d in DOMAINS:
        k = 11 if d == "multi_llm" else 6
        for pol in POLICIES:  # the oracle bounds every policy
            assert s[f"{d}_{pol}_gross"] <= s[f"{d}_oracle_gross"] + 1e-12
        assert s[f"{d}_exhaustive_calls"] == k
        assert 0 <= s[f"{d}_call_ratio"] <= 1
        assert s[f"{d}_router_net"] >= s[f"{d}_cheap_net"]
        # the budget-matched baselines spend what the Router spends
        assert s[f"{d}_random_calls"] == pytest.approx(s[f"{d}_router_calls"])
        assert s[f"{d}_uncertainty_matched_calls"] == pytest.approx(s[f"{d}_router_calls"], abs=0.05)
        # the input-dependent std is calibrated on held-out queries and does vary by input
        assert 0.8 < s[f"{d}_z2_input_std"] < 1.2 and s[f"{d}_std_spread"] > 0.05
        assert s[f"{d}_loglik_gain_input_std"] > 0
        assert s[f"{d}_fitted_resid_corr"] > 0.1 and s[f"{d}_test_resid_corr"] > 0.1
    assert 0 < s["bidder_posted_sd0.02_voi_self_assess_rate"] < 1
    assert s["bidder_posted_sd0.02_always_self_assess_rate"] == 1.0
    assert s["bidder_acc_eff_gain"] == s["bidder_posted_sd0.02_eff_gain"]
    assert "Pandora's Bidder across market models (multi_llm test split)" in report.tables
    assert any(t.startswith("Ablation") for t in report.tables)
    md = report.to_markdown()
    assert "multi_llm_matches_exhaustive" in md and "reasoning_beats_matched_uncertainty" in md
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))
    assert report.config["n_queries"] == 600 and report.config["embedding"] == "hashing"


def test_quick_verdicts_on_three_seeds(quick3):
    _, report = quick3
    res = {r.claim.key: r for r in report.claims}
    for d in DOMAINS:
        assert res[f"{d}_beats_cheap"].verdict == HOLDS and res[f"{d}_beats_cheap"].claim.paired
        assert res[f"{d}_matches_exhaustive"].n == 3 and res[f"{d}_matches_exhaustive"].lo > 0.95
        assert res[f"{d}_fewer_calls"].hi < 1.0  # below exhaustive's calls whatever the verdict on 0.4
        assert res[f"{d}_beats_matched_uncertainty"].claim.kind == "mechanism"


def test_one_seed_has_no_interval(quick3):
    exp, report = quick3
    results = [c.judge(report.per_seed[:1]) for c in exp.claims]
    assert all(r.verdict == INCONCLUSIVE_1_SEED and r.lo is None for r in results)


def test_figure_is_written_with_seed_spread(quick3, tmp_path):
    pytest.importorskip("matplotlib")
    exp, report = quick3
    names = exp.figures(report, tmp_path)
    assert names == ["quality_vs_cost.png"]
    png = tmp_path / names[0]
    assert png.stat().st_size > 20_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_figures_skip_cleanly_without_matplotlib(quick3, tmp_path, monkeypatch):
    import paperworks.pandoras_router.experiments as ex

    exp, report = quick3
    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert exp.figures(report, tmp_path) == [] and not any(tmp_path.iterdir())


def test_device_comes_from_the_core(monkeypatch):
    monkeypatch.setenv("PAPERWORKS_DEVICE", "cpu")
    assert PandorasRouterExperiment.device() == "cpu"
    monkeypatch.delenv("PAPERWORKS_DEVICE")
    assert PandorasRouterExperiment.device() == "cpu"  # the CPU unless a device is asked for
    monkeypatch.setenv("PAPERWORKS_DEVICE", "tpu")
    with pytest.raises(ValueError, match="device"):
        PandorasRouterExperiment.device()


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = PandorasRouterExperiment(embed="hashing")
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PandorasRouterConfig
    assert type(quick).__dataclass_params__.frozen
    assert quick == QUICK and full == dataclasses.replace(PandorasRouterConfig(), embedding="hashing")
    assert quick.n_queries < full.n_queries
    assert PandorasRouterExperiment(embed="minilm").config(True).embedding == "minilm"
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.lam = 3.0  # type: ignore[misc]
    assert set(full.markets) >= {"posted_sd0.02", "posted_sd0.3", "shaded_sd0.1", "selfassess", "cheapclaims"}


def test_the_independent_belief_is_the_old_rule():
    """router_indep is 0.2.0's Router: with the new belief model switched off both Routers coincide."""
    cfg = dataclasses.replace(QUICK, heteroscedastic=False, correlated=False)
    out, _ = run_domain("multi_llm", 300, 0, embed="hashing", config=cfg)
    for key in ("gross", "net", "calls"):
        assert out[f"router_{key}"] == out[f"router_indep_{key}"]
    new, _ = run_domain("multi_llm", 300, 0, embed="hashing", config=QUICK)
    assert new["router_calls"] != new["router_indep_calls"]
