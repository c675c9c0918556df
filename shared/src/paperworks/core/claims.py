"""Claims, their predicates, and verdicts that carry their uncertainty.

A claim is judged on the 95% interval of its quantity over seeds, never on the mean alone:

- ``holds``: the whole interval satisfies the predicate;
- ``not reproduced``: the whole interval violates it;
- ``inconclusive``: the interval straddles the threshold (or, with one seed and no standard error,
  there is no interval: ``inconclusive (1 seed)``).

Intervals: Student t over the seed values by default (``scipy.stats.t``); with one seed and a
per-seed standard error (``se=`` names the metric holding it, e.g. from episodes averaged inside
the seed) a normal interval. ``exact=True`` claims (closed forms, identities, counts that cannot
vary) are judged on the values alone: every seed must satisfy the predicate. A :class:`SlopeClaim`
fits ``log y = a + b log size`` per seed and judges the slope's interval against a band.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "HOLDS",
    "INCONCLUSIVE",
    "INCONCLUSIVE_1_SEED",
    "KINDS",
    "NOT_REPRODUCED",
    "VERDICTS",
    "Claim",
    "ClaimResult",
    "SlopeClaim",
    "judge",
    "loglog_slope",
    "t_interval",
]

HOLDS = "holds"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
INCONCLUSIVE_1_SEED = "inconclusive (1 seed)"
VERDICTS = (HOLDS, INCONCLUSIVE, INCONCLUSIVE_1_SEED, NOT_REPRODUCED)
KINDS = ("paper", "mechanism")
LEVEL = 0.95

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


def _t_quantile(q: float, df: int) -> float:
    from scipy import stats  # imported on first use: scipy.stats costs about a second

    return float(stats.t.ppf(q, df))


def _z_quantile(q: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(q))


def t_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """(mean, lo, hi): the Student t interval of the mean of ``values`` (>= 2 finite values)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"values: expected at least 2 values for a t interval, got {x.size}")
    if not np.all(np.isfinite(x)):
        raise ValueError("values: expected finite values")
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    if sd == 0.0:
        return mean, mean, mean
    half = _t_quantile(0.5 + level / 2, x.size - 1) * sd / math.sqrt(x.size)
    return mean, mean - half, mean + half


