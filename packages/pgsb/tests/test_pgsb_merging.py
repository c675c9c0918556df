import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from paperworks.pgsb import (
    METHODS,
    LoRAAdapter,
    PGSBConfig,
    knots_merge,
    merge,
    pgsb_merge,
    shared_basis,
    task_arithmetic_merge,
    ties_merge,
)


def _adapters(K, d_out=6, d_in=5, r=2, seed=0, alpha=None):
    g = torch.Generator().manual_seed(seed)
    return [
        LoRAAdapter(
            torch.randn(r, d_in, generator=g, dtype=torch.float64),
            torch.randn(d_out, r, generator=g, dtype=torch.float64),
            alpha=alpha,
        )
        for _ in range(K)
    ]


def test_ties_hand_worked():
    d = torch.tensor([[[3.0, -1.0, 0.5, 2.0]], [[-2.0, 4.0, 0.1, 1.0]]])  # K=2, 1x4
    # density 0.5 keeps 2 of 4 per task: task0 {3, 2}, task1 {-2, 4}; signs: +1, +1, 0, +1
    out = ties_merge(d, density=0.5)
    assert torch.allclose(out, torch.tensor([[3.0, 4.0, 0.0, 2.0]]))


def test_task_arithmetic_hand_worked():
    d = torch.tensor([[[1.0, 2.0]], [[3.0, -4.0]]])
    assert torch.allclose(task_arithmetic_merge(d, lam=0.5), torch.tensor([[2.0, -1.0]]))


def test_knots_mean_equals_joint_svd_route():
    ads = _adapters(3)
    # independent route: dense joint SVD of the stacked updates, mean of the V_k blocks
    stacked = torch.cat([a.delta() for a in ads], dim=1)
    U, S, Vh = torch.linalg.svd(stacked, full_matrices=False)
    r = int((S > 1e-9 * S[0]).sum())
    blocks = Vh[:r].reshape(r, 3, -1)
    expected = U[:, :r] @ (S[:r, None] * blocks.mean(1))
    assert torch.allclose(knots_merge(ads, combine="mean"), expected, atol=1e-9)


def test_dense_merges_match_low_rank_pgsb_without_shared_rows():
    ads = _adapters(3)
    W0 = torch.randn(6, 5, dtype=torch.float64)
    B, A = pgsb_merge(W0, ads, PGSBConfig(min_support=99))  # no direction shared -> plain sum
    assert torch.allclose(B @ A, sum(a.delta() for a in ads), atol=1e-9)


@pytest.mark.parametrize("method", ["pgsb", "pgsb_no_pretrained", "task_arithmetic"])
def test_single_adapter_returned_unchanged(method):
    ad = _adapters(1, alpha=8.0)[0]
    W0 = torch.randn(6, 5, dtype=torch.float64)
    out = merge({"l": W0}, [{"l": ad}], method, output="delta")
    assert torch.allclose(out["l"], ad.delta(), atol=1e-9)
    out_w = merge({"l": W0}, [{"l": ad}], method)
    assert torch.allclose(out_w["l"], W0 + ad.delta(), atol=1e-9)


def test_single_adapter_ties_and_knots_at_full_density():
    ad = _adapters(1)[0]
    assert torch.allclose(ties_merge(ad.delta()[None], density=1.0), ad.delta())
    assert torch.allclose(knots_merge([ad], density=1.0), ad.delta(), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(K=st.integers(1, 5), r=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_shared_basis_orthonormal_and_exact(K, r, seed):
    ads = _adapters(K, d_out=7, d_in=4, r=r, seed=seed)
    b = shared_basis(ads)
    eye = torch.eye(b.U.shape[1], dtype=b.U.dtype)
    assert torch.allclose(b.U.T @ b.U, eye, atol=1e-8)
    assert torch.all(b.sigma[:-1] >= b.sigma[1:] - 1e-12)
    for k, ad in enumerate(ads):
        assert torch.allclose(b.reconstruct(k), ad.delta(), atol=1e-8)
    assert torch.allclose(b.energy.sum(0), torch.ones(K, dtype=b.energy.dtype), atol=1e-8)
    assert int(b.support.max()) <= K


def test_shared_direction_is_averaged_not_summed():
    # two tasks with the same rank-1 update: one shared direction, merged to the update itself
    a, bvec = torch.randn(1, 5, dtype=torch.float64), torch.randn(6, 1, dtype=torch.float64)
    ads = [LoRAAdapter(a, bvec), LoRAAdapter(a.clone(), bvec.clone())]
    W0 = torch.randn(6, 5, dtype=torch.float64)
    for method in ("pgsb", "pgsb_no_pretrained"):
        out = merge({"l": W0}, [{"l": ads[0]}, {"l": ads[1]}], method, output="delta")["l"]
        assert torch.allclose(out, bvec @ a, atol=1e-9)


def test_rslora_and_alpha_scaling_explicit():
    A, B = torch.randn(4, 5), torch.randn(6, 4)
    assert LoRAAdapter(A, B, alpha=8.0).scaling == pytest.approx(2.0)
    assert LoRAAdapter(A, B, alpha=8.0, use_rslora=True).scaling == pytest.approx(4.0)
    out = merge(
        {"l": torch.zeros(6, 5)},
        [{"l": (A, B)}],
        "task_arithmetic",
        output="delta",
        lora_alpha=8.0,
        use_rslora=True,
    )
    assert torch.allclose(out["l"], 4.0 * B @ A, atol=1e-5)


def test_module_base_and_determinism():
    net = nn.Sequential(nn.Linear(5, 6))
    ads = [{"0": a} for a in _adapters(3, alpha=4.0)]
    ads = [{"0": LoRAAdapter(a["0"].A.float(), a["0"].B.float(), alpha=4.0)} for a in ads]
    for method in METHODS:
        opts = {"generator": torch.Generator().manual_seed(1)} if method == "dare" else {}
        first = merge(net, ads, method, **opts)["0"]
        opts = {"generator": torch.Generator().manual_seed(1)} if method == "dare" else {}
        assert torch.equal(first, merge(net, ads, method, **opts)["0"])
        assert torch.isfinite(first).all()
