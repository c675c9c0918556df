"""Side by side on the core bench harness: the angular mean against a generic optimiser, and the
closed-form long-run IP against Monte Carlo.

Two questions, one :func:`paperworks.core.bench.compare` each, on the same inputs (warm-up, rounds
interleaved in a seeded random order, medians, ratio ours/peer with a bootstrap interval, one thread):

1. *Computing the rule*: ours (Riemannian L-BFGS, :func:`angular_mean`) against scipy's L-BFGS-B on the
   same scale-free objective sum alpha_i angle(w/|w|, theta_i)^2 from the same 8 starting points (what a
   practitioner would write); the arithmetic mean (the default rule) is timed for scale. Quality (same
   run, same inputs): objective ours / scipy (<= 1: ours as good or better).
2. *Evaluating long-run IP* of the angular mean: the closed form for Gaussian items
   (:func:`long_run_ip`) against a Monte Carlo estimate from 1,000 Gaussian item pairs. Quality:
   max_i |closed form - Monte Carlo| over voters.

Sizes: voters n x dimension d in {10, 1,000, 100,000} x {2, 100, 1,000} with n x d <= 10^7 (100,000 x
1,000 would need 800 MB for the voters alone); 15 rounds after one warm-up call per side and size.
scipy is imported at module import and its first call lands in the warm-up, not in a timed round.

Run: ``uv run python packages/angular-mean/benchmarks/bench_angular_mean.py [--quick]`` or
``uv run paperworks bench angular-mean [--quick]``. The full run writes benchmarks/results.json and
results.md; ``--quick`` (smallest size, 3 rounds, 1 warm-up) writes to a temporary folder and prints.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import minimize

from paperworks.angular_mean import angular_mean, arithmetic_mean, long_run_ip, random_instance
from paperworks.angular_mean.rules import _starts
from paperworks.core.bench import compare, publish

N_STARTS = 8
MC_PAIRS = 1000
SIZES = tuple((n, d) for n in (10, 1000, 100_000) for d in (2, 100, 1000) if n * d <= 10**7)
REPEATS = 15  # the full run; 20 would take the benchmark past its 5-minute budget on a loaded 2-core machine
NOTE_RULE = (
    "Sides: `angular_mean` (ours: Riemannian L-BFGS, 8 starts, gradient tolerance 1e-10); scipy's "
    "L-BFGS-B on the same scale-free objective with its analytic gradient from the same 8 starts "
    "(gtol 1e-10, best of the 8 kept); `arithmetic_mean` (the default rule) for scale. The starting "
    "points are built once per size, outside the timing, and shared; scipy's first call is in the "
    "warm-up. 15 rounds, not 20, to keep the full benchmark under 5 minutes. n x d is capped at 10^7 "
    "(100,000 x 1,000 would need 800 MB for the voters alone). Whether both reach the same optimum: "
    "the quality table (objective ours / scipy on the same inputs)."
)
NOTE_IP = (
    "Sides: `long_run_ip` of the angular mean in closed form for Gaussian items (ours: 1 - angle/pi per "
    "voter) against a Monte Carlo estimate of the same agreements from 1,000 Gaussian item pairs (the "
    "random pairs are drawn inside the timed call, with a fixed seed: drawing them is part of the Monte "
    "Carlo method). 15 rounds (see above). The error of the Monte Carlo estimate: the quality table."
)


def peer_scipy(thetas: np.ndarray, alpha: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Best of scipy L-BFGS-B runs on sum alpha_i angle(w/|w|, u_i)^2 from ``starts``."""
    u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)

    def fun(w):
        nw = np.linalg.norm(w)
        c = np.clip(u @ w / nw, -1.0, 1.0)
        phi = np.arccos(c)
        s = np.sqrt(np.maximum(1 - c**2, 0))
        k = np.where(s > 1e-12, phi / np.maximum(s, 1e-300), np.where(c > 0, 1.0, 0.0))
        wk = alpha * k
        grad = -2.0 * (wk @ u - (wk @ c) * w / nw) / nw
        return float(alpha @ phi**2), grad

    best, best_f = None, np.inf
    for w0 in starts:
        res = minimize(fun, w0, jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-10})
        if res.fun < best_f:
            best, best_f = res.x / np.linalg.norm(res.x), res.fun
    return best


