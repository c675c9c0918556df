"""Side by side: DCMOML's fit against econml's LinearDML and statsmodels' MixedLM (random slopes).

    uv run python packages/masked-demand-meta/benchmarks/bench_masked_demand_meta.py [--quick]
    uv run paperworks bench masked-demand-meta [--quick]

Two :func:`paperworks.core.bench.compare` calls on generated panels (rho = 0.8, T = 6, built once outside
the timing): DCMOML (linear meta-learner, 300 epochs with early stopping, one torch thread) against
``LinearDML`` (linear nuisances, 2 folds) at 500, 2,000 and 8,000 tasks; and against ``MixedLM`` (REML,
L-BFGS) at 500 and 1,000 tasks only (statsmodels' fit grows fast with the number of groups). Each side's RMSE
of the price slopes goes in a table beside the timings. ``--quick``: the smallest size, 3 rounds, results
to a temporary folder.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from paperworks.core import torch_threads
from paperworks.core.bench import compare, publish
from paperworks.masked_demand_meta import (
    DemandConfig,
    MetaConfig,
    fit_meta,
    generate_panel,
    linear_dml,
    mixed_model,
)

DML_SIZES = (500, 2000, 8000)
MIXED_SIZES = (500, 1000)


def make(n: int):
    return generate_panel(DemandConfig(n_tasks=n, rho=0.8), n)[0]


def dcmoml(panel):
    with torch_threads(1):
        return fit_meta(panel, MetaConfig(kind="linear"), seed=0).predict(panel)[:, 1]


def dml(panel):
    return linear_dml(panel)


def mixed(panel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mixed_model(panel)[:, 1]


def run(quick: bool):
    kw = {"warmup": 0, "repeats": 3} if quick else {"warmup": 1, "repeats": 5}
    dml_sizes = DML_SIZES[:1] if quick else DML_SIZES
    mixed_sizes = MIXED_SIZES[:1] if quick else MIXED_SIZES
    results = [
        compare(
            {"dcmoml": dcmoml, "econml_dml": dml},
            make,
            dml_sizes,
            ours="dcmoml",
            name="fit vs econml LinearDML",
            size_label="tasks",
            **kw,
        ),
        compare(
            {"dcmoml": dcmoml, "statsmodels_mixedlm": mixed},
            make,
            mixed_sizes,
            ours="dcmoml",
            name="fit vs statsmodels MixedLM",
            size_label="tasks",
            **{**kw, "warmup": 0, "repeats": 3},
        ),
    ]
    rows = ["| tasks | DCMOML RMSE | LinearDML RMSE | MixedLM RMSE |", "| --- | --- | --- | --- |"]
    for n in sorted(set(dml_sizes) | set(mixed_sizes)):
        panel = make(n)

        def r(b, panel=panel):
            return f"{np.sqrt(np.mean((b - panel.beta) ** 2)):.3f}"

        rows.append(
            f"| {n} | {r(dcmoml(panel))} | {r(dml(panel))} | {r(mixed(panel)) if n in mixed_sizes else '–'} |"
        )
    return results, {"RMSE of beta_hat on the timed panels (rho = 0.8)": "\n".join(rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smallest size, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    results, tables = run(args.quick)
    publish(results, __file__, quick=args.quick, title="masked-demand-meta benchmarks", tables=tables)


if __name__ == "__main__":
    main()
