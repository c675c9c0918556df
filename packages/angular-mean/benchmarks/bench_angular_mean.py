"""Side by side: the angular mean against a generic optimiser, closed-form IP against Monte Carlo.

Peers, in one process on the same inputs, interleaved, medians over repeats:

* computing the rule: ours (Riemannian L-BFGS, :func:`angular_mean`) against scipy's L-BFGS-B on
  the same scale-free objective sum alpha_i angle(w/|w|, theta_i)^2 from the same starting points
  (what a practitioner would write), and the arithmetic mean (the default rule) for scale;
  quality: objective ours / peer (<= 1: ours as good or better);
* evaluating long-run IP: the closed form for Gaussian items (:func:`long_run_ip`) against a Monte
  Carlo estimate from 1,000 Gaussian item pairs; error: max |closed form - Monte Carlo|.

Sizes: n voters in {10, 1,000, 100,000} x d in {2, 100, 1,000}, except n x d > 10^7 (800 MB of
voters, beyond this 2-core machine's share). Run: python benchmarks/bench_angular_mean.py [--quick]
"""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from paperworks.angular_mean import angular_mean, arithmetic_mean, long_run_ip, random_instance
from paperworks.angular_mean.rules import _starts
from paperworks.core import atomic_write_text


def peer_scipy(thetas: np.ndarray, alpha: np.ndarray, starts: np.ndarray) -> np.ndarray:
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


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(quick: bool = False) -> str:
    ns = (10, 1000) if quick else (10, 1000, 100_000)
    ds = (2, 100) if quick else (2, 100, 1000)
    rows = [
        "| n | d | angular mean (s) | scipy L-BFGS-B peer (s) | time ours/peer | objective ours/peer "
        "| arithmetic mean (s) | closed-form IP (s) | Monte Carlo IP (s) | time closed/MC "
        "| max abs closed - MC |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in ns:
        for d in ds:
            if n * d > 10**7:
                continue
            thetas, alpha = random_instance(n, d, seed=n + d)
            reps = 3 if n * d <= 10**6 else 2
            t_ours, t_peer, t_arith, t_cf, t_mc = [], [], [], [], []
            u = thetas / np.linalg.norm(thetas, axis=1, keepdims=True)
            starts = _starts(u, alpha, 8, np.random.default_rng(0))
            for r in range(reps):  # interleaved
                dt, ours = timed(partial(angular_mean, thetas, alpha))
                t_ours.append(dt)
                dt, peer = timed(partial(peer_scipy, thetas, alpha, starts))
                t_peer.append(dt)
                dt, _ = timed(partial(arithmetic_mean, thetas, alpha))
                t_arith.append(dt)
                dt, ip = timed(partial(long_run_ip, ours, thetas, alpha))
                t_cf.append(dt)
                dt, mc = timed(partial(mc_agreement, ours, thetas, 1000, r))
                t_mc.append(dt)
            q = objective(ours, thetas, alpha) / objective(peer, thetas, alpha)
            err = float(np.abs(ip.agreement - mc).max())
            med = {
                k: float(np.median(v)) for k, v in dict(o=t_ours, p=t_peer, a=t_arith, c=t_cf, m=t_mc).items()
            }
            rows.append(
                f"| {n} | {d} | {med['o']:.3g} | {med['p']:.3g} | {med['o'] / med['p']:.2f} | {q:.6f} | "
                f"{med['a']:.2g} | {med['c']:.2g} | {med['m']:.2g} | {med['c'] / med['m']:.3f} | {err:.3f} |"
            )
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    if not quick:
        atomic_write_text(Path(__file__).with_name("results.md"), table + "\n")
    return table


if __name__ == "__main__":
    print(main(quick="--quick" in sys.argv[1:]))
