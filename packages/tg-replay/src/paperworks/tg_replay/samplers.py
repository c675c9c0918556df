"""Replay samplers over transition *ages* (arXiv 2605.10236, Sec. "Truncated Geometric replay").

Every sampler here draws the age ``a`` of a transition, with ``a = 0`` the newest transition in
the buffer and ``a = n - 1`` the oldest of the ``n`` stored ones. A ring buffer maps an age to its
storage slot (``slot = (newest - a) mod capacity``), so the same sampler serves any buffer.

* :class:`UniformSampler`: ``P(a) = 1 / n`` (the standard baseline).
* :class:`TruncatedGeometricSampler`: ``P(a) = p (1-p)^a / (1 - (1-p)^n)``, a geometric law on
  ages truncated to the buffer's current size; O(1) per draw (one geometric variate and a modulo,
  since ``G mod n`` of ``G ~ Geometric(p)`` on ``{0, 1, ...}`` has exactly this pmf).
* :class:`RecencyWindowSampler`: uniform over the ``W`` newest transitions, the low-entropy
  recency baseline; :meth:`RecencyWindowSampler.matched_to` picks ``W`` so that its expected
  recency equals a TG sampler's.

Prioritized experience replay (a sum-tree over storage slots, not ages) is in
:mod:`paperworks.tg_replay.per`.

Each sampler gives its pmf over ages, its expected recency ``E[a]`` and its entropy ``H`` (in
nats), in closed form; :mod:`paperworks.tg_replay.diagnostics` computes the same quantities for
any pmf, which the tests use as the independent route.
"""

from __future__ import annotations

import abc
import math

import numpy as np

__all__ = [
    "MatchedWindowSampler",
    "RecencyWindowSampler",
    "Sampler",
    "TruncatedGeometricSampler",
    "UniformSampler",
    "make_sampler",
]


def _check_size(size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size: expected an int number of stored transitions, got {type(size).__name__}")
    if size < 1:
        raise ValueError(
            f"size: cannot sample from an empty buffer (size={int(size)}); add transitions first"
        )
    return int(size)


def _check_batch(batch_size: object, size: int, replace: bool) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"batch_size: expected a positive int, got {type(batch_size).__name__}")
    if batch_size < 1:
        raise ValueError(f"batch_size: expected a positive int, got {int(batch_size)}")
    if not replace and batch_size > size:
        raise ValueError(
            f"batch_size: {int(batch_size)} exceeds the {size} stored transitions; "
            "sampling without replacement needs batch_size <= size (or pass replace=True)"
        )
    return int(batch_size)


def _rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


