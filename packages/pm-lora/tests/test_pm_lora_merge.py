import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.pm_lora import lowrank_svd, merge_lowrank, project_out, spectral_basis

torch.set_num_threads(1)


def _factors(gen, out, r, n_in, dtype=torch.float64):
    return torch.randn(out, r, generator=gen, dtype=dtype), torch.randn(r, n_in, generator=gen, dtype=dtype)


@settings(max_examples=25, deadline=None)
@given(
    out=st.integers(3, 20),
    n_in=st.integers(3, 20),
    r1=st.integers(1, 6),
    r2=st.integers(1, 6),
    rank=st.integers(1, 6),
    seed=st.integers(0, 10_000),
)
def test_merge_matches_explicit_truncated_svd(out, n_in, r1, r2, rank, seed):
    rank = min(rank, out, n_in)
    gen = torch.Generator().manual_seed(seed)
    B1, A1 = _factors(gen, out, r1, n_in)
    B2, A2 = _factors(gen, out, r2, n_in)
    dense = B1 @ A1 + B2 @ A2
    U, S, Vh = torch.linalg.svd(dense)  # independent route: SVD of the dense sum
    best = (U[:, :rank] * S[:rank]) @ Vh[:rank]
    B, A = merge_lowrank(B1, A1, B2, A2, rank)
    assert B.shape == (out, rank) and A.shape == (rank, n_in)
    merged = B @ A
    scale = 1.0 + float(S[0])
    assert torch.allclose(merged, best, atol=1e-8 * scale)
    # the summed update is preserved up to exactly the rank's truncation error (Eckart-Young)
    tail = float(S[rank:].square().sum().sqrt())
    assert abs(float(torch.linalg.norm(dense - merged)) - tail) < 1e-8 * scale


def test_merge_is_exact_when_rank_suffices():
    gen = torch.Generator().manual_seed(0)
    B1, A1 = _factors(gen, 12, 3, 9)
    B2, A2 = _factors(gen, 12, 2, 9)
    B, A = merge_lowrank(B1, A1, B2, A2, 6)  # sum has rank 5 <= 6: zero padding, no loss
    assert torch.allclose(B @ A, B1 @ A1 + B2 @ A2, atol=1e-10)
    assert B[:, 5].abs().max() < 1e-10 or A[5].abs().max() < 1e-10


def test_lowrank_svd_singular_values_match_dense():
    gen = torch.Generator().manual_seed(1)
    B, A = _factors(gen, 15, 4, 11)
    U, S, Vh = lowrank_svd(B, A)
    assert torch.allclose(S, torch.linalg.svdvals(B @ A)[:4], atol=1e-10)
    assert torch.allclose((U * S) @ Vh, B @ A, atol=1e-10)
    assert torch.allclose(Vh @ Vh.T, torch.eye(4, dtype=A.dtype), atol=1e-10)


def test_spectral_basis_energy_and_orthonormality():
    # update with singular values 10, 1, 0.1 along known directions
    Q_out, _ = torch.linalg.qr(
        torch.randn(8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    )
    Q_in, _ = torch.linalg.qr(
        torch.randn(7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    )
    S = torch.tensor([10.0, 1.0, 0.1], dtype=torch.float64)
    B, A = Q_out * S, Q_in.T
    V1 = spectral_basis(B, A, energy=0.95)  # 100 / 101.01 > 0.95: one direction
    assert V1.shape == (7, 1)
    assert torch.allclose((V1.T @ Q_in[:, 0]).abs(), torch.ones(1, dtype=torch.float64), atol=1e-10)
    V3 = spectral_basis(B, A, energy=1.0)
    assert V3.shape == (7, 3)
    assert torch.allclose(V3.T @ V3, torch.eye(3, dtype=torch.float64), atol=1e-10)
    assert spectral_basis(torch.zeros(8, 2), torch.zeros(2, 7)).shape == (7, 0)


def test_project_out_is_orthogonal():
    gen = torch.Generator().manual_seed(4)
    V, _ = torch.linalg.qr(torch.randn(20, 5, generator=gen, dtype=torch.float64))
    A = torch.randn(3, 20, generator=gen, dtype=torch.float64)
    assert (project_out(A, V) @ V).abs().max() < 1e-12
    assert torch.equal(project_out(A, V[:, :0]), A)


def test_merge_errors():
    B, A = torch.randn(5, 2), torch.randn(2, 4)
    with pytest.raises(ValueError, match="rank: 5 exceeds"):
        merge_lowrank(B, A, B, A, 5)
    with pytest.raises(ValueError, match="inner ranks differ"):
        merge_lowrank(B, torch.randn(3, 4), B, A, 2)
    with pytest.raises(ValueError, match="dtype and device"):
        merge_lowrank(B, A, B.double(), A.double(), 2)
    with pytest.raises(ValueError, match="different shapes"):
        merge_lowrank(B, A, torch.randn(6, 2), A, 2)
    with pytest.raises(ValueError, match="NaN or inf"):
        merge_lowrank(B, A, B, A * float("nan"), 2)
    with pytest.raises(ValueError, match="energy"):
        spectral_basis(B, A, energy=0.0)
