"""Everything an adapter keeps lives in state_dict and follows .to() / .double(); task protocol checks."""

import copy

import pytest
import torch

from paperworks.pm_lora import MLP, InfLoRA, OLoRA, PerTaskLoRA, PMLoRA, PMLoRAConfig, SeqLoRA

torch.set_num_threads(1)
TM = ("fc1", "fc2")


def _make(name):
    torch.manual_seed(0)
    model = MLP(12, 20, 5)
    if name == "pm":
        return PMLoRA(model, PMLoRAConfig(rank=6, task_rank=2, target_modules=TM))
    if name == "olora":
        return OLoRA(model, TM, task_rank=2)
    if name == "pertask":
        return PerTaskLoRA(model, TM, task_rank=2)
    if name == "inflora":
        return InfLoRA(model, TM, task_rank=2)
    return SeqLoRA(model, TM, rank=4)


def _tasks(a, n=3, seed=1):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n):
        a.begin_task(inputs=torch.randn(40, 12, generator=gen))
        with torch.no_grad():
            for p in a.trainable_parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
        a.end_task()
    return a


@pytest.mark.parametrize("name", ["pm", "olora", "pertask", "inflora", "seq"])
def test_state_dict_round_trip_and_double(name):
    a = _tasks(_make(name))
    x = torch.randn(7, 12)
    with torch.no_grad():
        ref = a(x)
    sd = a.state_dict()
    if name in ("olora", "pertask", "inflora"):
        assert sd["model.fc1.frozen_A"].shape == (6, 12)  # three rank-2 adapters, concatenated
        assert sd["model.fc1.frozen_ranks"].tolist() == [2, 2, 2]
    if name == "inflora":
        assert sd["model.fc1.memory"].shape[0] == 12 and sd["model.fc1.memory"].shape[1] >= 1
    # a fresh adapter of the same method and architecture, no task run yet, takes it all back
    fresh = _make(name)
    fresh.model.load_state_dict(copy.deepcopy(a.model.state_dict()))  # same base weights too
    fresh.load_state_dict(sd)
    assert fresh.tasks_seen == 3 and fresh.stored_parameters() == a.stored_parameters()
    with torch.no_grad():
        assert torch.equal(fresh(x), ref)
    # .double() converts every adapter tensor, frozen ones included; the forward then runs in float64
    a.double()
    with torch.no_grad():
        out = a(x.double())
    assert out.dtype == torch.float64
    assert torch.allclose(out, ref.double(), atol=1e-5)
    for layer in a.layers.values():
        for t in (layer.merged_A, layer.merged_B, layer.frozen_A, layer.frozen_B, layer.basis):
            assert t.dtype == torch.float64
        assert layer.frozen_ranks.dtype == torch.long
    # ... and a new task opens in float64
    a.begin_task(inputs=torch.randn(40, 12, dtype=torch.float64))
    assert all(p.dtype == torch.float64 for p in a.trainable_parameters())


def test_open_task_is_in_state_dict_and_restored():
    a = _make("pm")
    _tasks(a, 1)
    a.begin_task()
    with torch.no_grad():
        for p in a.trainable_parameters():
            p.normal_()
    x = torch.randn(3, 12)
    fresh = _make("pm")
    fresh.model.load_state_dict(copy.deepcopy(a.model.state_dict()))
    with torch.no_grad():
        assert torch.equal(fresh(x), a(x))


def test_task_protocol_is_checked():
    for name in ("pm", "olora", "inflora", "seq"):
        a = _make(name)
        a.begin_task(inputs=torch.randn(10, 12))
        with pytest.raises(RuntimeError, match="begin_task: a task is already open"):
            a.begin_task(inputs=torch.randn(10, 12))
        a.end_task()
        with pytest.raises(RuntimeError, match="end_task: no task is open"):
            a.end_task()
    with pytest.raises(ValueError, match=r"inputs: InfLoRA\.begin_task needs"):
        _make("inflora").begin_task()


def test_inflora_designed_projection_is_frozen_and_orthogonal_to_memory():
    a = _make("inflora")
    _tasks(a, 2)
    a.begin_task(inputs=torch.randn(40, 12))
    for layer in a.layers.values():
        assert not layer.task_A.requires_grad and layer.task_B.requires_grad
        M = layer.memory
        assert torch.allclose(M.T @ M, torch.eye(M.shape[1]), atol=1e-5)  # orthonormal memory
        assert (layer.task_A @ M).abs().max() < 1e-5  # new down-projection avoids old inputs
    assert {p.shape for p in a.trainable_parameters()} == {(20, 2)}  # only B trains


def test_to_moves_frozen_buffers():
    a = _tasks(_make("olora"))
    a.to(torch.float16)  # a dtype change stands in for a device change on a CPU-only machine
    assert a.layers["fc1"].frozen_A.dtype == torch.float16
