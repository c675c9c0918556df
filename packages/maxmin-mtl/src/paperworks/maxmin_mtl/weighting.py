"""Gradient-weighting methods for multi-task learning: the common interface and the max-min method.

Every method here turns the ``k`` task gradients of the shared parameters into one update
``u = sum_i beta_i g_i`` (``theta <- theta - lr * u``), so it is fully described by a weight vector
``beta`` computed from the ``(k, k)`` Gram matrix ``G G^T`` and the loss values. ``backward`` follows the
shape of LibMTL / the Nash-MTL code: it computes the per-task gradients of the shared parameters,
the weights, and then back-propagates ``sum_i beta_i L_i``, so the shared parameters' ``.grad`` holds
``u`` exactly and task-specific parameters (heads) receive their ``beta_i``-weighted gradients.

``task_specific_parameters`` (the heads), when given, receive their *own* loss's gradient
(``d L_i / d theta_i``, unweighted), as in MGDA-UB (Sener & Koltun 2018) and LibMTL, where only the
shared update is re-weighted; without them every other parameter gets the ``beta``-weighted gradient
of ``sum_i beta_i L_i`` (the Nash-MTL reference's convention).

Bad input, defined behaviour (``nonfinite="skip"``, the default): a task whose loss or gradient is
NaN/inf is left out of this step (weight 0, a ``RuntimeWarning``); with ``nonfinite="raise"`` it is a
``ValueError``. A malformed Gram matrix (not symmetric, not positive semi-definite, negative diagonal)
is a ``ValueError``. The max-min method leaves out, with a ``RuntimeWarning``, a task with a zero
gradient or a loss at its floor (no first-order improvement to serve); a loss *below* its floor is a
``ValueError`` (the floor must be a lower bound), or with ``below_floor="skip"`` the task is left out
with a warning. When no task is left, the update is zero (with a warning). No path returns a NaN
update.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._checks import as_grad_matrix, check_gram, nonnegative_float, one_of, positive_int, real_vector
from .rates import CURVATURE_MODES, _improvement_rates, task_curvatures
from .solver import _active_set

__all__ = ["MaxMinResult", "MaxMinWeighting", "WeightMethod", "gram_matrix", "maxmin_weights"]


def gram_matrix(grads: Any) -> np.ndarray:
    """``(k, k)`` float64 Gram matrix ``G G^T`` of a ``(k, d)`` gradient matrix (array, tensor or a
    sequence of ``k`` gradient vectors)."""
    G = as_grad_matrix(grads)
    if isinstance(G, torch.Tensor):
        g = G.detach().to(torch.float64)
        return (g @ g.T).cpu().numpy()
    g = np.asarray(G, dtype=np.float64)
    return g @ g.T


def _check_losses(losses: Any, n_tasks: int | None, name: str = "losses") -> np.ndarray:
    return real_vector(losses, name, n_tasks, allow_nonfinite=True)


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=4)


class WeightMethod(abc.ABC):
    """Base class: ``weights(gram, losses)`` (functional core) and ``backward(losses, shared_parameters)``.

    ``n_tasks``: number of tasks ``k``; ``nonfinite``: ``"skip"`` or ``"raise"`` for NaN/inf losses
    or gradients. Subclasses implement :meth:`_weights` on the Gram matrix of the valid tasks.
    """

    name: str = "base"
    needs_gradients: bool = True

    def __init__(self, n_tasks: int, *, nonfinite: str = "skip") -> None:
        self.n_tasks = positive_int(n_tasks, "n_tasks")
        self.nonfinite = one_of(nonfinite, "nonfinite", ("skip", "raise"))

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
        K = None
        if gram is not None:
            if isinstance(gram, torch.Tensor):
                gram = gram.detach().to(torch.float64).cpu().numpy()
            try:
                K = np.asarray(gram, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(
                    f"gram: expected a ({k}, {k}) real matrix, got {type(gram).__name__}"
                ) from None
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
            _warn(f"tasks {bad} have a non-finite loss or gradient; left out of this update")
        beta = np.zeros(k)
        index = np.flatnonzero(valid)
        info: dict[str, Any] = {"valid": valid}
        if index.size:
            sub = None if K is None else check_gram(K[np.ix_(index, index)], "gram")
            b, extra = self._weights(sub, loss[index], index)
            b = np.where(np.isfinite(b), b, 0.0)
            beta[index] = b
            info.update(extra)
        return beta, info

    def _combine(
        self, grads: Any, losses: Any
    ) -> tuple[torch.Tensor | np.ndarray, np.ndarray, dict[str, Any]]:
        G = as_grad_matrix(grads)
        if G.shape[0] != self.n_tasks:
            raise ValueError(f"grads: expected shape ({self.n_tasks}, d), got {tuple(G.shape)}")
        gram = gram_matrix(G) if self.needs_gradients else None
        beta, info = self.weights(gram, losses)
        use = beta != 0
        if isinstance(G, torch.Tensor):
            if not use.any():
                return torch.zeros(G.shape[1], dtype=G.dtype, device=G.device), beta, info
            b = torch.as_tensor(beta[use], dtype=G.dtype, device=G.device)
            return b @ G[torch.as_tensor(use, device=G.device)], beta, info
        g = np.asarray(G)
        out = np.result_type(g.dtype, np.float64) if g.dtype.kind != "f" else g.dtype
        update = (beta[use] @ g[use]).astype(out) if use.any() else np.zeros(g.shape[1], dtype=out)
        return update, beta, info

    def combine(self, grads: Any, losses: Any) -> tuple[torch.Tensor | np.ndarray, np.ndarray]:
        """Functional form over a gradient matrix: ``grads`` ``(k, d)`` (array, tensor or a sequence of
        ``k`` vectors) -> ``(update (d,), beta (k,))``; the update has the type and dtype of ``grads``."""
        update, beta, _ = self._combine(grads, losses)
        return update, beta

    def backward(
        self,
        losses: torch.Tensor | Sequence[torch.Tensor],
        shared_parameters: Iterable[torch.Tensor],
        task_specific_parameters: Iterable[torch.Tensor] | None = None,
        **_: Any,
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Compute the weighted update and back-propagate it (LibMTL / Nash-MTL ``backward`` shape).

        ``losses``: ``(k,)`` tensor or a sequence of ``k`` scalar tensors; ``shared_parameters``: the
        parameters every task uses; their ``.grad`` receives (accumulates) their slice of
        ``u = sum_i beta_i g_i``. ``task_specific_parameters``: when given, each receives the gradient of
        the task losses it enters, unweighted (``d sum_i L_i / d theta``: a head gets its own loss's
        gradient); when ``None``, ``sum_i beta_i L_i`` is back-propagated into every parameter.
        Returns ``(sum_i beta_i L_i detached, info)``; ``info["weights"]`` is the ``(k,)`` weight tensor.
        """
        if isinstance(losses, torch.Tensor):
            L = losses
        elif isinstance(losses, Sequence) and all(isinstance(x, torch.Tensor) for x in losses) and losses:
            if any(x.numel() != 1 for x in losses):
                raise ValueError("losses: expected scalar tensors, one per task")
            L = torch.stack([x.reshape(()) for x in losses])
        else:
            raise TypeError(
                f"losses: expected a (k,) tensor or a sequence of scalar tensors, got {type(losses).__name__}"
            )
        if L.ndim != 1 or L.shape[0] != self.n_tasks:
            raise ValueError(f"losses: expected {self.n_tasks} scalar losses, got shape {tuple(L.shape)}")
        if not L.is_floating_point():
            raise TypeError(f"losses: expected a floating-point tensor, got {L.dtype}")
        shared = _param_list(shared_parameters, "shared_parameters")
        if not shared:
            raise ValueError("shared_parameters: expected at least one tensor that requires grad")
        specific = None
        if task_specific_parameters is not None:
            specific = _param_list(task_specific_parameters, "task_specific_parameters")
            ids = {id(p) for p in shared}
            if any(id(p) in ids for p in specific):
                raise ValueError("task_specific_parameters: a parameter is also in shared_parameters")
        lv = L.detach().to(torch.float64).cpu().numpy()
        dim = sum(p.numel() for p in shared)
        G = None
        if self.needs_gradients or specific is not None:
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
                        torch.full((dim,), float("nan"), device=shared[0].device, dtype=shared[0].dtype)
                    )
            G = torch.stack(rows)
        gram = gram_matrix(G) if self.needs_gradients else None
        beta, info = self.weights(gram, lv)
        use = [i for i in range(self.n_tasks) if beta[i] != 0 and np.isfinite(lv[i])]
        total = sum(float(beta[i]) * L[i] for i in use) if use else torch.zeros((), device=L.device)
        if specific is None:
            if use:
                total.backward()
            else:
                for p in shared:
                    p.grad = torch.zeros_like(p) if p.grad is None else p.grad
        else:
            if use:
                b = torch.as_tensor(beta[use], dtype=G.dtype, device=G.device)
                u = b @ G[use]
            else:
                u = torch.zeros(dim, dtype=shared[0].dtype, device=shared[0].device)
            offset = 0
            for p in shared:
                part = u[offset : offset + p.numel()].reshape(p.shape).to(p.dtype)
                offset += p.numel()
                p.grad = part.clone() if p.grad is None else p.grad + part
            own = [i for i in range(self.n_tasks) if np.isfinite(lv[i]) and L[i].requires_grad]
            heads = [p for p in specific if p.requires_grad]
            if own and heads:
                gs = torch.autograd.grad(sum(L[i] for i in own), heads, allow_unused=True)
                for p, g in zip(heads, gs):
                    if g is not None:
                        p.grad = g.clone() if p.grad is None else p.grad + g
        info["weights"] = torch.as_tensor(beta, dtype=torch.float32)
        return total.detach() if isinstance(total, torch.Tensor) else torch.as_tensor(total), info


