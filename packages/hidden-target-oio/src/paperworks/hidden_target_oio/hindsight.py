"""Comparators: the best fixed order-up-to level in hindsight, and the per-round expected-optimal levels.

Static regret compares with ``min_{u in Y} sum_t l_t(u)`` (the best fixed level in hindsight, played as if
it were always feasible, as in OIO); :func:`best_fixed_level` computes it exactly for the newsvendor loss
(``mu >= 0``), exploiting that ``sum_t l_t`` is separable over products:

- per product, the average loss ``f_i(y) = (1/T) sum_t [h (y - d_t)_+ + b (d_t - y)_+] + (mu/2) y²`` has
  minimisers read off the sorted demands (the ``b/(h+b)`` quantile when ``mu = 0``);
- :class:`~.capacity.Box`: clip; :class:`~.capacity.BoxBudget`: bisection on the budget multiplier ``θ``
  (minimisers of ``f_i(y) + θ a_i y``), then the convex combination of the two bracketing solutions that
  meets the budget (a KKT point); :class:`~.capacity.Band`: ``min_c sum_i min_{y_i in [max(lo, c),
  min(hi, c + w)]} f_i`` by golden-section search on the convex function of ``c``;
- :class:`~.capacity.Polytope` (``mu = 0``): a linear program in the epigraph of the ``f_i`` (scipy HiGHS).

Dynamic regret compares with ``u_t = argmin_{u in Y} E l_t(u)``, the level an oracle knowing the demand
distribution of round ``t`` would choose (:func:`expected_optimal_levels`, scale-family demand with known
quantiles, Box or BoxBudget), with path length ``P_T = sum_t ||u_{t+1} - u_t||`` (:func:`path_length`).
"""

from __future__ import annotations

import numpy as np

from .capacity import Band, Box, BoxBudget, CapacitySet, Polytope
from .demand import validate_demand
from .losses import NewsvendorLoss

__all__ = ["best_fixed_level", "expected_optimal_levels", "path_length", "total_loss"]

_GOLD = (np.sqrt(5.0) - 1.0) / 2.0


def total_loss(loss: NewsvendorLoss, level: np.ndarray, demand: np.ndarray) -> float:
    """``sum_t l_t(level)`` for a fixed level (n,) over demand (T, n)."""
    return float(loss.value(np.asarray(level, dtype=float)[None, :], demand).sum())


