"""Fit time and edge AUROC: BACE vs statsmodels VAR + Granger, tigramite PCMCI, mne-connectivity
spectral Granger, at R = 8, 16, 32 regions on the same generated recordings.

    uv run python packages/bace/benchmarks/bench_bace.py           # writes results.json / results.md here
    uv run python packages/bace/benchmarks/bench_bace.py --quick   # R = 8 only, to a temp folder

Not every peer runs at every size on a shared 2-core machine: statsmodels runs at R <= 16 (one call at
R = 32, which runs ``R (R - 1) = 992`` ``test_causality`` F-tests per phase on the full VAR coefficient
covariance, did not finish within 400 s here) and tigramite PCMCI at R = 8 only (kept short; not timed
at larger R). Each comparison is its own table.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np

from paperworks.bace import (
    BACE,
    LFPConfig,
    edge_auroc,
    pcmci_scores,
    region_average,
    simulate_lfp,
    spectral_granger_scores,
    statsmodels_granger_scores,
)
from paperworks.core.bench import compare, write_results

NOTE = (
    "12 trials x 4 phases x 100 samples, 4-8 contacts per region, R/2 backbone + R phase-specific edges; "
    "one call = one fit on the whole recording. BACE: 200 Adam steps of 128 windows, one thread. Peers on "
    "region averages: statsmodels VAR(3) per phase on the concatenated phase segments and one "
    "test_causality F-test per ordered pair; PCMCI ParCorr tau_max 3, pc_alpha 0.05, max_conds_dim 2; "
    "mne-connectivity gc, 10 lags, 13-60 Hz. Shared 2-core machine."
)

_cache: dict = {}
_outputs: dict = {}


def make_input(R: int):
    if R not in _cache:
        cfg = LFPConfig(n_regions=R, n_trials=12, contacts=(4, 8), n_specific=R, n_backbone=R // 2)
        d = simulate_lfp(cfg, seed=R)
        _cache[R] = (R, d, region_average(d.X, d.regions))
    return _cache[R]


def _keep(name, fn):
    def call(x):
        _outputs[(name, x[0])] = out = fn(x)
        return out

    return call


SIDES = {
    "bace": lambda x: BACE(regions=x[1].regions, n_steps=200).fit(x[1].X, x[1].phases).adjacency_,
    "statsmodels VAR+Granger": lambda x: statsmodels_granger_scores(x[2], x[1].phases, order=3),
    "tigramite PCMCI": lambda x: pcmci_scores(x[2], x[1].phases),
    "mne spectral Granger": lambda x: spectral_granger_scores(x[2], x[1].phases, x[1].sfreq),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    plan = (
        [((8,), tuple(SIDES), 3)]
        if args.quick
        else [
            ((8,), tuple(SIDES), 3),
            ((16,), ("bace", "statsmodels VAR+Granger", "mne spectral Granger"), 2),
            ((32,), ("bace", "mne spectral Granger"), 2),
        ]
    )
    results = []
    for sizes, names, repeats in plan:
        sides = {n: _keep(n, SIDES[n]) for n in names}
        results.append(
            compare(
                sides,
                make_input,
                sizes,
                ours="bace",
                name=f"Fit time at R = {', '.join(map(str, sizes))}: BACE vs " + ", ".join(names[1:]),
                warmup=0,
                repeats=repeats,
                number=1,
                size_label="regions R",
                note=NOTE,
            )
        )
    rows = ["| R | " + " | ".join(SIDES) + " |", "|---" * (len(SIDES) + 1) + "|"]
    for sizes, _, _ in plan:
        for R in sizes:
            d = make_input(R)[1]
            cells = [
                f"{edge_auroc(d.adjacency, _outputs[(n, R)]).mean():.3f}" if (n, R) in _outputs else "not run"
                for n in SIDES
            ]
            rows.append(f"| {R} | " + " | ".join(cells) + " |")
    folder = Path(tempfile.mkdtemp()) if args.quick else Path(__file__).parent
    table = {"Edge AUROC (mean over phases) of the last timed fit, same data": "\n".join(rows)}
    write_results(results, folder, title="bace benchmarks", tables=table)
    for r in results:
        print(r.to_markdown())
    print("\n".join(rows))
    print(f"results in {folder}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