def _param_list(params: Any, name: str) -> list[torch.Tensor]:
    if isinstance(params, torch.Tensor):
        params = [params]
    try:
        items = list(params)
    except TypeError:
        raise TypeError(f"{name}: expected an iterable of tensors, got {type(params).__name__}") from None
    if not all(isinstance(p, torch.Tensor) for p in items):
        raise TypeError(f"{name}: expected an iterable of tensors")
    return [p for p in items if p.requires_grad]


@dataclass(frozen=True)
class MaxMinResult:
    """Functional result of :func:`maxmin_weights`.

    ``weights``: ``(k,)`` gradient weights ``beta`` (0 for tasks left out); ``update``: ``(d,)`` update
    ``u = sum_i beta_i g_i``; ``rates``: ``(k,)`` normalized improvement rates of ``u`` (``nan`` for
    tasks left out); ``value``: the worst rate of ``u`` over the served tasks (``t*``); ``active``: the
    bottleneck tasks; ``iterations``: active-set iterations; ``curvature``: ``(k,)`` curvatures
    ``lam_i`` used; ``excluded``: tasks left out of the problem (non-finite, zero gradient, at or below
    the floor).
    """

    weights: np.ndarray
    update: torch.Tensor | np.ndarray
    rates: np.ndarray
    value: float
    active: tuple[int, ...]
    iterations: int
    curvature: np.ndarray
    excluded: tuple[int, ...] = ()