def loglog_slope(sizes: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    """(slope, its standard error) of the least-squares fit ``log y = a + b log size``."""
    s, y = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    if s.shape != y.shape or s.ndim != 1 or s.size < 3:
        raise ValueError(
            f"sizes, values: expected two 1-d arrays of >= 3 equal lengths, got {s.shape}, {y.shape}"
        )
    if np.any(s <= 0) or np.any(y <= 0) or not np.all(np.isfinite(y)):
        raise ValueError("sizes, values: expected positive finite numbers (a log-log fit)")
    lx, ly = np.log(s), np.log(y)
    lx_c = lx - lx.mean()
    slope = float(lx_c @ (ly - ly.mean()) / (lx_c @ lx_c))
    resid = ly - ly.mean() - slope * lx_c
    se = math.sqrt(float(resid @ resid) / (s.size - 2) / float(lx_c @ lx_c))
    return slope, se


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and the predicate that counts as reproducing it.

    ``statement``: the claim in the paper's words; ``metric``: the quantity (a key that
    :meth:`Experiment.run_seed` returns); the predicate is ``metric <op> threshold``, fixed before
    any run. ``baseline``: a second metric; the quantity is then the per-seed difference
    ``metric - baseline`` (implies ``paired``). ``paired``: the quantity is a per-seed difference of
    two methods on the same seed and data. ``exact``: the quantity cannot vary (judged on values).
    ``se``: metric holding a per-seed standard error. ``kind``: ``"paper"`` (the paper's stated
    claim) or ``"mechanism"`` (a small-scale analogue of its mechanism). ``paper_value``: the number
    the paper reports, when it gives one. ``machine_dependent``: a timing that moves with load.
    """

    key: str
    statement: str
    metric: str
    op: str
    threshold: float
    note: str = ""
    kind: str = "paper"
    paper_value: str | float | None = None
    paired: bool = False
    baseline: str | None = None
    exact: bool = False
    se: str | None = None
    machine_dependent: bool = False

    def __post_init__(self) -> None:
        _check_key(self.key)
        if self.op not in _OPS:
            raise ValueError(f"Claim {self.key!r}: op expected one of {sorted(_OPS)}, got {self.op!r}")
        if not isinstance(self.threshold, numbers.Real) or not math.isfinite(self.threshold):
            raise ValueError(
                f"Claim {self.key!r}: threshold expected a finite number, got {self.threshold!r}"
            )
        _check_common(self)
        if self.baseline is not None:
            object.__setattr__(self, "paired", True)
        if self.exact and (self.paired or self.se):
            raise ValueError(f"Claim {self.key!r}: an exact claim cannot also be paired or carry an se")

    @property
    def predicate(self) -> str:
        quantity = f"{self.metric} - {self.baseline}" if self.baseline else self.metric
        return f"{quantity} {self.op} {self.threshold:g}"

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric the claim reads."""
        return tuple(m for m in (self.metric, self.baseline, self.se) if m)

    def satisfied(self, value: float) -> bool:
        """Whether one value satisfies the predicate (NaN never does)."""
        return bool(math.isfinite(value) and _OPS[self.op](value, self.threshold))

    holds = satisfied  # the name of wave 1's API

    def judge(self, per_seed: Sequence[Mapping[str, float]]) -> ClaimResult:
        """The verdict of this claim on per-seed metric records (one mapping per seed)."""
        values = _column(self, per_seed, self.metric)
        if self.baseline is not None:
            values = values - _column(self, per_seed, self.baseline)
        n = values.size
        mean = float(values.mean())
        if self.exact:
            lo, hi = float(values.min()), float(values.max())
            ok = [self.satisfied(v) for v in values]
            verdict = HOLDS if all(ok) else NOT_REPRODUCED if not any(ok) else INCONCLUSIVE
            return ClaimResult(self, verdict, mean, lo, hi, n, "exact", values.tolist())
        if n >= 2:
            _, lo, hi = t_interval(values)
            method = "t"
        elif self.se is not None:
            se = float(_column(self, per_seed, self.se)[0])
            if se < 0:
                raise ValueError(f"claim {self.key!r}: standard error {self.se!r} is negative ({se})")
            half = _z_quantile(0.5 + LEVEL / 2) * se
            lo, hi, method = mean - half, mean + half, "normal (per-seed se)"
        else:
            return ClaimResult(self, INCONCLUSIVE_1_SEED, mean, None, None, n, "none", values.tolist())
        return ClaimResult(self, _three_valued(self, lo, hi), mean, lo, hi, n, method, values.tolist())


def _three_valued(claim: Claim, lo: float, hi: float) -> str:
    if claim.satisfied(lo) and claim.satisfied(hi):
        return HOLDS
    if not claim.satisfied(lo) and not claim.satisfied(hi):
        return NOT_REPRODUCED
    return INCONCLUSIVE


