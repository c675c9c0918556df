"""Projection onto the feasible order-up-to set F_t = Y ∩ {y >= x_t}: ours vs cvxpy; rounds per second.

    uv run python packages/hidden-target-oio/benchmarks/bench_hidden_target_oio.py [--quick]

For each capacity set (box, box + budget, a general polytope with 10 dense rows) and
``n in {10, 100, 1000}`` products, the input is one round of a running store: a previous level
``y_prev`` in ``Y``, the state ``x = (y_prev - d)_+`` after a lognormal demand, and a target ``v``
(``y_prev`` plus Gaussian noise). Sides, through :func:`paperworks.core.bench.compare`:

- ``ours``: ``Y.project(v, lower=x, start=y_prev)`` (exact; the polytope's active-set method warm-starts
  from ``y_prev``, which lies in ``F_t``);
- ``cvxpy``: the same QP as a parametrised cvxpy problem (``v`` and ``x`` are ``Parameter``s), compiled
  once outside the timings and re-solved with Clarabel (cvxpy's default QP solver here) each call.

The quality table gives the largest coordinate difference between the two solutions (cvxpy at
tightened tolerances) beside each ratio. A last comparison times one round of the hidden-target policy
(act + loss + subgradient + update + dynamics) on the box + budget set: rounds per second is its inverse.
Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (n = 10 only, 3 rounds)
writes them to a temporary folder and prints the markdown.
"""

from __future__ import annotations

import argparse

import numpy as np

import paperworks.hidden_target_oio as oio
from paperworks.core.bench import compare, publish

try:
    import cvxpy as cp
except ImportError:  # optional peer
    cp = None

SIZES = (10, 100, 1000)
KINDS = ("box", "box + budget", "polytope")


def make_set(kind: str, n: int) -> oio.CapacitySet:
    if kind == "box":
        return oio.Box(0.0, 10.0, n=n)
    if kind == "box + budget":
        return oio.BoxBudget(0.0, 10.0, 4.0 * n, n=n)
    rng = np.random.default_rng(n)
    A = np.abs(rng.normal(1.0, 0.5, size=(10, n)))
    return oio.Polytope(A, np.full(10, 4.0 * n), lo=0.0, hi=10.0)


class CvxpyProjection:
    """``min ||y - v||²`` over ``Y ∩ {y >= x}`` as a compiled parametrised cvxpy problem."""

    def __init__(self, Y: oio.CapacitySet, **solver_opts) -> None:
        n = Y.n
        self.v, self.x = cp.Parameter(n), cp.Parameter(n)
        self.y = cp.Variable(n)
        cons = [self.y >= self.x, self.y >= Y.lo, self.y <= Y.hi]
        if isinstance(Y, oio.BoxBudget):
            cons.append(Y.weights @ self.y <= Y.budget)
        if isinstance(Y, oio.Polytope):
            cons.append(Y.A @ self.y <= Y.b)
        self.problem = cp.Problem(cp.Minimize(cp.sum_squares(self.y - self.v)), cons)
        self.opts = solver_opts

    def __call__(self, v: np.ndarray, x: np.ndarray) -> np.ndarray:
        self.v.value, self.x.value = v, x
        self.problem.solve(solver=cp.CLARABEL, **self.opts)
        return np.asarray(self.y.value)


def make_input(kind: str):
    def build(n: int) -> dict:
        Y = make_set(kind, n)
        rng = np.random.default_rng(1000 + n)
        y_prev = Y.project(rng.uniform(0, 10, n))
        d = rng.lognormal(0.5, 0.8, n)
        x = np.maximum(y_prev - d, 0.0)
        v = Y.project(y_prev + rng.normal(0, 1.5, n))
        inp = {"Y": Y, "v": v, "x": x, "start": y_prev}
        if cp is not None:
            inp["cvxpy"] = CvxpyProjection(Y)
            inp["cvxpy"](v, x)  # compile outside the timings
            inp["reference"] = CvxpyProjection(Y, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)(v, x)
        return inp

    return build


