"""Window and force masks vs brute-force masks, the hooks on a tiny HF Llama, crossover arithmetic."""

import numpy as np
import pytest
import torch

from paperworks.goal_accessibility import (
    crossover_turn,
    force_closure,
    force_closure_mask,
    gar,
    goal_accessibility_ratio,
    record_goal_mass,
    window_closure,
    window_mask,
)


def _brute_window(T, W, sinks):
    return torch.tensor([[j <= i and (i - j < W or j < sinks) for j in range(T)] for i in range(T)])


@pytest.mark.parametrize("W, sinks", [(1, 0), (3, 0), (4, 2), (20, 1)])
def test_window_mask_equals_brute_force(W, sinks):
    assert torch.equal(window_mask(9, W, sinks=sinks), _brute_window(9, W, sinks))


def test_window_mask_decoding_offset():
    full = window_mask(10, 3, sinks=1)
    assert torch.equal(window_mask(2, 3, k_len=10, sinks=1), full[-2:])


def test_force_mask_equals_brute_force_and_changes_nothing_before_t0():
    goal = torch.tensor([[0, 1, 1, 0, 0, 0, 0, 0], [1, 0, 0, 1, 0, 0, 0, 0]], dtype=torch.bool)
    fp = torch.tensor([5, 3])
    got = force_closure_mask(goal, fp)
    for b in range(2):
        want = torch.tensor(
            [[j <= i and not (i >= fp[b] and goal[b, j]) for j in range(8)] for i in range(8)]
        )
        assert torch.equal(got[b], want)
        assert torch.equal(got[b, : fp[b]], torch.tril(torch.ones(8, 8, dtype=torch.bool))[: fp[b]])


def _ids(T=24, B=2, seed=0):
    return torch.randint(0, 50, (B, T), generator=torch.Generator().manual_seed(seed))


def test_window_closure_equals_an_explicit_4d_mask(tiny_model):
    ids = _ids()
    allowed = window_mask(ids.shape[1], 5, sinks=2)
    four_d = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[None, None].expand(2, 1, -1, -1)
    with torch.inference_mode():
        with window_closure(tiny_model, 5, sinks=2):
            ours = tiny_model(input_ids=ids, output_attentions=True)
        ref = tiny_model(input_ids=ids, attention_mask=four_d.clone(), output_attentions=True)
        plain = tiny_model(input_ids=ids).logits
    assert torch.allclose(ours.logits, ref.logits, atol=1e-5)
    att = ours.attentions[0]
    assert torch.all(att[..., ~allowed] == 0)
    assert not torch.allclose(ours.logits, plain)  # the closure is gone after the block:
    with torch.inference_mode():
        assert torch.allclose(tiny_model(input_ids=ids).logits, plain)


def test_force_closure_changes_nothing_before_t0_and_closes_after(tiny_model):
    ids = _ids(T=20)
    goal = torch.zeros(2, 20, dtype=torch.bool)
    goal[:, 1:5] = True
    t0 = 10
    with torch.inference_mode():
        plain = tiny_model(input_ids=ids, output_attentions=True)
        with force_closure(tiny_model, goal, t0):
            forced = tiny_model(input_ids=ids, output_attentions=True)
    assert torch.allclose(forced.logits[:, :t0], plain.logits[:, :t0], atol=1e-6)
    assert not torch.allclose(forced.logits[:, t0:], plain.logits[:, t0:])
    for a in forced.attentions:
        assert float(a[:, :, t0:, :][..., goal[0]].abs().max()) == 0.0
    assert gar(tiny_model, ids, goal).min() > 0
    with force_closure(tiny_model, goal, t0):
        rows = torch.zeros(2, 20, dtype=torch.bool)
        rows[:, t0:] = True
        assert float(gar(tiny_model, ids, goal, rows).abs().max()) == 0.0


def test_hook_gar_equals_output_attentions(tiny_model):
    ids = _ids(T=30)
    goal = torch.zeros(2, 30, dtype=torch.bool)
    goal[:, 2:9] = True
    rows = torch.zeros(2, 30, dtype=torch.bool)
    rows[:, 12::3] = True
    with torch.inference_mode():
        att = tiny_model(input_ids=ids, output_attentions=True).attentions
    want = goal_accessibility_ratio(att, goal, rows)
    assert torch.allclose(gar(tiny_model, ids, goal, rows), want, atol=1e-6)
    with record_goal_mass(tiny_model, goal) as rec, torch.inference_mode():
        tiny_model(input_ids=ids)
    assert rec.stacked().shape == (2, 2, 4, 30)


def test_non_eager_models_are_rejected():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(
        vocab_size=20,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        attn_implementation="sdpa",
    )
    model = transformers.LlamaForCausalLM(cfg)
    with pytest.raises(ValueError, match="attn_implementation"):
        gar(model, torch.zeros(1, 4, dtype=torch.long), torch.ones(1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="attn_implementation"):
        with window_closure(model, 4):
            pass


def test_bad_inputs_name_the_argument(tiny_model):
    ids = _ids(T=8)
    with pytest.raises(ValueError, match="window"):
        with window_closure(tiny_model, 0):
            pass
    with pytest.raises(ValueError, match="goal_mask"):
        gar(tiny_model, ids, torch.ones(2, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match="goal_mask"):
        gar(tiny_model, ids, torch.zeros(2, 8, dtype=torch.bool))
    with pytest.raises(ValueError, match="from_pos"):
        with force_closure(tiny_model, torch.ones(2, 8, dtype=torch.bool), -1):
            pass


def test_crossover_turn_arithmetic():
    # goal (2, 24): last goal token 23; W = 64 -> closed once a turn starts at >= 87
    counts = [12, 12, 13, 14, 13, 12, 12]
    starts = 24 + np.concatenate([[0], np.cumsum(counts)[:-1]])  # 24 36 48 61 75 88 100
    assert crossover_turn(counts, (2, 24), 64) == 5 == int(np.flatnonzero(starts >= 87)[0])
    assert crossover_turn(counts, (2, 24), 1000) == len(counts)
    assert crossover_turn([5, 5], (0, 3), 1) == 0  # a window of one token sees nothing before it
    # brute force: a turn is closed iff no position in it sees any goal token under the window mask
    for W in (10, 30, 50):
        T = int(24 + sum(counts))
        allowed = window_mask(T, W)
        seen = allowed[:, 2:24].any(1)
        want = next((t for t, s in enumerate(starts) if not seen[s:].any()), len(counts))
        assert crossover_turn(counts, (2, 24), W) == want
    with pytest.raises(ValueError, match="sinks"):
        crossover_turn(counts, (2, 24), 64, sinks=3)
    with pytest.raises(ValueError, match="window"):
        crossover_turn(counts, (2, 24), 0)
    with pytest.raises(ValueError, match="token_counts"):
        crossover_turn([], (2, 24), 4)
    with pytest.raises(ValueError, match="goal_span"):
        crossover_turn(counts, (5, 5), 4)
