import numpy as np
import pytest
import torch

from paperworks.taskkv import (
    AgentTaskConfig,
    TaskKV,
    TaskKVConfig,
    Vocab,
    cache_layers,
    content_keys,
    generate_tasks,
    select_tokens,
)
from paperworks.taskkv.toymodel import tiny_llama

kvpress = pytest.importorskip("kvpress")  # in the test group; skip only where the extra is absent

CFG = AgentTaskConfig(n_steps=10, n_errors=(1, 2), vocab=Vocab(n_objects=5, n_locations=5, n_fillers=6))


def _kept_of(cache_keys, full_keys):
    """Sorted token indices (batch, n) of the cache's keys among the full keys (head 0)."""
    d = (cache_keys[:, 0, :, None, :] - full_keys[:, 0, None, :, :]).abs().amax(-1)
    assert float(d.min(-1).values.max()) < 1e-5  # every kept key is one of the full keys
    return torch.sort(d.argmin(-1), 1).values


@pytest.fixture(scope="module")
def batch():
    t = generate_tasks(4, CFG, np.random.default_rng(0))
    offsets = [t.offsets, np.r_[0, 2, 8, np.arange(12, 41, 4)], t.offsets, np.r_[0, 8, 16, 36, 40]]
    return t, torch.as_tensor(t.context), offsets


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_press_keeps_the_tokens_of_the_function_route(batch, impl):
    """Per layer, the press keeps exactly the tokens the function route keeps from that layer's own
    features (content keys, causal window attention including the window), under eager and sdpa,
    with per-row step boundaries (rows of 10, 11, 10 and 4 steps)."""
    from paperworks.taskkv import TaskKVPress

    _, ids, offsets = batch
    model = tiny_llama(CFG.vocab.size, hidden=32, layers=2, heads=2, seed=0)
    pol = TaskKV(TaskKVConfig(pin_instruction=False, use_classifier=False))
    model.set_attn_implementation(impl)
    press = TaskKVPress(compression_ratio=0.7, step_offsets=offsets, policy=pol)
    with torch.no_grad(), press(model):
        cache = model(input_ids=ids, use_cache=True).past_key_values
    model.set_attn_implementation("eager")
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True, output_attentions=True)
    full = cache_layers(out.past_key_values)
    ck = content_keys(model, [k for k, _ in full])
    rows_differ = False
    for layer in range(2):
        feats = pol.features([ck[layer]], [out.attentions[layer][:, :, -4:, :]], offsets)
        lay = pol.layout(offsets, ids.shape[1], ids.shape[0])
        scores, _, _ = pol.decide(feats, lay.valid)
        n = cache.layers[layer].keys.shape[2]
        assert n == int(ids.shape[1] * (1 - 0.7))  # kvpress's count
        kept = select_tokens(scores, lay, n, pol.config.pinned())
        assert torch.equal(_kept_of(cache.layers[layer].keys, full[layer][0]), kept)
        rows_differ |= not torch.equal(kept[0], kept[2])
    assert rows_differ  # the scorer ranks by content: rows with the same layout keep different steps
    assert len(press.last_fallback) == 2 and press.last_fallback[0].shape == (4,)


def test_press_composes_with_kvpress_wrappers(tiny_tokenizer):
    """TaskKVPress is a ScorerPress: AdaKVPress (in kvpress's own pipeline) and KeyRerotationPress take it."""
    from transformers import pipeline

    from paperworks.taskkv import TaskKVPress, step_offsets_from_chat

    assert isinstance(TaskKVPress(), kvpress.ScorerPress)
    model = tiny_llama(len(tiny_tokenizer), hidden=32, layers=2, heads=2, seed=1)
    model.set_attn_implementation("sdpa")  # AdaKVPress refuses eager attention
    model.generation_config.eos_token_id = tiny_tokenizer.eos_token_id
    pipe = pipeline("kv-press-text-generation", model=model, tokenizer=tiny_tokenizer, device="cpu")
    context = " ".join(f"w{i % 40}" for i in range(47))  # the pipeline prepends <s>: 48 tokens
    press = kvpress.AdaKVPress(TaskKVPress(compression_ratio=0.5, step_offsets=np.arange(0, 49, 4)))
    answer = pipe(context, question="w1 w2", press=press, max_new_tokens=3)["answer"]
    assert isinstance(answer, str)
    assert len(press.press.last_fallback) == 2
    # KeyRerotationPress on the tiny agent model, offsets from a chat template
    msgs = [{"role": "system", "content": "w1 w2"}, {"role": "user", "content": "w3 w4 w5"}] * 3
    chat_ids, chat_off = step_offsets_from_chat(tiny_tokenizer, msgs)
    rr = kvpress.KeyRerotationPress(TaskKVPress(compression_ratio=0.5, step_offsets=chat_off))
    with torch.no_grad(), rr(model):
        cache = model(input_ids=chat_ids, use_cache=True).past_key_values
    assert cache.layers[0].keys.shape[2] == int(chat_ids.shape[1] * 0.5)


def test_press_budget_and_errors(batch):
    from paperworks.taskkv import TaskKVPress

    t, ids, _ = batch
    model = tiny_llama(CFG.vocab.size, hidden=32, layers=2, heads=2, seed=0)
    press = TaskKVPress(compression_ratio=0.8, step_offsets=tuple(t.offsets))
    with torch.no_grad(), press(model):
        cache = model(input_ids=ids, use_cache=True).past_key_values
    n = int(ids.shape[1] * (1 - 0.8))
    assert [layer.keys.shape[2] for layer in cache.layers] == [n, n]
    with (
        pytest.raises(ValueError, match="step_offsets"),
        torch.no_grad(),
        TaskKVPress(compression_ratio=0.5)(model),
    ):
        model(input_ids=ids, use_cache=True)
    bad = TaskKVPress(compression_ratio=0.5, step_offsets=[t.offsets, t.offsets])  # 2 rows for a batch of 4
    with pytest.raises(ValueError, match="offsets"), torch.no_grad(), bad(model):
        model(input_ids=ids, use_cache=True)
    with pytest.raises(ValueError, match="compression_ratio"):
        TaskKVPress(compression_ratio=1.0)
    with pytest.raises(TypeError, match="policy"):
        TaskKVPress(policy="taskkv")


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


def test_fallback_keeps_the_instruction_and_the_recent_steps():
    g = torch.Generator().manual_seed(1)
    b, h, T, d = 3, 2, 40, 4
    keys = [torch.randn(b, h, T, d, generator=g)]
    att = [torch.softmax(torch.randn(b, h, 4, T, generator=g), -1)]
    off = np.arange(0, T + 1, 4)
    from paperworks.taskkv import RegimeClassifier

    always = RegimeClassifier(threshold=0.0)
    for pin, expect in ((True, {4, 5, 6, 7, 32, 33, 34, 35}), (False, {28, 29, 30, 31, 32, 33, 34, 35})):
        cfg = TaskKVConfig(budget=0.3, pin_instruction=False, fallback_pin_instruction=pin)
        kept, fb = TaskKV(cfg, None, always).keep_indices(keys, att, off)
        assert fb.all()
        for row in kept.tolist():
            assert expect | set(range(36, 40)) == set(row)
