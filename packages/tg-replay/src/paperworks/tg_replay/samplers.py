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
from collections.abc import Mapping
from typing import Any

import numpy as np

from paperworks.core.validate import as_generator, finite_float, positive_int

__all__ = [
    "MatchedWindowSampler",
    "RecencyWindowSampler",
    "Sampler",
    "TruncatedGeometricSampler",
    "UniformSampler",
    "make_sampler",
    "sampler_from_state",
    "truncated_geometric_mean",
]


def _check_size(size: object) -> int:
    if isinstance(size, bool | np.bool_) or not isinstance(size, int | np.integer):
        raise TypeError(f"size: expected an int number of stored transitions, got {type(size).__name__}")
    if size < 1:
        raise ValueError(
            f"size: cannot sample from an empty buffer (size={int(size)}); add transitions first"
        )
    return int(size)


def _check_batch(batch_size: object, size: int, replace: object) -> int:
    if not isinstance(replace, bool | np.bool_):
        raise TypeError(f"replace: expected a bool, got {type(replace).__name__}")
    batch_size = positive_int(batch_size, "batch_size")
    if not replace and batch_size > size:
        raise ValueError(
            f"batch_size: {batch_size} exceeds the {size} stored transitions; "
            "sampling without replacement needs batch_size <= size (or pass replace=True)"
        )
    return batch_size


# Bernoulli-number coefficients B_2k / (2k)! of t / (e^t - 1) = 1 - t/2 + sum_k B_2k t^2k / (2k)!
_BERNOULLI_SERIES = (
    1 / 12,
    -1 / 720,
    1 / 30240,
    -1 / 1209600,
    1 / 47900160,
    -691 / 1307674368000,
    1 / 74724249600,
)


def _g(t: float) -> float:
    """``t / (e^t - 1) - 1`` for ``t > 0``, to full precision (a series below 0.5, no overflow above)."""
    if t < 0.5:
        t2 = t * t
        acc = 0.0
        for coef in reversed(_BERNOULLI_SERIES):
            acc = acc * t2 + coef
        return -0.5 * t + acc * t2
    return -t * math.exp(-t) / math.expm1(-t) - 1.0


