"""Headline reproduction of SMNC at laptop scale (``paperworks reproduce smnc-dag``).

Per seed:

1. Linear Gaussian SEMs (see :mod:`.data`) on Erdos-Renyi and scale-free DAGs with ``2d`` expected
   edges; methods: SMNC (separated, full gate, normalised closure), SMNC with ancestry cues (30% of
   the true ancestral pairs, never edge labels), the ablations (unnormalised product closure; single
   matrix; separation without closure), DAGMA linear (the ``dagma`` package, its defaults in the full
   run) and NOTEARS (our implementation; only on settings with ``d <= notears_max_d``, the most it
   affords in the time budget). Settings: :class:`SMNCExperimentConfig` (quick: :data:`QUICK`).
2. Closure mathematics on planted cycles: decay of the unnormalised evidence (``p^L``), the
   ``1/L`` gradient factor of SMNC at the covering scale, and whether a long planted cycle survives
   a fixed budget of plain gradient steps on the cycle loss with each closure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from paperworks.core import Claim, Experiment, Paper, Progress

from .baselines import dagma_linear, notears_linear
from .closure import smnc_logits, smnc_readout
from .data import ancestry_pairs, simulate_dag, simulate_linear_sem, simulate_weights
from .estimator import SMNC
from .metrics import count_accuracy
from .relations import cycle_loss

__all__ = [
    "QUICK",
    "SMNCExperiment",
    "SMNCExperimentConfig",
    "closure_gradient_study",
    "cycle_survival_study",
]

VARIANTS = {
    "smnc": {},
    "smnc_anc": {},
    "product": {"closure": "product"},
    "single": {"factorization": "none"},
    "sep_noclosure": {"closure": "off"},
}
LABELS = {
    "smnc": "SMNC (separated + normalised closure)",
    "smnc_anc": "SMNC + ancestry cues (30%)",
    "product": "ablation: unnormalised product closure",
    "single": "ablation: single matrix (unseparated)",
    "sep_noclosure": "ablation: separated, no closure",
    "dagma": "DAGMA linear (dagma package)",
    "notears": "NOTEARS linear",
}


GRAPH_TYPES = ("ER", "SF")


@dataclass(frozen=True)
class SMNCExperimentConfig:
    """Settings of the headline run (defaults: the full run; :data:`QUICK`: the quick run).

    settings: ``(graph type, d, n)`` per linear Gaussian SEM; ``edges_per_node``: expected edges
    ``k d``; ``ancestry_fraction``: share of the true ancestral pairs given as cues to SMNC + cues.
    ``smnc_*``: SMNC's central-path schedule (Adam steps per warm stage / the last stage).
    ``dagma_*``: DAGMA's (the full run's values are the ``dagma`` package defaults).
    ``notears_max_d``: NOTEARS runs on the settings with ``d <= notears_max_d``.
    ``closure_*``: the planted-cycle gradient study (gate ``p``, cycle lengths, powers of 2);
    ``survival_*``: the cycle-survival study (cycle lengths, plain gradient steps, step size).
    """

    settings: tuple[tuple[str, int, int], ...] = (("ER", 10, 1000), ("ER", 20, 1000), ("SF", 20, 1000))
    edges_per_node: int = 2
    ancestry_fraction: float = 0.3
    smnc_warm_iter: int = 500
    smnc_max_iter: int = 1000
    dagma_T: int = 5
    dagma_warm_iter: int = 30_000
    dagma_max_iter: int = 60_000
    notears_max_d: int = 10
    closure_p: float = 0.7
    closure_lengths: tuple[int, ...] = (2, 4, 8, 16, 32)
    survival_lengths: tuple[int, ...] = (4, 8, 16, 24)
    survival_steps: int = 200
    survival_lr: float = 1.0

    def __post_init__(self) -> None:
        if not self.settings:
            raise ValueError("settings: expected at least one (graph, d, n) setting")
        for item in self.settings:
            if len(item) != 3:
                raise ValueError(f"settings: expected (graph, d, n) triples, got {item!r}")
            graph, d, n = item
            if graph not in GRAPH_TYPES or not _pos_int(d) or d < 2 or not _pos_int(n) or n <= d:
                raise ValueError(
                    f"settings: expected (graph in {GRAPH_TYPES}, d >= 2, n > d) ints, got {item!r}"
                )
        if not any(d <= self.notears_max_d for _, d, _ in self.settings):
            raise ValueError(
                f"notears_max_d: expected at least one setting with d <= {self.notears_max_d} "
                "(the beats-notears claim needs one)"
            )
        for name in (
            "edges_per_node",
            "smnc_warm_iter",
            "smnc_max_iter",
            "dagma_T",
            "dagma_warm_iter",
            "dagma_max_iter",
            "notears_max_d",
            "survival_steps",
        ):
            if not _pos_int(getattr(self, name)):
                raise ValueError(f"{name}: expected a positive int, got {getattr(self, name)!r}")
        if not 0 < self.ancestry_fraction <= 1:
            raise ValueError(
                f"ancestry_fraction: expected a fraction in (0, 1], got {self.ancestry_fraction!r}"
            )
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
    settings=(("ER", 5, 200),),
    smnc_warm_iter=200,
    smnc_max_iter=400,
    dagma_T=4,
    dagma_warm_iter=1000,
    dagma_max_iter=2000,
    survival_lengths=(4, 8),
    survival_steps=50,
)


def closure_gradient_study(p: float = 0.7, lengths=(2, 4, 8, 16, 32)) -> dict[str, float]:
    """Planted length-``L`` cycles with gate ``p`` read at their covering scale ``L_k = L``.

    Returns the relative error of the fitted decay rate of the unnormalised evidence against
    ``log p``, the log-log slope of SMNC's gradient ``d l_ii / d log g_e`` against ``L`` (paper:
    ``1/L``, slope ``-1``) and the same slope for the all-scale soft readout.
    """
    log_ev, g_norm, g_soft = [], [], []
    for L in lengths:
        k = int(math.log2(L))
        logz = torch.full((L,), math.log(p), dtype=torch.float64, requires_grad=True)
        idx = torch.arange(L)
        G = torch.zeros(L, L, dtype=torch.float64).index_put((idx, (idx + 1) % L), torch.exp(logz))
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


def cycle_survival_study(rng: np.random.Generator, lengths=(4, 8, 16, 24), steps: int = 200, lr: float = 1.0):
    """Plant one length-``L`` cycle (gates ``U(0.7, 0.9)``) among weak background gates ``U(0, 0.05)``
    on ``d = L`` nodes; run ``steps`` plain gradient steps (lr ``lr``) on the gate logits minimising
    ``cycle_loss``. A cycle survives when all its gates stay above 0.5. Returns survival fractions."""
    out = {}
    for closure in ("smnc", "product"):
        survived = 0
        for L in lengths:
            G0 = rng.uniform(0.0, 0.05, (L, L))
            idx = np.arange(L)
            G0[idx, (idx + 1) % L] = rng.uniform(0.7, 0.9, L)
            np.fill_diagonal(G0, 0.0)
            Z = torch.tensor(np.log(G0 + 1e-12) - np.log1p(-G0), requires_grad=True)
            eye = torch.eye(L, dtype=torch.float64)
            for _ in range(steps):
                G = torch.sigmoid(Z) * (1 - eye)
                loss = cycle_loss(smnc_readout(smnc_logits(G, normalize=closure == "smnc")))
                (g,) = torch.autograd.grad(loss, Z)
                with torch.no_grad():
                    Z -= lr * g
            gates = torch.sigmoid(Z.detach())[idx, (idx + 1) % L]
            survived += int(bool((gates > 0.5).all()))
        out[f"closure.cycle_survival_{closure}"] = survived / len(lengths)
    out["closure.cycle_survival_gap"] = (
        out["closure.cycle_survival_product"] - out["closure.cycle_survival_smnc"]
    )
    return out


class SMNCExperiment(Experiment):
    """SMNC vs DAGMA and NOTEARS on linear SEMs, closure ablations and ancestry cues."""

    slug: ClassVar[str] = "smnc-dag"
    paper: ClassVar[Paper] = Paper(
        "Structure-separated continuous DAG learning with multi-scale normalized closure (SMNC)",
        arxiv=None,
        note="NeurIPS 2026; no public full text: reconstructed from the abstract, DAGMA and NOTEARS",
    )
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "beats-dagma",
            "structure separation + SMNC improves DAG recovery over DAGMA",
            "shd_gain_vs_dagma",
            ">",
            0.0,
            note="SHD(DAGMA) - SHD(SMNC) on the same data per seed, mean over the linear settings; "
            "issue 31: a setting where DAGMA is already near SHD 0 leaves little headroom",
            paired=True,
        ),
        Claim(
            "beats-notears",
            "structure separation + SMNC improves DAG recovery over NOTEARS",
            "shd_gain_vs_notears",
            ">",
            0.0,
            note="SHD(NOTEARS) - SHD(SMNC) on the same data per seed, settings with d <= notears_max_d "
            "(full: ER d = 10; quick: ER d = 5)",
            paired=True,
        ),
        Claim(
            "normalisation-ablation",
            "the normalised closure improves recovery over the unnormalised product closure",
            "shd_gain_vs_product",
            ">",
            0.0,
            note="SHD(product closure) - SHD(SMNC) on the same data per seed, mean over settings",
            paired=True,
        ),
        Claim(
            "separation-ablation",
            "structure separation improves recovery over the single-matrix variant",
            "shd_gain_vs_single",
            ">",
            0.0,
            note="SHD(single matrix) - SHD(SMNC) on the same data per seed, mean over settings; the "
            "single matrix runs SMNC's Adam step, chosen for the bounded separated parameters",
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
            "without normalisation long cycles survive; with it they are suppressed",
            "closure.cycle_survival_gap",
            ">",
            0.0,
            note="fraction of planted cycles surviving (product) - (SMNC) under plain gradient steps on "
            "the cycle loss; each closure draws its own planted cycles from the seed's stream; issue 31: "
            "the background gates do not isolate the cycle, the condition the claim needs",
            kind="mechanism",
        ),
        Claim(
            "ancestry-helps",
            "adding ancestry cues improves recovery further",
            "shd_gain_from_ancestry",
            ">",
            0.0,
            note="SHD(SMNC) - SHD(SMNC + cues) on the same data per seed, mean over settings; issue 31: "
            "the cycle and relation losses are not scaled with mu (an implementation defect)",
            paired=True,
        ),
    )
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int] = 3

    def config(self, quick: bool) -> SMNCExperimentConfig:
        return QUICK if quick else SMNCExperimentConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        rng = np.random.default_rng(seed)
        out: dict[str, float] = {}
        budget = {"warm_iter": cfg.smnc_warm_iter, "max_iter": cfg.smnc_max_iter}
        dagma_kw = {"T": cfg.dagma_T, "warm_iter": cfg.dagma_warm_iter, "max_iter": cfg.dagma_max_iter}
        gains = {k: [] for k in ("dagma", "product", "single", "ancestry")}
        notears_gain = []
        for graph, d, n in progress.track(cfg.settings, "smnc-dag: settings"):
            tag = f"{graph}{d}"
            B = simulate_dag(d, cfg.edges_per_node, graph, rng)
            W = simulate_weights(B, rng)
            X = simulate_linear_sem(W, n, rng)
            anc = ancestry_pairs(B)
            cues = anc[rng.random(len(anc)) < cfg.ancestry_fraction]
            res = {}
            for name, kw in VARIANTS.items():
                est = SMNC(seed=seed, **budget, **kw)
                est.fit(X, ancestry=cues if name == "smnc_anc" else None)
                res[name] = count_accuracy(B, est.graph_)
                if name == "smnc_anc":
                    nonedge = cues[~B[cues[:, 0], cues[:, 1]]] if len(cues) else cues
                    out[f"{tag}.anc_cue_nonedges_as_edges"] = (
                        float(est.graph_[nonedge[:, 0], nonedge[:, 1]].mean()) if len(nonedge) else 0.0
                    )
                if name == "smnc":
                    nonedge = cues[~B[cues[:, 0], cues[:, 1]]] if len(cues) else cues
                    out[f"{tag}.nocue_nonedges_as_edges"] = (
                        float(est.graph_[nonedge[:, 0], nonedge[:, 1]].mean()) if len(nonedge) else 0.0
                    )
            res["dagma"] = count_accuracy(B, dagma_linear(X, **dagma_kw))
            if d <= cfg.notears_max_d:
                res["notears"] = count_accuracy(B, notears_linear(X))
                notears_gain.append(res["notears"]["shd"] - res["smnc"]["shd"])
            for name, acc in res.items():
                for metric in ("shd", "tpr", "fdr"):
                    out[f"{tag}.{name}.{metric}"] = float(acc[metric])
            gains["dagma"].append(res["dagma"]["shd"] - res["smnc"]["shd"])
            gains["product"].append(res["product"]["shd"] - res["smnc"]["shd"])
            gains["single"].append(res["single"]["shd"] - res["smnc"]["shd"])
            gains["ancestry"].append(res["smnc"]["shd"] - res["smnc_anc"]["shd"])
        out["shd_gain_vs_dagma"] = float(np.mean(gains["dagma"]))
        out["shd_gain_vs_notears"] = float(np.mean(notears_gain)) if notears_gain else math.nan
        out["shd_gain_vs_product"] = float(np.mean(gains["product"]))
        out["shd_gain_vs_single"] = float(np.mean(gains["single"]))
        out["shd_gain_from_ancestry"] = float(np.mean(gains["ancestry"]))
        progress.log("smnc-dag: closure studies")
        out.update(closure_gradient_study(cfg.closure_p, cfg.closure_lengths))
        out.update(
            cycle_survival_study(
                rng, lengths=cfg.survival_lengths, steps=cfg.survival_steps, lr=cfg.survival_lr
            )
        )
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        def fmt(key: str) -> str:
            vals = [m[key] for m in per_seed if key in m]
            if not vals:
                return "-"
            if len(vals) == 1:
                return f"{vals[0]:.3g}"
            return f"{np.mean(vals):.3g} ± {np.std(vals, ddof=1):.2g}"

        tables = {}
        for graph, d, n in self.config(quick).settings:
            tag = f"{graph}{d}"
            rows = ["| method | SHD | TPR | FDR |", "| --- | --- | --- | --- |"]
            for name, label in LABELS.items():
                if f"{tag}.{name}.shd" in per_seed[0]:
                    rows.append(
                        f"| {label} | {fmt(f'{tag}.{name}.shd')} | {fmt(f'{tag}.{name}.tpr')} | "
                        f"{fmt(f'{tag}.{name}.fdr')} |"
                    )
            rows.append(
                "| non-edge ancestry cues predicted as direct edges: without cues "
                f"{fmt(f'{tag}.nocue_nonedges_as_edges')}, "
                f"with cues {fmt(f'{tag}.anc_cue_nonedges_as_edges')} | | | |"
            )
            tables[f"Linear Gaussian SEM, {graph} graph, d = {d}, n = {n} (mean ± std over seeds)"] = (
                "\n".join(rows)
            )
        closure = ["| quantity | value |", "| --- | --- |"]
        for key in (
            "closure.product_decay_rel_error",
            "closure.smnc_grad_loglog_slope",
            "closure.soft_readout_grad_loglog_slope",
            "closure.cycle_survival_smnc",
            "closure.cycle_survival_product",
        ):
            closure.append(f"| {key} | {fmt(key)} |")
        tables["Closure studies (planted cycles)"] = "\n".join(closure)
        return tables