class Sampler(abc.ABC):
    """A replay sampling distribution over ages ``0..size-1`` (0 = newest)."""

    name: str = "sampler"

    @abc.abstractmethod
    def pmf(self, size: int) -> np.ndarray:
        """Probabilities of ages ``0..size-1``, shape ``(size,)``, summing to 1."""

    @abc.abstractmethod
    def _draw(self, size: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """Ages drawn with replacement, shape ``(batch_size,)``, int64."""

    def sample(
        self,
        size: int,
        batch_size: int,
        *,
        rng: np.random.Generator | int | None = None,
        replace: bool = True,
    ) -> np.ndarray:
        """Draw ``batch_size`` ages from a buffer holding ``size`` transitions.

        Returns an int64 array of shape ``(batch_size,)`` with values in ``[0, size)``. With
        ``replace=False`` the ages are distinct (a draw without replacement proportional to the
        pmf, O(size)); it needs ``batch_size <= size``.
        """
        size = _check_size(size)
        batch_size = _check_batch(batch_size, size, replace)
        gen = _rng(rng)
        if replace:
            return self._draw(size, batch_size, gen)
        return gen.choice(size, size=batch_size, replace=False, p=self.pmf(size)).astype(np.int64)

    def expected_recency(self, size: int) -> float:
        """Expected age ``E[a] = sum_a a P(a)`` of a sampled transition (0 = newest)."""
        size = _check_size(size)
        return float(np.dot(np.arange(size, dtype=float), self.pmf(size)))

    def entropy(self, size: int) -> float:
        """Entropy ``H = -sum_a P(a) log P(a)`` of the sampling distribution, in nats."""
        size = _check_size(size)
        p = self.pmf(size)
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class UniformSampler(Sampler):
    """Uniform replay: ``P(a) = 1/n``, ``E[a] = (n-1)/2``, ``H = log n``."""

    name = "uniform"

    def pmf(self, size: int) -> np.ndarray:
        size = _check_size(size)
        return np.full(size, 1.0 / size)

    def _draw(self, size: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, size, size=batch_size, dtype=np.int64)

    def expected_recency(self, size: int) -> float:
        size = _check_size(size)
        return (size - 1) / 2.0

    def entropy(self, size: int) -> float:
        return math.log(_check_size(size))


class TruncatedGeometricSampler(Sampler):
    """Truncated Geometric (TG) replay with success probability ``p`` in ``(0, 1]``.

    ``P(a) = p q^a / (1 - q^n)`` for ages ``a = 0..n-1``, ``q = 1 - p``. Closed forms (with
    ``Z = 1 - q^n``)::

        E[a] = q / p - n q^n / Z
        H    = -log(p / Z) - E[a] log q

    Untruncated (``n -> inf``) the mean age is ``(1-p)/p``: ``p = 1/(1 + mu)`` targets mean age
    ``mu`` (:meth:`from_expected_age`). Among all distributions on ``{0, 1, ...}`` with a given
    mean, the geometric one has the largest entropy, which is why TG biases toward recent data
    while staying high-entropy. ``p = 1`` always replays the newest transition.
    """

    name = "tg"

    def __init__(self, p: float) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)):
            raise TypeError(f"p: expected a float in (0, 1], got {type(p).__name__}")
        p = float(p)
        if not (math.isfinite(p) and 0.0 < p <= 1.0):
            raise ValueError(f"p: the truncated geometric parameter must lie in (0, 1], got {p!r}")
        self.p = p
        self._log_q = math.log1p(-p) if p < 1.0 else -math.inf

    @classmethod
    def from_expected_age(cls, mean_age: float) -> TruncatedGeometricSampler:
        """TG whose *untruncated* mean age is ``mean_age >= 0`` (``p = 1 / (1 + mean_age)``)."""
        mean_age = float(mean_age)
        if not (math.isfinite(mean_age) and mean_age >= 0):
            raise ValueError(f"mean_age: expected a finite number >= 0, got {mean_age!r}")
        return cls(1.0 / (1.0 + mean_age))

    def _q_pow(self, size: int) -> float:
        return 0.0 if self.p == 1.0 else math.exp(size * self._log_q)

    def _z(self, size: int) -> float:
        return 1.0 if self.p == 1.0 else -math.expm1(size * self._log_q)

    def pmf(self, size: int) -> np.ndarray:
        size = _check_size(size)
        if self.p == 1.0:
            out = np.zeros(size)
            out[0] = 1.0
            return out
        log_pmf = math.log(self.p) - math.log(self._z(size)) + np.arange(size) * self._log_q
        return np.exp(log_pmf)

    def _draw(self, size: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        if self.p == 1.0:
            return np.zeros(batch_size, dtype=np.int64)
        g = rng.geometric(self.p, size=batch_size)  # support {1, 2, ...}
        g -= 1
        if g.max(initial=0) >= size:
            np.remainder(g, size, out=g)
        return g

    def expected_recency(self, size: int) -> float:
        size = _check_size(size)
        if self.p == 1.0:
            return 0.0
        q = 1.0 - self.p
        return q / self.p - size * self._q_pow(size) / self._z(size)

    def entropy(self, size: int) -> float:
        size = _check_size(size)
        if self.p == 1.0:
            return 0.0
        return -(math.log(self.p) - math.log(self._z(size))) - self.expected_recency(size) * self._log_q

    def __repr__(self) -> str:
        return f"TruncatedGeometricSampler(p={self.p:g})"


class RecencyWindowSampler(Sampler):
    """Uniform over the ``window`` newest transitions (all of them while ``n < window``).

    ``m = min(window, n)``: ``P(a) = 1/m`` for ``a < m``, ``E[a] = (m-1)/2``, ``H = log m``.
    """

    name = "window"

    def __init__(self, window: int) -> None:
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)):
            raise TypeError(f"window: expected a positive int, got {type(window).__name__}")
        if window < 1:
            raise ValueError(f"window: expected a positive int, got {int(window)}")
        self.window = int(window)

    @classmethod
    def matched_to(cls, sampler: Sampler, size: int) -> RecencyWindowSampler:
        """The window whose expected recency at ``size`` is closest to ``sampler``'s: ``W = 2E[a] + 1``."""
        target = sampler.expected_recency(size)
        return cls(max(1, round(2.0 * target + 1.0)))

    def _m(self, size: int) -> int:
        return min(self.window, _check_size(size))

    def pmf(self, size: int) -> np.ndarray:
        size = _check_size(size)
        m = self._m(size)
        out = np.zeros(size)
        out[:m] = 1.0 / m
        return out

    def _draw(self, size: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self._m(size), size=batch_size, dtype=np.int64)

    def expected_recency(self, size: int) -> float:
        return (self._m(size) - 1) / 2.0

    def entropy(self, size: int) -> float:
        return math.log(self._m(size))

    def __repr__(self) -> str:
        return f"RecencyWindowSampler(window={self.window})"


