"""The unconstrained features model (UFM): fixed image embeddings, free text embeddings per concept.

Images ``i = 1..N`` have fixed embeddings ``u_i`` (rows of ``U``, (N, d)) and leaf labels; every
concept ``c`` of the tree has a free text embedding ``v_c`` (rows of ``V``, (n, d)). Positive pairs
come from hierarchical co-occurrence: an image is paired with each concept on the path from its leaf
to the root (:func:`hierarchical_pairs`). ``P`` ((N, n), sums to 1) is the empirical joint law of the
pairs, ``p = P 1`` the image marginal, ``q = P^T 1`` the text marginal.

Linear contrastive loss (our reconstruction; README Fidelity)::

    L_lin(V) = -E_P <u, v> + E_{p x q} <u, v> + (lam / 2) ||V||_F^2
             = -<P^T U, V> + <q ubar^T, V> + (lam / 2) ||V||_F^2,      ubar = p^T U

Its unique minimiser is ``v_c = q_c (mu_c - ubar) / lam`` with ``mu_c = (P^T U)_c / q_c``: every text
embedding points along its image prototype centred at the pair-weighted image mean, so cosines between
text embeddings equal cosines between centred prototypes (:func:`linear_loss_minimiser`).

Population InfoNCE (the large-batch limit of the symmetric CLIP loss, up to the constant log B)::

    L_nce(V) = 1/2 sum_ic P_ic [ LSE_c'(z_ic' + log q_c') - z_ic ]
             + 1/2 sum_ic P_ic [ LSE_i'(z_i'c + log p_i') - z_ic ] + (lam / 2) ||V||_F^2,
    z_ic = <u_i, v_c> / tau

convex in ``V``; :func:`fit_infonce` finds its minimiser with L-BFGS. As ``lam`` grows its minimiser
approaches ``V_lin / tau`` (the gradient at ``V = 0`` is the linear loss's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy.optimize import minimize

from paperworks.core.validate import as_generator, finite_array, fraction, positive_float

from .hierarchy import as_hierarchy

__all__ = [
    "PairStatistics",
    "fit_infonce",
    "hierarchical_pairs",
    "infonce_population_loss",
    "linear_contrastive_loss",
    "linear_loss_minimiser",
    "linear_loss_minimum",
    "minimise_linear_loss_lbfgs",
    "pair_matrix",
    "pair_statistics",
]


def _reg(lam: object, name: str = "lam") -> float:
    try:
        value = float(lam)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a positive number, got {lam!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: expected a positive regularisation strength, got {lam!r}")
    return value


def hierarchical_pairs(
    labels: Any,
    tree: Any,
    *,
    include_root: bool = True,
    noise: float = 0.0,
    rng: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positive (image, concept) pairs from hierarchical co-occurrence.

    ``labels``: (N,) concept id of each image (usually a leaf). Each image is paired with its label and
    every ancestor of it (the root too when ``include_root``). ``noise`` in [0, 1): each pair's concept
    is replaced, with that probability, by a uniformly drawn non-root concept (noisy co-occurrence).
    Returns ``(image_index, concept_index)``, two int64 arrays of equal length.
    """
    tree = as_hierarchy(tree)
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.size == 0 or not np.issubdtype(lab.dtype, np.integer):
        raise ValueError(
            f"labels: expected a non-empty 1-d int array, got shape {lab.shape} dtype {lab.dtype}"
        )
    if lab.min() < 0 or lab.max() >= tree.n_nodes:
        raise ValueError(f"labels: expected concept ids in 0..{tree.n_nodes - 1}")
    noise = fraction(noise, "noise", open_high=True)
    paths = [tree.ancestors(int(c), inclusive=True) for c in range(tree.n_nodes)]
    if not include_root:
        paths = [[a for a in p if a != tree.root] for p in paths]
    img, con = [], []
    for i, c in enumerate(lab):
        path = paths[int(c)]
        img.extend([i] * len(path))
        con.extend(path)
    img_a, con_a = np.asarray(img, dtype=np.int64), np.asarray(con, dtype=np.int64)
    if noise > 0:
        gen = as_generator(rng)
        flip = gen.random(con_a.size) < noise
        non_root = np.flatnonzero(np.arange(tree.n_nodes) != tree.root)
        con_a[flip] = gen.choice(non_root, size=int(flip.sum()))
    return img_a, con_a


