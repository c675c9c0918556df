"""Capacity sets ``Y`` (bounded, convex, inside the non-negative orthant) with exact Euclidean projections.

Every set projects onto itself and onto the feasible order-up-to set of the current state,
``F_t = Y ∩ {y >= x_t}`` (the paper's implementable set), through one call::

    Y.project(v)               # Proj_Y(v)
    Y.project(v, lower=x_t)    # Proj_{F_t}(v)

``v`` has shape ``(n,)`` or ``(R, n)`` (``R`` independent rows projected at once; ``lower`` then has
the same shape). The projections are exact (finite algorithms, no iterative tolerance):

- :class:`Box` ``{lo <= y <= hi}``: a clip;
- :class:`BoxBudget` ``{lo <= y <= hi, a·y <= B}`` (and :class:`Budget`, ``lo = 0``): the multiplier of
  the budget is found on the sorted breakpoints of the piecewise-linear ``λ -> a·clip(v - λa, lo, hi)``,
  ``O(n log n)`` per row;
- :class:`Band` ``{lo <= y <= hi, max_i y_i - min_i y_i <= width}`` (stock levels kept within ``width``
  of each other; ``width = 0`` is the fixed-proportion "kit" segment): the projection is
  ``min_c`` of separable box projections onto ``[max(lo, c), min(hi, c + width)]``, a convex piecewise
  quadratic in ``c`` minimised on its sorted breakpoints, ``O(n log n)`` per row;
- :class:`Polytope` ``{A y <= b, lo <= y <= hi}``: a primal active-set QP (bounds handled by fixing
  variables, general rows by a small normal-equation solve), finite, warm-started from a feasible point.

Every set also reports ``n``, ``lo``/``hi`` (a bounding box), ``diameter`` (an upper bound on the
Euclidean diameter, used by the step-size rules) and ``as_polytope()`` (its ``A y <= b`` form, used by
the tests to check each structured projection against the generic solver and cvxpy).
"""

from __future__ import annotations

import abc

import numpy as np

from paperworks.core.validate import finite_array, finite_float, nonnegative_float

__all__ = ["Band", "Box", "BoxBudget", "Budget", "CapacitySet", "Polytope", "as_rows"]

_TOL = 1e-9


def as_rows(v: object, n: int, name: str) -> tuple[np.ndarray, bool]:
    """``v`` as a float ``(R, n)`` array and whether it came as a single ``(n,)`` vector."""
    arr = finite_array(v, name)
    if arr.ndim == 1 and arr.shape[0] == n:
        return arr[None, :].astype(float, copy=True), True
    if arr.ndim == 2 and arr.shape[1] == n:
        return arr.astype(float, copy=True), False
    raise ValueError(f"{name}: expected shape ({n},) or (R, {n}), got {arr.shape}")


def _bounds(lo: object, hi: object, n: int | None) -> tuple[np.ndarray, np.ndarray]:
    lo_a = np.atleast_1d(np.asarray(lo, dtype=float))
    hi_a = np.atleast_1d(np.asarray(hi, dtype=float))
    if n is None:
        n = max(lo_a.size, hi_a.size)
    if lo_a.ndim != 1 or lo_a.size not in (1, n):
        raise ValueError(f"lo: expected a number or shape ({n},), got shape {lo_a.shape}")
    if hi_a.ndim != 1 or hi_a.size not in (1, n):
        raise ValueError(f"hi: expected a number or shape ({n},), got shape {hi_a.shape}")
    lo_a, hi_a = np.broadcast_to(lo_a, (n,)).copy(), np.broadcast_to(hi_a, (n,)).copy()
    if np.isnan(lo_a).any() or np.isnan(hi_a).any():
        raise ValueError("lo, hi: expected numbers, got NaN")
    if not np.isfinite(lo_a).all():
        raise ValueError("lo: expected finite lower bounds")
    if not np.isfinite(hi_a).all():
        raise ValueError(
            "hi: the capacity set is unbounded (an infinite upper bound); OIO needs a bounded set"
        )
    if (lo_a < 0).any():
        raise ValueError(f"lo: expected bounds >= 0 (inventory levels), got min {lo_a.min():g}")
    if (lo_a > hi_a).any():
        i = int(np.argmax(lo_a > hi_a))
        raise ValueError(f"lo, hi: the capacity set is empty (lo[{i}] = {lo_a[i]:g} > hi[{i}] = {hi_a[i]:g})")
    return lo_a, hi_a


