import pytest

from paperworks.core import load_experiment
from paperworks.toppo.experiments import QUICK, TOPPOExperiment, TOPPOExperimentConfig


@pytest.fixture(scope="module")
def report():
    return TOPPOExperiment().run(quick=True)


def test_quick_claims(report):
    verdicts = {r.claim.key: r.verdict for r in report.claims}
    assert verdicts["parameters"] == "holds"
    valid = {"holds", "inconclusive", "not reproduced", "inconclusive (1 seed)"}
    assert all(r.verdict in valid for r in report.claims)
    rec = report.per_seed[0]
    assert rec["params/toppo_minus_vanilla"] == 256
    for m in ("toppo", "vanilla", "sac", "no_popart", "no_ln", "no_combiners"):
        assert f"{m}/tail" in rec and f"{m}/mean@25" in rec


def test_registered_and_config():
    assert isinstance(load_experiment("toppo"), TOPPOExperiment)
    assert TOPPOExperiment().config(True) == QUICK
    assert type(QUICK) is TOPPOExperimentConfig
    with pytest.raises(ValueError, match="methods"):
        TOPPOExperimentConfig(methods=("toppo",))
    with pytest.raises(ValueError, match="total_steps"):
        TOPPOExperimentConfig(total_steps=0)
    with pytest.raises(ValueError, match="no_ln_lr"):
        TOPPOExperimentConfig(no_ln_lr=0.0)
    cfg = TOPPOExperimentConfig(no_popart_lr=7e-3, vanilla_lr=2e-2)
    assert cfg.ppo_config("no_popart").lr == 7e-3 and not cfg.ppo_config("no_popart").popart
    assert cfg.ppo_config("vanilla").lr == 2e-2 and cfg.ppo_config("toppo").lr == cfg.toppo_lr
    assert cfg.sac_config().gradient_steps == cfg.sac_gradient_steps


def test_figure_written(report, tmp_path):
    pytest.importorskip("matplotlib")
    names = TOPPOExperiment().figures(report, tmp_path)
    assert names and (tmp_path / names[0]).stat().st_size > 10_000