def mc_agreement(theta: np.ndarray, thetas: np.ndarray, n_pairs: int, seed: int) -> np.ndarray:
    """Monte Carlo long-run agreement of ``theta`` with each voter from ``n_pairs`` Gaussian item pairs."""
    z = np.random.default_rng(seed).standard_normal((n_pairs, thetas.shape[1]))
    s = np.sign(z @ theta)
    out = np.empty(len(thetas))
    step = max(1, 2_000_000 // n_pairs)
    for i in range(0, len(thetas), step):
        out[i : i + step] = 0.5 * (1 + s @ np.sign(z @ thetas[i : i + step].T) / n_pairs)
    return out


def objective(t: np.ndarray, thetas: np.ndarray, alpha: np.ndarray) -> float:
    u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)
    return float(alpha @ np.arccos(np.clip(u @ t, -1, 1)) ** 2)


class Instance:
    """One size's voters, fractions and shared starting points; sides leave their last output in ``out``."""

    def __init__(self, n: int, d: int) -> None:
        self.thetas, self.alpha = random_instance(n, d, seed=n + d)
        u = self.thetas / np.linalg.norm(self.thetas, axis=1, keepdims=True)
        self.starts = _starts(u, self.alpha, N_STARTS, np.random.default_rng(0))
        self.out: dict[str, object] = {}
        self._theta: np.ndarray | None = None

    @property
    def theta(self) -> np.ndarray:
        """The angular mean (from the rule comparison's last call when it ran, else computed once)."""
        if self._theta is None:
            self._theta = self.out.get("ours")
            if self._theta is None:
                self._theta = angular_mean(self.thetas, self.alpha, n_starts=N_STARTS)
        return self._theta


def main(quick: bool = False) -> str:
    sizes = SIZES[:1] if quick else SIZES
    reps = dict(repeats=3, warmup=1) if quick else dict(repeats=REPEATS, warmup=1)
    cache: dict[tuple[int, int], Instance] = {}

    def instance(size: tuple[int, int]) -> Instance:
        if size not in cache:
            cache[size] = Instance(*size)
        return cache[size]

    def ours(x: Instance) -> None:
        x.out["ours"] = angular_mean(x.thetas, x.alpha, n_starts=N_STARTS)

    def scipy_side(x: Instance) -> None:
        x.out["scipy"] = peer_scipy(x.thetas, x.alpha, x.starts)

    rule = compare(
        {
            "angular_mean (ours)": ours,
            "scipy L-BFGS-B": scipy_side,
            "arithmetic_mean": lambda x: arithmetic_mean(x.thetas, x.alpha),
        },
        instance,
        sizes,
        ours="angular_mean (ours)",
        peer=["scipy L-BFGS-B", "arithmetic_mean"],
        name="Computing the rule: angular mean vs scipy L-BFGS-B",
        size_label="n × d",
        note=NOTE_RULE,
        **reps,
    )

    def closed(x: Instance) -> None:
        x.out["closed"] = long_run_ip(x.theta, x.thetas, x.alpha).agreement

    def monte_carlo(x: Instance) -> None:
        x.out["mc"] = mc_agreement(x.theta, x.thetas, MC_PAIRS, 0)

    def ip_input(size: tuple[int, int]) -> Instance:
        x = instance(size)
        _ = x.theta  # computed here (untimed) when the rule comparison did not run at this size
        return x

    ip = compare(
        {"closed-form long_run_ip (ours)": closed, "Monte Carlo, 1,000 pairs": monte_carlo},
        ip_input,
        sizes,
        ours="closed-form long_run_ip (ours)",
        name="Evaluating long-run IP: closed form vs Monte Carlo",
        size_label="n × d",
        note=NOTE_IP,
        **reps,
    )

    q_rule = [
        "| n × d | objective angular_mean | objective scipy L-BFGS-B | objective ours / scipy |",
        "| --- | --- | --- | --- |",
    ]
    for n, d in sizes:
        x = cache[(n, d)]
        fo, fp = objective(x.out["ours"], x.thetas, x.alpha), objective(x.out["scipy"], x.thetas, x.alpha)
        q_rule.append(f"| {n:,} × {d:,} | {fo:.9g} | {fp:.9g} | {fo / fp:.6f} |")
    q_ip = ["| n × d | max over voters abs(closed form - Monte Carlo) |", "| --- | --- |"]
    for n, d in sizes:
        x = cache[(n, d)]
        q_ip.append(f"| {n:,} × {d:,} | {float(np.abs(x.out['closed'] - x.out['mc']).max()):.3f} |")
    tables = {
        "Quality: objective reached (same inputs, last timed call of each side)": "\n".join(q_rule),
        "Quality: Monte Carlo error of long-run agreement (1,000 pairs, seed 0)": "\n".join(q_ip),
    }
    return publish([rule, ip], __file__, quick=quick, title="angular-mean benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest size, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