class MatchedWindowSampler(Sampler):
    """A recency window re-matched at every size to a reference sampler's expected recency.

    At buffer size ``n`` the window is ``m(n) = clip(round(2 E_ref[a] + 1), 1, n)``, so its
    expected recency ``(m - 1) / 2`` tracks the reference's (up to rounding) while its entropy
    ``log m`` is lower: the low-entropy control of the paper's "comparable expected recency"
    comparison.
    """

    name = "window"

    def __init__(self, reference: Sampler) -> None:
        if not isinstance(reference, Sampler):
            raise TypeError(f"reference: expected a Sampler, got {type(reference).__name__}")
        self.reference = reference

    def window(self, size: int) -> int:
        size = _check_size(size)
        return int(min(size, max(1, round(2.0 * self.reference.expected_recency(size) + 1.0))))

    def pmf(self, size: int) -> np.ndarray:
        return RecencyWindowSampler(self.window(size)).pmf(size)

    def _draw(self, size: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self.window(size), size=batch_size, dtype=np.int64)

    def expected_recency(self, size: int) -> float:
        return (self.window(size) - 1) / 2.0

    def entropy(self, size: int) -> float:
        return math.log(self.window(size))

    def __repr__(self) -> str:
        return f"MatchedWindowSampler(reference={self.reference!r})"


def resolve_sampler(p: float | None, sampler: Sampler | None) -> Sampler:
    """The age sampler of a buffer adapter: ``sampler`` if given, else ``TruncatedGeometricSampler(p)``."""
    if sampler is None:
        if p is None:
            raise ValueError("p: pass the TG parameter p in (0, 1] or a sampler=")
        sampler = TruncatedGeometricSampler(p)
    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler: expected a paperworks.tg_replay Sampler, got {type(sampler).__name__}")
    return sampler


def make_sampler(name: str, **kwargs: float) -> Sampler:
    """An age sampler by name: ``"uniform"``, ``"tg"`` (``p=``/``mean_age=``), ``"window"`` (``window=``)."""
    if name == "uniform":
        if kwargs:
            raise TypeError(f"make_sampler('uniform'): takes no parameters, got {sorted(kwargs)}")
        return UniformSampler()
    if name == "tg":
        if set(kwargs) == {"p"}:
            return TruncatedGeometricSampler(kwargs["p"])
        if set(kwargs) == {"mean_age"}:
            return TruncatedGeometricSampler.from_expected_age(kwargs["mean_age"])
        raise TypeError(f"make_sampler('tg'): expected exactly one of p= or mean_age=, got {sorted(kwargs)}")
    if name == "window":
        if set(kwargs) != {"window"}:
            raise TypeError(f"make_sampler('window'): expected window=, got {sorted(kwargs)}")
        return RecencyWindowSampler(int(kwargs["window"]))
    raise ValueError(f"name: unknown sampler {name!r}; expected one of ['tg', 'uniform', 'window']")
