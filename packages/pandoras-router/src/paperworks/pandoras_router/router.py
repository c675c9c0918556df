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

Correlated errors (``loading`` given, :mod:`.correlated`): every reading also moves the beliefs in
the specialists not read (through the common error factor), so the router keeps the posterior of
the one-factor model per query, and the index of ``k`` uses the std of the difference between
``k`` and its best alternative, eq. (C4), in place of the independent preposterior std; the band
rule and Weitzman's order are unchanged. With ``loading = 0`` this is exactly the independent rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperworks.core.validate import int_in_range, one_of

from ._validate import as_finite, as_nonneg, as_value_or_neg_inf, per_specialist
from .correlated import check_loading, factor_one_step_gain
from .gaussian import expected_excess_inv, preposterior_std, reservation_value, value_of_information

__all__ = ["PandorasRouter", "RoutingResult", "index_policy", "pandoras_route", "per_specialist"]

Reveal = np.ndarray | Callable[[np.ndarray, np.ndarray], np.ndarray]
INSPECTION = ("optional", "obligatory")


@dataclass
class RoutingResult:
    """Decisions for ``n`` queries over ``K`` specialists, with their audit trail.

    ``choice`` (n,) int: the specialist routed to, ``-1`` for the outside option. ``inspected``
    (n, K) bool. ``order`` (n, K) int: the step at which each specialist was inspected (-1: never).
    ``alternative`` (n, K): the best value available without ``k`` when ``k`` was inspected (NaN
    if never). ``value`` (n, K): final beliefs (posterior means: the refined estimate if inspected,
    else the cheap one, moved by the common error factor when errors are correlated).
    ``upper``/``lower`` (n, K): reservation values (with correlated errors: as computed at the
    step ``k`` was inspected, or at the last step for the others); ``cost`` (n, K): inspection
    costs; ``estimation_cost`` (n,) the sum paid per query; ``expected_value`` (n,) the belief in
    the chosen option; ``outside`` (n,): the value of the outside option (``-inf``: none);
    ``voi`` (n, K) or None: the net one-step value of information of each reading when it was
    made (eq. C5 for independent errors, C6 for correlated ones);
    positive for every reading, NaN where none was made, None for generic boxes.
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
    outside: np.ndarray | None = None
    voi: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.outside is None:
            self.outside = np.full(self.choice.shape[0], -np.inf)

    @property
    def n_inspections(self) -> np.ndarray:
        """(n,) number of expensive-estimator calls per query."""
        return self.inspected.sum(axis=1)

    def audit(self, i: int) -> dict[str, Any]:
        """What was inspected for query ``i``, in order, why (index vs. best alternative), at what cost."""
        n = self.choice.shape[0]
        i = int_in_range(i, "i", -n, n - 1)
        i = i % n
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
                    "value_of_information": None if self.voi is None else float(self.voi[i, k]),
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


def _checked_reader(reveal: Reveal, name: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A ``(rows, cols) -> values`` reader over an array or a callable, checking what a callable returns."""
    if not callable(reveal):
        arr = reveal
        return lambda rows, cols: arr[rows, cols]

    def read(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        raw = reveal(rows, cols)
        try:
            out = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name}: the expensive estimator must return real numbers") from None
        if out.shape != rows.shape:
            raise ValueError(
                f"{name}: the expensive estimator must return {rows.shape[0]} readings, got shape {out.shape}"
            )
        bad = ~np.isfinite(out)
        if bad.any():
            raise ValueError(f"{name}: the expensive estimator returned {int(bad.sum())} NaN/inf readings")
        return out

    return read


def _outside(outside: object, n: int) -> np.ndarray:
    out = as_value_or_neg_inf(outside, "outside")
    if out.ndim == 0:
        return np.full(n, float(out))
    if out.shape != (n,):
        raise ValueError(f"outside: expected a scalar or shape ({n},), got {out.shape}")
    return out


