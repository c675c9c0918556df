import pytest
import torch

from paperworks.pm_lora import (
    MLP,
    PMLoRA,
    PMLoRAConfig,
    load_peft_state_dict,
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
