import dataclasses
import math

import pytest
import torch

from paperworks.herm import NeuralMessenger, SceneConfig, sample_episodes
from paperworks.herm.experiments import CHANNELS, METHODS, QUICK, HermConfig, HermExperiment


def _plain(v):
    """A config value as the report stores it: tuples become lists, recursively."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    return v


@pytest.fixture(scope="module")
def quick_report():
    return HermExperiment().run(quick=True, seeds=1)


def test_config_quick_and_full_are_one_frozen_dataclass(quick_report):
    exp = HermExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is HermConfig and quick is QUICK
    assert type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.dim = 3
    assert quick != full and full == HermConfig()
    assert quick_report.config == _plain(dataclasses.asdict(quick))
    assert quick_report.config["dim"] == 512 and quick_report.config["n_eval"] == 200


def test_config_validation():
    with pytest.raises(ValueError, match="dim"):
        HermConfig(dim=0)
    with pytest.raises(ValueError, match="false_alarm"):
        HermConfig(false_alarm=1.5)
    with pytest.raises(ValueError, match="channels"):
        HermConfig(channels=(("awgn0", CHANNELS["awgn0"]),))  # no clean channel
    with pytest.raises(ValueError, match="cap_snr_db"):
        HermConfig(cap_snr_db=(math.nan,))


def test_quick_experiment_report_structure_and_sanity(quick_report):
    report = quick_report
    assert [c.claim.key for c in report.claims] == [
        "task_success",
        "decoding_accuracy",
        "exact_clean",
        "readable",
        "capacity_theory",
    ]
    s = {k: v.mean for k, v in report.summary.items()}
    for m in METHODS:
        for c in CHANNELS:
            assert 0.0 <= s[f"{m}_{c}_success"] <= 1.0
    assert s["herm_clean_triple_acc"] == 1.0
    assert s["herm_clean_success"] == 1.0
    assert s["superposition_clean_success"] < 0.5  # entanglement: associations are lost
    assert s["capacity_abs_err"] < 0.05
    assert "Task success by channel" in report.tables
    # one seed: no interval, so no claim can hold or fail; the estimates of the claims that the full
    # run supports are on the predicate's side even in the quick run
    verdicts = {c.claim.key: c for c in report.claims}
    assert {c.verdict for c in report.claims} == {"inconclusive (1 seed)"}
    assert all(c.lo is None and c.n == 1 for c in report.claims)
    assert verdicts["exact_clean"].estimate == 1.0
    assert verdicts["readable"].estimate >= 0.95
    assert verdicts["capacity_theory"].estimate <= 0.03
    assert verdicts["task_success"].claim.paired and verdicts["decoding_accuracy"].claim.paired
    assert {verdicts[k].claim.kind for k in ("exact_clean", "readable", "capacity_theory")} == {"mechanism"}
    # the comparative margins are per-seed differences of the formats on the same episodes
    noisy = [c for c in CHANNELS if c != "clean"]
    margin = min(s[f"herm_{c}_success"] - s[f"{b}_{c}_success"] for c in noisy for b in METHODS[1:4])
    assert verdicts["task_success"].estimate == pytest.approx(margin)
    assert "| herm |" in report.tables["Task success by channel"]


def test_seeded_determinism_of_data_and_training():
    def once():
        g = torch.Generator().manual_seed(11)
        torch.manual_seed(11)
        ep = sample_episodes(64, SceneConfig(), g)
        net = NeuralMessenger(SceneConfig(), n_symbols=32, hidden=16).fit(3, batch=16, generator=g)
        with torch.no_grad():
            return ep.table, net.encode(ep.table)

    (t1, m1), (t2, m2) = once(), once()
    assert torch.equal(t1, t2) and torch.equal(m1, m2)


def test_episodes_are_consistent():
    ep = sample_episodes(500, SceneConfig(), torch.Generator().manual_seed(0))
    n = ep.present.sum(1)
    assert int(n.min()) >= 3 and int(n.max()) <= 5
    assert bool(ep.present[torch.arange(500), ep.target].all())
    assert bool(((ep.table >= 0) == ep.present[..., None]).all())
    pos = ep.target_pos_receiver
    assert int(pos.abs().max()) <= 7
