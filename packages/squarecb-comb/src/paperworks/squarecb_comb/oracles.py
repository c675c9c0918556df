"""Online regression oracles: predict every arm's reward from its features, learn from played arms.

The paper reduces the bandit to online regression with the squared loss on the played arms
(semi-bandit feedback). An oracle maps a row of arm features ``x`` (shape ``(d,)``) to a predicted
reward; the same function is shared by all arms (arm identity, when it matters, is a feature).

Interface (all vectorised over rows):

- ``predict(X)``: ``X`` shape ``(n, d)`` -> predictions shape ``(n,)``;
- ``update(X, y)``: ``X`` shape ``(k, d)``, ``y`` shape ``(k,)``: one online step on the k played arms.

Three classes as the issue asks: :class:`LinearOracle` (online ridge regression, exact by
Woodbury updates), :class:`RandomFeaturesOracle` (ridge on random Fourier features, an RBF-kernel
approximation, Rahimi and Recht 2007) and :class:`MLPOracle` (a one-hidden-layer network trained
online with Adam).
"""

from __future__ import annotations

import abc

import numpy as np

from paperworks.core.validate import finite_array, nonnegative_int, positive_float, positive_int

__all__ = ["LinearOracle", "MLPOracle", "RandomFeaturesOracle", "RegressionOracle"]


def _check_X(X: np.ndarray, dim: int | None, name: str = "X") -> np.ndarray:
    X = finite_array(X, name, ndim=2)
    if dim is not None and X.shape[1] != dim:
        raise ValueError(f"{name}: expected {dim} features per row, got {X.shape[1]}")
    return X


def _check_y(y: np.ndarray, n: int) -> np.ndarray:
    return finite_array(y, "y", shape=(n,))


