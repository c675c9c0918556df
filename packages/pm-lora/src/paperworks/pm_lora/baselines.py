"""Baselines on the same backbone and budget as PM-LoRA (README "Fidelity" says how we read each).

* :class:`SeqLoRA`: one rank-``r`` LoRA trained on every task in turn, no constraint (constant size).
* :class:`OLoRA`: O-LoRA (Wang et al., 2023, arXiv 2310.14152): a new rank-``k`` LoRA per task,
  earlier ones frozen and summed, trained with ``lambda * sum_s ||A_t A_s^T||_F^2`` pushing the new
  input subspace orthogonal to the old ones (parameters grow linearly with the tasks).
* :class:`InfLoRA`: InfLoRA (Liang & Li, 2024, arXiv 2404.00228), our reading: per task the
  down-projection ``A_t`` (k, in) is *designed*, not trained: the top-``k`` right singular vectors of
  the task's layer inputs with the old tasks' input subspace ``M`` projected out; only ``B_t`` trains.
  After the task its branch is frozen and ``M`` grows (GPM-style) by the fewest new input directions
  that bring the captured input energy to ``energy``.
* :class:`PerTaskLoRA`: one rank-``k`` LoRA per task and the oracle task id at test time (upper
  bound, grows linearly): :meth:`PerTaskLoRA.select` picks the adapter of a task.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from paperworks.core.validate import fraction, nonnegative_float, positive_int

from .adapter import ContinualAdapter

__all__ = ["InfLoRA", "OLoRA", "PerTaskLoRA", "SeqLoRA"]


class SeqLoRA(ContinualAdapter):
    """Sequential LoRA fine-tuning: a single rank-``rank`` adapter keeps training across tasks."""

    def __init__(self, model: nn.Module, target_modules: str | Sequence[str], rank: int = 16) -> None:
        rank = positive_int(rank, "rank")
        super().__init__(model, target_modules, 0)
        self.rank = rank
        for name, layer in self.layers.items():
            if rank > min(layer.in_features, layer.out_features):
                raise ValueError(
                    f"rank: {rank} is larger than layer {name!r} allows "
                    f"(min(in={layer.in_features}, out={layer.out_features}))"
                )
        for layer in self.layers.values():
            layer.open_task(self.rank)

    def _begin(self, inputs: torch.Tensor | None) -> None:
        """Nothing to do: the same adapter continues."""

    def _end(self) -> None:
        """Nothing to do: the same adapter continues."""

    def trainable_parameters(self):
        if not self.task_open:
            return iter(())
        return super().trainable_parameters()

    def stored_parameters(self) -> int:
        return sum(layer.task_A.numel() + layer.task_B.numel() for layer in self.layers.values())

    def stored_bytes(self) -> int:
        return sum(
            t.numel() * t.element_size()
            for layer in self.layers.values()
            for t in (layer.task_A, layer.task_B)
        )


class OLoRA(ContinualAdapter):
    """O-LoRA: per-task rank-``task_rank`` adapters with the orthogonality penalty ``lam``."""

    def __init__(
        self, model: nn.Module, target_modules: str | Sequence[str], task_rank: int = 4, lam: float = 0.5
    ) -> None:
        task_rank = positive_int(task_rank, "task_rank")
        lam = nonnegative_float(lam, "lam")
        super().__init__(model, target_modules, 0)
        self.task_rank = task_rank
        self.lam = lam

    def _begin(self, inputs: torch.Tensor | None) -> None:
        for layer in self.layers.values():
            layer.open_task(self.task_rank)

    def _end(self) -> None:
        for layer in self.layers.values():
            layer.freeze(*layer.close_task())

    def penalty(self) -> torch.Tensor:
        """``lam * sum_layers sum_s ||A_t A_s^T||_F^2`` over the frozen adapters ``s``."""
        total = super().penalty()
        if self.lam == 0.0:
            return total
        for layer in self.layers.values():
            if layer.task_A is None or layer.frozen_A.shape[0] == 0:
                continue
            total = total + (layer.task_A @ layer.frozen_A.T).square().sum()
        return self.lam * total


class PerTaskLoRA(OLoRA):
    """One rank-``task_rank`` LoRA per task, evaluated with the oracle task id (no penalty)."""

    def __init__(self, model: nn.Module, target_modules: str | Sequence[str], task_rank: int = 4) -> None:
        super().__init__(model, target_modules, task_rank, lam=0.0)

    def select(self, task: int | None) -> None:
        """Use only the adapter of ``task`` (0-based, among finished tasks); None: sum all of them."""
        if task is not None:
            if isinstance(task, bool) or not isinstance(task, int) or not 0 <= task < self.tasks_seen:
                raise ValueError(f"task: expected an index in [0, {self.tasks_seen}) or None, got {task!r}")
        for layer in self.layers.values():
            layer.selected = task

    def _begin(self, inputs: torch.Tensor | None) -> None:
        """Open the task's own adapter; while it trains, earlier adapters are switched off."""
        self.select(None)
        super()._begin(inputs)
        for layer in self.layers.values():
            layer.use_frozen = False

    def _end(self) -> None:
        super()._end()
        for layer in self.layers.values():
            layer.use_frozen = True