def truncated_geometric_mean(p: float, size: int) -> float:
    """``E[a]`` of the truncated geometric law ``P(a) ∝ (1-p)^a`` on ``a = 0..size-1``, stably.

    With ``c = -log(1-p)``: ``E[a] = 1/(e^c - 1) - n/(e^(nc) - 1)``. For ``c >= 0.5`` that form is
    used as it stands (no cancellation: the second term is at most 3/4 of the first); for smaller
    ``c`` it is ``(g(c) - g(nc)) / c`` with ``g(t) = t/(e^t - 1) - 1`` summed as a Bernoulli series
    below 0.5, which avoids the ``1/p - 1/p`` cancellation of ``q/p - n q^n / (1 - q^n)`` as
    ``p -> 0`` (where ``E[a] -> (n - 1)/2``).
    """
    n = _check_size(size)
    p = finite_float(p, "p")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p: the truncated geometric parameter must lie in (0, 1], got {p!r}")
    if n == 1 or p == 1.0:
        return 0.0
    c = -math.log1p(-p)
    if c >= 0.5:
        first = 1.0 / math.expm1(c) if c < 700 else 0.0
        nc = n * c
        second = n / math.expm1(nc) if nc < 700 else 0.0
        return first - second
    return (_g(c) - _g(n * c)) / c


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
        gen = as_generator(rng)
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

    def params(self) -> dict[str, Any]:
        """The sampler's parameters (JSON-able); :func:`sampler_from_state` rebuilds it from them."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """``{"name": ..., "params": ...}``: everything that defines the sampler (it holds no RNG).

        The generators and the newest-slot anchor live in the buffers that use a sampler
        (:class:`~paperworks.tg_replay.buffer.RingBuffer`, the TorchRL and SB3 adapters), which save
        them with this state.
        """
        return {"name": self.name, "params": self.params()}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Check that ``state_dict`` describes this sampler (same name and parameters)."""
        other = sampler_from_state(state_dict)
        if other.state_dict() != self.state_dict():
            raise ValueError(
                f"state_dict: describes {other!r}, not this {self!r}; build the sampler with "
                "sampler_from_state(state_dict) instead"
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sampler) and other.state_dict() == self.state_dict()

    def __hash__(self) -> int:
        return hash(repr(self.state_dict()))

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
        if isinstance(p, bool | np.bool_) or not isinstance(p, int | float | np.floating | np.integer):
            raise TypeError(f"p: expected a float in (0, 1], got {type(p).__name__}")
        p = float(p)
        if not (math.isfinite(p) and 0.0 < p <= 1.0):
            raise ValueError(f"p: the truncated geometric parameter must lie in (0, 1], got {p!r}")
        self.p = p
        self._log_q = math.log1p(-p) if p < 1.0 else -math.inf

    @classmethod
    def from_expected_age(cls, mean_age: float) -> TruncatedGeometricSampler:
        """TG whose *untruncated* mean age is ``mean_age >= 0`` (``p = 1 / (1 + mean_age)``)."""
        mean_age = finite_float(mean_age, "mean_age")
        if mean_age < 0:
            raise ValueError(f"mean_age: expected a finite number >= 0, got {mean_age!r}")
        return cls(1.0 / (1.0 + mean_age))

    @classmethod
    def from_expected_recency(cls, mean_age: float, size: int) -> TruncatedGeometricSampler:
        """TG whose expected age *in a buffer of* ``size`` transitions is ``mean_age``.

        Solves ``E_size[a](p) = mean_age`` for ``p`` (the truncated mean falls monotonically from
        ``(size - 1)/2`` at ``p -> 0`` to 0 at ``p = 1``), by bisection on ``log(-log(1 - p))`` to
        double precision. ``mean_age`` must lie in ``[0, (size - 1)/2)``: the upper end is uniform
        replay, which no ``p > 0`` reaches.
        """
        n = _check_size(size)
        mu = finite_float(mean_age, "mean_age")
        top = (n - 1) / 2.0
        if not 0.0 <= mu < top:
            raise ValueError(
                f"mean_age: expected a number in [0, (size - 1)/2 = {top:g}) for size={n} "
                f"(the upper end is uniform replay), got {mu!r}"
            )
        if mu == 0.0:
            return cls(1.0)

        def mean(c: float) -> float:
            return truncated_geometric_mean(-math.expm1(-c), n)

        hi = math.log1p(1.0 / mu)  # E(hi) <= 1/(e^hi - 1) = mu
        lo = hi
        while mean(lo) <= mu:
            lo *= 0.5
            if lo < 1e-300 or -math.expm1(-lo) == 0.0:
                raise ValueError(
                    f"mean_age: {mu!r} is too close to uniform's {top:g} for a representable p at size={n}"
                )
        llo, lhi = math.log(lo), math.log(hi)
        for _ in range(200):
            mid = 0.5 * (llo + lhi)
            if mid in (llo, lhi):
                break
            if mean(math.exp(mid)) > mu:
                llo = mid
            else:
                lhi = mid
        c = math.exp(0.5 * (llo + lhi))
        return cls(min(1.0, -math.expm1(-c)))

    def params(self) -> dict[str, Any]:
        return {"p": self.p}

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
        """``E[a] = q/p - n q^n / (1 - q^n)``, evaluated stably (:func:`truncated_geometric_mean`)."""
        return truncated_geometric_mean(self.p, _check_size(size))

    def entropy(self, size: int) -> float:
        """``H = log((1 - q^n)/p) - E[a] log q`` in nats (``-> log n`` as ``p -> 0``)."""
        size = _check_size(size)
        if self.p == 1.0 or size == 1:
            return 0.0
        return math.log(self._z(size) / self.p) - self.expected_recency(size) * self._log_q

    def __repr__(self) -> str:
        return f"TruncatedGeometricSampler(p={self.p:g})"


