import numpy as np
import pytest
import torch

from paperworks.taskkv import (
    AgentTaskConfig,
    Vocab,
    answer_logprob,
    cache_layers,
    generate_tasks,
    leave_one_step_out,
    prefill,
    query_logits,
    step_utility_labels,
)
from paperworks.taskkv.toymodel import tiny_llama, train_agent_model

CFG = AgentTaskConfig(n_steps=10, n_errors=(1, 2), vocab=Vocab(n_objects=5, n_locations=5, n_fillers=6))


@pytest.fixture(scope="module")
def batch():
    t = generate_tasks(6, CFG, np.random.default_rng(0))
    return t, torch.as_tensor(t.context), torch.as_tensor(t.query), torch.as_tensor(t.answer)


@pytest.fixture(scope="module")
def model():
    return tiny_llama(CFG.vocab.size, hidden=32, layers=2, heads=2, seed=3)


def test_query_over_cache_equals_full_forward(model, batch):
    _, ctx, q, _ = batch
    with torch.no_grad():
        layers = cache_layers(prefill(model, ctx))
        via_cache = query_logits(model, layers, q, ctx.shape[1])[:, -1]
        full = model(input_ids=torch.cat([ctx, q], 1)).logits[:, -1]
    torch.testing.assert_close(via_cache, full, atol=1e-4, rtol=1e-4)


def test_first_order_label_agrees_in_sign_with_exact_leave_one_step_out(model, batch):
    t, ctx, q, a = batch
    u = step_utility_labels(model, ctx, q, a, t.offsets)
    d = leave_one_step_out(model, ctx, q, a, t.offsets)
    assert u.shape == d.shape == (6, CFG.n_steps)
    big = d.abs() >= d.abs().median()
    agree = (torch.sign(u[big]) == torch.sign(d[big])).float().mean()
    assert agree >= 0.9
    assert np.corrcoef(u.ravel(), d.ravel())[0, 1] > 0.8


@pytest.mark.parametrize("gate", ["removal", "contribution"])
def test_label_is_the_derivative_of_the_gate_finite_difference(model, batch, gate):
    t, ctx, q, a = batch
    u = step_utility_labels(model, ctx, q, a, t.offsets, gate=gate)
    eps, s = 1e-2, 2
    lo, hi = t.offsets[s], t.offsets[s + 1]
    with torch.no_grad():
        layers = cache_layers(prefill(model, ctx))
        m = torch.ones(ctx.shape[0], ctx.shape[1])
        m[:, lo:hi] = 1 - eps
        kw = {"value_gate": m} if gate == "contribution" else {"key_bias": torch.log(m)}
        full = answer_logprob(query_logits(model, layers, q, ctx.shape[1]), a)
        shrunk = answer_logprob(query_logits(model, layers, q, ctx.shape[1], **kw), a)
    torch.testing.assert_close(u[:, s], (full - shrunk) / eps, atol=2e-3, rtol=5e-2)
    with pytest.raises(ValueError, match="gate"):
        step_utility_labels(model, ctx, q, a, t.offsets, gate="saliency")


def test_removal_by_gate_equals_removal_by_pruning(model, batch):
    t, ctx, q, _a = batch
    with torch.no_grad():
        layers = cache_layers(prefill(model, ctx))
        s = 3
        lo, hi = t.offsets[s], t.offsets[s + 1]
        bias = torch.zeros(ctx.shape[0], ctx.shape[1])
        bias[:, lo:hi] = torch.finfo(torch.float32).min
        gated = query_logits(model, layers, q, ctx.shape[1], key_bias=bias)[:, -1]
        keep = torch.as_tensor(np.r_[0:lo, hi : ctx.shape[1]])
        pruned = query_logits(model, [(k[:, :, keep], v[:, :, keep]) for k, v in layers], q, ctx.shape[1])[
            :, -1
        ]
    torch.testing.assert_close(gated, pruned, atol=1e-4, rtol=1e-4)


def test_labels_reject_bad_offsets(model, batch):
    _, ctx, q, a = batch
    with pytest.raises(ValueError, match="offsets"):
        step_utility_labels(model, ctx, q, a, [0, 4, 8])


def test_seeded_determinism_of_data_and_training():
    def run():
        t = generate_tasks(64, CFG, np.random.default_rng(5))
        m = tiny_llama(CFG.vocab.size, hidden=16, layers=1, heads=2, seed=5)
        losses = train_agent_model(m, t, steps=3, batch=8, rng=np.random.default_rng(5))
        return t.context, losses

    (c1, l1), (c2, l2) = run(), run()
    np.testing.assert_array_equal(c1, c2)
    assert l1 == l2


def test_content_keys_are_the_layer_key_projection_before_rope(model, batch):
    """content_keys (cached keys, RoPE undone) equals k_proj of each layer's input: an independent route."""
    from paperworks.taskkv import content_keys

    _, ctx, _, _ = batch
    seen = {}

    def hook(module, args, kwargs, output):
        seen[module.layer_idx] = kwargs["hidden_states"]

    handles = [layer.self_attn.register_forward_hook(hook, with_kwargs=True) for layer in model.model.layers]
    try:
        cache = prefill(model, ctx)
    finally:
        for h in handles:
            h.remove()
    ck = content_keys(model, [k for k, _ in cache_layers(cache)])
    with torch.no_grad():
        for i, layer in enumerate(model.model.layers):
            att = layer.self_attn
            k = att.k_proj(seen[i]).view(ctx.shape[0], ctx.shape[1], -1, att.head_dim).transpose(1, 2)
            torch.testing.assert_close(ck[i], k, atol=1e-5, rtol=1e-5)
