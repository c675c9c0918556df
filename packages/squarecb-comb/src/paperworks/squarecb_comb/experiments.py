"""Headline reproduction of SquareCB.Comb on generated contextual combinatorial semi-bandits.

Per seed:

1. realisable grid ``(m, A)`` in ``(1, 20), (3, 100), (5, 300), (10, 1000)`` (quick: the first
   two), horizon ``T = 5000`` (quick: 500): SquareCB.Comb and the four baselines of the issue
   (epsilon-greedy top-m, CombLinUCB, CombLinTS, per-arm SquareCB), all on a linear oracle, in
   lockstep on one context stream with common reward draws;
2. from SquareCB.Comb's cumulative regret: the log-log slope in ``T`` per configuration (fitted on
   12 log-spaced points of ``[T/10, T]``) and the log-log slope of ``R_T`` against ``m A`` across
   configurations (the bound predicts 0.5 for both);
3. misspecified environment ``(m, A) = (3, 100)``, horizon ``T/2`` (quick: ``T``): the same methods,
   plus SquareCB.Comb on a random-features (RBF) oracle and on a small MLP oracle (reported, no claim;
   quick mode: only SquareCB.Comb linear and RFF and CombLinUCB);
4. per-round time of SquareCB.Comb's act + learn at ``A = 1000, m = 10`` (from the realisable run;
   in quick mode from a 200-round timing run).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import numpy as np

from paperworks.core import Claim, Experiment, Paper, Progress, Report, optional_pyplot

from .agent import SquareCBComb
from .baselines import CombLinTS, CombLinUCB, EpsilonGreedyTopM, PerArmSquareCB
from .environment import EnvironmentConfig, SemiBanditEnvironment
from .oracles import LinearOracle, MLPOracle, RandomFeaturesOracle
from .simulate import simulate

__all__ = ["SquareCBCombExperiment", "loglog_slope"]

DIM = 10
FULL_GRID = ((1, 20), (3, 100), (5, 300), (10, 1000))
QUICK_GRID = FULL_GRID[:2]
BASELINES = ("eps_greedy", "comb_linucb", "comb_lints", "perarm_squarecb")
MISSPEC = (3, 100)


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``log y`` on ``log x`` (both positive), a float."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.size < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("loglog_slope: expected two equal-length positive arrays of at least 2 points")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _linear_agents(A: int, m: int, seed: int) -> dict[str, Callable[[], object]]:
    return {
        "squarecb_comb": lambda: SquareCBComb(A, m, LinearOracle(DIM), seed=seed),
        "eps_greedy": lambda: EpsilonGreedyTopM(A, m, LinearOracle(DIM), seed=seed),
        "comb_linucb": lambda: CombLinUCB(A, m, DIM, seed=seed),
        "comb_lints": lambda: CombLinTS(A, m, DIM, seed=seed),
        "perarm_squarecb": lambda: PerArmSquareCB(A, m, LinearOracle(DIM), seed=seed),
    }


def _tag(m: int, A: int) -> str:
    return f"m{m}_A{A}"


class SquareCBCombExperiment(Experiment):
    """Regret scaling in T and in m A, comparison with baselines, per-round time."""

    slug: ClassVar[str] = "squarecb-comb"
    paper: ClassVar[Paper] = Paper(
        "SquareCB.Comb: contextual combinatorial semi-bandits with general reward function approximation",
        arxiv=None,
        note="no public text; method reconstructed from the abstract and SquareCB (Foster & Rakhlin 2020)",
    )
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "regret_sqrt_T",
            "cumulative regret grows like sqrt(T) (log-log slope in T, realisable, mean over (m, A))",
            "slope_T_abs_dev",
            "<=",
            0.15,
            note="metric = |mean slope - 0.5|",
        ),
        Claim(
            "regret_sqrt_mA",
            "regret scales with m and A as sqrt(m A) (log-log slope of R_T against m A)",
            "slope_mA_abs_dev",
            "<=",
            0.2,
            note="metric = |slope - 0.5|",
        ),
        Claim(
            "beats_baselines",
            "lower regret than the baselines in the realisable setting",
            "regret_ratio_to_best_baseline",
            "<",
            1.0,
            note="mean over (m, A) of R_T(SquareCB.Comb) / min over baselines R_T",
        ),
        Claim(
            "per_round_time",
            "per-round computation stays practical for large arm sets (act+learn < 5 ms at A=1000, m=10)",
            "ms_per_round_A1000_m10",
            "<",
            5.0,
        ),
    )
    default_seeds: ClassVar[int] = 3

    def __init__(self) -> None:
        self._curves: dict[str, dict[int, np.ndarray]] = {}
        self._checkpoints = np.empty(0, dtype=int)

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        T = 500 if quick else 5_000
        grid = QUICK_GRID if quick else FULL_GRID
        checkpoints = np.unique(np.geomspace(T / 10, T, 12).astype(int))
        out: dict[str, float] = {}
        final_ours, mA, slopes, ratios = [], [], [], []
        for m, A in progress.track(grid, desc=f"realisable grid (seed {seed})"):
            env = SemiBanditEnvironment(EnvironmentConfig(A, m, DIM, "linear"), seed=10_000 * seed + A + m)
            agents = {k: make() for k, make in _linear_agents(A, m, seed).items()}
            res = simulate(agents, env, T)
            tag = _tag(m, A)
            for name, r in res.items():
                out[f"regret_{name}_{tag}"] = r.final_regret
                self._curves.setdefault(f"{name}_{tag}", {})[seed] = r.cumulative_regret[checkpoints - 1]
            curve = res["squarecb_comb"].cumulative_regret
            slope = loglog_slope(checkpoints, np.maximum(curve[checkpoints - 1], 1e-12))
            out[f"slope_T_{tag}"] = slope
            slopes.append(slope)
            final_ours.append(res["squarecb_comb"].final_regret)
            mA.append(m * A)
            ratios.append(res["squarecb_comb"].final_regret / min(res[b].final_regret for b in BASELINES))
            out[f"ms_per_round_{tag}"] = 1e3 * res["squarecb_comb"].seconds_per_round
            if (m, A) == (10, 1000):
                out["ms_per_round_A1000_m10"] = 1e3 * res["squarecb_comb"].seconds_per_round
        self._checkpoints = checkpoints
        out["slope_T_mean"] = float(np.mean(slopes))
        out["slope_T_abs_dev"] = abs(out["slope_T_mean"] - 0.5)
        out["slope_mA"] = loglog_slope(np.array(mA), np.array(final_ours))
        out["slope_mA_abs_dev"] = abs(out["slope_mA"] - 0.5)
        out["regret_ratio_to_best_baseline"] = float(np.mean(ratios))

        m, A = MISSPEC
        T_mis = T if quick else T // 2
        env = SemiBanditEnvironment(EnvironmentConfig(A, m, DIM, "misspecified"), seed=10_000 * seed + 7)
        makers = _linear_agents(A, m, seed)
        agents = {k: makers[k]() for k in (("squarecb_comb", "comb_linucb") if quick else makers)}
        agents["squarecb_comb_rff"] = SquareCBComb(
            A, m, RandomFeaturesOracle(DIM, n_features=256, bandwidth=0.5, seed=seed), seed=seed
        )
        if not quick:
            agents["squarecb_comb_mlp"] = SquareCBComb(A, m, MLPOracle(DIM, hidden=32, seed=seed), seed=seed)
        progress.log(f"misspecified environment m={m}, A={A}, T={T_mis}")
        for name, r in simulate(agents, env, T_mis).items():
            out[f"misspec_regret_{name}"] = r.final_regret

        if quick:  # timing at the large arm set, short run
            m, A = 10, 1000
            env = SemiBanditEnvironment(EnvironmentConfig(A, m, DIM, "linear"), seed=seed)
            r = simulate({"ours": SquareCBComb(A, m, LinearOracle(DIM), seed=seed)}, env, 200)["ours"]
            out["ms_per_round_A1000_m10"] = 1e3 * r.seconds_per_round
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        grid = QUICK_GRID if quick else FULL_GRID
        methods = ("squarecb_comb", *BASELINES)

        def cell(key: str) -> str:
            v = np.array([s[key] for s in per_seed])
            return f"{v.mean():.1f} ± {v.std(ddof=1) if v.size > 1 else 0.0:.1f}"

        head = "| (m, A) | " + " | ".join(methods) + " | slope in T (ours) |"
        rows = [head, "|" + " --- |" * (len(methods) + 2)]
        for m, A in grid:
            tag = _tag(m, A)
            slope = np.mean([s[f"slope_T_{tag}"] for s in per_seed])
            rows.append(
                f"| ({m}, {A}) | "
                + " | ".join(cell(f"regret_{k}_{tag}") for k in methods)
                + f" | {slope:.3f} |"
            )
        mis = [k for k in per_seed[0] if k.startswith("misspec_regret_")]
        rows2 = ["| method | regret R_T |", "| --- | --- |"]
        rows2 += [f"| {k.removeprefix('misspec_regret_')} | {cell(k)} |" for k in mis]
        m, A = MISSPEC
        return {
            "Realisable: final cumulative regret R_T (mean ± std over seeds)": "\n".join(rows),
            f"Misspecified (m={m}, A={A}): final cumulative regret": "\n".join(rows2),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        if not self._curves or self._checkpoints.size == 0:
            return []
        grid = QUICK_GRID if report.quick else FULL_GRID
        fig, axes = plt.subplots(1, len(grid), figsize=(4 * len(grid), 3.4))
        for ax, (m, A) in zip(np.atleast_1d(axes), grid):
            for name in ("squarecb_comb", *BASELINES):
                curves = [self._curves.get(f"{name}_{_tag(m, A)}", {}).get(s) for s in report.seeds]
                if all(c is not None for c in curves):
                    ax.loglog(self._checkpoints, np.mean(curves, axis=0), marker=".", label=name)
            t = self._checkpoints.astype(float)
            ours = np.mean([self._curves[f"squarecb_comb_{_tag(m, A)}"][s] for s in report.seeds], axis=0)
            ax.loglog(t, ours[-1] * np.sqrt(t / t[-1]), "k--", lw=0.8, label="sqrt(T) reference")
            ax.set_title(f"m={m}, A={A}")
            ax.set_xlabel("T")
        np.atleast_1d(axes)[0].set_ylabel("cumulative regret")
        np.atleast_1d(axes)[0].legend(fontsize=7)
        fig.tight_layout()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / "regret_vs_T.png", dpi=110)
        plt.close(fig)
        return ["regret_vs_T.png"]