class _Empirical:
    """``f(y) = (1/T) sum_t [h (y - d_t)_+ + b (d_t - y)_+] + (mu/2) y²`` for one product."""

    def __init__(self, d: np.ndarray, h: float, b: float, mu: float) -> None:
        self.s = np.sort(d)
        self.T = self.s.size
        self.cs = np.concatenate([[0.0], np.cumsum(self.s)])
        self.h, self.b, self.mu = float(h), float(b), float(mu)

    def value(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        k = np.searchsorted(self.s, y, side="right")
        Sk = self.cs[k]
        out = (self.h * (k * y - Sk) + self.b * ((self.cs[-1] - Sk) - (self.T - k) * y)) / self.T
        return out + 0.5 * self.mu * y * y

    def argmin(self, theta: float, lo: float, hi: float) -> tuple[float, float]:
        """Ends of ``argmin_{[lo, hi]} f(y) + theta y`` (equal when mu > 0)."""
        h, b, T, s = self.h, self.b, self.T, self.s
        if self.mu == 0.0:
            tau = (b - theta) / (h + b)
            if tau <= 0.0:
                return lo, lo if tau < 0.0 else min(max(s[0], lo), hi)
            if tau >= 1.0:
                return hi, hi
            x = T * tau
            j_lo = int(np.ceil(x - 1e-9))
            j_hi = int(np.floor(x + 1e-9)) + 1
            a = s[min(max(j_lo, 1), T) - 1]
            c = s[min(max(j_hi, 1), T) - 1]
            return float(np.clip(a, lo, hi)), float(np.clip(c, lo, hi))
        # mu > 0: psi(y) = (h+b) F(y) - b + theta + mu y, F = j/T on [s_j, s_{j+1})
        j = np.arange(T + 1)
        left = np.concatenate([[-np.inf], s])
        right = np.concatenate([s, [np.inf]])
        root = (b - theta - (h + b) * j / T) / self.mu
        at_right = (h + b) * j / T - b + theta + self.mu * right
        k = int(np.argmax(at_right >= 0))
        y = float(np.clip(root[k], left[k], right[k]))
        y = float(np.clip(y, lo, hi))
        return y, y


def _per_product(loss: NewsvendorLoss, demand: np.ndarray) -> list[_Empirical]:
    n = demand.shape[1]
    h = np.broadcast_to(loss.h_arr, (n,))
    b = np.broadcast_to(loss.b_arr, (n,))
    return [_Empirical(demand[:, i], h[i], b[i], loss.mu) for i in range(n)]


def best_fixed_level(capacity: CapacitySet, loss: NewsvendorLoss, demand: object) -> tuple[np.ndarray, float]:
    """``(u*, sum_t l_t(u*))``: the best fixed order-up-to level in hindsight over ``Y`` (exact).

    ``demand``: ``(T, n)``. Supported: Box, BoxBudget (and Budget), Band for any ``mu >= 0``; Polytope
    for ``mu = 0``.
    """
    d = validate_demand(demand, capacity.n)
    if d.ndim != 2:
        raise ValueError(f"demand: expected shape (T, n), got {d.shape}")
    fs = _per_product(loss, d)
    lo, hi = capacity.lo, capacity.hi
    if isinstance(capacity, BoxBudget):
        u = _budget_solution(fs, lo, hi, capacity.weights, capacity.budget)
    elif isinstance(capacity, Box):
        u = np.array([f.argmin(0.0, l, h)[0] for f, l, h in zip(fs, lo, hi)])
    elif isinstance(capacity, Band):
        u = _band_solution(fs, lo, hi, capacity.width)
    elif isinstance(capacity, Polytope):
        if loss.mu:
            raise ValueError("loss: the Polytope comparator is a linear program, it needs mu = 0")
        u = _polytope_solution(capacity, loss, d)
    else:
        raise TypeError(f"capacity: no hindsight solver for {type(capacity).__name__}")
    u = np.asarray(u, dtype=float)
    return u, total_loss(loss, u, d)


def _budget_solution(fs, lo, hi, a, B) -> np.ndarray:
    def ends(theta: float) -> tuple[np.ndarray, np.ndarray]:
        e = [f.argmin(theta * ai, l, h) for f, ai, l, h in zip(fs, a, lo, hi)]
        return np.array([x[0] for x in e]), np.array([x[1] for x in e])

    y0, _ = ends(0.0)
    if a @ y0 <= B:
        return y0
    t_lo, t_hi = 0.0, max(f.b / ai for f, ai in zip(fs, a)) + 1.0
    for _ in range(200):
        mid = 0.5 * (t_lo + t_hi)
        if a @ ends(mid)[0] <= B:
            t_hi = mid
        else:
            t_lo = mid
    ya = ends(t_hi)[0]  # meets the budget
    yb = ends(t_lo)[1]  # exceeds it
    sa, sb = a @ ya, a @ yb
    w = 0.0 if sb <= sa else float(np.clip((B - sa) / (sb - sa), 0.0, 1.0))
    return ya + w * (yb - ya)


def _band_solution(fs, lo, hi, width) -> np.ndarray:
    m = np.array([f.argmin(0.0, -np.inf, np.inf)[0] for f in fs])

    def levels(c: float) -> np.ndarray:
        return np.clip(m, np.maximum(lo, c), np.minimum(hi, c + width))

    def phi(c: float) -> float:
        y = levels(c)
        return float(sum(f.value(np.array([yi]))[0] for f, yi in zip(fs, y)))

    a, b = float(lo.max() - width), float(hi.min())
    a = max(a, float(lo.min()) - width)
    x1, x2 = b - _GOLD * (b - a), a + _GOLD * (b - a)
    f1, f2 = phi(x1), phi(x2)
    for _ in range(200):
        if b - a <= 1e-13 * (1.0 + abs(b)):
            break
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - _GOLD * (b - a)
            f1 = phi(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + _GOLD * (b - a)
            f2 = phi(x2)
    return levels(0.5 * (a + b))


def _polytope_solution(capacity: Polytope, loss: NewsvendorLoss, d: np.ndarray) -> np.ndarray:
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, hstack, vstack

    T, n = d.shape
    h = np.broadcast_to(loss.h_arr, (n,))
    b = np.broadcast_to(loss.b_arr, (n,))
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for i in range(n):
        s = np.unique(d[:, i])
        srt = np.sort(d[:, i])
        cs = np.concatenate([[0.0], np.cumsum(srt)])
        k = np.concatenate([[0], np.searchsorted(srt, s, side="right")])  # pieces: #(d <= y) on each segment
        slope = (h[i] * k - b[i] * (T - k)) / T
        icpt = (-h[i] * cs[k] + b[i] * (cs[-1] - cs[k])) / T
        for sl, ic in zip(slope, icpt):  # t_i >= slope y_i + icpt
            rows += [r, r]
            cols += [i, n + i]
            vals += [sl, -1.0]
            rhs.append(-ic)
            r += 1
    epi = coo_matrix((vals, (rows, cols)), shape=(r, 2 * n))
    A_cap = hstack([coo_matrix(capacity.A), coo_matrix((capacity.A.shape[0], n))])
    A_ub = vstack([epi, A_cap]).tocsr()
    b_ub = np.concatenate([rhs, capacity.b])
    c = np.concatenate([np.zeros(n), np.ones(n)])
    bounds = [(float(l), float(u)) for l, u in zip(capacity.lo, capacity.hi)] + [(None, None)] * n
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"best_fixed_level: the linear program failed ({res.message})")
    return np.clip(res.x[:n], capacity.lo, capacity.hi)


def expected_optimal_levels(capacity: CapacitySet, loss: NewsvendorLoss, process, horizon: int) -> np.ndarray:
    """``u_t = argmin_{u in Y} E l_t(u)`` for every round (T, n): the newsvendor quantiles of the known
    per-round marginals (``process.quantile``), with the budget multiplier found by bisection per round.

    ``capacity``: Box or BoxBudget; ``loss.mu`` must be 0.
    """
    if loss.mu:
        raise ValueError("loss: expected_optimal_levels needs mu = 0 (a quantile rule)")
    if not isinstance(capacity, Box | BoxBudget):
        raise TypeError(f"capacity: expected a Box or BoxBudget, got {type(capacity).__name__}")
    T, n = int(horizon), capacity.n
    h = np.broadcast_to(loss.h_arr, (n,))
    b = np.broadcast_to(loss.b_arr, (n,))
    lo, hi = capacity.lo, capacity.hi

    def levels(theta: np.ndarray) -> np.ndarray:
        a = capacity.weights if isinstance(capacity, BoxBudget) else np.zeros(n)
        tau = np.clip((b - theta[:, None] * a) / (h + b), 1e-12, 1 - 1e-12)
        return np.clip(process.quantile(tau, T), lo, hi)

    u = levels(np.zeros(T))
    if isinstance(capacity, BoxBudget):
        a, B = capacity.weights, capacity.budget
        over = u @ a > B
        if over.any():
            t_lo = np.zeros(T)
            t_hi = np.full(T, float((b / a).max()))
            for _ in range(100):
                mid = 0.5 * (t_lo + t_hi)
                ok = levels(mid) @ a <= B
                t_hi = np.where(ok, mid, t_hi)
                t_lo = np.where(ok, t_lo, mid)
            u = np.where(over[:, None], levels(t_hi), u)
    return u


def path_length(levels: np.ndarray) -> float:
    """``P_T = sum_t ||u_{t+1} - u_t||_2`` of a comparator sequence (T, n)."""
    u = np.asarray(levels, dtype=float)
    return float(np.sqrt((np.diff(u, axis=0) ** 2).sum(axis=1)).sum())
