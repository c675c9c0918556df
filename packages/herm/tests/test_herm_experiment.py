import torch

from paperworks.herm import NeuralMessenger, SceneConfig, sample_episodes
from paperworks.herm.experiments import CHANNELS, METHODS, HermExperiment


def test_quick_experiment_report_structure_and_sanity():
    report = HermExperiment().run(quick=True, seeds=1)
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
