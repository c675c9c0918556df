"""Structure separation: effective adjacency from a bounded signed magnitude and a structural gate.

    A = (W_f(M) o G(Z)) o (1 - I),     W_f(M) = beta * tanh(M)          (paper, abstract)

``G`` is the structural gate in ``(0, 1)``; the factorisations offered (our reading of "ablations over
factorization"): ``"full"`` (``G = sigmoid(Z)``), ``"lowrank"`` (``G = sigmoid(U V^T + b)``, rank
``r``) and ``"none"``, the unseparated single-matrix baseline ``A = W o (1 - I)`` whose closure acts on
the support proxy ``G = 1 - exp(-(W / w0)^2)``.

One model implementation per SEM, both driven by the same NumPy optimiser, barrier and closure
(:mod:`._fast`):

- :class:`SeparatedLinearSEM`: linear least squares, NumPy forward and hand-written backward;
- :class:`SeparatedMLPSEM`: one MLP per node (as DAGMA's ``DagmaMLP``); the MLP's forward and backward
  run in torch autograd, everything structural (gate, barrier, closure) in the shared NumPy code. Its
  first-layer weight ``theta[j, h, i]`` (input ``i`` to hidden unit ``h`` of node ``j``) is separated as
  ``beta * tanh(M[j, h, i]) * G[i, j]``; its effective adjacency is ``A_ij = ||theta[j, :, i]||_2``.

:func:`logdet_acyclicity` is the torch form of DAGMA's barrier, with the same domain check.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from paperworks.core.validate import (
    as_generator,
    finite_array,
    fraction,
    one_of,
    positive_float,
    positive_int,
)

from ._fast import Cues, Gate, Problem, mmatrix_inverse, structural_terms

__all__ = ["SeparatedLinearSEM", "SeparatedMLPSEM", "logdet_acyclicity"]

FACTORIZATIONS = ("full", "lowrank", "none")


def logdet_acyclicity(A: torch.Tensor, s: float = 1.0) -> torch.Tensor:
    """DAGMA's log-det acyclicity ``h_s(A) = -log det(s I - A o A) + d log s`` (Bello et al. 2022, eq. 4).

    Args:
        A: ``(d, d)`` real tensor (any float dtype, finite).
        s: ``> 0``, the domain parameter.

    Returns:
        a scalar tensor, differentiable in ``A`` inside the domain; ``h = sum_k tr((A o A / s)^k) / k``
        there, zero iff ``A`` is a DAG. ``+inf`` outside the domain, i.e. when ``s I - A o A`` is not a
        non-singular M-matrix (spectral radius of ``A o A`` at least ``s``); the sign of the determinant
        alone does not decide it. The domain check is the one the estimator uses (NumPy, on a detached copy).
    """
    if not isinstance(A, torch.Tensor):
        raise TypeError(f"A: expected a torch.Tensor, got {type(A).__name__}")
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(f"A: expected a non-empty square (d, d) matrix, got shape {tuple(A.shape)}")
    if not A.dtype.is_floating_point:
        raise TypeError(f"A: expected a floating dtype, got {A.dtype}")
    s = positive_float(s, "s")
    d = A.shape[0]
    M = s * torch.eye(d, dtype=A.dtype, device=A.device) - A * A
    M_np = M.detach().cpu().to(torch.float64).numpy()
    if not np.all(np.isfinite(M_np)):
        raise ValueError("A: expected finite values, found NaN or inf")
    if mmatrix_inverse(M_np) is None:  # the estimator's own check
        return torch.full((), math.inf, dtype=A.dtype, device=A.device)
    return -torch.linalg.slogdet(M)[1] + d * math.log(s)


def _common(d, factorization, beta, rank, gate_init, w0, random_state):
    d = positive_int(d, "d")
    if d < 2:
        raise ValueError(f"d: expected an int >= 2 (a graph of at least two variables), got {d}")
    factorization = one_of(factorization, "factorization", FACTORIZATIONS)
    beta = positive_float(beta, "beta")
    rank = positive_int(rank, "rank")
    if rank > d and factorization == "lowrank":
        raise ValueError(f"rank: expected an int in [1, d] = [1, {d}], got {rank}")
    gate_init = fraction(gate_init, "gate_init", open_low=True, open_high=True)
    w0 = positive_float(w0, "w0")
    rng = as_generator(random_state, "random_state")
    return d, factorization, beta, rank, Gate(d, factorization, rank, gate_init, w0), rng


def _check_X(X, d: int, name: str = "X") -> np.ndarray:
    return finite_array(X, name, shape=(None, d))


class SeparatedLinearSEM:
    """Linear SEM ``x_j = sum_i x_i A_ij + noise`` with the structure-separated ``A`` (``(d, d)``).

    Args:
        d: number of variables (``>= 2``).
        factorization: ``"full"``, ``"lowrank"`` or ``"none"`` (single matrix, unseparated).
        beta: bound of the signed magnitude ``beta * tanh(M)``.
        rank: rank of the low-rank gate, in ``[1, d]`` (read only by ``"lowrank"``).
        gate_init: initial gate value in ``(0, 1)``.
        w0: scale of the single-matrix support proxy.
        random_state: seed or ``numpy.random.Generator`` (initialises the low-rank factors).

    ``params``: name -> array (``M`` and the gate's ``Z`` or ``U, V, b``; ``W`` for the single matrix).
    """

    def __init__(
        self,
        d: int,
        factorization: str = "full",
        *,
        beta: float = 2.5,
        rank: int = 4,
        gate_init: float = 0.5,
        w0: float = 0.3,
        random_state=None,
    ) -> None:
        self.d, self.factorization, self.beta, self.rank, self.gate, rng = _common(
            d, factorization, beta, rank, gate_init, w0, random_state
        )
        if self.factorization == "none":
            self.params = {"W": np.zeros((self.d, self.d))}
        else:
            self.params = {"M": np.zeros((self.d, self.d)), **self.gate.init(rng)}

    def adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, G)``: effective adjacency and structural gate, both ``(d, d)`` with zero diagonal."""
        p = self.params
        if self.factorization == "none":
            A = p["W"] * self.gate.off
            return A, self.gate.proxy(A)[0]
        G = self.gate.value(p)
        return self.beta * np.tanh(p["M"]) * G, G

    def predict(self, X) -> np.ndarray:
        """``(n, d) -> (n, d)``: each (centred) column predicted from its parents, ``X A``."""
        return _check_X(X, self.d) @ self.adjacency()[0]

    def problem(self, X, cfg, cues: Cues | None = None) -> Problem:
        """The penalised objective on centred data ``X`` ``(n, d)`` (:class:`~paperworks.smnc_dag.SMNC`)."""
        X = _check_X(X, self.d)
        return _LinearObjective(self, X.T @ X / X.shape[0], cfg, cues)


class _LinearObjective(Problem):
    def __init__(self, model: SeparatedLinearSEM, cov: np.ndarray, cfg, cues: Cues | None) -> None:
        self.model, self.cov, self.cfg, self.cues = model, cov, cfg, cues

    @property
    def params(self):
        return self.model.params

    @params.setter
    def params(self, value):
        self.model.params = value

    def objective_and_grad(self, mu, s):
        m, p = self.model, self.model.params
        A, G = m.adjacency()
        terms = structural_terms(A, G, mu, s, self.cfg, self.cues)
        if terms is None:
            return None
        value, gA, gG = terms
        R = np.eye(m.d) - A
        CR = self.cov @ R
        value += mu * 0.5 * float((R * CR).sum())  # least squares 1/(2n) ||X - X A||^2
        gA = (gA - mu * CR) * m.gate.off
        if m.factorization == "none":
            _, dG = m.gate.proxy(A)
            return value, {"W": (gA + gG * dG) * m.gate.off}
        t = np.tanh(p["M"])
        grads = {"M": gA * m.beta * G * (1 - t * t)}
        grads.update(m.gate.backward(p, G, (gG + gA * m.beta * t) * m.gate.off))
        return value, grads


class SeparatedMLPSEM:
    """Nonlinear SEM: one MLP (one hidden sigmoid layer of ``hidden`` units) per node, as DAGMA's MLP.

    ``x_j = w2_j . sigmoid(theta_j x + b1_j) + b2_j + noise`` with first-layer weights
    ``theta[j, h, i] = beta * tanh(M[j, h, i]) * G[i, j] * (i != j)`` (raw ``M`` for the single
    matrix); effective adjacency ``A_ij = ||theta[j, :, i]||_2``. Args as :class:`SeparatedLinearSEM`,
    plus ``hidden >= 1``. Parameters ``M (d, hidden, d)``, ``b1 (d, hidden)``, ``w2 (d, hidden)``,
    ``b2 (d,)`` and the gate's.
    """

    MLP_PARAMS = ("M", "b1", "w2", "b2")

    def __init__(
        self,
        d: int,
        factorization: str = "full",
        *,
        hidden: int = 10,
        beta: float = 2.5,
        rank: int = 4,
        gate_init: float = 0.5,
        w0: float = 0.3,
        random_state=None,
    ) -> None:
        self.d, self.factorization, self.beta, self.rank, self.gate, rng = _common(
            d, factorization, beta, rank, gate_init, w0, random_state
        )
        self.hidden = h = positive_int(hidden, "hidden")
        d = self.d
        # DAGMA initialises the first layer at zero; a tiny random init breaks hidden-unit symmetry.
        self.params = {
            "M": 1e-2 * rng.standard_normal((d, h, d)),
            "b1": np.zeros((d, h)),
            "w2": rng.standard_normal((d, h)) / math.sqrt(h),
            "b2": np.zeros(d),
            **self.gate.init(rng),
        }

    def _first_layer(self, p: dict[str, torch.Tensor], G: torch.Tensor | None):
        """torch: ``(theta (d, hidden, d), A (d, d))`` from tensor parameters and the gate ``G`` (None:
        single matrix)."""
        off = torch.from_numpy(self.gate.off)
        mask = off.T[:, None, :]  # [j, 1, i]
        if G is None:
            theta = p["M"] * mask
        else:
            theta = self.beta * torch.tanh(p["M"]) * G.T[:, None, :] * mask
        return theta, torch.sqrt((theta**2).sum(1).T + 1e-18) * off

    @staticmethod
    def _mlp(p: dict[str, torch.Tensor], theta: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        d, h, _ = theta.shape
        hid = torch.sigmoid((X @ theta.reshape(d * h, d).T).reshape(-1, d, h) + p["b1"])  # [n, j, h]
        return (hid * p["w2"]).sum(-1) + p["b2"]

    def _tensors(self, grad: bool) -> dict[str, torch.Tensor]:
        return {k: torch.from_numpy(self.params[k]).requires_grad_(grad) for k in self.MLP_PARAMS}

    def _gate_tensor(self) -> torch.Tensor | None:
        return None if self.factorization == "none" else torch.from_numpy(self.gate.value(self.params))

    def adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, G)``, both ``(d, d)`` with zero diagonal."""
        with torch.no_grad():
            G = self._gate_tensor()
            A = self._first_layer(self._tensors(False), G)[1].numpy()
        return A, (self.gate.proxy(A)[0] if G is None else G.numpy())

    def predict(self, X) -> np.ndarray:
        """``(n, d) -> (n, d)``: each (centred) column predicted by its MLP from the others."""
        X = _check_X(X, self.d)
        with torch.no_grad():
            p = self._tensors(False)
            theta, _ = self._first_layer(p, self._gate_tensor())
            return self._mlp(p, theta, torch.from_numpy(X)).numpy()

    def problem(self, X, cfg, cues: Cues | None = None) -> Problem:
        """The penalised objective on centred data ``X`` ``(n, d)``: DAGMA's log-MSE score
        ``d/2 log(||X - X_hat||^2 / n)``, its L2 on the MLP weights, and the shared structural terms."""
        return _MLPObjective(self, torch.from_numpy(_check_X(X, self.d)), cfg, cues)


class _MLPObjective(Problem):
    def __init__(self, model: SeparatedMLPSEM, X: torch.Tensor, cfg, cues: Cues | None) -> None:
        self.model, self.X, self.cfg, self.cues = model, X, cfg, cues

    @property
    def params(self):
        return self.model.params

    @params.setter
    def params(self, value):
        self.model.params = value

    def objective_and_grad(self, mu, s):
        m, cfg = self.model, self.cfg
        n, d = self.X.shape
        t = m._tensors(True)
        sep = m.factorization != "none"
        G_np = m.gate.value(m.params) if sep else None
        G_t = torch.from_numpy(G_np).requires_grad_(True) if sep else None
        theta, A_t = m._first_layer(t, G_t)
        Xhat = m._mlp(t, theta, self.X)
        A = A_t.detach().numpy()
        if not sep:
            G_np, dG = m.gate.proxy(A)
        terms = structural_terms(A, G_np, mu, s, cfg, self.cues)
        if terms is None:
            return None
        value, gA, gG = terms
        if not sep:
            gA = gA + gG * dG
        data = 0.5 * d * torch.log(((Xhat - self.X) ** 2).sum() / n)
        l2 = sum((v**2).sum() for v in t.values())  # DAGMA's Adam weight decay mu * lambda2
        fit = mu * (data + 0.5 * cfg.lambda2 * l2)
        leaves = [*t.values()] + ([G_t] if sep else [])
        grads_t = torch.autograd.grad(fit + (A_t * torch.from_numpy(gA)).sum(), leaves)
        grads = {k: g.numpy() for k, g in zip(m.MLP_PARAMS, grads_t)}
        value += float(fit.detach())
        if sep:
            grads.update(m.gate.backward(m.params, G_np, (grads_t[-1].numpy() + gG) * m.gate.off))
        return value, grads
