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


def test_pgsb_without_shared_rows_is_task_arithmetic():
    ads = _adapters(3)
    W0 = torch.randn(6, 5, dtype=torch.float64)
    B, A = pgsb_merge(W0, ads, PGSBConfig(min_support=99))  # no direction can be shared
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
    b = shared_basis(ads, n_null=50)
    eye = torch.eye(b.U.shape[1], dtype=b.U.dtype)
    assert torch.allclose(b.U.T @ b.U, eye, atol=1e-8)
    assert torch.all(b.overlap[:-1] >= b.overlap[1:] - 1e-12)
    for k, ad in enumerate(ads):
        assert torch.allclose(b.reconstruct(k), ad.delta(), atol=1e-8)
    # overlaps are the eigenvalues of the sum of the task projectors (independent route: dense)
    projs = []
    for ad in ads:
        U, S, _ = torch.linalg.svd(ad.delta(), full_matrices=False)
        Q = U[:, S > 1e-9 * S[0]]
        projs.append(Q @ Q.T)
    ev = torch.linalg.eigvalsh(sum(projs)).flip(0)[: b.U.shape[1]]
    assert torch.allclose(b.overlap, ev, atol=1e-8)
    assert torch.allclose(b.membership.sum(1), b.overlap, atol=1e-10)
    assert int(b.support.max()) <= K


def _shared_plus_other(scale_along_b):
    """Tasks 0 and 1: the same rank-1 update b a^T; task 2: (scale b + c) a2^T with c orthogonal to b."""
    g = torch.Generator().manual_seed(3)
    b = torch.randn(16, 1, generator=g, dtype=torch.float64)
    c = torch.randn(16, 1, generator=g, dtype=torch.float64)
    c -= b * (b.T @ c) / (b.T @ b)
    a = torch.randn(1, 9, generator=g, dtype=torch.float64)
    a2 = torch.randn(1, 9, generator=g, dtype=torch.float64)
    ads = [LoRAAdapter(a, b), LoRAAdapter(a.clone(), b.clone()), LoRAAdapter(a2, scale_along_b * b + c)]
    return ads, b, a


@pytest.mark.parametrize("method", ["pgsb", "pgsb_no_pretrained"])
def test_shared_direction_is_averaged_and_a_non_supporter_summed(method):
    ads, b, a = _shared_plus_other(0.0)
    W0 = torch.randn(16, 9, dtype=torch.float64)
    basis = shared_basis(ads)
    assert int(basis.shared.sum()) == 1 and basis.supporters[0].tolist() == [True, True, False]
    out = merge({"l": W0}, [{"l": ad} for ad in ads], method, output="delta")["l"]
    assert torch.allclose(out, b @ a + ads[2].delta(), atol=1e-9)  # not 2 b a^T + Delta_2


def test_residual_normalisation_counts_only_supporters():
    # task 2 writes a little into the shared direction but does not support it: its part of that row
    # is kept whole, and the two supporters' part is their mean (the old code divided all by 2)
    ads, *_ = _shared_plus_other(0.2)
    W0 = torch.randn(16, 9, dtype=torch.float64)
    basis = shared_basis(ads)
    assert basis.shared.tolist()[0] and basis.supporters[0].tolist() == [True, True, False]
    B, A = pgsb_merge(W0, ads, PGSBConfig(use_pretrained=False))
    C, sh = basis.coeffs, basis.shared
    rows = torch.where(sh[:, None], (C[0] + C[1]) / 2 + C[2], C.sum(0))
    assert torch.allclose(B @ A, basis.U @ rows, atol=1e-9)
    assert not torch.allclose(B @ A, basis.U @ torch.where(sh[:, None], C.sum(0) / 2, C.sum(0)), atol=1e-6)


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


def test_per_adapter_lora_alpha_and_rslora():
    g = torch.Generator().manual_seed(0)
    pairs = [(torch.randn(2, 5, generator=g), torch.randn(6, 2, generator=g)) for _ in range(2)]
    sds = [{"base_model.model.l.lora_A.weight": A, "base_model.model.l.lora_B.weight": B} for A, B in pairs]
    out = merge(
        {"l": torch.zeros(6, 5)},
        sds,
        "task_arithmetic",
        output="delta",
        lora_alpha=[4.0, 16.0],
        use_rslora=[False, True],
    )
    expected = 2.0 * pairs[0][1] @ pairs[0][0] + (16.0 / 2**0.5) * pairs[1][1] @ pairs[1][0]
    assert torch.allclose(out["l"], expected, atol=1e-5)


def test_module_base_and_determinism():
    net = nn.Sequential(nn.Linear(5, 6))
    ads = [{"0": LoRAAdapter(a.A.float(), a.B.float(), alpha=4.0)} for a in _adapters(3, alpha=4.0)]
    for method in METHODS:
        opts = {"generator": torch.Generator().manual_seed(1)} if method == "dare" else {}
        first = merge(net, ads, method, **opts)["0"]
        opts = {"generator": torch.Generator().manual_seed(1)} if method == "dare" else {}
        assert torch.equal(first, merge(net, ads, method, **opts)["0"])
        assert torch.isfinite(first).all()
