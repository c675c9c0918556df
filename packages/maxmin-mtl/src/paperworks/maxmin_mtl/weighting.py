"""Gradient-weighting methods for multi-task learning: the common interface and the max-min method.

Every method here turns the ``k`` task gradients of the shared parameters into one update
``u = sum_i beta_i g_i`` (``theta <- theta - lr * u``), so it is fully described by a weight vector
``beta`` computed from the ``(k, k)`` Gram matrix ``G G^T`` and the loss values. ``backward`` follows the
shape of LibMTL / the Nash-MTL code: it computes the per-task gradients of the shared parameters,
the weights, and then back-propagates ``sum_i beta_i L_i``, so the shared parameters' ``.grad`` holds
``u`` exactly and task-specific parameters (heads) receive their ``beta_i``-weighted gradients.

Bad input, defined behaviour (``nonfinite="skip"``, the default): a task whose loss or gradient is
NaN/inf is left out of this step (weight 0, a ``RuntimeWarning``); with ``nonfinite="raise"`` it is a
``ValueError``. A task with a zero gradient is left out by the max-min method (it has no first-order
improvement to serve). When no task is left, the update is zero. No path returns a NaN update.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .rates import CURVATURE_MODES, normalized_improvement_rates, task_curvatures
from .solver import solve_maxmin

__all__ = ["MaxMinResult", "MaxMinWeighting", "WeightMethod", "gram_matrix", "maxmin_weights"]


def gram_matrix(grads: torch.Tensor | np.ndarray) -> np.ndarray:
    """``(k, k)`` float64 Gram matrix ``G G^T`` of a ``(k, d)`` gradient matrix."""
    if isinstance(grads, torch.Tensor):
        g = grads.detach().to(torch.float64)
        return (g @ g.T).cpu().numpy()
    g = np.asarray(grads, dtype=np.float64)
    return g @ g.T


def _check_losses(losses: Any, n_tasks: int | None, name: str = "losses") -> np.ndarray:
    arr = np.asarray(losses, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array of task losses, got shape {arr.shape}")
    if n_tasks is not None and arr.shape[0] != n_tasks:
        raise ValueError(f"{name}: expected {n_tasks} task losses, got {arr.shape[0]}")
    return arr


class WeightMethod(abc.ABC):
    """Base class: ``weights(gram, losses)`` (functional core) and ``backward(losses, shared_parameters)``.

    ``n_tasks``: number of tasks ``k``; ``nonfinite``: ``"skip"`` or ``"raise"`` for NaN/inf losses
    or gradients. Subclasses implement :meth:`_weights` on the Gram matrix of the valid tasks.
    """

    name: str = "base"
    needs_gradients: bool = True

    def __init__(self, n_tasks: int, *, nonfinite: str = "skip") -> None:
        if isinstance(n_tasks, bool) or not isinstance(n_tasks, int | np.integer) or n_tasks < 1:
            raise ValueError(f"n_tasks: expected a positive int, got {n_tasks!r}")
        if nonfinite not in ("skip", "raise"):
            raise ValueError(f"nonfinite: expected 'skip' or 'raise', got {nonfinite!r}")
        self.n_tasks = int(n_tasks)
        self.nonfinite = nonfinite

    @abc.abstractmethod
    def _weights(self, gram: np.ndarray, losses: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, dict]:
        """Weights ``(m,)`` for the ``m`` valid tasks ``index`` given their Gram ``(m, m)`` and losses."""

    def weights(self, gram: np.ndarray | None, losses: Any) -> tuple[np.ndarray, dict[str, Any]]:
        """Weights ``beta`` ``(k,)`` of the update ``u = sum_i beta_i g_i`` and method diagnostics.

        ``gram``: ``(k, k)`` Gram matrix of the task gradients (may be ``None`` for methods with
        ``needs_gradients = False``); ``losses``: ``(k,)`` current loss values.
        """
        loss = _check_losses(losses, self.n_tasks)
        k = self.n_tasks
        valid = np.isfinite(loss)
        if gram is not None:
            K = np.asarray(gram, dtype=np.float64)
            if K.shape != (k, k):
                raise ValueError(f"gram: expected shape ({k}, {k}), got {K.shape}")
            valid &= np.isfinite(np.diag(K))
            valid &= np.all(np.isfinite(K) | ~valid[None, :], axis=1)
        elif self.needs_gradients:
            raise ValueError(f"gram: {type(self).__name__} needs the gradient Gram matrix, got None")
        if not valid.all():
            bad = np.flatnonzero(~valid).tolist()
            if self.nonfinite == "raise":
                raise ValueError(f"losses: tasks {bad} have a non-finite loss or gradient")
            warnings.warn(
                f"tasks {bad} have a non-finite loss or gradient; left out of this update",
                RuntimeWarning,
                stacklevel=3,
            )
        beta = np.zeros(k)
        index = np.flatnonzero(valid)
        info: dict[str, Any] = {"valid": valid}
        if index.size:
            sub = None if gram is None else K[np.ix_(index, index)]
            b, extra = self._weights(sub, loss[index], index)
            b = np.where(np.isfinite(b), b, 0.0)
            beta[index] = b
            info.update(extra)
        return beta, info

    def combine(
        self, grads: torch.Tensor | np.ndarray, losses: Any
    ) -> tuple[torch.Tensor | np.ndarray, np.ndarray]:
        """Functional form over a gradient matrix: ``grads`` ``(k, d)`` -> ``(update (d,), beta (k,))``."""
        if grads.ndim != 2 or grads.shape[0] != self.n_tasks:
            raise ValueError(f"grads: expected shape ({self.n_tasks}, d), got {tuple(grads.shape)}")
        gram = gram_matrix(grads) if self.needs_gradients else None
        beta, _ = self.weights(gram, losses)
        use = beta != 0
        if isinstance(grads, torch.Tensor):
            b = torch.as_tensor(beta[use], dtype=grads.dtype, device=grads.device)
            return b @ grads[torch.as_tensor(use, device=grads.device)], beta
        g = np.asarray(grads)
        return beta[use] @ g[use] if use.any() else np.zeros(g.shape[1], dtype=g.dtype), beta

    def backward(
        self,
        losses: torch.Tensor | Sequence[torch.Tensor],
        shared_parameters: Iterable[torch.Tensor],
        task_specific_parameters: Iterable[torch.Tensor] | None = None,
        **_: Any,
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Compute the weighted update and back-propagate it (LibMTL / Nash-MTL ``backward`` shape).

        ``losses``: ``(k,)`` tensor or a sequence of ``k`` scalar tensors; ``shared_parameters``: the
        parameters every task uses. Afterwards each shared parameter's ``.grad`` holds its slice of
        ``u = sum_i beta_i g_i``. Returns ``(sum_i beta_i L_i detached, info)``; ``info["weights"]`` is
        the ``(k,)`` weight tensor.
        """
        L = losses if isinstance(losses, torch.Tensor) else torch.stack([torch.as_tensor(x) for x in losses])
        if L.ndim != 1 or L.shape[0] != self.n_tasks:
            raise ValueError(f"losses: expected {self.n_tasks} scalar losses, got shape {tuple(L.shape)}")
        shared = [p for p in shared_parameters if p.requires_grad]
        if not shared:
            raise ValueError("shared_parameters: expected at least one tensor that requires grad")
        lv = L.detach().to(torch.float64).cpu().numpy()
        gram = None
        if self.needs_gradients:
            rows = []
            for i in range(self.n_tasks):
                if np.isfinite(lv[i]) and L[i].requires_grad:
                    gs = torch.autograd.grad(L[i], shared, retain_graph=True, allow_unused=True)
                    rows.append(
                        torch.cat(
                            [
                                (g if g is not None else torch.zeros_like(p)).reshape(-1)
                                for g, p in zip(gs, shared)
                            ]
                        )
                    )
                else:
                    rows.append(
                        torch.full((sum(p.numel() for p in shared),), float("nan"), device=shared[0].device)
                    )
            gram = gram_matrix(torch.stack(rows))
        beta, info = self.weights(gram, lv)
        use = [i for i in range(self.n_tasks) if beta[i] != 0 and np.isfinite(lv[i])]
        if use:
            total = sum(float(beta[i]) * L[i] for i in use)
            total.backward()
        else:
            total = torch.zeros((), device=shared[0].device)
            for p in shared:
                p.grad = torch.zeros_like(p)
        info["weights"] = torch.as_tensor(beta, dtype=torch.float32)
        return total.detach(), info


