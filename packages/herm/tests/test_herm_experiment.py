import dataclasses
import math

import pytest
import torch

from paperworks.herm import NeuralMessenger, SceneConfig, sample_episodes
from paperworks.herm.experiments import BASELINES, CHANNELS, METHODS, QUICK, HermConfig, HermExperiment


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
    assert exp.default_seeds >= 5  # paired comparative claims: >= 5 seeds in the full run
    assert full.prior_present == pytest.approx(0.8)  # 3, 4 or 5 of 5 slots


def test_config_validation():
    with pytest.raises(ValueError, match="dim"):
        HermConfig(dim=0)
    with pytest.raises(ValueError, match="false_alarm"):
        HermConfig(false_alarm=1.5)
    with pytest.raises(ValueError, match="channels"):
        HermConfig(channels=(("awgn0", CHANNELS["awgn0"]),))  # no clean channel
    with pytest.raises(ValueError, match="cap_snr_db"):
        HermConfig(cap_snr_db=(math.nan,))
    with pytest.raises(ValueError, match="cap_band"):
        HermConfig(cap_band=(0.9, 0.1))


def test_quick_experiment_report_structure_and_sanity(quick_report):
    report = quick_report
    assert [c.claim.key for c in report.claims] == [
        "task_success",
        "task_success_everywhere",
        "decoding_accuracy",
        "decoding_accuracy_everywhere",
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
    assert s["numeric_clean_success"] == 1.0  # the repeated numeric message is exact without noise
    assert s["superposition_clean_success"] < 0.5  # entanglement: associations are lost
    assert s["capacity_n_unsaturated"] >= 3
    assert s["capacity_max_err"] < 0.06
    assert "Task success by channel" in report.tables and "Neural baseline training" in report.tables
    # one seed: no interval, so no claim can hold or fail
    verdicts = {c.claim.key: c for c in report.claims}
    assert {c.verdict for c in report.claims} == {"inconclusive (1 seed)"}
    assert all(c.lo is None and c.n == 1 for c in report.claims)
    assert verdicts["exact_clean"].estimate == 1.0
    assert verdicts["readable"].estimate >= 0.95
    paired = [k for k in verdicts if k.startswith(("task", "decoding"))]
    assert all(verdicts[k].claim.paired for k in paired)
    assert {verdicts[k].claim.kind for k in ("exact_clean", "readable", "capacity_theory")} == {"mechanism"}
    # the comparative quantities are per-seed differences of the formats on the same episodes
    noisy = [c for c in CHANNELS if c != "clean"]
    margin = min(s[f"herm_{c}_success"] - s[f"{b}_{c}_success"] for c in noisy for b in BASELINES)
    assert verdicts["task_success_everywhere"].estimate == pytest.approx(margin)
    mean_min = min(
        sum(s[f"herm_{c}_success"] - s[f"{b}_{c}_success"] for c in noisy) / len(noisy) for b in BASELINES
    )
    assert verdicts["task_success"].estimate == pytest.approx(mean_min)
    # the decision is MAP, the list is gated: the list never reports more than the decision
    for c in CHANNELS:
        assert s[f"herm_listed_{c}_coverage"] <= s[f"herm_{c}_coverage"] + 1e-9


def test_figure_is_written(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = HermExperiment().figures(quick_report, tmp_path)
    assert names == ["task_success.png"]
    png = tmp_path / names[0]
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_experiment_takes_its_device_from_the_core(monkeypatch):
    from paperworks.herm import experiments

    monkeypatch.setenv("PAPERWORKS_DEVICE", "cpu")
    assert experiments._device() == torch.device("cpu")
    monkeypatch.delenv("PAPERWORKS_DEVICE")
    assert experiments._device() == torch.device("cpu")  # the default stays the CPU
    if not torch.cuda.is_available():
        monkeypatch.setenv("PAPERWORKS_DEVICE", "cuda")
        with pytest.raises(ValueError, match="cuda"):
            HermExperiment().run_seed(0, quick=True, progress=None)


def test_seeded_determinism_of_data_and_training():
    def once():
        g = torch.Generator().manual_seed(11)
        torch.manual_seed(11)
        ep = sample_episodes(64, SceneConfig(), g)
        net = NeuralMessenger(SceneConfig(), n_symbols=32, hidden=16).fit(
            4, batch=16, generator=g, eval_every=2
        )
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
