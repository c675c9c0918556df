"""The quick experiment: frozen config, report structure, the slopes on a quick run, figure, seeding."""

import dataclasses

import pytest

from paperworks.core import INCONCLUSIVE_1_SEED
from paperworks.mlmc_npg.experiments import QUICK, MLMCNPGConfig, MLMCNPGExperiment


@pytest.fixture(scope="module")
def quick_report():
    return MLMCNPGExperiment().run(quick=True, seeds=1)


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = MLMCNPGExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is MLMCNPGConfig and quick == QUICK != full
    with pytest.raises(dataclasses.FrozenInstanceError):
        full.eta = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "bad",
    [
        {"n_states": 1},
        {"gamma": 1.0},
        {"max_level": 8},
        {"batch_grid": (16, 16)},
        {"budget_batch": 7},
        {"iterations": 5},
        {"level_offset": -1},
        {"sampled_advantages": "yes"},
    ],
)
def test_config_rejects_bad_settings(bad):
    with pytest.raises(ValueError, match="MLMCNPGConfig"):
        MLMCNPGConfig(**bad)


def test_quick_run_structure_and_claims(quick_report):
    exp = MLMCNPGExperiment()
    assert [c.claim.key for c in quick_report.claims] == [c.key for c in exp.claims]
    for c in quick_report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED and c.n == 1
    by = {c.claim.key: c for c in quick_report.claims}
    assert by["mlmc_beats_plugin_budget"].claim.paired
    s = quick_report.summary
    assert s["kink_distance"].mean < 1e-6  # the optimal policy's returns sit on the kink
    assert 0 <= s["censored_plugin_kinked"].mean <= 4
    assert len(quick_report.tables) == 5
    for p in ("plugin_kinked", "mlmc_kinked", "vanilla_smooth"):  # the ceiling check is recorded
        assert s[f"ceiling_ratio_{p}"].mean > 0 and s[f"ceiling_ratio_exact_{p}"].mean > 0
    assert s["gap0_kinked"].mean > 0 and s["gap0_smooth"].mean > 0


def test_headline_counts_the_advantage_rollouts():
    import numpy as np

    from paperworks.mlmc_npg import kinked_problem, mlmc_max_level, random_mdp

    exp, cfg = MLMCNPGExperiment(), QUICK
    mdp = random_mdp(cfg.n_states, cfg.n_actions, 2, cfg.gamma, rng=0)
    f = kinked_problem(mdp, kappa=cfg.kappa)
    pairs = cfg.n_states * cfg.n_actions
    for b in (1, 64):
        tr = exp._npg(mdp, f, "plugin_npg", b, cfg, np.random.default_rng(0), sampled=True)
        assert tr.rollouts[-1] == cfg.iterations * (b + pairs * -(-b // pairs))
        exact = exp._npg(mdp, f, "plugin_npg", b, cfg, np.random.default_rng(0), sampled=False)
        assert exact.rollouts[-1] == cfg.iterations * b  # the diagnostic counts the weights only
    # MLMC's truncation follows the budget: ceil(log2 b) + level_offset
    assert mlmc_max_level(64, cfg.level_offset) == 6 + cfg.level_offset


def test_bias_slopes_on_the_quick_run(quick_report):
    by = {c.claim.key: c for c in quick_report.claims}
    # one seed: the point estimate of each slope lies in the band, and MLMC's bias is far lower
    assert -0.6 <= by["plugin_bias_kinked"].estimate <= -0.4
    assert -1.1 <= by["plugin_bias_smooth"].estimate <= -0.9
    assert by["mlmc_bias_ratio"].estimate < 0.2


def test_figure_is_written(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = MLMCNPGExperiment().figures(quick_report, tmp_path)
    assert names == ["mlmc_npg.png"] and (tmp_path / names[0]).stat().st_size > 10_000


def test_one_seed_is_repeatable(quick_report):
    again = MLMCNPGExperiment().run(quick=True, seeds=1)
    assert again.per_seed == quick_report.per_seed