@dataclass(frozen=True)
class MaxMinResult:
    """Functional result of :func:`maxmin_weights`.

    ``weights``: ``(k,)`` gradient weights ``beta`` (0 for tasks left out); ``update``: ``(d,)`` update
    ``u = sum_i beta_i g_i``; ``rates``: ``(k,)`` normalized improvement rates of ``u`` (``nan`` for
    tasks left out); ``value``: the optimal worst-task rate ``t*``; ``active``: the bottleneck tasks;
    ``iterations``: active-set iterations; ``curvature``: ``(k,)`` curvatures ``lam_i`` used.
    """

    weights: np.ndarray
    update: torch.Tensor | np.ndarray
    rates: np.ndarray
    value: float
    active: tuple[int, ...]
    iterations: int
    curvature: np.ndarray


class MaxMinWeighting(WeightMethod):
    """Max-min normalized improvement weighting (the paper's method, our reconstruction).

    Chooses ``u`` maximising ``min_i r_i(u)`` (see :mod:`paperworks.maxmin_mtl.rates`) under the
    isotropic quadratic model, solved exactly on the bottleneck set by the closed form and the
    active-set procedure of :mod:`paperworks.maxmin_mtl.solver`. Returns ``beta_i = c_i / lam_i``.

    ``curvature``: ``"gap"`` (default), ``"unit"``, ``"shared"`` or ``k`` positive numbers;
    ``loss_floor``: scalar or ``(k,)`` known lower bounds of the losses (gap model; 0 for MSE/CE);
    ``tol``: optimality tolerance on rates; ``ridge``: relative Gram regularisation.
    """

    name = "maxmin"

    def __init__(
        self,
        n_tasks: int,
        *,
        curvature: str | Sequence[float] = "gap",
        loss_floor: float | Sequence[float] = 0.0,
        tol: float = 1e-9,
        ridge: float = 1e-10,
        nonfinite: str = "skip",
    ) -> None:
        super().__init__(n_tasks, nonfinite=nonfinite)
        if isinstance(curvature, str):
            if curvature not in CURVATURE_MODES:
                raise ValueError(
                    f"curvature: expected one of {CURVATURE_MODES} or {n_tasks} positive numbers, "
                    f"got {curvature!r}"
                )
            self.curvature: str | np.ndarray = curvature
        else:
            c = np.asarray(curvature, dtype=np.float64)
            if c.shape != (n_tasks,) or not np.all(np.isfinite(c) & (c > 0)):
                raise ValueError(f"curvature: expected {n_tasks} finite positive numbers, got {curvature!r}")
            self.curvature = c
        floor = np.asarray(loss_floor, dtype=np.float64)
        if floor.ndim == 0:
            floor = np.full(n_tasks, float(floor))
        if floor.shape != (n_tasks,) or not np.all(np.isfinite(floor)):
            raise ValueError(
                f"loss_floor: expected a finite scalar or {n_tasks} finite numbers, got {loss_floor!r}"
            )
        if not (np.isfinite(tol) and tol >= 0):
            raise ValueError(f"tol: expected a finite non-negative number, got {tol!r}")
        if not (np.isfinite(ridge) and ridge >= 0):
            raise ValueError(f"ridge: expected a finite non-negative number, got {ridge!r}")
        self.loss_floor = floor
        self.tol = float(tol)
        self.ridge = float(ridge)

    def _weights(self, gram: np.ndarray, losses: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, dict]:
        curv = self.curvature if isinstance(self.curvature, str) else self.curvature[index]
        lam = task_curvatures(np.diag(gram), losses, curv, self.loss_floor[index])
        served = np.flatnonzero(np.isfinite(lam))
        m = len(index)
        beta = np.zeros(m)
        lam_full = np.full(self.n_tasks, np.nan)
        lam_full[index] = lam
        info: dict[str, Any] = {"curvature": lam_full, "value": float("nan"), "active": (), "iterations": 0}
        rates = np.full(self.n_tasks, np.nan)
        if served.size:
            ls = lam[served]
            Q = gram[np.ix_(served, served)] / np.outer(ls, ls)
            res = solve_maxmin(Q, tol=self.tol, ridge=self.ridge)
            beta[served] = res.coef / ls
            rates[index] = normalized_improvement_rates(gram, lam, beta)
            info.update(
                value=res.value,
                active=tuple(int(index[served[a]]) for a in res.active),
                iterations=res.iterations,
            )
        info["rates"] = rates
        return beta, info


