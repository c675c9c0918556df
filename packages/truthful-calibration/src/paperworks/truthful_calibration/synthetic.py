"""Generated problems where the true conditional label distribution is known.

Generative model (:func:`softmax_problem`): latent inputs ``x_i ~ N(0, I_d)`` (observed by the
predictor), true distributions ``q_i = softmax(W x_i + b)`` with ``W_cj ~ N(0, signal^2 / d)``,
``b_c ~ N(0, 0.25)``; labels ``y_i ~ Categorical(q_i)`` are the only thing an evaluator sees.
:func:`softmax_task` fixes ``W`` and ``b`` and returns a :class:`SoftmaxTask` whose ``sample(n, rng)``
draws fresh ``(x, q, y)``, for training classifiers on one sample and scoring them on another.

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
from typing import Any

import numpy as np

from paperworks.core.validate import (
    as_generator,
    int_in_range,
    nonnegative_float,
    one_of,
    positive_float,
    positive_int,
    probability_vector,
)

__all__ = [
    "BlackwellProblem",
    "SoftmaxTask",
    "blackwell_problem",
    "distort",
    "sample_labels",
    "softmax_problem",
    "softmax_task",
]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class SoftmaxTask:
    """A fixed linear-softmax task: ``q(x) = softmax(W x + b)``, ``W`` (k, d), ``b`` (k,).

    :meth:`sample` draws ``n`` fresh inputs ``x ~ N(0, I_d)``, their true distributions and one label
    each, so a classifier can be trained on one sample and scored on another.
    """

    w: np.ndarray
    b: np.ndarray

    def probs(self, x: np.ndarray) -> np.ndarray:
        return _softmax(x @ self.w.T + self.b)

    def sample(self, n: int, rng: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x (n, d), q (n, k), y (n,)) for ``n`` fresh inputs."""
        n = positive_int(n, "n")
        rng = as_generator(rng)
        x = rng.standard_normal((n, self.w.shape[1]))
        q = self.probs(x)
        return x, q, _draw(q, 1, rng)[0]


def softmax_task(k: int, rng: Any, *, d: int = 4, signal: float = 2.0) -> SoftmaxTask:
    """The task of the module docstring: ``W_cj ~ N(0, signal^2 / d)``, ``b_c ~ N(0, 0.25)``."""
    k = int_in_range(k, "k", 2)
    d = positive_int(d, "d")
    signal = nonnegative_float(signal, "signal")
    rng = as_generator(rng)
    w = rng.standard_normal((k, d)) * signal / np.sqrt(d)
    b = rng.standard_normal(k) * 0.5
    return SoftmaxTask(w=w, b=b)


def softmax_problem(n: int, k: int, rng: Any, *, d: int = 4, signal: float = 2.0) -> np.ndarray:
    """True label distributions ``q`` of shape (n, k) from the model in the module docstring.

    ``rng``: a NumPy Generator or an int seed. Draws ``x`` first, then the task (the order of the
    first release, so seeded results are unchanged).
    """
    n = positive_int(n, "n")
    k = int_in_range(k, "k", 2)
    d = positive_int(d, "d")
    signal = nonnegative_float(signal, "signal")
    rng = as_generator(rng)
    x = rng.standard_normal((n, d))
    w = rng.standard_normal((k, d)) * signal / np.sqrt(d)
    b = rng.standard_normal(k) * 0.5
    return _softmax(x @ w.T + b)


def _rows(q: Any, name: str = "q") -> np.ndarray:
    arr = probability_vector(q, name, axis=-1, atol=1e-6)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"{name}: expected shape (n, k) with k >= 2, got shape {arr.shape}")
    return arr


def _draw(q: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(q, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random((reps, q.shape[0], 1))
    return (u > cdf[None, :, :]).sum(axis=2).astype(np.int64)


def sample_labels(q: Any, reps: int, rng: Any) -> np.ndarray:
    """``reps`` independent label vectors drawn from the rows of ``q`` (n, k): shape (reps, n).

    ``q``: rows on the simplex (within 1e-6); ``rng``: a NumPy Generator or an int seed.
    """
    return _draw(_rows(q), positive_int(reps, "reps"), as_generator(rng))


def distort(q: Any, kind: str, level: float) -> np.ndarray:
    """A distorted report of the truth ``q`` (n, k).

    ``kind="temperature"``: ``softmax(log q / level)`` (level < 1 sharpens, > 1 flattens);
    ``kind="snap"``: ``q`` averaged over ``level`` (an int, 1 to n) equal-mass groups of the truth's
    confidence.
    """
    kind = one_of(kind, "kind", ("temperature", "snap"))
    q = _rows(q)
    if kind == "temperature":
        level = positive_float(level, "level")
        return _softmax(np.log(np.clip(q, 1e-300, None)) / level)
    if kind == "snap":
        groups = int_in_range(level, "level", 1, q.shape[0])
        order = np.argsort(q.max(axis=1), kind="stable")
        g = np.empty(q.shape[0], dtype=np.int64)
        g[order] = np.arange(q.shape[0]) * groups // q.shape[0]
        sums = np.stack([np.bincount(g, q[:, c], groups) for c in range(q.shape[1])], 1)
        return (sums / np.bincount(g, minlength=groups)[:, None])[g]
    raise AssertionError(kind)  # unreachable: one_of checked it


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

    def moments(self, level: int) -> tuple[float, float]:
        """``(E||p||^2, E[(max_c p_c)^2])`` of predictor ``level`` over fresh inputs (exact: a sum over
        types weighted by ``freq``). A calibrated predictor's expected truthful errors are closed
        forms of these (README, Blackwell)."""
        level = int_in_range(level, "level", 0, len(self.type_tables) - 1)
        t = self.type_tables[level]
        return float(self.freq @ (t**2).sum(axis=1)), float(self.freq @ t.max(axis=1) ** 2)


def blackwell_problem(
    n: int,
    k: int,
    rng: Any,
    *,
    n_types: int = 64,
    branching: int = 4,
    concentration: float = 0.5,
) -> BlackwellProblem:
    """The nested-pooling problem of the module docstring. ``n_types`` must be a power of ``branching``;
    the chain has ``log_branching(n_types) + 1`` predictors, finest (the truth) first."""
    n = positive_int(n, "n")
    k = int_in_range(k, "k", 2)
    branching = int_in_range(branching, "branching", 2)
    n_types = int_in_range(n_types, "n_types", branching)
    concentration = positive_float(concentration, "concentration")
    rng = as_generator(rng)
    levels = round(np.log(n_types) / np.log(branching))
    if branching**levels != n_types:
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