def pair_matrix(image_index: Any, concept_index: Any, n_images: int, n_nodes: int) -> np.ndarray:
    """(n_images, n_nodes) float64 joint law of the pairs: counts divided by the number of pairs."""
    i, c = np.asarray(image_index, dtype=np.int64), np.asarray(concept_index, dtype=np.int64)
    if i.shape != c.shape or i.ndim != 1 or i.size == 0:
        raise ValueError("image_index, concept_index: expected two non-empty 1-d arrays of equal length")
    P = np.zeros((n_images, n_nodes))
    np.add.at(P, (i, c), 1.0)
    return P / i.size


def _check_UP(U: Any, P: Any) -> tuple[np.ndarray, np.ndarray]:
    U = finite_array(U, "U", ndim=2)
    P = finite_array(P, "P", ndim=2)
    if P.shape[0] != U.shape[0]:
        raise ValueError(f"P: expected {U.shape[0]} rows (one per image), got {P.shape[0]}")
    if np.any(P < 0) or not np.isclose(P.sum(), 1.0, atol=1e-9):
        raise ValueError("P: expected a non-negative joint law summing to 1")
    return U.astype(np.float64), P.astype(np.float64)


@dataclass(frozen=True)
class PairStatistics:
    """Marginals and prototypes of a pair law: ``p`` (N,), ``q`` (n,), ``ubar`` (d,) the pair-weighted
    image mean, ``mu`` (n, d) the image prototype of each concept (zero where ``q_c = 0``)."""

    p: np.ndarray
    q: np.ndarray
    ubar: np.ndarray
    mu: np.ndarray

    @property
    def centred(self) -> np.ndarray:
        """(n, d) ``mu_c - ubar``: prototypes centred at the pair-weighted mean (zero where q_c = 0)."""
        return np.where(self.q[:, None] > 0, self.mu - self.ubar, 0.0)


def pair_statistics(U: Any, P: Any) -> PairStatistics:
    U, P = _check_UP(U, P)
    p, q = P.sum(1), P.sum(0)
    ubar = p @ U
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.where(q[:, None] > 0, (P.T @ U) / q[:, None], 0.0)
    return PairStatistics(p, q, ubar, mu)


def linear_contrastive_loss(V: Any, U: Any, P: Any, lam: float) -> float:
    """``L_lin(V)`` (module docstring) for text embeddings ``V`` (n, d)."""
    U, P = _check_UP(U, P)
    lam = _reg(lam)
    V = finite_array(V, "V", ndim=2).astype(np.float64)
    if V.shape != (P.shape[1], U.shape[1]):
        raise ValueError(f"V: expected shape {(P.shape[1], U.shape[1])}, got {V.shape}")
    q, ubar = P.sum(0), P.sum(1) @ U
    return float(-np.sum((P.T @ U) * V) + (q @ V) @ ubar + 0.5 * lam * np.sum(V * V))


def linear_loss_minimiser(U: Any, P: Any, lam: float) -> np.ndarray:
    """The closed-form minimiser ``v_c = q_c (mu_c - ubar) / lam`` of ``L_lin``, shape (n, d)."""
    lam = _reg(lam)
    s = pair_statistics(U, P)
    return s.q[:, None] * s.centred / lam


def linear_loss_minimum(U: Any, P: Any, lam: float) -> float:
    """The minimum value ``-||P^T U - q ubar^T||_F^2 / (2 lam)``."""
    lam = _reg(lam)
    U, P = _check_UP(U, P)
    g = P.T @ U - np.outer(P.sum(0), P.sum(1) @ U)
    return float(-np.sum(g * g) / (2 * lam))


