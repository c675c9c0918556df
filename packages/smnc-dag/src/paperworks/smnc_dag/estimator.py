"""The SMNC estimator: scikit-learn style ``fit`` on an ``(n, d)`` data matrix.

Objective at central-path stage ``t`` (DAGMA's path-following scheme, Bello et al. 2022, Alg. 1):

    mu_t * (Q(A; X) + lambda1 ||A||_1 + lambda_gate * mean(G)) + h_{s_t}(A)
        + gamma_cycle * mean_i exp(l_ii) + gamma_relation * relation_loss(l; cues)

with ``A, G`` from :mod:`.structure`, ``h`` the log-det barrier, ``l`` the SMNC read-out logits of
``G`` (:mod:`.closure`) and the cue losses of :mod:`.relations`. ``Q`` is least squares (linear) or
DAGMA's log-MSE ``d/2 log(mean squared residual)`` (MLP).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, fields

import networkx as nx
import numpy as np
import torch

from ._fast import LinearProblem, adam_stage
from .closure import SMNCClosure
from .relations import RelationCues, cycle_loss, relation_loss
from .structure import FACTORIZATIONS, SeparatedLinearSEM, SeparatedMLPSEM, logdet_acyclicity

__all__ = ["SMNC", "SMNCConfig", "check_data", "enforce_acyclic"]

CLOSURES = ("smnc", "product", "off")
MODELS = ("linear", "mlp")


@dataclass(frozen=True)
class SMNCConfig:
    """Hyper-parameters of :class:`SMNC` (defaults: DAGMA's where they exist, ours otherwise).

    model: ``"linear"`` (least squares) or ``"mlp"`` (one MLP per node).
    factorization: gate factorisation, ``"full"``, ``"lowrank"`` or ``"none"`` (single matrix).
    closure: ``"smnc"`` (budget-normalised), ``"product"`` (unnormalised ablation) or ``"off"``.
    """

    model: str = "linear"
    factorization: str = "full"
    closure: str = "smnc"
    beta: float = 2.5
    rank: int = 4
    gate_init: float = 0.5
    lambda1: float = 0.02
    lambda_gate: float = 0.01
    lambda2: float = 0.005
    gamma_cycle: float = 0.01
    gamma_relation: float = 0.1
    tau: float = 0.1
    hidden: int = 10
    T: int = 4
    mu_init: float = 1.0
    mu_factor: float = 0.1
    s: tuple[float, ...] = (1.0, 0.9, 0.8, 0.7)
    lr: float = 0.02
    warm_iter: int = 500
    max_iter: int = 1000
    tol: float = 1e-6
    w_threshold: float = 0.3

    def __post_init__(self) -> None:
        for name, allowed in (("model", MODELS), ("factorization", FACTORIZATIONS), ("closure", CLOSURES)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: expected one of {allowed}, got {getattr(self, name)!r}")
        for name in ("beta", "lr", "tau", "mu_init", "mu_factor", "w_threshold"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name}: expected a positive finite number, got {v!r}")
        for name in ("lambda1", "lambda_gate", "lambda2", "gamma_cycle", "gamma_relation", "tol"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name}: expected a non-negative finite number, got {v!r}")
        for name in ("rank", "hidden", "T", "warm_iter", "max_iter"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        if not 0 < self.gate_init < 1:
            raise ValueError(f"gate_init: expected a value in (0, 1), got {self.gate_init!r}")
        if self.mu_factor >= 1:
            raise ValueError(f"mu_factor: expected a value in (0, 1), got {self.mu_factor!r}")
        if not self.s or any(not (isinstance(v, int | float) and v > 0) for v in self.s):
            raise ValueError(f"s: expected a non-empty tuple of positive numbers, got {self.s!r}")


def check_data(X, name: str = "X", *, min_samples: int = 10) -> np.ndarray:
    """Validate an ``(n, d)`` data matrix; return it as float64. Errors name the offending column."""
    if isinstance(X, torch.Tensor):
        X = X.detach().cpu().numpy()
    X = np.asarray(X)
    if X.dtype == object or not (np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)):
        raise TypeError(f"{name}: expected a real numeric array, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D (n_samples, n_features) array, got shape {X.shape}")
    n, d = X.shape
    if d < 2:
        raise ValueError(f"{name}: expected at least 2 variables (columns), got {d}")
    X = X.astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name}: contains NaN or inf (first at row {r}, column {c})")
    need = max(min_samples, d + 1)
    if n < need:
        raise ValueError(
            f"{name}: expected at least max({min_samples}, d + 1) = {need} samples for d = {d}, got {n}"
        )
    std = X.std(axis=0)
    scale = max(1.0, float(np.abs(X).max()))
    const = np.flatnonzero(std <= 1e-12 * scale)
    if const.size:
        raise ValueError(f"{name}: column(s) {const.tolist()} are constant; remove them before fitting")
    _, first, inverse = np.unique(X.T, axis=0, return_index=True, return_inverse=True)
    if first.size < d:
        inverse = np.asarray(inverse).ravel()
        dup = [j for j in range(d) if first[inverse[j]] != j]
        j = dup[0]
        raise ValueError(
            f"{name}: column {j} duplicates column {int(first[inverse[j]])}; remove duplicated columns"
        )
    return X


def enforce_acyclic(B: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Drop, cycle by cycle, the weakest edge (smallest ``|weights|``) until ``B`` is a DAG."""
    B = B.copy()
    g = nx.DiGraph()
    g.add_nodes_from(range(B.shape[0]))
    g.add_edges_from(map(tuple, np.argwhere(B)))
    while True:
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            return B
        i, j = min(cycle, key=lambda e: abs(weights[e[0], e[1]]))[:2]
        g.remove_edge(i, j)
        B[i, j] = False


class SMNC:
    """Structure-separated DAG learner with multi-scale normalised closure (scikit-learn style).

    ``SMNC(**config).fit(X, ancestry=None, forbidden=None)`` with ``X`` of shape ``(n, d)``.

    Fitted attributes:
        adjacency_: ``(d, d)`` effective weighted adjacency ``A`` (``A[i, j]``: edge ``i -> j``).
        gate_: ``(d, d)`` structural gate ``G``.
        closure_logits_: ``(d, d)`` read-out closure logits of ``G`` (``None`` with ``closure="off"``).
        graph_: ``(d, d)`` bool DAG: ``|A| > w_threshold``, then weakest edges on any remaining cycle
            removed (``networkx.is_directed_acyclic_graph`` holds).
        n_features_in_, n_iter_, model_.
    """

    def __init__(self, config: SMNCConfig | None = None, *, seed: int = 0, **overrides) -> None:
        base = config or SMNCConfig()
        if overrides:
            known = {f.name for f in fields(SMNCConfig)}
            unknown = sorted(set(overrides) - known)
            if unknown:
                raise TypeError(
                    f"SMNC: unknown hyper-parameter(s) {unknown}; expected names from {sorted(known)}"
                )
            if "s" in overrides:
                overrides["s"] = tuple(overrides["s"])
            base = SMNCConfig(**{**{f.name: getattr(base, f.name) for f in fields(SMNCConfig)}, **overrides})
        self.config = base
        self.seed = seed

    # -- fitting ---------------------------------------------------------------------------------
    def fit(self, X, ancestry=None, forbidden=None) -> SMNC:
        """Fit on ``X`` ``(n, d)``. ``ancestry``/``forbidden``: ``(i, j)`` pairs."""
        cfg = self.config
        X = check_data(X, min_samples=10)
        n, d = X.shape
        cues = RelationCues.from_pairs(d, ancestry, forbidden)
        if not cues.empty and cfg.closure == "off":
            raise ValueError(
                "ancestry/forbidden: cues act on closure logits; they need closure='smnc' or 'product'"
            )
        gen = torch.Generator().manual_seed(self.seed)
        Xc = X - X.mean(0, keepdims=True)
        pos, neg = cues.masks()
        s_list = list(cfg.s) + [cfg.s[-1]] * max(0, cfg.T - len(cfg.s))
        closure = None if cfg.closure == "off" else SMNCClosure(normalize=cfg.closure == "smnc", tau=cfg.tau)
        mu, n_iter = cfg.mu_init, 0
        if cfg.model == "linear":
            problem = LinearProblem(
                Xc.T @ Xc / n, cfg, pos.numpy(), neg.numpy(), np.random.default_rng(self.seed)
            )
            for t in range(cfg.T):
                iters = cfg.max_iter if t == cfg.T - 1 else cfg.warm_iter
                n_iter += adam_stage(problem, mu, s_list[t], iters, cfg.lr, cfg.tol)
                mu *= cfg.mu_factor
            model = SeparatedLinearSEM(
                d,
                cfg.factorization,
                beta=cfg.beta,
                rank=cfg.rank,
                gate_init=cfg.gate_init,
                w0=cfg.w_threshold,
                generator=gen,
            )
            with torch.no_grad():
                for name, value in problem.params.items():
                    target = {"W": "M", "Z": "gate.Z", "U": "gate.U", "V": "gate.V", "b": "gate.b"}.get(
                        name, name
                    )
                    model.get_parameter(target).copy_(torch.from_numpy(np.asarray(value, dtype=np.float64)))
        else:
            Xt = torch.from_numpy(Xc)
            model = SeparatedMLPSEM(
                d,
                cfg.factorization,
                hidden=cfg.hidden,
                beta=cfg.beta,
                rank=cfg.rank,
                gate_init=cfg.gate_init,
                w0=cfg.w_threshold,
                generator=gen,
            )

            def score() -> torch.Tensor:
                return 0.5 * d * torch.log(((model(Xt) - Xt) ** 2).sum() / n)

            for t in range(cfg.T):
                iters = cfg.max_iter if t == cfg.T - 1 else cfg.warm_iter
                n_iter += self._stage(model, score, closure, pos, neg, mu, s_list[t], iters)
                mu *= cfg.mu_factor
        with torch.no_grad():
            A, G = model.adjacency()
            self.closure_logits_ = None if closure is None else closure(G).numpy()
        self.model_ = model
        self.adjacency_ = A.numpy().copy()
        self.gate_ = G.numpy().copy()
        B = np.abs(self.adjacency_) > cfg.w_threshold
        self.graph_ = enforce_acyclic(B, self.adjacency_)
        self.n_features_in_ = d
        self.n_iter_ = n_iter
        return self

    def _stage(self, model, score, closure, pos, neg, mu, s, iters) -> int:
        cfg = self.config
        lr = cfg.lr
        has_rel = bool(pos.any() or neg.any())

        def objective() -> torch.Tensor:
            A, G = model.adjacency()
            h = logdet_acyclicity(A, s)
            obj = mu * (score() + cfg.lambda1 * A.abs().sum() + cfg.lambda_gate * G.mean()) + h
            if cfg.model == "mlp":  # DAGMA's L2 on the MLP weights (its Adam weight decay)
                obj = obj + mu * cfg.lambda2 * sum(
                    (p**2).sum() for n_, p in model.named_parameters() if not n_.startswith("gate.")
                )
            if closure is not None:
                logits = closure(G)
                obj = obj + cfg.gamma_cycle * cycle_loss(logits)
                if has_rel:
                    obj = obj + cfg.gamma_relation * relation_loss(logits, pos, neg)
            return obj

        while True:
            start = copy.deepcopy(model.state_dict())
            opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.99, 0.999))
            prev, ok = math.inf, True
            for it in range(1, iters + 1):
                opt.zero_grad(set_to_none=True)
                obj = objective()
                if not torch.isfinite(obj):
                    ok = False
                    break
                obj.backward()
                opt.step()
                if it % 100 == 0:
                    cur = float(obj.detach())
                    if math.isfinite(prev) and abs(prev - cur) <= cfg.tol * max(1.0, abs(prev)):
                        return it
                    prev = cur
            if ok:
                return iters
            # left the M-matrix domain of the barrier: restart the stage with half the step size
            model.load_state_dict(start)
            lr *= 0.5
            if lr < 1e-6:
                return 0

    # -- use -------------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "adjacency_"):
            raise RuntimeError("SMNC: call fit(X) before using the fitted model")

    def predict(self, X) -> np.ndarray:
        """Reconstruct each variable from its parents: ``(n, d) -> (n, d)`` (centred as in ``fit``)."""
        self._check_fitted()
        X = check_data(X, min_samples=1)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X: expected {self.n_features_in_} columns, got {X.shape[1]}")
        with torch.no_grad():
            return self.model_(torch.from_numpy(X - X.mean(0, keepdims=True))).numpy()

    def to_networkx(self) -> nx.DiGraph:
        """The fitted DAG as ``networkx.DiGraph`` with edge attribute ``weight`` (from ``adjacency_``)."""
        self._check_fitted()
        g = nx.DiGraph()
        g.add_nodes_from(range(self.n_features_in_))
        for i, j in np.argwhere(self.graph_):
            g.add_edge(int(i), int(j), weight=float(self.adjacency_[i, j]))
        return g
