import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.taskkv import (
    check_offsets,
    contiguous_scores,
    n_keep_for,
    retain_kv,
    select_tokens,
    step_layout,
    token_priority,
)


def _greedy_reference(scores, offsets, n_keep, pins):
    """Loop reference: whole steps in score order (pins first, ties to later), then a partial step."""
    n = len(offsets) - 1
    order = sorted(range(n), key=lambda s: (s not in pins, -scores[s], -s))
    kept, left = [], n_keep
    for s in order:
        toks = list(range(offsets[s], offsets[s + 1]))
        take = toks if len(toks) <= left else toks[len(toks) - left :]
        kept += take
        left -= len(take)
        if left == 0:
            break
    return sorted(kept)


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=2, max_size=12),
    budget=st.floats(0.05, 1.0),
    seed=st.integers(0, 10_000),
    pin_last=st.booleans(),
)
def test_select_tokens_matches_greedy_reference_and_budget(lengths, budget, seed, pin_last):
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    seq = int(offsets[-1])
    n_keep = n_keep_for(budget, seq)
    pins = (len(lengths) - 1,) if pin_last and lengths[-1] <= n_keep else ()
    scores = torch.as_tensor(np.random.default_rng(seed).normal(size=(3, len(lengths))), dtype=torch.float32)
    kept = select_tokens(scores, offsets, n_keep, pins)
    assert kept.shape == (3, n_keep)
    for b in range(3):
        ref = _greedy_reference(scores[b].tolist(), offsets.tolist(), n_keep, set(pins))
        assert kept[b].tolist() == ref
        if pins:
            assert set(range(offsets[-2], offsets[-1])) <= set(kept[b].tolist())


def test_budget_is_exact_floor_and_contiguous_keeps_most_recent():
    assert n_keep_for(0.2, 80) == 16
    assert n_keep_for(0.2, 64) == 12
    offsets = np.arange(0, 41, 4)
    kept = select_tokens(contiguous_scores(10), offsets, 10)
    assert kept.tolist() == list(range(30, 40))


def test_retain_kv_layouts_and_gathered_values():
    torch.manual_seed(0)
    L, H, T, d = 3, 2, 20, 5
    keys, values = torch.randn(L, H, T, d), torch.randn(L, H, T, d)
    offsets = np.arange(0, 21, 4)
    scores = torch.tensor([0.0, 5.0, 1.0, 2.0, 3.0])
    k, v, kept = retain_kv(keys, values, offsets, 0.4, scores, pinned_steps=(0,))
    assert k.shape == (L, H, 8, d) and kept.tolist() == list(range(0, 8))  # pinned step 0, then step 1
    torch.testing.assert_close(v, values[:, :, :8])
    # list of batched per-layer tensors (a transformers cache's layout)
    kl = [torch.randn(2, H, T, d) for _ in range(L)]
    k2, _v2, kept2 = retain_kv(kl, kl, offsets, 0.2, torch.stack([scores, -scores]))
    assert isinstance(k2, list) and k2[0].shape == (2, H, 4, d)
    assert kept2[0].tolist() == [4, 5, 6, 7] and kept2[1].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("budget", [0.0, -0.1, 1.5, float("nan")])
def test_bad_budget(budget):
    with pytest.raises(ValueError, match="budget"):
        retain_kv(torch.zeros(1, 1, 8, 2), torch.zeros(1, 1, 8, 2), [0, 4, 8], budget, torch.zeros(2))


def test_bad_offsets_and_mismatched_caches():
    k = torch.zeros(2, 2, 8, 3)
    with pytest.raises(ValueError, match="cover the sequence"):
        retain_kv(k, k, [0, 4, 7], 0.5, torch.zeros(2))
    with pytest.raises(ValueError, match="strictly increasing"):
        check_offsets([0, 4, 4, 8], 8)
    with pytest.raises(ValueError, match="layers"):
        retain_kv(k, k[:1], [0, 4, 8], 0.5, torch.zeros(2))
    with pytest.raises(ValueError, match="heads"):
        retain_kv([k[0], k[1, :1]], [k[0], k[1, :1]], [0, 4, 8], 0.5, torch.zeros(2))
    with pytest.raises(ValueError, match="values"):
        retain_kv(k, torch.zeros(2, 3, 8, 3), [0, 4, 8], 0.5, torch.zeros(2))
    with pytest.raises(ValueError, match="pinned"):
        retain_kv(k, k, [0, 4, 8], 0.25, torch.zeros(2), pinned_steps=(0,))
    with pytest.raises(ValueError, match="NaN"):
        retain_kv(k, k, [0, 4, 8], 0.5, torch.tensor([0.0, float("nan")]))
    with pytest.raises(ValueError, match="steps"):
        retain_kv(k, k, [0, 4, 8], 0.5, torch.zeros(3))


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.lists(st.integers(1, 5), min_size=2, max_size=8), min_size=2, max_size=4),
    seed=st.integers(0, 10_000),
)
def test_per_row_offsets_select_like_each_row_alone_and_priority_matches_any_n(lengths, seed):
    """Ragged layouts (rows with different steps, one sequence length) select per row exactly what
    that row alone selects; a top-n over token_priority equals select_tokens for every n."""
    seq = min(sum(r) for r in lengths)
    rows = []
    for r in lengths:  # trim each row's steps to cover exactly `seq` tokens
        out, tot = [], 0
        for x in r:
            x = min(x, seq - tot)
            if x > 0:
                out.append(x)
                tot += x
        rows.append(np.concatenate([[0], np.cumsum(out)]))
    lay = step_layout(rows, seq)
    rng = np.random.default_rng(seed)
    scores = torch.as_tensor(rng.normal(size=(len(rows), lay.max_steps)), dtype=torch.float32)
    for n in range(1, seq + 1):
        kept = select_tokens(
            scores, rows, n, pinned_steps=(-1,) if n >= max(r[-1] - r[-2] for r in rows) else ()
        )
        pins = (-1,) if n >= max(r[-1] - r[-2] for r in rows) else ()
        pr = token_priority(scores, lay, pins)
        top = torch.sort(torch.topk(pr, n, dim=1).indices, 1).values
        assert torch.equal(top, kept)
        for i, o in enumerate(rows):
            alone = select_tokens(scores[i, : len(o) - 1], o, n, pins)
            assert alone.tolist() == kept[i].tolist()


def test_numpy_scores_and_layout_errors():
    k = torch.zeros(2, 2, 8, 3)
    _, _, kept = retain_kv(k, k, [0, 4, 8], 0.5, np.array([0.0, 1.0]))  # NumPy scores: converted
    assert kept.tolist() == [4, 5, 6, 7]
    with pytest.raises(ValueError, match="offsets"):
        step_layout([[0, 4, 8], [0, 8]], 8, batch=3)  # one row of boundaries per batch row
    with pytest.raises(ValueError, match="cover"):
        step_layout([[0, 4, 8], [0, 7]], 8)
    with pytest.raises(ValueError, match="pinned_steps"):
        select_tokens(torch.zeros(2, 3), [[0, 2, 4, 8], [0, 4, 8]], 4, pinned_steps=(2,))
