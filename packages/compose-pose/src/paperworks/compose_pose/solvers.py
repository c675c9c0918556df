"""Solvers of the weighted exact cover ``min sum_e c_e x_e  s.t.  sum_{e ∋ v} x_e = 1 for every v, x binary``.

- :func:`solve_ilp`: the exact integer program with SciPy's ``milp`` (HiGHS branch and cut);
- :func:`solve_cpsat`: the same program with OR-Tools CP-SAT (extra ``cpsat``; costs scaled to integers);
- :func:`solve_bp`: loopy min-sum belief propagation on the factor graph with a binary variable per
  hyperedge and an exactly-one factor per detection. In difference form (cost of ``x_e = 1`` minus cost of
  ``x_e = 0``) the variable-to-factor message is ``q_{e->v} = c_e + sum_{u in e, u != v} r_{u->e}`` and the
  factor-to-variable message is ``r_{v->e} = -min_{e' ∋ v, e' != e} q_{e'->v}``, computed for all e of a
  factor from its two smallest incoming values (O(degree)). Messages are damped; a hyperedge is chosen when
  its belief ``c_e + sum_v r_{v->e}`` is negative, and a greedy repair (lowest belief first, disjoint edges
  only, singletons for what is left) makes the result a feasible cover.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import fraction, positive_int

from .hypergraph import Hypergraph

__all__ = ["BPResult", "SOLVERS", "solve", "solve_bp", "solve_cpsat", "solve_ilp"]

SOLVERS = ("ilp", "cpsat", "bp")
_BIG = 1e6


def _check(hg: object) -> Hypergraph:
    if not isinstance(hg, Hypergraph):
        raise TypeError(f"hypergraph: expected a Hypergraph, got {type(hg).__name__}")
    return hg


def _incidence_matrix(hg: Hypergraph):
    from scipy.sparse import csr_array

    eid, vid = hg.incidence()
    return csr_array((np.ones(eid.size), (vid, eid)), shape=(hg.n_vertices, hg.n_edges))


def solve_ilp(hg: Hypergraph, *, time_limit: float | None = None) -> list[int]:
    """Exact minimum-cost exact cover by HiGHS (``scipy.optimize.milp``): the chosen edge ids, sorted."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    hg = _check(hg)
    if hg.n_vertices == 0:
        return []
    A = _incidence_matrix(hg)
    # mip_rel_gap 0: search to the optimum (HiGHS's default stops within 1e-4 of it); HiGHS still
    # treats covers within its absolute gap (1e-6) as equal
    options: dict[str, float] = {"mip_rel_gap": 0.0}
    if time_limit:
        options["time_limit"] = time_limit
    res = milp(
        hg.costs,
        constraints=LinearConstraint(A, 1, 1),
        integrality=np.ones(hg.n_edges),
        bounds=Bounds(0, 1),
        options=options,
    )
    if res.x is None:
        raise RuntimeError(f"solve_ilp: HiGHS found no cover ({res.message})")
    return sorted(int(i) for i in np.flatnonzero(res.x > 0.5))


def solve_cpsat(hg: Hypergraph, *, scale: float = 1000.0, workers: int = 1) -> list[int]:
    """The same program with OR-Tools CP-SAT (costs rounded to ``1/scale``): the chosen edge ids, sorted."""
    try:
        from ortools.sat.python import cp_model
    except ImportError as e:
        raise ImportError("solve_cpsat needs OR-Tools: pip install 'paperworks-compose-pose[cpsat]'") from e
    hg = _check(hg)
    if hg.n_vertices == 0:
        return []
    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{e}") for e in range(hg.n_edges)]
    members: list[list[int]] = [[] for _ in range(hg.n_vertices)]
    for e, edge in enumerate(hg.edges):
        for v in edge:
            members[v].append(e)
    for v in range(hg.n_vertices):
        model.AddExactlyOne(x[e] for e in members[v])
    model.Minimize(sum(round(c * scale) * xe for c, xe in zip(hg.costs, x)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"solve_cpsat: no cover ({solver.StatusName(status)})")
    return sorted(e for e in range(hg.n_edges) if solver.Value(x[e]))


@dataclass(frozen=True)
class BPResult:
    """``chosen`` edge ids (sorted) of the repaired cover; ``beliefs`` (M,); ``iterations`` run;
    ``converged``: the decisions stopped changing; ``repaired``: edges the repair dropped or added."""

    chosen: list[int]
    beliefs: np.ndarray
    iterations: int
    converged: bool
    repaired: int


def solve_bp(hg: Hypergraph, *, damping: float = 0.5, max_iter: int = 200, patience: int = 10) -> BPResult:
    """Loopy min-sum BP with damping, then greedy repair (module docstring)."""
    hg = _check(hg)
    damping = fraction(damping, "damping", open_high=True)
    positive_int(max_iter, "max_iter")
    positive_int(patience, "patience")
    M, N = hg.n_edges, hg.n_vertices
    if N == 0:
        return BPResult([], np.zeros(0), 0, True, 0)
    eid, vid = hg.incidence()
    order = np.argsort(vid, kind="stable")
    eid, vid = eid[order], vid[order]
    starts = np.flatnonzero(np.r_[True, vid[1:] != vid[:-1]])
    seg = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, vid.size]))
    c = hg.costs
    r = np.zeros(eid.size)
    decision = np.zeros(M, bool)
    stable, converged, iterations = 0, False, 0
    while iterations < max_iter:
        iterations += 1
        belief = c + np.bincount(eid, r, minlength=M)
        q = belief[eid] - r
        m1 = np.minimum.reduceat(q, starts)
        is_min = q == m1[seg]
        pos = np.flatnonzero(is_min)
        _, first = np.unique(seg[pos], return_index=True)
        argmin = pos[first]
        q2 = q.copy()
        q2[argmin] = np.inf
        m2 = np.minimum.reduceat(q2, starts)
        at_min = np.zeros(q.size, bool)
        at_min[argmin] = True
        other = np.where(at_min, m2[seg], m1[seg])
        r_new = -np.minimum(other, _BIG)
        r = damping * r + (1 - damping) * r_new
        new_decision = (c + np.bincount(eid, r, minlength=M)) < 0
        stable = stable + 1 if np.array_equal(new_decision, decision) else 0
        decision = new_decision
        if stable >= patience:
            converged = True
            break
    belief = c + np.bincount(eid, r, minlength=M)
    chosen, covered = [], np.zeros(N, bool)
    for e in np.argsort(belief, kind="stable"):
        if belief[e] >= 0:
            break
        members = list(hg.edges[e])
        if not covered[members].any():
            covered[members] = True
            chosen.append(int(e))
    chosen.extend(int(v) for v in np.flatnonzero(~covered))  # singletons: edge id v is vertex v
    repaired = int(np.sum(decision) - len(set(chosen) & set(np.flatnonzero(decision))))
    repaired += int(np.sum(~covered))
    return BPResult(sorted(chosen), belief, iterations, converged, repaired)


def solve(hg: Hypergraph, solver: str = "ilp") -> list[int]:
    """Dispatch by name: ``"ilp"`` (HiGHS), ``"cpsat"`` (OR-Tools) or ``"bp"``."""
    if solver == "ilp":
        return solve_ilp(hg)
    if solver == "cpsat":
        return solve_cpsat(hg)
    if solver == "bp":
        return solve_bp(hg).chosen
    raise ValueError(f"solver: expected one of {SOLVERS}, got {solver!r}")
