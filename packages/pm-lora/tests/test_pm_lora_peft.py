import pytest
import torch

from paperworks.pm_lora import (
    MLP,
    PMLoRA,
    PMLoRAConfig,
    from_peft_dir,
    load_peft_state_dict,
    save_peft_dir,
    to_peft_model,
    to_peft_state_dict,
)

peft = pytest.importorskip("peft")
torch.set_num_threads(1)
TM = ("fc1", "fc2")


def _trained_pm(seed=0):
    torch.manual_seed(seed)
    pm = PMLoRA(MLP(12, 20, 5), PMLoRAConfig(rank=4, task_rank=2, target_modules=TM))
    for _ in range(3):
        pm.begin_task()
        with torch.no_grad():
            for p in pm.trainable_parameters():
                p.normal_()
        pm.end_task()
    return pm


def test_peft_round_trip_is_exact():
    pm = _trained_pm()
    x = torch.randn(7, 12)
    peft_model = to_peft_model(pm)
    # export -> peft: peft reads back exactly our tensors, and computes the same function
    theirs = peft.get_peft_model_state_dict(peft_model)
    ours = to_peft_state_dict(pm)
    assert set(theirs) == set(ours)
    for k in ours:
        assert torch.equal(theirs[k], ours[k]), k
    with torch.no_grad():
        assert torch.allclose(peft_model(x), pm(x), atol=1e-6)
    # peft -> load into a fresh PM-LoRA on the same base: identical tensors and outputs
    fresh = PMLoRA(peft_model.get_base_model().__class__(12, 20, 5), pm.config)
    fresh.model.load_state_dict(
        {k: v for k, v in pm.model.state_dict().items() if "merged" not in k and "basis" not in k},
        strict=False,
    )
    for name, layer in fresh.layers.items():
        layer.base.load_state_dict(pm.layers[name].base.state_dict())
    load_peft_state_dict(fresh, theirs)
    for name in pm.layers:
        assert torch.equal(fresh.layers[name].merged_A, pm.layers[name].merged_A)
        assert torch.equal(fresh.layers[name].merged_B, pm.layers[name].merged_B)
    with torch.no_grad():
        assert torch.equal(fresh(x), pm(x))


def test_load_errors_are_clear():
    pm = _trained_pm()
    sd = to_peft_state_dict(pm)
    other = PMLoRA(MLP(12, 20, 5), PMLoRAConfig(rank=3, task_rank=2, target_modules=TM))
    with pytest.raises(ValueError, match=r"expected shape \(3, 12\)"):
        load_peft_state_dict(other, sd)
    bad = dict(sd)
    k = next(iter(bad))
    bad[k] = bad[k].double()
    with pytest.raises(ValueError, match="does not match the base layer's"):
        load_peft_state_dict(pm, bad)
    with pytest.raises(KeyError, match="missing keys"):
        load_peft_state_dict(pm, {k: sd[k]})
    before = pm.layers["fc1"].merged_A.clone()
    with pytest.raises(ValueError):
        load_peft_state_dict(pm, bad)
    assert torch.equal(pm.layers["fc1"].merged_A, before)  # nothing partially written
    pm.begin_task()
    with pytest.raises(RuntimeError, match="still open"):
        to_peft_state_dict(pm)


def _tiny_gpt2():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=64, n_positions=16)
    return transformers.GPT2LMHeadModel(cfg).eval()


def test_gpt2_round_trip_through_peft(tmp_path):
    import copy

    base = _tiny_gpt2()
    pm = PMLoRA(copy.deepcopy(base), PMLoRAConfig(rank=8, task_rank=4))  # default: all-linear, Conv1D
    assert len(pm.layers) == 8 and all(layer.fan_in_fan_out for layer in pm.layers.values())
    ids = torch.randint(0, 64, (2, 10), generator=torch.Generator().manual_seed(1))
    for _ in range(3):
        pm.begin_task()
        with torch.no_grad():
            for p in pm.trainable_parameters():
                p.normal_(0.0, 0.3)
        pm.end_task()
    with torch.no_grad():
        ours = pm(ids).logits
        assert not torch.allclose(ours, base(ids).logits, atol=1e-3)  # the adapter does something
        # ours -> peft model: the same logits
        peft_model = to_peft_model(pm).eval()
        assert torch.allclose(peft_model(ids).logits, ours, atol=1e-5)
        # peft save_pretrained -> from_peft_dir on a fresh copy of the base: the same logits
        peft_model.save_pretrained(tmp_path / "peft")
        back = from_peft_dir(tmp_path / "peft", copy.deepcopy(base)).eval()
        assert sorted(back.layers) == sorted(pm.layers)
        assert torch.allclose(back(ids).logits, ours, atol=1e-5)
        # our save_peft_dir -> peft's own loader: the same logits
        save_peft_dir(pm, tmp_path / "ours")
        loaded = peft.PeftModel.from_pretrained(copy.deepcopy(base), tmp_path / "ours").eval()
        assert torch.allclose(loaded(ids).logits, ours, atol=1e-5)


def test_from_peft_dir_reads_alpha_and_rslora(tmp_path):
    import json

    pm = _trained_pm()
    save_peft_dir(pm, tmp_path)
    cfg_path = tmp_path / "adapter_config.json"
    x = torch.randn(5, 12)
    for alpha, rslora, scale in ((8, False, 2.0), (8, True, 4.0)):  # r = 4
        cfg = json.loads(cfg_path.read_text())
        cfg.update(lora_alpha=alpha, use_rslora=rslora)
        cfg_path.write_text(json.dumps(cfg))
        base = MLP(12, 20, 5)
        base.load_state_dict(
            {
                k.replace(".base.", "."): v
                for k, v in pm.model.state_dict().items()
                if ".base." in k or k.startswith("fc3")
            }
        )
        back = from_peft_dir(tmp_path, base)
        for name, layer in back.layers.items():
            assert torch.allclose(layer.merged_B, scale * pm.layers[name].merged_B)
            assert torch.equal(layer.merged_A, pm.layers[name].merged_A)
        assert back(x).shape == (5, 5)


def test_peft_dir_errors(tmp_path):
    import json

    with pytest.raises(FileNotFoundError, match=r"path: .* is not a folder"):
        from_peft_dir(tmp_path / "nowhere", MLP(12, 20, 5))
    with pytest.raises(FileNotFoundError, match=r"no adapter_config\.json"):
        from_peft_dir(tmp_path, MLP(12, 20, 5))
    save_peft_dir(_trained_pm(), tmp_path)
    cfg = json.loads((tmp_path / "adapter_config.json").read_text())
    (tmp_path / "adapter_config.json").write_text(json.dumps({**cfg, "use_dora": True}))
    with pytest.raises(ValueError, match="use_dora=True"):
        from_peft_dir(tmp_path, MLP(12, 20, 5))
    (tmp_path / "adapter_config.json").write_text(json.dumps({**cfg, "r": 0}))
    with pytest.raises(ValueError, match=r"r \(adapter_config\.json\): expected an int >= 1"):
        from_peft_dir(tmp_path, MLP(12, 20, 5))
    (tmp_path / "adapter_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"matches no nn\.Linear"):
        from_peft_dir(tmp_path, torch.nn.Sequential(torch.nn.Linear(12, 5)))
