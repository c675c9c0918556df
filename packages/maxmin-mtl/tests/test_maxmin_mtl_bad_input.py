"""Bad input: defined behaviour, clear errors, never a NaN update."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from paperworks.maxmin_mtl import MaxMinWeighting, maxmin_weights, solve_maxmin, task_curvatures


def _finite(res):
    return np.all(np.isfinite(np.asarray(res.update)))


def test_zero_gradient_task_is_left_out_with_a_warning():
    G = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 1.0, 0.0]])
    with pytest.warns(RuntimeWarning, match=r"tasks \[1\] \(zero gradient\)"):
        res = maxmin_weights(G, np.array([1.0, 1.0, 2.0]))
    assert res.excluded == (1,)
    assert res.weights[1] == 0.0 and np.isnan(res.rates[1])
    assert _finite(res) and 1 not in res.active
    assert res.value > 0


def test_all_zero_gradients_give_zero_update_with_a_warning():
    with pytest.warns(RuntimeWarning, match="update is zero"):
        res = maxmin_weights(np.zeros((3, 4)), np.ones(3))
    np.testing.assert_array_equal(res.update, 0.0)
    assert np.all(res.weights == 0)


def test_duplicate_and_collinear_gradients():
    g = np.array([1.0, 2.0, -1.0])
    h = np.array([0.0, 1.0, 1.0])
    G = np.stack([g, g, 3.0 * g, h])
    res = maxmin_weights(G, np.array([1.0, 1.0, 3.0, 1.0]))
    assert _finite(res)
    # the three copies have the same own step (gap model), hence the same rate
    np.testing.assert_allclose(res.rates[:3], res.rates[0], atol=1e-9)
    assert np.nanmin(res.rates) == pytest.approx(res.value, abs=1e-7)


def test_nan_loss_is_skipped_with_a_warning_or_raises():
    G = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.warns(RuntimeWarning, match=r"tasks \[1\]"):
        res = maxmin_weights(G, np.array([1.0, np.nan, 1.0]))
    assert res.weights[1] == 0.0 and _finite(res)
    with pytest.raises(ValueError, match="non-finite"):
        maxmin_weights(G, np.array([1.0, np.nan, 1.0]), nonfinite="raise")


def test_nan_gradient_is_skipped():
    G = np.array([[1.0, 0.0], [np.nan, 1.0], [1.0, 1.0]])
    with pytest.warns(RuntimeWarning):
        res = maxmin_weights(G, np.ones(3))
    assert res.weights[1] == 0.0 and _finite(res)


def test_single_task_takes_its_own_step():
    g = np.array([[3.0, 4.0]])
    res = maxmin_weights(g, np.array([5.0]))
    # gap model: own step = 2 L g / ||g||^2
    np.testing.assert_allclose(res.update, 2 * 5.0 * g[0] / 25.0)
    assert res.value == pytest.approx(1.0)


def test_loss_at_floor_is_left_out_with_a_warning():
    G = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.warns(RuntimeWarning, match="at or below its floor"):
        res = maxmin_weights(G, np.array([0.0, 1.0]))
    assert res.weights[0] == 0.0 and res.weights[1] > 0


def test_loss_below_floor_raises_or_is_skipped():
    G = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="losses: tasks \\[0\\] are below their loss_floor"):
        maxmin_weights(G, np.array([-1.0, 1.0]))
    with pytest.raises(ValueError, match="below their loss_floor"):
        maxmin_weights(G, np.array([1.0, 1.0]), loss_floor=2.0)  # the NaN case
    with pytest.warns(RuntimeWarning, match="at or below its floor"):
        res = maxmin_weights(G, np.array([-1.0, 1.0]), below_floor="skip")
    assert res.weights[0] == 0.0 and np.all(np.isfinite(res.update))
    with pytest.warns(RuntimeWarning, match="update is zero"):
        res = maxmin_weights(G, np.array([-1.0, -2.0]), below_floor="skip")  # all below: zero update
    np.testing.assert_array_equal(res.update, 0.0)


def test_gradients_as_a_list():
    rows = [np.array([1.0, 0.0]), np.array([0.0, 2.0])]
    a = maxmin_weights(rows, [1.0, 1.0])
    b = maxmin_weights(np.stack(rows), [1.0, 1.0])
    np.testing.assert_allclose(a.update, b.update)
    c = maxmin_weights([torch.tensor(r) for r in rows], [1.0, 1.0])
    np.testing.assert_allclose(c.update.numpy(), b.update)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grads": np.ones(3), "losses": np.ones(3)}, "grads: expected a \\(k, d\\)"),
        ({"grads": np.ones((3, 2)), "losses": np.ones(2)}, "losses: expected 3"),
        ({"grads": np.ones((3, 2)), "losses": None}, "losses: curvature='gap' needs"),
        (
            {"grads": np.ones((3, 2)), "losses": np.ones(3), "curvature": "hessian"},
            "curvature: expected one of",
        ),
        (
            {"grads": np.ones((2, 2)), "losses": np.ones(2), "curvature": [1.0, -1.0]},
            "curvature: expected 2 finite positive",
        ),
        ({"grads": np.ones((2, 2)), "losses": np.ones(2), "loss_floor": [0.0, 0.0, 0.0]}, "loss_floor"),
        ({"grads": np.ones((2, 2)), "losses": np.ones(2), "nonfinite": "ignore"}, "nonfinite"),
    ],
)
def test_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        maxmin_weights(**kwargs)


def test_solver_and_curvature_errors():
    with pytest.raises(ValueError, match="gram: expected a non-empty square"):
        solve_maxmin(np.ones((2, 3)))
    with pytest.raises(ValueError, match="gram: expected a symmetric"):
        solve_maxmin(np.array([[1.0, 0.5], [-0.5, 1.0]]))
    with pytest.raises(ValueError, match="gram: expected a positive semi-definite"):
        solve_maxmin(np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]]))
    with pytest.raises(ValueError, match="gram: expected a positive diagonal"):
        solve_maxmin(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="gram: expected finite"):
        solve_maxmin(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="sq_norms"):
        task_curvatures(np.ones((2, 2)))
    with pytest.raises(ValueError, match="n_tasks"):
        MaxMinWeighting(0)


def test_backward_with_nan_loss_keeps_gradients_finite():
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(5))
    x = torch.randn(4, 5)
    losses = torch.stack([(x[0] @ w) ** 2, (x[1] @ w) ** 2 * float("nan"), (x[2] @ w - 1) ** 2 + 0.1])
    m = MaxMinWeighting(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _, info = m.backward(losses, [w])
    assert torch.isfinite(w.grad).all()
    assert info["weights"][1] == 0


def test_backward_rejects_wrong_number_of_losses():
    w = torch.nn.Parameter(torch.randn(3))
    with pytest.raises(ValueError, match="losses: expected 2 scalar losses"):
        MaxMinWeighting(2).backward(torch.stack([w.sum(), w.sum(), w.sum()]), [w])
    with pytest.raises(ValueError, match="shared_parameters"):
        MaxMinWeighting(1).backward(torch.stack([w.sum()]), [])