def _specialist_names(specialists: Sequence[str], k_count: int) -> tuple[str, ...]:
    if isinstance(specialists, str) or not all(isinstance(x, str) for x in specialists):
        raise TypeError("specialists: expected a sequence of names (strings)")
    names = tuple(specialists)
    if names and len(names) != k_count:
        raise ValueError(f"specialists: expected {k_count} names (one per column), got {len(names)}")
    return names


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
    """The index policy on generic (independent) boxes of any prize law, vectorised over ``n`` queries.

    ``blind`` (n, K): value of taking a box uninspected; ``upper``/``lower`` (n, K): reservation
    values with ``upper >= lower`` (a box never worth inspecting, whose ``r`` falls below its blind
    value, has the empty band ``lower == upper``; ``lower`` is ignored when inspection is obligatory;
    ``+inf`` / ``-inf`` allowed: a free inspection); ``cost`` (n, K) >= 0; ``reveal``: an (n, K) array of the
    values inspection would reveal, or a callable ``(rows, cols) -> values`` called once per step
    with the pairs to inspect; ``outside``: scalar or (n,) value of routing nowhere (``-inf``: must
    route). Returns a :class:`RoutingResult`.
    """
    inspection = one_of(inspection, "inspection", INSPECTION)
    blind = as_finite(blind, "blind", ndim=2)
    n, k_count = blind.shape
    arrays = {}
    for name, arr in (("upper", upper), ("lower", lower)):
        try:
            a = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name}: expected an array of reservation values (real numbers)") from None
        if a.shape != blind.shape:
            raise ValueError(f"{name}: expected shape {blind.shape} (the shape of blind), got {a.shape}")
        if np.isnan(a).any():
            raise ValueError(f"{name}: expected reservation values without NaN")
        arrays[name] = a
    upper, lower = arrays["upper"], arrays["lower"]
    optional = inspection == "optional"
    if optional and (upper < lower).any():
        bad = int((upper < lower).sum())
        raise ValueError(
            f"upper: expected upper >= lower reservation values, {bad} entries have upper < lower"
        )
    cost = as_nonneg(cost, "cost", ndim=2)
    if cost.shape != blind.shape:
        raise ValueError(f"cost: expected shape {blind.shape} (the shape of blind), got {cost.shape}")
    if not callable(reveal):
        reveal = as_finite(reveal, "reveal", ndim=2)
        if reveal.shape != blind.shape:
            raise ValueError(f"reveal: expected shape {blind.shape} (the shape of blind), got {reveal.shape}")
    read = _checked_reader(reveal, "reveal")
    out_arr = _outside(outside, n)
    names = _specialist_names(specialists, k_count)

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
        revealed = read(rows_left, pick)
        w_avail[r_, pick] = revealed
        w_up[r_, pick] = -np.inf
        value[rows_left, pick] = revealed
        inspected[rows_left, pick] = True
        order[rows_left, pick] = step
        alternative[rows_left, pick] = alt

    final = np.where(inspected, value, blind if optional else -np.inf)
    return _finish(final, inspected, order, alternative, value, upper, lower, cost, out_arr, names)


def _finish(final, inspected, order, alternative, value, upper, lower, cost, out_arr, names) -> RoutingResult:
    n, k_count = final.shape
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
        specialists=names,
        outside=out_arr,
    )