def _count_below(sorted_rows: np.ndarray, points: np.ndarray, *, strict: bool) -> np.ndarray:
    """Per row, how many entries of ``sorted_rows`` (R, n) are < (strict) or <= each of ``points`` (R, k)."""
    R, n = sorted_rows.shape
    if n <= 64:
        cmp = (
            sorted_rows[:, None, :] < points[:, :, None]
            if strict
            else sorted_rows[:, None, :] <= points[:, :, None]
        )
        return cmp.sum(axis=2)
    side = "left" if strict else "right"
    return np.stack([np.searchsorted(sorted_rows[r], points[r], side=side) for r in range(R)])


class CapacitySet(abc.ABC):
    """A bounded convex capacity set ``Y`` inside ``[0, inf)^n`` with an exact Euclidean projection."""

    n: int
    lo: np.ndarray
    hi: np.ndarray

    @abc.abstractmethod
    def _project_rows(self, v: np.ndarray, lo: np.ndarray, start: np.ndarray | None) -> np.ndarray:
        """Project rows of ``v`` (R, n) onto ``Y ∩ {y >= lo}`` (``lo`` (R, n) already >= self.lo)."""

    @abc.abstractmethod
    def _violation_rows(self, y: np.ndarray) -> np.ndarray:
        """Largest constraint violation of each row of ``y`` (R, n), >= 0."""

    @abc.abstractmethod
    def as_polytope(self) -> Polytope:
        """This set written as ``{A y <= b, lo <= y <= hi}``."""

    def project(self, v: object, lower: object = None, *, start: object = None) -> np.ndarray:
        """Euclidean projection of ``v`` onto ``Y`` (``lower=None``) or onto ``Y ∩ {y >= lower}``.

        ``v``: shape ``(n,)`` or ``(R, n)``; ``lower``: the same shape (the current state ``x_t``);
        ``start``: an optional feasible point of the target set (used by :class:`Polytope` as a warm
        start; ignored by the other sets). Returns an array of ``v``'s shape. Raises ``ValueError``
        when ``Y ∩ {y >= lower}`` is empty.
        """
        rows, single = as_rows(v, self.n, "v")
        lo = np.broadcast_to(self.lo, rows.shape).copy()
        if lower is not None:
            low, _ = as_rows(lower, self.n, "lower")
            if low.shape != rows.shape:
                raise ValueError(f"lower: expected the shape of v {np.shape(v)}, got {np.shape(lower)}")
            lo = np.maximum(lo, low)
            if (lo > self.hi + _TOL).any():
                raise ValueError("lower: Y ∩ {y >= lower} is empty (lower exceeds the capacity bounds)")
        st = None
        if start is not None:
            st, _ = as_rows(start, self.n, "start")
            if st.shape != rows.shape:
                raise ValueError(f"start: expected the shape of v {np.shape(v)}, got {np.shape(start)}")
        out = self._project_rows(rows, lo, st)
        return out[0] if single else out

    def violation(self, y: object) -> np.ndarray | float:
        """Largest constraint violation of ``y`` (0 inside ``Y``); a float for a vector, else (R,)."""
        rows, single = as_rows(y, self.n, "y")
        out = self._violation_rows(rows)
        return float(out[0]) if single else out

    def contains(self, y: object, tol: float = 1e-7) -> bool | np.ndarray:
        """Whether ``y`` lies in ``Y`` up to ``tol`` (a bool for a vector, else a bool array)."""
        v = self.violation(y)
        return bool(v <= tol) if np.ndim(v) == 0 else np.asarray(v) <= tol

    @property
    def diameter(self) -> float:
        """An upper bound on the Euclidean diameter: the bounding box's diagonal."""
        return float(np.linalg.norm(self.hi - self.lo))

    def center(self) -> np.ndarray:
        """A point of ``Y``: the projection of the bounding box's centre."""
        return self.project((self.lo + self.hi) / 2)

    def _box_violation(self, y: np.ndarray) -> np.ndarray:
        return np.maximum(np.max(self.lo - y, axis=1), np.max(y - self.hi, axis=1)).clip(min=0.0)


