"""Baselines: NOTEARS (linear, our implementation) and DAGMA (the ``dagma`` package, optional extra).

NOTEARS (Zheng et al. 2018): ``min_W 1/(2n)||X - XW||_F^2 + lambda1 ||W||_1`` subject to
``h(W) = tr(exp(W o W)) - d = 0``, solved by the augmented Lagrangian with L-BFGS-B on the split
``W = W+ - W-`` (both ``>= 0``), as in the authors' reference algorithm; defaults from the paper
(``lambda1 = 0.1``, ``w_threshold = 0.3``, ``h_tol = 1e-8``, ``rho_max = 1e16``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time

import numpy as np
import scipy.linalg as sla
import scipy.optimize as sopt

from paperworks.core.validate import int_in_range, nonnegative_float, one_of, positive_float, positive_int

from .estimator import check_data, enforce_acyclic

__all__ = ["dagma_linear", "dagma_nonlinear", "dagma_step_cost", "notears_linear"]


def notears_linear(
    X,
    lambda1: float = 0.1,
    *,
    max_iter: int = 100,
    h_tol: float = 1e-8,
    rho_max: float = 1e16,
    w_threshold: float = 0.3,
) -> np.ndarray:
    """NOTEARS, linear least squares. ``X``: ``(n, d)``. Returns the thresholded ``(d, d)`` weights.

    The result is made acyclic by :func:`enforce_acyclic` if thresholding leaves a cycle.
    """
    X = check_data(X)
    lambda1 = nonnegative_float(lambda1, "lambda1")
    max_iter = positive_int(max_iter, "max_iter")
    h_tol = positive_float(h_tol, "h_tol")
    rho_max = positive_float(rho_max, "rho_max")
    w_threshold = nonnegative_float(w_threshold, "w_threshold")
    n, d = X.shape
    X = X - X.mean(0, keepdims=True)
    cov = X.T @ X / n
    bounds = [(0, 0) if i == j else (0, None) for _ in range(2) for i in range(d) for j in range(d)]

    def unpack(w: np.ndarray) -> np.ndarray:
        return (w[: d * d] - w[d * d :]).reshape(d, d)

    def func(w: np.ndarray, rho: float, alpha: float) -> tuple[float, np.ndarray]:
        W = unpack(w)
        R = np.eye(d) - W
        loss = 0.5 * float((R * (cov @ R)).sum())
        g_loss = -cov @ R
        E = sla.expm(W * W)
        h = float(np.trace(E)) - d
        g_h = E.T * W * 2
        obj = loss + 0.5 * rho * h * h + alpha * h + lambda1 * w.sum()
        g = g_loss + (rho * h + alpha) * g_h
        return obj, np.concatenate([g.ravel() + lambda1, -g.ravel() + lambda1])

    w_est, rho, alpha, h = np.zeros(2 * d * d), 1.0, 0.0, np.inf
    for _ in range(max_iter):
        w_new, h_new = None, None
        while rho < rho_max:
            sol = sopt.minimize(func, w_est, args=(rho, alpha), method="L-BFGS-B", jac=True, bounds=bounds)
            w_new = sol.x
            h_new = float(np.trace(sla.expm(unpack(w_new) ** 2))) - d
            if h_new > 0.25 * h:
                rho *= 10
            else:
                break
        w_est, h = w_new, h_new
        alpha += rho * h
        if h <= h_tol or rho >= rho_max:
            break
    W = unpack(w_est)
    W[np.abs(W) < w_threshold] = 0
    B = enforce_acyclic(W != 0, W)
    return W * B


@contextlib.contextmanager
def _quiet_dagma():
    """Silence dagma's tqdm bars and restore torch's default dtype (DagmaMLP changes it globally)."""
    import dagma.linear
    import dagma.nonlinear
    import torch

    old_dtype = torch.get_default_dtype()
    saved = {mod: mod.tqdm for mod in (dagma.linear, dagma.nonlinear)}
    for mod, bar in saved.items():
        mod.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        torch.set_default_dtype(old_dtype)
        for mod, bar in saved.items():
            mod.tqdm = bar


def _import_dagma():
    try:
        import dagma  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the DAGMA baseline needs the 'dagma' package: pip install 'paperworks-smnc-dag[peer]'"
        ) from exc


def _check_fit_kwargs(fit, kwargs: dict, where: str) -> None:
    known = set(inspect.signature(fit).parameters) - {"self", "X"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(
            f"fit_kwargs: unknown argument(s) {unknown} for {where}; expected names from {sorted(known)}"
        )


def dagma_linear(X, lambda1: float = 0.02, **fit_kwargs) -> np.ndarray:
    """DAGMA linear (``dagma.linear.DagmaLinear``, l2 loss), package defaults unless overridden.

    ``fit_kwargs``: arguments of ``DagmaLinear.fit`` (``T``, ``warm_iter``, ``max_iter``, ``s``, ``lr``,
    ...). Returns the thresholded ``(d, d)`` weights (acyclicity enforced like ours if a cycle is left).
    """
    _import_dagma()
    from dagma.linear import DagmaLinear

    X = check_data(X)
    lambda1 = nonnegative_float(lambda1, "lambda1")
    _check_fit_kwargs(DagmaLinear.fit, fit_kwargs, "dagma_linear")
    with _quiet_dagma():
        W = DagmaLinear(loss_type="l2").fit(X.copy(), lambda1=lambda1, **fit_kwargs)
    return W * enforce_acyclic(W != 0, W)


def dagma_nonlinear(X, hidden: int = 10, seed: int = 0, **fit_kwargs) -> np.ndarray:
    """DAGMA nonlinear (``DagmaMLP`` with ``dims=[d, hidden, 1]``); returns thresholded ``(d, d)``."""
    _import_dagma()
    import torch
    from dagma.nonlinear import DagmaMLP, DagmaNonlinear

    X = check_data(X)
    hidden = positive_int(hidden, "hidden")
    seed = int_in_range(seed, "seed", 0)
    _check_fit_kwargs(DagmaNonlinear.fit, fit_kwargs, "dagma_nonlinear")
    d = X.shape[1]
    with _quiet_dagma():
        torch.manual_seed(seed)
        model = DagmaMLP(dims=[d, hidden, 1], bias=True, dtype=torch.double)
        W = DagmaNonlinear(model, dtype=torch.double).fit(X.copy(), **fit_kwargs)
    return W * enforce_acyclic(W != 0, W)


def dagma_step_cost(X, *, steps: int = 300, model: str = "linear", seed: int = 0) -> float:
    """CPU seconds of one DAGMA Adam step on ``X`` (``model``: ``"linear"`` or ``"mlp"``), timed with
    ``time.process_time`` (what an equal-time budget is priced with): the difference between one-stage
    runs of ``2 * steps`` and ``steps`` steps, after an untimed warm-up run, so that set-up costs (imports,
    the first torch optimiser) cancel."""
    steps = positive_int(steps, "steps")
    model = one_of(model, "model", ("linear", "mlp"))
    seed = int_in_range(seed, "seed", 0)

    def run(k: int) -> float:
        start = time.process_time()
        if model == "linear":
            dagma_linear(X, T=1, warm_iter=k, max_iter=k, checkpoint=10 * k)
        else:
            dagma_nonlinear(X, seed=seed, T=1, warm_iter=k, max_iter=k, checkpoint=10 * k)
        return time.process_time() - start

    run(steps)  # warm-up
    short, long = run(steps), run(2 * steps)
    return max(long - short, 1e-3 * long) / steps
