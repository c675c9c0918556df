"""Softmax policies and their natural gradient: the tabular closed form and compatible least squares.

Tabular softmax ``pi_theta(a|s) = exp(theta[s, a]) / sum_b exp(theta[s, b])`` with ``theta`` of shape
``(S, A)``. For a scalar reward ``r_w = sum_m w_m r_m`` (the scalarisation weights frozen at their
current estimate) the policy gradient is (policy gradient theorem)

    grad_theta J_w[s, a] = d(s) pi(a|s) A_w(s, a) / (1 - gamma),

and the Fisher information ``F = E_{s ~ d, a ~ pi}[g g^T]`` with ``g = grad log pi(a|s)``. The natural
gradient ``F^+ grad J_w`` is ``A_w / (1 - gamma)`` up to a per-state constant (a null direction of F), so
the NPG step is ``theta += eta / (1 - gamma) * sum_m w_m A_m`` (Kakade 2001; Agarwal et al. 2021,
Lemma 15), :func:`npg_step`. For a policy that is not tabular, or advantages known only through
samples, :func:`compatible_npg_direction` solves the compatible function approximation least squares
``min_u E[(u . phi(s, a) - A_hat(s, a))^2]`` with ``phi = grad log pi`` (Kakade 2001).
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array, nonnegative_float

__all__ = [
    "compatible_npg_direction",
    "fisher_matrix",
    "log_policy_features",
    "npg_step",
    "policy_gradient",
    "softmax_policy",
]


def softmax_policy(theta: object) -> np.ndarray:
    """``pi (S, A)`` from logits ``theta (S, A)`` (row-wise, max-shifted softmax)."""
    t = finite_array(theta, "theta", ndim=2)
    z = np.exp(t - t.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def log_policy_features(pi: np.ndarray, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``phi = grad_theta log pi(a|s)`` flattened over ``theta``: shape ``(n, S * A)`` for ``n`` pairs."""
    S, A = pi.shape
    n = states.size
    phi = np.zeros((n, S, A))
    phi[np.arange(n), states, :] = -pi[states]
    phi[np.arange(n), states, actions] += 1.0
    return phi.reshape(n, S * A)


def policy_gradient(pi: np.ndarray, occupancy: np.ndarray, advantage: np.ndarray, gamma: float) -> np.ndarray:
    """Exact ``grad_theta J (S, A)`` of a softmax policy for one scalar reward with advantages ``(S, A)``."""
    return occupancy[:, None] * pi * advantage / (1.0 - gamma)


def fisher_matrix(pi: np.ndarray, occupancy: np.ndarray) -> np.ndarray:
    """Exact Fisher information ``(S A, S A)`` of the tabular softmax under ``s ~ d, a ~ pi``."""
    S, A = pi.shape
    F = np.zeros((S, A, S, A))
    for s in range(S):
        p = pi[s]
        F[s, :, s, :] = occupancy[s] * (np.diag(p) - np.outer(p, p))
    return F.reshape(S * A, S * A)


def npg_step(theta: object, weights: object, advantages: object, eta: float, gamma: float) -> np.ndarray:
    """One tabular NPG step: ``theta + eta / (1 - gamma) * sum_m w_m A_m`` (new array, ``(S, A)``).

    ``weights (M,)``; ``advantages (S, A, M)`` (exact or estimated), ``eta >= 0``.
    """
    t = finite_array(theta, "theta", ndim=2)
    A = finite_array(advantages, "advantages", ndim=3)
    if A.shape[:2] != t.shape:
        raise ValueError(f"advantages: expected shape {(*t.shape, A.shape[-1])}, got {A.shape}")
    w = finite_array(weights, "weights", shape=(A.shape[2],))
    return t + nonnegative_float(eta, "eta") / (1.0 - gamma) * (A @ w)


def compatible_npg_direction(features: object, targets: object, ridge: float = 1e-3) -> np.ndarray:
    """Least squares ``argmin_u mean((features @ u - targets)^2) + ridge |u|^2``: the sample-based NPG
    direction with compatible function approximation (``features (n, d)``, ``targets (n,)`` -> ``(d,)``).

    With ``features = grad log pi`` and ``targets`` sampled advantages of ``r_w`` it estimates
    ``F^+ grad J_w (1 - gamma)``, i.e. the direction whose tabular closed form is ``A_w``.
    """
    X = finite_array(features, "features", ndim=2)
    y = finite_array(targets, "targets", shape=(X.shape[0],))
    lam = nonnegative_float(ridge, "ridge")
    G = X.T @ X / X.shape[0] + lam * np.eye(X.shape[1])
    return np.linalg.solve(G, X.T @ y / X.shape[0])
