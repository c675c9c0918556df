"""The PAC protocol with bandit (or full) feedback, error curves and the sample complexity ``m(eps)``.

Generative model of a run: a finite class ``H`` on points ``0..|X|-1``, a target ``h* in H`` (realizable),
a distribution ``D`` over the points (:func:`geometric_weights`: ``D(x) ~ ratio^x``, so later points are
rare), and i.i.d. points ``x_1, x_2, ... ~ D`` (:class:`Stream`). Latent: ``h*``; observed by a bandit
learner: ``x_t`` and ``1[y_hat_t = h*(x_t)]``. The error of the output after ``t`` rounds is
``err_t = D(output_t(x) != h*(x))``, computed exactly (no test sample).

``m(eps)`` (:func:`sample_complexity`): over ``n`` independent draws of the stream (and of the learner's
coins), the smallest ``t >= 1`` at which at least a fraction ``confidence`` of the draws have
``err_t <= eps``.

A run stops once the points the learner does not know yet (candidate list of two or more labels) carry
at most ``stop_mass`` of ``D``: known points stay known, so from then on ``err_t <= stop_mass``, and the
curve answers ``err_t <= eps`` for every ``eps >= stop_mass`` and every later ``t``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import fraction, int_in_range, positive_float, probability_vector

from .learners import FullInformationERM, ListCascade, UniformExploration, VersionSpace

__all__ = [
    "METHODS",
    "ErrorCurve",
    "Stream",
    "check_eps",
    "geometric_weights",
    "make_learner",
    "measure_sample_complexity",
    "run_protocol",
    "sample_complexity",
    "success_rate",
]


def geometric_weights(n_points: int, ratio: float = 0.5) -> np.ndarray:
    """``D(x) = ratio^x / sum_j ratio^j`` on ``0..n_points-1`` (``ratio`` in ``(0, 1]``; 1 is uniform)."""
    n = int_in_range(n_points, "n_points", 1)
    r = fraction(ratio, "ratio", open_low=True)
    w = r ** np.arange(n, dtype=float)
    return w / w.sum()


def check_weights(weights: object, n_points: int, name: str = "weights") -> np.ndarray:
    """A probability vector over ``n_points`` points."""
    w = probability_vector(weights, name)
    if w.shape != (n_points,):
        raise ValueError(f"{name}: expected shape ({n_points},), got {w.shape}")
    return w


def check_eps(eps: object, name: str = "eps") -> float:
    """An accuracy or confidence parameter in the open interval ``(0, 1)``."""
    return fraction(eps, name, open_low=True, open_high=True)


class Stream:
    """I.i.d. points from ``weights``, drawn in chunks from a generator seeded by ``seed`` and kept: every
    learner that reads the same :class:`Stream` sees the same sequence (paired comparisons)."""

    def __init__(self, weights: object, seed: int, chunk: int = 4096) -> None:
        self.weights = probability_vector(weights, "weights")
        self.rng = np.random.default_rng(int_in_range(seed, "seed", 0))
        self.chunk = int_in_range(chunk, "chunk", 1)
        self._points: list[int] = []

    def points(self, start: int, stop: int) -> list[int]:
        """Points ``x_{start+1}, ..., x_stop`` (0-based slice ``[start, stop)``)."""
        while len(self._points) < stop:
            n = max(self.chunk, stop - len(self._points))
            self._points.extend(self.rng.choice(self.weights.size, size=n, p=self.weights).tolist())
        return self._points[start:stop]


@dataclass(frozen=True, eq=False)
class ErrorCurve:
    """``err_t`` of one run as a step function: ``errors[i]`` holds from round ``times[i]`` until the
    next change (``times[0] = 0``); ``rounds`` simulated; ``censored``: stopped by ``max_rounds`` before
    the unknown points' mass fell to ``stop_mass``."""

    times: np.ndarray = field(repr=False)
    errors: np.ndarray = field(repr=False)
    rounds: int
    stop_mass: float
    censored: bool
    informative: int  # rounds whose feedback changed the learner

    def error_at(self, t: int) -> float:
        """``err_t`` for ``0 <= t <= rounds``."""
        if not 0 <= t <= self.rounds:
            raise ValueError(f"t: expected 0 <= t <= {self.rounds}, got {t}")
        return float(self.errors[np.searchsorted(self.times, t, side="right") - 1])

    @property
    def final_error(self) -> float:
        return float(self.errors[-1])


