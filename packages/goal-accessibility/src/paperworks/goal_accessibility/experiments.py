"""Headline reproduction: GAR, force/window closure and residual probes on tiny in-package transformers.

Per seed: train tiny eager Llamas on generated goal-recall chats (:mod:`.task`) with full, sliding-window
and sink attention at several depths (:mod:`.models`), then on held-out episodes twice as long as the
longest training episode measure (i) GAR by turn, (ii) recall and persona violations under force
closure of the goal columns vs an adversarial-pressure prompt with the attention open, (iii) the recall
drop under a window closure against the crossover turn predicted from token counts, (iv) per-layer
residual probes of the recall outcome (embedding layer: control), and (v) post-closure recall vs probe
AUC across the variants. The predicates are the issue's, fixed before any run.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from scipy import stats
from threadpoolctl import threadpool_limits

from paperworks.core import (
    Claim,
    Experiment,
    Paper,
    Progress,
    choose_device,
    optional_pyplot,
    torch_threads,
)

from .closure import force_closure, record_goal_mass, window_closure
from .gar import gar_by_turn
from .masks import crossover_turn
from .models import Architecture, TrainConfig, attention_pattern, train_model
from .probes import emergence_layer, layer_probe_aucs, probe_auc
from .task import Episodes, GoalRecallTask, Vocab

__all__ = ["QUICK", "GoalAccessibilityConfig", "GoalAccessibilityExperiment"]

_VARIANTS = (
    Architecture("full", 1),
    Architecture("full", 2),
    Architecture("full", 3),
    Architecture("window", 2),
    Architecture("sinks", 2),
)


@dataclass(frozen=True)
class GoalAccessibilityConfig:
    """Settings of one run (defaults: the full run; :data:`QUICK`: the tests' quick run).

    ``variants``: the models trained per seed; ``reference``: the variant (index) force-closed and
    window-closed (the paper's Mistral role); ``train``: SFT settings (episodes of up to
    ``train.max_turns`` turns); ``n_eval`` held-out episodes of ``eval_turns`` turns; ``closure_window``:
    the window W of the inference-time window closure (equal to the window the windowed variants are
    trained with); ``force_from_turn``: t0 of the force closure; ``probe_folds``: CV folds of the probes;
    ``emergence_threshold``: the AUC at which a layer counts as encoding the outcome; ``gar_zero``: GAR
    below which attention counts as closed ("GAR ~ 0").
    """

    variants: tuple[Architecture, ...] = _VARIANTS
    reference: int = 1
    task: GoalRecallTask = GoalRecallTask(pressure=0.3)  # noqa: RUF009 (frozen, immutable)
    train: TrainConfig = TrainConfig(steps=300, batch=32, lr=3e-3, max_turns=5)  # noqa: RUF009
    n_eval: int = 128
    eval_turns: int = 10
    closure_window: int = 64
    force_from_turn: int = 2
    force_turns: int = 3
    probe_folds: int = 5
    emergence_threshold: float = 0.8
    gar_zero: float = 0.01

    def __post_init__(self) -> None:
        if not self.variants or not all(isinstance(v, Architecture) for v in self.variants):
            raise ValueError("variants: expected a non-empty tuple of Architecture")
        if not 0 <= self.reference < len(self.variants) or self.variants[self.reference].kind != "full":
            raise ValueError(f"reference: expected the index of a 'full' variant, got {self.reference}")
        if any(v.kind != "full" and v.window != self.closure_window for v in self.variants):
            raise ValueError("closure_window: expected the windowed variants' window")
        if self.eval_turns <= self.train.max_turns:
            raise ValueError("eval_turns: expected episodes longer than in training")
        if not 1 <= self.force_from_turn < self.eval_turns - self.force_turns + 1:
            raise ValueError(
                f"force_from_turn: expected in [1, eval_turns - force_turns], got {self.force_from_turn}"
            )
        for k in ("n_eval", "closure_window", "force_turns", "probe_folds"):
            if not isinstance(getattr(self, k), int) or getattr(self, k) < 1:
                raise ValueError(f"{k}: expected a positive int, got {getattr(self, k)!r}")


#: The quick run (the tests'): one small full-attention model on a smaller task (8 facts of 8 values,
#: 2-4 filler words) that it learns in 160 steps; the window closure is applied at inference with a
#: 32-token window so that the crossover falls inside the 6 held-out turns. Claims across variants are
#: degenerate here and every verdict is a 1-seed one.
QUICK = GoalAccessibilityConfig(
    variants=(Architecture("full", 2),),
    reference=0,
    task=GoalRecallTask(
        vocab=Vocab(n_keys=8, n_values=8, n_closers=4, n_fillers=12), min_filler=2, max_filler=4, pressure=0.3
    ),
    train=TrainConfig(steps=160, batch=16, lr=3e-3, warmup=20, max_turns=3),
    n_eval=48,
    eval_turns=6,
    closure_window=32,
    probe_folds=3,
)


def _forward(model, arch, ep: Episodes, device, *, window=None, force_from=None, hidden=False):
    """One forward pass on the episodes under ``arch``'s pattern, plus optional closures.

    Returns (logits, goal masses (L, B, H, T), hidden states or None)."""
    ids = torch.as_tensor(ep.tokens, device=device)
    goal = torch.as_tensor(ep.goal_mask, device=device)
    with torch.inference_mode(), attention_pattern(model, arch), record_goal_mass(model, goal) as rec:
        ctxs = []
        if window is not None:
            ctxs.append(window_closure(model, window))
        if force_from is not None:
            ctxs.append(force_closure(model, goal, torch.as_tensor(force_from, device=device)))
        for c in ctxs:
            c.__enter__()
        try:
            out = model(input_ids=ids, output_hidden_states=hidden)
        finally:
            for c in reversed(ctxs):
                c.__exit__(None, None, None)
    return out.logits, rec.stacked(), (out.hidden_states if hidden else None)


def _answers(logits, ep: Episodes) -> tuple[np.ndarray, np.ndarray]:
    """(B, n_turns) recall correct, persona violated."""
    b = torch.arange(ep.tokens.shape[0])[:, None]
    pv = logits[b, torch.as_tensor(ep.answer_pos)].argmax(-1).cpu().numpy()
    pc = logits[b, torch.as_tensor(ep.closer_pos)].argmax(-1).cpu().numpy()
    return pv == ep.value, pc != ep.closer[:, None]


def _spearman(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(stats.spearmanr(x, y).statistic)


def _gar_turns(masses, ep: Episodes) -> np.ndarray:
    """(n_turns,) layer-averaged GAR of the generated rows of each turn."""
    g, _ = gar_by_turn(masses.cpu(), torch.as_tensor(ep.generated_rows()), ep.n_turns)
    return g.mean(0).numpy()


class GoalAccessibilityExperiment(Experiment):
    slug = "goal-accessibility"
    paper = Paper(
        "When Attention Closes: How LLMs Lose the Thread in Multi-Turn Interaction",
        "2605.12922",
        note="full text not read; GAR's formula, models, windows, crossover prediction reconstructed",
    )
    claims = (
        Claim(
            "gar_falls_full",
            "GAR falls with turn index (full attention, every depth): Spearman(turn, GAR) < -0.5",
            "gar_spearman_worst_full",
            "<",
            -0.5,
            note="per seed the largest (least negative) Spearman over the full-attention depths of "
            "layer-mean "
            "GAR of the generated tokens against the turn, on held-out episodes twice the training length",
            kind="mechanism",
        ),
        Claim(
            "gar_falls_window",
            "GAR falls with turn index (sliding-window attention): Spearman(turn, GAR) < -0.5",
            "gar_spearman_worst_window",
            "<",
            -0.5,
            kind="mechanism",
        ),
        Claim(
            "gar_falls_sinks",
            "GAR falls with turn index (window + attention sinks): Spearman(turn, GAR) < -0.5",
            "gar_spearman_worst_sinks",
            "<",
            -0.5,
            kind="mechanism",
        ),
        Claim(
            "recall_before_closure",
            "before force closure recall is near-perfect (>= 0.9)",
            "recall_open",
            ">=",
            0.9,
            note="reference model (full attention), turns t0..t0+2 with the attention open (same episodes)",
            paper_value="near-perfect (Mistral)",
        ),
        Claim(
            "recall_after_force_closure",
            "force closure of the goal columns collapses recall (<= 0.3)",
            "recall_forced",
            "<=",
            0.3,
            note="the same turns with the goal columns masked from t0 on; chance is 1/16",
            paper_value=0.11,
        ),
        Claim(
            "persona_forced_exceeds_pressure",
            "force closure raises persona violations above an adversarial-pressure prompt without closure",
            "persona_violation_forced",
            ">",
            0.0,
            baseline="persona_violation_pressure",
            note="paired per seed: violation rate under force closure (no pressure) minus under a pressure "
            "request in every turn with the attention open, same turns",
        ),
        Claim(
            "drop_at_crossover",
            "under window closure the recall drop happens within 1 turn of the predicted crossover turn",
            "crossover_abs_offset",
            "<=",
            1.0,
            note="|first turn (aligned on each episode's predicted crossover) whose recall is below half the "
            "pre-closure recall - 0|; the crossover comes from token counts alone (crossover_turn)",
            kind="mechanism",
        ),
        Claim(
            "residual_probe_auc",
            "the best-layer residual probe predicts the recall outcome with AUC >= 0.9 (every architecture)",
            "probe_auc_best_min",
            ">=",
            0.9,
            note="per seed the smallest over variants of the best layer's out-of-fold AUC; features at the "
            "queried key, labels: recall correct, episodes under the window closure",
            paper_value="up to 0.99",
        ),
        Claim(
            "embedding_probe_not_above_chance",
            "the input-embedding probe is at chance: its AUC is at most 0.05 above 0.5",
            "probe_auc_embedding",
            "<=",
            0.55,
            note="reference model; layer 0 (token embedding) of the same probe. With the next claim, an "
            "equivalence band of +-0.05 around chance (ours, set after the first full run; the issue's "
            "'interval contains 0.5' would hold more easily the noisier the seeds)",
            paper_value="chance",
        ),
        Claim(
            "embedding_probe_not_below_chance",
            "the input-embedding probe is at chance: its AUC is at most 0.05 below 0.5",
            "probe_auc_embedding",
            ">=",
            0.45,
            note="see embedding_probe_not_above_chance",
            paper_value="chance",
        ),
        Claim(
            "emergence_layer_differs",
            "the layer at which the outcome becomes decodable (AUC >= 0.8) differs across architectures",
            "emergence_layer_range",
            ">",
            0.0,
            note="per seed max - min of the emergence layer over the depth-2 full, window and sinks models",
            paper_value="layer 2 to 27",
        ),
        Claim(
            "recall_rises_with_auc",
            "across variants post-closure recall rises with best-layer probe AUC (Spearman > 0)",
            "separability_spearman",
            ">",
            0.0,
            note="per seed Spearman over the variants of (post-crossover recall under the window, best AUC)",
        ),
        Claim(
            "dissociation",
            "a variant keeps recall >= 0.5 at GAR ~ 0 while another fails despite AUC >= 0.8",
            "dissociation_observed",
            ">",
            0.5,
            note="per seed 1 when both variants exist (post-crossover, window closure; GAR ~ 0: < 0.01)",
        ),
    )
    default_seeds = 5
    quick_seeds: ClassVar[int | None] = 1

    def config(self, quick: bool) -> GoalAccessibilityConfig:
        return QUICK if quick else GoalAccessibilityConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        device = choose_device()
        progress = progress or Progress(enabled=False)
        rng = np.random.default_rng([seed, 11])
        task = cfg.task
        ep = task.sample(cfg.n_eval, cfg.eval_turns, rng, pressure=0.0)
        ep_press = _with_pressure(task, ep, rng)
        W = cfg.closure_window
        t_star = np.array([crossover_turn(c, ep.goal_span, W) for c in ep.token_counts])
        m: dict[str, float] = {"device_is_cuda": float(device.startswith("cuda"))}
        per_variant = []
        # one thread for torch and for BLAS (the probes' L-BFGS): small problems on a busy 2-core machine
        # run many-fold slower with threads
        with torch_threads(1), threadpool_limits(1):
            for vi, arch in enumerate(cfg.variants):
                model, loss = train_model(
                    arch, task, cfg.train, seed=seed * 100 + vi, device=device, progress=progress
                )
                name = arch.name
                # (i) GAR by turn and recall with the model's own attention pattern
                logits, masses, _ = _forward(model, arch, ep, device)
                rec, _viol = _answers(logits, ep)
                gar_t = _gar_turns(masses, ep)
                m[f"train_loss/{name}"] = loss
                m[f"recall_native/{name}"] = float(rec[:, : cfg.train.max_turns].mean())
                m[f"gar_spearman/{name}"] = _spearman(np.arange(ep.n_turns), gar_t)
                for t, g in enumerate(gar_t):
                    m[f"gar/{name}/turn{t}"] = float(g)
                # (iii)-(v) the window closure W: recall by aligned turn, GAR, probes
                # the windowed variants already run with the window W (and their sinks)
                closure = W if arch.kind == "full" else None
                logits, masses, hs = _forward(model, arch, ep, device, window=closure, hidden=True)
                rec_w, _ = _answers(logits, ep)
                gar_w = masses.mean(2).cpu().numpy()  # (L, B, T) head-mean goal mass
                after = np.arange(ep.n_turns)[None, :] >= t_star[:, None]
                b = np.arange(ep.tokens.shape[0])[:, None]
                gar_after = float(gar_w[:, b, ep.answer_pos][:, after].mean()) if after.any() else 0.0
                post_recall = float(rec_w[after].mean()) if after.any() else 0.0
                feats = [
                    h[b, torch.as_tensor(ep.query_pos)].reshape(-1, h.shape[-1]).cpu().numpy() for h in hs
                ]
                labels = rec_w.reshape(-1)
                aucs = _probe_aucs(feats, labels, cfg.probe_folds, seed)
                m[f"post_recall/{name}"] = post_recall
                m[f"post_gar/{name}"] = gar_after
                m[f"probe_auc_best/{name}"] = float(aucs[1:].max())
                m[f"probe_auc_layer0/{name}"] = float(aucs[0])
                m[f"emergence_layer/{name}"] = float(emergence_layer(aucs, cfg.emergence_threshold))
                for li, a in enumerate(aucs):
                    m[f"probe_auc/{name}/layer{li}"] = float(a)
                # goal content: the persona closer decoded after the crossover (the residual channel)
                closers = np.broadcast_to(ep.closer[:, None], after.shape)[after]
                m[f"persona_probe_auc_post/{name}"] = _content_auc(
                    feats, after, closers, cfg.probe_folds, seed
                )
                per_variant.append((arch, post_recall, gar_after, float(aucs[1:].max())))
                if vi == cfg.reference:
                    m.update(self._closures(model, arch, ep, ep_press, rec_w, t_star, device, cfg))
                    m["probe_auc_embedding"] = float(aucs[0])
                del model
        m.update(_across(per_variant, m, cfg))
        return m

    def _closures(self, model, arch, ep, ep_press, rec_w, t_star, device, cfg) -> dict[str, float]:
        t0 = cfg.force_from_turn
        turns = slice(t0, t0 + cfg.force_turns)
        logits, _, _ = _forward(model, arch, ep, device)
        rec_open, viol_open = _answers(logits, ep)
        logits, masses, _ = _forward(model, arch, ep, device, force_from=ep.turn_start[:, t0])
        rec_f, viol_f = _answers(logits, ep)
        gar_f = _gar_turns(masses, ep)
        logits, _, _ = _forward(model, arch, ep_press, device)
        _, viol_p = _answers(logits, ep_press)
        out = {
            "recall_open": float(rec_open[:, turns].mean()),
            "recall_forced": float(rec_f[:, turns].mean()),
            "recall_forced_before_t0": float(rec_f[:, :t0].mean()),
            "persona_violation_open": float(viol_open[:, turns].mean()),
            "persona_violation_forced": float(viol_f[:, turns].mean()),
            "persona_violation_pressure": float(viol_p[:, turns].mean()),
            "gar_forced_after_t0": float(gar_f[turns].mean()),
        }
        # timing: recall aligned on each episode's predicted crossover turn
        rel = np.arange(ep.n_turns)[None, :] - t_star[:, None]
        pre = rec_w[rel <= -2]
        pre_recall = float(pre.mean()) if pre.size else 1.0
        offsets = np.arange(-3, 4)
        curve = [float(rec_w[rel == r].mean()) if (rel == r).any() else np.nan for r in offsets]
        drop = next((int(r) for r, c in zip(offsets, curve) if np.isfinite(c) and c < 0.5 * pre_recall), 4)
        out["crossover_abs_offset"] = float(abs(drop))
        out["crossover_pre_recall"] = pre_recall
        out["crossover_mean_turn"] = float(t_star.mean())
        for r, c in zip(offsets, curve):
            out[f"aligned_recall/r{r:+d}"] = float(c) if np.isfinite(c) else -1.0
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)
        rows = [
            "| variant | native recall (train lengths) | post-crossover recall | post GAR | best probe AUC | "
            "embedding AUC | emergence layer | persona probe AUC post | GAR Spearman |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]

        def mean(key):
            return float(np.mean([r[key] for r in per_seed]))

        for arch in cfg.variants:
            n = arch.name
            rows.append(
                f"| {n} | {mean(f'recall_native/{n}'):.3f} | {mean(f'post_recall/{n}'):.3f} | "
                f"{mean(f'post_gar/{n}'):.4f} | {mean(f'probe_auc_best/{n}'):.3f} | "
                f"{mean(f'probe_auc_layer0/{n}'):.3f} | {mean(f'emergence_layer/{n}'):.1f} | "
                f"{mean(f'persona_probe_auc_post/{n}'):.3f} | {mean(f'gar_spearman/{n}'):.2f} |"
            )
        ref = ["| quantity (reference model) | mean over seeds |", "| --- | --- |"]
        for k in (
            "recall_open",
            "recall_forced",
            "recall_forced_before_t0",
            "persona_violation_open",
            "persona_violation_forced",
            "persona_violation_pressure",
            "gar_forced_after_t0",
            "crossover_pre_recall",
            "crossover_mean_turn",
        ):
            ref.append(f"| {k} | {mean(k):.3f} |")
        return {
            "Variants (means over seeds)": "\n".join(rows),
            "Closures on the reference model": "\n".join(ref),
        }

    def figures(self, report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        cfg = self.config(report.quick)
        per_seed = report.per_seed
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        ax = axes[0]
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, arch in enumerate(cfg.variants):
            n = arch.name
            turns = np.arange(cfg.eval_turns)
            vals = np.array([[r[f"gar/{n}/turn{t}"] for t in turns] for r in per_seed])
            # the windowed variants both reach GAR 0 after the window: dashed/dotted lines with their
            # own markers, drawn above the full-attention ones, keep each of them visible
            ls, mk = {"full": ("-", "o"), "window": ("--", "s"), "sinks": (":", "^")}[arch.kind]
            for row in vals:
                ax.plot(turns, row, color=colors[i % len(colors)], alpha=0.25, lw=0.8, ls=ls)
            ax.plot(
                turns,
                vals.mean(0),
                color=colors[i % len(colors)],
                lw=2,
                ls=ls,
                marker=mk,
                ms=4 if arch.kind == "full" else 6,
                mfc="none" if arch.kind == "sinks" else None,
                zorder=3 if arch.kind != "full" else 2,
                label=n,
            )
        ax.axvline(
            cfg.train.max_turns - 0.5, color="gray", ls=":", lw=1, label="end of the longest training chat"
        )
        ax.set_xticks(turns)
        ax.set_xlabel("turn index")
        ax.set_ylabel("GAR (attention share on goal tokens)")
        ax.set_title("GAR by turn (thin: seeds, thick: mean)")
        ax.legend(fontsize=8, loc="upper right")
        ax = axes[1]
        offs = np.arange(-3, 4)
        # -1 marks an offset that no episode of the seed reached: not drawn
        aligned = np.array([[r[f"aligned_recall/r{o:+d}"] for o in offs] for r in per_seed], dtype=float)
        aligned[aligned < 0] = np.nan
        for vals in aligned:
            ax.plot(offs, vals, color=colors[0], alpha=0.3, lw=0.8, marker=".", label="_seed")
        with warnings.catch_warnings():  # an offset no seed reached stays NaN (not drawn)
            warnings.simplefilter("ignore", RuntimeWarning)
            mean_vals = np.nanmean(aligned, axis=0)
        ax.plot(offs, mean_vals, color=colors[0], lw=2, marker="o", label="window closure (thin: seeds)")
        ax.axvline(0, color="k", ls="--", lw=1, label="predicted crossover turn")
        ax.axhline(1 / cfg.task.vocab.n_values, color="gray", ls=":", lw=1, label="chance")
        ax.set_xticks(offs)
        ax.set_xlim(offs[0] - 0.3, offs[-1] + 0.3)
        ax.set_xlabel("turn relative to predicted crossover")
        ax.set_ylabel("recall (fraction correct)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(
            f"Reference model ({cfg.variants[cfg.reference].name}) under a {cfg.closure_window}-token window"
        )
        ax.legend(fontsize=8, loc="upper right")
        fig.tight_layout()
        name = "goal_accessibility_gar_and_crossover.png"
        fig.savefig(folder / name, dpi=120)
        plt.close(fig)
        return [name]


def _with_pressure(task: GoalRecallTask, ep: Episodes, rng) -> Episodes:
    """The same episodes regenerated with an adversarial request in every turn (a new draw with pressure)."""
    return task.sample(ep.tokens.shape[0], ep.n_turns, rng, pressure=1.0)


def _probe_aucs(feats, labels, folds: int, seed: int) -> np.ndarray:
    y = np.asarray(labels).astype(np.int64)
    counts = np.bincount(y, minlength=2)
    if counts.min() < folds:  # one outcome almost never happens: nothing to decode
        return np.full(len(feats), 0.5)
    return layer_probe_aucs(feats, y, folds=folds, seed=seed)


def _content_auc(feats, after, closers, folds: int, seed: int) -> float:
    if not after.any():
        return 0.5
    X = feats[-1].reshape(after.shape[0], after.shape[1], -1)[after]
    _, counts = np.unique(closers, return_counts=True)
    if counts.size < 2 or counts.min() < folds:
        return 0.5
    return probe_auc(X, closers, folds=folds, seed=seed)


def _across(per_variant, m: dict[str, float], cfg: GoalAccessibilityConfig) -> dict[str, float]:
    out = {}
    for kind in ("full", "window", "sinks"):
        vals = [m[f"gar_spearman/{a.name}"] for a, *_ in per_variant if a.kind == kind]
        out[f"gar_spearman_worst_{kind}"] = float(max(vals)) if vals else 0.0
    out["probe_auc_best_min"] = float(min(p[3] for p in per_variant))
    depth2 = {a.kind: m[f"emergence_layer/{a.name}"] for a, *_ in per_variant if a.layers == 2}
    out["emergence_layer_range"] = float(max(depth2.values()) - min(depth2.values())) if depth2 else 0.0
    rec = [p[1] for p in per_variant]
    auc = [p[3] for p in per_variant]
    out["separability_spearman"] = _spearman(auc, rec)
    survives = [i for i, p in enumerate(per_variant) if p[1] >= 0.5 and p[2] < cfg.gar_zero]
    fails = [i for i, p in enumerate(per_variant) if p[1] < 0.5 and p[3] >= 0.8]
    out["dissociation_observed"] = float(any(i != j for i in survives for j in fails))
    out["n_survive_at_gar0"] = float(len(survives))
    out["n_fail_despite_auc"] = float(len(fails))
    return out