class RecencyWindowSampler(Sampler):
    """Uniform over the ``window`` newest transitions (all of them while ``n < window``).

    ``m = min(window, n)``: ``P(a) = 1/m`` for ``a < m``, ``E[a] = (m-1)/2``, ``H = log m``.
    """

    name = "window"

    def __init__(self, window: int) -> None:
        self.window = positive_int(window, "window")

    def params(self) -> dict[str, Any]:
        return {"window": self.window}

    @classmethod
    def matched_to(cls, sampler: Sampler, size: int) -> RecencyWindowSampler:
        """The window whose expected recency at ``size`` is closest to ``sampler``'s: ``W = 2E[a] + 1``."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"sampler: expected a Sampler, got {type(sampler).__name__}")
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

    name = "matched_window"

    def __init__(self, reference: Sampler) -> None:
        if not isinstance(reference, Sampler):
            raise TypeError(f"reference: expected a Sampler, got {type(reference).__name__}")
        self.reference = reference

    def params(self) -> dict[str, Any]:
        return {"reference": self.reference.state_dict()}

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


SAMPLER_NAMES = ("matched_window", "tg", "uniform", "window")


def make_sampler(name: str, **kwargs: Any) -> Sampler:
    """An age sampler by name.

    ``"uniform"``; ``"tg"`` with ``p=`` or ``mean_age=`` (untruncated) or ``mean_age=`` and ``size=``
    (truncated, :meth:`TruncatedGeometricSampler.from_expected_recency`); ``"window"`` with
    ``window=``; ``"matched_window"`` with the TG parameters, matched to that TG sampler.
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected one of {list(SAMPLER_NAMES)}, got {type(name).__name__}")
    if name == "uniform":
        if kwargs:
            raise TypeError(f"make_sampler('uniform'): takes no parameters, got {sorted(kwargs)}")
        return UniformSampler()
    if name in ("tg", "matched_window"):
        keys = set(kwargs)
        if keys == {"p"}:
            tg = TruncatedGeometricSampler(kwargs["p"])
        elif keys == {"mean_age"}:
            tg = TruncatedGeometricSampler.from_expected_age(kwargs["mean_age"])
        elif keys == {"mean_age", "size"}:
            tg = TruncatedGeometricSampler.from_expected_recency(kwargs["mean_age"], kwargs["size"])
        else:
            raise TypeError(
                f"make_sampler({name!r}): expected p=, mean_age= or mean_age= with size=, "
                f"got {sorted(kwargs)}"
            )
        return tg if name == "tg" else MatchedWindowSampler(tg)
    if name == "window":
        if set(kwargs) != {"window"}:
            raise TypeError(f"make_sampler('window'): expected window=, got {sorted(kwargs)}")
        return RecencyWindowSampler(kwargs["window"])
    raise ValueError(f"name: unknown sampler {name!r}; expected one of {list(SAMPLER_NAMES)}")


def sampler_from_state(state_dict: Mapping[str, Any]) -> Sampler:
    """The sampler a :meth:`Sampler.state_dict` describes."""
    if not isinstance(state_dict, Mapping) or set(state_dict) != {"name", "params"}:
        raise ValueError("state_dict: expected a mapping with exactly the keys 'name' and 'params'")
    name, params = state_dict["name"], state_dict["params"]
    if not isinstance(params, Mapping):
        raise ValueError(f"state_dict: 'params' expected a mapping, got {type(params).__name__}")
    if name == "matched_window":
        if set(params) != {"reference"}:
            raise ValueError(
                f"state_dict: matched_window expects params {{'reference'}}, got {sorted(params)}"
            )
        return MatchedWindowSampler(sampler_from_state(params["reference"]))
    return make_sampler(name, **params)
