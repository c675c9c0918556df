"""target_modules like peft's: names, regex, "all-linear", GPT-2 Conv1D, refusals."""

import copy

import pytest
import torch
from torch import nn

from paperworks.pm_lora import MLP, PMLoRA, PMLoRAConfig, find_target_modules

torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.enc(x))


def test_names_regex_and_all_linear_on_a_plain_model():
    m = MLP(8, 16, 4)
    assert find_target_modules(m, ["fc1", "fc3"]) == ["fc1", "fc3"]
    assert find_target_modules(m, "fc[12]") == ["fc1", "fc2"]
    assert find_target_modules(m, "ALL-LINEAR") == ["fc1", "fc2", "fc3"]  # no output head known
    net = Net()
    # suffix match on the last components, as peft does
    assert find_target_modules(net, ["linear1"]) == ["enc.linear1"]
    assert find_target_modules(net, ["enc.linear2"]) == ["enc.linear2"]
    # all-linear skips the attention's out_proj (it cannot be wrapped)
    assert find_target_modules(net, "all-linear") == ["enc.linear1", "enc.linear2", "head"]


def test_refusals_are_clear():
    net = Net()
    with pytest.raises(ValueError, match=r"target_modules: 'enc\.self_attn\.out_proj' is the out_proj"):
        find_target_modules(net, ".*")
    with pytest.raises(ValueError, match=r"target_modules: 'enc\.self_attn\.out_proj' is the out_proj"):
        find_target_modules(net, ["out_proj"])
    with pytest.raises(ValueError, match="not a valid regular expression"):
        find_target_modules(net, "(")
    with pytest.raises(ValueError, match=r"'enc\.norm1' is a LayerNorm"):
        find_target_modules(net, ["norm1"])
    with pytest.raises(ValueError, match=r"matches no nn\.Linear or Conv1D"):
        find_target_modules(net, ["q_proj"])
    pm = PMLoRA(net, PMLoRAConfig(rank=2, task_rank=1, target_modules=["linear1"]))
    with pytest.raises(ValueError, match="already carries a continual adapter"):
        find_target_modules(pm.model, ["linear1"])
    # the layers inside an adapter are never selected again
    assert find_target_modules(pm.model, "all-linear") == ["enc.linear2", "head"]


def test_regex_on_a_transformer_layer_trains_and_keeps_the_attention_working():
    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        before = net(x)
    pm = PMLoRA(copy.deepcopy(net), PMLoRAConfig(rank=3, task_rank=2, target_modules=r"enc\.linear\d|head"))
    with torch.no_grad():
        assert torch.allclose(pm(x), before, atol=1e-6)  # zero-initialised B: same function
    pm.begin_task()
    opt = torch.optim.Adam(list(pm.trainable_parameters()), lr=1e-2)
    for _ in range(3):
        opt.zero_grad()
        pm(x).square().mean().backward()
        opt.step()
    pm.end_task()
    assert pm.layers["head"].merged_B.abs().max() > 0
    # eval + no_grad would take PyTorch's fused encoder path, which reads linear1.weight and skips
    # the adapter: the adapted output must be the same in eval as in train mode (dropout is 0)
    pm.train()
    train_out = pm(x).detach()
    pm.eval()
    with torch.no_grad():
        eval_out = pm(x)
    assert torch.allclose(eval_out, train_out, atol=1e-6)
    assert not torch.allclose(eval_out, before, atol=1e-4)


def test_gpt2_conv1d_is_targeted_with_fan_in_fan_out():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=32, n_positions=8)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    names = find_target_modules(model, "all-linear")
    assert "lm_head" not in names  # the output layer is left alone, like peft
    assert names == [
        "transformer.h.0.attn.c_attn",
        "transformer.h.0.attn.c_proj",
        "transformer.h.0.mlp.c_fc",
        "transformer.h.0.mlp.c_proj",
    ]
    assert find_target_modules(model, ["c_attn"]) == ["transformer.h.0.attn.c_attn"]
    pm = PMLoRA(model, PMLoRAConfig(rank=4, task_rank=2, target_modules=["c_attn"]))
    layer = pm.layers["transformer.h.0.attn.c_attn"]
    assert layer.fan_in_fan_out and (layer.in_features, layer.out_features) == (16, 48)
    pm.begin_task()
    with torch.no_grad():
        for p in pm.trainable_parameters():
            p.normal_()
    x = torch.randn(3, 16)
    # independent route: Conv1D computes x @ W + b with W (in, out); the adapter adds x @ delta^T
    expect = x @ (layer.base.weight + layer.delta_weight().T) + layer.base.bias
    with torch.no_grad():
        assert torch.allclose(layer(x), expect, atol=1e-5)
