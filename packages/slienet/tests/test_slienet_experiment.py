import math

import torch

from paperworks.slienet import TrainConfig, predict_all, resnet56, train_multi_exit
from paperworks.slienet.experiments import SlieExperiment


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


def test_quick_experiment_report():
    report = SlieExperiment().run(quick=True, seeds=1)
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


def test_train_config_errors():
    import pytest

    with pytest.raises(ValueError, match="mode"):
        TrainConfig(mode="ztw")
    with pytest.raises(ValueError, match="threads"):
        TrainConfig(threads=0)
