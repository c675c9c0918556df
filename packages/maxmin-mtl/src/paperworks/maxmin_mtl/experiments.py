"""Headline reproduction: the two-task toy and multi-task MLPs on generated and bundled data.

1. Toy (CAGrad's two-task problem, task 1 scaled by 0.1 as in Nash-MTL/FAMO): Adam from the five
   reference starts with every method, long enough to converge (the final Pareto-stationarity of every
   run is reported); and every method's direction at the same common states (a grid), scored by the
   worst task's normalized improvement rate -- max-min's own objective, so that comparison is an
   identity check of the solver, not evidence. The toy is deterministic, so it runs once per
   experiment and the same toy numbers are reported for every seed.
2. Multi-task regression from the generator (5 tasks, unit scales 1e-2 .. 1e2) and from scikit-learn's
   diabetes data in original units (progression, BMI, log-triglycerides, sex): a shared MLP trunk trained
   with each method (heads on their own losses' gradients, the same for every method); per-task *test*
   metrics against single-task models of the same architecture and budget, summarised as delta-m% (mean
   over tasks of the relative degradation; positive = worse than single-task), its worst task and its
   spread (std over tasks). The loss floors ``L*`` of max-min's gap model (and of FAMO) are fixed in
   advance: ``floor_fraction`` times the final training loss of the single-task model of the same task,
   seed and data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from paperworks.core import Claim, Experiment, Paper, Progress, Report, choose_device, optional_pyplot

from ._checks import finite_array
from .baselines import METHODS, make_method
from .data import MTLData, load_diabetes_tasks, make_multitask_regression
from .rates import best_scaled_worst_rate, task_curvatures
from .toy import TOY_STARTS, pareto_front, toy_loss_floor, toy_losses_and_grads
from .training import ToyResult, run_mtl, run_toy

__all__ = ["QUICK", "MaxMinMTLConfig", "MaxMinMTLExperiment", "delta_m"]

BASELINES = tuple(m for m in METHODS if m != "maxmin")
DATASETS = ("synth", "diabetes")


@dataclass(frozen=True)
class MaxMinMTLConfig:
    """Settings of the reproduction; the defaults are the full run's, :data:`QUICK` the quick run's.

    Attributes:
        toy_steps, toy_lr: Adam steps and learning rate on the two-task toy (from every start); the
            full run's 8000 x 0.01 covers a path long enough for every start to reach the front.
        toy_scale: the toy's task-1 loss scale (0.1, as in Nash-MTL/FAMO).
        toy_rate_every: the toy records its direction's worst-task rate every this many steps.
        toy_grid: the common states of the toy's direction comparison: a ``toy_grid x toy_grid``
            grid over ``[-10, 10]^2``.
        stationary: Pareto-stationarity at or below which a toy run counts as on the Pareto front.
        mtl_steps, mtl_lr, mtl_hidden: full-batch Adam steps, learning rate and trunk width of the
            multi-task (and single-task) MLPs.
        floor_fraction: the loss floor ``L*_t`` is this fraction of the single-task model's final
            training loss on task ``t`` (fixed before any run; a lower bound with a margin).
    """

    toy_steps: int = 8000
    toy_lr: float = 0.01
    toy_scale: float = 0.1
    toy_rate_every: int = 10
    toy_grid: int = 9
    stationary: float = 0.05
    mtl_steps: int = 300
    mtl_lr: float = 3e-3
    mtl_hidden: int = 64
    floor_fraction: float = 0.9

    def __post_init__(self) -> None:
        for name in ("toy_steps", "toy_rate_every", "toy_grid", "mtl_steps", "mtl_hidden"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        for name in ("toy_lr", "toy_scale", "stationary", "mtl_lr"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v) or v <= 0:
                raise ValueError(f"{name}: expected a positive finite number, got {v!r}")
        v = self.floor_fraction
        if isinstance(v, bool) or not isinstance(v, int | float) or not (0 <= v < 1):
            raise ValueError(f"floor_fraction: expected a number in [0, 1), got {v!r}")


QUICK = MaxMinMTLConfig(toy_steps=60, toy_lr=0.1, toy_grid=4, mtl_steps=10)
STATIONARY = MaxMinMTLConfig.stationary  # the full run's on-front criterion, quoted in the claim's note
IDENTITY_TOL = 1e-9  # rates are pure numbers; the solver's optimality tolerance


def delta_m(metrics: np.ndarray, stl: np.ndarray, higher_better: np.ndarray) -> np.ndarray:
    """Per-task delta-m% ``(k,)``: ``100 (-1)^{h_t} (M_t - M_stl,t) / M_stl,t`` (positive = worse).

    ``metrics``, ``stl``: ``(k,)`` finite metrics of the multi-task and the single-task models (``stl``
    non-zero); ``higher_better``: ``(k,)`` booleans (accuracy: True, MSE: False).
    """
    m = finite_array(metrics, "metrics", ndim=1)
    s = finite_array(stl, "stl", shape=(m.shape[0],))
    try:
        hb = np.asarray(higher_better)
    except (TypeError, ValueError):
        raise TypeError("higher_better: expected k booleans") from None
    if hb.dtype != bool:
        raise TypeError(f"higher_better: expected booleans, got dtype {hb.dtype}")
    if hb.shape != m.shape:
        raise ValueError(f"higher_better: expected shape ({m.shape[0]},), got {hb.shape}")
    if np.any(s == 0):
        raise ValueError("stl: expected non-zero single-task metrics (delta-m divides by them)")
    sign = np.where(hb, -1.0, 1.0)
    return 100.0 * sign * (m - s) / np.abs(s)


def _vs_best(values: dict[str, float], lower_better: bool) -> float:
    best = min(values[b] for b in BASELINES) if lower_better else max(values[b] for b in BASELINES)
    return values["maxmin"] - best


class MaxMinMTLExperiment(Experiment):
    slug = "maxmin-mtl"
    paper = Paper(
        "Max-min normalized improvement: balanced multi-task updates through bottleneck tasks",
        arxiv=None,
        note="NeurIPS 2026; method reconstructed from the abstract (no public text)",
    )
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "toy_front",
            "trajectories from every start reach the Pareto front despite the 10x loss-scale gap",
            "toy_maxmin_front_fraction",
            ">=",
            1.0,
            note=f"a run is on the front when its Pareto-stationarity is <= {STATIONARY} after the full "
            "budget (8000 Adam steps, lr 0.01; every method's final stationarity is in the report); the "
            "toy is deterministic (run once, the same value for every seed), hence exact; a small "
            "analogue (the CAGrad toy), not a benchmark the abstract names",
            kind="mechanism",
            exact=True,
        ),
        Claim(
            "toy_balance",
            "the shared update maximises the worst task's normalised improvement rate (toy, common states)",
            "toy_common_worst_rate_margin",
            ">=",
            -IDENTITY_TOL,
            note="every method's direction at the same grid of states; the quantity is the smallest, over "
            "states, of max-min's worst-task rate minus the best baseline's. An identity of the solver "
            "(max-min's value is the maximum over all updates), true by construction: a check, not evidence",
            kind="mechanism",
            exact=True,
        ),
        Claim(
            "synth_balance_worst",
            "improved task balance: worst-task delta-m% (generated data)",
            "synth_worst_dm_vs_best_baseline",
            "<=",
            0.0,
            note="paired per seed: max-min minus the best baseline on held-out (test) worst-task delta-m%",
            paired=True,
        ),
        Claim(
            "synth_balance_spread",
            "improved task balance: delta-m% spread over tasks (generated data)",
            "synth_spread_dm_vs_best_baseline",
            "<=",
            0.0,
            note="paired per seed: max-min minus the best baseline on the held-out delta-m% spread",
            paired=True,
        ),
        Claim(
            "synth_competitive",
            "competitive average performance against every baseline (generated data)",
            "synth_mean_dm_vs_best_baseline",
            "<=",
            2.0,
            note="paired per seed: held-out mean delta-m% within 2 points of the best baseline",
            paired=True,
        ),
        Claim(
            "diabetes_balance_worst",
            "improved task balance: worst-task delta-m% (diabetes)",
            "diabetes_worst_dm_vs_best_baseline",
            "<=",
            0.0,
            note="paired per seed: max-min minus the best baseline on held-out (test) worst-task delta-m%",
            paired=True,
        ),
        Claim(
            "diabetes_balance_spread",
            "improved task balance: delta-m% spread over tasks (diabetes)",
            "diabetes_spread_dm_vs_best_baseline",
            "<=",
            0.0,
            note="paired per seed: max-min minus the best baseline on the held-out delta-m% spread",
            paired=True,
        ),
        Claim(
            "diabetes_competitive",
            "competitive average performance against every baseline (diabetes)",
            "diabetes_mean_dm_vs_best_baseline",
            "<=",
            2.0,
            note="paired per seed: held-out mean delta-m% within 2 points of the best baseline",
            paired=True,
        ),
    )
    default_seeds = 5
    quick_seeds = 3

    def __init__(self) -> None:
        self._toy: dict[MaxMinMTLConfig, dict[str, ToyResult]] = {}

    def config(self, quick: bool) -> MaxMinMTLConfig:
        return QUICK if quick else MaxMinMTLConfig()

    # -- the toy -------------------------------------------------------------------------------
    def toy_results(self, quick: bool, progress: Progress | None = None) -> dict[str, ToyResult]:
        """Toy runs of every method (cached per configuration: the toy has no randomness)."""
        cfg = self.config(quick)
        if cfg not in self._toy:
            progress = progress or Progress(enabled=False)
            starts = np.asarray(TOY_STARTS)
            self._toy[cfg] = {
                m: run_toy(
                    m,
                    starts,
                    steps=cfg.toy_steps,
                    lr=cfg.toy_lr,
                    scale=cfg.toy_scale,
                    rate_every=cfg.toy_rate_every,
                )
                for m in progress.track(METHODS, "toy methods")
            }
        return self._toy[cfg]

    @staticmethod
    def toy_common_rates(cfg: MaxMinMTLConfig) -> dict[str, np.ndarray]:
        """Worst-task rate of every method's direction at the common grid states, method -> ``(n,)``.

        Fresh method instances at every state (FAMO: uniform task weights); the gap curvature with the
        toy's exact floors; states where a task is at its floor or a gradient vanishes are skipped.
        """
        axis = np.linspace(-10.0, 10.0, cfg.toy_grid + 2)[1:-1]
        X = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
        F, G = toy_losses_and_grads(X, cfg.toy_scale)
        floor = toy_loss_floor(cfg.toy_scale)
        out: dict[str, list[float]] = {m: [] for m in METHODS}
        for s in range(X.shape[0]):
            K = G[s] @ G[s].T
            if not np.all(np.diag(K) > 1e-12):
                continue
            lam = task_curvatures(np.diag(K), F[s], "gap", floor)
            for m in METHODS:
                beta, _ = make_method(m, 2, seed=s, loss_floor=floor).weights(K, F[s])
                out[m].append(best_scaled_worst_rate(K, lam, beta))
        return {m: np.asarray(v) for m, v in out.items()}

    # -- multi-task data ----------------------------------------------------------------------------
    @staticmethod
    def _data(name: str, seed: int) -> MTLData:
        if name == "synth":
            return make_multitask_regression(seed=seed)
        return load_diabetes_tasks(seed=seed)

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        out: dict[str, float] = {}
        toy = self.toy_results(quick, progress)
        for m in METHODS:
            out[f"toy_{m}_front_fraction"] = float(np.mean(toy[m].stationarity <= cfg.stationary))
            out[f"toy_{m}_max_stationarity"] = float(toy[m].stationarity.max())
            for s, value in enumerate(toy[m].stationarity):
                out[f"toy_{m}_stationarity_start{s}"] = float(value)
            out[f"toy_{m}_worst_rate"] = toy[m].worst_rate
        common = self.toy_common_rates(cfg)
        best = np.max([common[m] for m in BASELINES], axis=0)
        out["toy_common_worst_rate_margin"] = float((common["maxmin"] - best).min())
        for m in METHODS:
            out[f"toy_{m}_common_worst_rate"] = float(common[m].mean())
        device = choose_device()
        train = {
            "steps": cfg.mtl_steps,
            "lr": cfg.mtl_lr,
            "hidden": cfg.mtl_hidden,
            "seed": seed,
            "device": device,
        }
        for name in DATASETS:
            data = self._data(name, seed)
            singles = [
                run_mtl(data, "ls", tasks=[t], **train)
                for t in progress.track(range(data.n_tasks), f"{name} single-task")
            ]
            stl = np.array([r.metrics[0] for r in singles])
            floor = cfg.floor_fraction * np.array([r.train_losses[0] for r in singles])
            for t, task in enumerate(data.names):
                out[f"{name}_loss_floor_{task}"] = float(floor[t])
            higher = np.array([kd == "classification" for kd in data.kinds])
            mean_dm, worst_dm, spread_dm = {}, {}, {}
            for m in progress.track(METHODS, f"{name} methods"):
                res = run_mtl(data, m, loss_floor=floor, **train)
                dm = delta_m(res.metrics, stl, higher)
                mean_dm[m], worst_dm[m], spread_dm[m] = float(dm.mean()), float(dm.max()), float(dm.std())
                out[f"{name}_{m}_mean_dm"] = mean_dm[m]
                out[f"{name}_{m}_worst_dm"] = worst_dm[m]
                out[f"{name}_{m}_spread_dm"] = spread_dm[m]
                out[f"{name}_{m}_worst_rate"] = res.worst_rate
                if m == "maxmin":
                    out[f"{name}_maxmin_excluded_steps"] = float(res.excluded_steps)
                for t, task in enumerate(data.names):
                    out[f"{name}_{m}_{task}_dm"] = float(dm[t])
            out[f"{name}_mean_dm_vs_best_baseline"] = _vs_best(mean_dm, lower_better=True)
            out[f"{name}_worst_dm_vs_best_baseline"] = _vs_best(worst_dm, lower_better=True)
            out[f"{name}_spread_dm_vs_best_baseline"] = _vs_best(spread_dm, lower_better=True)
        return out

    # -- report ----------------------------------------------------------------------------------
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        def cell(key: str) -> str:
            v = np.array([p[key] for p in per_seed], dtype=float)
            return f"{v.mean():.3g} ± {v.std(ddof=1):.2g}" if len(v) > 1 else f"{v.mean():.3g}"

        tabs = {}
        rows = [
            "| method | on Pareto front (of 5 starts) | largest final Pareto-stationarity | "
            "worst-task rate at common states (mean) | worst-task rate along own trajectory (mean) |",
            "| --- | --- | --- | --- | --- |",
        ]
        for m in METHODS:
            p = per_seed[0]
            rows.append(
                f"| {m} | {p[f'toy_{m}_front_fraction'] * 5:.0f}/5 | {p[f'toy_{m}_max_stationarity']:.3g} "
                f"| {p[f'toy_{m}_common_worst_rate']:.3f} | {p[f'toy_{m}_worst_rate']:.3f} |"
            )
        tabs["Toy: two tasks, loss scales 0.1 : 1"] = "\n".join(rows)
        for name, title in (
            ("synth", "Generated data (5 tasks, scales 1e-2..1e2)"),
            ("diabetes", "Diabetes data (4 tasks, original units)"),
        ):
            tasks = sorted(
                {
                    k.split("_")[2]
                    for k in per_seed[0]
                    if k.startswith(f"{name}_maxmin_") and k.endswith("_dm") and k.count("_") == 3
                }
                - {"mean", "worst", "spread"}
            )
            head = (
                "| method | mean Δm% | worst-task Δm% | Δm% spread | train worst-task rate (diagnostic) | "
                + " | ".join(f"{t} Δm%" for t in tasks)
                + " |"
            )
            rows = [head, "| " + " | ".join(["---"] * (5 + len(tasks))) + " |"]
            for m in METHODS:
                cells = [cell(f"{name}_{m}_{s}") for s in ("mean_dm", "worst_dm", "spread_dm", "worst_rate")]
                cells += [cell(f"{name}_{m}_{t}_dm") for t in tasks]
                rows.append(f"| {m} | " + " | ".join(cells) + " |")
            tabs[title] = "\n".join(rows)
        return tabs

    def figures(self, report: Report, folder: Path) -> list[str]:
        """Three figures: the toy's trajectories (a 2 x 4 grid), the per-seed delta-m% of every
        method on both data sets, and the per-seed paired claim quantities with their 95% intervals."""
        plt = optional_pyplot()
        if plt is None:
            return []
        folder = Path(folder)
        names = []
        for name, draw in (
            ("toy_trajectories.png", self._fig_toy),
            ("mtl_delta_m.png", self._fig_delta_m),
            ("paired_claims.png", self._fig_paired),
        ):
            fig = draw(plt, report)
            fig.savefig(folder / name, dpi=110)
            plt.close(fig)
            names.append(name)
        return names

    def _fig_toy(self, plt, report: Report):
        toy = self.toy_results(report.quick)
        front = pareto_front()
        starts = np.asarray(TOY_STARTS)
        colours = plt.get_cmap("tab10").colors
        fig, axes = plt.subplots(2, 4, figsize=(13, 6.8), sharex=True, sharey=True)
        flat = axes.ravel()
        for ax, m in zip(flat, METHODS):
            ax.plot(front[:, 0], front[:, 1], color="0.6", lw=4, alpha=0.7, zorder=1)
            L = toy[m].losses
            for s in range(L.shape[1]):
                ax.plot(L[:, s, 0], L[:, s, 1], lw=1.2, color=colours[s], zorder=2)
                ax.plot(L[0, s, 0], L[0, s, 1], "o", color="k", ms=4, zorder=3)
                ax.plot(L[-1, s, 0], L[-1, s, 1], "*", color=colours[s], mec="k", mew=0.6, ms=10, zorder=4)
            on = round(report.per_seed[0][f"toy_{m}_front_fraction"] * L.shape[1])
            ax.set_title(f"{m}: {on}/{L.shape[1]} starts end on the front", fontsize=10)
            ax.grid(alpha=0.3)
        for ax in (*axes[1, :3], axes[0, 3]):  # the last bottom slot holds the key
            ax.set_xlabel("task-1 loss (scaled x0.1, dimensionless)")
            ax.xaxis.set_tick_params(labelbottom=True)
        for ax in axes[:, 0]:
            ax.set_ylabel("task-2 loss (dimensionless)")
        key = flat[-1]
        key.axis("off")
        handles = [plt.Line2D([], [], color="0.6", lw=4, alpha=0.7, label="Pareto front")]
        handles += [
            plt.Line2D([], [], color=colours[s], lw=1.2, label=f"start ({x:g}, {y:g})")
            for s, (x, y) in enumerate(starts)
        ]
        handles += [
            plt.Line2D([], [], ls="", marker="o", color="k", ms=4, label="start point"),
            plt.Line2D([], [], ls="", marker="*", color="w", mec="k", ms=10, label="end point"),
        ]
        key.legend(handles=handles, loc="center", frameon=False, fontsize=9)
        steps = self.config(report.quick).toy_steps
        fig.suptitle(
            f"Two-task toy, Adam for {steps} steps from 5 starts (deterministic: the same for every seed)",
            fontsize=11,
        )
        fig.tight_layout()
        return fig

    @staticmethod
    def _seed_points(ax, x: float, vals: np.ndarray, colour, marker: str = "o") -> None:
        """Per-seed points (spread sideways) and their mean as a short bar."""
        off = np.linspace(-0.18, 0.18, len(vals)) if len(vals) > 1 else np.zeros(1)
        ax.plot(x + off, vals, ls="", marker=marker, ms=5, color=colour, alpha=0.8, mec="k", mew=0.4)
        ax.plot([x - 0.3, x + 0.3], [vals.mean()] * 2, color="k", lw=1.6)

    def _fig_delta_m(self, plt, report: Report):
        stats = (
            ("mean_dm", "mean over tasks"),
            ("worst_dm", "worst task"),
            ("spread_dm", "spread over tasks"),
        )
        fig, axes = plt.subplots(2, 3, figsize=(13, 7.6))
        n = len(report.per_seed)
        for row, (name, label) in zip(axes, (("synth", "generated data"), ("diabetes", "diabetes data"))):
            for ax, (stat, what) in zip(row, stats):
                for i, m in enumerate(METHODS):
                    vals = np.array([p[f"{name}_{m}_{stat}"] for p in report.per_seed], dtype=float)
                    colour = "tab:red" if m == "maxmin" else "tab:blue"
                    self._seed_points(ax, i, vals, colour, "D" if m == "maxmin" else "o")
                ax.axhline(0.0, color="0.4", lw=0.8, ls="--")
                ax.set_yscale("symlog", linthresh=10.0)
                ax.set_xticks(range(len(METHODS)), METHODS, rotation=35, ha="right", fontsize=9)
                ax.set_title(f"{label}: {what}", fontsize=10)
                ax.set_ylabel("delta-m vs single-task (%, symlog)")
                ax.grid(axis="y", alpha=0.3)
        handles = [
            plt.Line2D([], [], ls="", marker="D", color="tab:red", mec="k", label="max-min, one seed"),
            plt.Line2D([], [], ls="", marker="o", color="tab:blue", mec="k", label="baseline, one seed"),
            plt.Line2D([], [], color="k", lw=1.6, label=f"mean over {n} seed(s)"),
            plt.Line2D([], [], color="0.4", lw=0.8, ls="--", label="single-task level (0%)"),
        ]
        fig.legend(handles=handles, loc="lower center", ncol=4, frameon=False, fontsize=9)
        fig.suptitle("Held-out delta-m% per seed (positive = worse than single-task models)", fontsize=11)
        fig.tight_layout(rect=(0, 0.05, 1, 1))
        return fig

    def _panel_stationarity(self, ax, report: Report) -> None:
        """The toy's final Pareto-stationarity of every method from each start (log scale)."""
        per = report.per_seed[0]
        threshold = self.config(report.quick).stationary
        for i, m in enumerate(METHODS):
            vals = np.array([per[f"toy_{m}_stationarity_start{s}"] for s in range(len(TOY_STARTS))])
            colour = "tab:red" if m == "maxmin" else "tab:blue"
            off = np.linspace(-0.2, 0.2, vals.size)
            ax.plot(
                i + off,
                np.maximum(vals, 1e-6),
                ls="",
                marker="D" if m == "maxmin" else "o",
                ms=5,
                color=colour,
                mec="k",
                mew=0.4,
                alpha=0.85,
            )
        ax.axhline(threshold, color="tab:green", lw=1.2, ls="--")
        ax.set_yscale("log")
        ax.set_xticks(range(len(METHODS)), METHODS, rotation=35, ha="right", fontsize=9)
        ax.set_ylabel("final Pareto-stationarity (unitless, log)")
        ax.set_title("toy_front: one point per start (on the front below the dashed line)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)

    def _fig_paired(self, plt, report: Report):
        by_key = {r.claim.key: r for r in report.claims}
        panels = (  # claim suffix, y label, reading
            ("balance_worst", "worst-task delta-m% (points)", "smaller is better"),
            ("balance_spread", "delta-m% spread over tasks (points)", "smaller is better"),
            ("competitive", "mean delta-m% (points)", "holds at or below 2"),
        )
        fig, axes = plt.subplots(2, 2, figsize=(11, 8))
        self._panel_stationarity(axes.ravel()[-1], report)
        for ax, (claim, ylabel, sense) in zip(axes.ravel(), panels):
            threshold = None
            for i, name in enumerate(DATASETS):
                key = f"{name}_{claim}"
                decl = next(c for c in self.claims if c.key == key)
                threshold = decl.threshold
                vals = np.array([p[decl.metric] for p in report.per_seed], dtype=float)
                self._seed_points(ax, i, vals, "tab:red", "D")
                r = by_key.get(key)
                if r is not None:
                    if r.lo is not None and r.hi is not None:
                        ax.errorbar(
                            i + 0.4,
                            r.estimate,
                            yerr=[[r.estimate - r.lo], [r.hi - r.estimate]],
                            fmt="s",
                            color="k",
                            ms=5,
                            capsize=4,
                        )
                    ax.annotate(
                        r.verdict + (" (mechanism)" if r.claim.kind == "mechanism" else ""),
                        (i, 1.0),
                        xycoords=("data", "axes fraction"),
                        xytext=(0, -12),
                        textcoords="offset points",
                        ha="center",
                        fontsize=9,
                    )
            if threshold is not None:
                ax.axhline(threshold, color="tab:green", lw=1.2, ls="--")
            ax.margins(y=0.15)  # room for the verdicts at the top
            ax.set_xticks([0, 1], ["generated data", "diabetes data"])
            ax.set_xlim(-0.6, 1.8)
            ax.set_title(f"{claim}: max-min minus best baseline ({sense})", fontsize=10)
            ax.set_ylabel(ylabel)
            ax.grid(axis="y", alpha=0.3)
        n = len(report.per_seed)
        handles = [
            plt.Line2D(
                [],
                [],
                ls="",
                marker="D",
                color="tab:red",
                mec="k",
                label="max-min: paired difference per seed (toy: per start)",
            ),
            plt.Line2D([], [], color="k", lw=1.6, label=f"mean over {n} seed(s)"),
            plt.Line2D([], [], ls="", marker="s", color="k", label="mean and 95% interval (verdict)"),
            plt.Line2D([], [], color="tab:green", lw=1.2, ls="--", label="claim threshold"),
            plt.Line2D([], [], ls="", marker="o", color="tab:blue", mec="k", label="baseline, one toy start"),
        ]
        fig.legend(handles=handles, loc="lower center", ncol=5, frameon=False, fontsize=9)
        fig.suptitle(
            "Paired claims per seed (same data and seed for max-min and the best baseline)", fontsize=11
        )
        fig.tight_layout(rect=(0, 0.05, 1, 1))
        return fig
