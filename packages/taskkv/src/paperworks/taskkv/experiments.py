"""Headline reproduction: success rate at a 20% KV budget on generated long-horizon agent tasks.

Per seed: generate trajectories (:mod:`.tasks`), train a tiny ``LlamaForCausalLM`` on them with the full
context (:mod:`.toymodel`), label 500 other trajectories with signed utilities (:mod:`.utility`), fit the
residual scorer and the regime classifier on them, then compare retention policies at a 20% budget on
held-out trajectories: full cache, TaskKV, its ablations, kvpress's SnapKVPress, ObservedAttentionPress
(accumulated attention, H2O's heavy-hitter score), StreamingLLMPress (sink + recent) and recency only.
Success = the argmax next action equals the correct one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from paperworks.core import Claim, Experiment, Paper, Progress, choose_device, optional_pyplot, torch_threads

from .policy import TaskKV, TaskKVConfig
from .retention import contiguous_scores, gather_tokens, n_keep_for, select_tokens
from .rope import content_keys
from .scorer import RegimeClassifier, ResidualStepScorer, regime_auc, score_entropy
from .stream import TaskKVStream
from .tasks import AgentTaskConfig, AgentTasks, Vocab, generate_tasks
from .toymodel import tiny_llama, train_agent_model
from .utility import answer_logprob, cache_layers, leave_one_step_out, query_logits, step_utility_labels

__all__ = ["POLICIES", "QUICK", "TaskKVExperiment", "TaskKVExperimentConfig"]

POLICIES = (
    "full",
    "taskkv",
    "taskkv_stream",
    "taskkv_no_classifier",
    "taskkv_priors_only",
    "taskkv_oracle_labels",
    "taskkv_contribution_labels",
    "oracle_switch",
    "snapkv",
    "h2o",
    "streamingllm",
    "recency",
    "recency_pinned",
)
LABELS = {
    "full": "full cache",
    "taskkv": "TaskKV",
    "taskkv_stream": "TaskKV, streaming (re-selects at every step boundary)",
    "taskkv_no_classifier": "TaskKV without regime classifier",
    "taskkv_priors_only": "TaskKV priors only (no residual)",
    "taskkv_oracle_labels": "diagnostic: residual on exact leave-one-step-out labels (no classifier)",
    "taskkv_contribution_labels": "diagnostic: residual on gradient-x-contribution labels (no classifier)",
    "oracle_switch": "diagnostic: TaskKV with an oracle regime switch (falls back exactly on dense tasks)",
    "snapkv": "SnapKV (kvpress SnapKVPress)",
    "h2o": "accumulated attention / H2O (kvpress ObservedAttentionPress)",
    "streamingllm": "StreamingLLM sink+recent (kvpress StreamingLLMPress)",
    "recency": "recency only",
    "recency_pinned": "recency + pinned instruction (the fallback alone)",
}
HEURISTICS = ("h2o", "streamingllm", "recency", "recency_pinned")
_TASKS = AgentTaskConfig(
    n_steps=16,
    n_errors=(2, 5),
    dense_fraction=0.4,
    vocab=Vocab(n_objects=6, n_locations=6, n_fillers=8),
)


@dataclass(frozen=True)
class TaskKVExperimentConfig:
    """Settings of one reproduction run; the defaults are the full run's, :data:`QUICK` the quick one's.

    ``tasks``: the trajectory generator; ``n_train`` trajectories train the tiny Llama (``hidden``,
    ``layers``, ``heads``) for ``train_steps`` steps of ``train_batch`` at ``train_lr``; ``n_label``
    other trajectories are labelled to fit the residual scorer and the regime classifier; ``n_test``
    held-out ones are answered at the KV ``budget``; ``n_loo`` of them also get exact
    leave-one-step-out labels (the label diagnostic). ``pin_instruction``: whether TaskKV pins the
    instruction step (the headline run does not: TaskKV must keep it through its scorer);
    ``fallback_pin_instruction``: whether TaskKV's contiguous fallback keeps the instruction;
    ``n_sink``: StreamingLLM's sink tokens.
    """

    tasks: AgentTaskConfig = _TASKS
    n_train: int = 6000
    train_steps: int = 900
    n_label: int = 500
    n_test: int = 600
    n_loo: int = 16
    budget: float = 0.2
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    train_batch: int = 32
    train_lr: float = 5e-3
    pin_instruction: bool = False
    fallback_pin_instruction: bool = True
    n_sink: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.tasks, AgentTaskConfig):
            raise ValueError(f"tasks: expected an AgentTaskConfig, got {type(self.tasks).__name__}")
        for k in ("n_train", "train_steps", "n_label", "n_test", "n_loo", "hidden", "layers", "heads"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k}: expected a positive int, got {v!r}")
        if self.n_loo > self.n_test:
            raise ValueError(f"n_loo: expected at most n_test={self.n_test}, got {self.n_loo}")
        for k in ("train_batch", "n_sink"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k}: expected a positive int, got {v!r}")
        if not 0.0 < self.budget < 1.0:
            raise ValueError(f"budget: expected a fraction in (0, 1), got {self.budget!r}")
        if not self.train_lr > 0:
            raise ValueError(f"train_lr: expected > 0, got {self.train_lr!r}")


#: The quick run (for the tests; the model trains only 60 steps, so its claims mean nothing).
QUICK = TaskKVExperimentConfig(n_train=1000, train_steps=60, n_label=100, n_test=100, n_loo=6)


def _prefill(model, context: torch.Tensor, window: int):
    """Full-cache prefill; returns (per-layer (keys, values), per-layer window attention (b, h, w, T))."""
    with torch.no_grad():
        out = model(input_ids=context, use_cache=True, output_attentions=True)
    return cache_layers(out.past_key_values), [a[:, :, -window:, :] for a in out.attentions]


def _evaluate(model, layers, tasks: AgentTasks, context_len: int) -> tuple[np.ndarray, np.ndarray]:
    dev = layers[0][0].device
    q = torch.as_tensor(tasks.query, device=dev)
    ans = torch.as_tensor(tasks.answer, device=dev)
    with torch.no_grad():
        logits = query_logits(model, layers, q, context_len)
    return (logits[:, -1].argmax(-1) == ans).cpu().numpy(), answer_logprob(logits, ans).cpu().numpy()


def _kept_layers(layers, kept):
    return [(gather_tokens(k, kept), gather_tokens(v, kept)) for k, v in layers]


def _press_layers(model, press, context: torch.Tensor):
    with torch.no_grad(), press(model):
        cache = model(input_ids=context, use_cache=True).past_key_values
    return [(k.clone(), v.clone()) for k, v in cache_layers(cache)]


def _stream(model, policy: TaskKV, tasks: AgentTasks, capacity: int, dev) -> tuple[np.ndarray, np.ndarray]:
    """Answer ``tasks`` after streaming their steps through a cache of ``capacity`` tokens."""
    ctx = torch.as_tensor(tasks.context, device=dev)
    stream = TaskKVStream(model, policy, capacity)
    off = tasks.offsets
    for s in range(len(off) - 1):
        stream.append(ctx[:, off[s] : off[s + 1]])
    logits = stream.query(torch.as_tensor(tasks.query, device=dev))
    ans = torch.as_tensor(tasks.answer, device=dev)
    return (logits[:, -1].argmax(-1) == ans).cpu().numpy(), stream.fallback


class TaskKVExperiment(Experiment):
    slug = "taskkv"
    paper = Paper(
        "TaskKV: step-level KV-cache retention for long-horizon agents",
        None,
        note="no public text; reconstructed from the abstract, SnapKV, H2O, StreamingLLM and kvpress",
    )
    claims = (
        Claim(
            "retains_full_cache",
            "TaskKV preserves ~87-89% of the full-cache success rate at a 20% KV budget",
            "taskkv_retention_of_full",
            ">=",
            0.87,
            note="paired: per seed, SR(TaskKV) / SR(full cache) on the same held-out trajectories and model",
            paper_value="0.87-0.89",
            paired=True,
        ),
        Claim(
            "beats_snapkv",
            "TaskKV improves over SnapKV by 5.0-7.9 SR points at a 20% budget",
            "gap_vs_snapkv_points",
            ">=",
            5.0,
            note="paired: per seed, 100 x (SR(TaskKV) - SR(kvpress SnapKVPress)) on the same trajectories",
            paper_value="5.0-7.9",
            paired=True,
        ),
        Claim(
            "beats_heuristic",
            "TaskKV improves over a strong heuristic by 2.9-7.3 SR points "
            "(best of H2O, StreamingLLM, recency, recency + pinned instruction)",
            "gap_vs_best_heuristic_points",
            ">=",
            2.9,
            note="paired: per seed, 100 x (SR(TaskKV) - the best of H2O, StreamingLLM, recency and recency "
            "with the instruction pinned on that seed); the last is TaskKV's own fallback, so the set holds "
            "the strongest simple heuristic (issue 35)",
            paper_value="2.9-7.3",
            paired=True,
        ),
        Claim(
            "dense_gain_from_fallback",
            "on dense tasks the gain comes from detecting when utility pruning should be disabled "
            "(TaskKV minus TaskKV without the regime classifier, dense tasks)",
            "dense_gain_from_classifier_points",
            ">",
            0.0,
            note="paired: per seed, 100 x (SR(TaskKV) - SR(TaskKV without the regime classifier)) on the "
            "dense tasks; the paper gives no number",
            paired=True,
        ),
        Claim(
            "classifier_detects_dense",
            "the regime classifier falls back more often on dense tasks than on instruction-decisive ones",
            "fallback_rate_dense_minus_sparse",
            ">",
            0.0,
            note="mechanism check, not a claim the paper states: per seed, TaskKV's fallback rate on dense "
            "minus instruction tasks (a within-seed contrast of two task types, not of two methods); the "
            "classifier reads the entropy of the raw window-attention mass over the droppable steps and "
            "its threshold is fit for success on the labelled trajectories (issue 35)",
            kind="mechanism",
        ),
        Claim(
            "regime_signal_separates",
            "the entropy signal separates dense from instruction-decisive tasks "
            "(held-out AUC of the regime classifier's input)",
            "regime_auc",
            ">",
            0.5,
            note="mechanism check, not a claim the paper states: per seed, the ROC AUC of the regime signal "
            "for dense vs instruction tasks on the held-out trajectories (0.5: chance); the z-scored score "
            "entropy of the previous version is reported beside it (regime_auc_score_entropy)",
            kind="mechanism",
        ),
    )
    default_seeds = 5  # about 40-110 s per seed on the 2-core machine, with its load
    quick_seeds: ClassVar[int | None] = 1

    def config(self, quick: bool) -> TaskKVExperimentConfig:
        return QUICK if quick else TaskKVExperimentConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        from kvpress import ObservedAttentionPress, SnapKVPress, StreamingLLMPress

        rc = self.config(quick)
        dev = torch.device(choose_device())
        rng = np.random.default_rng(seed)
        cfg = rc.tasks
        train = generate_tasks(rc.n_train, cfg, rng)
        label_set = generate_tasks(rc.n_label, cfg, rng)
        test = generate_tasks(rc.n_test, cfg, rng)
        T = cfg.context_len
        n_keep = n_keep_for(rc.budget, T)
        off = cfg.offsets
        n_steps = cfg.n_steps
        pcfg = TaskKVConfig(
            budget=rc.budget,
            window=cfg.step_len,
            instruction_step=1,
            pin_instruction=rc.pin_instruction,
            fallback_pin_instruction=rc.fallback_pin_instruction,
            regime_signal="attention",
        )
        pins = pcfg.pinned(n_steps)
        out: dict[str, float] = {"device_is_cuda": float(dev.type == "cuda")}
        tensor = lambda x: torch.as_tensor(x, device=dev)  # noqa: E731
        with torch_threads(1):
            model = tiny_llama(cfg.vocab.size, hidden=rc.hidden, layers=rc.layers, heads=rc.heads, seed=seed)
            model.to(dev)
            t0 = time.perf_counter()
            losses = train_agent_model(
                model,
                train,
                steps=rc.train_steps,
                batch=rc.train_batch,
                lr=rc.train_lr,
                rng=rng,
                track=progress.track,
            )
            out["train_seconds"] = time.perf_counter() - t0
            out["train_final_loss"] = float(np.mean(losses[-20:]))

            def prefill_features(tasks: AgentTasks):
                layers, watt = _prefill(model, tensor(tasks.context), cfg.step_len)
                ck = content_keys(model, [k for k, _ in layers])  # intent prior on content, not position
                return layers, policy.features(ck, watt, off)  # (L, n, S, 5)

            # 1. signed utility labels on the labelling set, features, residual scorer
            progress.log("utility labels + scorer fit")
            largs = (tensor(label_set.context), tensor(label_set.query), tensor(label_set.answer), off)
            labels = step_utility_labels(model, *largs)
            policy = TaskKV(pcfg)
            layers_l, feats = prefill_features(label_set)
            n_layers = feats.shape[0]
            ex = (feats.reshape(-1, n_steps, feats.shape[-1]), pins)

            def fit_scorer(lab: torch.Tensor) -> ResidualStepScorer:
                return ResidualStepScorer(seed=seed).fit(ex[0], lab.repeat(n_layers, 1), exclude_steps=ex[1])

            scorer = fit_scorer(labels)
            # diagnostics: the same scorer fit on exact leave-one-step-out labels (oracle labels) and on
            # the literal gradient-x-contribution labels
            oracle = fit_scorer(leave_one_step_out(model, *largs))
            contrib = fit_scorer(step_utility_labels(model, *largs, gate="contribution"))
            out["oracle_scorer_prior_loss"] = oracle.prior_loss_
            out["oracle_scorer_train_loss"] = oracle.train_loss_
            out["scorer_prior_loss"] = scorer.prior_loss_
            out["scorer_train_loss"] = scorer.train_loss_

            # 2. regime classifier: threshold fit for success, scorer route vs the fallback route
            no_cls = TaskKV(TaskKVConfig(**{**pcfg.__dict__, "use_classifier": False}), scorer)
            scores, _, sig = no_cls.decide(feats)
            mask_l = torch.ones(len(label_set), n_steps, dtype=torch.bool, device=dev)
            kept_s = select_tokens(scores, off, n_keep, pins)
            kept_f = select_tokens(no_cls.fallback_scores(mask_l), off, n_keep, pins)
            ok_s, lp_s = _evaluate(model, _kept_layers(layers_l, kept_s), label_set, T)
            ok_f, lp_f = _evaluate(model, _kept_layers(layers_l, kept_f), label_set, T)
            classifier = RegimeClassifier().fit(
                sig.cpu().numpy(), ok_f.astype(float) - ok_s.astype(float), lp_f - lp_s
            )
            out["classifier_threshold"] = classifier.threshold_
            out["classifier_train_gain_points"] = 100 * classifier.train_gain_
            out["classifier_train_fallback_rate"] = classifier.train_fallback_rate_

            # 3. first-order label vs exact leave-one-step-out on a few held-out trajectories
            sub = test.subset(np.arange(rc.n_loo))
            args = (tensor(sub.context), tensor(sub.query), tensor(sub.answer), off)
            d = leave_one_step_out(model, *args).cpu().numpy()
            big = np.abs(d) >= np.median(np.abs(d))  # the steps whose removal matters most
            rank_d = np.argsort(np.argsort(d.ravel()))
            for gate, suffix in (("removal", ""), ("contribution", "_contribution")):
                u = step_utility_labels(model, *args, gate=gate).cpu().numpy()
                out[f"label_sign_agreement{suffix}"] = float((np.sign(u[big]) == np.sign(d[big])).mean())
                out[f"label_loo_corr{suffix}"] = float(np.corrcoef(u.ravel(), d.ravel())[0, 1])
                rank_u = np.argsort(np.argsort(u.ravel()))
                out[f"label_loo_rank_corr{suffix}"] = float(np.corrcoef(rank_u, rank_d)[0, 1])

            # 4. policies on the test set
            progress.log("evaluate retention policies at a 20% budget")
            ctx = tensor(test.context)
            layers, feats_t = prefill_features(test)
            dense = test.dense
            success: dict[str, np.ndarray] = {}
            success["full"], _ = _evaluate(model, layers, test, T)
            fallback = {}
            taskkv = TaskKV(pcfg, scorer, classifier)
            for name, pol in {
                "taskkv": taskkv,
                "taskkv_no_classifier": no_cls,
                "taskkv_priors_only": TaskKV(
                    TaskKVConfig(**{**pcfg.__dict__, "use_residual": False}), scorer, classifier
                ),
                "taskkv_oracle_labels": TaskKV(no_cls.config, oracle),
                "taskkv_contribution_labels": TaskKV(no_cls.config, contrib),
            }.items():
                sc, fb, signal = pol.decide(feats_t)
                fallback[name] = fb
                if name == "taskkv":
                    sc_scorer = no_cls.decide(feats_t)[0]
                    out["regime_auc"] = regime_auc(signal, dense)
                    mask_t = torch.ones(len(test), n_steps, dtype=torch.bool, device=dev)
                    cand = mask_t.clone()
                    cand[:, list(pins)] = False
                    out["regime_auc_score_entropy"] = regime_auc(score_entropy(sc_scorer, cand), dense)
                    oracle_sc = torch.where(
                        tensor(dense)[:, None], pol.fallback_scores(mask_t), sc_scorer
                    )  # the regime switch an oracle would make: fall back exactly on dense tasks
                    success["oracle_switch"], _ = _evaluate(
                        model, _kept_layers(layers, select_tokens(oracle_sc, off, n_keep, pins)), test, T
                    )
                success[name], _ = _evaluate(
                    model, _kept_layers(layers, select_tokens(sc, off, n_keep, pins)), test, T
                )
            progress.log("streaming TaskKV (re-selects at every step boundary)")
            success["taskkv_stream"], fallback["taskkv_stream"] = _stream(model, taskkv, test, n_keep, dev)
            rec = contiguous_scores(n_steps, len(test)).to(dev)
            success["recency"], _ = _evaluate(
                model, _kept_layers(layers, select_tokens(rec, off, n_keep)), test, T
            )
            pin_both = (pcfg.instruction_step, n_steps - 1)
            success["recency_pinned"], _ = _evaluate(
                model, _kept_layers(layers, select_tokens(rec, off, n_keep, pin_both)), test, T
            )
            _ratio = 1.0 - n_keep / T - 1e-6  # kvpress keeps int(T * (1 - ratio)) = n_keep tokens
            presses = {
                "snapkv": SnapKVPress(compression_ratio=_ratio, window_size=cfg.step_len),
                "h2o": ObservedAttentionPress(compression_ratio=_ratio),
                "streamingllm": StreamingLLMPress(compression_ratio=_ratio, n_sink=rc.n_sink),
            }
            for name, press in presses.items():
                pl = _press_layers(model, press, ctx)
                if pl[0][0].shape[2] != n_keep:
                    raise RuntimeError(f"{name}: kvpress kept {pl[0][0].shape[2]} tokens, expected {n_keep}")
                success[name], _ = _evaluate(model, pl, test, T)

        for name in POLICIES:
            s = success[name]
            out[f"sr_{name}"] = float(s.mean())
            out[f"sr_{name}_sparse"] = float(s[~dense].mean())
            out[f"sr_{name}_dense"] = float(s[dense].mean())
        sr = {k: out[f"sr_{k}"] for k in POLICIES}
        out["taskkv_retention_of_full"] = sr["taskkv"] / max(sr["full"], 1e-9)
        out["taskkv_stream_retention_of_full"] = sr["taskkv_stream"] / max(sr["full"], 1e-9)
        out["gap_vs_snapkv_points"] = 100 * (sr["taskkv"] - sr["snapkv"])
        out["gap_vs_best_heuristic_points"] = 100 * (sr["taskkv"] - max(sr[h] for h in HEURISTICS))
        out["dense_gain_from_classifier_points"] = 100 * (
            out["sr_taskkv_dense"] - out["sr_taskkv_no_classifier_dense"]
        )
        out["sparse_gain_from_classifier_points"] = 100 * (
            out["sr_taskkv_sparse"] - out["sr_taskkv_no_classifier_sparse"]
        )
        for name, key in (("taskkv", ""), ("taskkv_stream", "_stream")):
            fb = fallback[name]
            out[f"fallback_rate_dense{key}"] = float(fb[dense].mean())
            out[f"fallback_rate_sparse{key}"] = float(fb[~dense].mean())
        out["fallback_rate_dense_minus_sparse"] = out["fallback_rate_dense"] - out["fallback_rate_sparse"]
        out["kv_tokens_kept"] = float(n_keep)
        out["kv_tokens_full"] = float(T)
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        def cell(key: str, scale: float = 100.0) -> str:
            vals = np.array([m[key] for m in per_seed]) * scale
            return f"{vals.mean():.1f}" if len(vals) == 1 else f"{vals.mean():.1f} ± {vals.std(ddof=1):.1f}"

        rows = [
            "| policy (20% KV budget) | SR all (%) | SR instruction tasks (%) | SR dense tasks (%) |",
            "| --- | --- | --- | --- |",
        ]
        for name in POLICIES:
            rows.append(
                f"| {LABELS[name]} | {cell(f'sr_{name}')} | {cell(f'sr_{name}_sparse')} "
                f"| {cell(f'sr_{name}_dense')} |"
            )
        fb = [
            "| quantity | value |",
            "| --- | --- |",
            "| regime signal (raw attention entropy): dense-vs-instruction AUC, held out (x100) "
            f"| {cell('regime_auc')} |",
            "| previous signal (entropy of z-scored scores): same AUC (x100) "
            f"| {cell('regime_auc_score_entropy')} |",
            f"| fitted threshold (x100) | {cell('classifier_threshold')} |",
            "| labelled set: success gain of the fitted switch over never falling back (points) "
            f"| {cell('classifier_train_gain_points', 1.0)} |",
            f"| fallback rate, dense tasks (%) | {cell('fallback_rate_dense')} |",
            f"| fallback rate, instruction tasks (%) | {cell('fallback_rate_sparse')} |",
            f"| streaming: last boundary's fallback rate, dense / instruction tasks (%) "
            f"| {cell('fallback_rate_dense_stream')} / {cell('fallback_rate_sparse_stream')} |",
            "| removal-gate label: sign agreement with exact leave-one-step-out, top half (%) "
            f"| {cell('label_sign_agreement')} |",
            f"| removal-gate label: Pearson / rank correlation with exact (x100) | {cell('label_loo_corr')} "
            f"/ {cell('label_loo_rank_corr')} |",
            "| contribution-gate label: sign agreement, top half (%) "
            f"| {cell('label_sign_agreement_contribution')} |",
            "| contribution-gate label: Pearson / rank correlation with exact (x100) "
            f"| {cell('label_loo_corr_contribution')} / {cell('label_loo_rank_corr_contribution')} |",
        ]
        seeds = ["| seed | " + " | ".join(FIGURE_POLICIES) + " | TaskKV - SnapKV (points) |"]
        seeds.append("| --- " * (len(FIGURE_POLICIES) + 2) + "|")
        for i, m in enumerate(per_seed):
            vals = " | ".join(f"{100 * m[f'sr_{p}']:.1f}" for p in FIGURE_POLICIES)
            seeds.append(f"| {i} | {vals} | {m['gap_vs_snapkv_points']:+.1f} |")
        return {
            "Success rate by policy (mean ± std over seeds)": "\n".join(rows),
            "Regime classifier and labels": "\n".join(fb),
            "Success rate per seed (%; seeds in run order)": "\n".join(seeds),
        }

    def figures(self, report, folder: Path) -> list[str]:
        """The headline claim with its seed spread: success rate per policy (one point per seed, the
        mean as a bar) and the paired gaps of the comparative claims (points per seed, 95% interval)."""
        plt = optional_pyplot()
        if plt is None:
            return []
        per_seed = report.per_seed
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1.7, 1]})
        x = np.arange(len(FIGURE_POLICIES))
        jitter = np.linspace(-0.18, 0.18, max(len(per_seed), 1)) if len(per_seed) > 1 else np.zeros(1)
        for i, p in enumerate(FIGURE_POLICIES):
            vals = np.array([100 * m[f"sr_{p}"] for m in per_seed])
            ax.bar(i, vals.mean(), width=0.7, color="C0" if p.startswith("taskkv") else "0.8", zorder=1)
            ax.scatter(
                i + jitter[: len(vals)], vals, s=14, color="k", zorder=3, label="one seed" if i == 0 else None
            )
        full = np.mean([100 * m["sr_full"] for m in per_seed])
        ax.axhline(0.87 * full, color="C3", ls="--", lw=1, label="87% of full cache (claim)")
        ax.set_xticks(x, [FIGURE_LABELS[p] for p in FIGURE_POLICIES], rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("success rate at a 20% KV budget (%)")
        ax.set_ylim(0, 119)
        ax.set_yticks(range(0, 101, 20))
        ax.legend(fontsize=7, loc="upper center", ncol=2, frameon=False)
        ax.set_title("success by policy (bar: mean over seeds)", fontsize=9)
        claims = {c.claim.key: c for c in report.claims}
        for j, key in enumerate(("beats_snapkv", "beats_heuristic")):
            c = claims[key]
            vals = np.asarray(c.values)
            bx.scatter(
                j + jitter[: len(vals)], vals, s=14, color="k", zorder=3, label="one seed" if j == 0 else None
            )
            if c.lo is not None:
                bx.errorbar(
                    j + 0.3,
                    c.estimate,
                    yerr=[[c.estimate - c.lo], [c.hi - c.estimate]],
                    fmt="o",
                    color="C0",
                    capsize=4,
                    label="mean, 95% interval" if j == 0 else None,
                )
            bx.hlines(
                c.claim.threshold,
                j - 0.35,
                j + 0.45,
                color="C3",
                ls="--",
                lw=1,
                label="claim's threshold" if j == 0 else None,
            )
        bx.axhline(0, color="0.5", lw=0.6)
        bx.set_xticks([0, 1], ["TaskKV - SnapKV", "TaskKV - best\nheuristic"], fontsize=8)
        bx.set_xlim(-0.6, 1.8)
        bx.set_ylabel("paired gap (SR points)")
        bx.legend(fontsize=7, loc="best")
        bx.set_title("comparative claims, per seed", fontsize=9)
        fig.tight_layout()
        folder.mkdir(parents=True, exist_ok=True)
        name = "taskkv_success_by_policy.png"
        fig.savefig(folder / name, dpi=120)
        plt.close(fig)
        return [name]


FIGURE_POLICIES = (
    "full",
    "taskkv",
    "taskkv_stream",
    "snapkv",
    "h2o",
    "streamingllm",
    "recency",
    "recency_pinned",
)
FIGURE_LABELS = {
    "full": "full cache",
    "taskkv": "TaskKV",
    "taskkv_stream": "TaskKV streaming",
    "snapkv": "SnapKV",
    "h2o": "H2O (acc. attn)",
    "streamingllm": "StreamingLLM",
    "recency": "recency",
    "recency_pinned": "recency + instr.",
}