def minimise_linear_loss_lbfgs(
    U: Any, P: Any, lam: float, *, rng: object = None, gtol: float = 1e-12, maxiter: int = 1000
) -> np.ndarray:
    """Numerical route: L-BFGS (scipy) on ``L_lin`` from a random start; returns the (n, d) solution."""
    lam = _reg(lam)
    U, P = _check_UP(U, P)
    n, d = P.shape[1], U.shape[1]
    g0 = P.T @ U - np.outer(P.sum(0), P.sum(1) @ U)

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        V = x.reshape(n, d)
        return float(-np.sum(g0 * V) + 0.5 * lam * np.sum(V * V)), (lam * V - g0).ravel()

    x0 = as_generator(rng).normal(size=n * d) / np.sqrt(d)
    res = minimize(
        f, x0, jac=True, method="L-BFGS-B", options={"gtol": gtol, "ftol": 0.0, "maxiter": maxiter}
    )
    return res.x.reshape(n, d)


def infonce_population_loss(V: torch.Tensor, U: torch.Tensor, P: torch.Tensor, tau: float) -> torch.Tensor:
    """Population symmetric InfoNCE (module docstring) without the weight decay; torch, differentiable.

    ``V`` (n, d), ``U`` (N, d), ``P`` (N, n) a joint law; ``tau`` > 0 the temperature. With
    ``P = I / B`` it equals the CLIP loss on ``U V^T / tau`` minus ``log B``.
    """
    tau = positive_float(tau, "tau")
    z = U @ V.T / tau
    p, q = P.sum(1), P.sum(0)
    neg_inf = torch.tensor(float("-inf"), dtype=z.dtype, device=z.device)
    log_q = torch.where(q > 0, q.clamp_min(1e-300).log(), neg_inf)
    log_p = torch.where(p > 0, p.clamp_min(1e-300).log(), neg_inf)
    lse_rows = torch.logsumexp(z + log_q[None, :], dim=1)  # (N,)
    lse_cols = torch.logsumexp(z + log_p[:, None], dim=0)  # (n,)
    pos = (P * z).sum()
    i2t = (p * lse_rows).sum() - pos
    t2i = (q * torch.where(q > 0, lse_cols, torch.zeros_like(lse_cols))).sum() - pos
    return 0.5 * (i2t + t2i)


def fit_infonce(
    U: Any,
    P: Any,
    lam: float,
    *,
    tau: float = 0.1,
    V0: Any = None,
    gtol: float = 1e-9,
    maxiter: int = 2000,
) -> tuple[np.ndarray, dict[str, float]]:
    """Minimise population InfoNCE with weight decay ``lam`` over the text embeddings (L-BFGS, float64).

    Returns ``(V, info)`` with ``info = {"loss", "grad_norm", "iterations"}``. The objective is convex
    in ``V`` (log-sum-exp of linear functions plus a ridge), so this is its global minimiser.
    """
    lam = _reg(lam)
    U, P = _check_UP(U, P)
    n, d = P.shape[1], U.shape[1]
    tau = positive_float(tau, "tau")
    x0 = np.zeros(n * d) if V0 is None else finite_array(V0, "V0", shape=(n, d)).astype(np.float64).ravel()
    p, q = P.sum(1), P.sum(0)
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p), np.log(q)

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        # the analytic gradient of infonce_population_loss (checked against torch autograd in the tests)
        V = x.reshape(n, d)
        z = U @ V.T / tau
        a = z + log_q[None, :]
        am = a.max(1, keepdims=True)
        ea = np.exp(a - am)
        sa = ea.sum(1, keepdims=True)
        b = z + log_p[:, None]
        bm = b.max(0, keepdims=True)
        eb = np.exp(b - bm)
        sb = eb.sum(0, keepdims=True)
        lse_r = (am + np.log(sa))[:, 0]
        lse_c = np.where(q > 0, (bm + np.log(sb))[0], 0.0)
        pos = np.sum(P * z)
        loss = 0.5 * (p @ lse_r - pos + q @ lse_c - pos) + 0.5 * lam * np.sum(V * V)
        gz = 0.5 * (p[:, None] * ea / sa + q[None, :] * eb / sb) - P
        g = gz.T @ U / tau + lam * V
        return float(loss), g.ravel()

    res = minimize(
        f, x0, jac=True, method="L-BFGS-B", options={"gtol": gtol, "ftol": 0.0, "maxiter": maxiter}
    )
    _, g = f(res.x)
    return res.x.reshape(n, d), {
        "loss": float(res.fun),
        "grad_norm": float(np.abs(g).max()),
        "iterations": float(res.nit),
    }
