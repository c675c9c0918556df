"""Side by side: PDOCRL against the exact LP (HiGHS through SciPy) on Garnet CMDPs of 50, 200, 500 states.

    uv run python packages/pdocrl/benchmarks/bench_pdocrl.py [--quick]
    uv run paperworks bench pdocrl [--quick]

One :func:`paperworks.core.bench.compare` over the number of states (4 actions, branching 3, data
``n = 20 S A`` transitions from a behaviour covering the LP-optimal policy only, built once outside the
timing). Sides, all on the same input:

- ``pdocrl``: PDOCRL from the data's counts (T = 200 iterations, the tabular closed form);
- ``empirical_lp``: the model-based offline route, the CMDP LP on the empirical model (HiGHS);
- ``exact_lp``: the CMDP LP on the true model (HiGHS): the ground truth, which an offline learner cannot run.

The quality table gives each side's suboptimality and cost-budget gap on the true CMDP. Not the issue's
5,000 states: PDOCRL evaluates its policy exactly twice per iteration, by sparse LU, which fills in on a
Garnet's random graph (about 0.7 s per solve at 2,000 states here), and
:class:`~paperworks.pdocrl.TabularCMDP` holds dense (S, A, S) transitions; an iterative evaluation
(BiCGSTAB) broke down on PDOCRL's near-deterministic policies when tried.
osrl-lib's COptiDICE (a neural implementation for continuous DSRL tasks) was not run here.
Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (50 states, 3 rounds) writes
them to a temporary folder.
"""

from __future__ import annotations

import argparse

from paperworks.core.bench import compare, publish
from paperworks.pdocrl import (
    PDOCRL,
    PDOCRLConfig,
    Problem,
    collect_dataset,
    garnet_cmdp,
    partial_coverage_behaviour,
    slater_bound,
    solve_empirical_lp,
    solve_lp,
)

STATES = (50, 200, 500)
ITERATIONS = 200


class Case:
    """One Garnet CMDP, its LP optimum, and a data set's counts."""

    def __init__(self, n_states: int) -> None:
        self.cmdp = garnet_cmdp(n_states, 4, rng=n_states)
        self.lp = solve_lp(self.cmdp)
        self.problem = Problem.of(self.cmdp, slater_bound(self.cmdp))
        mu = partial_coverage_behaviour(self.lp.policy, noise=0.3, rng=0)
        self.counts = collect_dataset(self.cmdp, mu, 20 * n_states * 4, rng=1).counts(n_states, 4)
        self.counts.transitions_sparse  # built once, outside the timing  # noqa: B018


def pdocrl(case: Case):
    return PDOCRL(PDOCRLConfig(iterations=ITERATIONS, policy_lr=3.0)).fit(case.counts, case.problem)


def empirical_lp(case: Case):
    return solve_empirical_lp(case.counts, case.problem)


def exact_lp(case: Case):
    return solve_lp(case.cmdp)


def run(quick: bool):
    sizes = STATES[:1] if quick else STATES
    kw = {"warmup": 1, "repeats": 3} if quick else {"warmup": 1, "repeats": 5}
    cases = {s: Case(s) for s in sizes}
    result = compare(
        {"pdocrl": pdocrl, "empirical_lp": empirical_lp, "exact_lp": exact_lp},
        lambda s: cases[s],
        sizes,
        ours="pdocrl",
        name="offline solvers vs states (4 actions)",
        size_label="states",
        **kw,
    )
    rows = [
        "| states | data n | PDOCRL J* - J | PDOCRL J_c - tau | emp. LP J* - J | emp. LP J_c - tau |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s, case in cases.items():
        m = case.cmdp
        J, Jc = pdocrl(case).returns(m)
        Je, Jce = m.returns(empirical_lp(case).policy)
        rows.append(
            f"| {s} | {case.counts.n} | {case.lp.reward - J:.4f} | {Jc[0] - m.budgets[0]:+.4f} | "
            f"{case.lp.reward - Je:.4f} | {Jce[0] - m.budgets[0]:+.4f} |"
        )
    return [result], {"Quality on the true CMDP (one data set per size)": "\n".join(rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="50 states, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    results, tables = run(args.quick)
    publish(results, __file__, quick=args.quick, title="pdocrl benchmarks", tables=tables)


if __name__ == "__main__":
    main()
