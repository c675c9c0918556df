"""NumPy core of the estimator: the barrier and its domain, the closure losses, the gate, the optimiser.

Every model (:class:`~paperworks.smnc_dag.structure.SeparatedLinearSEM`, hand-differentiated NumPy;
:class:`~paperworks.smnc_dag.structure.SeparatedMLPSEM`, torch autograd for the MLP only) goes through
the same pieces here:

- :func:`mmatrix_inverse`: the one domain check of DAGMA's log-det barrier (``s I - A o A`` a
  non-singular M-matrix), shared with the torch :func:`~paperworks.smnc_dag.logdet_acyclicity`;
- :func:`structural_terms`: barrier, l1, gate penalty and the closure losses on ``(A, G)`` with their
  gradients (the closure and relation losses are weighted by the central path's ``mu`` like the data
  fit, issue 31);
- :class:`Gate`: the structural gate ``G`` of each factorisation and its backward pass;
- :func:`central_path`: DAGMA's path-following schedule with its published retry (halve the step and
  raise ``s`` by 0.1 when a stage leaves the domain), Adam inside each stage.

Hand-written gradients avoid autograd's per-operation overhead on thousands of small ``d x d`` steps
(DAGMA's linear solver does the same); they are tested against ``torch.autograd``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

_TINY = 1e-30
# entries of (sI - A o A)^{-1} below -_NEG_TOL * max|inverse| mean the matrix is not an M-matrix
_NEG_TOL = 1e-10


def n_scales(d: int) -> int:
    """Dyadic scales ``K + 1`` so that ``2^K >= d`` (every simple cycle is covered)."""
    return max(1, math.ceil(math.log2(d)) + 1) if d > 1 else 1


def mmatrix_inverse(M: np.ndarray) -> tuple[float, np.ndarray] | None:
    """``(log det M, M^{-1})`` when the Z-matrix ``M = s I - A o A`` is a non-singular M-matrix, else None.

    A Z-matrix (non-positive off-diagonal) is a non-singular M-matrix iff it is invertible with an
    entrywise non-negative inverse, iff the spectral radius of ``A o A`` is below ``s`` (Berman and
    Plemmons 1994, ch. 6, conditions F15 and N38). The sign of the determinant alone does not decide it:
    two disjoint 2-cycles of weight 1.2 give ``det(I - A o A) = (1 - 1.2^4)^2 > 0`` outside the domain.
    """
    sign, logdet = np.linalg.slogdet(M)
    if not sign > 0:
        return None
    try:
        inv = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(inv)):
        return None
    if inv.min() < -_NEG_TOL * max(1.0, float(np.abs(inv).max())):
        return None
    return float(logdet), inv


def logdet_h_and_grad(A: np.ndarray, s: float) -> tuple[float, np.ndarray] | None:
    """DAGMA's ``h_s(A) = -log det(sI - A o A) + d log s`` and its gradient ``2 A o (sI - A o A)^{-T}``.

    ``None`` outside the M-matrix domain (:func:`mmatrix_inverse`).
    """
    d = A.shape[0]
    out = mmatrix_inverse(s * np.eye(d) - A * A)
    if out is None:
        return None
    logdet, inv = out
    return -logdet + d * math.log(s), 2 * A * inv.T


def _walk_sums(G: np.ndarray, scales: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    Rs, Ps = [G], [G]
    for _ in range(scales - 1):
        R, P = Rs[-1], Ps[-1]
        Rs.append(R + P @ R)
        Ps.append(P @ P)
    return Rs, Ps


def _readout(
    R: np.ndarray, normalize: bool, tau: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Soft readout over scales of walk sums ``R`` ``(K, ...)``: (logits, d logits / d l_k, budgets,
    clamped)."""
    scales = R.shape[0]
    clamped = R < _TINY
    logR = np.log(np.where(clamped, _TINY, R))
    budgets = 2.0 ** np.arange(scales) if normalize else np.ones(scales)
    z = logR / (budgets.reshape((-1,) + (1,) * (R.ndim - 1)) * tau)
    zmax = z.max(0)
    ez = np.exp(z - zmax)
    sez = ez.sum(0)
    logits = tau * (zmax + np.log(sez)) - tau * math.log(scales)
    return logits, ez / sez, budgets, clamped


def closure_logits(G: np.ndarray, scales: int, *, normalize: bool, tau: float) -> np.ndarray:
    """``(d, d)`` read-out logits of ``G`` (NumPy twin of :class:`~paperworks.smnc_dag.SMNCClosure`)."""
    Rs, _ = _walk_sums(G, scales)
    return _readout(np.stack(Rs), normalize, tau)[0]


