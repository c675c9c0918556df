"""A battery of invalid calls on every exported function: each is a clear, one-line error from the
package's own checks (ValueError or TypeError) whose message names the offending argument."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import paperworks.maxmin_mtl as mm

NAN_GRAM = np.array([[1.0, np.nan], [np.nan, 1.0]])
INF_GRAM = np.array([[1.0, np.inf], [np.inf, 1.0]])
ASYM = np.array([[1.0, 0.5], [-0.5, 1.0]])
NEG_DIAG = np.array([[-1.0, 0.0], [0.0, 1.0]])
NOT_PSD = np.array([[1.0, 2.0], [2.0, 1.0]])
NOT_PSD3 = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])  # |K_ij| <= 1, yet indefinite
EMPTY = np.zeros((0, 0))
RECT = np.ones((2, 3))
BAD_GRAMS = {
    "nan": NAN_GRAM,
    "inf": INF_GRAM,
    "asym": ASYM,
    "negdiag": NEG_DIAG,
    "notpsd": NOT_PSD,
    "notpsd3": NOT_PSD3,
    "empty": EMPTY,
    "rect": RECT,
    "1d": np.ones(3),
    "str": "gram",
}
G3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
L3 = np.array([1.0, 2.0, 3.0])
DATA = mm.make_multitask_regression(n_train=20, n_test=10, n_tasks=2, seed=0)

CASES = []


def case(arg, fn, *args, **kwargs):
    CASES.append(pytest.param(arg, fn, args, kwargs, id=f"{getattr(fn, '__name__', fn)}-{arg}-{len(CASES)}"))


# Gram-matrix consumers
for bad in BAD_GRAMS.values():
    case("gram", mm.mgda_weights, bad)
    case("gram", mm.nash_mtl_weights, bad)
    case("gram", mm.cagrad_weights, bad)
    case("gram", mm.pcgrad_weights, bad, np.random.default_rng(0))
    case("gram", mm.solve_maxmin, bad)
    case("gram", mm.closed_form, bad, [0])
    case("gram", mm.normalized_improvement_rates, bad, np.ones(2), np.ones(2))
    case("gram", mm.best_scaled_worst_rate, bad, np.ones(2), np.ones(2))
case("gram", mm.solve_maxmin, np.zeros((2, 2)))  # zero diagonal: no step to serve
case("gram", mm.MaxMinWeighting(2).weights, ASYM, np.ones(2))
case("gram", mm.MaxMinWeighting(2).weights, NOT_PSD, np.ones(2))
case("gram", mm.MGDA(2).weights, NEG_DIAG, np.ones(2))
case("gram", mm.MaxMinWeighting(2).weights, np.eye(3), np.ones(2))
case("gram", mm.MaxMinWeighting(2).weights, None, np.ones(2))
# solver options
case("tol", mm.solve_maxmin, np.eye(2), tol=-1.0)
case("tol", mm.solve_maxmin, np.eye(2), tol=float("nan"))
case("ridge", mm.solve_maxmin, np.eye(2), ridge=-1e-3)
case("max_iter", mm.solve_maxmin, np.eye(2), max_iter=0)
case("max_iter", mm.solve_maxmin, np.eye(2), max_iter=2.5)
case("active", mm.closed_form, np.eye(2), [])
case("active", mm.closed_form, np.eye(2), [0, 0])
case("active", mm.closed_form, np.eye(2), [5])
case("active", mm.closed_form, np.eye(2), [0.5])
case("ridge", mm.closed_form, np.eye(2), [0, 1], ridge=float("inf"))
case("max_iter", mm.mgda_weights, np.eye(2), max_iter=0)
case("tol", mm.mgda_weights, np.eye(2), tol=-1.0)
case("c", mm.cagrad_weights, np.eye(2), c=-0.1)
case("c", mm.cagrad_weights, np.eye(2), c=float("nan"))
case("w0", mm.cagrad_weights, np.eye(3), w0=np.ones(2))
case("rng", mm.pcgrad_weights, np.eye(2), "seed")
case("rng", mm.pcgrad_weights, np.eye(2), -1)
case("max_iter", mm.nash_mtl_weights, np.eye(2), max_iter=0)
case("ridge", mm.nash_mtl_weights, np.eye(2), ridge=-1.0)
# the functional max-min and combine
case("losses", mm.maxmin_weights, G3, -L3)  # below the default floor 0
case("losses", mm.MaxMinWeighting(3).combine, G3, -L3)
case("losses", mm.maxmin_weights, G3, L3, loss_floor=10.0)  # a floor above the losses
case("losses", mm.maxmin_weights, G3, np.ones(2))
case("losses", mm.maxmin_weights, G3, np.ones((3, 1)))
case("losses", mm.maxmin_weights, G3, ["a", "b", "c"])
case("losses", mm.maxmin_weights, G3, None)
case("grads", mm.maxmin_weights, np.ones(3), L3)
case("grads", mm.maxmin_weights, np.ones((3, 0)), L3)
case("grads", mm.maxmin_weights, np.array([["a"]]), L3[:1])
case("grads", mm.maxmin_weights, [np.ones(2), np.ones(3)], np.ones(2))
case("grads", mm.maxmin_weights, [], np.ones(1))
case("grads", mm.MaxMinWeighting(2).combine, G3, L3)
case("grads", mm.gram_matrix, np.ones(3))
case("grads", mm.gram_matrix, torch.ones(3, 2, dtype=torch.int64))
case("curvature", mm.maxmin_weights, G3, L3, curvature="hessian")
case("curvature", mm.maxmin_weights, G3, L3, curvature=[1.0, -1.0, 1.0])
case("curvature", mm.maxmin_weights, G3, L3, curvature=[1.0, 1.0])
case("loss_floor", mm.maxmin_weights, G3, L3, loss_floor=[0.0, 0.0])
case("loss_floor", mm.maxmin_weights, G3, L3, loss_floor=float("nan"))
case("below_floor", mm.maxmin_weights, G3, L3, below_floor="ignore")
case("nonfinite", mm.maxmin_weights, G3, L3, nonfinite="ignore")
case("tol", mm.maxmin_weights, G3, L3, tol=-1.0)
case("ridge", mm.maxmin_weights, G3, L3, ridge=float("nan"))
# method constructors and make_method
case("n_tasks", mm.MaxMinWeighting, 0)
case("n_tasks", mm.MaxMinWeighting, 2.0)
case("n_tasks", mm.MGDA, True)
case("nonfinite", mm.NashMTL, 2, nonfinite="drop")
case("c", mm.CAGrad, 2, c=-1.0)
case("seed", mm.PCGrad, 2, seed=-3)
case("lr", mm.FAMO, 2, lr=0.0)
case("gamma", mm.FAMO, 2, gamma=-0.1)
case("loss_floor", mm.FAMO, 2, loss_floor=[0.0, 0.0, 0.0])
case("losses", mm.FAMO(2).update, np.ones(3))
case("name", mm.make_method, "adam", 2)
case("name", mm.make_method, 3, 2)
# rates
case("sq_norms", mm.task_curvatures, np.ones((2, 2)))
case("sq_norms", mm.task_curvatures, np.array([-1.0, 1.0]))
case("losses", mm.task_curvatures, np.ones(2), None)
case("losses", mm.task_curvatures, np.ones(2), np.ones(3))
case("loss_floor", mm.task_curvatures, np.ones(2), np.ones(2), "gap", [0.0])
case("curvature", mm.task_curvatures, np.ones(2), np.ones(2), "flat")
case("curvature", mm.task_curvatures, np.ones(2), np.ones(2), [0.0, 1.0])
case("lam", mm.normalized_improvement_rates, np.eye(2), np.ones(3), np.ones(2))
case("lam", mm.normalized_improvement_rates, np.eye(2), np.array([-1.0, 1.0]), np.ones(2))
case("weights", mm.normalized_improvement_rates, np.eye(2), np.ones(2), np.ones(3))
case("weights", mm.best_scaled_worst_rate, np.eye(2), np.ones(2), np.array([np.nan, 1.0]))
# delta_m
case("stl", mm.delta_m, np.ones(2), np.ones(1), np.array([False, False]))
case("higher_better", mm.delta_m, np.ones(2), np.ones(2), np.array([False]))
case("higher_better", mm.delta_m, np.ones(2), np.ones(2), np.array([0, 1]))
case("stl", mm.delta_m, np.ones(2), np.zeros(2), np.array([False, False]))
case("metrics", mm.delta_m, np.array([np.nan, 1.0]), np.ones(2), np.array([False, False]))
case("metrics", mm.delta_m, np.ones((2, 2)), np.ones(2), np.array([False, False]))
# the toy
case("steps", mm.run_toy, "maxmin", np.asarray(mm.TOY_STARTS), steps=-1)
case("steps", mm.run_toy, "maxmin", np.asarray(mm.TOY_STARTS), steps=0)
case("rate_every", mm.run_toy, "maxmin", np.asarray(mm.TOY_STARTS), rate_every=0)
case("lr", mm.run_toy, "maxmin", np.asarray(mm.TOY_STARTS), lr=-0.1)
case("scale", mm.run_toy, "maxmin", np.asarray(mm.TOY_STARTS), scale=0.0)
case("starts", mm.run_toy, "maxmin", np.ones((3, 3)))
case("starts", mm.run_toy, "maxmin", np.array([[np.nan, 0.0]]))
case("method", mm.run_toy, "sgd", np.asarray(mm.TOY_STARTS))
case("x", mm.toy_losses, np.ones((2, 2)))
case("x", mm.toy_losses, torch.ones(2, 3))
case("x", mm.toy_losses, torch.tensor([[float("nan"), 0.0]]))
case("scale", mm.toy_losses, torch.ones(2, 2), scale=-1.0)
case("x", mm.toy_losses_and_grads, np.ones((2, 3)))
case("x", mm.toy_losses_and_grads, np.array([[np.inf, 0.0]]))
case("scale", mm.toy_loss_floor, 0.0)
case("g2", mm.pareto_stationarity, np.ones((2, 2)), np.ones((3, 2)))
case("g1", mm.pareto_stationarity, np.array([[np.nan, 0.0]]), np.ones((1, 2)))
case("grid", mm.pareto_front, grid=1)
case("lim", mm.pareto_front, lim=-1.0)
# data and training
case("n_train", mm.make_multitask_regression, n_train=1)
case("n_tasks", mm.make_multitask_regression, n_tasks=0)
case("scale_range", mm.make_multitask_regression, scale_range=(1.0, 0.1))
case("noise", mm.make_multitask_regression, noise=-1.0)
case("seed", mm.make_multitask_regression, seed=1.5)
case("test_fraction", mm.load_diabetes_tasks, test_fraction=1.0)
case("seed", mm.load_diabetes_tasks, seed=-1)
case("split", DATA.target, 0, "valid")
case("t", DATA.target, 7, "train")
case("data", mm.run_mtl, "not data", "ls")
case("method", mm.run_mtl, DATA, "adam")
case("steps", mm.run_mtl, DATA, "ls", steps=0)
case("tasks", mm.run_mtl, DATA, "ls", tasks=[0, 0])
case("tasks", mm.run_mtl, DATA, "ls", tasks=[5])
case("loss_floor", mm.run_mtl, DATA, "maxmin", loss_floor=[0.0, 0.0, 0.0])
case("lr", mm.run_mtl, DATA, "ls", lr=float("inf"))
case("hidden", mm.run_mtl, DATA, "ls", hidden=0)
# the LibMTL adapter factory
case("abs_weighting", mm.libmtl_weighting, "AbsWeighting")
case("name", mm.libmtl_weighting, object, name="not an identifier")


@pytest.mark.parametrize(("arg", "fn", "args", "kwargs"), CASES)
def test_invalid_call_is_a_clear_error_naming_the_argument(arg, fn, args, kwargs):
    with pytest.raises((ValueError, TypeError)) as err:
        fn(*args, **kwargs)
    message = str(err.value)
    assert "\n" not in message, message
    assert message.startswith(f"{arg}:") or f"{arg}:" in message or f"'{arg}'" in message, message


def test_backward_bad_input():
    w = torch.nn.Parameter(torch.randn(3))
    m = mm.MaxMinWeighting(2)
    with pytest.raises(ValueError, match="losses: expected 2 scalar losses"):
        m.backward(torch.stack([w.sum(), w.sum(), w.sum()]), [w])
    with pytest.raises(TypeError, match="losses:"):
        m.backward([1.0, 2.0], [w])
    with pytest.raises(ValueError, match="shared_parameters"):
        m.backward(torch.stack([w.sum(), w.sum()]), [])
    with pytest.raises(TypeError, match="shared_parameters"):
        m.backward(torch.stack([w.sum(), w.sum()]), 3)
    with pytest.raises(ValueError, match="task_specific_parameters"):
        m.backward(torch.stack([w.sum(), w.sum()]), [w], [w])