def run_protocol(
    learner: VersionSpace,
    target: object,
    weights: object,
    stream: Stream,
    *,
    stop_mass: float,
    max_rounds: int = 1_000_000,
) -> ErrorCurve:
    """Run ``learner`` on ``stream`` against ``target`` until the unknown points weigh ``<= stop_mass``.

    Bandit feedback for learners with ``propose``/``update(x, y_pred, correct)``; the true label for
    :class:`~paperworks.listcascade.learners.FullInformationERM`. Rounds at known points are counted but
    skipped: no learner's state changes there (a version space keeps its one label; for the weighted
    ERM, every maximiser gains the same amount).
    """
    n = learner.n_points
    w = check_weights(weights, n)
    t_arr = np.asarray(target)
    if t_arr.shape != (n,) or t_arr.dtype.kind not in "iu":
        raise ValueError(f"target: expected {n} integer labels, got shape {t_arr.shape}, dtype {t_arr.dtype}")
    if not np.any(np.all(learner.hypotheses == t_arr[None, :], axis=1)):
        from ._validate import NonRealizableError

        raise NonRealizableError(
            "target: not a hypothesis of the learner's class (the setting is realizable)"
        )
    stop_mass = positive_float(stop_mass, "stop_mass")
    max_rounds = int_in_range(max_rounds, "max_rounds", 1)
    full = isinstance(learner, FullInformationERM)
    tgt = t_arr.tolist()
    kn = learner.known()
    known = kn.tolist()
    unknown_mass = float(w[~kn].sum())
    times, errors = [0], [learner.error(t_arr, w)]
    t = informative = 0
    while unknown_mass > stop_mass and t < max_rounds:
        for x in stream.points(t, min(t + stream.chunk, max_rounds)):
            t += 1
            if known[x]:
                continue
            if full:
                changed = learner.update(x, tgt[x])
            else:
                y = learner.propose(x)
                changed = learner.update(x, y, y == tgt[x])
            if changed:
                informative += 1
                kn = learner.known()
                known = kn.tolist()
                unknown_mass = float(w[~kn].sum())
                times.append(t)
                errors.append(learner.error(t_arr, w))
                if unknown_mass <= stop_mass:
                    break
    return ErrorCurve(
        np.asarray(times, dtype=np.int64),
        np.asarray(errors, dtype=float),
        t,
        stop_mass,
        unknown_mass > stop_mass,
        informative,
    )


def success_rate(curves: Sequence[ErrorCurve], eps: float) -> np.ndarray:
    """``out[t]`` (``t = 0..max rounds``): the fraction of runs with ``err_t <= eps``. After a run ends,
    ``err_t <= stop_mass`` (uncensored) counts as success for ``eps >= stop_mass``; a censored run keeps
    its last error."""
    if not curves:
        raise ValueError("curves: expected at least one run")
    eps = check_eps(eps)
    horizon = max(c.rounds for c in curves)
    ok = np.zeros((len(curves), horizon + 1), dtype=bool)
    for i, c in enumerate(curves):
        if eps < c.stop_mass and not c.censored:
            raise ValueError(
                f"eps: {eps} is below the runs' stop_mass {c.stop_mass}; rerun with a smaller one"
            )
        spans = np.diff(np.append(c.times, c.rounds + 1))
        ok[i, : c.rounds + 1] = np.repeat(c.errors <= eps, spans)
        ok[i, c.rounds + 1 :] = (not c.censored) or bool(c.errors[-1] <= eps)
    return ok.mean(axis=0)


def sample_complexity(curves: Sequence[ErrorCurve], eps: float, confidence: float = 0.9) -> int | None:
    """``m(eps)``: the smallest ``t >= 1`` with ``success_rate(curves, eps)[t] >= confidence`` (None when
    no simulated round reaches it, which only censored runs allow)."""
    conf = check_eps(confidence, "confidence")
    rate = success_rate(curves, eps)
    hit = np.flatnonzero(rate[1:] >= conf - 1e-12)
    return int(hit[0]) + 1 if hit.size else None


METHODS = ("listcascade", "uniform_iw", "uniform_vs", "full_info")


def make_learner(
    method: str, hypotheses: object, n_labels: int | None = None, *, rng: object = None
) -> VersionSpace:
    """A fresh learner by name: ``"listcascade"``, ``"uniform_iw"``, ``"uniform_vs"`` (uniform exploration
    with the weighted or the consistent ERM) or ``"full_info"``."""
    from paperworks.core.validate import one_of

    one_of(method, "method", METHODS)
    if method == "listcascade":
        return ListCascade(hypotheses, n_labels, rng=rng)
    if method == "full_info":
        return FullInformationERM(hypotheses, n_labels, rng=rng)
    return UniformExploration(
        hypotheses, n_labels, estimator="iw" if method == "uniform_iw" else "consistent", rng=rng
    )


def measure_sample_complexity(
    hypotheses: object,
    target: object,
    weights: object,
    *,
    eps: float,
    delta: float = 0.1,
    method: str = "listcascade",
    n_labels: int | None = None,
    n_draws: int = 20,
    seed: int = 0,
    max_rounds: int = 1_000_000,
) -> int | None:
    """``m(eps, delta)`` of a method on one problem: rounds until ``err <= eps`` on at least ``1 - delta``
    of ``n_draws`` independent streams (draw ``i`` uses stream seed ``(seed, i)`` and learner seed
    ``(seed, i)``, so methods measured with one ``seed`` share their streams).

    ``eps`` and ``delta`` must lie in ``(0, 1)``; ``target`` must be a hypothesis of the class. Returns
    None when ``max_rounds`` is not enough.
    """
    from ._validate import check_class, check_target

    e = check_eps(eps, "eps")
    dl = check_eps(delta, "delta")
    h, k = check_class(hypotheses, n_labels=n_labels)
    t = check_target(target, h)
    w = check_weights(weights, h.shape[1])
    n = int_in_range(n_draws, "n_draws", 1)
    s = int_in_range(seed, "seed", 0)
    curves = []
    for i in range(n):
        sub = int(np.random.SeedSequence([s, i]).generate_state(1)[0])
        learner = make_learner(method, h, k, rng=sub)
        curves.append(run_protocol(learner, t, w, Stream(w, sub), stop_mass=e, max_rounds=max_rounds))
    return sample_complexity(curves, e, 1.0 - dl)
