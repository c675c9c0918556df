"""Headline reproduction of PM-LoRA (no public text): constant adapter size, less forgetting.

Per seed: a stream of permuted-digits tasks (:mod:`paperworks.pm_lora.data`) and an MLP backbone
pretrained on the plain-digits half. Four methods adapt ``fc1`` and ``fc2`` over the tasks with the
same full-batch Adam budget per task: PM-LoRA (merged rank 16, task rank 4), SeqLoRA (rank 16, the
same stored size), O-LoRA (rank 4 per task, orthogonality penalty 0.5) and per-task LoRA (rank 4
per task, oracle task id). Metrics: average accuracy after the last task, backward transfer, stored
adapter parameters after each task. Scaling: stored parameters after 5, 10 and 20 tasks of each
growing or constant method, measured on the real objects (task updates filled with random factors,
since only the structure matters for the count).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from paperworks.core import Claim, Experiment, Paper, Progress, Report, optional_pyplot, torch_threads

from .adapter import ContinualAdapter, PMLoRA, PMLoRAConfig
from .baselines import OLoRA, PerTaskLoRA, SeqLoRA
from .data import make_stream
from .training import MLP, TrainConfig, average_accuracy, backward_transfer, pretrain_backbone, run_stream

__all__ = ["PMLoRAExperiment", "make_method"]

TARGETS = ("fc1", "fc2")
RANK, TASK_RANK, OLORA_LAMBDA = 16, 4, 0.5
METHODS = ("pm_lora", "seq_lora", "o_lora", "per_task_lora")
LABELS = {
    "pm_lora": "PM-LoRA",
    "seq_lora": "SeqLoRA",
    "o_lora": "O-LoRA",
    "per_task_lora": "per-task LoRA (oracle id)",
}
SCALING_TASKS = (5, 10, 20)
MATCH_TOL = 0.01


def make_method(name: str, model: nn.Module) -> ContinualAdapter:
    """The method ``name`` (one of ``METHODS``) wrapped around ``model`` with the experiment's ranks."""
    if name == "pm_lora":
        return PMLoRA(model, PMLoRAConfig(rank=RANK, task_rank=TASK_RANK, target_modules=TARGETS))
    if name == "seq_lora":
        return SeqLoRA(model, TARGETS, rank=RANK)
    if name == "o_lora":
        return OLoRA(model, TARGETS, task_rank=TASK_RANK, lam=OLORA_LAMBDA)
    if name == "per_task_lora":
        return PerTaskLoRA(model, TARGETS, task_rank=TASK_RANK)
    raise ValueError(f"name: expected one of {METHODS}, got {name!r}")


def stored_params_after(name: str, n_tasks: int, seed: int) -> int:
    """Stored adapter parameters of method ``name`` after ``n_tasks`` tasks (random task factors)."""
    gen = torch.Generator().manual_seed(seed)
    adapter = make_method(name, MLP())
    for _ in range(n_tasks):
        adapter.begin_task()
        with torch.no_grad():
            for p in adapter.trainable_parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
        adapter.end_task()
    return adapter.stored_parameters()