class RegressionOracle(abc.ABC):
    """An online regressor ``f(x) -> reward`` shared across arms."""

    dim: int

    @abc.abstractmethod
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted rewards, shape ``(n,)``, for rows ``X`` of shape ``(n, dim)``."""

    @abc.abstractmethod
    def update(self, X: np.ndarray, y: np.ndarray) -> None:
        """One online step on rows ``X`` (shape ``(k, dim)``) with targets ``y`` (shape ``(k,)``)."""


class LinearOracle(RegressionOracle):
    """Online ridge regression ``f(x) = <theta, x>`` with ``V = reg * I + sum x x^T``.

    ``V^{-1}`` is kept and updated by the Woodbury identity on each batch of ``k`` played arms
    (``O(k d^2 + k^3)``), so ``theta_`` is the exact ridge solution after every update.

    Attributes:
        theta_: shape ``(dim,)``; V_inv_: shape ``(dim, dim)``; b_: shape ``(dim,)``; n_updates_.
    """

    def __init__(self, dim: int, reg: float = 1.0) -> None:
        self.dim = positive_int(dim, "dim")
        self.reg = positive_float(reg, "reg")
        self.V_inv_ = np.eye(self.dim) / self.reg
        self.b_ = np.zeros(self.dim)
        self.theta_ = np.zeros(self.dim)
        self.n_updates_ = 0

    def predict(self, X: np.ndarray) -> np.ndarray:
        return _check_X(X, self.dim) @ self.theta_

    def variances(self, X: np.ndarray) -> np.ndarray:
        """``x^T V^{-1} x`` per row, shape ``(n,)`` (used by the UCB and Thompson baselines)."""
        X = _check_X(X, self.dim)
        return ((X @ self.V_inv_) * X).sum(axis=1)

    def update(self, X: np.ndarray, y: np.ndarray) -> None:
        X = _check_X(X, self.dim)
        y = _check_y(y, X.shape[0])
        VX = self.V_inv_ @ X.T  # (d, k)
        K = np.eye(X.shape[0]) + X @ VX
        if X.shape[0] == 1:  # Sherman-Morrison
            self.V_inv_ = self.V_inv_ - np.outer(VX[:, 0], VX[:, 0]) / K[0, 0]
        else:
            self.V_inv_ = self.V_inv_ - VX @ np.linalg.solve(K, VX.T)
        self.n_updates_ += 1
        if self.n_updates_ % 64 == 0:  # keep V^{-1} symmetric against rounding drift
            self.V_inv_ = 0.5 * (self.V_inv_ + self.V_inv_.T)
        self.b_ = self.b_ + X.T @ y
        self.theta_ = self.V_inv_ @ self.b_


class RandomFeaturesOracle(RegressionOracle):
    """Ridge regression on random Fourier features of an RBF kernel (Rahimi and Recht, 2007).

    ``phi(x) = sqrt(2 / D) cos(W x + c)``, ``W_ij ~ N(0, 1 / bandwidth^2)``, ``c ~ U[0, 2 pi)``, so
    ``<phi(x), phi(x')> ~ exp(-|x - x'|^2 / (2 bandwidth^2))``; a :class:`LinearOracle` on ``phi``.
    """

    def __init__(
        self, dim: int, n_features: int = 128, bandwidth: float = 1.0, reg: float = 1.0, seed: int = 0
    ) -> None:
        dim = positive_int(dim, "dim")
        n_features = positive_int(n_features, "n_features")
        bandwidth = positive_float(bandwidth, "bandwidth")
        positive_float(reg, "reg")
        rng = np.random.default_rng(nonnegative_int(seed, "seed"))
        self.dim = dim
        self.W_ = rng.normal(0.0, 1.0 / bandwidth, size=(self.dim, n_features))
        self.c_ = rng.uniform(0.0, 2 * np.pi, size=n_features)
        self.scale_ = np.sqrt(2.0 / n_features)
        self.linear_ = LinearOracle(int(n_features), reg=reg)

    def features(self, X: np.ndarray) -> np.ndarray:
        """Random features, shape ``(n, n_features)``."""
        X = _check_X(X, self.dim)
        return self.scale_ * np.cos(X @ self.W_ + self.c_)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.features(X) @ self.linear_.theta_

    def update(self, X: np.ndarray, y: np.ndarray) -> None:
        X = _check_X(X, self.dim)
        self.linear_.update(self.features(X), _check_y(y, X.shape[0]))


class MLPOracle(RegressionOracle):
    """A one-hidden-layer ReLU network ``f(x) = w2 . relu(W1 x + b1) + b2`` trained online.

    Each :meth:`update` takes ``steps`` Adam steps on the squared loss of the played arms' batch.
    Small and NumPy-only, so it runs inside the per-round loop without a deep-learning framework.
    """

    def __init__(self, dim: int, hidden: int = 32, lr: float = 0.01, steps: int = 1, seed: int = 0) -> None:
        dim, hidden = positive_int(dim, "dim"), positive_int(hidden, "hidden")
        lr, steps = positive_float(lr, "lr"), positive_int(steps, "steps")
        rng = np.random.default_rng(nonnegative_int(seed, "seed"))
        self.dim, self.lr, self.steps = int(dim), float(lr), int(steps)
        self.params_ = {
            "W1": rng.normal(0.0, np.sqrt(2.0 / dim), size=(self.dim, hidden)),
            "b1": np.zeros(hidden),
            "w2": rng.normal(0.0, np.sqrt(1.0 / hidden), size=hidden),
            "b2": np.zeros(()),
        }
        self._m = {k: np.zeros_like(v) for k, v in self.params_.items()}
        self._v = {k: np.zeros_like(v) for k, v in self.params_.items()}
        self.n_updates_ = 0

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = _check_X(X, self.dim)
        p = self.params_
        return np.maximum(X @ p["W1"] + p["b1"], 0.0) @ p["w2"] + p["b2"]

    def update(self, X: np.ndarray, y: np.ndarray) -> None:
        X = _check_X(X, self.dim)
        y = _check_y(y, X.shape[0])
        p = self.params_
        b1, b2 = 0.9, 0.999
        for _ in range(self.steps):
            h_pre = X @ p["W1"] + p["b1"]
            h = np.maximum(h_pre, 0.0)
            err = h @ p["w2"] + p["b2"] - y  # d(0.5 * mean sq) / d pred, times n
            n = X.shape[0]
            g_h = np.outer(err, p["w2"]) * (h_pre > 0)
            grads = {
                "W1": X.T @ g_h / n,
                "b1": g_h.sum(0) / n,
                "w2": h.T @ err / n,
                "b2": np.asarray(err.mean()),
            }
            self.n_updates_ += 1
            t = self.n_updates_
            for k, g in grads.items():
                self._m[k] = b1 * self._m[k] + (1 - b1) * g
                self._v[k] = b2 * self._v[k] + (1 - b2) * g * g
                mhat = self._m[k] / (1 - b1**t)
                vhat = self._v[k] / (1 - b2**t)
                p[k] = p[k] - self.lr * mhat / (np.sqrt(vhat) + 1e-8)
