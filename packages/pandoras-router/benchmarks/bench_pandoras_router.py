"""Side by side on the core bench harness: Pandora's Router vs exhaustive estimation and a RouteLLM-style
router.

1. Throughput (one :func:`paperworks.core.bench.compare`): one batched routing call over n queries for
   K = 11 (n = 100,000) and K = 100 (n = 20,000) specialists, Pandora's Router against the exhaustive
   policy and the RouteLLM-style threshold router. Every side gets its inputs precomputed (cheap
   estimates, expensive readings, embeddings): the estimators themselves are not timed. One thread
   (BLAS pinned by the harness); warm-up, rounds interleaved in a seeded random order, medians, ratio
   ours/peer with a bootstrap interval. Decisions per second (n / median) and the Router's expensive
   calls per query are tabled beside it.
2. Quality at equal total cost (not a timing; same code as before, in ``tables``): multi_llm domain,
   hashing embeddings, 800 test queries per seed; the RouteLLM threshold is set so that its mean total
   cost (answer + estimation) equals the Router's; expensive calls and realised net value of Router,
   exhaustive and RouteLLM.

Run: ``uv run python packages/pandoras-router/benchmarks/bench_pandoras_router.py [--quick]`` or
``uv run paperworks bench pandoras-router [--quick]``. The full run writes benchmarks/results.json and
results.md; ``--quick`` (smallest size, 3 rounds, 1 warm-up, one seed for the quality table) writes to a
temporary folder and prints.
"""

from __future__ import annotations

import argparse

import numpy as np
from threadpoolctl import threadpool_limits

from paperworks.core.bench import compare, publish
from paperworks.pandoras_router import (
    CheapValueEstimator,
    RouteLLMRouter,
    embed_texts,
    evaluate,
    exhaustive,
    make_domain,
    pandoras_route,
)
from paperworks.pandoras_router.experiments import PandorasRouterConfig, _routellm_choice, _two_model_result

LAM = PandorasRouterConfig().lam  # the experiment's willingness to pay
SIZES = ((11, 100_000), (100, 20_000))  # (specialists K, queries n)
SEEDS = (0, 1, 2)
NOTE = (
    "One call routes all n queries of the batch. Sides: `pandoras_route` (ours: the Weitzman index rule, "
    "at most K inspection steps, vectorised over queries), `exhaustive` (inspect every specialist, then "
    "argmax) and `RouteLLMRouter.route` (logistic strong/weak classifier on 384-d embeddings, threshold "
    "0.5). Inputs are precomputed and shared: cheap-estimate means m ~ N(0.5, 0.2^2), s = 0.2, tau = 0.05, "
    "cost 0.004 per call, readings m + N(0, 0.2^2); the classifier is fitted on 2,000 of the embeddings "
    "beforehand. Estimation (embedding, ridge heads) is not timed. Wall-clock only (the old table's "
    "per-CPU-second rates are gone: the harness pins one thread)."
)


