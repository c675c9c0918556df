import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.herm import (
    bind,
    bundle,
    cosine_similarity,
    dot_similarity,
    fractional_power,
    inverse,
    multiset,
    random_atoms,
    recall_probability,
    similarity,
    similarity_std,
    unbind,
)


@settings(max_examples=20, deadline=None)
@given(dim=st.integers(8, 2048), seed=st.integers(0, 10_000))
def test_binding_is_exactly_invertible(dim, seed):
    g = torch.Generator().manual_seed(seed)
    a, b = random_atoms(2, dim, g)
    ab = bind(a, b)
    assert torch.allclose(unbind(ab, a), b, atol=1e-5)
    assert torch.allclose(bind(a, inverse(a)), torch.ones(dim, dtype=torch.complex64), atol=1e-5)
    # commutative and associative, like elementwise complex products
    c = random_atoms(1, dim, g)[0]
    assert torch.allclose(bind(a, b), bind(b, a))
    assert torch.allclose(bind(bind(a, b), c), bind(a, bind(b, c)), atol=1e-5)


def test_bind_broadcasts_like_torch_mul_and_bundle_is_binary():
    g = torch.Generator().manual_seed(5)
    keys = random_atoms(4, 32, g)
    v = random_atoms(1, 32, g)[0]
    out = bind(keys, v)  # (4, D) with (D,): broadcast, as torchhd.bind allows
    assert out.shape == (4, 32)
    assert torch.allclose(out, keys * v)
    assert bind(keys[:, None, :], keys[None]).shape == (4, 4, 32)
    assert torch.allclose(bundle(keys[0], keys[1]), keys[0] + keys[1])
    assert torch.allclose(multiset(keys), keys.sum(0))
    with pytest.raises(ValueError, match="do not broadcast"):
        bind(keys, random_atoms(3, 32, g))


def test_primitives_propagate_nan_like_torch():
    """The primitives check types and shapes only (no pass over the data); a NaN is not hidden."""
    a = random_atoms(2, 16)
    bad = a.clone()
    bad[0, 3] = complex(float("nan"), 0.0)
    assert torch.isnan(bind(bad, a)[0, 3].real)
    assert torch.isnan(dot_similarity(bad, a)[0]).all()
    assert torch.isfinite(dot_similarity(bad, a)[1]).all()


def test_similarities_follow_torchhd_conventions():
    g = torch.Generator().manual_seed(6)
    a = random_atoms(3, 64, g)
    b = random_atoms(5, 64, g)
    dot = dot_similarity(a, b)
    assert dot.shape == (3, 5)
    assert torch.allclose(dot, (a @ b.conj().T).real)
    assert dot_similarity(a, b[0]).shape == (3,)
    assert torch.allclose(similarity(a, b), dot / 64)
    assert torch.allclose(cosine_similarity(a, a).diagonal(), torch.ones(3), atol=1e-5)
    assert torch.allclose(cosine_similarity(2 * a, b), dot / 64, atol=1e-5)


def test_quasi_orthogonality_matches_theory():
    dim = 512
    g = torch.Generator().manual_seed(0)
    a = random_atoms(400, dim, g)
    b = random_atoms(400, dim, g)
    s = similarity(a, b).flatten()  # 160,000 independent-ish pairs
    assert abs(float(s.mean())) < 4 * similarity_std(dim) / math.sqrt(400)
    assert float(s.std()) == pytest.approx(similarity_std(dim), rel=0.03)
    assert torch.allclose(torch.diagonal(similarity(a, a)), torch.ones(400), atol=1e-5)


def test_bound_pair_is_dissimilar_to_its_parts():
    g = torch.Generator().manual_seed(1)
    a, b = random_atoms(2, 4096, g)
    ab = bind(a, b)[None]
    assert float(similarity(ab, torch.stack([a, b])).abs().max()) < 5 * similarity_std(4096)


def test_fractional_power_is_a_homomorphism():
    g = torch.Generator().manual_seed(2)
    base = random_atoms(1, 256, g)[0]
    x, y = torch.tensor([1.5, -3.0]), torch.tensor([2.0, 0.25])
    lhs = fractional_power(base, x) * fractional_power(base, y)
    assert torch.allclose(lhs, fractional_power(base, x + y), atol=1e-4)
    assert torch.allclose(fractional_power(base, 1.0), base, atol=1e-5)


@pytest.mark.parametrize(("dim", "k", "noise"), [(128, 16, 0.0), (256, 24, 24.0), (512, 48, 0.0)])
def test_recall_theory_matches_monte_carlo(dim, k, noise):
    g = torch.Generator().manual_seed(dim + k)
    keys = random_atoms(k, dim, g)
    cb = random_atoms(32, dim, g)
    trials = 300
    idx = torch.randint(0, 32, (trials, k), generator=g)
    m = (keys[None] * cb[idx]).sum(dim=1)
    if noise:
        m = m + torch.complex(
            torch.randn(trials, dim, generator=g), torch.randn(trials, dim, generator=g)
        ) * math.sqrt(noise / 2)
    pred = similarity(m[:, None, :] * keys.conj()[None], cb).argmax(-1)
    measured = float((pred == idx).float().mean())
    theory = recall_probability(dim, k, 32, noise)
    se = math.sqrt(theory * (1 - theory) / (trials * k)) + 1e-3
    assert abs(measured - theory) < 4 * se + 0.02
    assert 0.05 < theory < 1.0  # the grid exercises the non-trivial regime


def test_recall_theory_monotone_and_bounds():
    assert recall_probability(64, 1, 1) == 1.0
    vals = [recall_probability(d, 20, 64) for d in (64, 128, 256, 512)]
    assert all(b > a for a, b in itertools.pairwise(vals))
    assert recall_probability(256, 20, 64, 0.0) > recall_probability(256, 20, 64, 20.0)
    with pytest.raises(ValueError, match="noise_var"):
        recall_probability(64, 2, 8, -1.0)
    with pytest.raises(ValueError, match="noise_var"):
        recall_probability(64, 2, 8, float("nan"))
