"""Side by side: Pandora's Router vs exhaustive estimation and a RouteLLM-style router.

1. Throughput: routing decisions per second, batched, for K = 11 and K = 100 specialists
   (estimates precomputed, one BLAS/CPU thread), Pandora's Router vs the exhaustive policy and the
   RouteLLM-style threshold router (both also given their inputs precomputed). Median of repeats.
2. Quality at equal total cost (multi_llm domain, hashing embeddings): the RouteLLM threshold is
   set so that its mean total cost (answer + estimation) equals the Router's; expensive calls and
   realised net value of Router, exhaustive and RouteLLM.

Run: python packages/pandoras-router/benchmarks/bench_pandoras_router.py
Writes benchmarks/results.md (atomically).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from paperworks.core import atomic_write_text
from paperworks.pandoras_router import (
    CheapValueEstimator,
    RouteLLMRouter,
    embed_texts,
    evaluate,
    exhaustive,
    make_domain,
    pandoras_route,
)
from paperworks.pandoras_router.experiments import LAM, _routellm_choice, _two_model_result

REPEATS = 5


def _instance(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    m = rng.normal(0.5, 0.2, (n, k))
    s = np.full(k, 0.2)
    tau = np.full(k, 0.05)
    cost = np.full(k, 0.004)
    y = m + rng.normal(0, 0.2, (n, k))
    return m, s, tau, cost, y


def _timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) for one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def throughput_rows() -> list[str]:
    rows = [
        "| specialists | queries | Router decisions/s (wall) | Router decisions per CPU-second | "
        "exhaustive decisions/s | RouteLLM decisions/s | Router / exhaustive | Router / RouteLLM | "
        "Router calls / query |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for k, n in ((11, 100_000), (100, 20_000)):
        m, s, tau, cost, y = _instance(n, k)
        X = np.random.default_rng(1).normal(size=(n, 384))
        clf = RouteLLMRouter().fit(X[:2000], (X[:2000, 0] > 0).astype(float))
        calls = pandoras_route(m, s, tau, cost, y).n_inspections.mean()
        t_r, t_e, t_l = [], [], []
        args = (m, s, tau, cost, y)
        for _ in range(REPEATS):  # interleaved, so load changes hit all three alike
            t_r.append(_timed(lambda a=args: pandoras_route(*a)))
            t_e.append(_timed(lambda a=args: exhaustive(*a)))
            t_l.append(_timed(lambda c=clf, x=X: c.route(x, 0.5)))
        (r, r_cpu), (e, _), (ll, _) = (n / np.median(np.array(tt), axis=0) for tt in (t_r, t_e, t_l))
        rows.append(
            f"| {k} | {n} | {r:,.0f} | {r_cpu:,.0f} | {e:,.0f} | {ll:,.0f} | {r / e:.2f} | {r / ll:.2f} "
            f"| {calls:.2f} |"
        )
    return rows


def equal_cost_rows(seeds: tuple[int, ...] = (0, 1, 2)) -> list[str]:
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
        f"Medians over seeds: net value Router / exhaustive = {r[0]:.3f}; expensive calls "
        f"Router / exhaustive "
        f"= {r[1]:.3f}; net value Router / cost-matched RouteLLM = {r[2]:.3f}."
    )
    return rows


def main() -> str:
    with threadpool_limits(1, user_api="blas"):
        parts = [
            f"### Throughput (one BLAS thread, estimates precomputed, median of {REPEATS} "
            "interleaved repeats; "
            "ratios are of wall-clock rates; CPU-second rates count only this process)",
            "",
            *throughput_rows(),
            "",
            "### Quality at equal total cost (multi_llm, lam = 10, hashing embeddings, 800 test queries)",
            "",
            *equal_cost_rows(),
        ]
    text = "\n".join(parts) + "\n"
    atomic_write_text(Path(__file__).with_name("results.md"), text)
    print(text)
    return text


if __name__ == "__main__":
    main()
