"""Scalarisations: gradients and Hessians against finite differences, concavity and domain checks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.mlmc_npg import (
    ConcaveScalarization,
    NonConcaveError,
    check_concave,
    exponential_utility,
    kinked_utility,
    linear_utility,
    proportional_fairness,
)

UTILITIES = [
    proportional_fairness(3, 0.1),
    exponential_utility(3, 2.0),
    kinked_utility([1.0, 2.0, 0.5], kappa=3.0, direction=[1.0, 0.5, 2.0]),
    linear_utility([1.0, 2.0, 3.0]),
]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.05, 3.0), min_size=3, max_size=3), st.sampled_from(range(len(UTILITIES))))
def test_gradient_matches_finite_differences(x, k):
    f = UTILITIES[k]
    J = np.array(x)
    if f.kink is not None and np.min(np.abs(J - np.array(f.kink))) < 1e-3:
        return  # the Hessian (not the gradient) jumps at the kink; keep central differences off it
    h = 1e-6
    fd = np.array([(f.value(J + h * e) - f.value(J - h * e)) / (2 * h) for e in np.eye(3)])
    assert np.allclose(f.grad(J), fd, atol=1e-5)
    H = f.hessian(J)
    fdH = np.stack([(f.grad(J + h * e) - f.grad(J - h * e)) / (2 * h) for e in np.eye(3)], axis=-1)
    assert np.allclose(H, fdH, atol=1e-4)


def test_vectorised_over_the_leading_axes():
    f = proportional_fairness(2)
    J = np.random.default_rng(0).random((4, 5, 2))
    assert f.value(J).shape == (4, 5) and f.grad(J).shape == (4, 5, 2) and f.hessian(J).shape == (4, 5, 2, 2)


def test_kinked_gradient_is_lipschitz_but_hessian_jumps():
    f = kinked_utility([1.0, 1.0], kappa=2.0)
    below, above = np.array([0.999, 1.0]), np.array([1.001, 1.0])
    assert np.abs(f.grad(below) - f.grad(above)).max() < 2.0 * 0.0021
    assert f.hessian(below)[0, 0] == -2.0 and f.hessian(above)[0, 0] == 0.0
    assert not f.second_order_smooth and proportional_fairness(2).second_order_smooth


def test_concavity_check_passes_for_the_builtins_and_catches_a_convex_f():
    P = np.random.default_rng(1).random((20, 3)) + 0.1
    for f in UTILITIES:
        check_concave(f, P)
    convex = ConcaveScalarization("sum of squares", 3, lambda J: (J**2).sum(-1), lambda J: 2 * J)
    with pytest.raises(NonConcaveError, match="not concave"):
        check_concave(convex, P)


def test_concavity_check_uses_autograd_when_f_accepts_tensors():
    torch = pytest.importorskip("torch")
    convex = ConcaveScalarization(
        "log-sum-exp flipped",
        2,
        lambda J: -torch.logsumexp(-J, -1) if torch.is_tensor(J) else None,
        lambda J: J,
    )
    check_concave(convex, np.zeros((3, 2)), use_torch=True)  # -logsumexp(-J) is concave
    bad = ConcaveScalarization("cosh", 2, lambda J: torch.cosh(J).sum(-1), lambda J: J)
    with pytest.raises(NonConcaveError):
        check_concave(bad, np.zeros((3, 2)), use_torch=True)


def test_bad_inputs_name_the_argument():
    f = proportional_fairness(2, 0.1)
    with pytest.raises(ValueError, match="undefined"):
        f.grad([-0.5, 1.0])  # log of a negative number
    with pytest.raises(ValueError, match="M = 2"):
        f.grad([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        f.grad([np.nan, 1.0])
    with pytest.raises(ValueError, match="delta"):
        proportional_fairness(2, 0.0)
    with pytest.raises(ValueError, match="direction"):
        kinked_utility([1.0, 1.0], direction=[-1.0, 1.0])
    with pytest.raises(ValueError, match="n_objectives"):
        exponential_utility(0)
