"""Generated problems where the true conditional label distribution is known.

Generative model (:func:`softmax_problem`): latent inputs ``x_i ~ N(0, I_d)`` (observed by the
predictor), true distributions ``q_i = softmax(W x_i + b)`` with ``W_cj ~ N(0, signal^2 / d)``,
``b_c ~ N(0, 0.25)``; labels ``y_i ~ Categorical(q_i)`` are the only thing an evaluator sees.

Distortions of the truth (:func:`distort`) - what a predictor gaming a calibration error might report:
sharpened / flattened (temperature on log q) and bin-snapped (``q`` averaged over equal-mass groups
of the truth's confidence, a coarsening that stays calibrated at the group level).

Blackwell chain (:func:`blackwell_problem`): a latent type ``z`` in ``{0..T-1}`` with its own label
distribution; predictor ``l`` reports ``E[q_z | z // branching^l]``, the truth pooled over nested
groups. Every predictor is calibrated, and a finer one is more informative (Blackwell) than a
coarser one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BlackwellProblem", "blackwell_problem", "distort", "sample_labels", "softmax_problem"]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def softmax_problem(
    n: int, k: int, rng: np.random.Generator, *, d: int = 4, signal: float = 2.0
) -> np.ndarray:
    """True label distributions ``q`` of shape (n, k) from the model in the module docstring."""
    if n < 1 or k < 2 or d < 1:
        raise ValueError(f"softmax_problem: expected n >= 1, k >= 2, d >= 1, got n={n}, k={k}, d={d}")
    x = rng.standard_normal((n, d))
    w = rng.standard_normal((k, d)) * signal / np.sqrt(d)
    b = rng.standard_normal(k) * 0.5
    return _softmax(x @ w.T + b)


def sample_labels(q: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``reps`` independent label vectors drawn from the rows of ``q`` (n, k): shape (reps, n)."""
    cdf = np.cumsum(q, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random((reps, q.shape[0], 1))
    return (u > cdf[None, :, :]).sum(axis=2).astype(np.int64)


def distort(q: np.ndarray, kind: str, level: float) -> np.ndarray:
    """A distorted report of the truth ``q`` (n, k).

    ``kind="temperature"``: ``softmax(log q / level)`` (level < 1 sharpens, > 1 flattens);
    ``kind="snap"``: ``q`` averaged over ``int(level)`` equal-mass groups of the truth's confidence.
    """
    if kind == "temperature":
        if level <= 0:
            raise ValueError(f"level: expected a positive temperature, got {level}")
        return _softmax(np.log(np.clip(q, 1e-300, None)) / level)
    if kind == "snap":
        groups = int(level)
        if groups < 1 or groups > q.shape[0]:
            raise ValueError(f"level: expected 1..n groups, got {level}")
        order = np.argsort(q.max(axis=1), kind="stable")
        g = np.empty(q.shape[0], dtype=np.int64)
        g[order] = np.arange(q.shape[0]) * groups // q.shape[0]
        sums = np.stack([np.bincount(g, q[:, c], groups) for c in range(q.shape[1])], 1)
        return (sums / np.bincount(g, minlength=groups)[:, None])[g]
    raise ValueError(f"kind: expected 'temperature' or 'snap', got {kind!r}")


@dataclass(frozen=True)
class BlackwellProblem:
    """Types ``z`` (n,), each type's distribution ``type_q`` (T, k), type frequencies ``freq`` (T,),
    ``type_tables[l]`` (T, k): the report of predictor ``l`` for each type, and
    ``predictors[l] = type_tables[l][z]`` (n, k): the report pooled over groups of ``branching**l`` types."""

    z: np.ndarray
    type_q: np.ndarray
    freq: np.ndarray
    predictors: tuple[np.ndarray, ...]
    type_tables: tuple[np.ndarray, ...]

    @property
    def truth(self) -> np.ndarray:
        return self.type_q[self.z]


def blackwell_problem(
    n: int,
    k: int,
    rng: np.random.Generator,
    *,
    n_types: int = 64,
    branching: int = 4,
    concentration: float = 0.5,
) -> BlackwellProblem:
    """The nested-pooling problem of the module docstring. ``n_types`` must be a power of ``branching``;
    the chain has ``log_branching(n_types) + 1`` predictors, finest (the truth) first."""
    levels = round(np.log(n_types) / np.log(branching))
    if branching < 2 or branching**levels != n_types:
        raise ValueError(f"n_types: expected a power of branching={branching}, got {n_types}")
    type_q = rng.dirichlet(np.full(k, concentration), size=n_types)
    freq = rng.dirichlet(np.full(n_types, 5.0))
    z = rng.choice(n_types, size=n, p=freq)
    preds, tables = [], []
    for level in range(levels + 1):
        group = np.arange(n_types) // branching**level
        n_groups = group.max() + 1
        w = np.bincount(group, freq, n_groups)
        pooled = (
            np.stack([np.bincount(group, freq * type_q[:, c], n_groups) for c in range(k)], 1) / w[:, None]
        )
        tables.append(pooled[group])
        preds.append(pooled[group][z])
    return BlackwellProblem(z=z, type_q=type_q, freq=freq, predictors=tuple(preds), type_tables=tuple(tables))
