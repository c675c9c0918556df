"""Concave scalarisations ``f(J_1, ..., J_M)`` of a vector of returns, with their gradients.

The objective of concave multi-objective RL is ``F(pi) = f(J^pi)``. By the chain rule its policy
gradient is ``sum_m d_m f(J^pi) grad J_m^pi`` (paper, Section "problem"), so every algorithm needs the
*scalarisation gradient* ``w = grad f(J)`` at the current returns. The three utilities of the issue:

- :func:`proportional_fairness`: ``f(J) = sum_m log(J_m + delta)``; second-order smooth on its domain
  ``J_m > -delta``;
- :func:`exponential_utility`: ``f(J) = -sum_m exp(-kappa J_m)``; second-order smooth everywhere;
- :func:`kinked_utility`: ``f(J) = n.J - (kappa/2) sum_m (c_m - J_m)_+^2``: Lipschitz gradient but a
  Hessian that jumps at ``J = c`` (our construction, to expose the first-order bias of the plug-in).

All functions work on the last axis, so ``grad`` of an ``(n, M)`` array of return estimates is an
``(n, M)`` array of weights (vectorised over estimator calls).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import as_generator, finite_array, positive_float, positive_int

__all__ = [
    "ConcaveScalarization",
    "NonConcaveError",
    "check_concave",
    "exponential_utility",
    "kinked_utility",
    "linear_utility",
    "proportional_fairness",
]

Array = np.ndarray


class NonConcaveError(ValueError):
    """The random Hessian check found a direction of positive curvature."""


@dataclass(frozen=True)
class ConcaveScalarization:
    """A concave utility ``f: R^M -> R`` with its gradient, as the NPG algorithms consume it.

    ``value(J)`` and ``grad(J)`` act on the last axis of ``J`` (shape ``(..., M)``): ``value`` returns
    ``(...)``, ``grad`` returns ``(..., M)``. ``hessian`` (optional) returns ``(..., M, M)``.
    ``second_order_smooth``: the Hessian is Lipschitz (the paper's condition under which the plug-in's
    first-order bias cancels and vanilla NPG needs no MLMC). ``gradient_lipschitz``: grad f is
    Lipschitz (all three built-in utilities on their domains). ``domain(J)`` is a boolean mask of
    points where f is defined (default: everywhere). ``kink``: where the Hessian jumps, if anywhere.
    """

    name: str
    n_objectives: int
    value_fn: Callable[[Array], Array] = field(repr=False)
    grad_fn: Callable[[Array], Array] = field(repr=False)
    hessian_fn: Callable[[Array], Array] | None = field(default=None, repr=False)
    domain_fn: Callable[[Array], Array] | None = field(default=None, repr=False)
    second_order_smooth: bool = True
    gradient_lipschitz: bool = True
    kink: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        positive_int(self.n_objectives, "n_objectives")
        for name in ("value_fn", "grad_fn"):
            if not callable(getattr(self, name)):
                raise TypeError(f"{name}: expected a callable, got {type(getattr(self, name)).__name__}")

    # -- evaluation ------------------------------------------------------------------------------
    def _check(self, J: object, name: str = "J") -> Array:
        arr = finite_array(J, name)
        if arr.ndim == 0 or arr.shape[-1] != self.n_objectives:
            raise ValueError(
                f"{name}: expected a last axis of length M = {self.n_objectives} (one entry per objective), "
                f"got shape {arr.shape}"
            )
        if self.domain_fn is not None:
            ok = np.asarray(self.domain_fn(arr), dtype=bool)
            if not ok.all():
                bad = arr[~ok] if ok.ndim else arr
                raise ValueError(
                    f"{name}: {self.name} is undefined at {int((~ok).sum()) if ok.ndim else 1} point(s), "
                    f"e.g. {np.atleast_2d(bad)[0].tolist()}"
                )
        return arr

    def in_domain(self, J: object) -> Array:
        """Boolean mask (shape ``J.shape[:-1]``) of the points where f is defined."""
        arr = np.asarray(J, dtype=float)
        if self.domain_fn is None:
            return np.ones(arr.shape[:-1], dtype=bool)
        return np.asarray(self.domain_fn(arr), dtype=bool)

    def value(self, J: object) -> Array:
        """f(J), shape ``J.shape[:-1]``."""
        return self.value_fn(self._check(J))

    def grad(self, J: object) -> Array:
        """grad f(J), shape ``J.shape`` (the scalarisation weights)."""
        return self.grad_fn(self._check(J))

    def hessian(self, J: object) -> Array:
        """Hessian of f at J, shape ``J.shape + (M,)`` (analytic when given, else central differences)."""
        arr = self._check(J)
        if self.hessian_fn is not None:
            return self.hessian_fn(arr)
        h = 1e-5
        eye = np.eye(self.n_objectives) * h
        cols = [(self.grad_fn(arr + e) - self.grad_fn(arr - e)) / (2 * h) for e in eye]
        H = np.stack(cols, axis=-1)
        return 0.5 * (H + np.swapaxes(H, -1, -2))


def _sum_last(x: Array) -> Array:
    return x.sum(axis=-1)


def proportional_fairness(n_objectives: int, delta: float = 0.1) -> ConcaveScalarization:
    """``f(J) = sum_m log(J_m + delta)`` (proportional fairness; defined for ``J_m > -delta``)."""
    M = positive_int(n_objectives, "n_objectives")
    d = positive_float(delta, "delta")

    def hess(J: Array) -> Array:
        return -np.einsum("...i,ij->...ij", 1.0 / (J + d) ** 2, np.eye(M))

    return ConcaveScalarization(
        name=f"proportional fairness (delta={d:g})",
        n_objectives=M,
        value_fn=lambda J: _sum_last(np.log(J + d)),
        grad_fn=lambda J: 1.0 / (J + d),
        hessian_fn=hess,
        domain_fn=lambda J: np.all(J > -d, axis=-1),
        second_order_smooth=True,
    )


def exponential_utility(n_objectives: int, kappa: float = 1.0) -> ConcaveScalarization:
    """``f(J) = -sum_m exp(-kappa J_m)`` (risk-averse exponential utility; smooth everywhere)."""
    M = positive_int(n_objectives, "n_objectives")
    k = positive_float(kappa, "kappa")

    def hess(J: Array) -> Array:
        return -np.einsum("...i,ij->...ij", k * k * np.exp(-k * J), np.eye(M))

    return ConcaveScalarization(
        name=f"exponential utility (kappa={k:g})",
        n_objectives=M,
        value_fn=lambda J: -_sum_last(np.exp(-k * J)),
        grad_fn=lambda J: k * np.exp(-k * J),
        hessian_fn=hess,
        second_order_smooth=True,
    )


def kinked_utility(c: object, kappa: float = 1.0, direction: object | None = None) -> ConcaveScalarization:
    """``f(J) = n.J - (kappa/2) sum_m (c_m - J_m)_+^2`` with ``n = direction`` (default all ones).

    grad f = ``n + kappa (c - J)_+`` is Lipschitz but not differentiable at ``J_m = c_m``: the Hessian
    jumps from ``-kappa`` to 0 there. With ``n`` normal to the achievable return set at ``c`` (see
    :func:`paperworks.mlmc_npg.mdp.kinked_problem`) the optimum is ``J* = c``, where the plug-in
    estimate of the weights has a bias of order ``B^{-1/2}`` instead of ``B^{-1}`` (our construction).
    """
    cc = finite_array(c, "c", ndim=1)
    M = cc.size
    n = np.ones(M) if direction is None else finite_array(direction, "direction", shape=(M,))
    if np.any(n < 0):
        raise ValueError(f"direction: expected non-negative entries (a monotone utility), got {n.tolist()}")
    k = positive_float(kappa, "kappa")

    def hess(J: Array) -> Array:
        return -np.einsum("...i,ij->...ij", k * (J < cc).astype(float), np.eye(M))

    return ConcaveScalarization(
        name=f"kinked quadratic (kappa={k:g})",
        n_objectives=M,
        value_fn=lambda J: J @ n - 0.5 * k * _sum_last(np.maximum(cc - J, 0.0) ** 2),
        grad_fn=lambda J: n + k * np.maximum(cc - J, 0.0),
        hessian_fn=hess,
        second_order_smooth=False,
        kink=tuple(float(x) for x in cc),
    )


def linear_utility(weights: object) -> ConcaveScalarization:
    """``f(J) = w.J`` (linear scalarisation, what morl-baselines' scalarised agents optimise)."""
    w = finite_array(weights, "weights", ndim=1)
    M = w.size
    return ConcaveScalarization(
        name="linear",
        n_objectives=M,
        value_fn=lambda J: J @ w,
        grad_fn=lambda J: np.broadcast_to(w, J.shape).copy(),
        hessian_fn=lambda J: np.zeros((*J.shape, M)),
        second_order_smooth=True,
    )


def check_concave(
    f: ConcaveScalarization,
    points: object,
    *,
    n_directions: int = 16,
    rng: object = 0,
    tol: float = 1e-8,
    use_torch: bool | None = None,
) -> None:
    """Random Hessian check of concavity at ``points`` (shape ``(n, M)``); raises :class:`NonConcaveError`.

    At each point, ``d^T H d <= tol |d|^2`` for ``n_directions`` random unit directions ``d``. The
    Hessian comes from ``torch.func.hessian`` of ``f.value`` when the value function accepts tensors
    ("where autograd is available"; ``use_torch=None``: only if torch is already imported, ``True``:
    import it), else from the analytic Hessian or central differences of ``grad``.
    """
    P = f._check(points, "points")
    P = np.atleast_2d(P)
    gen = as_generator(rng)
    H = None
    if use_torch or (use_torch is None and "torch" in sys.modules):
        H = _torch_hessian(f, P)
    if H is None:
        H = f.hessian(P)
    D = gen.standard_normal((P.shape[0], positive_int(n_directions, "n_directions"), f.n_objectives))
    D /= np.linalg.norm(D, axis=-1, keepdims=True)
    curv = np.einsum("pdi,pij,pdj->pd", D, H, D)
    worst = np.unravel_index(np.argmax(curv), curv.shape)
    if curv[worst] > tol:
        raise NonConcaveError(
            f"f: {f.name} is not concave: curvature {curv[worst]:.3g} > 0 at J = {P[worst[0]].tolist()}"
        )


def _torch_hessian(f: ConcaveScalarization, P: Array) -> Array | None:
    try:
        import torch
        from torch.func import hessian, vmap
    except ImportError:
        return None
    try:
        x = torch.as_tensor(P, dtype=torch.float64)
        return vmap(hessian(lambda j: f.value_fn(j)))(x).detach().numpy()
    except Exception:  # numpy-only value function: fall back to the analytic/finite-difference Hessian
        return None
