import pytest
import torch
from torch import nn

from paperworks.pruning_geometry import find_layers, remove_layers, residual_scaling, without_layers


def logits(model, ids):
    with torch.inference_mode():
        return model(input_ids=ids, use_cache=False).logits


def test_alpha_zero_equals_removal_exactly(tiny_lm, ids):
    with residual_scaling(tiny_lm, {1: 0.0, 3: 0.0}):
        scaled = logits(tiny_lm, ids)
    pruned = remove_layers(tiny_lm, [1, 3])
    assert torch.equal(scaled, logits(pruned, ids))
    with without_layers(tiny_lm, [3, 1]) as m:
        assert torch.equal(scaled, logits(m, ids))
    # alpha = 1 is the model itself, hooks gone after the block
    with residual_scaling(tiny_lm, {0: 1.0}):
        assert torch.equal(logits(tiny_lm, ids), logits(remove_layers(tiny_lm, []), ids))
    assert not any(layer._forward_hooks for layer in tiny_lm.model.layers)


def test_scaling_is_linear_in_the_layer_update(tiny_lm, ids):
    h0, h1 = {}, {}

    def grab(store):
        def hook(mod, args, kwargs, out):
            store["in"], store["out"] = (args[0] if args else kwargs["hidden_states"]), out

        return hook

    handle = tiny_lm.model.layers[0].register_forward_hook(grab(h0), with_kwargs=True)
    logits(tiny_lm, ids)
    handle.remove()
    with residual_scaling(tiny_lm, {0: 0.5}):
        handle = tiny_lm.model.layers[0].register_forward_hook(grab(h1), with_kwargs=True)
        logits(tiny_lm, ids)
        handle.remove()
    expected = h0["in"] + 0.5 * (h0["out"] - h0["in"])
    torch.testing.assert_close(h1["out"], expected)


def test_pruned_model_saves_and_reloads(tiny_lm, ids, tmp_path):
    from transformers import AutoModelForCausalLM

    pruned = remove_layers(tiny_lm, [0, 2])
    assert pruned.config.num_hidden_layers == 2 and len(pruned.model.layers) == 2
    assert tiny_lm.config.num_hidden_layers == 4 and len(tiny_lm.model.layers) == 4
    assert [layer.self_attn.layer_idx for layer in pruned.model.layers] == [0, 1]
    pruned.save_pretrained(tmp_path)
    back = AutoModelForCausalLM.from_pretrained(tmp_path, attn_implementation="eager").eval()
    assert back.config.num_hidden_layers == 2
    assert torch.equal(logits(back, ids), logits(pruned, ids))
    # generation with a KV cache runs on the renumbered layers
    out = back.generate(ids[:2, :3], max_new_tokens=2, do_sample=False)
    assert out.shape == (2, 5)


def test_bad_input(tiny_lm):
    with pytest.raises(ValueError, match="out of range"):
        remove_layers(tiny_lm, [4])
    with pytest.raises(ValueError, match="all 4 layers"):
        remove_layers(tiny_lm, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="twice"):
        remove_layers(tiny_lm, [1, 1])
    with pytest.raises(ValueError, match="alpha >= 0"):
        with residual_scaling(tiny_lm, {0: -0.1}):
            pass
    with pytest.raises(ValueError, match="out of range"):
        with residual_scaling(tiny_lm, {9: 0.5}):
            pass

    class Listy(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2)]

    with pytest.raises(
        TypeError, match=r"model\.layers: expected the decoder layers as a torch.nn.ModuleList"
    ):
        find_layers(Listy())
    with pytest.raises(AttributeError, match="no decoder layers"):
        find_layers(nn.Linear(2, 2))
    with pytest.raises(AttributeError, match="layers_attr"):
        find_layers(tiny_lm, "model.blocks")
