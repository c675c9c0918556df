"""Pandora's Router: the centralised index policy, vectorised over queries.

Per query the router holds, for every specialist ``k``, a blind value ``m_k`` (the cheap
estimate: a specialist may be chosen on it alone, without inspection), an inspection cost ``c_k``
and the upper/lower reservation values ``r_k``, ``r_lo_k`` of :mod:`.gaussian`. At every step, with
``y_{-k}`` the best value available without inspecting ``k`` (the outside option, every revealed
refined estimate, every other uninspected specialist's blind value), specialist ``k`` is *worth
inspecting* when ``r_lo_k < y_{-k} < r_k`` (the one-box value of information is positive). The
router inspects the worth-inspecting specialist of highest index ``r_k`` (Weitzman's order), updates
its value to the revealed refined estimate, and repeats; when no specialist is worth inspecting it
stops and routes to the best available value (revealed or blind). With ``inspection="obligatory"``
a specialist can only be taken after inspection and the rule is exactly Weitzman's (1979) optimal
policy; with ``"optional"`` (the routing setting) it is our reading of the paper's policy, Doval's
(2018) nonobligatory-inspection problem, for which no index policy is optimal in general.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import as_finite, as_nonneg, as_positive
from .gaussian import preposterior_std, reservation_value

__all__ = ["PandorasRouter", "RoutingResult", "index_policy", "pandoras_route", "per_specialist"]

Reveal = np.ndarray | Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class RoutingResult:
    """Decisions for ``n`` queries over ``K`` specialists, with their audit trail.

    ``choice`` (n,) int: the specialist routed to, ``-1`` for the outside option. ``inspected``
    (n, K) bool. ``order`` (n, K) int: the step at which each specialist was inspected (-1: never).
    ``alternative`` (n, K): the best value available without ``k`` when ``k`` was inspected (NaN
    if never). ``value`` (n, K): final beliefs (refined estimate if inspected, else the cheap one).
    ``upper``/``lower`` (n, K): reservation values; ``cost`` (n, K): inspection costs;
    ``estimation_cost`` (n,) the sum paid per query; ``expected_value`` (n,) the belief in the
    chosen specialist (the outside value for ``-1``).
    """

    choice: np.ndarray
    inspected: np.ndarray
    order: np.ndarray
    alternative: np.ndarray
    value: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    cost: np.ndarray
    estimation_cost: np.ndarray
    expected_value: np.ndarray
    specialists: tuple[str, ...] = ()

    @property
    def n_inspections(self) -> np.ndarray:
        """(n,) number of expensive-estimator calls per query."""
        return self.inspected.sum(axis=1)

    def audit(self, i: int) -> dict[str, Any]:
        """What was inspected for query ``i``, in order, why (index vs. best alternative), at what cost."""
        if not 0 <= i < self.choice.shape[0]:
            raise IndexError(f"i: expected a query index in [0, {self.choice.shape[0]}), got {i}")
        names = self.specialists or tuple(str(k) for k in range(self.value.shape[1]))
        steps = []
        for k in np.argsort(np.where(self.order[i] < 0, np.iinfo(np.int64).max, self.order[i])):
            if self.order[i, k] < 0:
                break
            steps.append(
                {
                    "step": int(self.order[i, k]),
                    "specialist": names[k],
                    "reservation_value": float(self.upper[i, k]),
                    "lower_reservation_value": float(self.lower[i, k]),
                    "best_alternative": float(self.alternative[i, k]),
                    "cost": float(self.cost[i, k]),
                    "refined_estimate": float(self.value[i, k]),
                }
            )
        c = int(self.choice[i])
        return {
            "inspections": steps,
            "routed_to": None if c < 0 else names[c],
            "routed_on": "outside option" if c < 0 else ("refined" if self.inspected[i, c] else "cheap"),
            "expected_value": float(self.expected_value[i]),
            "estimation_cost": float(self.estimation_cost[i]),
        }


def per_specialist(x: object, name: str, shape: tuple[int, int], *, kind: str = "finite") -> np.ndarray:
    """Validate ``x`` as either one value per specialist (K,) or one per query and specialist (n, K).

    Returns an (n, K) array; any other shape is an error (no silent broadcasting).
    """
    check = {"finite": as_finite, "nonneg": as_nonneg, "positive": as_positive}[kind]
    arr = check(x, name)
    if arr.shape == shape:
        return arr
    if arr.shape == (shape[1],):
        return np.broadcast_to(arr, shape).copy()
    raise ValueError(f"{name}: expected shape ({shape[1]},) or {shape}, got {arr.shape}")


def _gather_reveal(reveal: Reveal, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    if callable(reveal):
        out = np.asarray(reveal(rows, cols), dtype=np.float64)
        if out.shape != rows.shape:
            raise ValueError(f"expensive estimator: expected {rows.shape[0]} readings, got shape {out.shape}")
        if not np.isfinite(out).all():
            raise ValueError("expensive estimator: returned NaN/inf readings")
        return out
    return reveal[rows, cols]


def index_policy(
    blind: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    cost: np.ndarray,
    reveal: Reveal,
    *,
    outside: np.ndarray | float = -np.inf,
    inspection: str = "optional",
    specialists: Sequence[str] = (),
) -> RoutingResult:
    """The index policy on generic boxes (any prize law), vectorised over ``n`` queries.

    ``blind`` (n, K): value of taking a box uninspected; ``upper``/``lower`` (n, K): reservation
    values (``lower`` is ignored when inspection is obligatory); ``cost`` (n, K) >= 0; ``reveal``:
    an (n, K) array of the values inspection would reveal, or a callable ``(rows, cols) ->
    values`` called once per step with the pairs to inspect; ``outside``: scalar or (n,) value of
    routing nowhere (``-inf``: must route). Returns a :class:`RoutingResult`.
    """
    if inspection not in ("optional", "obligatory"):
        raise ValueError(f"inspection: expected 'optional' or 'obligatory', got {inspection!r}")
    blind = as_finite(blind, "blind", ndim=2)
    n, k_count = blind.shape
    upper = np.asarray(upper, dtype=np.float64)
    lower = np.asarray(lower, dtype=np.float64)
    if np.isnan(upper).any() or np.isnan(lower).any():
        raise ValueError("upper/lower: expected reservation values without NaN")
    cost = as_nonneg(cost, "cost", ndim=2)
    for name, arr in (("upper", upper), ("lower", lower), ("cost", cost)):
        if arr.shape != blind.shape:
            raise ValueError(f"{name}: expected shape {blind.shape} (the shape of blind), got {arr.shape}")
    if not callable(reveal):
        reveal = as_finite(reveal, "reveal", ndim=2)
        if reveal.shape != blind.shape:
            raise ValueError(f"reveal: expected shape {blind.shape} (the shape of blind), got {reveal.shape}")
    out_arr = np.asarray(outside, dtype=np.float64)
    if out_arr.ndim == 0:
        out_arr = np.full(n, float(out_arr))
    if out_arr.shape != (n,) or np.isnan(out_arr).any() or (out_arr == np.inf).any():
        raise ValueError(f"outside: expected a scalar or shape ({n},) of finite values or -inf")
    optional = inspection == "optional"

    value = blind.copy()
    inspected = np.zeros((n, k_count), dtype=bool)
    order = np.full((n, k_count), -1, dtype=np.int64)
    alternative = np.full((n, k_count), np.nan)
    # Working copies restricted to the queries still searching (compacted as queries stop). An
    # inspected specialist gets index -inf in the working copy, so it is never eligible again.
    rows_left = np.arange(n)
    w_avail = blind.copy() if optional else np.full((n, k_count), -np.inf)
    w_up = upper.copy()
    w_lo = lower if optional else None
    w_out = out_arr
    for step in range(k_count):
        r_ = np.arange(rows_left.size)
        top = np.argmax(w_avail, axis=1)
        t1 = w_avail[r_, top]
        w_avail[r_, top] = -np.inf
        t2 = w_avail.max(axis=1)
        w_avail[r_, top] = t1
        b1 = np.maximum(t1, w_out)  # best value available now: y_{-k} for every k but the top one
        b2 = np.maximum(t2, w_out)  # best value available without the top specialist: its y_{-k}
        elig = b1[:, None] < w_up
        up_top = w_up[r_, top]
        elig_top = b2 < up_top
        if optional:
            elig &= b1[:, None] > w_lo
            elig_top &= b2 > w_lo[r_, top]
        elig[r_, top] = elig_top
        score = np.where(elig, w_up, -np.inf)
        pick = np.argmax(score, axis=1)
        go = score[r_, pick] > -np.inf
        if not go.any():
            break
        alt = np.where(pick == top, b2, b1)
        if not go.all():
            rows_left, pick, alt = rows_left[go], pick[go], alt[go]
            w_avail, w_up, w_out = w_avail[go], w_up[go], w_out[go]
            if optional:
                w_lo = w_lo[go]
        r_ = np.arange(rows_left.size)
        revealed = _gather_reveal(reveal, rows_left, pick)
        w_avail[r_, pick] = revealed
        w_up[r_, pick] = -np.inf
        value[rows_left, pick] = revealed
        inspected[rows_left, pick] = True
        order[rows_left, pick] = step
        alternative[rows_left, pick] = alt

    final = np.where(inspected, value, blind if optional else -np.inf)
    final = np.concatenate([final, out_arr[:, None]], axis=1)
    choice = np.argmax(final, axis=1)
    expected_value = final[np.arange(n), choice]
    choice = np.where(choice == k_count, -1, choice)
    return RoutingResult(
        choice=choice,
        inspected=inspected,
        order=order,
        alternative=alternative,
        value=value,
        upper=upper,
        lower=lower,
        cost=cost,
        estimation_cost=(cost * inspected).sum(axis=1),
        expected_value=expected_value,
        specialists=tuple(specialists),
    )


def pandoras_route(
    m: np.ndarray,
    s: np.ndarray,
    tau: np.ndarray,
    cost: np.ndarray,
    readings: Reveal,
    *,
    outside: np.ndarray | float = -np.inf,
    inspection: str = "optional",
    specialists: Sequence[str] = (),
) -> RoutingResult:
    """Pandora's Router under the Gaussian signal model (functional form).

    ``m`` (n, K): cheap estimates; ``s``: cheap-estimator std, (K,) or (n, K), > 0; ``tau``:
    expensive-estimator noise std, (K,) or (n, K), >= 0; ``cost``: inspection cost, (K,) or
    (n, K), >= 0; ``readings``: (n, K) expensive readings ``Y`` (only those inspected are used) or
    a callable ``(rows, cols) -> Y``. The refined estimate is eq. (1) of :mod:`.gaussian`; the
    index is ``r = m + sigma G^{-1}(c / sigma)`` (eq. 3), computed once per specialist when
    ``s``, ``tau`` and ``cost`` are given per specialist.
    """
    m = as_finite(m, "m", ndim=2)
    shape = m.shape
    if shape[1] == 0:
        raise ValueError("m: expected at least one specialist (K >= 1)")
    s = _spec(s, "s", shape, "positive")
    tau = _spec(tau, "tau", shape, "nonneg")
    cost = _spec(cost, "cost", shape, "nonneg")
    small = s.ndim == tau.ndim == cost.ndim == 1
    if not small:
        s, tau, cost = (np.broadcast_to(a, shape) for a in (s, tau, cost))
    sigma = preposterior_std(s, tau)
    # r - m depends on (sigma, cost) only: the index is the cheap estimate plus a per-pair offset
    offset = reservation_value(np.zeros(sigma.shape), sigma, cost)
    upper = m + offset
    lower = m - offset
    weight = s * s / (s * s + tau * tau)

    if callable(readings):
        raw = readings

        def read(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
            y = np.asarray(raw(rows, cols), dtype=np.float64)
            if y.shape != rows.shape or not np.isfinite(y).all():
                raise ValueError(
                    f"readings: the expensive estimator must return {rows.shape[0]} finite values, "
                    f"got shape {y.shape}"
                )
            return y

    else:
        y_all = as_finite(readings, "readings", ndim=2)
        if y_all.shape != shape:
            raise ValueError(f"readings: expected shape {shape} (the shape of m), got {y_all.shape}")

        def read(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
            return y_all[rows, cols]

    def reveal(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        mm = m[rows, cols]
        w = weight[cols] if weight.ndim == 1 else weight[rows, cols]
        return mm + w * (read(rows, cols) - mm)

    return index_policy(
        m,
        upper,
        lower,
        np.broadcast_to(cost, shape),
        reveal,
        outside=outside,
        inspection=inspection,
        specialists=specialists,
    )


def _spec(x: object, name: str, shape: tuple[int, int], kind: str) -> np.ndarray:
    """Validate ``x`` as (K,) or (n, K) without materialising a broadcast copy."""
    check = {"finite": as_finite, "nonneg": as_nonneg, "positive": as_positive}[kind]
    arr = check(x, name)
    if arr.shape in (shape, (shape[1],)):
        return arr
    raise ValueError(f"{name}: expected shape ({shape[1]},) or {shape}, got {arr.shape}")


class PandorasRouter:
    """Pandora's Router as an object for a serving loop: specialists and estimators as callables.

    ``specialists``: names (K >= 1). ``cheap``: ``queries -> (m, s)`` with ``m`` (n, K) and ``s``
    (K,) or (n, K). ``expensive``: ``(queries, rows, cols) -> Y`` readings for the query/specialist
    pairs ``(rows[i], cols[i])``. ``tau`` (K,): expensive-estimator noise std; ``inspection_cost``
    (K,): cost of one expensive call per specialist, in value units. ``outside_value``: value of
    declining the query (``-inf``: always route). Either estimator may be replaced by arrays at
    :meth:`route` time (``m``, ``s``, ``readings``).
    """

    def __init__(
        self,
        specialists: Sequence[str],
        *,
        tau: Sequence[float] | np.ndarray,
        inspection_cost: Sequence[float] | np.ndarray,
        cheap: Callable[[Any], tuple[np.ndarray, np.ndarray]] | None = None,
        expensive: Callable[[Any, np.ndarray, np.ndarray], np.ndarray] | None = None,
        outside_value: float = -np.inf,
        inspection: str = "optional",
    ) -> None:
        self.specialists = tuple(str(s) for s in specialists)
        if not self.specialists:
            raise ValueError("specialists: expected at least one specialist, got an empty set")
        if len(set(self.specialists)) != len(self.specialists):
            raise ValueError(f"specialists: expected distinct names, got {self.specialists}")
        k = len(self.specialists)
        self.tau = as_nonneg(tau, "tau", ndim=1)
        self.inspection_cost = as_nonneg(inspection_cost, "inspection_cost", ndim=1)
        for name, arr in (("tau", self.tau), ("inspection_cost", self.inspection_cost)):
            if arr.shape != (k,):
                raise ValueError(f"{name}: expected one value per specialist, shape ({k},), got {arr.shape}")
        if np.isnan(outside_value) or outside_value == np.inf:
            raise ValueError(f"outside_value: expected a finite number or -inf, got {outside_value}")
        if inspection not in ("optional", "obligatory"):
            raise ValueError(f"inspection: expected 'optional' or 'obligatory', got {inspection!r}")
        if cheap is not None and not callable(cheap):
            raise TypeError("cheap: expected a callable queries -> (m, s)")
        if expensive is not None and not callable(expensive):
            raise TypeError("expensive: expected a callable (queries, rows, cols) -> readings")
        self.cheap = cheap
        self.expensive = expensive
        self.outside_value = float(outside_value)
        self.inspection = inspection

    def route(
        self,
        queries: Any = None,
        *,
        m: np.ndarray | None = None,
        s: np.ndarray | None = None,
        readings: np.ndarray | None = None,
    ) -> RoutingResult:
        """Route a batch; returns decisions with their audit trail (:meth:`RoutingResult.audit`)."""
        if m is None:
            if self.cheap is None:
                raise ValueError("m: give cheap estimates or construct the router with cheap=")
            m, s = self.cheap(queries)
        elif s is None:
            raise ValueError("s: expected the cheap-estimator std along with m")
        m = as_finite(m, "m", ndim=2)
        if m.shape[1] != len(self.specialists):
            raise ValueError(
                f"m: expected {len(self.specialists)} columns (one per specialist), got {m.shape}"
            )
        if readings is None:
            if self.expensive is None:
                raise ValueError("readings: give expensive readings or construct the router with expensive=")
            fn = self.expensive

            def reveal(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
                return fn(queries, rows, cols)

            source: Reveal = reveal
        else:
            source = readings
        return pandoras_route(
            m,
            s,
            self.tau,
            self.inspection_cost,
            source,
            outside=self.outside_value,
            inspection=self.inspection,
            specialists=self.specialists,
        )
