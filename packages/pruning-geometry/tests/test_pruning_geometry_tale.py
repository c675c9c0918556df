import numpy as np
import pytest
import torch

from paperworks.pruning_geometry import (
    block_influence,
    block_influence_removal,
    random_removal,
    sleb_search,
    tale_prune,
    tale_search,
    without_layers,
)


def make_val(ids):
    target = ids[:, -1]

    def val(model):  # batched: one forward pass for the whole validation set
        logits = model(input_ids=ids, use_cache=False).logits[:, -2]
        return (logits.argmax(-1) == target).float().mean() - 1e-3 * logits.logsumexp(-1).mean()

    return val


def test_each_greedy_step_is_the_best_single_removal(tiny_lm, ids):
    val = make_val(ids)
    res = tale_search(tiny_lm, val, min_gain=-1.0)  # accept every step: a full trace to check
    assert len(res.removed) == 3 and res.evaluations == 1 + 4 + 3 + 2
    removed: list[int] = []
    for step in res.steps:
        brute = {}
        for cand in range(4):
            if cand in removed:
                continue
            with without_layers(tiny_lm, [*removed, cand]) as m, torch.inference_mode():
                brute[cand] = float(val(m))
        assert step.candidates.keys() == brute.keys()
        assert all(abs(step.candidates[k] - brute[k]) < 1e-6 for k in brute)
        best = max(brute, key=lambda k: (brute[k], -k))
        assert step.chosen == best
        removed.append(best)
    assert removed == res.removed


def test_stopping_rule_and_budget(tiny_lm, ids):
    def val(m):  # removing layer 1 helps, any other removal costs 0.1
        removed = {0, 1, 2, 3} - set(_ids(m))
        return 0.5 + 0.2 * (1 in removed) - 0.1 * len(removed - {1})

    res = tale_search(tiny_lm, val)  # min_gain 0: stop at the first step that would lower the score
    assert res.removed == [1] and res.score == pytest.approx(0.7) and res.base_score == 0.5
    assert [step.accepted for step in res.steps] == [True, False]
    # brute force: when TALE stops, every remaining single removal lowers the score
    for cand in res.kept:
        with without_layers(tiny_lm, [*res.removed, cand]) as m, torch.inference_mode():
            assert float(val(m)) < res.score
    assert len(tale_search(tiny_lm, make_val(ids), max_remove=1, min_gain=-1.0).removed) == 1
    out = tale_prune(tiny_lm, make_val(ids), max_remove=2, min_gain=-1.0)
    assert out.model.config.num_hidden_layers == 2 and tiny_lm.config.num_hidden_layers == 4
    assert out.kept == [i for i in range(4) if i not in out.removed]


def test_ties_are_accepted_lowest_index_first(tiny_lm):
    """TALE's rule keeps a removal that does not lower validation accuracy (a tie is kept)."""
    res = tale_search(tiny_lm, lambda m: 0.5)  # every candidate ties with the current score
    assert res.removed == [0, 1, 2] and res.score == 0.5
    assert tale_search(tiny_lm, lambda m: 0.5, min_gain=1e-9).removed == []  # a strict rule: none
    # a candidate that ties beats a lower one, whatever its index
    res = tale_search(tiny_lm, lambda m: 1.0 if len(m.model.layers) == 4 or 2 not in _ids(m) else 0.0)
    assert res.removed[0] == 2


def _ids(model):
    return [layer.self_attn.layer_idx for layer in model.model.layers]


def test_baselines(tiny_lm, ids):
    def loss(m):
        lg = m(input_ids=ids, use_cache=False).logits
        return torch.nn.functional.cross_entropy(lg[:, :-1].reshape(-1, lg.shape[-1]), ids[:, 1:].reshape(-1))

    sl = sleb_search(tiny_lm, loss, 2)
    assert len(sl) == 2 and len(set(sl)) == 2
    bi = block_influence(tiny_lm, {"input_ids": ids, "use_cache": False})
    assert bi.shape == (4,) and np.all(np.isfinite(bi))
    assert block_influence_removal(tiny_lm, ids, 2) == [int(i) for i in np.argsort(bi, kind="stable")[:2]]
    r = random_removal(8, 3, np.random.default_rng(0))
    assert len(set(r)) == 3 and all(0 <= i < 8 for i in r)


def test_bad_input(tiny_lm, ids):
    with pytest.raises(TypeError, match="val_fn: expected a scalar"):
        tale_search(tiny_lm, lambda m: torch.zeros(3))
    with pytest.raises(TypeError, match="val_fn: expected a scalar"):
        tale_search(tiny_lm, lambda m: "high")
    with pytest.raises(ValueError, match="val_fn: expected a finite"):
        tale_search(tiny_lm, lambda m: float("nan"))
    with pytest.raises(TypeError, match="val_fn: expected a callable"):
        tale_search(tiny_lm, 3.0)
    with pytest.raises(ValueError, match="max_remove"):
        tale_search(tiny_lm, make_val(ids), max_remove=4)
    with pytest.raises(ValueError, match="n_remove"):
        random_removal(4, 4)
    with pytest.raises(ValueError, match="n_remove: expected at most 3"):
        sleb_search(tiny_lm, lambda m: 0.0, 4)
    with pytest.raises(TypeError, match="loss_fn"):
        sleb_search(tiny_lm, None, 1)
