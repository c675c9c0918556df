"""Headline reproduction of SMNC at laptop scale (``paperworks reproduce smnc-dag``).

Per seed (settings: :class:`SMNCExperimentConfig`; quick: :data:`QUICK`):

1. *Against DAGMA, on settings with headroom*: linear Gaussian SEMs with unequal noise variances on an
   ER4 graph with ``d = 50`` and a scale-free SF4 graph with ``d = 30`` (``n = 500``). SMNC at its default
   schedule; DAGMA (the ``dagma`` package) at its package defaults, and again at an equal CPU-time budget
   (its own schedule, every stage shortened by one factor so that its CPU time matches SMNC's; the cost
   of one DAGMA step is measured first). A nonlinear (MLP) SEM on an ER2 graph with ``d = 10``: SMNC's MLP
   against DAGMA's MLP at equal CPU time (DAGMA's nonlinear defaults, 2.3e5 steps, cost minutes per fit).
   SHD and SID (:func:`~paperworks.smnc_dag.metrics.sid`) of each fit.
2. *Ablations* on a linear ER4 graph with ``d = 20``: the unnormalised product closure, the single matrix
   (no separation), separation without closure, and SMNC with 30% of the true ancestral pairs as cues.
3. *Closure mathematics* on planted cycles: the decay of the unnormalised evidence (``p^L``), the ``1/L``
   gradient factor at the covering scale (both identities of the construction, reported as ``exact``),
   and whether an isolated planted cycle survives plain gradient steps on the cycle loss with each
   closure (the condition under which the paper says product closures starve long cycles).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from paperworks.core import Claim, Experiment, Paper, Progress, Report, choose_device, optional_pyplot
from paperworks.core.seeding import torch_threads

from .baselines import dagma_linear, dagma_nonlinear, dagma_step_cost
from .closure import smnc_logits, smnc_readout
from .data import (
    ancestry_pairs,
    noise_scales,
    simulate_dag,
    simulate_linear_sem,
    simulate_nonlinear_sem,
    simulate_weights,
)
from .estimator import SMNC
from .metrics import count_accuracy, sid
from .relations import cycle_loss

__all__ = [
    "QUICK",
    "SMNCExperiment",
    "SMNCExperimentConfig",
    "closure_gradient_study",
    "cycle_survival_study",
]

ABLATIONS = {
    "smnc": {},
    "smnc_anc": {},
    "product": {"closure": "product"},
    # the single matrix's own best step on the same grid and development seeds as SMNC's (README)
    "single": {"factorization": "none", "lr": 0.1},
    "sep_noclosure": {"closure": "off"},
}
LABELS = {
    "smnc": "SMNC (separated + normalised closure)",
    "smnc_anc": "SMNC + ancestry cues (30%)",
    "product": "ablation: unnormalised product closure",
    "single": "ablation: single matrix (unseparated)",
    "sep_noclosure": "ablation: separated, no closure",
    "dagma": "DAGMA (package defaults)",
    "dagma_eq": "DAGMA (equal CPU time)",
}
GRAPH_TYPES = ("ER", "SF")
# DAGMA's package defaults (dagma 1.1: DagmaLinear.fit and DagmaNonlinear.fit)
DAGMA_LINEAR = {"T": 5, "warm_iter": 30_000, "max_iter": 60_000}
DAGMA_MLP = {"T": 4, "warm_iter": 50_000, "max_iter": 80_000}


@dataclass(frozen=True)
class SMNCExperimentConfig:
    """Settings of the headline run (defaults: the full run; :data:`QUICK`: the quick run).

    ``headline``: ``(graph, k, d, n)`` linear SEMs with unequal noise variances (``k d`` expected edges)
    for the comparison with DAGMA; ``nonlinear``: the MLP SEM; ``ablation``: the linear SEM of the
    ablations and the ancestry cues. ``noise_low``/``noise_high``: range of the noise standard
    deviations. ``smnc_*``: SMNC's central path (T, Adam steps per warm stage / the last stage);
    ``mlp_*``: the same for the MLP model; ``dagma_scale``: DAGMA's default iterations are multiplied by
    it (1.0: the package defaults; the quick run shrinks them). ``calibration_steps``: DAGMA steps timed
    to price one step for the equal-time budget. ``closure_*``: the planted-cycle gradient study;
    ``survival_*``: the isolated-cycle survival study.
    """

    headline: tuple[tuple[str, int, int, int], ...] = (("ER", 4, 50, 500), ("SF", 4, 30, 500))
    nonlinear: tuple[str, int, int, int] = ("ER", 2, 10, 200)
    ablation: tuple[str, int, int, int] = ("ER", 4, 20, 500)
    noise_low: float = 0.5
    noise_high: float = 1.5
    ancestry_fraction: float = 0.3
    smnc_T: int = 5
    smnc_warm_iter: int = 2000
    smnc_max_iter: int = 4000
    mlp_T: int = 4
    mlp_warm_iter: int = 1000
    mlp_max_iter: int = 2000
    dagma_scale: float = 1.0
    calibration_steps: int = 300
    closure_p: float = 0.7
    closure_lengths: tuple[int, ...] = (2, 4, 8, 16, 32)
    survival_lengths: tuple[int, ...] = (4, 8, 16, 24, 32)
    survival_steps: int = 200
    survival_lr: float = 1.0

    def __post_init__(self) -> None:
        if not self.headline:
            raise ValueError("headline: expected at least one (graph, k, d, n) setting")
        for name, items in (
            ("headline", self.headline),
            ("nonlinear", (self.nonlinear,)),
            ("ablation", (self.ablation,)),
        ):
            for item in items:
                if len(item) != 4:
                    raise ValueError(f"{name}: expected (graph, k, d, n) settings, got {item!r}")
                graph, k, d, n = item
                if (
                    graph not in GRAPH_TYPES
                    or not _pos_int(d)
                    or d < 3
                    or not _pos_int(k)
                    or k >= d
                    or not _pos_int(n)
                    or n < 10
                ):
                    raise ValueError(
                        f"{name}: expected (graph in {GRAPH_TYPES}, 1 <= k < d, d >= 3, n >= 10), "
                        f"got {item!r}"
                    )
        for name in (
            "smnc_T",
            "smnc_warm_iter",
            "smnc_max_iter",
            "mlp_T",
            "mlp_warm_iter",
            "mlp_max_iter",
            "calibration_steps",
            "survival_steps",
        ):
            if not _pos_int(getattr(self, name)):
                raise ValueError(f"{name}: expected a positive int, got {getattr(self, name)!r}")
        if not 0 < self.noise_low <= self.noise_high:
            raise ValueError(
                "noise_high: expected 0 < noise_low <= noise_high, "
                f"got {self.noise_low!r}, {self.noise_high!r}"
            )
        if not 0 < self.ancestry_fraction <= 1:
            raise ValueError(
                f"ancestry_fraction: expected a fraction in (0, 1], got {self.ancestry_fraction!r}"
            )
        if not (math.isfinite(self.dagma_scale) and 0 < self.dagma_scale <= 1):
            raise ValueError(f"dagma_scale: expected a number in (0, 1], got {self.dagma_scale!r}")
        if not 0 < self.closure_p < 1:
            raise ValueError(f"closure_p: expected a gate value in (0, 1), got {self.closure_p!r}")
        lengths = self.closure_lengths
        if len(lengths) < 3 or any(not _pos_int(L) or L < 2 or L & (L - 1) for L in lengths):
            raise ValueError(f"closure_lengths: expected >= 3 powers of 2 (>= 2), got {lengths!r}")
        if not self.survival_lengths or any(not _pos_int(L) or L < 2 for L in self.survival_lengths):
            raise ValueError(f"survival_lengths: expected cycle lengths >= 2, got {self.survival_lengths!r}")
        if not (math.isfinite(self.survival_lr) and self.survival_lr > 0):
            raise ValueError(f"survival_lr: expected a positive step size, got {self.survival_lr!r}")


def _pos_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


QUICK = SMNCExperimentConfig(
    headline=(("ER", 2, 8, 200),),
    nonlinear=("ER", 1, 4, 100),
    ablation=("ER", 2, 6, 200),
    smnc_warm_iter=200,
    smnc_max_iter=400,
    mlp_T=2,
    mlp_warm_iter=40,
    mlp_max_iter=80,
    dagma_scale=0.02,
    calibration_steps=50,
    survival_lengths=(4, 16),
    survival_steps=50,
)


def _tag(setting: tuple[str, int, int, int]) -> str:
    graph, k, d, _ = setting
    return f"{graph}{k}-d{d}"


def closure_gradient_study(
    p: float = 0.7, lengths=(2, 4, 8, 16, 32), device: str = "cpu"
) -> dict[str, float]:
    """Planted length-``L`` cycles with gate ``p`` read at their covering scale ``L_k = L``.

    Returns the relative error of the fitted decay rate of the unnormalised evidence against
    ``log p``, the log-log slope of SMNC's gradient ``d l_ii / d log g_e`` against ``L`` (paper:
    ``1/L``, slope ``-1``) and the same slope for the all-scale soft readout.
    """
    log_ev, g_norm, g_soft = [], [], []
    for L in lengths:
        k = int(math.log2(L))
        logz = torch.full((L,), math.log(p), dtype=torch.float64, device=device, requires_grad=True)
        idx = torch.arange(L, device=device)
        G = torch.zeros(L, L, dtype=torch.float64, device=device).index_put(
            (idx, (idx + 1) % L), torch.exp(logz)
        )
        raw = smnc_logits(G, k + 1, normalize=False)[k, 0, 0]
        log_ev.append(float(raw.detach()))
        (g,) = torch.autograd.grad(smnc_logits(G, k + 1)[k, 0, 0], logz, retain_graph=True)
        g_norm.append(float(g[0]))
        (g,) = torch.autograd.grad(smnc_readout(smnc_logits(G, k + 1))[0, 0], logz)
        g_soft.append(float(g[0]))
    Ls = np.asarray(lengths, dtype=float)
    decay = np.polyfit(Ls, log_ev, 1)[0]
    slope = np.polyfit(np.log(Ls), np.log(g_norm), 1)[0]
    slope_soft = np.polyfit(np.log(Ls), np.log(np.abs(g_soft)), 1)[0]
    return {
        "closure.product_decay_rel_error": abs(decay / math.log(p) - 1),
        "closure.smnc_grad_loglog_slope": float(slope),
        "closure.smnc_grad_slope_error": abs(slope + 1),
        "closure.soft_readout_grad_loglog_slope": float(slope_soft),
    }


def cycle_survival_study(
    rng: np.random.Generator,
    lengths=(4, 8, 16, 24, 32),
    steps: int = 200,
    lr: float = 1.0,
    device: str = "cpu",
) -> dict[str, float]:
    """One isolated length-``L`` cycle (gates ``U(0.7, 0.9)``, every other gate exactly 0) on ``L``
    nodes; ``steps`` plain gradient steps (size ``lr``) on the cycle's gate logits minimising
    ``cycle_loss`` of the read-out logits, with SMNC's closure and with the unnormalised product closure,
    from the same planted gates. A cycle survives when its smallest gate stays above 0.5.

    Returns per closure the surviving fraction and, per ``L``, the smallest gate left; and the gap
    ``survival(product) - survival(SMNC)``.
    """
    out: dict[str, float] = {}
    survived = {"smnc": 0, "product": 0}
    for L in lengths:
        idx = torch.arange(L, device=device)
        nxt = (idx + 1) % L
        g0 = torch.as_tensor(rng.uniform(0.7, 0.9, L), dtype=torch.float64, device=device)
        for closure in ("smnc", "product"):
            z = torch.log(g0 / (1 - g0)).clone().requires_grad_(True)
            for _ in range(steps):
                G = torch.zeros(L, L, dtype=torch.float64, device=device).index_put(
                    (idx, nxt), torch.sigmoid(z)
                )
                loss = cycle_loss(smnc_readout(smnc_logits(G, normalize=closure == "smnc")))
                (g,) = torch.autograd.grad(loss, z)
                with torch.no_grad():
                    z -= lr * g
            low = float(torch.sigmoid(z.detach()).min())
            out[f"closure.min_gate_{closure}_L{L}"] = low
            survived[closure] += low > 0.5
    for closure, count in survived.items():
        out[f"closure.cycle_survival_{closure}"] = count / len(lengths)
    out["closure.cycle_survival_gap"] = (
        out["closure.cycle_survival_product"] - out["closure.cycle_survival_smnc"]
    )
    return out


def _linear_data(setting, cfg: SMNCExperimentConfig, rng: np.random.Generator):
    graph, k, d, n = setting
    B = simulate_dag(d, k, graph, rng)
    W = simulate_weights(B, rng)
    X = simulate_linear_sem(W, n, rng, noise_scales(d, rng, cfg.noise_low, cfg.noise_high))
    return B, X


def _scores(B: np.ndarray, G: np.ndarray, prefix: str, out: dict[str, float]) -> dict[str, float]:
    acc = count_accuracy(B, G)
    out[f"{prefix}.shd"] = acc["shd"]
    out[f"{prefix}.sid"] = float(sid(B, G))
    out[f"{prefix}.tpr"] = acc["tpr"]
    out[f"{prefix}.fdr"] = acc["fdr"]
    return out


def _timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), CPU seconds it took)`` (``time.process_time``: robust to other load)."""
    start = time.process_time()
    result = fn(*args, **kwargs)
    return result, time.process_time() - start


