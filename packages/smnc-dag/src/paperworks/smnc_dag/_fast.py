"""NumPy forward/backward of the SMNC closure losses and the linear objective (hot path).

The linear estimator runs thousands of small ``d x d`` steps; hand-written gradients in NumPy avoid
the per-operation overhead of autograd (DAGMA's linear solver does the same). Every gradient here is
tested against ``torch.autograd`` on the module versions in :mod:`.closure` and :mod:`.relations`.
"""

from __future__ import annotations

import math

import numpy as np

_TINY = 1e-30


def closure_loss_and_grad(
    G: np.ndarray,
    n_scales: int,
    *,
    normalize: bool,
    tau: float,
    gamma_cycle: float,
    gamma_relation: float = 0.0,
    positive: np.ndarray | None = None,
    negative: np.ndarray | None = None,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Loss ``gamma_cycle * cycle_loss + gamma_relation * relation_loss`` of the read-out logits of ``G``.

    Returns ``(loss, dloss/dG, readout logits)``; ``G`` is ``(d, d)`` with zero diagonal.
    """
    d = G.shape[0]
    Rs, Ps = [G], [G]
    for _ in range(n_scales - 1):
        R, P = Rs[-1], Ps[-1]
        Rs.append(R + P @ R)
        Ps.append(P @ P)
    R = np.stack(Rs)
    clamped = R < _TINY
    logR = np.log(np.where(clamped, _TINY, R))
    budgets = 2.0 ** np.arange(n_scales) if normalize else np.ones(n_scales)
    lk = logR / budgets[:, None, None]
    z = lk / tau
    zmax = z.max(0)
    ez = np.exp(z - zmax)
    sez = ez.sum(0)
    logits = tau * (zmax + np.log(sez)) - tau * math.log(n_scales)
    wk = ez / sez  # d logits / d l_k

    gl = np.zeros((d, d))
    diag = np.exp(np.diagonal(logits))
    loss = gamma_cycle * float(diag.mean())
    gl[np.diag_indices(d)] += gamma_cycle * diag / d
    if gamma_relation > 0 and positive is not None and positive.any():
        e = np.exp(logits[positive])
        rho = -np.expm1(-e)
        loss += gamma_relation * float(-np.log(np.maximum(rho, 1e-12)).mean())
        gl[positive] += gamma_relation * (-e / np.expm1(e)) / positive.sum()
    if gamma_relation > 0 and negative is not None and negative.any():
        e = np.exp(logits[negative])
        loss += gamma_relation * float(e.mean())
        gl[negative] += gamma_relation * e / negative.sum()

    gR = np.where(clamped, 0.0, wk * gl[None] / (budgets[:, None, None] * np.where(clamped, 1.0, R)))
    # reverse the doubling recurrence R_{k+1} = R_k + P_k R_k, P_{k+1} = P_k P_k
    Rbar = gR[-1].copy()
    Pbar = np.zeros((d, d))
    for k in range(n_scales - 2, -1, -1):
        P, Rk = Ps[k], Rs[k]
        newP = Rbar @ Rk.T + Pbar @ P.T + P.T @ Pbar
        Rbar = gR[k] + Rbar + P.T @ Rbar
        Pbar = newP
    return loss, Rbar + Pbar, logits


def logdet_h_and_grad(A: np.ndarray, s: float) -> tuple[float, np.ndarray] | None:
    """DAGMA's ``h_s(A)`` and gradient ``2 A o (sI - A o A)^{-T}``; ``None`` outside the M-matrix domain."""
    d = A.shape[0]
    Mm = s * np.eye(d) - A * A
    sign, logdet = np.linalg.slogdet(Mm)
    if sign <= 0:
        return None
    inv = np.linalg.inv(Mm)
    if np.any(inv < -1e-12):
        return None
    return float(-logdet + d * math.log(s)), 2 * A * inv.T


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class LinearProblem:
    """Parameters, forward and hand-written gradient of the separated linear objective.

    Parameters (dict of arrays): ``M`` and ``Z`` (full gate), ``M``, ``U``, ``V``, ``b`` (low-rank gate)
    or ``W`` (single matrix, unseparated, support proxy ``1 - exp(-(W / w0)^2)``).
    """

    def __init__(self, cov, cfg, positive, negative, rng: np.random.Generator) -> None:
        self.cov, self.cfg = cov, cfg
        d = cov.shape[0]
        self.d = d
        self.off = 1.0 - np.eye(d)
        self.pos, self.neg = positive, negative
        self.n_scales = max(1, math.ceil(math.log2(d)) + 1)
        z0 = math.log(cfg.gate_init / (1 - cfg.gate_init))
        if cfg.factorization == "full":
            self.params = {"M": np.zeros((d, d)), "Z": np.full((d, d), z0)}
        elif cfg.factorization == "lowrank":
            self.params = {
                "M": np.zeros((d, d)),
                "U": 0.1 * rng.standard_normal((d, cfg.rank)),
                "V": 0.1 * rng.standard_normal((d, cfg.rank)),
                "b": np.array(z0),
            }
        else:
            self.params = {"W": np.zeros((d, d))}

    def adjacency(self, p=None) -> tuple[np.ndarray, np.ndarray]:
        p = self.params if p is None else p
        cfg = self.cfg
        if cfg.factorization == "none":
            A = p["W"] * self.off
            return A, -np.expm1(-((A / cfg.w_threshold) ** 2)) * self.off
        Z = p["Z"] if cfg.factorization == "full" else p["U"] @ p["V"].T + p["b"]
        G = _sigmoid(Z) * self.off
        return self.cfg.beta * np.tanh(p["M"]) * G, G

    def objective_and_grad(self, mu: float, s: float) -> tuple[float, dict[str, np.ndarray]] | None:
        cfg, p, d = self.cfg, self.params, self.d
        A, G = self.adjacency()
        hg = logdet_h_and_grad(A, s)
        if hg is None:
            return None
        h, gA = hg
        Res = np.eye(d) - A
        CR = self.cov @ Res
        score = 0.5 * float((Res * CR).sum())
        obj = mu * (score + cfg.lambda1 * float(np.abs(A).sum()) + cfg.lambda_gate * float(G.mean())) + h
        gA = gA + mu * (-CR + cfg.lambda1 * np.sign(A))
        gG = np.full((d, d), mu * cfg.lambda_gate / (d * d))
        if cfg.closure != "off":
            closs, gGc, _ = closure_loss_and_grad(
                G,
                self.n_scales,
                normalize=cfg.closure == "smnc",
                tau=cfg.tau,
                gamma_cycle=cfg.gamma_cycle,
                gamma_relation=cfg.gamma_relation,
                positive=self.pos,
                negative=self.neg,
            )
            obj += closs
            gG = gG + gGc
        gA *= self.off
        gG *= self.off
        if cfg.factorization == "none":
            W = A
            gW = gA + gG * np.exp(-((W / cfg.w_threshold) ** 2)) * 2 * W / cfg.w_threshold**2
            return obj, {"W": gW * self.off}
        t = np.tanh(p["M"])
        gM = gA * cfg.beta * G * (1 - t * t)
        gG = gG + gA * cfg.beta * t
        gZ = gG * G * (1 - G)  # G already masked: zero on the diagonal
        if cfg.factorization == "full":
            return obj, {"M": gM, "Z": gZ}
        return obj, {"M": gM, "U": gZ @ p["V"], "V": gZ.T @ p["U"], "b": np.array(gZ.sum())}


def adam_stage(problem: LinearProblem, mu: float, s: float, iters: int, lr: float, tol: float) -> int:
    """Adam (betas 0.99, 0.999 as DAGMA) on one central-path stage; halves ``lr`` and retries a step
    that leaves the barrier's M-matrix domain. Returns the number of iterations run."""
    b1, b2 = 0.99, 0.999
    m = {k: np.zeros_like(v) for k, v in problem.params.items()}
    v = {k: np.zeros_like(x) for k, x in problem.params.items()}
    prev = math.inf
    out = problem.objective_and_grad(mu, s)
    if out is None:
        return 0
    for it in range(1, iters + 1):
        obj, grad = out
        old = {k: x.copy() for k, x in problem.params.items()}
        m_old = {k: x.copy() for k, x in m.items()}
        v_old = {k: x.copy() for k, x in v.items()}
        while True:
            for k in problem.params:
                m[k] = b1 * m_old[k] + (1 - b1) * grad[k]
                v[k] = b2 * v_old[k] + (1 - b2) * grad[k] ** 2
                mh = m[k] / (1 - b1**it)
                vh = v[k] / (1 - b2**it)
                problem.params[k] = old[k] - lr * mh / (np.sqrt(vh) + 1e-8)
            out = problem.objective_and_grad(mu, s)
            if out is not None:
                break
            lr *= 0.5
            if lr < 1e-10:
                problem.params.update(old)
                return it
        if it % 100 == 0:
            if math.isfinite(prev) and abs(prev - obj) <= tol * max(1.0, abs(prev)):
                return it
            prev = obj
    return iters
