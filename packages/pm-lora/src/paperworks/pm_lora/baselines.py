"""Baselines on the same backbone and budget as PM-LoRA (README "Fidelity" says how we read each).

* :class:`SeqLoRA`: one rank-``r`` LoRA trained on every task in turn, no constraint (constant size).
* :class:`OLoRA`: O-LoRA (Wang et al., 2023): a new rank-``k`` LoRA per task, earlier ones frozen and
  summed, trained with ``lambda * sum_s ||A_t A_s^T||_F^2`` pushing the new input subspace orthogonal
  to the old ones (parameters grow linearly with the tasks).
* :class:`PerTaskLoRA`: one rank-``k`` LoRA per task and the oracle task id at test time (upper
  bound, grows linearly): :meth:`PerTaskLoRA.select` picks the adapter of a task.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .adapter import ContinualAdapter

__all__ = ["OLoRA", "PerTaskLoRA", "SeqLoRA"]


def _check_rank(name: str, v: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name}: expected a positive int, got {v!r}")
    return v


class SeqLoRA(ContinualAdapter):
    """Sequential LoRA fine-tuning: a single rank-``rank`` adapter keeps training across tasks."""

    def __init__(self, model: nn.Module, target_modules: str | Sequence[str], rank: int = 16) -> None:
        super().__init__(model, target_modules, 0)
        self.rank = _check_rank("rank", rank)
        for layer in self.layers.values():
            layer.open_task(self.rank)

    def begin_task(self) -> None:
        """Nothing to do: the same adapter continues."""

    def end_task(self) -> None:
        self.tasks_seen += 1

    def stored_parameters(self) -> int:
        return sum(layer.task_A.numel() + layer.task_B.numel() for layer in self.layers.values())

    def stored_bytes(self) -> int:
        return sum(
            layer.task_A.numel() * layer.task_A.element_size()
            + layer.task_B.numel() * layer.task_B.element_size()
            for layer in self.layers.values()
        )


class OLoRA(ContinualAdapter):
    """O-LoRA: per-task rank-``task_rank`` adapters with the orthogonality penalty ``lam``."""

    def __init__(
        self, model: nn.Module, target_modules: str | Sequence[str], task_rank: int = 4, lam: float = 0.5
    ) -> None:
        super().__init__(model, target_modules, 0)
        self.task_rank = _check_rank("task_rank", task_rank)
        if not lam >= 0.0:
            raise ValueError(f"lam: expected a non-negative weight, got {lam!r}")
        self.lam = float(lam)

    def begin_task(self) -> None:
        for layer in self.layers.values():
            layer.open_task(self.task_rank)

    def end_task(self) -> None:
        for layer in self.layers.values():
            f = layer.close_task()
            if f is None:
                raise RuntimeError("end_task: no task is open; call begin_task() first")
            layer.frozen.append(f)
        self.tasks_seen += 1

    def penalty(self) -> torch.Tensor:
        """``lam * sum_layers sum_s ||A_t A_s^T||_F^2`` over the frozen adapters ``s``."""
        total = super().penalty()
        for layer in self.layers.values():
            if layer.task_A is None or not layer.frozen:
                continue
            old = torch.cat([A for _, A in layer.frozen], 0)
            total = total + (layer.task_A @ old.T).square().sum()
        return self.lam * total


class PerTaskLoRA(OLoRA):
    """One rank-``task_rank`` LoRA per task, evaluated with the oracle task id (no penalty)."""

    def __init__(self, model: nn.Module, target_modules: str | Sequence[str], task_rank: int = 4) -> None:
        super().__init__(model, target_modules, task_rank, lam=0.0)

    def select(self, task: int | None) -> None:
        """Use only the adapter of ``task`` (0-based, among finished tasks); None: sum all of them."""
        if task is not None and not 0 <= task < self.tasks_seen:
            raise ValueError(f"task: expected an index in [0, {self.tasks_seen}), got {task!r}")
        for layer in self.layers.values():
            layer.selected = task

    def begin_task(self) -> None:
        """Open the task's own adapter; while it trains, earlier adapters are switched off."""
        self.select(None)
        super().begin_task()
        for layer in self.layers.values():
            layer.use_frozen = False

    def end_task(self) -> None:
        super().end_task()
        for layer in self.layers.values():
            layer.use_frozen = True
