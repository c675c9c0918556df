import numpy as np
import pytest
import torch

from paperworks.pm_lora import (
    MLP,
    OLoRA,
    PerTaskLoRA,
    PMLoRA,
    PMLoRAConfig,
    SeqLoRA,
    TrainConfig,
    average_accuracy,
    backward_transfer,
    make_stream,
    pretrain_backbone,
    run_stream,
)

torch.set_num_threads(1)
TM = ("fc1", "fc2")


def _train(pm, x, y, steps=30):
    opt = torch.optim.Adam(list(pm.trainable_parameters()), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(pm(x), y).backward()
        opt.step()


def test_orthogonality_holds_after_training_and_old_directions_are_untouched():
    torch.manual_seed(0)
    pm = PMLoRA(MLP(16, 32, 4), PMLoRAConfig(rank=6, task_rank=3, energy=0.99, target_modules=TM))
    x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
    pm.begin_task()
    _train(pm, x, y)
    pm.end_task()
    old = {n: (layer.merged_B @ layer.merged_A).clone() for n, layer in pm.layers.items()}
    pm.begin_task()
    _train(pm, x, torch.randint(0, 4, (64,)))
    assert pm.orthogonality_error() < 1e-5
    for n, layer in pm.layers.items():
        V = layer.basis
        assert V.shape[1] >= 1
        # the task update maps the protected directions to zero: delta_W V equals the old update's
        d = layer.delta_weight().detach()
        assert torch.allclose(d @ V, old[n] @ V, atol=1e-5)
        # and the task adapter really trained
        assert layer.task_B.abs().max() > 0


def test_forward_equals_base_plus_delta_weight():
    torch.manual_seed(1)
    model = MLP(10, 12, 3)
    pm = PMLoRA(model, PMLoRAConfig(rank=4, task_rank=2, target_modules=TM))
    pm.begin_task()
    with torch.no_grad():
        for p in pm.trainable_parameters():
            p.normal_()
    x = torch.randn(5, 10)
    layer = pm.layers["fc1"]
    expect = x @ (layer.base.weight + layer.delta_weight()).T + layer.base.bias
    assert torch.allclose(layer(x), expect, atol=1e-5)


def test_sizes_constant_vs_growing():
    pm = PMLoRA(MLP(), PMLoRAConfig(rank=8, task_rank=2, target_modules=TM))
    ol = OLoRA(MLP(), TM, task_rank=2)
    sizes_pm, sizes_ol = [], []
    for _ in range(3):
        for a, sizes in ((pm, sizes_pm), (ol, sizes_ol)):
            a.begin_task()
            with torch.no_grad():
                for p in a.trainable_parameters():
                    p.normal_()
            a.end_task()
            sizes.append(a.stored_parameters())
    per_task = 2 * (64 + 128) + 2 * (128 + 128)
    assert sizes_pm == [8 * (64 + 128) + 8 * (128 + 128)] * 3
    assert sizes_ol == [per_task, 2 * per_task, 3 * per_task]
    assert pm.stored_bytes() == 4 * sizes_pm[-1]


def test_bad_input_errors():
    with pytest.raises(ValueError, match=r"matches no nn\.Linear"):
        PMLoRA(MLP(), PMLoRAConfig(target_modules=("attn",)))
    with pytest.raises(ValueError, match="rank: 20 is larger than layer 'fc3' allows"):
        PMLoRA(MLP(), PMLoRAConfig(rank=20, target_modules=("fc3",)))  # fc3 is 128 -> 10
    with pytest.raises(ValueError, match="rank: expected an int >= 1"):
        PMLoRAConfig(rank=0)
    pm = PMLoRA(MLP(), PMLoRAConfig(target_modules=TM))
    with pytest.raises(ValueError, match=r"expected dtype torch\.float32"):
        pm(torch.randn(2, 64, dtype=torch.float64))
    with pytest.raises(ValueError, match="last dimension 64"):
        pm(torch.randn(2, 63))
    with pytest.raises(RuntimeError, match="no task is open"):
        pm.end_task()
    with pytest.raises(ValueError, match="task_rank"):
        PMLoRA(MLP(8, 16, 3), PMLoRAConfig(rank=4, task_rank=9, target_modules=TM))
    pt = PerTaskLoRA(MLP(), TM)
    with pytest.raises(ValueError, match="task: expected an index"):
        pt.select(0)
    with pytest.raises(ValueError, match="R: expected a square"):
        average_accuracy(np.zeros((2, 3)))


def test_metrics_by_hand():
    R = np.array([[0.9, np.nan, np.nan], [0.7, 0.8, np.nan], [0.6, 0.5, 1.0]])
    assert average_accuracy(R) == pytest.approx(0.7)
    assert backward_transfer(R) == pytest.approx(((0.6 - 0.9) + (0.5 - 0.8)) / 2)


def test_seeded_runs_agree_and_oracle_does_not_forget():
    stream = make_stream(2, seed=3)
    cfg = TrainConfig(steps=15, pretrain_steps=20)
    results = []
    for _ in range(2):
        torch.manual_seed(3)
        bb = pretrain_backbone(stream.x_pretrain, stream.y_pretrain, cfg)
        torch.manual_seed(3)
        results.append(run_stream(bb, stream, lambda m: PMLoRA(m, PMLoRAConfig(target_modules=TM)), cfg))
    assert np.array_equal(results[0].R, results[1].R, equal_nan=True)
    torch.manual_seed(3)
    pt = run_stream(bb, stream, lambda m: PerTaskLoRA(m, TM), cfg)
    assert backward_transfer(pt.R) == 0.0  # each task keeps its own frozen adapter
    seq = run_stream(bb, stream, lambda m: SeqLoRA(m, TM, 8), cfg)
    assert seq.params[0] == seq.params[1]


def test_stream_is_a_pixel_permutation():
    s = make_stream(3, seed=0, frac_permuted=0.25)
    for t in s.tasks:
        assert sorted(t.pixel_map.tolist()) == list(range(64))
        assert (t.pixel_map != np.arange(64)).sum() > 0
    with pytest.raises(ValueError, match="n_tasks"):
        make_stream(0, seed=0)
