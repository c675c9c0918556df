import pytest
import torch
from torch import nn

pytest.importorskip("peft")

from paperworks.pgsb import LoRAAdapter, merge
from paperworks.pgsb.peft_interop import from_peft_model, peft_merge, to_peft_model


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
    # peft's forward with task1 active equals the base with our merged weights (K = 1)
    pm.set_adapter("task1")
    x = torch.randn(5, 8)
    merged = merge(base, [ads[1]], "pgsb")
    ref = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4))
    ref.load_state_dict(base.state_dict())
    with torch.no_grad():
        ref[0].weight.copy_(merged["0"])
        ref[2].weight.copy_(merged["2"])
        assert torch.allclose(pm(x), ref(x), atol=1e-5)


def test_peft_cat_equals_task_arithmetic():
    # plain LoRA scaling; with rsLoRA peft 0.21's "cat" differs from sum_k Delta_k (see README)
    base, ads = _setup(use_rslora=False)
    ours = merge(base, ads, "task_arithmetic", output="delta")
    theirs = peft_merge(base, ads, "cat")
    for n in ours:
        assert torch.allclose(ours[n], theirs[n], atol=1e-4)