class MaxMinWeighting(WeightMethod):
    """Max-min normalized improvement weighting (the paper's method, our reconstruction).

    Chooses ``u`` maximising ``min_i r_i(u)`` (see :mod:`paperworks.maxmin_mtl.rates`) under the
    isotropic quadratic model, solved exactly on the bottleneck set by the closed form and the
    active-set procedure of :mod:`paperworks.maxmin_mtl.solver`. Returns ``beta_i = c_i / lam_i``.

    ``curvature``: ``"gap"`` (default), ``"unit"``, ``"shared"`` or ``k`` positive numbers;
    ``loss_floor``: scalar or ``(k,)`` known lower bounds ``L_i*`` of the losses (gap model; 0 for
    MSE/CE); ``below_floor``: ``"raise"`` (default) or ``"skip"`` for a loss under its floor;
    ``tol``: optimality tolerance on rates; ``ridge``: regularisation of the normalised Gram matrix
    (default 0, see :func:`~paperworks.maxmin_mtl.solve_maxmin`).
    """

    name = "maxmin"

    def __init__(
        self,
        n_tasks: int,
        *,
        curvature: str | Sequence[float] = "gap",
        loss_floor: float | Sequence[float] = 0.0,
        below_floor: str = "raise",
        tol: float = 1e-9,
        ridge: float = 0.0,
        nonfinite: str = "skip",
    ) -> None:
        super().__init__(n_tasks, nonfinite=nonfinite)
        if isinstance(curvature, str):
            self.curvature: str | np.ndarray = one_of(curvature, "curvature", CURVATURE_MODES)
        else:
            c = real_vector(curvature, "curvature", self.n_tasks)
            if not np.all(c > 0):
                raise ValueError(f"curvature: expected {n_tasks} finite positive numbers, got {curvature!r}")
            self.curvature = c
        if np.ndim(loss_floor) == 0:
            floor = np.full(self.n_tasks, float(real_vector([loss_floor], "loss_floor")[0]))
        else:
            floor = real_vector(loss_floor, "loss_floor", self.n_tasks)
        self.loss_floor = floor
        self.below_floor = one_of(below_floor, "below_floor", ("raise", "skip"))
        self.tol = nonnegative_float(tol, "tol")
        self.ridge = nonnegative_float(ridge, "ridge")

    def _weights(self, gram: np.ndarray, losses: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, dict]:
        curv = self.curvature if isinstance(self.curvature, str) else self.curvature[index]
        floor = self.loss_floor[index]
        if isinstance(curv, str) and curv == "gap":
            below = losses < floor
            if below.any():
                bad = index[below].tolist()
                if self.below_floor == "raise":
                    raise ValueError(
                        f"losses: tasks {bad} are below their loss_floor ({losses[below].tolist()} < "
                        f"{floor[below].tolist()}); the floor must be a lower bound (or below_floor='skip')"
                    )
        lam = task_curvatures(np.diag(gram), losses, curv, floor)
        served = np.flatnonzero(np.isfinite(lam))
        left = np.flatnonzero(~np.isfinite(lam))
        m = len(index)
        beta = np.zeros(m)
        lam_full = np.full(self.n_tasks, np.nan)
        lam_full[index] = lam
        info: dict[str, Any] = {
            "curvature": lam_full,
            "value": float("nan"),
            "active": (),
            "iterations": 0,
            "excluded": tuple(int(index[i]) for i in left),
        }
        if left.size:
            zero = [int(index[i]) for i in left if not np.diag(gram)[i] > 0]
            floor_hit = [int(index[i]) for i in left if np.diag(gram)[i] > 0]
            parts = ([f"{zero} (zero gradient)"] if zero else []) + (
                [f"{floor_hit} (loss at or below its floor)"] if floor_hit else []
            )
            _warn(f"tasks {' and '.join(parts)} have no improvement to serve; left out of this update")
        rates = np.full(self.n_tasks, np.nan)
        if served.size:
            ls = lam[served]
            Q = gram[np.ix_(served, served)] / np.outer(ls, ls)
            res = _active_set(0.5 * (Q + Q.T), self.tol, self.ridge, None)
            beta[served] = res.coef / ls
            rates[index] = _improvement_rates(gram, lam, beta)
            info.update(
                value=float(np.nanmin(rates[index])),
                active=tuple(int(index[served[a]]) for a in res.active),
                iterations=res.iterations,
            )
        else:
            _warn("no task has an improvement to serve; the update is zero")
        info["rates"] = rates
        return beta, info