@dataclass(frozen=True)
class SlopeClaim:
    """A rate: the log-log slope of ``metric`` against ``sizes`` lies in ``band = (lo, hi)``.

    ``metric`` is a template with ``{size}`` (e.g. ``"error/n{size}"``); per seed the slope of
    ``log metric`` on ``log size`` is fitted over >= 3 sizes. With >= 2 seeds the interval is the t
    interval of the per-seed slopes; with one seed it is the regression's own t interval (residual
    df = sizes - 2) and the verdict is ``inconclusive (1 seed)``. ``holds`` when the interval lies in
    the band, ``not reproduced`` when it is disjoint from it.
    """

    key: str
    statement: str
    metric: str
    sizes: tuple[float, ...]
    band: tuple[float, float]
    note: str = ""
    kind: str = "paper"
    paper_value: str | float | None = None
    machine_dependent: bool = False

    exact = False
    paired = False
    baseline = None
    se = None

    def __post_init__(self) -> None:
        _check_key(self.key)
        if "{size}" not in self.metric:
            raise ValueError(f"SlopeClaim {self.key!r}: metric expected a template with '{{size}}'")
        sizes = tuple(self.sizes)
        if len(sizes) < 3 or len(set(sizes)) != len(sizes):
            raise ValueError(f"SlopeClaim {self.key!r}: expected >= 3 distinct sizes, got {sizes}")
        if any(isinstance(s, bool) or not isinstance(s, numbers.Real) or not s > 0 for s in sizes):
            raise ValueError(f"SlopeClaim {self.key!r}: sizes expected positive numbers, got {sizes}")
        sizes = tuple(int(s) if float(s).is_integer() else float(s) for s in sizes)
        lo, hi = self.band
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise ValueError(f"SlopeClaim {self.key!r}: band expected finite lo <= hi, got {self.band}")
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "band", (float(lo), float(hi)))
        _check_common(self)

    @property
    def predicate(self) -> str:
        return f"slope of log {self.metric.replace('{size}', '<n>')} in [{self.band[0]:g}, {self.band[1]:g}]"

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.metric.format(size=_fmt_size(s)) for s in self.sizes)

    def satisfied(self, value: float) -> bool:
        return bool(math.isfinite(value) and self.band[0] <= value <= self.band[1])

    def judge(self, per_seed: Sequence[Mapping[str, float]]) -> ClaimResult:
        cols = np.stack([_column(self, per_seed, m) for m in self.metrics], axis=1)  # (seeds, sizes)
        try:
            fits = [loglog_slope(self.sizes, row) for row in cols]
        except ValueError as e:
            raise ValueError(f"claim {self.key!r}: {e}") from None
        slopes = np.array([f[0] for f in fits])
        if slopes.size >= 2:
            mean, lo, hi = t_interval(slopes)
            method = "t over per-seed slopes"
        else:
            mean, se = fits[0]
            half = _t_quantile(0.5 + LEVEL / 2, len(self.sizes) - 2) * se
            lo, hi, method = mean - half, mean + half, "regression t (1 seed)"
        if slopes.size < 2:
            verdict = INCONCLUSIVE_1_SEED
        elif self.band[0] <= lo and hi <= self.band[1]:
            verdict = HOLDS
        elif hi < self.band[0] or lo > self.band[1]:
            verdict = NOT_REPRODUCED
        else:
            verdict = INCONCLUSIVE
        return ClaimResult(
            self, verdict, float(mean), float(lo), float(hi), int(slopes.size), method, slopes.tolist()
        )


def _fmt_size(s: float) -> str:
    return str(int(s)) if float(s).is_integer() else f"{s:g}"


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict: the estimate (mean over seeds), its interval, and the values judged."""

    claim: Claim | SlopeClaim
    verdict: str
    estimate: float
    lo: float | None
    hi: float | None
    n: int
    method: str
    values: list[float]

    @property
    def holds(self) -> bool:
        return self.verdict == HOLDS

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "key": c.key,
            "statement": c.statement,
            "metric": c.metric,
            "predicate": c.predicate,
            "note": c.note,
            "kind": c.kind,
            "paper_value": c.paper_value,
            "exact": c.exact,
            "paired": c.paired,
            "machine_dependent": c.machine_dependent,
            "verdict": self.verdict,
            "holds": self.holds,
            "estimate": self.estimate,
            "interval": None if self.lo is None else [self.lo, self.hi],
            "interval_method": self.method,
            "level": LEVEL,
            "n": self.n,
            "values": self.values,
        }


def judge(claims: Sequence[Claim | SlopeClaim], per_seed: Sequence[Mapping[str, float]]) -> list[ClaimResult]:
    """Verdicts of every claim on the per-seed records."""
    return [c.judge(per_seed) for c in claims]


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not key or not key.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"Claim.key: expected letters, digits, '-' or '_', got {key!r}")


def _check_common(c: Claim | SlopeClaim) -> None:
    if c.kind not in KINDS:
        raise ValueError(f"claim {c.key!r}: kind expected one of {KINDS}, got {c.kind!r}")
    if not isinstance(c.statement, str) or not c.statement.strip():
        raise ValueError(f"claim {c.key!r}: statement expected a non-empty string")


def _column(claim: Claim | SlopeClaim, per_seed: Sequence[Mapping[str, float]], metric: str) -> np.ndarray:
    if not per_seed:
        raise ValueError(f"claim {claim.key!r}: no per-seed results to judge")
    missing = [i for i, rec in enumerate(per_seed) if metric not in rec]
    if missing:
        raise ValueError(f"claim {claim.key!r}: metric {metric!r} is missing for seed record(s) {missing}")
    values = np.array([float(rec[metric]) for rec in per_seed])
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ValueError(
            f"claim {claim.key!r}: metric {metric!r} is not finite for seed record(s) {bad.tolist()} "
            f"({values[bad].tolist()})"
        )
    return values
