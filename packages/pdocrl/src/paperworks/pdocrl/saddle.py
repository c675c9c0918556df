"""The spurious-saddle example: realising an optimal ``Q*`` is not enough; the stronger class is.

States ``0`` (start), ``1`` (absorbing). In state 0 every action moves to state 1 with reward 0; in state 1
action 0 earns reward 1, actions 1, 2 earn 0, and every action stays. A cost (1 on state 1, action 1, budget
0.5) never binds. ``J* = gamma``; a policy that is not optimal in state 1 loses at least ``Delta = gamma``.

Restricted classes that realise an optimal solution: ``Q = {Q*}`` and ``W = [0, B]`` (which holds
``w* = d*/mu_D``). Every residual ``r + gamma Q*(s', pi) - Q*(s, a)`` is ``<= 0``, so ``w = 0`` is a best
response for any ``pi``, and then ``L(pi, 0, Q*) = (1 - gamma) Q*(0, pi) = J*`` for every ``pi``: the point
``(pi, w = 0, Q*)`` with ``pi`` arbitrary in state 1 is a saddle of the restricted Lagrangian, although
``pi`` may be far from optimal. With the tabular box (every ``Q_pi`` realised: the stronger condition) every
saddle is optimal.
"""

from __future__ import annotations

import numpy as np

from .cmdp import TabularCMDP, check_policy
from .data import DatasetCounts
from .lagrangian import LinearQClass, lagrangian_gradients

__all__ = ["gradient_saddle_solver", "naive_q_class", "restricted_best_response_value", "spurious_example"]


def spurious_example(gamma: float = 0.9) -> TabularCMDP:
    """The CMDP of the module docstring (2 states, 3 actions)."""
    P = np.zeros((2, 3, 2))
    P[:, :, 1] = 1.0
    r = np.zeros((2, 3))
    r[1, 0] = 1.0
    c = np.zeros((1, 2, 3))
    c[0, 1, 1] = 1.0
    return TabularCMDP(P, r, c, np.array([0.5]), np.array([1.0, 0.0]), gamma)


def naive_q_class(q_star: np.ndarray) -> LinearQClass:
    """The singleton ``{Q*}`` as a linear class (one feature, ``theta = 1``)."""
    q = np.asarray(q_star, dtype=float)
    return LinearQClass(q.reshape(-1, 1), np.ones(1), np.ones(1))


def restricted_best_response_value(
    counts: DatasetCounts,
    policy: np.ndarray,
    q: np.ndarray,
    *,
    w_bound: float,
    initial: np.ndarray,
    gamma: float,
    budgets: np.ndarray,
) -> float:
    """``max_{0 <= w <= w_bound} L(pi, w, Q, lam = 0)`` for a fixed ``Q`` (linear in ``w``: closed form)."""
    S, A = q.shape
    pi = check_policy(policy, S, A)
    zero = np.zeros_like(counts.reward)
    base = (1 - gamma) * float(initial @ (pi * q).sum(axis=1))
    grads = lagrangian_gradients(
        counts, pi, zero, q, np.zeros(len(budgets)), initial=initial, gamma=gamma, budgets=budgets
    )
    coef = np.where(counts.supported, grads["w"], 0.0)  # dL/dw: linear, so best w sits at a box corner
    return base + w_bound * float(np.maximum(coef, 0.0).sum())


def gradient_saddle_solver(
    counts: DatasetCounts,
    q_class: LinearQClass,
    *,
    initial: np.ndarray,
    gamma: float,
    budgets: np.ndarray,
    w_bound: float,
    lambda_bound: float,
    iterations: int = 2000,
    lr: float = 1.0,
) -> np.ndarray:
    """The naive restricted saddle-point solver: simultaneous gradient descent-ascent on (eq. L) with its
    exact partial derivatives (mirror ascent for ``pi`` with ``dL/dpi = inflow(s) Q(s, a)``, projected
    ascent for ``w`` from ``w = 1``, projected descent for ``theta`` and ``lam``), one step size ``lr`` for
    all (fixed before any run). Returns the (S, A) last policy."""
    S, A = counts.n_sa.shape
    phi, lo, hi = q_class.features, q_class.lo, q_class.hi
    pi = np.full((S, A), 1.0 / A)
    w = np.where(counts.supported, 1.0, 0.0)
    theta = (lo + hi) / 2
    lam = np.zeros(len(budgets))
    for _ in range(iterations):
        q = (phi @ theta).reshape(S, A)
        g = lagrangian_gradients(counts, pi, w, q, lam, initial=initial, gamma=gamma, budgets=budgets)
        theta = np.clip(theta - lr * (phi.T @ g["q"].ravel()), lo, hi)
        lam = np.clip(lam - lr * g["lam"], 0.0, lambda_bound)
        w = np.where(
            counts.supported,
            np.clip(w + lr * g["w"] / np.maximum(counts.mu, 1e-12) * counts.mu.max(), 0.0, w_bound),
            0.0,
        )
        logits = np.log(np.maximum(pi, 1e-300)) + lr * (1 - gamma) * g["policy"]
        pi = np.exp(logits - logits.max(axis=1, keepdims=True))
        pi /= pi.sum(axis=1, keepdims=True)
    return pi
