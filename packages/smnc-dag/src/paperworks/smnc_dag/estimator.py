"""The SMNC estimator: a scikit-learn ``BaseEstimator`` fitted on an ``(n, d)`` data matrix.

Objective at central-path stage ``t`` (DAGMA's path-following scheme, Bello et al. 2022, Alg. 1):

    mu_t * (Q(A; X) + lambda1 ||A||_1 + lambda_gate mean(G)
            + gamma_cycle mean_i exp(l_ii) + gamma_relation relation_loss(l; cues)) + h_{s_t}(A)

with ``A, G`` from :mod:`.structure`, ``h`` the log-det barrier, ``l`` the SMNC read-out logits of
``G`` (:mod:`.closure`) and the cue losses of :mod:`.relations`. ``Q`` is least squares (linear) or
DAGMA's log-MSE ``d/2 log(mean squared residual)`` (MLP). The closure and relation losses sit inside
``mu`` with the data fit, so their weight relative to the fit is the same at every stage (issue 31: outside
``mu`` they grew 1000x relative to it by the last stage).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

import networkx as nx
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from paperworks.core.validate import (
    as_generator,
    finite_array,
    fraction,
    nonnegative_float,
    one_of,
    positive_float,
    positive_int,
)

from ._fast import Cues, central_path, closure_logits, n_scales
from .relations import RelationCues
from .structure import FACTORIZATIONS, SeparatedLinearSEM, SeparatedMLPSEM

__all__ = ["SMNC", "SMNCConfig", "check_data", "enforce_acyclic"]

CLOSURES = ("smnc", "product", "off")
MODELS = ("linear", "mlp")


@dataclass(frozen=True)
class SMNCConfig:
    """Validated hyper-parameters of :class:`SMNC` (defaults: DAGMA's where they exist, ours otherwise).

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
    T: int = 5
    mu_init: float = 1.0
    mu_factor: float = 0.1
    s: tuple[float, ...] = (1.0, 0.9, 0.8, 0.7, 0.6)
    lr: float = 0.05
    warm_iter: int = 2000
    max_iter: int = 4000
    tol: float = 1e-6
    w_threshold: float = 0.3

    def __post_init__(self) -> None:
        for name, allowed in (("model", MODELS), ("factorization", FACTORIZATIONS), ("closure", CLOSURES)):
            one_of(getattr(self, name), name, allowed)
        for name in ("beta", "lr", "tau", "mu_init", "w_threshold"):
            object.__setattr__(self, name, positive_float(getattr(self, name), name))
        for name in ("lambda1", "lambda_gate", "lambda2", "gamma_cycle", "gamma_relation", "tol"):
            object.__setattr__(self, name, nonnegative_float(getattr(self, name), name))
        for name in ("rank", "hidden", "T", "warm_iter", "max_iter"):
            object.__setattr__(self, name, positive_int(getattr(self, name), name))
        fraction(self.gate_init, "gate_init", open_low=True, open_high=True)
        fraction(self.mu_factor, "mu_factor", open_low=True, open_high=True)
        s = self.s
        if isinstance(s, numbers.Real) and not isinstance(s, bool):
            s = (s,)
        if isinstance(s, str) or not hasattr(s, "__len__") or len(s) == 0:
            raise TypeError(f"s: expected a non-empty tuple of positive numbers, got {self.s!r}")
        object.__setattr__(self, "s", tuple(positive_float(v, f"s[{i}]") for i, v in enumerate(s)))


_CONFIG_FIELDS = tuple(f.name for f in fields(SMNCConfig))


def check_data(X, name: str = "X", *, min_samples: int = 10) -> np.ndarray:
    """Validate an ``(n, d)`` data matrix (``d >= 2`` numeric columns, ``n >= min_samples`` rows,
    finite, no constant or duplicated column); return it as float64. Errors name the argument and, for
    values, the row and column."""
    return _check_columns(_as_matrix(X, name, min_samples), name)


def _as_matrix(X, name: str = "X", min_samples: int = 1, n_features: int | None = None) -> np.ndarray:
    """A finite float64 ``(n, d)`` matrix with ``d >= 2`` and ``n >= min_samples``; one-line errors that
    also carry the phrases scikit-learn's estimator checks look for (``n_samples = 1``, ``NaN``...)."""
    min_samples = positive_int(min_samples, "min_samples")
    if hasattr(X, "detach"):  # a torch tensor
        X = X.detach().cpu().numpy()
    if hasattr(X, "tocsr") or hasattr(X, "tocoo"):
        raise TypeError(f"{name}: expected a dense array, got a sparse {type(X).__name__}")
    try:
        arr = np.asarray(X)
        if arr.dtype.kind == "O":
            arr = arr.astype(np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected an array of real numbers ({e})") from None
    if arr.dtype.kind == "c":
        raise ValueError(f"{name}: Complex data not supported; expected real numbers")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = "; Reshape your data with reshape(-1, 1) or reshape(1, -1)" if arr.ndim == 1 else ""
        raise ValueError(f"{name}: expected a 2-d (n_samples, n_features) array, got shape {arr.shape}{hint}")
    n, d = arr.shape
    if d == 0:
        raise ValueError(f"{name}: 0 feature(s) (shape={arr.shape}) while a minimum of 2 is required.")
    if n_features is not None and d != n_features:
        raise ValueError(f"{name} has {d} features, but SMNC is expecting {n_features} features as input")
    if d < 2:
        raise ValueError(f"{name}: expected at least 2 features (variables), got n_features = {d}")
    if n < min_samples:
        raise ValueError(f"{name}: expected at least {min_samples} samples, got n_samples = {n}")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name}: contains NaN or infinity (first at row {r}, column {c})")
    return arr


def _check_columns(X: np.ndarray, name: str) -> np.ndarray:
    d = X.shape[1]
    std = X.std(axis=0)
    scale = np.maximum(1.0, np.abs(X).max(axis=0))
    const = np.flatnonzero(std <= 1e-12 * scale)
    if const.size:
        raise ValueError(f"{name}: column(s) {const.tolist()} are constant; remove them before fitting")
    _, first, inverse = np.unique(X.T, axis=0, return_index=True, return_inverse=True)
    if first.size < d:
        inverse = np.asarray(inverse).ravel()
        j = next(j for j in range(d) if first[inverse[j]] != j)
        raise ValueError(
            f"{name}: column {j} duplicates column {int(first[inverse[j]])}; remove duplicated columns"
        )
    return X


def enforce_acyclic(B, weights) -> np.ndarray:
    """Drop, cycle by cycle, the weakest edge (smallest ``|weights|``) until ``B`` is a DAG.

    Args:
        B: ``(d, d)`` adjacency (bool, or numbers read as ``!= 0``), ``B[i, j]``: edge ``i -> j``.
        weights: ``(d, d)`` finite weights of the same shape.

    Returns a new ``(d, d)`` bool DAG (``B`` is not modified).
    """
    B = np.asarray(B)
    if B.ndim != 2 or B.shape[0] != B.shape[1] or B.shape[0] == 0:
        raise ValueError(f"B: expected a non-empty square (d, d) adjacency, got shape {B.shape}")
    B = finite_array(B, "B", dtype_kind=None) != 0
    weights = finite_array(weights, "weights", shape=B.shape)
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


class SMNC(BaseEstimator):
    """Structure-separated DAG learner with multi-scale normalised closure (a scikit-learn estimator).

    ``SMNC(**hyper_parameters).fit(X, ancestry=None, forbidden=None)`` with ``X`` of shape ``(n, d)``.
    Hyper-parameters: the fields of :class:`SMNCConfig` (validated when ``fit`` runs, as scikit-learn
    does) and ``random_state`` (int seed, ``numpy.random.Generator`` or None).

    Fitted attributes:
        adjacency_: ``(d, d)`` effective weighted adjacency ``A`` (``A[i, j]``: edge ``i -> j``).
        gate_: ``(d, d)`` structural gate ``G``.
        closure_logits_: ``(d, d)`` read-out closure logits of ``G`` (``None`` with ``closure="off"``).
        graph_: ``(d, d)`` bool DAG: ``|A| > w_threshold``, then the weakest edge of any remaining
            cycle removed (``networkx.is_directed_acyclic_graph`` holds).
        mean_: ``(d,)`` training mean (``predict`` centres by it).
        n_features_in_, n_iter_ (Adam steps over all stages and retries), s_ (the ``s`` of each stage
        after DAGMA's retries), model_ (:class:`SeparatedLinearSEM` or :class:`SeparatedMLPSEM`).
    """

    def __init__(
        self,
        *,
        model: str = "linear",
        factorization: str = "full",
        closure: str = "smnc",
        beta: float = 2.5,
        rank: int = 4,
        gate_init: float = 0.5,
        lambda1: float = 0.02,
        lambda_gate: float = 0.01,
        lambda2: float = 0.005,
        gamma_cycle: float = 0.01,
        gamma_relation: float = 0.1,
        tau: float = 0.1,
        hidden: int = 10,
        T: int = 5,
        mu_init: float = 1.0,
        mu_factor: float = 0.1,
        s: tuple[float, ...] = (1.0, 0.9, 0.8, 0.7, 0.6),
        lr: float = 0.05,
        warm_iter: int = 2000,
        max_iter: int = 4000,
        tol: float = 1e-6,
        w_threshold: float = 0.3,
        random_state=None,
    ) -> None:
        self.model = model
        self.factorization = factorization
        self.closure = closure
        self.beta = beta
        self.rank = rank
        self.gate_init = gate_init
        self.lambda1 = lambda1
        self.lambda_gate = lambda_gate
        self.lambda2 = lambda2
        self.gamma_cycle = gamma_cycle
        self.gamma_relation = gamma_relation
        self.tau = tau
        self.hidden = hidden
        self.T = T
        self.mu_init = mu_init
        self.mu_factor = mu_factor
        self.s = s
        self.lr = lr
        self.warm_iter = warm_iter
        self.max_iter = max_iter
        self.tol = tol
        self.w_threshold = w_threshold
        self.random_state = random_state

    def config(self) -> SMNCConfig:
        """The hyper-parameters as a validated :class:`SMNCConfig` (raises on a bad value)."""
        return SMNCConfig(**{k: getattr(self, k) for k in _CONFIG_FIELDS})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        return tags

    # -- fitting ---------------------------------------------------------------------------------
    def fit(self, X, y=None, *, ancestry=None, forbidden=None) -> SMNC:
        """Fit on ``X`` ``(n, d)`` (``n >= 10``, ``d >= 2``); ``y`` is ignored (scikit-learn's slot).

        ``ancestry``: ``(i, j)`` pairs (or a ``(d, d)`` bool matrix) meaning ``i`` is an ancestor of
        ``j``; ``forbidden``: pairs meaning ``i`` is not an ancestor of ``j``. Cues act on the closure
        logits, never on the direct-edge gate.
        """
        cfg = self.config()
        _as_matrix(X, "X", min_samples=10)  # one-line errors from the package first
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=10, ensure_min_features=2)
        X = _check_columns(X, "X")
        d = X.shape[1]
        if cfg.rank > d and cfg.factorization == "lowrank":
            raise ValueError(f"rank: expected an int in [1, d] = [1, {d}], got {cfg.rank}")
        rng = as_generator(self.random_state, "random_state")
        cues = RelationCues.from_pairs(d, ancestry, forbidden)
        if not cues.empty and cfg.closure == "off":
            raise ValueError(
                "ancestry: cues act on closure logits; they need closure='smnc' or 'product', got 'off'"
            )
        pos, neg = cues.masks()
        masks = None if cues.empty else Cues(pos.numpy(), neg.numpy())
        self.mean_ = X.mean(0)
        Xc = X - self.mean_
        common = dict(
            beta=cfg.beta,
            rank=min(cfg.rank, d),
            gate_init=cfg.gate_init,
            w0=cfg.w_threshold,
            random_state=rng,
        )
        if cfg.model == "linear":
            model = SeparatedLinearSEM(d, cfg.factorization, **common)
        else:
            model = SeparatedMLPSEM(d, cfg.factorization, hidden=cfg.hidden, **common)
        problem = model.problem(Xc, cfg, masks)
        self.n_iter_, self.s_ = central_path(
            problem,
            T=cfg.T,
            mu_init=cfg.mu_init,
            mu_factor=cfg.mu_factor,
            s=cfg.s,
            warm_iter=cfg.warm_iter,
            max_iter=cfg.max_iter,
            lr=cfg.lr,
            tol=cfg.tol,
        )
        A, G = model.adjacency()
        if cfg.closure == "off":
            self.closure_logits_ = None
        else:
            self.closure_logits_ = closure_logits(
                G, n_scales(d), normalize=cfg.closure == "smnc", tau=cfg.tau
            )
        self.model_ = model
        self.adjacency_ = A.copy()
        self.gate_ = G.copy()
        self.graph_ = enforce_acyclic(np.abs(A) > cfg.w_threshold, A)
        return self

    # -- use -------------------------------------------------------------------------------------
    def predict(self, X) -> np.ndarray:
        """Each variable's expected value given the others through the fitted SEM: ``(n, d) -> (n, d)``.

        ``X`` is centred by the training mean ``mean_`` (not its own), so rows are predicted one by one.
        """
        check_is_fitted(self)
        _as_matrix(X, "X", min_samples=1, n_features=self.n_features_in_)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.model_.predict(X - self.mean_) + self.mean_

    def to_networkx(self) -> nx.DiGraph:
        """The fitted DAG as ``networkx.DiGraph`` (nodes ``0..d-1``, edge attribute ``weight``)."""
        check_is_fitted(self)
        g = nx.DiGraph()
        g.add_nodes_from(range(self.n_features_in_))
        for i, j in np.argwhere(self.graph_):
            g.add_edge(int(i), int(j), weight=float(self.adjacency_[i, j]))
        return g

    def to_causallearn(self, node_names=None):
        """The fitted DAG as causal-learn's ``GeneralGraph`` (directed edges ``i --> j``).

        ``node_names``: ``d`` distinct names (default ``X1..Xd``, causal-learn's convention). Needs
        ``causal-learn`` (``pip install 'paperworks-smnc-dag[causallearn]'``).
        """
        check_is_fitted(self)
        d = self.n_features_in_
        names = [f"X{i + 1}" for i in range(d)] if node_names is None else [str(v) for v in node_names]
        if len(names) != d or len(set(names)) != d:
            raise ValueError(
                f"node_names: expected {d} distinct names, got {len(names)} ({len(set(names))} distinct)"
            )
        try:
            from causallearn.graph.GeneralGraph import GeneralGraph
            from causallearn.graph.GraphNode import GraphNode
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "to_causallearn needs causal-learn: pip install 'paperworks-smnc-dag[causallearn]'"
            ) from exc
        nodes = [GraphNode(name) for name in names]
        g = GeneralGraph(nodes)
        for i, j in np.argwhere(self.graph_):
            g.add_directed_edge(nodes[i], nodes[j])
        return g
