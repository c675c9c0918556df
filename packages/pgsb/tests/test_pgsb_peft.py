"""The real peft (and transformers): adapters in, merges scored beside peft's, rank-r LoRAs back out."""

import copy
import json
import warnings

import pytest
import torch
from torch import nn

peft = pytest.importorskip("peft")
transformers = pytest.importorskip("transformers")

from paperworks.pgsb import LoRAAdapter, merge  # noqa: E402
from paperworks.pgsb.peft_interop import (  # noqa: E402
    from_peft_model,
    peft_merge,
    peft_weighted_merge,
    to_peft_model,
)


def _setup(use_rslora=True):
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4))
    ads = [
        {
            "0": LoRAAdapter(torch.randn(2, 8), torch.randn(6, 2), alpha=4.0, use_rslora=use_rslora),
            "2": LoRAAdapter(torch.randn(2, 6), torch.randn(4, 2), alpha=4.0, use_rslora=use_rslora),
        }
        for _ in range(3)
    ]
    return base, ads


def test_round_trip_and_forward_agree():
    base, ads = _setup()
    pm = to_peft_model(base, ads)
    back = from_peft_model(pm, "task1")
    for n in ("0", "2"):
        assert torch.allclose(back[n].delta(), ads[1][n].delta())
    pm.set_adapter("task1")
    x = torch.randn(5, 8)
    merged = merge(base, [ads[1]], "pgsb")
    ref = copy.deepcopy(base)
    with torch.no_grad():
        ref[0].weight.copy_(merged["0"])
        ref[2].weight.copy_(merged["2"])
        assert torch.allclose(pm(x), ref(x), atol=1e-5)


def test_peft_cat_equals_task_arithmetic_and_the_model_is_left_as_it_was():
    # plain LoRA scaling; with rsLoRA peft 0.21's "cat" differs from sum_k Delta_k (see README)
    base, ads = _setup(use_rslora=False)
    ours = merge(base, ads, "task_arithmetic", output="delta")
    theirs = peft_merge(base, ads, "cat")
    for n in ours:
        assert torch.allclose(ours[n], theirs[n], atol=1e-4)
    pm = to_peft_model(base, ads)
    before = set(pm.peft_config)
    svd = peft_weighted_merge(pm, ["task0", "task1", "task2"], "svd", weights=[0.5] * 3)
    assert set(pm.peft_config) == before and set(svd) == {"0", "2"}


def _tiny_llama():
    cfg = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg).eval(), ["q_proj", "v_proj"]


def _tiny_gpt2():
    cfg = transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=4, n_positions=32)
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(cfg).eval(), ["c_attn", "c_proj"]


def _trained_like_adapters(model, targets):
    """Three peft adapters with random (non-zero) B, different alphas, one rsLoRA; read back as ours."""
    configs = [
        peft.LoraConfig(r=2, lora_alpha=4, target_modules=targets, init_lora_weights=False),
        peft.LoraConfig(r=2, lora_alpha=16, target_modules=targets, init_lora_weights=False),
        peft.LoraConfig(r=4, lora_alpha=8, use_rslora=True, target_modules=targets, init_lora_weights=False),
    ]
    pm = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # peft's fan_in_fan_out notice for Conv1D
        for k, c in enumerate(configs):
            if pm is None:
                pm = peft.get_peft_model(copy.deepcopy(model), c, adapter_name=f"t{k}")
            else:
                pm.add_adapter(f"t{k}", c)
    return pm, [from_peft_model(pm, f"t{k}") for k in range(3)]


@pytest.mark.parametrize("make", [_tiny_llama, _tiny_gpt2], ids=["llama", "gpt2-conv1d"])
def test_merge_back_to_a_peft_folder_round_trip(make, tmp_path):
    model, targets = make()
    pm, tasks = _trained_like_adapters(model, targets)
    ids = torch.randint(0, 64, (2, 7), generator=torch.Generator().manual_seed(1))
    # each read-back adapter reproduces peft's own forward (per-adapter alpha, rsLoRA, Conv1D layout)
    for k, task in enumerate(tasks):
        pm.set_adapter(f"t{k}")
        ref = copy.deepcopy(model)
        weights = merge(ref, [task], "task_arithmetic")
        with torch.no_grad():
            for n, w in weights.items():
                ref.get_submodule(n).weight.copy_(w)
            assert torch.allclose(pm(ids).logits, ref(ids).logits, atol=1e-5)
    # the PGSB merge as one exact LoRA (rank 2 + 2 + 4 = 8), saved and loaded by peft itself
    merged = merge(pm, tasks, "pgsb", output="lora", lam=0.7)
    assert merged.rank == 8
    folder = merged.save_pretrained(tmp_path / "merged")
    assert sorted(p.name for p in folder.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    assert json.loads((folder / "adapter_config.json").read_text())["r"] == 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = peft.PeftModel.from_pretrained(copy.deepcopy(model), str(folder)).eval()
    dense = merge(model, tasks, "pgsb", lam=0.7)  # weights in each module's own layout
    ref = copy.deepcopy(model)
    with torch.no_grad():
        for n, w in dense.items():
            ref.get_submodule(n).weight.copy_(w)
        assert torch.allclose(loaded(ids).logits, ref(ids).logits, atol=1e-4)
    # a rank-2 LoRA of the same merge: the best rank-2 approximation, and peft loads it too
    small = merge(model, tasks, "pgsb", output="lora", rank=2, lam=0.7)
    small.save_pretrained(tmp_path / "small")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peft.PeftModel.from_pretrained(copy.deepcopy(model), str(tmp_path / "small"))
    assert all(ad.rank == 2 for ad in small.adapters.values())


def test_conv1d_layers_are_found_and_transposed():
    model, targets = _tiny_gpt2()
    pm, tasks = _trained_like_adapters(model, targets)
    name = "transformer.h.0.attn.c_attn"
    delta = merge(model, tasks[:1], "task_arithmetic", output="delta")[name]
    assert delta.shape == model.get_submodule(name).weight.shape == (32, 96)  # Conv1D: (d_in, d_out)
    pm.set_adapter("t0")
    assert torch.allclose(delta, pm.base_model.model.get_submodule(name).get_delta_weight("t0"), atol=1e-6)
    merged = merge(model, tasks, "pgsb", output="lora")
    assert merged.fan_in_fan_out == tuple(sorted(tasks[0])) and len(tasks[0]) == 3  # attn + mlp c_proj
    assert merged.lora_config()["fan_in_fan_out"] is True


def test_refuses_what_a_lora_merge_cannot_carry():
    model, targets = _tiny_llama()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dora = peft.get_peft_model(
            copy.deepcopy(model),
            peft.LoraConfig(r=2, target_modules=targets, use_dora=True),
            adapter_name="d",
        )
    with pytest.raises(ValueError, match="DoRA"):
        from_peft_model(dora, "d")
    sd = peft.get_peft_model_state_dict(dora, adapter_name="d")
    with pytest.raises(ValueError, match="DoRA"):
        merge(model, [sd], "pgsb", lora_alpha=8.0, use_rslora=False)
    emb = peft.get_peft_model(
        copy.deepcopy(model), peft.LoraConfig(r=2, target_modules=["embed_tokens"]), adapter_name="e"
    )
    with pytest.raises(ValueError, match="embedding"):
        from_peft_model(emb, "e")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # peft's save_embedding_layers notice
        sd = peft.get_peft_model_state_dict(emb, adapter_name="e")
    with pytest.raises(ValueError, match="embedding"):
        merge(model, [sd], "pgsb", lora_alpha=8.0, use_rslora=False)
