"""Side by side on the core bench harness: Pandora's Router vs exhaustive estimation and a RouteLLM-style
router.

1. Throughput, independent errors (one :func:`paperworks.core.bench.compare`): one batched routing
   call over n queries for K = 11 (n = 100,000) and K = 100 (n = 20,000) specialists, Pandora's Router
   (a cheap-estimator std per query and specialist, independent errors) against the exhaustive policy
   and the RouteLLM-style threshold router. Every side gets its inputs precomputed (cheap estimates,
   expensive readings, embeddings): the estimators themselves are not timed. One thread (BLAS pinned by
   the harness); warm-up, rounds interleaved in a seeded random order, medians, ratio ours/peer with a
   bootstrap interval. Decisions per second (n / median) and the Router's expensive calls per query
   are tabled beside it.
2. Throughput, correlated errors (a second ``compare``): the Router on the one-factor model (the
   experiment's belief; its stopping test is the exact one-step value of information, O(K^2) per
   query and step) against the independent rule and exhaustive estimation on the same inputs, at
   K = 11 (n = 10,000) and K = 100 (n = 500).
3. Quality at equal total cost (not a timing, in ``tables``): multi_llm domain, hashing embeddings,
   800 test queries per seed, the experiment's cheap estimator (input-dependent std, correlated
   errors); the RouteLLM threshold is set so that its mean total cost (answer + estimation) equals the
   Router's, and the uncertainty threshold's z so that its calls equal the Router's; expensive calls
   and realised net value of every policy.

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
    uncertainty_threshold,
    uncertainty_z_for_budget,
)
from paperworks.pandoras_router.experiments import PandorasRouterConfig, _routellm_choice, _two_model_result

LAM = PandorasRouterConfig().lam  # the experiment's willingness to pay
SIZES = ((11, 100_000), (100, 20_000))  # (specialists K, queries n)
CORR_SIZES = ((11, 10_000), (100, 500))
SEEDS = (0, 1, 2)
OURS = "Pandora's Router (ours)"
OURS_CORR = "Pandora's Router, correlated (ours)"
NOTE = (
    "One call routes all n queries of the batch. Sides: `pandoras_route` (ours: the Weitzman index rule, "
    "at most K inspection steps, vectorised over queries; independent errors, a std per query and "
    "specialist), `exhaustive` (inspect every specialist, then argmax) and `RouteLLMRouter.route` "
    "(logistic strong/weak classifier on 384-d embeddings, threshold 0.5). Inputs are precomputed and "
    "shared: cheap-estimate means m ~ N(0.5, 0.2^2), s = 0.2 x U(0.7, 1.3) per query and specialist, "
    "tau = 0.05, cost 0.004 per call, readings m + N(0, 0.2^2); the classifier is fitted on 2,000 of the "
    "embeddings beforehand. Estimation (embedding, ridge heads) is not timed."
)
CORR_NOTE = (
    "The same inputs with one-factor correlated errors (loadings U(0.2, 0.8) per specialist): ours is "
    "`pandoras_route(..., loading=...)` (posterior of the factor model, exact one-step value of "
    "information as the stopping test, O(K^2) per query and step); the sides are the independent rule "
    "on the same means and stds, and exhaustive estimation with the factor posterior."
)


def _instance(k: int, n: int, seed: int = 0, classifier: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    m = rng.normal(0.5, 0.2, (n, k))
    s = 0.2 * rng.uniform(0.7, 1.3, (n, k))
    tau = np.full(k, 0.05)
    cost = np.full(k, 0.004)
    y = m + rng.normal(0, 0.2, (n, k))
    out = {"args": (m, s, tau, cost, y), "n": n, "loading": rng.uniform(0.2, 0.8, k)}
    if classifier:
        X = np.random.default_rng(1).normal(size=(n, 384))
        out["X"] = X
        out["clf"] = RouteLLMRouter().fit(X[:2000], (X[:2000, 0] > 0).astype(int))
    return out


def throughput(sizes, quick: bool):
    cache: dict[tuple[int, int], dict] = {}

    def make(size):
        cache[size] = _instance(*size)
        return cache[size]

    def ours(x):
        x["calls"] = pandoras_route(*x["args"]).n_inspections.mean()

    result = compare(
        {
            OURS: ours,
            "exhaustive": lambda x: exhaustive(*x["args"]),
            "RouteLLM-style": lambda x: x["clf"].route(x["X"], 0.5),
        },
        make,
        sizes,
        ours=OURS,
        name="Throughput, independent errors: one batched routing call",
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
        rows.append(
            f"| {row.size[0]} × {row.size[1]:,} | {rate[OURS]:,.0f} | "
            f"{rate['exhaustive']:,.0f} | {rate['RouteLLM-style']:,.0f} | {x['calls']:.2f} |"
        )
    return result, "\n".join(rows)


def throughput_correlated(sizes, quick: bool):
    cache: dict[tuple[int, int], dict] = {}

    def make(size):
        cache[size] = _instance(*size, classifier=False)
        return cache[size]

    def ours(x):
        x["calls"] = pandoras_route(*x["args"], loading=x["loading"]).n_inspections.mean()

    def indep(x):
        x["calls_indep"] = pandoras_route(*x["args"]).n_inspections.mean()

    result = compare(
        {
            OURS_CORR: ours,
            "independent rule": indep,
            "exhaustive (factor posterior)": lambda x: exhaustive(*x["args"], loading=x["loading"]),
        },
        make,
        sizes,
        ours=OURS_CORR,
        name="Throughput, correlated errors: one batched routing call",
        size_label="K × n",
        note=CORR_NOTE,
        **(dict(repeats=3, warmup=1) if quick else dict(repeats=5, warmup=1)),
    )
    rows = [
        "| K × n | correlated Router decisions/s | independent rule decisions/s | correlated calls / query "
        "| independent calls / query |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in result.rows:
        x = cache[row.size]
        rate = {s.name: x["n"] / s.median_s for s in row.sides}
        rows.append(
            f"| {row.size[0]} × {row.size[1]:,} | {rate[OURS_CORR]:,.0f} | {rate['independent rule']:,.0f} "
            f"| {x['calls']:.2f} | {x['calls_indep']:.2f} |"
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
        est = CheapValueEstimator(random_state=seed).fit(X[tr], V[tr])
        m, s = est.predict_belief(X[te])
        Y = V[te] + np.random.default_rng(seed + 1).normal(size=m.shape) * data.tau
        c = LAM * data.inspect_price
        load = est.loading_

        def ev(res, V=V, te=te, data=data):
            return evaluate(res, V[te], data.price[te], 1 / LAM)

        ev_r = ev(pandoras_route(m, s, data.tau, c, Y, loading=load))
        ev_i = ev(pandoras_route(m, np.broadcast_to(est.sigma_, m.shape), data.tau, c, Y))
        ev_e = ev(exhaustive(m, s, data.tau, c, Y, loading=load))
        z = uncertainty_z_for_budget(m, s, ev_r["calls"])
        ev_u = ev(uncertainty_threshold(m, s, data.tau, c, Y, z=z, loading=load))
        clf, strong, weak, _ = _routellm_choice(X[tr], data.quality[tr], V[tr], data.price[tr], X[te])
        prob = clf.strong_probability(X[te])
        # the threshold at which RouteLLM spends what the Router spends (bisection on cost)
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            res = _two_model_result((prob > mid).astype(np.int64), strong, weak, m.shape[1])
            if ev(res)["total_cost"] > ev_r["total_cost"]:
                lo = mid
            else:
                hi = mid
        ev_l = ev(_two_model_result((prob > hi).astype(np.int64), strong, weak, m.shape[1]))
        for name, e in (
            ("Pandora's Router", ev_r),
            ("0.2.0 rule (const. std, independent)", ev_i),
            ("exhaustive", ev_e),
            ("uncertainty threshold (matched calls)", ev_u),
            ("RouteLLM (cost-matched)", ev_l),
        ):
            rows.append(f"| {seed} | {name} | {e['calls']:.2f} | {e['net']:.4f} | {e['total_cost']:.5f} |")
        ratios.append(
            (
                ev_r["net"] / ev_e["net"],
                ev_r["calls"] / ev_e["calls"],
                ev_r["net"] / ev_l["net"],
                ev_r["net"] / ev_u["net"],
            )
        )
    r = np.median(np.array(ratios), axis=0)
    rows.append("")
    rows.append(
        f"Medians over seeds {list(seeds)}: net value Router / exhaustive = {r[0]:.3f}; expensive calls "
        f"Router / exhaustive = {r[1]:.3f}; net value Router / cost-matched RouteLLM = {r[2]:.3f}; net "
        f"value Router / call-matched uncertainty threshold = {r[3]:.4f}."
    )
    return "\n".join(rows)


def main(quick: bool = False) -> str:
    result, rates = throughput(SIZES[:1] if quick else SIZES, quick)
    corr, corr_rates = throughput_correlated(CORR_SIZES[:1] if quick else CORR_SIZES, quick)
    with threadpool_limits(1, user_api="blas"):
        quality = equal_cost_rows(SEEDS[:1] if quick else SEEDS)
    title = f"Quality at equal total cost (multi_llm, lam = {LAM:g}, hashing embeddings, 800 test queries)"
    tables = {
        "Throughput in decisions per second (n / median seconds per call, from the timings above)": rates,
        "Correlated errors: decisions per second and calls (from the timings above)": corr_rates,
        title: quality,
    }
    return publish([result, corr], __file__, quick=quick, title="pandoras-router benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest size, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
