"""merge(..., output="lora"): a rank-r adapter, checked against the dense SVD (Eckart-Young)."""

import pytest
import torch
from torch import nn

from paperworks.pgsb import METHODS, LoRAAdapter, MergedLoRA, merge, truncate_factors


def _setup(K=3, r=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    base = nn.Sequential(nn.Linear(10, 12), nn.ReLU(), nn.Linear(12, 7))
    ads = [
        {
            "0": LoRAAdapter(torch.randn(r, 10, generator=g), torch.randn(12, r, generator=g), alpha=4.0),
            "2": LoRAAdapter(torch.randn(r, 12, generator=g), torch.randn(7, r, generator=g), alpha=4.0),
        }
        for _ in range(K)
    ]
    return base, ads


def _svd_truncation(M, r):
    U, S, Vh = torch.linalg.svd(M.double(), full_matrices=False)
    return (U[:, :r] * S[:r]) @ Vh[:r]


def test_truncate_factors_is_the_best_rank_r_approximation():
    g = torch.Generator().manual_seed(1)
    B, A = (
        torch.randn(9, 6, generator=g, dtype=torch.float64),
        torch.randn(6, 11, generator=g, dtype=torch.float64),
    )
    for r in (1, 3, 6, 8):
        Br, Ar = truncate_factors(B, A, r)
        assert Br.shape == (9, r) and Ar.shape == (r, 11)
        assert torch.allclose(Br @ Ar, _svd_truncation(B @ A, r), atol=1e-10)


@pytest.mark.parametrize("method", ["pgsb", "pgsb_no_shared", "task_arithmetic", "knots"])
def test_exact_lora_of_the_low_rank_methods(method):
    base, ads = _setup()
    dense = merge(base, ads, method, output="delta", lam=0.7)
    lora = merge(base, ads, method, output="lora", lam=0.7)
    assert isinstance(lora, MergedLoRA) and lora.rank == 6  # 3 tasks x rank 2
    for n, d in dense.items():
        ad = lora.adapters[n]
        assert ad.scaling == 1.0 and ad.rank == lora.rank
        assert torch.allclose(ad.delta(), d, atol=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_rank_r_lora_is_the_svd_truncation_of_the_merge(method):
    base, ads = _setup()
    opts = {"generator": torch.Generator().manual_seed(0)} if method == "dare" else {}
    dense = merge(base, ads, method, output="delta", **opts)
    opts = {"generator": torch.Generator().manual_seed(0)} if method == "dare" else {}
    lora = merge(base, ads, method, output="lora", rank=3, **opts)
    for n, d in dense.items():
        assert torch.allclose(lora.adapters[n].delta().double(), _svd_truncation(d, 3), atol=1e-4)


def test_dense_methods_need_a_rank_and_rank_needs_lora():
    base, ads = _setup()
    with pytest.raises(ValueError, match="rank: required"):
        merge(base, ads, "ties", output="lora")
    with pytest.raises(ValueError, match="rank: only used with output='lora'"):
        merge(base, ads, "pgsb", output="delta", rank=2)


def test_state_dict_and_config():
    base, ads = _setup()
    lora = merge(base, ads, "pgsb", output="lora", rank=4)
    sd = lora.state_dict()
    assert sorted(sd) == [
        "base_model.model.0.lora_A.weight",
        "base_model.model.0.lora_B.weight",
        "base_model.model.2.lora_A.weight",
        "base_model.model.2.lora_B.weight",
    ]
    assert sd["base_model.model.0.lora_A.weight"].shape == (4, 10)
    assert sd["base_model.model.2.lora_B.weight"].shape == (7, 4)
    cfg = lora.lora_config()
    assert cfg["r"] == 4 and cfg["lora_alpha"] == 4.0 and cfg["target_modules"] == ["0", "2"]
    assert cfg["fan_in_fan_out"] is False and cfg["use_rslora"] is False