def _instance(k: int, n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    m = rng.normal(0.5, 0.2, (n, k))
    s = np.full(k, 0.2)
    tau = np.full(k, 0.05)
    cost = np.full(k, 0.004)
    y = m + rng.normal(0, 0.2, (n, k))
    X = np.random.default_rng(1).normal(size=(n, 384))
    clf = RouteLLMRouter().fit(X[:2000], (X[:2000, 0] > 0).astype(float))
    return {"args": (m, s, tau, cost, y), "X": X, "clf": clf, "n": n}


def throughput(sizes, quick: bool):
    cache: dict[tuple[int, int], dict] = {}

    def make(size):
        cache[size] = _instance(*size)
        return cache[size]

    def ours(x):
        x["calls"] = pandoras_route(*x["args"]).n_inspections.mean()

    result = compare(
        {
            "Pandora's Router (ours)": ours,
            "exhaustive": lambda x: exhaustive(*x["args"]),
            "RouteLLM-style": lambda x: x["clf"].route(x["X"], 0.5),
        },
        make,
        sizes,
        ours="Pandora's Router (ours)",
        name="Throughput: one batched routing call",
        size_label="K × n",
        note=NOTE,
        **(dict(repeats=3, warmup=1) if quick else dict(repeats=20, warmup=2)),
    )
    rows = [
        "| K × n | Router decisions/s | exhaustive decisions/s | RouteLLM-style decisions/s "
        "| Router expensive calls / query |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in result.rows:
        x = cache[row.size]
        rate = {s.name: x["n"] / s.median_s for s in row.sides}
        ours_rate = rate["Pandora's Router (ours)"]
        rows.append(
            f"| {row.size[0]} × {row.size[1]:,} | {ours_rate:,.0f} | "
            f"{rate['exhaustive']:,.0f} | {rate['RouteLLM-style']:,.0f} | {x['calls']:.2f} |"
        )
    return result, "\n".join(rows)


def equal_cost_rows(seeds: tuple[int, ...]) -> str:
    rows = [
        "| seed | policy | expensive calls / query | net value | total cost $ / query |",
        "| --- | --- | --- | --- | --- |",
    ]
    ratios = []
    for seed in seeds:
        data = make_domain("multi_llm", 2000, seed)
        X = embed_texts(data.texts, model="hashing")
        perm = np.random.default_rng(seed).permutation(data.n)
        tr, te = perm[:1200], perm[1200:]
        V = data.value(LAM)
        m, s = CheapValueEstimator(random_state=seed).fit(X[tr], V[tr]).predict_belief(X[te])
        Y = V[te] + np.random.default_rng(seed + 1).normal(size=m.shape) * data.tau
        c = LAM * data.inspect_price
        ev_r = evaluate(pandoras_route(m, s, data.tau, c, Y), V[te], data.price[te], 1 / LAM)
        ev_e = evaluate(exhaustive(m, s, data.tau, c, Y), V[te], data.price[te], 1 / LAM)
        clf, strong, weak, _ = _routellm_choice(X[tr], data.quality[tr], V[tr], data.price[tr], X[te])
        prob = clf.predict_proba(X[te])
        # the threshold at which RouteLLM spends what the Router spends (bisection on cost)
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            res = _two_model_result((prob > mid).astype(np.int64), strong, weak, m.shape[1])
            if evaluate(res, V[te], data.price[te], 1 / LAM)["total_cost"] > ev_r["total_cost"]:
                lo = mid
            else:
                hi = mid
        res = _two_model_result((prob > hi).astype(np.int64), strong, weak, m.shape[1])
        ev_l = evaluate(res, V[te], data.price[te], 1 / LAM)
        for name, ev in (("Pandora's Router", ev_r), ("exhaustive", ev_e), ("RouteLLM (cost-matched)", ev_l)):
            rows.append(f"| {seed} | {name} | {ev['calls']:.2f} | {ev['net']:.4f} | {ev['total_cost']:.5f} |")
        ratios.append((ev_r["net"] / ev_e["net"], ev_r["calls"] / ev_e["calls"], ev_r["net"] / ev_l["net"]))
    r = np.median(np.array(ratios), axis=0)
    rows.append("")
    rows.append(
        f"Medians over seeds {list(seeds)}: net value Router / exhaustive = {r[0]:.3f}; expensive calls "
        f"Router / exhaustive = {r[1]:.3f}; net value Router / cost-matched RouteLLM = {r[2]:.3f}."
    )
    return "\n".join(rows)


def main(quick: bool = False) -> str:
    sizes = SIZES[:1] if quick else SIZES
    result, rates = throughput(sizes, quick)
    with threadpool_limits(1, user_api="blas"):
        quality = equal_cost_rows(SEEDS[:1] if quick else SEEDS)
    title = f"Quality at equal total cost (multi_llm, lam = {LAM:g}, hashing embeddings, 800 test queries)"
    tables = {
        "Throughput in decisions per second (n / median seconds per call, from the timings above)": rates,
        title: quality,
    }
    return publish([result], __file__, quick=quick, title="pandoras-router benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest size, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
