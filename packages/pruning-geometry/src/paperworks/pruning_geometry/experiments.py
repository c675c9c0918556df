"""Headline reproduction of TAPIOCA (arXiv 2605.14738): task-aware pruning helps OOD only, and why.

Per seed, for each task family (``poly``: in-context polynomial regression; ``lm``: a small causal LM
on a template task) and each of three depths (full run 4 / 8 / 12 layers; quick run 2 / 3 / 4 with the
shipped seed-0 models):

1. train a tiny ``transformers`` Llama model on ID data (fresh samples every step);
2. draw, with a generator of their own, an ID validation set (TALE's), an OOD validation set (the
   oracle's), ID and OOD test sets and an ID calibration set (SLEB's loss, block influence);
3. TALE on the ID validation accuracy (``min_gain = 0``); test accuracy (ID, OOD) of the full model,
   TALE's, random removal of as many layers (mean of ``random_draws`` draws), SLEB-like (greedy on
   the calibration loss) and block influence (ShortGPT) removal of as many layers, and TALE on the
   OOD validation set (an oracle reference);
4. geometry profiles (last position) on ID test halves A, B and the OOD test set: distortion
   ``D(OOD, ID_A)`` and ``D(ID_B, ID_A)`` of the full model over every layer output; ``D(OOD, ID_A)``
   of TALE's model (its removed layers as identities, so the depths match: see :mod:`.geometry`)
   and of the full model over the layer outputs from TALE's first kept layer on;
5. residual scaling of TALE's removed layers by ``alpha`` in ``alphas``: ID and OOD accuracy and D
   per alpha, Spearman correlations with alpha (0 when a curve is flat, e.g. TALE removed nothing).

Metrics are named ``<family>_d<rank>_<name>`` (rank 1..3 = smallest..largest depth) and
``<family>_<name>`` for the mean over the three depths. The settings of both runs are one frozen
dataclass, :class:`PruningGeometryConfig` (defaults: the full run; :data:`QUICK`: the quick run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from paperworks.core import (
    Claim,
    Experiment,
    Paper,
    Progress,
    Report,
    choose_device,
    optional_pyplot,
    torch_threads,
)

from .baselines import block_influence_removal, random_removal, sleb_search
from .geometry import distortion, profiles
from .layers import n_layers, without_layers
from .models import lm_accuracy, lm_loss, regression_accuracy, regression_loss
from .quick_models import train_model
from .scaling import residual_scaling
from .tale import tale_search
from .tasks import PolynomialTask, SuccessorTask

__all__ = [
    "FAMILIES",
    "QUICK",
    "PruningGeometryConfig",
    "PruningGeometryExperiment",
    "analyse_model",
    "spearman",
]

FAMILIES = ("poly", "lm")
FAMILY_NAMES = {"poly": "in-context polynomial regression", "lm": "causal LM, template task"}
SHORT_NAMES = {"poly": "polynomial regression", "lm": "LM template task"}
METHODS = ("full", "tale", "random", "sleb", "bi", "oracle")


@dataclass(frozen=True)
class PruningGeometryConfig:
    """Settings of the reproduction; the defaults are the full run's, :data:`QUICK` the quick run's.

    Attributes:
        depths: the three model depths (layers), increasing.
        hidden, heads: width and attention heads of every model (MLP width ``2 * hidden``).
        poly, lm: the two task families (their ID / OOD generative models).
        poly_steps, lm_steps, batch, lr: training (AdamW, warm-up + cosine, fresh samples per step).
        n_val: size of the ID (TALE) and OOD (oracle) validation sets; n_test: size of each test set
            (the profiles use its halves, ID A / ID B, and its first half for OOD); n_calib: size of
            the ID calibration set of SLEB's loss and block influence.
        min_gain: TALE's acceptance rule (a removal is kept when it changes validation accuracy by
            at least this much; 0: it must not lower it).
        random_draws: random removals averaged per model.
        alphas: the residual-scaling grid (6 values in [0, 1.5]; 1 = the trained model).
        id_flat: the causal claim's bound on the range of ID accuracy over ``alphas`` (fraction).
        shipped: use the shipped seed-0 models (quick run; needs ``depths == (2, 3, 4)`` and the
            shipped training settings); other seeds are trained.
    """

    depths: tuple[int, int, int] = (4, 8, 12)
    hidden: int = 32
    heads: int = 4
    poly: PolynomialTask = PolynomialTask(n_context=6, tol=0.2)  # noqa: RUF009 - frozen, immutable
    lm: SuccessorTask = SuccessorTask(ood_fillers=16, n_digits=3)  # noqa: RUF009 - frozen, immutable
    poly_steps: int = 200
    lm_steps: int = 250
    batch: int = 32
    lr: float = 3e-3
    n_val: int = 256
    n_test: int = 512
    n_calib: int = 128
    min_gain: float = 0.0
    random_draws: int = 5
    alphas: tuple[float, ...] = (0.0, 0.3, 0.6, 0.9, 1.2, 1.5)
    id_flat: float = 0.05
    shipped: bool = False

    def __post_init__(self) -> None:
        d = self.depths
        if (
            len(d) != 3
            or any(isinstance(x, bool) or not isinstance(x, int) or x < 2 for x in d)
            or list(d) != sorted(set(d))
        ):
            raise ValueError(f"depths: expected three increasing ints >= 2, got {d!r}")
        for name in (
            "hidden",
            "heads",
            "poly_steps",
            "lm_steps",
            "batch",
            "n_val",
            "n_test",
            "n_calib",
            "random_draws",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        if self.n_test < 4 or self.n_test % 2:
            raise ValueError(f"n_test: expected an even int >= 4 (two ID halves), got {self.n_test}")
        if len(self.alphas) != 6 or any(a < 0 or a > 1.5 for a in self.alphas):
            raise ValueError(f"alphas: expected 6 values in [0, 1.5], got {self.alphas!r}")
        if list(self.alphas) != sorted(set(self.alphas)) or self.alphas[0] != 0.0:
            raise ValueError(
                f"alphas: expected distinct increasing values starting at 0, got {self.alphas!r}"
            )
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise ValueError(f"lr: expected a positive float, got {self.lr!r}")
        if not (0 < self.id_flat < 1):
            raise ValueError(f"id_flat: expected a fraction in (0, 1), got {self.id_flat!r}")


QUICK = PruningGeometryConfig(depths=(2, 3, 4), n_val=128, n_test=256, random_draws=3, shipped=True)


def spearman(x, y) -> float:
    """Spearman rank correlation of ``x`` and ``y``; 0 when either is constant (no trend)."""
    from scipy import stats

    x, y = np.asarray(x, float), np.asarray(y, float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(stats.spearmanr(x, y).statistic)


@dataclass
class _Family:
    """What one family needs: accuracy and loss functions over batched inputs, and profile inputs."""

    acc: Callable[[torch.nn.Module, tuple], float]
    loss: Callable[[torch.nn.Module, tuple], torch.Tensor]
    prof_in: Callable[[tuple], object]
    sample: Callable[[int, str, np.random.Generator], tuple]


def _family(name: str, cfg: PruningGeometryConfig, device: str) -> _Family:
    if name == "poly":
        task = cfg.poly

        def sample(n, split, rng):
            tok, y = task.sample(n, split, rng)
            return tok.to(device), y.to(device)

        return _Family(
            acc=lambda m, d: regression_accuracy(m, d[0], d[1], task.tol),
            loss=lambda m, d: regression_loss(m, d[0], d[1]),
            prof_in=lambda d: d[0],
            sample=sample,
        )
    task_lm = cfg.lm

    def sample_lm(n, split, rng):
        ids, ans = task_lm.sample(n, split, rng)
        return ids.to(device), ans.to(device)

    return _Family(
        acc=lambda m, d: lm_accuracy(m, d[0], d[1]),
        loss=lambda m, d: lm_loss(m, d[0], d[1]),
        prof_in=lambda d: {"input_ids": d[0], "use_cache": False},
        sample=sample_lm,
    )


def _half(d: tuple, part: int) -> tuple:
    n = d[0].shape[0] // 2
    return tuple(t[part * n : (part + 1) * n] for t in d)


def analyse_model(
    model, fam: _Family, data: dict, cfg: PruningGeometryConfig, rng: np.random.Generator
) -> dict[str, float]:
    """Every per-model quantity of the experiment (see the module docstring), as a flat dict."""
    L = n_layers(model)
    out: dict[str, float] = {"layers": float(L)}

    def acc(removed, split):
        with without_layers(model, removed) as m:
            return fam.acc(m, data[split])

    def geometry(scaled: dict[int, float], depths=None):
        with residual_scaling(model, scaled):
            p_a = profiles(model, fam.prof_in(_half(data["test_id"], 0)))
            p_b = profiles(model, fam.prof_in(_half(data["test_id"], 1)))
            p_o = profiles(model, fam.prof_in(_half(data["test_ood"], 0)))
        return distortion(p_o, p_a, depths), distortion(p_b, p_a, depths)

    with torch.inference_mode():
        out["id_full"], out["ood_full"] = acc([], "test_id"), acc([], "test_ood")
    res = tale_search(model, lambda m: fam.acc(m, data["val_id"]), min_gain=cfg.min_gain)
    out["id_val_full"] = res.base_score  # the full model's ID validation accuracy (TALE's start)
    removed = res.removed
    k = len(removed)
    out["n_removed"] = float(k)
    out["tale_evaluations"] = float(res.evaluations)
    with torch.inference_mode():
        out["id_tale"], out["ood_tale"] = acc(removed, "test_id"), acc(removed, "test_ood")
        draws = [random_removal(L, k, rng) for _ in range(cfg.random_draws)]
        out["id_random"] = float(np.mean([acc(r, "test_id") for r in draws]))
        out["ood_random"] = float(np.mean([acc(r, "test_ood") for r in draws]))
        sleb = sleb_search(model, lambda m: fam.loss(m, data["calib"]), k)
        out["id_sleb"], out["ood_sleb"] = acc(sleb, "test_id"), acc(sleb, "test_ood")
        bi = block_influence_removal(model, fam.prof_in(data["calib"]), k)
        out["id_bi"], out["ood_bi"] = acc(bi, "test_id"), acc(bi, "test_ood")
    oracle = tale_search(model, lambda m: fam.acc(m, data["val_ood"]), min_gain=cfg.min_gain)
    with torch.inference_mode():
        out["id_oracle"], out["ood_oracle"] = acc(oracle.removed, "test_id"), acc(oracle.removed, "test_ood")
    out["n_removed_oracle"] = float(len(oracle.removed))
    # geometry: the full model at every layer; TALE's model (its removed layers as identities) and the
    # full one at the depths from TALE's first kept layer on (before it, a pruned model's state is
    # still the embedding, which for the LM's fixed last token is one point: no distances)
    kept = list(range(min(res.kept), L))
    d_full, d_idid = geometry({})
    d_kept, _ = geometry({}, kept)
    d_tale, _ = geometry({r: 0.0 for r in removed}, kept)
    out["D_full"], out["D_full_norm"], out["D_full_dist"] = d_full.total, d_full.norm, d_full.dist
    out["D_idid"] = d_idid.total
    out["D_full_kept"] = d_kept.total
    out["D_tale"], out["D_tale_norm"], out["D_tale_dist"] = d_tale.total, d_tale.norm, d_tale.dist
    # residual scaling of TALE's layers: the dose-response
    ids, oods, ds = [], [], []
    for i, a in enumerate(cfg.alphas):
        scaled = {r: float(a) for r in removed}
        with residual_scaling(model, scaled), torch.inference_mode():
            ids.append(fam.acc(model, data["test_id"]))
            oods.append(fam.acc(model, data["test_ood"]))
        ds.append(geometry(scaled, kept)[0].total)
        out[f"curve_id_a{i}"] = ids[-1] - out["id_full"]
        out[f"curve_ood_a{i}"] = oods[-1] - out["ood_full"]
        out[f"curve_D_a{i}"] = ds[-1]
    out["spearman_ood"] = spearman(cfg.alphas, oods)
    out["spearman_D"] = spearman(cfg.alphas, ds)
    out["id_range"] = float(np.ptp(ids))
    return out


def _train(fam: str, depth: int, seed: int, cfg: PruningGeometryConfig, progress: Progress):
    progress.log(
        f"seed {seed}: {'loading' if cfg.shipped and seed == 0 else 'training'} {fam} model, {depth} layers"
    )
    return train_model(fam, depth, seed, cfg, use_shipped=cfg.shipped)


def _claims() -> tuple[Claim, ...]:
    out: list[Claim] = []
    for f in FAMILIES:
        fn = FAMILY_NAMES[f]
        out += [
            Claim(
                f"no_id_benefit_{f}",
                f"task-aware pruning yields no benefit in distribution ({fn})",
                f"{f}_id_tale",
                "<=",
                0.005,
                baseline=f"{f}_id_full",
                note="TALE's ID test accuracy minus the full model's (mean over the 3 depths, fraction); "
                "holds when the upper 95% bound is <= +0.5 points",
                paper_value="no benefit",
            ),
            Claim(
                f"ood_benefit_{f}",
                f"task-aware pruning consistently improves OOD accuracy ({fn})",
                f"{f}_ood_tale",
                ">",
                0.0,
                baseline=f"{f}_ood_full",
                note="TALE (selected on ID validation data) OOD test accuracy minus the full model's, "
                "mean over the 3 depths; where TALE removed no layer (it returned the full model) a "
                "seed's difference is exactly 0: nothing to measure, not evidence that pruning hurts",
                paper_value="consistently improves",
            ),
            Claim(
                f"ood_beats_random_{f}",
                f"the OOD gain is task-aware: TALE beats random removal of as many layers ({fn})",
                f"{f}_ood_tale",
                ">",
                0.0,
                baseline=f"{f}_ood_random",
                note="random: mean of 5 (quick: 3) random removals of TALE's layer count per model",
            ),
            Claim(
                f"distortion_ood_{f}",
                f"OOD inputs distort the layerwise norm / pairwise-distance profiles ({fn})",
                f"{f}_D_full",
                ">",
                0.0,
                baseline=f"{f}_D_idid",
                kind="mechanism",
                note="full model: D(OOD, ID_A) minus D(ID_B, ID_A), two ID halves of one size",
            ),
            Claim(
                f"distortion_drop_{f}",
                f"pruning shifts OOD profiles toward the ID ones ({fn})",
                f"{f}_D_tale",
                "<",
                0.0,
                baseline=f"{f}_D_full_kept",
                kind="mechanism",
                note="D(OOD, ID_A) of TALE's model (removed layers as identities) minus the full model's, "
                "both over the layer outputs from TALE's first kept layer on (0 where TALE removed nothing)",
            ),
            Claim(
                f"causal_ood_{f}",
                f"residual scaling of TALE's layers: OOD accuracy decreases in alpha ({fn})",
                f"{f}_spearman_ood",
                "<",
                0.0,
                kind="mechanism",
                note="Spearman(alpha, OOD accuracy) over alpha in {0, .3, .6, .9, 1.2, 1.5}, mean over the "
                "3 depths; "
                "sign fixed in advance; 0 where TALE removed no layer",
            ),
            Claim(
                f"causal_distortion_{f}",
                f"residual scaling of TALE's layers: D increases in alpha ({fn})",
                f"{f}_spearman_D",
                ">",
                0.0,
                kind="mechanism",
                note="Spearman(alpha, D(OOD, ID_A) over the layer outputs from TALE's first kept layer on), "
                "mean over the 3 depths; sign fixed in advance",
            ),
            Claim(
                f"causal_id_flat_{f}",
                f"residual scaling of TALE's layers leaves ID accuracy flat ({fn})",
                f"{f}_id_range",
                "<=",
                0.05,
                kind="mechanism",
                note="range (max - min) of ID test accuracy over the 6 alphas, mean over the 3 depths; "
                "bound 5 points, fixed before any run",
            ),
        ]
        for r in (1, 2, 3):
            out.append(
                Claim(
                    f"ood_benefit_{f}_depth{r}",
                    f"the OOD benefit holds at each model scale: depth {r} of 3 ({fn})",
                    f"{f}_d{r}_ood_tale",
                    ">",
                    0.0,
                    baseline=f"{f}_d{r}_ood_full",
                    note="full run: depth 1/2/3 = 4/8/12 layers (quick: 2/3/4); where TALE removed no "
                    "layer at this depth (it returned the full model) the seed's difference is exactly 0, "
                    "so an interval of [0, 0] means TALE removed nothing in any seed: nothing to measure, "
                    "not evidence that pruning hurts (see the table 'Claims with nothing to measure')",
                )
            )
    return tuple(out)


class PruningGeometryExperiment(Experiment):
    """TALE's ID-only-no-gain / OOD-gain, geometry distortion and residual-scaling dose-response."""

    slug: ClassVar[str] = "pruning-geometry"
    paper: ClassVar[Paper] = Paper(
        "TAPIOCA: Why Task-Aware Pruning Improves OOD model Capability",
        arxiv="2605.14738",
        note="builds on TALE (arXiv 2510.22767); no full text read: the setting is reconstructed "
        "(README, Fidelity)",
    )
    claims: ClassVar[tuple[Claim, ...]] = _claims()
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int] = 1

    def config(self, quick: bool) -> PruningGeometryConfig:
        return QUICK if quick else PruningGeometryConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        device = choose_device()
        metrics: dict[str, float] = {}
        with torch_threads(1):
            for f_i, f in enumerate(FAMILIES):
                fam = _family(f, cfg, device)
                per_depth = []
                for rank, depth in enumerate(cfg.depths, start=1):
                    model = _train(f, depth, seed, cfg, progress).to(device).eval()
                    rng = np.random.default_rng([seed, depth, f_i, 7])
                    data = {
                        "val_id": fam.sample(cfg.n_val, "id", rng),
                        "val_ood": fam.sample(cfg.n_val, "ood", rng),
                        "test_id": fam.sample(cfg.n_test, "id", rng),
                        "test_ood": fam.sample(cfg.n_test, "ood", rng),
                        "calib": fam.sample(cfg.n_calib, "id", rng),
                    }
                    progress.log(f"seed {seed}: analysing {f}, {depth} layers")
                    res = analyse_model(model, fam, data, cfg, rng)
                    per_depth.append(res)
                    for k, v in res.items():
                        metrics[f"{f}_d{rank}_{k}"] = float(v)
                for k in per_depth[0]:
                    metrics[f"{f}_{k}"] = float(np.mean([r[k] for r in per_depth]))
        return metrics

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)

        def ms(key: str, scale: float = 100.0) -> str:
            v = np.array([s[key] for s in per_seed]) * scale
            return f"{v.mean():.1f} ± {v.std(ddof=1):.1f}" if v.size > 1 else f"{v.mean():.1f}"

        def table(head: list[str], cells) -> str:
            lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
            for f in FAMILIES:
                for r, depth in enumerate(cfg.depths, start=1):
                    lines.append("| " + " | ".join([f, str(depth), *cells(f"{f}_d{r}_")]) + " |")
            return "\n".join(lines)

        acc_head = [
            "family",
            "layers",
            "removed (TALE / oracle)",
            "ID val full",
            "ID full",
            "ID TALE",
            "OOD full",
            "OOD TALE",
        ]
        acc_head += ["OOD random", "OOD SLEB", "OOD BI", "OOD oracle"]

        def acc_cells(p: str) -> list[str]:
            removed = f"{ms(p + 'n_removed', 1)} / {ms(p + 'n_removed_oracle', 1)}"
            keys = (
                "id_val_full",
                "id_full",
                "id_tale",
                "ood_full",
                "ood_tale",
                "ood_random",
                "ood_sleb",
                "ood_bi",
                "ood_oracle",
            )
            return [removed, *(ms(p + k) for k in keys)]

        geo_head = ["family", "layers", "D(ID_B, ID_A)", "D full, all layers (norm + dist)"]
        geo_head += ["D full, from TALE's first kept layer", "D TALE (norm + dist)"]
        geo_head += ["Spearman OOD acc", "Spearman D", "ID range (points)"]

        def geo_cells(p: str) -> list[str]:
            def parts(k: str) -> str:
                return f"{ms(p + k, 1000)} ({ms(p + k + '_norm', 1000)} + {ms(p + k + '_dist', 1000)})"

            return [
                ms(p + "D_idid", 1000),
                parts("D_full"),
                ms(p + "D_full_kept", 1000),
                parts("D_tale"),
                ms(p + "spearman_ood", 1),
                ms(p + "spearman_D", 1),
                ms(p + "id_range"),
            ]

        n = len(per_seed)
        empty = ["| family | layers | seeds where TALE removed no layer | OOD-benefit claim at this depth |"]
        empty.append("| --- | --- | --- | --- |")
        for f in FAMILIES:
            for r, depth in enumerate(cfg.depths, start=1):
                zero = sum(s[f"{f}_d{r}_n_removed"] == 0 for s in per_seed)
                reading = (
                    "nothing to measure: TALE returned the full model in every seed"
                    if zero == n
                    else "measured"
                    if zero == 0
                    else f"{zero} seed(s) contribute an exact 0 (nothing removed)"
                )
                empty.append(f"| {f} | {depth} | {zero} of {n} | ood_benefit_{f}_depth{r}: {reading} |")
        return {
            "Accuracy (%; mean ± sd over seeds; ID val: TALE's validation set, the rest test sets) and "
            "layers removed": table(acc_head, acc_cells),
            "Geometry (D x 1000) and the residual-scaling dose-response": table(geo_head, geo_cells),
            "Claims with nothing to measure (TALE removed no layer)": "\n".join(empty),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        cfg = self.config(report.quick)
        alphas = np.array(cfg.alphas)
        fig, axes = plt.subplots(2, 2, figsize=(12.5, 8), constrained_layout=True)
        seeds = report.per_seed
        for row, f in enumerate(FAMILIES):
            ax = axes[row, 0]
            styles = (
                ("ood", "tab:red", "OOD accuracy", "-", "o"),
                ("id", "tab:blue", "ID accuracy", "--", "s"),
            )
            for name, color, label, ls, marker in styles:
                curves = (
                    np.array([[s[f"{f}_curve_{name}_a{i}"] for i in range(alphas.size)] for s in seeds]) * 100
                )
                for c in curves:
                    ax.plot(alphas, c, color=color, alpha=0.3, lw=1, ls=ls, marker=marker, ms=3)
                mean_label = f"{label} (mean; thin: seeds)"
                ax.plot(
                    alphas, curves.mean(0), color=color, lw=2.5, ls=ls, marker=marker, ms=5, label=mean_label
                )
            ax.axhline(0, color="grey", lw=0.8, ls=":")
            ax.axvline(1, color="grey", lw=0.8, ls="--")
            ax.set_xlabel("residual scale alpha on TALE's layers (0 = pruned, 1 = trained)")
            ax.set_ylabel("accuracy change vs. alpha = 1 (points)")
            ax.set_title(f"({'ab'[row]}) {SHORT_NAMES[f]}: residual-scaling dose-response")
            ax.legend(fontsize=8)
            ax = axes[row, 1]
            methods = (
                ("tale", "TALE (ID val)", "tab:green", "o"),
                ("random", "random", "tab:grey", "s"),
                ("sleb", "SLEB-like", "tab:purple", "^"),
                ("bi", "block influence", "tab:orange", "v"),
                ("oracle", "TALE (OOD val, oracle)", "black", "x"),
            )
            for j, (m, label, color, marker) in enumerate(methods):
                xs, ys = [], []
                for r in (1, 2, 3):
                    vals = [(s[f"{f}_d{r}_ood_{m}"] - s[f"{f}_d{r}_ood_full"]) * 100 for s in seeds]
                    xs += [r + (j - 2) * 0.12] * len(vals)
                    ys += vals
                ax.scatter(xs, ys, color=color, marker=marker, s=22, label=label, alpha=0.8)
            ax.axhline(0, color="grey", lw=0.8, ls=":")
            ax.set_xticks([1, 2, 3], [f"{d} layers" for d in cfg.depths])
            ax.set_ylabel("OOD accuracy minus full model's (points)")
            ax.set_title(f"({'cd'[row]}) {SHORT_NAMES[f]}: OOD gain per depth")
            ax.legend(
                fontsize=8,
                title="one point per seed",
                title_fontsize=8,
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
            )
        name = "ood_gain_dose_response.png"
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        return [name]
