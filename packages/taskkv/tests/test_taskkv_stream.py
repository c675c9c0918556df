import numpy as np
import pytest
import torch

from paperworks.taskkv import (
    AgentTaskConfig,
    RegimeClassifier,
    TaskKV,
    TaskKVConfig,
    TaskKVStream,
    Vocab,
    cache_layers,
    content_keys,
    generate_tasks,
    prefill,
    step_offsets_from_chat,
)
from paperworks.taskkv.toymodel import tiny_llama

pytest.importorskip("transformers")

CFG = AgentTaskConfig(n_steps=10, n_errors=(1, 2), vocab=Vocab(n_objects=5, n_locations=5, n_fillers=6))


@pytest.fixture(scope="module")
def setup():
    t = generate_tasks(5, CFG, np.random.default_rng(0))
    model = tiny_llama(CFG.vocab.size, hidden=32, layers=2, heads=2, seed=2)
    return t, model, torch.as_tensor(t.context), torch.as_tensor(t.query)


def _feed(stream, ctx, off):
    for s in range(len(off) - 1):
        stream.append(ctx[:, off[s] : off[s + 1]])


def test_stream_without_eviction_equals_the_full_forward(setup):
    t, model, ctx, q = setup
    stream = TaskKVStream(model, TaskKV(), capacity=ctx.shape[1])
    _feed(stream, ctx, t.offsets)
    assert stream.evictions == 0
    with torch.no_grad():
        full = model(input_ids=torch.cat([ctx, q], 1)).logits[:, -1]
    torch.testing.assert_close(stream.query(q)[:, -1], full, atol=1e-4, rtol=1e-4)
    # the content keys the stream holds are the cache's keys with RoPE undone
    ck = content_keys(model, [k for k, _ in cache_layers(prefill(model, ctx))])
    ck2 = content_keys(model, [k for k, _ in stream.layers], stream.positions)
    torch.testing.assert_close(ck2[1], ck[1], atol=1e-4, rtol=1e-4)


def test_stream_keeps_capacity_pins_the_current_step_and_evictions_are_final(setup):
    t, model, ctx, q = setup
    cap = 12
    pol = TaskKV(TaskKVConfig(pin_instruction=False, use_classifier=False))
    stream = TaskKVStream(model, pol, capacity=cap)
    seen_kept: list[set] = [set() for _ in range(ctx.shape[0])]
    evicted: list[set] = [set() for _ in range(ctx.shape[0])]
    off = t.offsets
    for s in range(len(off) - 1):
        stream.append(ctx[:, off[s] : off[s + 1]])
        assert stream.layers[0][0].shape[2] == min(cap, off[s + 1])
        for i, row in enumerate(stream.positions.tolist()):
            now = set(row)
            assert not (now & evicted[i])  # evicted tokens never come back
            evicted[i] |= seen_kept[i] - now
            seen_kept[i] = now
            assert set(range(off[s], off[s + 1])) <= now  # the current step is pinned
    assert stream.evictions == len(off) - 1 - 3
    assert stream.query(q).shape == (5, 1, CFG.vocab.size)
    # the fallback with the instruction pinned keeps it to the end
    fb = TaskKV(TaskKVConfig(pin_instruction=False), None, RegimeClassifier(threshold=0.0))
    s2 = TaskKVStream(model, fb, capacity=cap)
    _feed(s2, ctx, off)
    assert s2.fallback.all() and all({4, 5, 6, 7} <= set(r) for r in s2.positions.tolist())
    with pytest.raises(ValueError, match="step_ids"):
        s2.append(ctx[:2, :4])  # the stream's batch is 5
    with pytest.raises(ValueError, match="capacity"):
        TaskKVStream(model, fb, capacity=0)


def test_step_offsets_from_chat(tiny_tokenizer):
    msgs = [
        {"role": "system", "content": "w1 w2"},
        {"role": "user", "content": "w3"},
        {"role": "assistant", "content": "w4 w5 w6"},
    ]
    ids, off = step_offsets_from_chat(tiny_tokenizer, msgs)
    assert off.tolist() == [0, 4, 7, 12] and ids.shape == (1, 12)
    toks = tiny_tokenizer.convert_ids_to_tokens(ids[0].tolist())
    assert toks[off[2] : off[3]] == ["<assistant>", "w4", "w5", "w6", "</s>"]
    _, off_g = step_offsets_from_chat(tiny_tokenizer, msgs, add_generation_prompt=True)
    assert off_g.tolist() == [0, 4, 7, 13]  # the generation prompt belongs to the last step
    with pytest.raises(TypeError, match="messages"):
        step_offsets_from_chat(tiny_tokenizer, "w1 w2")
    with pytest.raises(TypeError, match=r"messages\[1\]"):
        step_offsets_from_chat(tiny_tokenizer, [msgs[0], {"role": "user"}])
    with pytest.raises(TypeError, match="tokenizer"):
        step_offsets_from_chat(object(), msgs)