def pandoras_route(
    m: np.ndarray,
    s: np.ndarray,
    tau: np.ndarray,
    cost: np.ndarray,
    readings: Reveal,
    *,
    loading: np.ndarray | None = None,
    outside: np.ndarray | float = -np.inf,
    inspection: str = "optional",
    specialists: Sequence[str] = (),
) -> RoutingResult:
    """Pandora's Router under the Gaussian signal model (functional form).

    ``m`` (n, K): cheap estimates; ``s``: cheap-estimator std, (K,) or (n, K) (one per query and
    specialist when the estimator's uncertainty depends on the input), > 0; ``tau``:
    expensive-estimator noise std, (K,) or (n, K), >= 0; ``cost``: inspection cost, (K,) or
    (n, K), >= 0; ``readings``: (n, K) expensive readings ``Y`` (only those inspected are used) or
    a callable ``(rows, cols) -> Y``; ``loading``: None (independent errors) or the one-factor
    correlation loadings ``lambda`` of the cheap errors, (K,) or (n, K), ``|lambda| < 1``
    (:mod:`.correlated`, eq. C1). Independent errors: the refined estimate is eq. (1) of
    :mod:`.gaussian` and the index ``r = m + sigma G^{-1}(c / sigma)`` (eq. 3). Correlated errors:
    the posterior of the one-factor model (C2-C3) and the pairwise index (C4-C5); optional
    inspection only.
    """
    inspection = one_of(inspection, "inspection", INSPECTION)
    m = as_finite(m, "m", ndim=2)
    shape = m.shape
    s = per_specialist(s, "s", shape, kind="positive", broadcast=False)
    tau = per_specialist(tau, "tau", shape, kind="nonneg", broadcast=False)
    cost = per_specialist(cost, "cost", shape, kind="nonneg", broadcast=False)
    names = _specialist_names(specialists, shape[1])
    if callable(readings):
        read = _checked_reader(readings, "readings")
    else:
        y_all = as_finite(readings, "readings", ndim=2)
        if y_all.shape != shape:
            raise ValueError(f"readings: expected shape {shape} (the shape of m), got {y_all.shape}")

        def read(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
            return y_all[rows, cols]

    out_arr = _outside(outside, shape[0])
    if loading is not None:
        lam = check_loading(loading, "loading", shape)
        if inspection == "obligatory":
            raise ValueError(
                "inspection: correlated errors (loading=...) are routed with 'optional' inspection only"
            )
        full = [np.broadcast_to(x, shape) for x in (s, tau, cost)]
        return _factor_route(m, *full, lam, read, out_arr, names)

    small = s.ndim == tau.ndim == cost.ndim == 1
    if not small:
        s, tau, cost = (np.broadcast_to(a, shape) for a in (s, tau, cost))
    sigma = preposterior_std(s, tau)
    # r - m depends on (sigma, cost) only: the index is the cheap estimate plus a per-pair offset
    offset = reservation_value(np.zeros(sigma.shape), sigma, cost)
    upper = m + offset
    # 2 m - r, or r itself where r < m (c > sigma / sqrt(2 pi)): an empty band, never worth a look
    lower = m - np.abs(offset)
    weight = s * s / (s * s + tau * tau)

    def reveal(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        mm = m[rows, cols]
        w = weight[cols] if weight.ndim == 1 else weight[rows, cols]
        return mm + w * (read(rows, cols) - mm)

    res = index_policy(
        m,
        upper,
        lower,
        np.broadcast_to(cost, shape),
        reveal,
        outside=out_arr,
        inspection=inspection,
        specialists=names,
    )
    if inspection == "optional":  # the one-box value of each reading against its alternative, eq. (C5)
        sig = np.broadcast_to(sigma, shape)
        voi = np.full(shape, np.nan)
        hit = res.inspected
        if hit.any():
            voi[hit] = value_of_information(
                m[hit], sig[hit], np.broadcast_to(cost, shape)[hit], res.alternative[hit]
            )
        res.voi = voi
    return res


def _index_offset(sigma: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """``r - mu = sigma G^{-1}(c / sigma)``; ``+inf`` for a free reading, ``-inf`` with nothing to learn."""
    out = np.full(sigma.shape, -np.inf)
    learn = sigma > 0
    free = learn & (cost == 0)
    out[free] = np.inf
    paid = learn & ~free
    if paid.any():
        sg = sigma[paid]
        out[paid] = sg * expected_excess_inv(np.clip(cost[paid] / sg, 1e-300, None))
    return out


def _factor_route(m, s, tau, cost, lam, read, out_arr, names) -> RoutingResult:
    """The index rule on the posterior of the one-factor model (C1-C5), vectorised over queries."""
    n, k_count = m.shape
    a = s * lam  # common loadings
    d = s * s * (1.0 - lam * lam)  # idiosyncratic variances (> 0)
    tau2 = tau * tau
    w = d / (d + tau2)
    mu = m.copy()
    f = np.zeros(n)
    v = np.ones(n)
    coef = a.copy()  # each belief's coefficient on the common factor (b_k of C3)
    inspected = np.zeros((n, k_count), dtype=bool)
    order = np.full((n, k_count), -1, dtype=np.int64)
    alternative = np.full((n, k_count), np.nan)
    upper = np.full((n, k_count), np.nan)
    lower = np.full((n, k_count), np.nan)
    voi = np.full((n, k_count), np.nan)
    rows = np.arange(n)
    for step in range(k_count):
        r_ = np.arange(rows.size)
        mu_r, insp_r, a_r, coef_r, v_r = mu[rows], inspected[rows], a[rows], coef[rows], v[rows]
        top = np.argmax(mu_r, axis=1)
        t1 = mu_r[r_, top]
        masked = mu_r.copy()
        masked[r_, top] = -np.inf
        second = np.argmax(masked, axis=1)
        t2 = masked[r_, second]
        is_top = np.arange(k_count)[None, :] == top[:, None]
        alt_box = np.where(is_top, second[:, None], top[:, None])
        alt_val = np.where(is_top, t2[:, None], t1[:, None])
        out_r = out_arr[rows]
        use_out = out_r[:, None] >= alt_val
        alt_val = np.where(use_out, out_r[:, None], alt_val)
        var = a_r * a_r * v_r[:, None] + d[rows]
        scale = np.sqrt(var + tau2[rows])
        cov_alt = np.where(use_out, 0.0, a_r * np.take_along_axis(coef_r, alt_box, axis=1) * v_r[:, None])
        sigma = np.abs(var - cov_alt) / scale
        offset = _index_offset(sigma, cost[rows])
        up, lo = mu_r + offset, mu_r - np.abs(offset)
        fresh = ~insp_r
        upper[rows] = np.where(fresh, up, upper[rows])
        lower[rows] = np.where(fresh, lo, lower[rows])
        # worth a reading: its exact one-step value (C6) beats the cost (a free reading: always)
        cost_r = cost[rows]
        net = (
            factor_one_step_gain(mu_r, coef_r, out_r, var / scale, a_r * v_r[:, None] / scale, fresh) - cost_r
        )
        elig = fresh & ((net > 0) | (cost_r == 0))
        # among those, Weitzman's order on the pairwise index (C4-C5)
        score = np.where(elig, np.maximum(up, -1e300), -np.inf)
        pick = np.argmax(score, axis=1)
        go = score[r_, pick] > -np.inf
        if not go.any():
            break
        keep = np.flatnonzero(go)
        rows, pick = rows[keep], pick[keep]
        r_ = np.arange(rows.size)
        alt_pick = alt_val[keep, pick]
        voi[rows, pick] = net[keep, pick]
        var_p = var[keep, pick]
        a_p = a_r[keep, pick]
        v_k = v_r[keep]
        y = read(rows, pick)
        innov = (y - mu[rows, pick]) / (var_p + tau2[rows, pick])
        # every belief moves by Cov(V_i, Y_pick) / Var(Y_pick) times the innovation
        shift = coef[rows] * (a_p * v_k)[:, None]
        shift[r_, pick] = var_p
        mu[rows] += shift * innov[:, None]
        f[rows] += a_p * v_k * innov
        v[rows] = v_k - (a_p * v_k) ** 2 / (var_p + tau2[rows, pick])
        coef[rows, pick] = (1.0 - w[rows, pick]) * a_p
        inspected[rows, pick] = True
        order[rows, pick] = step
        alternative[rows, pick] = alt_pick
    res = _finish(mu, inspected, order, alternative, mu, upper, lower, cost, out_arr, names)
    res.voi = voi
    return res


class PandorasRouter:
    """Pandora's Router as an object for a serving loop: specialists and estimators as callables.

    ``specialists``: names (K >= 1). ``cheap``: ``queries -> (m, s)`` or ``(m, s, loading)`` with
    ``m`` (n, K), ``s`` (K,) or (n, K) and the optional correlation loadings (K,) or (n, K).
    ``expensive``: ``(queries, rows, cols) -> Y`` readings for the query/specialist pairs
    ``(rows[i], cols[i])``. ``tau`` (K,): expensive-estimator noise std; ``inspection_cost`` (K,):
    cost of one expensive call per specialist, in value units. ``loading``: correlation loadings of
    the cheap errors used when ``cheap`` gives none (None: independent). ``outside_value``: value of
    declining the query (``-inf``: always route). Either estimator may be replaced by arrays at
    :meth:`route` time (``m``, ``s``, ``loading``, ``readings``).
    """

    def __init__(
        self,
        specialists: Sequence[str],
        *,
        tau: Sequence[float] | np.ndarray,
        inspection_cost: Sequence[float] | np.ndarray,
        cheap: Callable[[Any], tuple[np.ndarray, ...]] | None = None,
        expensive: Callable[[Any, np.ndarray, np.ndarray], np.ndarray] | None = None,
        loading: Sequence[float] | np.ndarray | None = None,
        outside_value: float = -np.inf,
        inspection: str = "optional",
    ) -> None:
        if isinstance(specialists, str) or not all(isinstance(x, str) for x in specialists):
            raise TypeError("specialists: expected a sequence of names (strings), e.g. ['small', 'large']")
        self.specialists = tuple(specialists)
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
        self.loading = None if loading is None else check_loading(loading, "loading", (1, k), broadcast=False)
        out = as_value_or_neg_inf(outside_value, "outside_value")
        if out.ndim != 0:
            raise ValueError(f"outside_value: expected one number (or -inf), got shape {out.shape}")
        self.inspection = one_of(inspection, "inspection", INSPECTION)
        if cheap is not None and not callable(cheap):
            raise TypeError("cheap: expected a callable queries -> (m, s)")
        if expensive is not None and not callable(expensive):
            raise TypeError("expensive: expected a callable (queries, rows, cols) -> readings")
        self.cheap = cheap
        self.expensive = expensive
        self.outside_value = float(out)

    def route(
        self,
        queries: Any = None,
        *,
        m: np.ndarray | None = None,
        s: np.ndarray | None = None,
        loading: np.ndarray | None = None,
        readings: np.ndarray | None = None,
    ) -> RoutingResult:
        """Route a batch; returns decisions with their audit trail (:meth:`RoutingResult.audit`)."""
        if m is None:
            if self.cheap is None:
                raise ValueError("m: give cheap estimates or construct the router with cheap=")
            belief = self.cheap(queries)
            if not isinstance(belief, tuple) or len(belief) not in (2, 3):
                raise TypeError("cheap: expected the estimator to return (m, s) or (m, s, loading)")
            m, s = belief[0], belief[1]
            if len(belief) == 3 and loading is None:
                loading = belief[2]
        elif s is None:
            raise ValueError("s: expected the cheap-estimator std along with m")
        m = as_finite(m, "m", ndim=2)
        if m.shape[1] != len(self.specialists):
            raise ValueError(
                f"m: expected {len(self.specialists)} columns (one per specialist), got {m.shape}"
            )
        if loading is None:
            loading = self.loading
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
            loading=loading,
            outside=self.outside_value,
            inspection=self.inspection,
            specialists=self.specialists,
        )