class Box(CapacitySet):
    """``Y = {lo <= y <= hi}`` (per-product shelf capacities). ``lo``, ``hi``: numbers or ``(n,)``."""

    def __init__(self, lo: object = 0.0, hi: object = 1.0, n: int | None = None) -> None:
        self.lo, self.hi = _bounds(lo, hi, n)
        self.n = self.lo.size

    def _project_rows(self, v, lo, start):
        return np.clip(v, lo, self.hi)

    def _violation_rows(self, y):
        return self._box_violation(y)

    def as_polytope(self) -> Polytope:
        return Polytope(np.zeros((0, self.n)), np.zeros(0), self.lo, self.hi)

    def __repr__(self) -> str:
        return f"Box(n={self.n})"


class BoxBudget(CapacitySet):
    """``Y = {lo <= y <= hi, a·y <= budget}`` (shelf capacities and a shared warehouse volume).

    ``weights`` ``a > 0`` (unit volumes; default 1). Projection: ``y = clip(v - λ a, lo', hi)`` with the
    smallest ``λ >= 0`` meeting the budget, found exactly on the sorted breakpoints.
    """

    def __init__(self, lo: object, hi: object, budget: float, weights: object = None, n: int | None = None):
        self.lo, self.hi = _bounds(lo, hi, n)
        self.n = self.lo.size
        self.budget = finite_float(budget, "budget")
        a = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float)
        if a.shape != (self.n,) or not np.isfinite(a).all() or (a <= 0).any():
            raise ValueError(f"weights: expected {self.n} positive finite numbers, got {a!r}")
        self.weights = a
        if float(a @ self.lo) > self.budget + _TOL:
            raise ValueError(
                f"budget: the capacity set is empty (a·lo = {float(a @ self.lo):g} > "
                f"budget = {self.budget:g})"
            )

    def _project_rows(self, v, lo, start):
        a, hi, B = self.weights, self.hi, self.budget
        if (lo @ a > B + 1e-9 * max(1.0, abs(B))).any():
            raise ValueError("lower: Y ∩ {y >= lower} is empty (a·lower exceeds the budget)")
        y = np.clip(v, lo, hi)
        over = y @ a > B
        if not over.any():
            return y
        if self.n <= 32:  # few products: s(λ) at every breakpoint by broadcasting (fewer numpy calls)
            bp = np.sort(np.concatenate([(v - hi) / a, (v - lo) / a], axis=1), axis=1)  # (R, 2n)
            S = (np.clip(v[:, None, :] - bp[:, :, None] * a, lo[:, None, :], hi) * a).sum(axis=2)
            k = np.maximum(np.argmax(S <= B, axis=1), 1)
            rows = np.arange(v.shape[0])
            s1, s2 = S[rows, k - 1], S[rows, k]
            b1, b2 = bp[rows, k - 1], bp[rows, k]
            gap = s1 - s2
            lam = b1 + (s1 - B) * (b2 - b1) / np.where(gap > 0, gap, np.inf)
            lam = np.where(over, np.maximum(lam, 0.0), 0.0)
            return np.clip(v - lam[:, None] * a, lo, hi)
        vv, ll = v[over], lo[over]
        # breakpoints of s(λ) = a·clip(v - λa, l, u): y_i leaves hi at α_i, reaches l at β_i
        alpha = (vv - hi) / a
        beta = (vv - ll) / a
        bp = np.concatenate([alpha, beta], axis=1)  # (R, 2n)
        dmass = np.concatenate([np.broadcast_to(a * a, alpha.shape), -np.broadcast_to(a * a, beta.shape)], 1)
        order = np.argsort(bp, axis=1, kind="stable")
        bp = np.take_along_axis(bp, order, 1)
        dmass = np.take_along_axis(dmass, order, 1)
        mass = np.cumsum(dmass, axis=1)  # -slope of s on [bp_k, bp_{k+1}]
        seg = np.diff(bp, axis=1) * mass[:, :-1]
        s_at = (hi @ a) - np.concatenate([np.zeros((bp.shape[0], 1)), np.cumsum(seg, axis=1)], axis=1)
        k = np.argmax(s_at <= B, axis=1)  # first breakpoint where the budget is met (exists: s(β_max) = a·l)
        k = np.maximum(k, 1)
        rows = np.arange(bp.shape[0])
        m = mass[rows, k - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = bp[rows, k - 1] + np.where(m > 0, (s_at[rows, k - 1] - B) / m, 0.0)
        lam = np.clip(lam, bp[rows, k - 1], bp[rows, k])
        lam = np.maximum(lam, 0.0)
        y[over] = np.clip(vv - lam[:, None] * a, ll, hi)
        return y

    def _violation_rows(self, y):
        return np.maximum(self._box_violation(y), (y @ self.weights - self.budget).clip(min=0.0))

    def as_polytope(self) -> Polytope:
        return Polytope(self.weights[None, :], np.array([self.budget]), self.lo, self.hi)

    def __repr__(self) -> str:
        return f"BoxBudget(n={self.n}, budget={self.budget:g})"


class Budget(BoxBudget):
    """``Y = {y >= 0, a·y <= budget}`` (a shared volume only); bounded because ``a > 0``."""

    def __init__(self, budget: float, n: int, weights: object = None) -> None:
        b = nonnegative_float(budget, "budget")
        a = np.ones(int(n)) if weights is None else np.asarray(weights, dtype=float)
        if a.shape != (int(n),) or not np.isfinite(a).all() or (a <= 0).any():
            raise ValueError(f"weights: expected {n} positive finite numbers, got {a!r}")
        super().__init__(0.0, b / a, b, a, n=int(n))

    def __repr__(self) -> str:
        return f"Budget(n={self.n}, budget={self.budget:g})"


class Band(CapacitySet):
    """``Y = {lo <= y <= hi, max_i y_i - min_i y_i <= width}``: stock levels kept within ``width``.

    ``width = 0`` gives the fixed-proportion segment ``{c·1}`` (a kit or planogram constraint): the
    implemented level can then fall only when every product sells, which makes the common-demand
    probability the binding quantity (our reconstruction of the hard instance; see the README).
    """

    def __init__(self, lo: object, hi: object, width: float, n: int | None = None) -> None:
        self.lo, self.hi = _bounds(lo, hi, n)
        self.n = self.lo.size
        self.width = nonnegative_float(width, "width")
        if self.lo.max() - self.width > self.hi.min() + _TOL:
            raise ValueError("width: the capacity set is empty (max lo - width > min hi)")

    def _project_rows(self, v, lo, start):
        w, hi = self.width, self.hi
        if w == 0.0:  # the segment {c 1}: c = clip(mean(v), max lo, min hi)
            c_lo, c_hi = lo.max(axis=1), hi.min()
            if (c_lo > c_hi + 1e-9).any():
                raise ValueError("lower: Y ∩ {y >= lower} is empty (the band cannot hold the state)")
            c = np.clip(v.mean(axis=1), c_lo, c_hi)
            return np.repeat(c[:, None], self.n, axis=1)
        c_min = lo.max(axis=1) - w
        c_max = np.full(v.shape[0], hi.min())
        if (c_min > c_max + 1e-9).any():
            raise ValueError("lower: Y ∩ {y >= lower} is empty (the band cannot hold the state)")
        R, n = v.shape
        a = np.maximum(lo, v)  # S1 = {i : c > a_i}: lower bound max(lo_i, c) binds above v_i
        b = np.minimum(hi, v) - w  # S2 = {i : c < b_i}: upper bound c + w binds below v_i
        # g(c) = φ'(c)/2 = sum_{a_i < c} (c - v_i) + sum_{b_i > c} (c - (v_i - w)), nondecreasing
        oa = np.argsort(a, axis=1)
        a_s = np.take_along_axis(a, oa, 1)
        va = np.take_along_axis(v, oa, 1)
        cva = np.concatenate([np.zeros((R, 1)), np.cumsum(va, 1)], 1)  # prefix sums of v by a
        ob = np.argsort(b, axis=1)
        b_s = np.take_along_axis(b, ob, 1)
        vb = np.take_along_axis(v - w, ob, 1)
        cvb = np.concatenate([np.zeros((R, 1)), np.cumsum(vb, 1)], 1)
        bp = np.sort(np.concatenate([a_s, b_s], 1), axis=1)  # (R, 2n)
        lo_k = np.concatenate([np.full((R, 1), -np.inf), bp], 1)  # intervals (lo_k, hi_k), 2n + 1 of them
        hi_k = np.concatenate([bp, np.full((R, 1), np.inf)], 1)
        # representative point inside each interval -> the sets S1, S2 there
        rep = np.where(
            np.isfinite(lo_k) & np.isfinite(hi_k),
            (lo_k + hi_k) / 2,
            np.where(np.isfinite(hi_k), hi_k - 1.0, lo_k + 1.0),
        )
        n1 = _count_below(a_s, rep, strict=True)  # #{a_i < c}
        n2_le = _count_below(b_s, rep, strict=False)  # #{b_i <= c}
        n2 = n - n2_le
        m = n1 + n2
        K = np.take_along_axis(cva, n1, 1) + (cvb[:, -1:] - np.take_along_axis(cvb, n2_le, 1))
        g_hi = np.where(np.isfinite(hi_k), m * hi_k - K, np.inf)
        first = np.argmax(g_hi >= 0, axis=1)
        rows = np.arange(R)
        mk, Kk = m[rows, first], K[rows, first]
        lk, hk = lo_k[rows, first], hi_k[rows, first]
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.where(mk > 0, Kk / np.maximum(mk, 1), lk)
        c = np.clip(root, lk, hk)
        c = np.clip(c, c_min, c_max)
        return np.clip(v, np.maximum(lo, c[:, None]), np.minimum(hi, c[:, None] + w))

    def _violation_rows(self, y):
        return np.maximum(self._box_violation(y), (y.max(axis=1) - y.min(axis=1) - self.width).clip(min=0.0))

    def as_polytope(self) -> Polytope:
        n = self.n
        rows = []
        for i in range(n):
            for j in range(n):
                if i != j:
                    r = np.zeros(n)
                    r[i], r[j] = 1.0, -1.0
                    rows.append(r)
        A = np.array(rows) if rows else np.zeros((0, n))
        return Polytope(A, np.full(len(rows), self.width), self.lo, self.hi)

    def __repr__(self) -> str:
        return f"Band(n={self.n}, width={self.width:g})"


class Polytope(CapacitySet):
    """``Y = {A y <= b, lo <= y <= hi}``, any bounded non-empty polytope inside ``[0, inf)^n``.

    ``A`` (m, n), ``b`` (m,), ``lo`` (default 0, must be >= 0), ``hi`` (default: computed by ``2n`` linear
    programs; a set that is unbounded or empty is refused). Projection: a primal active-set method
    (Nocedal & Wright, Alg. 16.3) on ``min ½||y - v||²``: bounds in the working set fix variables,
    general rows enter a ``|S| x |S|`` normal-equation solve; each iteration adds a blocking constraint or
    drops the most negative multiplier, so it ends after finitely many steps at the exact projection
    (up to floating point). It starts from ``start`` when that is feasible, else from a point found by
    a phase-one linear program.
    """

    def __init__(self, A: object, b: object, lo: object = 0.0, hi: object = None) -> None:
        A_ = np.asarray(A, dtype=float)
        if A_.ndim != 2:
            raise ValueError(f"A: expected a 2-d array (m, n), got shape {A_.shape}")
        m, n = A_.shape
        if n == 0:
            raise ValueError("A: expected at least one column (product)")
        b_ = np.asarray(b, dtype=float).reshape(-1)
        if b_.shape != (m,):
            raise ValueError(f"b: expected shape ({m},), got {np.shape(b)}")
        if not (np.isfinite(A_).all() and np.isfinite(b_).all()):
            raise ValueError("A, b: expected finite numbers")
        self.A, self.b, self.n = A_, b_, n
        lo_a = np.broadcast_to(np.asarray(lo, dtype=float), (n,)).copy()
        if not np.isfinite(lo_a).all() or (lo_a < 0).any():
            raise ValueError("lo: expected finite bounds >= 0 (inventory levels)")
        self.lo = lo_a
        if hi is None:
            self.hi = np.full(n, np.inf)
            self._feasible = self._phase_one(self.lo)
            self.hi = self._bounding_upper()
        else:
            self.lo, self.hi = _bounds(lo_a, hi, n)
            self._feasible = self._phase_one(self.lo)

    # -- linear programs (construction and cold starts only) ----------------------------------------
    def _phase_one(self, lo: np.ndarray) -> np.ndarray:
        from scipy.optimize import linprog

        ub = [(float(l), None if not np.isfinite(h) else float(h)) for l, h in zip(lo, self.hi)]
        res = linprog(
            np.zeros(self.n),
            A_ub=self.A if len(self.b) else None,
            b_ub=self.b if len(self.b) else None,
            bounds=ub,
            method="highs",
        )
        if res.status == 2:
            raise ValueError("A, b: the capacity set is empty (the linear constraints are infeasible)")
        if res.status != 0:
            raise ValueError(f"A, b: could not find a feasible point ({res.message})")
        return np.clip(res.x, lo, self.hi)

    def _bounding_upper(self) -> np.ndarray:
        from scipy.optimize import linprog

        out = np.empty(self.n)
        bounds = [(float(l), None) for l in self.lo]
        for i in range(self.n):
            c = np.zeros(self.n)
            c[i] = -1.0
            res = linprog(c, A_ub=self.A, b_ub=self.b, bounds=bounds, method="highs")
            if res.status == 3:
                raise ValueError(f"A, b: the capacity set is unbounded (y[{i}] can grow without limit)")
            if res.status != 0:
                raise ValueError(f"A, b: bounding the set failed ({res.message})")
            out[i] = -res.fun
        return out

    # -- projection -------------------------------------------------------------------------------------
    def _project_rows(self, v, lo, start):
        out = np.empty_like(v)
        for r in range(v.shape[0]):
            s = None if start is None else start[r]
            out[r] = self._project_one(v[r], lo[r], s)
        return out

    def _feasible_start(self, lo: np.ndarray, start: np.ndarray | None) -> np.ndarray:
        for cand in (start, self._feasible):
            if cand is not None and (cand >= lo - 1e-10).all() and (cand <= self.hi + 1e-10).all():
                if not len(self.b) or (self.A @ cand <= self.b + 1e-10).all():
                    return np.clip(cand, lo, self.hi)
        return self._phase_one(lo)

    def _project_one(self, v: np.ndarray, lo: np.ndarray, start: np.ndarray | None) -> np.ndarray:
        n, A, b, hi = self.n, self.A, self.b, self.hi
        if (lo > hi + 1e-9).any():
            raise ValueError("lower: Y ∩ {y >= lower} is empty")
        y = self._feasible_start(lo, start)
        fixed = np.zeros(n, dtype=np.int8)  # 0 free, -1 at lo, +1 at hi (in the working set)
        S: list[int] = []  # general rows in the working set
        tol = 1e-11 * (1.0 + np.abs(v).max() + np.abs(hi).max())
        for _ in range(50 * (n + len(b)) + 100):
            free = fixed == 0
            yb = np.where(fixed < 0, lo, np.where(fixed > 0, hi, 0.0))
            target = np.where(free, v, yb)
            mu = np.zeros(0)
            if S:
                AS = A[S]
                AF = AS[:, free]
                rhs = AS[:, free] @ v[free] - (b[S] - AS[:, ~free] @ yb[~free])
                mu = np.linalg.lstsq(AF @ AF.T, rhs, rcond=None)[0]
                target = target.copy()
                target[free] = v[free] - AF.T @ mu
            p = target - y
            if np.abs(p).max() <= tol:
                # multipliers: general rows mu; fixed bounds from stationarity y - v + A_S^T mu + nu = 0
                grad = y - v + (A[S].T @ mu if S else 0.0)
                nu_lo = grad  # for -y <= -lo: nu = y - v + A^T mu >= 0
                nu_hi = -grad  # for y <= hi: nu = -(y - v + A^T mu) >= 0
                worst, kind, idx = 0.0, None, -1
                if S and mu.min() < worst:
                    worst, kind, idx = float(mu.min()), "row", int(np.argmin(mu))
                for sign, nu in ((-1, nu_lo), (1, nu_hi)):
                    cand = np.where(fixed == sign, nu, np.inf)
                    j = int(np.argmin(cand))
                    if cand[j] < worst:
                        worst, kind, idx = float(cand[j]), "bound", j
                if kind is None or worst > -1e-12 * (1.0 + np.abs(v).max()):
                    return y
                if kind == "row":
                    S.pop(idx)
                else:
                    fixed[idx] = 0
                continue
            # step towards target, stopped by the first blocking constraint
            alpha, block = 1.0, None
            tiny = 1e-14 * (1.0 + np.abs(p).max())
            dec = (p < -tiny) & free
            if dec.any():
                r = (lo[dec] - y[dec]) / p[dec]
                j = int(np.argmin(r))
                if r[j] < alpha:
                    alpha, block = max(r[j], 0.0), ("lo", int(np.flatnonzero(dec)[j]))
            inc = (p > tiny) & free
            if inc.any():
                r = (hi[inc] - y[inc]) / p[inc]
                j = int(np.argmin(r))
                if r[j] < alpha:
                    alpha, block = max(r[j], 0.0), ("hi", int(np.flatnonzero(inc)[j]))
            if len(b):
                Ap = A @ p
                mask = Ap > 1e-14
                if S:
                    mask[S] = False
                if mask.any():
                    r = (b[mask] - A[mask] @ y) / Ap[mask]
                    j = int(np.argmin(r))
                    if r[j] < alpha:
                        alpha, block = max(r[j], 0.0), ("row", int(np.flatnonzero(mask)[j]))
            y = y + alpha * p
            if block is not None:
                kind, j = block
                if kind == "lo":
                    fixed[j], y[j] = -1, lo[j]
                elif kind == "hi":
                    fixed[j], y[j] = 1, hi[j]
                else:
                    S.append(j)
        raise RuntimeError("Polytope.project: the active-set method did not terminate (degenerate cycling)")

    def _violation_rows(self, y):
        v = self._box_violation(y)
        if len(self.b):
            v = np.maximum(v, (y @ self.A.T - self.b).max(axis=1).clip(min=0.0))
        return v

    def as_polytope(self) -> Polytope:
        return self

    def __repr__(self) -> str:
        return f"Polytope(n={self.n}, m={len(self.b)})"
