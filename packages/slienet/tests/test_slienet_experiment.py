import dataclasses
import math

import pytest
import torch

from paperworks.core import INCONCLUSIVE_1_SEED
from paperworks.slienet import TrainConfig, predict_all, resnet56, train_multi_exit
from paperworks.slienet.experiments import QUICK, SlieConfig, SlieExperiment


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PAPERWORKS_DEVICE", "cpu")
        exp = SlieExperiment()
        report = exp.run(quick=True, seeds=1)
        folder = tmp_path_factory.mktemp("figures")
        figures = exp.figures(report, folder)
    return report, folder, figures


def _lists(x):
    """What a report's JSON-friendly config holds: tuples as lists."""
    if isinstance(x, dict):
        return {k: _lists(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_lists(v) for v in x]
    return x


def test_training_is_seeded():
    x = torch.randn(40, 1, 8, 8)
    y = torch.arange(40) % 4
    outs = []
    for _ in range(2):
        torch.manual_seed(3)
        m = resnet56(4, width=4, blocks_per_stage=1, image_size=8, in_channels=1, num_ics=2)
        train_multi_exit(m, x, y, TrainConfig(mode="slie", epochs=2, batch_size=16), seed=5)
        outs.append(predict_all(m, x)[1])
    assert torch.equal(outs[0], outs[1])


def test_schedule_follows_the_authors_epochs(monkeypatch):
    """Progress of the IC weight ramp is epoch / E (1-based, constant within an epoch) and the cosine
    learning rate is stepped once per epoch, as in the authors' loop."""
    import paperworks.slienet.training as tr

    seen_progress, seen_lr = [], []
    real_w, real_step = tr.sdn_ic_weights, tr.NesterovSGD.step
    monkeypatch.setattr(tr, "sdn_ic_weights", lambda c, p: seen_progress.append(p) or real_w(c, p))
    monkeypatch.setattr(tr.NesterovSGD, "step", lambda self, lr: seen_lr.append(lr) or real_step(self, lr))
    m = resnet56(4, width=4, blocks_per_stage=1, image_size=8, in_channels=1, num_ics=2)
    train_multi_exit(m, torch.randn(32, 1, 8, 8), torch.arange(32) % 4, TrainConfig(epochs=4, batch_size=8))
    assert seen_progress == [0.25, 0.5, 0.75, 1.0]
    expected = [0.05 * (1 + math.cos(math.pi * e / 4)) for e in range(4) for _ in range(4)]
    assert seen_lr == pytest.approx(expected)
    assert TrainConfig().weight_decay == 1e-4


def test_quick_experiment_report(quick_report):
    report, _, _ = quick_report
    assert [c.claim.key for c in report.claims] == [
        "acc_vs_vanilla",
        "acc_vs_sdn",
        "acc_vs_ztw",
        "subsecond_search",
        "latency_vs_vanilla",
        "sdn_slower",
        "zero_deadline_misses",
    ]
    s = {k: v.mean for k, v in report.summary.items()}
    for b in ("resnet", "vgg", "mobilenet"):  # all three backbones run (issue 36)
        for m in ("vanilla", "slie5", "sdn_dynamic", "sdn_slie5", "ztw_dynamic", "slie_final"):
            assert 0.0 <= s[f"{b}_acc_{m}"] <= 1.0
        assert 1 <= s[f"{b}_slie_subset_size"] <= 5
        assert 0 < s[f"{b}_flops_slie5_rel"] < 1  # the plan is truncated
        assert s[f"{b}_calib_search_ms"] < 1000  # sub-second search
        costs = [s[f"{b}_ic{j}_cost"] for j in range(1, 7)]
        assert costs == sorted(costs) and 0 < costs[0] and costs[-1] < 1
    for k in ("vanilla_p50_ms", "slie_p50_ms", "sdn_p50_ms", "deadline_ms"):
        assert math.isfinite(s[k]) and s[k] > 0
    assert 0 < s["full_flops_slie5_rel"] < 1 and 0 < s["full_flops_sdn_rel"] <= 1
    assert s["latency_calls_per_variant"] == QUICK.latency_rounds
    assert s["test_images"] == QUICK.n_classes * QUICK.test_per_class
    assert "Latency at batch size 1 (full-size ResNet-56, 32 x 32)" in report.tables
    assert "Diagnostics: paired differences per backbone" in report.tables


def test_quick_claims_declarations_and_one_seed_verdicts(quick_report):
    """One seed gives no interval: every claim is inconclusive (1 seed) with the per-seed value as its
    estimate; the accuracy claims are paired differences recomputed from the per-backbone accuracies."""
    report, _, _ = quick_report
    m = report.per_seed[0]
    by_key = {c.claim.key: c for c in report.claims}
    for c in report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED and c.n == 1 and c.lo is None and c.hi is None
        assert c.estimate == m[c.claim.metric]
        assert not c.claim.exact and c.claim.kind == "paper"
    for key in ("acc_vs_vanilla", "acc_vs_sdn", "acc_vs_ztw", "latency_vs_vanilla", "sdn_slower"):
        assert by_key[key].claim.paired
    assert not by_key["zero_deadline_misses"].claim.paired
    timing = {c.claim.key for c in report.claims if c.claim.machine_dependent}
    assert timing == {"subsecond_search", "latency_vs_vanilla", "sdn_slower", "zero_deadline_misses"}
    bbs = ("resnet", "vgg", "mobilenet")
    sdn = sum(m[f"{b}_acc_slie5"] - m[f"{b}_acc_sdn_dynamic"] for b in bbs) / 3
    ztw = m["resnet_acc_slie5"] - m["resnet_acc_ztw_dynamic"]
    van = m["resnet_acc_slie5"] - m["resnet_acc_vanilla"]
    assert by_key["acc_vs_vanilla"].estimate == pytest.approx(100 * van, abs=1e-9)
    assert by_key["acc_vs_sdn"].estimate == pytest.approx(100 * sdn, abs=1e-9)
    assert by_key["acc_vs_ztw"].estimate == pytest.approx(100 * ztw, abs=1e-9)
    # the latency claims are the bench harness's paired ratios, inside their own per-seed interval
    for key in ("slie_over_vanilla_p50", "sdn_over_vanilla_p50", "slie_over_sdn_p50"):
        assert 0 < m[f"{key}_lo"] <= m[key] <= m[f"{key}_hi"]


def test_quick_run_draws_the_headline_figure(quick_report):
    pytest.importorskip("matplotlib")
    _, folder, figures = quick_report
    assert figures == ["slienet.png"]
    png = (folder / "slienet.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_the_experiment_reads_its_device(monkeypatch):
    monkeypatch.setenv("PAPERWORKS_DEVICE", "cpu")
    assert SlieExperiment().device() == "cpu"
    monkeypatch.setenv("PAPERWORKS_DEVICE", "tpu")
    with pytest.raises(ValueError, match="device"):
        SlieExperiment().run_seed(0, quick=True, progress=None)
    if not torch.cuda.is_available():
        monkeypatch.setenv("PAPERWORKS_DEVICE", "cuda")
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            SlieExperiment().run_seed(0, quick=True, progress=None)


def test_config_quick_and_full_are_one_frozen_dataclass(quick_report):
    report, _, _ = quick_report
    exp = SlieExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is SlieConfig
    assert dataclasses.is_dataclass(quick) and type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.epochs = 16
    assert full == SlieConfig() and quick == QUICK and quick != full
    assert full.depth == 5 and full.backbones == ("resnet", "vgg", "mobilenet")
    assert full.latency_rounds * SlieExperiment.default_seeds == 10_000  # the paper's 10,000 calls
    assert report.config == _lists(dataclasses.asdict(quick))
    assert report.per_seed[0]["latency_calls_per_variant"] == quick.latency_rounds
    assert SlieExperiment.default_seeds >= 5


def test_latency_sides_see_the_same_image_in_every_round():
    """Each harness side cycles over the images on its own; after equal warm-ups, one call per round,
    every round gives all variants the same image (whatever order the round runs them in)."""
    from paperworks.core.bench import compare
    from paperworks.slienet.experiments import _cycling

    seen = {k: [] for k in ("a", "b", "c")}
    images = list(range(7))
    sides = {k: _cycling(seen[k].append, images) for k in seen}
    res = compare(sides, ours="a", warmup=3, repeats=25, number=1)
    assert seen["a"] == seen["b"] == seen["c"] == [i % 7 for i in range(28)]
    assert len({o for o in res.row().order}) > 1  # the rounds ran in different orders


def test_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="latency_rounds"):
        SlieConfig(latency_rounds=1)
    with pytest.raises(ValueError, match="latency_engine"):
        SlieConfig(latency_engine="tensorrt")
    with pytest.raises(ValueError, match="backbones"):
        SlieConfig(backbones=("vgg",))
    with pytest.raises(ValueError, match="backbones"):
        SlieConfig(backbones=("resnet", "alexnet"))
    with pytest.raises(ValueError, match="noise"):
        SlieConfig(noise=-1.0)
    with pytest.raises(ValueError, match="epochs"):
        SlieConfig(epochs=0)


def test_train_config_errors():
    import pytest

    with pytest.raises(ValueError, match="mode"):
        TrainConfig(mode="ztw")
    with pytest.raises(ValueError, match="threads"):
        TrainConfig(threads=0)
