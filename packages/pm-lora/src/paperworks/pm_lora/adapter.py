"""Continual low-rank adapters on any ``nn.Linear`` picked by module name, and PM-LoRA itself.

:class:`ContinualLoRALinear` wraps a frozen ``nn.Linear`` and holds three kinds of low-rank
updates, all summed into its output ``y = x W^T + b + sum_j x A_j^T B_j^T``:

* a *merged* adapter ``(B_m, A_m)`` of fixed rank ``r`` (a buffer: never trained directly);
* zero or more *frozen* task adapters (what O-LoRA and per-task LoRA keep);
* one *trainable* task adapter ``(B_t, A_t)`` of rank ``k``, optionally parametrised orthogonally to
  a basis ``V`` (in, p): ``A_t = A~ (I - V V^T)`` (:func:`~paperworks.pm_lora.merge.project_out`).

:class:`PMLoRA` drives these layers as the paper's progressive merging (our reading, README
"Fidelity"): at the start of task ``t`` each layer computes the principal input subspace ``V`` of its
merged update and opens a fresh rank-``k`` task adapter orthogonal to it; at the end of the task the
task update is merged into the single evolving adapter by a truncated SVD back to rank ``r``.
Stored adapter parameters stay ``r * (in + out)`` per layer for any number of tasks.
"""

from __future__ import annotations

import abc
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from .merge import merge_lowrank, project_out, spectral_basis

__all__ = [
    "ContinualAdapter",
    "ContinualLoRALinear",
    "PMLoRA",
    "PMLoRAConfig",
    "find_target_modules",
]


def find_target_modules(model: nn.Module, target_modules: str | Sequence[str]) -> list[str]:
    """Names of the ``nn.Linear`` modules of ``model`` selected like peft's ``target_modules``.

    A string is a regular expression that must match the full module name; a sequence of strings
    selects every module whose name equals one of them or ends with ``"." + name``.
    """
    names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear) and n]
    if isinstance(target_modules, str):
        chosen = [n for n in names if re.fullmatch(target_modules, n)]
    else:
        pats = list(target_modules)
        if not pats or not all(isinstance(p, str) and p for p in pats):
            raise ValueError(
                f"target_modules: expected a regex or a non-empty list of names, got {target_modules!r}"
            )
        chosen = [n for n in names if any(n == p or n.endswith("." + p) for p in pats)]
    if not chosen:
        raise ValueError(
            f"target_modules: {target_modules!r} matches no nn.Linear module; "
            f"the model's linear modules are {names}"
        )
    return chosen


def _init_A(k: int, n_in: int, like: torch.Tensor) -> torch.Tensor:
    A = torch.empty((k, n_in), dtype=like.dtype, device=like.device)
    nn.init.kaiming_uniform_(A, a=math.sqrt(5))  # peft's default for lora_A
    return A


class ContinualLoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus merged, frozen and trainable low-rank updates (shapes above).

    ``rank``: rank ``r`` of the merged adapter (0 for none). Input ``x``: (..., in) of the base's
    dtype and device; output (..., out).
    """

    def __init__(self, base: nn.Linear, rank: int) -> None:
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"base: expected nn.Linear, got {type(base).__name__}")
        n_out, n_in = base.weight.shape
        if not isinstance(rank, int) or rank < 0:
            raise ValueError(f"rank: expected a non-negative int, got {rank!r}")
        if rank > min(n_in, n_out):
            raise ValueError(
                f"rank: {rank} is larger than this layer allows "
                f"(min(in={n_in}, out={n_out}) = {min(n_in, n_out)})"
            )
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        w = base.weight
        self.rank = rank
        self.register_buffer("merged_B", w.new_zeros((n_out, rank)))
        self.register_buffer("merged_A", w.new_zeros((rank, n_in)))
        self.register_buffer("basis", w.new_zeros((n_in, 0)))
        self.frozen: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.task_B: nn.Parameter | None = None
        self.task_A: nn.Parameter | None = None
        self.selected: int | None = None  # index into frozen adapters (oracle per-task LoRA), None: sum all
        self.use_frozen = True  # False: frozen adapters are ignored (per-task LoRA while training)

    @property
    def in_features(self) -> int:
        return self.base.in_features

    @property
    def out_features(self) -> int:
        return self.base.out_features

    def open_task(self, k: int, basis: torch.Tensor | None = None) -> None:
        """Start a trainable rank-``k`` adapter (B = 0, A Kaiming-uniform), orthogonal to ``basis``."""
        n_in, n_out = self.in_features, self.out_features
        p = 0 if basis is None else basis.shape[1]
        if not isinstance(k, int) or k < 1 or k > min(n_out, n_in - p):
            raise ValueError(
                f"task_rank: {k!r} is larger than this layer allows: expected 1 <= k <= "
                f"min(out={n_out}, in={n_in} - protected directions {p}) = {min(n_out, n_in - p)}"
            )
        w = self.base.weight
        self.basis = w.new_zeros((n_in, 0)) if basis is None else basis.detach().to(w)
        self.task_A = nn.Parameter(_init_A(k, n_in, w))
        self.task_B = nn.Parameter(w.new_zeros((n_out, k)))

    def task_factors(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The trainable adapter as ``(B_t, A_t)`` with the orthogonal parametrisation applied."""
        if self.task_A is None or self.task_B is None:
            return None
        return self.task_B, project_out(self.task_A, self.basis)

    def close_task(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Stop training the task adapter and return its detached factors ``(B_t, A_t)``."""
        f = self.task_factors()
        self.task_A = self.task_B = None
        self.basis = self.base.weight.new_zeros((self.in_features, 0))
        return None if f is None else (f[0].detach().clone(), f[1].detach().clone())

    def active_frozen(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        if not self.use_frozen:
            return []
        return self.frozen if self.selected is None else [self.frozen[self.selected]]

    def delta_weight(self) -> torch.Tensor:
        """The dense update (out, in) that the adapters add to the base weight (for tests and export)."""
        d = self.merged_B @ self.merged_A
        adapters = self.active_frozen()
        for B, A in adapters:
            d = d + B @ A
        f = self.task_factors()
        if f is not None:
            d = d + f[0] @ f[1]
        return d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.base.weight
        if x.dtype != w.dtype or x.device != w.device:
            raise ValueError(
                f"x: expected dtype {w.dtype} on {w.device} (the base layer's), got {x.dtype} on {x.device}"
            )
        if x.shape[-1] != self.in_features:
            raise ValueError(f"x: expected last dimension {self.in_features}, got shape {tuple(x.shape)}")
        y = self.base(x)
        if self.rank:
            y = y + (x @ self.merged_A.T) @ self.merged_B.T
        adapters = self.active_frozen()
        for B, A in adapters:
            y = y + (x @ A.T) @ B.T
        f = self.task_factors()
        if f is not None:
            y = y + (x @ f[1].T) @ f[0].T
        return y

    def stored_parameters(self) -> int:
        """Adapter numbers kept between tasks: merged factors plus frozen task factors."""
        n = self.merged_A.numel() + self.merged_B.numel()
        return n + sum(B.numel() + A.numel() for B, A in self.frozen)


@dataclass(frozen=True)
class PMLoRAConfig:
    """PM-LoRA hyper-parameters (our defaults; the paper's are not public).

    ``rank``: rank ``r`` of the single evolving adapter; ``task_rank``: rank ``k`` of each task's
    spectral orthogonal adapter; ``energy``: fraction of the merged update's squared singular values
    whose right singular vectors the task adapter must stay orthogonal to; ``target_modules``: as in
    peft (regex string or list of names).
    """

    rank: int = 16
    task_rank: int = 4
    energy: float = 0.95
    target_modules: str | tuple[str, ...] = ("fc1", "fc2", "fc3")

    def __post_init__(self) -> None:
        for name in ("rank", "task_rank"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        if not 0.0 < self.energy <= 1.0:
            raise ValueError(f"energy: expected a fraction in (0, 1], got {self.energy!r}")
        if isinstance(self.target_modules, list):
            object.__setattr__(self, "target_modules", tuple(self.target_modules))


class ContinualAdapter(nn.Module, abc.ABC):
    """Wraps a model, replacing its target linears by :class:`ContinualLoRALinear` (in place).

    Subclasses define what happens at :meth:`begin_task` / :meth:`end_task`. The base model's own
    parameters are frozen; :meth:`trainable_parameters` yields the current task's factors.
    """

    def __init__(self, model: nn.Module, target_modules: str | Sequence[str], merged_rank: int) -> None:
        super().__init__()
        names = find_target_modules(model, target_modules)
        for p in model.parameters():
            p.requires_grad_(False)
        self.model = model
        self.layer_names = names
        self.layers: dict[str, ContinualLoRALinear] = {}
        for name in names:
            parent_name, _, child = name.rpartition(".")
            parent = model.get_submodule(parent_name) if parent_name else model
            layer = ContinualLoRALinear(getattr(parent, child), merged_rank)
            setattr(parent, child, layer)
            self.layers[name] = layer
        self.tasks_seen = 0

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    def trainable_parameters(self) -> Iterator[nn.Parameter]:
        for layer in self.layers.values():
            if layer.task_A is not None and layer.task_B is not None:
                yield layer.task_A
                yield layer.task_B

    def stored_parameters(self) -> int:
        """Adapter parameters kept after the tasks seen so far (what grows or stays constant)."""
        return sum(layer.stored_parameters() for layer in self.layers.values())

    def stored_bytes(self) -> int:
        return sum(
            t.numel() * t.element_size()
            for layer in self.layers.values()
            for t in [layer.merged_A, layer.merged_B, *(x for f in layer.frozen for x in f)]
        )

    def penalty(self) -> torch.Tensor:
        """Extra training loss of the method (zero unless a subclass adds one)."""
        return self.layers[self.layer_names[0]].base.weight.new_zeros(())

    @abc.abstractmethod
    def begin_task(self) -> None:
        """Prepare the layers for a new task (open a trainable adapter)."""

    @abc.abstractmethod
    def end_task(self) -> None:
        """Finish the current task (freeze, merge or keep its adapter)."""


class PMLoRA(ContinualAdapter):
    """Progressive merging of spectral orthogonal low-rank adapters (PM-LoRA), our reading.

    Usage: ``pm = PMLoRA(model, PMLoRAConfig(...))``; per task: ``pm.begin_task()``, train
    ``pm.trainable_parameters()`` on ``loss(pm(x), y)``, ``pm.end_task()``. Between tasks the
    model holds one rank-``r`` adapter per target layer (:meth:`stored_parameters` is constant).
    """

    def __init__(self, model: nn.Module, config: PMLoRAConfig | None = None) -> None:
        config = config or PMLoRAConfig()
        if not isinstance(config, PMLoRAConfig):
            raise TypeError(f"config: expected PMLoRAConfig, got {type(config).__name__}")
        super().__init__(model, config.target_modules, config.rank)
        self.config = config

    def begin_task(self) -> None:
        """Open a rank-``k`` task adapter per layer, orthogonal to the merged update's spectral subspace."""
        for layer in self.layers.values():
            V = spectral_basis(layer.merged_B, layer.merged_A, self.config.energy)
            layer.open_task(self.config.task_rank, V)

    def end_task(self) -> None:
        """Merge each layer's task update into its evolving adapter (truncated SVD to rank ``r``)."""
        for layer in self.layers.values():
            f = layer.close_task()
            if f is None:
                raise RuntimeError("end_task: no task is open; call begin_task() first")
            with torch.no_grad():
                B, A = merge_lowrank(layer.merged_B, layer.merged_A, f[0], f[1], layer.rank)
            layer.merged_B, layer.merged_A = B, A
        self.tasks_seen += 1

    def orthogonality_error(self) -> float:
        """max over layers of ``||A_t V||_max``: 0 when the task adapter is orthogonal to the subspace."""
        err = 0.0
        for layer in self.layers.values():
            f = layer.task_factors()
            if f is not None and layer.basis.shape[1]:
                err = max(err, float((f[1].detach() @ layer.basis).abs().max()))
        return err
