"""Per-round time of act + learn: SquareCB.Comb vs vowpal wabbit's ``--cb_explore_adf --squarecb``.

    python packages/squarecb-comb/benchmarks/bench_squarecb_comb.py [--quick]

One process, one stream of arm features (d = 10) per arm-set size A in {100, 1000, 10000}. Each
repeat times a block of rounds of every method back to back (interleaved, so machine load hits all
alike); the table gives the median over repeats of the mean time per round, and the ratio ours / peer.
Rows: SquareCB.Comb with m = 10 (the issue's setting) and with m = 1 (the same single-action task
that vowpal wabbit's SquareCB solves), both on the linear oracle. vowpal wabbit's time includes
parsing each round's A text lines (its Python interface; the strings are formatted outside the
timer). It is an optional peer (extra ``peer``); without it only our times are printed.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from paperworks.core import atomic_write_text
from paperworks.squarecb_comb import EnvironmentConfig, LinearOracle, SemiBanditEnvironment, SquareCBComb

D = 10


def _ours_block(agent: SquareCBComb, env: SemiBanditEnvironment, contexts: list[np.ndarray]) -> float:
    spent = 0.0
    for X in contexts:
        mu = env.mean_rewards(X)
        t0 = time.perf_counter()
        a = agent.act(X)
        t1 = time.perf_counter()
        y = env.rewards(mu, a)
        t2 = time.perf_counter()
        agent.learn(X, a, y)
        spent += (t1 - t0) + (time.perf_counter() - t2)
    return spent / len(contexts)


def _vw_lines(X: np.ndarray) -> list[str]:
    return ["|a " + " ".join(f"f{j}:{v:.4f}" for j, v in enumerate(row)) for row in X]


def _vw_block(vw, env: SemiBanditEnvironment, contexts: list[np.ndarray], rng) -> float:
    spent = 0.0
    for X in contexts:
        mu = env.mean_rewards(X)
        lines = _vw_lines(X)
        t0 = time.perf_counter()
        pmf = np.asarray(vw.predict(lines))
        t1 = time.perf_counter()
        a = int(rng.choice(pmf.size, p=pmf / pmf.sum()))
        cost = -float(rng.random() < mu[a])
        lines[a] = f"0:{cost}:{pmf[a]:.6f} " + lines[a]
        t2 = time.perf_counter()
        vw.learn(lines)
        spent += (t1 - t0) + (time.perf_counter() - t2)
    return spent / len(contexts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and repeats")
    args = parser.parse_args()
    try:
        import vowpalwabbit
    except ImportError:
        vowpalwabbit = None
    sizes = (100, 1000, 10_000)
    repeats = 3 if args.quick else 5
    rounds = {100: 100, 1000: 50, 10_000: 10} if args.quick else {100: 300, 1000: 100, 10_000: 20}
    rows = [
        "| A | ours m=10 (ms/round) | ours m=1 (ms/round) | vowpal wabbit squarecb (ms/round) "
        "| ratio ours m=10 / vw | ratio ours m=1 / vw |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for A in sizes:
        env = SemiBanditEnvironment(EnvironmentConfig(A, 10, D), seed=A)
        rng = np.random.default_rng(A)
        ours10 = SquareCBComb(A, 10, LinearOracle(D), seed=0)
        ours1 = SquareCBComb(A, 1, LinearOracle(D), seed=0)
        vw = None if vowpalwabbit is None else vowpalwabbit.Workspace("--cb_explore_adf --squarecb --quiet")
        warm = [env.context() for _ in range(max(5, rounds[A] // 5))]
        _ours_block(ours10, env, warm)
        _ours_block(ours1, env, warm)
        if vw is not None:
            _vw_block(vw, env, warm, rng)
        t10, t1, tvw = [], [], []
        for _ in range(repeats):
            block = [env.context() for _ in range(rounds[A])]
            t10.append(_ours_block(ours10, env, block))
            t1.append(_ours_block(ours1, env, block))
            if vw is not None:
                tvw.append(_vw_block(vw, env, block, rng))
        m10, m1 = 1e3 * np.median(t10), 1e3 * np.median(t1)
        if vw is not None:
            mvw = 1e3 * np.median(tvw)
            rows.append(f"| {A} | {m10:.3f} | {m1:.3f} | {mvw:.3f} | {m10 / mvw:.3f} | {m1 / mvw:.3f} |")
            vw.finish()
        else:
            rows.append(f"| {A} | {m10:.3f} | {m1:.3f} | not installed | - | - |")
    vw_version = "absent" if vowpalwabbit is None else getattr(vowpalwabbit, "__version__", "?")
    header = (
        f"Per-round act + learn time, median over {repeats} repeats of {rounds} rounds per A; d={D}; "
        f"python {platform.python_version()}, numpy {np.__version__}, vowpalwabbit {vw_version}. "
        f"Command: `python packages/squarecb-comb/benchmarks/bench_squarecb_comb.py"
        f"{' --quick' if args.quick else ''}`."
    )
    table = header + "\n\n" + "\n".join(rows) + "\n"
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table)


if __name__ == "__main__":
    main()