def closure_loss_and_grad(
    G: np.ndarray,
    scales: int,
    *,
    normalize: bool,
    tau: float,
    gamma_cycle: float,
    gamma_relation: float = 0.0,
    positive: np.ndarray | None = None,
    negative: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """``gamma_cycle * cycle_loss + gamma_relation * relation_loss`` of the read-out logits of ``G``.

    Returns ``(loss, dloss/dG)``; ``G`` is ``(d, d)`` with zero diagonal. The forward pass is the
    doubling recurrence of :func:`~paperworks.smnc_dag.dyadic_walk_sums`, the backward pass reverses
    it; the element-wise readout runs only on the entries a loss reads (the diagonal and the cued pairs).
    """
    d = G.shape[0]
    Rs, Ps = _walk_sums(G, scales)
    use_pos = gamma_relation > 0 and positive is not None and positive.any()
    use_neg = gamma_relation > 0 and negative is not None and negative.any()
    sel = np.eye(d, dtype=bool)
    if use_pos:
        sel = sel | positive
    if use_neg:
        sel = sel | negative
    rows, cols = np.nonzero(sel)
    R = np.stack([r[rows, cols] for r in Rs])  # (K, m) selected walk sums
    logits, wk, budgets, clamped = _readout(R, normalize, tau)

    gl = np.zeros(rows.size)
    on_diag = rows == cols
    e_diag = np.exp(logits[on_diag])
    loss = gamma_cycle * float(e_diag.mean())
    gl[on_diag] += gamma_cycle * e_diag / d
    if use_pos:
        mask = positive[rows, cols]
        e = np.exp(logits[mask])
        rho = -np.expm1(-e)
        loss += gamma_relation * float(-np.log(np.maximum(rho, 1e-12)).mean())
        gl[mask] += gamma_relation * (-e / np.expm1(e)) / mask.sum()
    if use_neg:
        mask = negative[rows, cols]
        e = np.exp(logits[mask])
        loss += gamma_relation * float(e.mean())
        gl[mask] += gamma_relation * e / mask.sum()

    g_sel = np.where(clamped, 0.0, wk * gl[None] / (budgets[:, None] * np.where(clamped, 1.0, R)))
    gR = np.zeros((scales, d, d))
    gR[:, rows, cols] = g_sel
    # reverse the doubling recurrence R_{k+1} = R_k + P_k R_k, P_{k+1} = P_k P_k
    Rbar = gR[-1]
    Pbar = np.zeros((d, d))
    for k in range(scales - 2, -1, -1):
        P, Rk = Ps[k], Rs[k]
        newP = Rbar @ Rk.T + Pbar @ P.T + P.T @ Pbar
        Rbar = gR[k] + Rbar + P.T @ Rbar
        Pbar = newP
    return loss, Rbar + Pbar


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class Gate:
    """The structural gate ``G`` (``(d, d)``, zero diagonal) of one factorisation, with its backward pass.

    - ``"full"``: ``G = sigmoid(Z)``, parameter ``Z`` ``(d, d)``;
    - ``"lowrank"``: ``G = sigmoid(U V^T + b)``, parameters ``U, V`` ``(d, r)`` and a scalar ``b``;
    - ``"none"`` (single matrix): no parameter; ``G = 1 - exp(-(A / w0)^2)`` is a support proxy of the
      adjacency itself (:meth:`proxy`).
    """

    def __init__(self, d: int, factorization: str, rank: int, gate_init: float, w0: float) -> None:
        self.d, self.factorization, self.rank, self.w0 = d, factorization, rank, w0
        self.z0 = math.log(gate_init / (1 - gate_init))
        self.off = 1.0 - np.eye(d)

    def init(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        d = self.d
        if self.factorization == "full":
            return {"Z": np.full((d, d), self.z0)}
        if self.factorization == "lowrank":
            return {
                "U": 0.1 * rng.standard_normal((d, self.rank)),
                "V": 0.1 * rng.standard_normal((d, self.rank)),
                "b": np.array(self.z0),
            }
        return {}

    def value(self, p: dict[str, np.ndarray]) -> np.ndarray:
        Z = p["Z"] if self.factorization == "full" else p["U"] @ p["V"].T + p["b"]
        return sigmoid(Z) * self.off

    def backward(self, p: dict[str, np.ndarray], G: np.ndarray, gG: np.ndarray) -> dict[str, np.ndarray]:
        gZ = gG * G * (1 - G)  # G is masked: zero on the diagonal
        if self.factorization == "full":
            return {"Z": gZ}
        return {"U": gZ @ p["V"], "V": gZ.T @ p["U"], "b": np.array(gZ.sum())}

    def proxy(self, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(G, dG/dA)`` of the single-matrix support proxy ``1 - exp(-(A / w0)^2)``."""
        e = np.exp(-((A / self.w0) ** 2))
        return (1 - e) * self.off, e * 2 * A / self.w0**2 * self.off


@dataclass(frozen=True)
class Cues:
    """Bool masks ``(d, d)`` of the relation cues: reachable (``positive``) and unreachable pairs."""

    positive: np.ndarray
    negative: np.ndarray

    @property
    def empty(self) -> bool:
        return not (self.positive.any() or self.negative.any())


def structural_terms(
    A: np.ndarray, G: np.ndarray, mu: float, s: float, cfg, cues: Cues | None
) -> tuple[float, np.ndarray, np.ndarray] | None:
    """Everything of the objective but the data fit, with gradients w.r.t. ``A`` and ``G``:

        mu * (lambda1 ||A||_1 + lambda_gate mean(G) + gamma_cycle cycle(l) + gamma_relation rel(l))
            + h_s(A)

    (``l``: SMNC read-out logits of ``G``; no closure term with ``cfg.closure == "off"``). ``None``
    outside the barrier's domain. ``cfg``: an :class:`~paperworks.smnc_dag.SMNCConfig`.
    """
    d = A.shape[0]
    hg = logdet_h_and_grad(A, s)
    if hg is None:
        return None
    h, gA = hg
    value = h + mu * (cfg.lambda1 * float(np.abs(A).sum()) + cfg.lambda_gate * float(G.mean()))
    gA = gA + mu * cfg.lambda1 * np.sign(A)
    gG = np.full((d, d), mu * cfg.lambda_gate / (d * d))
    if cfg.closure != "off":
        closs, gGc = closure_loss_and_grad(
            G,
            n_scales(d),
            normalize=cfg.closure == "smnc",
            tau=cfg.tau,
            gamma_cycle=cfg.gamma_cycle,
            gamma_relation=cfg.gamma_relation if cues is not None else 0.0,
            positive=None if cues is None else cues.positive,
            negative=None if cues is None else cues.negative,
        )
        value += mu * closs
        gG = gG + mu * gGc
    return value, gA, gG


class Problem(Protocol):
    """What :func:`central_path` optimises: ``params`` (name -> array) and
    ``objective_and_grad(mu, s) -> (value, grads) | None`` (``None``: outside the barrier's domain)."""

    params: dict[str, np.ndarray]

    def objective_and_grad(self, mu: float, s: float) -> tuple[float, dict[str, np.ndarray]] | None: ...


def _copy(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.array(v, copy=True) for k, v in p.items()}


def minimize_stage(
    problem: Problem, mu: float, s: float, iters: int, lr: float, tol: float, checkpoint: int = 100
) -> tuple[bool, int]:
    """Adam (betas 0.99, 0.999, as DAGMA) on one central-path stage, from ``problem.params``.

    DAGMA's rule (``dagma.linear.DagmaLinear.minimize``): a step that leaves the domain fails the stage
    when it is the first step or ``s <= 0.9``; otherwise the step is undone and retried with half the
    step size (the stage succeeds as it is once the step falls below 1e-16). Stops early when the
    objective moves by less than ``tol`` (relative) between two checkpoints. Returns
    ``(success, iterations run)``.
    """
    b1, b2 = 0.99, 0.999
    m = {k: np.zeros_like(v) for k, v in problem.params.items()}
    v = {k: np.zeros_like(x) for k, x in problem.params.items()}
    out = problem.objective_and_grad(mu, s)
    if out is None:
        return False, 0
    prev = math.inf
    for it in range(1, iters + 1):
        grad = out[1]
        old = _copy(problem.params)
        for k in problem.params:
            m[k] = b1 * m[k] + (1 - b1) * grad[k]
            v[k] = b2 * v[k] + (1 - b2) * grad[k] ** 2
        step = {k: (m[k] / (1 - b1**it)) / (np.sqrt(v[k] / (1 - b2**it)) + 1e-8) for k in m}
        while True:
            for k in problem.params:
                problem.params[k] = old[k] - lr * step[k]
            out = problem.objective_and_grad(mu, s)
            if out is not None:
                break
            if it == 1 or s <= 0.9:
                problem.params.update(old)
                return False, it
            lr *= 0.5
            if lr <= 1e-16:
                problem.params.update(old)
                return True, it
        if it % checkpoint == 0:
            cur = out[0]
            if math.isfinite(prev) and abs(prev - cur) <= tol * max(abs(prev), 1e-12):
                return True, it
            prev = cur
    return True, iters


def central_path(
    problem: Problem,
    *,
    T: int,
    mu_init: float,
    mu_factor: float,
    s: tuple[float, ...],
    warm_iter: int,
    max_iter: int,
    lr: float,
    tol: float,
    max_retries: int = 30,
    on_stage: Callable[[int], None] | None = None,
) -> tuple[int, list[float]]:
    """DAGMA's path following (Bello et al. 2022, Alg. 1, and ``DagmaLinear.fit``): ``T`` stages with
    ``mu`` shrinking by ``mu_factor``; a failed stage restarts from its initial point with half the
    step size and ``s`` raised by 0.1, as published. Returns ``(total iterations, s used per stage)``."""
    s_list = list(s) + [s[-1]] * max(0, T - len(s))
    mu, total, used = mu_init, 0, []
    for t in range(T):
        iters = max_iter if t == T - 1 else warm_iter
        start = _copy(problem.params)
        lr_t, s_t = lr, s_list[t]
        for _ in range(max_retries + 1):
            ok, n = minimize_stage(problem, mu, s_t, iters, lr_t, tol)
            total += n
            if ok:
                break
            problem.params = _copy(start)
            lr_t *= 0.5
            s_t += 0.1
        else:
            raise RuntimeError(
                f"central path: stage {t + 1} left the barrier's domain after {max_retries} retries "
                f"(s raised to {s_t:.2f}, step {lr_t:.3g}); try a smaller lr"
            )
        used.append(s_t)
        if on_stage is not None:
            on_stage(t)
        mu *= mu_factor
    return total, used
