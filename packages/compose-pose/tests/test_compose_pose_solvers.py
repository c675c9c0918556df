import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.compose_pose import Hypergraph, solve, solve_bp, solve_cpsat, solve_ilp


def make_hypergraph(n: int, multi: list[tuple[int, ...]], costs: np.ndarray) -> Hypergraph:
    """Singletons 0..n-1 (cost 0) then the given multi-vertex edges with ``costs``."""
    edges = [(i,) for i in range(n)] + [tuple(e) for e in multi]
    return Hypergraph(
        vertex_view=np.arange(n),
        vertex_index=np.zeros(n, int),
        edges=edges,
        costs=np.r_[np.zeros(n), costs],
        errors=np.zeros(len(edges)),
        poses=np.zeros((len(edges), 1, 3)),
        n_compatible_pairs=0,
        full_count=0,
    )


def brute_force(hg: Hypergraph) -> float:
    """Minimum cost over every exact cover, by recursion on the lowest uncovered vertex."""
    containing = [[e for e, edge in enumerate(hg.edges) if v in edge] for v in range(hg.n_vertices)]
    best = np.inf

    def rec(covered: frozenset, cost: float) -> None:
        nonlocal best
        free = [v for v in range(hg.n_vertices) if v not in covered]
        if not free:
            best = min(best, cost)
            return
        for e in containing[free[0]]:
            if not covered.intersection(hg.edges[e]):
                rec(covered | set(hg.edges[e]), cost + hg.costs[e])

    rec(frozenset(), 0.0)
    return best


@st.composite
def instances(draw):
    n = draw(st.integers(2, 7))
    m = draw(st.integers(0, 9))
    multi = []
    for _ in range(m):
        size = draw(st.integers(2, min(4, n)))
        multi.append(tuple(sorted(draw(st.permutations(range(n)))[:size])))
    costs = np.array(
        draw(st.lists(st.floats(-20, 5, allow_nan=False), min_size=len(multi), max_size=len(multi)))
    )
    return make_hypergraph(n, multi, costs)


@settings(max_examples=60, deadline=None)
@given(instances())
def test_ilp_equals_brute_force_and_every_solver_returns_an_exact_cover(hg):
    ilp = solve_ilp(hg)
    assert hg.is_exact_cover(ilp)
    # HiGHS proves optimality up to its absolute MIP gap (1e-6): covers closer than that count as equal
    best = brute_force(hg)
    assert hg.cover_cost(ilp) == pytest.approx(best, abs=1e-6)
    bp = solve_bp(hg)
    assert hg.is_exact_cover(bp.chosen)
    # no cover beats the exact optimum (against the ILP, BP could win by up to HiGHS's gap)
    assert hg.cover_cost(bp.chosen) >= best - 1e-9


@settings(max_examples=25, deadline=None)
@given(instances())
def test_cpsat_reaches_the_highs_optimum(hg):
    pytest.importorskip("ortools")
    assert hg.cover_cost(solve_cpsat(hg)) == pytest.approx(hg.cover_cost(solve_ilp(hg)), abs=1e-2)


def tree_instance(rng: np.random.Generator, n_edges: int) -> Hypergraph:
    """Each new hyperedge shares exactly one vertex with the ones before: the factor graph is a tree."""
    n, multi = 1, []
    for _ in range(n_edges):
        size = int(rng.integers(2, 4))
        anchor = int(rng.integers(n))
        multi.append((anchor, *range(n, n + size - 1)))
        n += size - 1
    return make_hypergraph(n, multi, rng.uniform(-10, 4, size=len(multi)))


@pytest.mark.parametrize("seed", range(20))
def test_bp_fixed_point_equals_the_ilp_on_trees(seed):
    hg = tree_instance(np.random.default_rng(seed), n_edges=8)
    bp = solve_bp(hg)
    assert bp.converged
    assert bp.repaired == 0
    assert bp.chosen == solve_ilp(hg)


def test_bp_on_a_loopy_instance_still_returns_a_feasible_cover():
    # a triangle of pairs: loopy and frustrated (any pair excludes the other two); BP may settle on a
    # worse cover than the optimum (-5), but the repair makes it feasible
    hg = make_hypergraph(3, [(0, 1), (1, 2), (0, 2)], np.array([-5.0, -5.0, -5.0]))
    bp = solve_bp(hg)
    assert hg.is_exact_cover(bp.chosen)
    assert hg.cover_cost(bp.chosen) >= hg.cover_cost(solve_ilp(hg)) == pytest.approx(-5.0)


def test_solver_dispatch_and_bad_input():
    hg = make_hypergraph(2, [(0, 1)], np.array([-1.0]))
    assert solve(hg, "ilp") == solve(hg, "bp") == [2]
    with pytest.raises(ValueError, match="solver: expected one of"):
        solve(hg, "gurobi")
    with pytest.raises(TypeError, match="hypergraph: expected a Hypergraph"):
        solve_ilp([[0, 1]])
    with pytest.raises(ValueError, match="damping"):
        solve_bp(hg, damping=1.0)