def _layer_inputs(adapter: ContinualAdapter, inputs: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each target layer's input (n, in) when ``inputs`` run through the model (no gradient)."""
    seen: dict[str, torch.Tensor] = {}
    hooks = []
    for name, layer in adapter.layers.items():

        def hook(_mod, args, name=name):
            seen[name] = args[0].detach().reshape(-1, args[0].shape[-1])

        hooks.append(layer.register_forward_pre_hook(hook))
    try:
        with torch.no_grad():
            adapter.model(inputs)
    finally:
        for h in hooks:
            h.remove()
    return seen


class InfLoRA(ContinualAdapter):
    """InfLoRA (our reading, module docstring): designed, frozen ``A_t``; trained ``B_t``; input memory ``M``.

    ``begin_task(inputs)`` needs a batch of the task's inputs. ``energy``: GPM threshold of the
    memory update. The memory of each layer is a buffer ``memory`` (in, m); it never takes more than
    ``in - task_rank`` directions, so a new task always has room.
    """

    def __init__(
        self,
        model: nn.Module,
        target_modules: str | Sequence[str],
        task_rank: int = 4,
        energy: float = 0.95,
    ) -> None:
        task_rank = positive_int(task_rank, "task_rank")
        energy = fraction(energy, "energy", open_low=True)
        super().__init__(model, target_modules, 0)
        self.task_rank = task_rank
        self.energy = energy
        for layer in self.layers.values():
            layer.register_buffer("memory", layer.base.weight.new_zeros((layer.in_features, 0)))
        self._inputs: torch.Tensor | None = None

    def _begin(self, inputs: torch.Tensor | None) -> None:
        if not isinstance(inputs, torch.Tensor) or inputs.ndim < 1 or inputs.shape[0] == 0:
            raise ValueError("inputs: InfLoRA.begin_task needs a non-empty batch of the task's inputs")
        feats = _layer_inputs(self, inputs)
        for name, layer in self.layers.items():
            H = feats[name]
            M = layer.memory
            Hp = H - (H @ M) @ M.T  # inputs with the old tasks' subspace removed
            _, _, Vh = torch.linalg.svd(Hp, full_matrices=False)
            layer.open_task(self.task_rank, A=Vh[: self.task_rank])
        self._inputs = inputs

    def _end(self) -> None:
        feats = _layer_inputs(self, self._inputs)
        for name, layer in self.layers.items():
            layer.freeze(*layer.close_task())
            layer.memory = _grow_memory(
                layer.memory, feats[name], self.energy, layer.in_features - self.task_rank
            )
        self._inputs = None

    def stored_parameters(self) -> int:
        """Frozen branches plus the input memory ``M`` kept for later tasks."""
        return super().stored_parameters() + sum(layer.memory.numel() for layer in self.layers.values())

    def stored_bytes(self) -> int:
        extra = sum(layer.memory.numel() * layer.memory.element_size() for layer in self.layers.values())
        return super().stored_bytes() + extra


def _grow_memory(M: torch.Tensor, H: torch.Tensor, energy: float, cap: int) -> torch.Tensor:
    """GPM-style update: add to ``M`` (in, m) the fewest residual directions of ``H`` (n, in) so that
    ``||H P_M||^2 >= energy ||H||^2``; at most ``cap`` columns in all."""
    total = float(H.square().sum())
    if total == 0.0 or M.shape[1] >= cap:
        return M
    R = H - (H @ M) @ M.T
    captured = total - float(R.square().sum())
    if captured >= energy * total:
        return M
    _, S, Vh = torch.linalg.svd(R, full_matrices=False)
    need = energy * total - captured
    cum = torch.cumsum(S.square(), 0)
    n_new = int((cum < need).sum().item()) + 1
    n_new = min(n_new, cap - M.shape[1], int((S > 1e-6 * S[0]).sum().item()))
    if n_new <= 0:
        return M
    new = Vh[:n_new].T
    new = new - M @ (M.T @ new)  # re-orthogonalise against rounding
    Q, _ = torch.linalg.qr(new)
    return torch.cat([M, Q], 1)