def maxmin_weights(
    grads: torch.Tensor | np.ndarray,
    losses: Any = None,
    *,
    curvature: str | Sequence[float] = "gap",
    loss_floor: float | Sequence[float] = 0.0,
    tol: float = 1e-9,
    ridge: float = 1e-10,
    nonfinite: str = "skip",
) -> MaxMinResult:
    """Functional max-min normalized improvement update over a gradient matrix.

    ``grads``: ``(k, d)`` task gradients of the shared parameters (NumPy or torch); ``losses``: ``(k,)``
    loss values (required by ``curvature="gap"``; any finite values otherwise). Returns a
    :class:`MaxMinResult` whose ``update`` has the type and dtype of ``grads``.
    """
    if grads.ndim != 2 or grads.shape[0] < 1:
        raise ValueError(
            f"grads: expected a (k, d) gradient matrix with k >= 1, got shape {tuple(grads.shape)}"
        )
    k = grads.shape[0]
    if losses is None:
        if curvature == "gap":
            raise ValueError("losses: curvature='gap' needs the loss values, got None")
        losses = np.zeros(k)
    method = MaxMinWeighting(
        k, curvature=curvature, loss_floor=loss_floor, tol=tol, ridge=ridge, nonfinite=nonfinite
    )
    beta, info = method.weights(gram_matrix(grads), losses)
    use = beta != 0
    if isinstance(grads, torch.Tensor):
        update = (
            torch.as_tensor(beta[use], dtype=grads.dtype, device=grads.device)
            @ grads[torch.as_tensor(use, device=grads.device)]
        )
    else:
        g = np.asarray(grads)
        update = (
            beta[use] @ g[use]
            if use.any()
            else np.zeros(g.shape[1], dtype=np.result_type(g.dtype, np.float64))
        )
    return MaxMinResult(
        weights=beta,
        update=update,
        rates=info.get("rates", np.full(k, np.nan)),
        value=float(info.get("value", np.nan)),
        active=tuple(info.get("active", ())),
        iterations=int(info.get("iterations", 0)),
        curvature=info.get("curvature", np.full(k, np.nan)),
    )