def _equal_time(defaults: dict[str, int], cpu_s: float, step_s: float) -> tuple[dict[str, int], float]:
    """DAGMA's schedule with every stage shortened by one factor so that it costs ``cpu_s``."""
    total = (defaults["T"] - 1) * defaults["warm_iter"] + defaults["max_iter"]
    factor = min(1.0, cpu_s / max(step_s, 1e-12) / total)
    sched = {
        "T": defaults["T"],
        "warm_iter": max(1, round(defaults["warm_iter"] * factor)),
        "max_iter": max(1, round(defaults["max_iter"] * factor)),
    }
    return sched, factor


def _scaled(defaults: dict[str, int], scale: float) -> dict[str, int]:
    return {
        "T": defaults["T"],
        "warm_iter": max(1, round(defaults["warm_iter"] * scale)),
        "max_iter": max(1, round(defaults["max_iter"] * scale)),
    }


class SMNCExperiment(Experiment):
    """SMNC vs DAGMA on linear and nonlinear SEMs with headroom, closure ablations, ancestry cues."""

    slug: ClassVar[str] = "smnc-dag"
    paper: ClassVar[Paper] = Paper(
        "Structure-separated continuous DAG learning with multi-scale normalized closure (SMNC)",
        arxiv=None,
        note="NeurIPS 2026; no public full text: reconstructed from the abstract, DAGMA and NOTEARS",
    )
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "beats-dagma",
            "structure-separated SMNC improves DAG recovery (SHD) over DAGMA",
            "shd_gain_vs_dagma",
            ">",
            0.0,
            note="SHD(DAGMA at its package defaults) - SHD(SMNC at its defaults), same data per seed, mean "
            "over the linear settings with unequal noise variances (full: ER4 d = 50, SF4 d = 30, n = 500)",
            paired=True,
        ),
        Claim(
            "beats-dagma-sid",
            "structure-separated SMNC improves DAG recovery (SID) over DAGMA",
            "sid_gain_vs_dagma",
            ">",
            0.0,
            note="SID(DAGMA defaults) - SID(SMNC), same fits as beats-dagma; SID from gadjid",
            paired=True,
        ),
        Claim(
            "beats-dagma-equal-time",
            "SMNC improves DAG recovery over DAGMA at an equal compute budget",
            "shd_gain_vs_dagma_equal_time",
            ">",
            0.0,
            note="SHD(DAGMA with its schedule shortened to SMNC's CPU time) - SHD(SMNC), linear settings; "
            "the budget is measured on the machine that runs it",
            paired=True,
            machine_dependent=True,
        ),
        Claim(
            "beats-dagma-nonlinear",
            "SMNC improves DAG recovery over DAGMA on a nonlinear (MLP) SEM",
            "nonlinear.shd_gain_vs_dagma_equal_time",
            ">",
            0.0,
            note="SHD(DAGMA's MLP at SMNC's CPU time) - SHD(SMNC's MLP), ER2 d = 10, n = 200 (full); DAGMA's "
            "nonlinear defaults (2.3e5 steps) do not fit the budget",
            paired=True,
            machine_dependent=True,
        ),
        Claim(
            "normalisation-ablation",
            "the normalised closure improves recovery over the unnormalised product closure",
            "shd_gain_vs_product",
            ">",
            0.0,
            note="SHD(product closure) - SHD(SMNC), same data per seed, linear ER4 d = 20 (full)",
            paired=True,
        ),
        Claim(
            "separation-ablation",
            "structure separation improves recovery over the single-matrix variant",
            "shd_gain_vs_single",
            ">",
            0.0,
            note="SHD(single matrix) - SHD(SMNC), same data, schedule and step-size grid, ER4 d = 20 (full)",
            paired=True,
        ),
        Claim(
            "ancestry-helps",
            "adding ancestry cues improves recovery further",
            "shd_gain_from_ancestry",
            ">",
            0.0,
            note="SHD(SMNC) - SHD(SMNC + 30% of the true ancestral pairs as cues), ER4 d = 20 (full); the "
            "cue losses are weighted by mu like the data fit",
            paired=True,
        ),
        Claim(
            "product-decays",
            "without normalisation, closure evidence on a length-L cycle decays like p^L",
            "closure.product_decay_rel_error",
            "<=",
            0.05,
            note="fitted slope of log-evidence vs L against log p; an identity of the construction "
            "(R_k on one length-L cycle is p^L), seed-independent: reported, not evidence",
            paper_value="p^L",
            exact=True,
        ),
        Claim(
            "grad-1-over-L",
            "with normalisation, the gradient through an active length-L cycle scales like 1/L",
            "closure.smnc_grad_slope_error",
            "<=",
            0.1,
            note="|log-log slope + 1| at the covering scale over L = 2..32; an identity of the "
            "construction (l_k = log R_k / 2^k), seed-independent: reported, not evidence",
            paper_value="1/L",
            exact=True,
        ),
        Claim(
            "cycles-survive",
            "without normalisation long cycles survive the cycle loss; with it they are suppressed",
            "closure.cycle_survival_gap",
            ">",
            0.0,
            note="fraction of isolated planted cycles (L = 4..32, all other gates 0) whose gates stay above "
            "0.5 after plain gradient steps on the cycle loss: product minus SMNC, same planted gates",
            kind="mechanism",
        ),
    )
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int] = 3

    def config(self, quick: bool) -> SMNCExperimentConfig:
        return QUICK if quick else SMNCExperimentConfig()

    def device(self) -> str:
        """Where the torch closure studies run: :func:`paperworks.core.choose_device` (``--device``);
        the estimators are NumPy (and torch autograd on the CPU for the MLP)."""
        return choose_device()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1), torch_threads(1):
            return self._run_seed(seed, quick=quick, progress=progress)

    def _run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        rng = np.random.default_rng(seed)
        out: dict[str, float] = {}
        smnc_kw = {"T": cfg.smnc_T, "warm_iter": cfg.smnc_warm_iter, "max_iter": cfg.smnc_max_iter}
        gains: dict[str, list[float]] = {"dagma": [], "dagma_sid": [], "dagma_eq": []}
        for setting in progress.track(cfg.headline, "smnc-dag: headline settings"):
            tag = _tag(setting)
            B, X = _linear_data(setting, cfg, rng)
            est, cpu = _timed(SMNC(random_state=seed, **smnc_kw).fit, X)
            _scores(B, est.graph_, f"{tag}.smnc", out)
            out[f"{tag}.smnc.cpu_s"] = cpu
            W, cpu_d = _timed(dagma_linear, X, **_scaled(DAGMA_LINEAR, cfg.dagma_scale))
            _scores(B, W != 0, f"{tag}.dagma", out)
            out[f"{tag}.dagma.cpu_s"] = cpu_d
            step = dagma_step_cost(X, steps=cfg.calibration_steps)
            sched, factor = _equal_time(DAGMA_LINEAR, cpu, step)
            W, cpu_e = _timed(dagma_linear, X, **sched)
            _scores(B, W != 0, f"{tag}.dagma_eq", out)
            out[f"{tag}.dagma_eq.cpu_s"] = cpu_e
            out[f"{tag}.dagma_eq.budget_factor"] = factor
            gains["dagma"].append(out[f"{tag}.dagma.shd"] - out[f"{tag}.smnc.shd"])
            gains["dagma_sid"].append(out[f"{tag}.dagma.sid"] - out[f"{tag}.smnc.sid"])
            gains["dagma_eq"].append(out[f"{tag}.dagma_eq.shd"] - out[f"{tag}.smnc.shd"])
        out["shd_gain_vs_dagma"] = float(np.mean(gains["dagma"]))
        out["sid_gain_vs_dagma"] = float(np.mean(gains["dagma_sid"]))
        out["shd_gain_vs_dagma_equal_time"] = float(np.mean(gains["dagma_eq"]))

        progress.log("smnc-dag: nonlinear SEM")
        out.update(self._nonlinear(cfg, rng, seed))
        progress.log("smnc-dag: ablations")
        out.update(self._ablations(cfg, rng, seed, smnc_kw))
        progress.log("smnc-dag: closure studies")
        device = self.device()
        out.update(closure_gradient_study(cfg.closure_p, cfg.closure_lengths, device=device))
        out.update(
            cycle_survival_study(
                rng, lengths=cfg.survival_lengths, steps=cfg.survival_steps, lr=cfg.survival_lr, device=device
            )
        )
        return out

    def _nonlinear(self, cfg: SMNCExperimentConfig, rng: np.random.Generator, seed: int) -> dict[str, float]:
        graph, k, d, n = cfg.nonlinear
        B = simulate_dag(d, k, graph, rng)
        X = simulate_nonlinear_sem(B, n, rng)
        out: dict[str, float] = {}
        mlp_kw = {
            "model": "mlp",
            "T": cfg.mlp_T,
            "mu_init": 0.1,  # DAGMA's nonlinear path: mu from 0.1, s = 1 at every stage
            "s": (1.0,),
            "warm_iter": cfg.mlp_warm_iter,
            "max_iter": cfg.mlp_max_iter,
        }
        est, cpu = _timed(SMNC(random_state=seed, **mlp_kw).fit, X)
        _scores(B, est.graph_, "nonlinear.smnc", out)
        out["nonlinear.smnc.cpu_s"] = cpu
        step = dagma_step_cost(X, steps=cfg.calibration_steps, model="mlp", seed=seed)
        sched, factor = _equal_time(DAGMA_MLP, cpu, step)
        W, cpu_e = _timed(dagma_nonlinear, X, seed=seed, **sched)
        _scores(B, W != 0, "nonlinear.dagma_eq", out)
        out["nonlinear.dagma_eq.cpu_s"] = cpu_e
        out["nonlinear.dagma_eq.budget_factor"] = factor
        out["nonlinear.shd_gain_vs_dagma_equal_time"] = (
            out["nonlinear.dagma_eq.shd"] - out["nonlinear.smnc.shd"]
        )
        out["nonlinear.sid_gain_vs_dagma_equal_time"] = (
            out["nonlinear.dagma_eq.sid"] - out["nonlinear.smnc.sid"]
        )
        return out

    def _ablations(self, cfg, rng: np.random.Generator, seed: int, smnc_kw: dict) -> dict[str, float]:
        B, X = _linear_data(cfg.ablation, cfg, rng)
        anc = ancestry_pairs(B)
        cues = anc[rng.random(len(anc)) < cfg.ancestry_fraction]
        nonedge = cues[~B[cues[:, 0], cues[:, 1]]] if len(cues) else cues
        out: dict[str, float] = {}
        for name, kw in ABLATIONS.items():
            est = SMNC(random_state=seed, **smnc_kw, **kw)
            est.fit(X, ancestry=cues if name == "smnc_anc" and len(cues) else None)
            _scores(B, est.graph_, f"ablation.{name}", out)
            if name in ("smnc", "smnc_anc"):
                hit = est.graph_[nonedge[:, 0], nonedge[:, 1]].mean() if len(nonedge) else 0.0
                out[f"ablation.{name}.cued_nonedges_as_edges"] = float(hit)
        shd = {name: out[f"ablation.{name}.shd"] for name in ABLATIONS}
        out["shd_gain_vs_product"] = shd["product"] - shd["smnc"]
        out["shd_gain_vs_single"] = shd["single"] - shd["smnc"]
        out["shd_gain_from_ancestry"] = shd["smnc"] - shd["smnc_anc"]
        return out

    # -- report ----------------------------------------------------------------------------------
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        def fmt(key: str, digits: str = ".3g") -> str:
            vals = [m[key] for m in per_seed if key in m]
            if not vals:
                return "-"
            if len(vals) == 1:
                return f"{vals[0]:{digits}}"
            return f"{np.mean(vals):{digits}} ± {np.std(vals, ddof=1):.2g}"

        cfg = self.config(quick)
        tables = {}
        head = "| method | SHD | SID | TPR | FDR | CPU s |\n| --- | --- | --- | --- | --- | --- |"
        for setting in cfg.headline:
            tag = _tag(setting)
            rows = [head]
            for name in ("smnc", "dagma", "dagma_eq"):
                p = f"{tag}.{name}"
                label = LABELS[name]
                if name == "dagma" and cfg.dagma_scale != 1:
                    label = f"DAGMA (package defaults x {cfg.dagma_scale:g})"
                rows.append(
                    f"| {label} | {fmt(p + '.shd')} | {fmt(p + '.sid')} | {fmt(p + '.tpr')} | "
                    f"{fmt(p + '.fdr')} | {fmt(p + '.cpu_s')} |"
                )
            graph, k, d, n = setting
            title = (
                f"Linear SEM, unequal noise variances, {graph}{k} graph, d = {d}, n = {n} "
                "(mean ± std over seeds)"
            )
            tables[title] = "\n".join(rows)
        graph, k, d, n = cfg.nonlinear
        rows = [head]
        for name, label in (("smnc", "SMNC, MLP model"), ("dagma_eq", "DAGMA MLP (equal CPU time)")):
            p = f"nonlinear.{name}"
            rows.append(
                f"| {label} | {fmt(p + '.shd')} | {fmt(p + '.sid')} | {fmt(p + '.tpr')} | "
                f"{fmt(p + '.fdr')} | "
                f"{fmt(p + '.cpu_s')} |"
            )
        tables[f"Nonlinear (MLP) SEM, {graph}{k} graph, d = {d}, n = {n}"] = "\n".join(rows)
        graph, k, d, n = cfg.ablation
        rows = ["| variant | SHD | SID | TPR | FDR |", "| --- | --- | --- | --- | --- |"]
        for name in ABLATIONS:
            p = f"ablation.{name}"
            rows.append(
                f"| {LABELS[name]} | {fmt(p + '.shd')} | {fmt(p + '.sid')} | {fmt(p + '.tpr')} | "
                f"{fmt(p + '.fdr')} |"
            )
        rows.append(
            "| cued non-edge pairs predicted as direct edges: without cues "
            f"{fmt('ablation.smnc.cued_nonedges_as_edges')}, with cues "
            f"{fmt('ablation.smnc_anc.cued_nonedges_as_edges')} | | | | |"
        )
        tables[f"Ablations, linear SEM, {graph}{k} graph, d = {d}, n = {n}"] = "\n".join(rows)
        closure = ["| quantity | value |", "| --- | --- |"]
        keys = [
            "closure.product_decay_rel_error",
            "closure.smnc_grad_loglog_slope",
            "closure.soft_readout_grad_loglog_slope",
            "closure.cycle_survival_smnc",
            "closure.cycle_survival_product",
        ]
        keys += [f"closure.min_gate_{c}_L{L}" for L in cfg.survival_lengths for c in ("smnc", "product")]
        for key in keys:
            closure.append(f"| {key} | {fmt(key)} |")
        tables["Closure studies (planted cycles)"] = "\n".join(closure)
        return tables

    def figures(self, report: Report, folder: Path) -> list[str]:
        """Per-seed SHD and SID of SMNC and DAGMA on every comparison setting (the headline claims)."""
        plt = optional_pyplot()
        if plt is None:
            return []
        cfg = self.config(report.quick)
        panels = [
            (_tag(s), f"linear {s[0]}{s[1]}, d = {s[2]}, n = {s[3]}", ("smnc", "dagma", "dagma_eq"))
            for s in cfg.headline
        ]
        g, k, d, n = cfg.nonlinear
        panels.append(("nonlinear", f"MLP SEM {g}{k}, d = {d}, n = {n}", ("smnc", "dagma_eq")))
        dagma = "DAGMA\ndefaults" if cfg.dagma_scale == 1 else f"DAGMA\ndefaults x {cfg.dagma_scale:g}"
        names = {"smnc": "SMNC", "dagma": dagma, "dagma_eq": "DAGMA\nequal time"}
        colors = {"smnc": "tab:blue", "dagma": "tab:orange", "dagma_eq": "tab:green"}
        markers = {"smnc": "o", "dagma": "s", "dagma_eq": "^"}
        n_seeds = len(report.per_seed)
        offsets = np.linspace(-0.12, 0.12, n_seeds) if n_seeds > 1 else np.zeros(1)
        fig, axes = plt.subplots(2, len(panels), figsize=(3.3 * len(panels) + 0.6, 6.2), squeeze=False)
        for col, (tag, title, methods) in enumerate(panels):
            for row, (metric, label) in enumerate((("shd", "SHD (edges)"), ("sid", "SID (node pairs)"))):
                ax = axes[row][col]
                vals = {m: np.array([s[f"{tag}.{m}.{metric}"] for s in report.per_seed]) for m in methods}
                xs = np.arange(len(methods))
                for i in range(n_seeds):  # one grey line per seed: the pairing
                    ax.plot(xs + offsets[i], [vals[m][i] for m in methods], color="0.8", lw=0.8, zorder=1)
                for x, m in zip(xs, methods):
                    ax.scatter(
                        x + offsets,
                        vals[m],
                        color=colors[m],
                        marker=markers[m],
                        s=26,
                        zorder=3,
                        label=f"{names[m].replace(chr(10), ' ')} (per seed)" if row == 0 else None,
                    )
                    ax.hlines(
                        vals[m].mean(),
                        x - 0.25,
                        x + 0.25,
                        color="black",
                        lw=1.6,
                        zorder=4,
                        label="mean over seeds" if (row == 0 and x == 0) else None,
                    )
                top = max(float(v.max()) for v in vals.values())
                ax.set_ylim(-0.04 * max(top, 1.0), 1.08 * max(top, 1.0))
                ax.set_xticks(xs, [names[m] for m in methods], fontsize=8)
                ax.set_xlim(-0.5, len(methods) - 0.5)
                ax.set_ylabel(label)
                if row == 0:
                    ax.set_title(title, fontsize=9)
        handles = {}
        for ax in axes[0]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        fig.legend(
            list(handles.values()),
            list(handles.keys()),
            loc="lower center",
            ncol=4,
            fontsize=8,
            frameon=False,
        )
        fig.suptitle(
            f"SMNC vs DAGMA: structure recovery, {len(report.per_seed)} seeds (lower is better)", fontsize=10
        )
        fig.tight_layout(rect=(0, 0.06, 1, 0.96))
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / "smnc_vs_dagma.png", dpi=120)
        plt.close(fig)
        return ["smnc_vs_dagma.png"]