def run_projection(kind: str, sizes, repeats: int, warmup: int):
    sides = {"ours": lambda inp: inp["Y"].project(inp["v"], lower=inp["x"], start=inp["start"])}
    if cp is not None:
        sides["cvxpy"] = lambda inp: inp["cvxpy"](inp["v"], inp["x"])
    quality = {}

    def build(n):
        inp = make_input(kind)(n)
        if cp is not None:
            ours = inp["Y"].project(inp["v"], lower=inp["x"], start=inp["start"])
            quality[n] = float(np.abs(ours - inp["reference"]).max())
        return inp

    version = "not installed" if cp is None else cp.__version__
    res = compare(
        sides,
        build,
        sizes,
        ours="ours",
        name=f"Projection onto F_t, {kind}: ours vs cvxpy",
        warmup=warmup,
        repeats=repeats,
        min_time_s=0.005,
        threads=1,
        size_label="products n",
        note=(
            f"One projection of a target onto Y ∩ {{y >= x_t}} of a running store (see the script's "
            f"docstring); cvxpy {version}: a parametrised problem compiled once, re-solved with Clarabel "
            "each call (its time includes cvxpy's parameter update and solver call)."
        ),
    )
    return res, quality


class HiddenRound:
    """One round of the hidden-target policy on pre-drawn demand: act, loss, subgradient, update."""

    def __init__(self, n: int) -> None:
        self.Y = make_set("box + budget", n)
        self.loss = oio.NewsvendorLoss(1.0, 3.0)
        self.d = np.random.default_rng(n).lognormal(1.0, 0.5, (256, n))
        eta = oio.static_step(self.Y.diameter, self.loss.lipschitz(n, 0.0), 10_000)
        self.pol = oio.HiddenTargetPolicy(self.Y, oio.OGD(self.Y, eta, self.Y.center()))
        self.x = np.zeros((1, n))
        self.t = 0

    def __call__(self) -> None:
        d = self.d[self.t % len(self.d)]
        self.t += 1
        y = self.pol.act_rows(self.x)
        self.loss.value(y, d)
        self.pol.update_rows(self.loss.subgradient(y, d))
        self.x = np.maximum(y - d, 0.0)


def run_rounds(sizes, repeats: int, warmup: int):
    return compare(
        {"hidden target round": lambda r: r()},
        HiddenRound,
        sizes,
        ours="hidden target round",
        name="End-to-end: one round of the hidden-target policy (box + budget)",
        warmup=warmup,
        repeats=repeats,
        min_time_s=0.005,
        threads=1,
        size_label="products n",
        note="act (projection onto F_t) + loss + subgradient + OGD update (projection onto Y) + lost-sales "
        "dynamics, one row; rounds per second = 1 / median.",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 10 only, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (20, 2)
    results, rows = (
        [],
        ["| set | n | ours/cvxpy [95% CI] | max abs difference |", "| --- | --- | --- | --- |"],
    )
    for kind in KINDS:
        res, quality = run_projection(kind, sizes, repeats, warmup)
        results.append(res)
        for n in sizes:
            ratio = res.ratio("cvxpy", n).format() if cp is not None else "–"
            diff = f"{quality[n]:.1e}" if n in quality else "–"
            rows.append(f"| {kind} | {n:,} | {ratio} | {diff} |")
    rounds = run_rounds(sizes, repeats, warmup)
    results.append(rounds)
    rps = ["| n | rounds per second |", "| --- | --- |"]
    for row in rounds.rows:
        rps.append(f"| {row.size:,} | {1.0 / row.side('hidden target round').median_s:,.0f} |")
    tables = {
        "Agreement with cvxpy (same inputs; cvxpy at tightened tolerances)": "\n".join(rows),
        "Hidden-target policy throughput": "\n".join(rps),
    }
    title = "hidden-target-oio benchmarks"
    publish(results, __file__, quick=args.quick, title=title, tables=tables)


if __name__ == "__main__":
    main()
