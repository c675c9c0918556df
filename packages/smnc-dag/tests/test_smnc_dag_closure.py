import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.smnc_dag import (
    SMNCClosure,
    cycle_loss,
    dyadic_walk_sums,
    reachability_probability,
    relation_loss,
    smnc_logits,
    smnc_readout,
)
from paperworks.smnc_dag._fast import closure_logits, closure_loss_and_grad
from paperworks.smnc_dag.experiments import closure_gradient_study


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 6), k=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_walk_sums_match_explicit_matrix_powers(d, k, seed):
    G = np.random.default_rng(seed).random((d, d))
    R = dyadic_walk_sums(torch.tensor(G), k).numpy()
    for j in range(k):
        explicit = sum(np.linalg.matrix_power(G, length) for length in range(1, 2**j + 1))
        np.testing.assert_allclose(R[j], explicit, rtol=1e-10)


def test_normalised_logits_are_log_evidence_over_budget():
    G = torch.rand(5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    G.fill_diagonal_(0)
    raw = smnc_logits(G, 3, normalize=False)
    norm = smnc_logits(G, 3)
    np.testing.assert_allclose(norm.numpy(), raw.numpy() / np.array([1.0, 2.0, 4.0])[:, None, None])


def test_product_evidence_is_p_to_the_L_and_gradient_is_one_over_L():
    p = 0.6
    for L in (2, 4, 8, 16):
        idx = torch.arange(L)
        logg = torch.full((L,), math.log(p), dtype=torch.float64, requires_grad=True)
        G = torch.zeros(L, L, dtype=torch.float64).index_put((idx, (idx + 1) % L), logg.exp())
        k = int(math.log2(L))
        raw = smnc_logits(G, k + 1, normalize=False)[k, 0, 0]
        assert float(raw.detach()) == pytest.approx(L * math.log(p))
        (g,) = torch.autograd.grad(smnc_logits(G, k + 1)[k, 0, 0], logg)
        np.testing.assert_allclose(g.numpy(), np.full(L, 1.0 / L))
    study = closure_gradient_study()
    assert study["closure.smnc_grad_slope_error"] < 1e-9
    assert study["closure.product_decay_rel_error"] < 1e-9


@pytest.mark.parametrize("normalize", [True, False])
def test_numpy_gradient_matches_autograd(normalize):
    rng = np.random.default_rng(1)
    d = 6
    G = rng.random((d, d)) * 0.5
    np.fill_diagonal(G, 0)
    pos = np.zeros((d, d), bool)
    neg = np.zeros((d, d), bool)
    pos[0, 3] = pos[2, 5] = True
    neg[3, 0] = neg[1, 4] = True
    loss, grad = closure_loss_and_grad(
        G, 4, normalize=normalize, tau=0.1, gamma_cycle=0.7, gamma_relation=0.3, positive=pos, negative=neg
    )
    logits = closure_logits(G, 4, normalize=normalize, tau=0.1)
    Gt = torch.tensor(G, requires_grad=True)
    lt = SMNCClosure(4, normalize=normalize, tau=0.1)(Gt)
    ref = 0.7 * cycle_loss(lt) + 0.3 * relation_loss(lt, torch.tensor(pos), torch.tensor(neg))
    ref.backward()
    off = ~np.eye(d, dtype=bool)
    assert loss == pytest.approx(float(ref.detach()), rel=1e-12)
    np.testing.assert_allclose(grad[off], Gt.grad.numpy()[off], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(logits, lt.detach().numpy(), atol=1e-12)


def test_gradcheck_of_closure_module():
    G = torch.rand(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) * 0.6
    G.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda g: SMNCClosure(2)(g), (G,))


def test_readout_is_soft_max_over_scales_and_acyclic_gate_has_small_self_evidence():
    lk = torch.tensor([[[0.0]], [[-5.0]]], dtype=torch.float64)
    assert float(smnc_readout(lk, tau=0.01)) == pytest.approx(-0.01 * math.log(2), abs=1e-6)
    dag = torch.triu(torch.full((5, 5), 0.9, dtype=torch.float64), 1)
    cyc = dag.clone()
    cyc[4, 0] = 0.9
    assert cycle_loss(SMNCClosure()(dag)) < 1e-3 < 0.1 < cycle_loss(SMNCClosure()(cyc))


def test_closure_errors():
    with pytest.raises(ValueError, match=r"square"):
        smnc_logits(torch.zeros(3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"^G: .*finite"):
        smnc_logits(torch.tensor([[0.0, float("nan")], [0.2, 0.0]]))
    with pytest.raises(ValueError, match=r"^G: .*\[0, 1\]"):
        smnc_logits(torch.tensor([[0.0, -0.2], [0.2, 0.0]]))
    with pytest.raises(ValueError, match=r"^logits: "):
        reachability_probability(torch.zeros(4))
    with pytest.raises(ValueError, match=r"n_scales"):
        dyadic_walk_sums(torch.zeros(3, 3, dtype=torch.float64), 0)
    with pytest.raises(ValueError, match=r"tau"):
        SMNCClosure(tau=0.0)
    with pytest.raises(ValueError, match=r"positive"):
        relation_loss(
            torch.zeros(3, 3), torch.zeros(2, 2, dtype=torch.bool), torch.zeros(3, 3, dtype=torch.bool)
        )
