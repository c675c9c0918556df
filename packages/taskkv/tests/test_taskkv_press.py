import numpy as np
import pytest
import torch

from paperworks.taskkv import AgentTaskConfig, TaskKV, TaskKVConfig, Vocab, generate_tasks, n_keep_for
from paperworks.taskkv.toymodel import tiny_llama

kvpress = pytest.importorskip("kvpress")  # in the test group; skip only where the extra is absent

CFG = AgentTaskConfig(n_steps=10, n_errors=(1, 2), vocab=Vocab(n_objects=5, n_locations=5, n_fillers=6))


def test_press_runs_on_a_tiny_real_model_and_respects_the_budget():
    from paperworks.taskkv import TaskKVPress

    t = generate_tasks(3, CFG, np.random.default_rng(0))
    model = tiny_llama(CFG.vocab.size, hidden=32, layers=2, heads=2, seed=0)
    ids = torch.as_tensor(t.context)
    press = TaskKVPress(compression_ratio=0.8, step_offsets=tuple(t.offsets))
    with torch.no_grad(), press(model):
        cache = model(input_ids=ids, use_cache=True).past_key_values
    n_keep = n_keep_for(0.2, ids.shape[1])
    assert [layer.keys.shape[2] for layer in cache.layers] == [n_keep, n_keep]
    assert len(press.last_fallback) == 2
    # the peer keeps the same number (kvpress truncates int(T * (1 - ratio)), hence the 1e-6)
    with torch.no_grad(), kvpress.SnapKVPress(compression_ratio=0.8 - 1e-6, window_size=4)(model):
        snap = model(input_ids=ids, use_cache=True).past_key_values
    assert snap.layers[0].keys.shape[2] == n_keep
    with (
        pytest.raises(ValueError, match="step_offsets"),
        torch.no_grad(),
        TaskKVPress(compression_ratio=0.5)(model),
    ):
        model(input_ids=ids, use_cache=True)


def test_policy_never_drops_pinned_steps_and_keeps_exact_budget():
    g = torch.Generator().manual_seed(0)
    L, b, h, T, d = 2, 5, 2, 40, 4
    keys = [torch.randn(b, h, T, d, generator=g) for _ in range(L)]
    vals = [torch.randn(b, h, T, d, generator=g) for _ in range(L)]
    att = [torch.softmax(torch.randn(b, h, 4, T, generator=g), -1) for _ in range(L)]
    off = np.arange(0, T + 1, 4)
    pol = TaskKV(TaskKVConfig(budget=0.3, instruction_step=1))
    k2, _v2, kept, fallback = pol.compress(keys, vals, att, off)
    assert kept.shape == (b, 12) and k2[0].shape == (b, h, 12, d) and fallback.shape == (b,)
    for row in kept.tolist():
        assert {4, 5, 6, 7, 36, 37, 38, 39} <= set(row)
    with pytest.raises(ValueError, match="layers"):
        pol.compress(keys, vals[:1], att, off)
    with pytest.raises(ValueError, match="budget"):
        TaskKVConfig(budget=1.2)
