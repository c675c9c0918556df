import dataclasses
import math

import pytest
import torch

from paperworks.core import INCONCLUSIVE_1_SEED
from paperworks.slienet import TrainConfig, predict_all, resnet56, train_multi_exit
from paperworks.slienet.experiments import QUICK, SlieConfig, SlieExperiment


@pytest.fixture(scope="module")
def quick_report():
    return SlieExperiment().run(quick=True, seeds=1)


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


def test_quick_experiment_report(quick_report):
    report = quick_report
    assert [c.claim.key for c in report.claims] == [
        "acc_vs_vanilla",
        "acc_vs_sdn",
        "latency_vs_vanilla",
        "sdn_slower",
        "zero_deadline_misses",
    ]
    s = {k: v.mean for k, v in report.summary.items()}
    for d in ("digits", "gen100"):
        for m in ("vanilla", "slie5", "sdn_dynamic", "sdn_slie5", "ztw_dynamic"):
            assert 0.0 <= s[f"{d}_acc_{m}"] <= 1.0
        assert 1 <= s[f"{d}_slie_subset_size"] <= 5
        assert 0 < s[f"{d}_flops_slie5_rel"] < 1  # the plan is truncated
        assert s[f"{d}_calib_search_ms"] < 1000  # sub-second search
    assert s["digits_acc_slie5"] > 0.3  # well above chance (0.1) even in the quick run
    for k in ("vanilla_p50_ms", "slie_p50_ms", "sdn_p50_ms", "deadline_ms"):
        assert math.isfinite(s[k]) and s[k] > 0
    assert s["latency_calls_per_variant"] == 200
    assert "Latency at batch size 1 (100-class models)" in report.tables


def test_quick_claims_declarations_and_one_seed_verdicts(quick_report):
    """One seed gives no interval: every claim is inconclusive (1 seed) with the per-seed value as its
    estimate; the accuracy claims are paired differences recomputed from the per-data-set accuracies."""
    m = quick_report.per_seed[0]
    by_key = {c.claim.key: c for c in quick_report.claims}
    for c in quick_report.claims:
        assert c.verdict == INCONCLUSIVE_1_SEED and c.n == 1 and c.lo is None and c.hi is None
        assert c.estimate == m[c.claim.metric]
        assert not c.claim.exact and c.claim.kind == "paper"
    for key in ("acc_vs_vanilla", "acc_vs_sdn", "latency_vs_vanilla", "sdn_slower"):
        assert by_key[key].claim.paired
    assert not by_key["zero_deadline_misses"].claim.paired
    timing = {c.claim.key for c in quick_report.claims if c.claim.machine_dependent}
    assert timing == {"latency_vs_vanilla", "sdn_slower", "zero_deadline_misses"}
    d = ("digits", "gen100")
    van = sum(m[f"{x}_acc_slie5"] - m[f"{x}_acc_vanilla"] for x in d) / 2
    sdn = sum(m[f"{x}_acc_slie5"] - m[f"{x}_acc_sdn_dynamic"] for x in d) / 2
    assert by_key["acc_vs_vanilla"].estimate == pytest.approx(100 * van, abs=1e-9)
    assert by_key["acc_vs_sdn"].estimate == pytest.approx(100 * sdn, abs=1e-9)
    # the latency claims are the bench harness's paired ratios, inside their own per-seed interval
    for key in ("slie_over_vanilla_p50", "sdn_over_vanilla_p50", "slie_over_sdn_p50"):
        assert 0 < m[f"{key}_lo"] <= m[key] <= m[f"{key}_hi"]


def test_config_quick_and_full_are_one_frozen_dataclass(quick_report):
    exp = SlieExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is SlieConfig
    assert dataclasses.is_dataclass(quick) and type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.epochs = 16
    assert full == SlieConfig() and quick == QUICK and quick != full
    assert (full.epochs, full.batch_size, full.depth, full.latency_rounds) == (16, 64, 5, 10_000)
    assert quick_report.config == _lists(dataclasses.asdict(quick))
    assert quick_report.per_seed[0]["latency_calls_per_variant"] == quick.latency_rounds
    assert SlieExperiment.default_seeds == 3 and "10-minute" in SlieExperiment.seeds_note


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
    with pytest.raises(ValueError, match="split"):
        SlieConfig(split=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="digits_fraction"):
        SlieConfig(digits_fraction=0.7)
    with pytest.raises(ValueError, match="epochs"):
        SlieConfig(epochs=0)


def test_train_config_errors():
    import pytest

    with pytest.raises(ValueError, match="mode"):
        TrainConfig(mode="ztw")
    with pytest.raises(ValueError, match="threads"):
        TrainConfig(threads=0)