class PMLoRAExperiment(Experiment):
    slug = "pm-lora"
    paper = Paper(
        "PM-LoRA: Progressive Merging of Low-Rank Adapters for continual learning",
        arxiv=None,
        note="no public text; reconstructed from the abstract, O-LoRA and SVD merging of LoRA",
    )
    default_seeds = 5
    quick_seeds = 1
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "constant_params",
            "PM-LoRA maintains constant parameter overhead throughout continual training",
            "pm_lora_params_ratio_20_over_5",
            "<=",
            1.0,
            note="stored adapter parameters after 20 tasks / after 5 tasks",
        ),
        Claim(
            "olora_grows",
            "task-specific adapters (O-LoRA) grow linearly in parameters with the tasks",
            "o_lora_params_ratio_20_over_5",
            ">=",
            4.0,
            note="stored adapter parameters after 20 tasks / after 5 tasks; linear growth gives 4",
        ),
        Claim(
            "less_forgetting",
            "PM-LoRA mitigates catastrophic forgetting (forgets less than sequential LoRA)",
            "pm_minus_seq_bwt",
            ">",
            0.0,
            note="backward transfer PM-LoRA - SeqLoRA after the last task (higher = less forgetting)",
        ),
        Claim(
            "acc_vs_olora",
            "PM-LoRA matches or beats O-LoRA on average accuracy (paper: state of the art)",
            "pm_minus_olora_acc",
            ">=",
            -MATCH_TOL,
            note=f"average accuracy after the last task, PM-LoRA - O-LoRA; 'matches' = within {MATCH_TOL}",
        ),
    )

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        # tiny matrices: one intra-op thread is ~10x faster than two on a shared 2-core machine
        with torch_threads(1):
            return self._run_seed(seed, quick=quick, progress=progress)

    def _run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        n_tasks = 3 if quick else 10
        cfg = TrainConfig(steps=50, pretrain_steps=100) if quick else TrainConfig()
        stream = make_stream(n_tasks, seed)
        backbone = pretrain_backbone(stream.x_pretrain, stream.y_pretrain, cfg)
        out: dict[str, float] = {}
        with torch.inference_mode():
            out["backbone_acc"] = float(
                np.mean(
                    [(backbone(t.x_test).argmax(1) == t.y_test).float().mean().item() for t in stream.tasks]
                )
            )
        for name in progress.track(METHODS, desc=f"methods (seed {seed})"):
            torch.manual_seed(seed)
            res = run_stream(backbone, stream, lambda m, n=name: make_method(n, m), cfg)
            out[f"{name}_acc"] = average_accuracy(res.R)
            out[f"{name}_bwt"] = backward_transfer(res.R)
            out[f"{name}_params_last"] = float(res.params[-1])
            out[f"{name}_train_s_per_task"] = float(np.median(res.train_s))
            out[f"{name}_end_task_s"] = float(np.median(res.merge_s))
            if name == "pm_lora":
                out["pm_lora_orth_error"] = res.orth_error
        out["pm_minus_seq_bwt"] = out["pm_lora_bwt"] - out["seq_lora_bwt"]
        out["pm_minus_olora_acc"] = out["pm_lora_acc"] - out["o_lora_acc"]
        for name in ("pm_lora", "o_lora", "per_task_lora"):
            counts = {n: stored_params_after(name, n, seed) for n in SCALING_TASKS}
            for n, c in counts.items():
                out[f"{name}_params_at_{n}"] = float(c)
            out[f"{name}_params_ratio_20_over_5"] = counts[20] / counts[5]
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        def cell(key: str, fmt: str = ".3f") -> str:
            v = np.array([m[key] for m in per_seed])
            return f"{v.mean():{fmt}}" if len(v) == 1 else f"{v.mean():{fmt}} ± {v.std(ddof=1):{fmt}}"

        n_tasks = 3 if quick else 10
        rows = [
            f"| method | avg accuracy after task {n_tasks} | backward transfer | stored adapter params "
            "| train s / task | end-of-task s |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| backbone, no adapter | {cell('backbone_acc')} | – | 0 | – | – |",
        ]
        for name in METHODS:
            rows.append(
                f"| {LABELS[name]} | {cell(name + '_acc')} | {cell(name + '_bwt')} | "
                f"{cell(name + '_params_last', '.0f')} | {cell(name + '_train_s_per_task', '.3f')} | "
                f"{cell(name + '_end_task_s', '.4f')} |"
            )
        scal = [
            "| method | " + " | ".join(f"after {n} tasks" for n in SCALING_TASKS) + " | ratio 20 / 5 |",
            "| --- |" + " --- |" * (len(SCALING_TASKS) + 1),
        ]
        scal.append(
            f"| SeqLoRA (rank {RANK}) | "
            + " | ".join(f"{cell('seq_lora_params_last', '.0f')}" for _ in SCALING_TASKS)
            + " | 1 |"
        )
        for name in ("pm_lora", "o_lora", "per_task_lora"):
            scal.append(
                f"| {LABELS[name]} | "
                + " | ".join(cell(f"{name}_params_at_{n}", ".0f") for n in SCALING_TASKS)
                + f" | {cell(name + '_params_ratio_20_over_5', '.2f')} |"
            )
        return {
            "Continual stream: accuracy, forgetting, size": "\n".join(rows),
            "Stored adapter parameters vs number of tasks": "\n".join(scal),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for name in ("pm_lora", "o_lora", "per_task_lora"):
            ys = [report.summary[f"{name}_params_at_{n}"].mean for n in SCALING_TASKS]
            ax.plot(SCALING_TASKS, ys, marker="o", label=LABELS[name])
        ax.set_xlabel("tasks")
        ax.set_ylabel("stored adapter parameters")
        ax.legend()
        fig.tight_layout()
        fig.savefig(folder / "params_vs_tasks.png", dpi=120)
        plt.close(fig)
        return ["params_vs_tasks.png"]