def maxmin_weights(
    grads: Any,
    losses: Any = None,
    *,
    curvature: str | Sequence[float] = "gap",
    loss_floor: float | Sequence[float] = 0.0,
    below_floor: str = "raise",
    tol: float = 1e-9,
    ridge: float = 0.0,
    nonfinite: str = "skip",
) -> MaxMinResult:
    """Functional max-min normalized improvement update over a gradient matrix.

    ``grads``: ``(k, d)`` task gradients of the shared parameters (NumPy, torch, or a sequence of
    ``k`` vectors); ``losses``: ``(k,)`` loss values (required by ``curvature="gap"``; any finite
    values otherwise). Returns a :class:`MaxMinResult` whose ``update`` has the type and dtype of
    ``grads``. Same computation as :meth:`MaxMinWeighting.combine`.
    """
    G = as_grad_matrix(grads)
    k = G.shape[0]
    if losses is None:
        if isinstance(curvature, str) and curvature == "gap":
            raise ValueError("losses: curvature='gap' needs the loss values, got None")
        losses = np.zeros(k)
    method = MaxMinWeighting(
        k,
        curvature=curvature,
        loss_floor=loss_floor,
        below_floor=below_floor,
        tol=tol,
        ridge=ridge,
        nonfinite=nonfinite,
    )
    update, beta, info = method._combine(G, losses)
    return MaxMinResult(
        weights=beta,
        update=update,
        rates=info.get("rates", np.full(k, np.nan)),
        value=float(info.get("value", np.nan)),
        active=tuple(info.get("active", ())),
        iterations=int(info.get("iterations", 0)),
        curvature=info.get("curvature", np.full(k, np.nan)),
        excluded=tuple(sorted(set(info.get("excluded", ())) | set(np.flatnonzero(~info["valid"]).tolist()))),
    )
