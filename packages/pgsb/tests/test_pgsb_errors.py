import pytest
import torch

from paperworks.pgsb import LoRAAdapter, PGSBConfig, merge, shared_basis, ties_merge


def test_rank_mismatch_inside_adapter():
    with pytest.raises(ValueError, match="rank mismatch"):
        LoRAAdapter(torch.randn(2, 5), torch.randn(6, 3))


def test_nan_weights():
    A = torch.randn(2, 5)
    A[0, 0] = float("nan")
    with pytest.raises(ValueError, match="A: contains NaN"):
        LoRAAdapter(A, torch.randn(6, 2))
    W0 = torch.zeros(6, 5)
    W0[1, 1] = float("inf")
    with pytest.raises(ValueError, match="base\\['l'\\]: contains NaN"):
        merge({"l": W0}, [{"l": LoRAAdapter(torch.randn(2, 5), torch.randn(6, 2))}])


def test_k_zero():
    with pytest.raises(ValueError, match="K >= 1"):
        merge({"l": torch.zeros(6, 5)}, [])
    with pytest.raises(ValueError, match="K = 0"):
        shared_basis([])
    with pytest.raises(ValueError, match="K = 0"):
        ties_merge(torch.zeros(0, 2, 2))


def test_shape_mismatch_and_absent_layer():
    ad = LoRAAdapter(torch.randn(2, 4), torch.randn(6, 2))
    with pytest.raises(ValueError, match="expected shape \\(6, 5\\)"):
        merge({"l": torch.zeros(6, 5)}, [{"l": ad}])
    with pytest.raises(KeyError, match="'missing' is not a linear layer"):
        merge({"l": torch.zeros(6, 4)}, [{"missing": ad}])
    with pytest.raises(ValueError, match="adapters\\[1\\]: expected layer shape"):
        shared_basis([ad, LoRAAdapter(torch.randn(2, 5), torch.randn(6, 2))])


def test_peft_state_dict_needs_explicit_scaling():
    sd = {
        "base_model.model.l.lora_A.weight": torch.randn(2, 5),
        "base_model.model.l.lora_B.weight": torch.randn(6, 2),
    }
    with pytest.raises(ValueError, match="lora_alpha="):
        merge({"l": torch.zeros(6, 5)}, [sd])
    out = merge(
        {"l": torch.zeros(6, 5)}, [sd], "task_arithmetic", output="delta", lora_alpha=4.0, use_rslora=False
    )
    assert torch.allclose(
        out["l"], 2.0 * sd["base_model.model.l.lora_B.weight"] @ sd["base_model.model.l.lora_A.weight"]
    )


def test_unknown_method_option_and_config():
    ad = LoRAAdapter(torch.randn(2, 5), torch.randn(6, 2))
    with pytest.raises(ValueError, match="method: expected one of"):
        merge({"l": torch.zeros(6, 5)}, [{"l": ad}], "magic")
    with pytest.raises(ValueError, match="not understood"):
        merge({"l": torch.zeros(6, 5)}, [{"l": ad}], "task_arithmetic", density=0.5)
    with pytest.raises(ValueError, match="density"):
        merge({"l": torch.zeros(6, 5)}, [{"l": ad}], "ties", density=0.0)
    with pytest.raises(ValueError, match="min_support"):
        PGSBConfig(min_support=0)
