"""Continual low-rank adapters on any ``nn.Linear`` or GPT-2 ``Conv1D`` picked by name, and PM-LoRA.

:class:`ContinualLoRALinear` wraps a frozen linear layer and holds three kinds of low-rank updates,
all summed into its output ``y = base(x) + sum_j x A_j^T B_j^T`` (``x``: (..., in); ``y``: (..., out)):

* a *merged* adapter ``(B_m, A_m)`` of fixed rank ``r`` (buffers: never trained directly);
* zero or more *frozen* task adapters (what O-LoRA, InfLoRA and per-task LoRA keep), stored
  concatenated as buffers ``frozen_B`` (out, K) and ``frozen_A`` (K, in) with their ranks in
  ``frozen_ranks``, so they are in ``state_dict`` and follow ``.to()`` / ``.double()``;
* one *trainable* task adapter ``(B_t, A_t)`` of rank ``k`` (parameters), optionally parametrised
  orthogonally to a basis ``V`` (in, p): ``A_t = A~ (I - V V^T)``
  (:func:`~paperworks.pm_lora.merge.project_out`).

Factors use peft's layout whatever the base layer: ``A`` (r, in), ``B`` (out, r). For a ``Conv1D``
(weight (in, out), peft's ``fan_in_fan_out``) only the base weight is transposed.

:class:`PMLoRA` drives these layers as the paper's progressive merging (our reading, README
"Fidelity"): at the start of task ``t`` each layer computes the principal input subspace ``V`` of its
merged update and opens a fresh rank-``k`` task adapter orthogonal to it; at the end of the task the
task update is merged into the single evolving adapter by a truncated SVD back to rank ``r``.
Stored adapter parameters stay ``r * (in + out)`` per layer for any number of tasks.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from paperworks.core.validate import fraction, positive_int

from .merge import merge_lowrank, project_out, spectral_basis
from .targeting import ALL_LINEAR, find_target_modules, is_conv1d, is_linear_like

__all__ = [
    "ContinualAdapter",
    "ContinualLoRALinear",
    "PMLoRA",
    "PMLoRAConfig",
    "find_target_modules",
]

_RESIZABLE = ("basis", "frozen_B", "frozen_A", "frozen_ranks", "memory")  # memory: InfLoRA's


def _keep_off_fused_paths(module: nn.Module, args: tuple) -> None:
    """A no-op forward pre-hook. PyTorch's fused ``nn.TransformerEncoderLayer`` inference path reads
    ``linear1.weight`` directly (so it would skip the adapter); it is never taken while a submodule
    has hooks, so every adapter layer carries this one."""
    return None


def _init_A(k: int, n_in: int, like: torch.Tensor) -> torch.Tensor:
    A = torch.empty((k, n_in), dtype=like.dtype, device=like.device)
    nn.init.kaiming_uniform_(A, a=math.sqrt(5))  # peft's default for lora_A
    return A


def _check_rank_fits(rank: int, n_in: int, n_out: int, where: str) -> None:
    if rank > min(n_in, n_out):
        raise ValueError(
            f"rank: {rank} is larger than {where} allows (min(in={n_in}, out={n_out}) = {min(n_in, n_out)})"
        )


class ContinualLoRALinear(nn.Module):
    """A frozen ``nn.Linear`` / ``Conv1D`` plus merged, frozen and trainable low-rank updates.

    ``rank``: rank ``r`` of the merged adapter (0 for none). Input ``x``: (..., in) of the base's
    dtype and device; output (..., out). ``fan_in_fan_out`` is True for a ``Conv1D`` base.
    """

    def __init__(self, base: nn.Module, rank: int) -> None:
        super().__init__()
        if not is_linear_like(base):
            raise TypeError(f"base: expected nn.Linear or transformers' Conv1D, got {type(base).__name__}")
        rank = int(rank) if isinstance(rank, int) and not isinstance(rank, bool) else rank
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
            raise ValueError(f"rank: expected a non-negative int, got {rank!r}")
        self.fan_in_fan_out = is_conv1d(base)
        w = base.weight
        n_in, n_out = (w.shape[0], w.shape[1]) if self.fan_in_fan_out else (w.shape[1], w.shape[0])
        _check_rank_fits(rank, n_in, n_out, "this layer")
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.rank = rank
        self._in, self._out = int(n_in), int(n_out)
        self.register_buffer("merged_B", w.new_zeros((n_out, rank)))
        self.register_buffer("merged_A", w.new_zeros((rank, n_in)))
        self.register_buffer("basis", w.new_zeros((n_in, 0)))
        self.register_buffer("frozen_B", w.new_zeros((n_out, 0)))
        self.register_buffer("frozen_A", w.new_zeros((0, n_in)))
        self.register_buffer("frozen_ranks", torch.zeros(0, dtype=torch.long, device=w.device))
        self.register_parameter("task_B", None)
        self.register_parameter("task_A", None)
        self.selected: int | None = None  # index into frozen adapters (oracle per-task LoRA), None: sum all
        self.use_frozen = True  # False: frozen adapters are ignored (per-task LoRA while training)
        self.register_forward_pre_hook(_keep_off_fused_paths)

    @property
    def weight(self) -> torch.Tensor:
        """The base layer's weight (so code that reads ``layer.weight`` keeps working)."""
        return self.base.weight

    @property
    def bias(self) -> torch.Tensor | None:
        """The base layer's bias."""
        return self.base.bias

    @property
    def in_features(self) -> int:
        return self._in

    @property
    def out_features(self) -> int:
        return self._out

    @property
    def n_frozen(self) -> int:
        return int(self.frozen_ranks.numel())

    # -- task adapter --------------------------------------------------------------------------------
    def open_task(self, k: int, basis: torch.Tensor | None = None, *, A: torch.Tensor | None = None) -> None:
        """Start a rank-``k`` task adapter (``B = 0``), orthogonal to ``basis`` (in, p) when given.

        ``A``: a fixed down-projection (k, in) (InfLoRA designs it; it is then not trained);
        default a trainable Kaiming-uniform ``A`` like peft's.
        """
        if self.task_A is not None:
            raise RuntimeError("open_task: a task adapter is already open; close_task() it first")
        n_in, n_out = self.in_features, self.out_features
        p = 0 if basis is None else int(basis.shape[1])
        if isinstance(k, bool) or not isinstance(k, int) or k < 1 or k > min(n_out, n_in - p):
            raise ValueError(
                f"task_rank: {k!r} does not fit this layer: expected an int 1 <= k <= "
                f"min(out={n_out}, in={n_in} - protected directions {p}) = {min(n_out, n_in - p)}"
            )
        w = self.base.weight
        if basis is not None and (basis.ndim != 2 or basis.shape[0] != n_in):
            raise ValueError(f"basis: expected shape ({n_in}, p), got {tuple(basis.shape)}")
        self.basis = w.new_zeros((n_in, 0)) if basis is None else basis.detach().to(w)
        if A is None:
            self.task_A = nn.Parameter(_init_A(k, n_in, w))
        else:
            if A.shape != (k, n_in):
                raise ValueError(f"A: expected shape ({k}, {n_in}), got {tuple(A.shape)}")
            self.task_A = nn.Parameter(A.detach().to(w).clone(), requires_grad=False)
        self.task_B = nn.Parameter(w.new_zeros((n_out, k)))

    def task_factors(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The task adapter as ``(B_t, A_t)`` with the orthogonal parametrisation applied."""
        if self.task_A is None or self.task_B is None:
            return None
        return self.task_B, project_out(self.task_A, self.basis)

    def close_task(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Stop training the task adapter and return its detached factors ``(B_t, A_t)``."""
        f = self.task_factors()
        self.task_A = self.task_B = None
        self.basis = self.base.weight.new_zeros((self.in_features, 0))
        return None if f is None else (f[0].detach().clone(), f[1].detach().clone())

    # -- frozen adapters -----------------------------------------------------------------------------
    def freeze(self, B: torch.Tensor, A: torch.Tensor) -> None:
        """Keep ``(B, A)`` as one more frozen adapter (appended to the concatenated buffers)."""
        if B.shape[0] != self.out_features or A.shape[1] != self.in_features or B.shape[1] != A.shape[0]:
            raise ValueError(
                f"B, A: expected ({self.out_features}, r) and (r, {self.in_features}), "
                f"got {tuple(B.shape)} and {tuple(A.shape)}"
            )
        w = self.base.weight
        self.frozen_B = torch.cat([self.frozen_B, B.detach().to(w)], 1)
        self.frozen_A = torch.cat([self.frozen_A, A.detach().to(w)], 0)
        r = torch.tensor([A.shape[0]], dtype=torch.long, device=self.frozen_ranks.device)
        self.frozen_ranks = torch.cat([self.frozen_ranks, r])

    def frozen_factors(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The frozen adapters as a list of ``(B_j, A_j)`` views, oldest first."""
        out, start = [], 0
        for r in self.frozen_ranks.tolist():
            out.append((self.frozen_B[:, start : start + r], self.frozen_A[start : start + r]))
            start += r
        return out

    def _active_frozen(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        if not self.use_frozen or self.frozen_A.shape[0] == 0:
            return None
        if self.selected is None:
            return self.frozen_B, self.frozen_A
        return self.frozen_factors()[self.selected]

    # -- the layer -----------------------------------------------------------------------------------
    def delta_weight(self) -> torch.Tensor:
        """The dense update (out, in) that the adapters add (nn.Linear layout, even for a Conv1D)."""
        d = self.merged_B @ self.merged_A
        fr = self._active_frozen()
        if fr is not None:
            d = d + fr[0] @ fr[1]
        f = self.task_factors()
        if f is not None:
            d = d + f[0] @ f[1]
        return d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.base.weight
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x: expected a torch.Tensor, got {type(x).__name__}")
        if x.dtype != w.dtype or x.device != w.device:
            raise ValueError(
                f"x: expected dtype {w.dtype} on {w.device} (the base layer's), got {x.dtype} on {x.device}"
            )
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"x: expected last dimension {self.in_features}, got shape {tuple(x.shape)}")
        y = self.base(x)
        if self.rank:
            y = y + (x @ self.merged_A.T) @ self.merged_B.T
        fr = self._active_frozen()
        if fr is not None:
            y = y + (x @ fr[1].T) @ fr[0].T
        f = self.task_factors()
        if f is not None:
            y = y + (x @ f[1].T) @ f[0].T
        return y

    def stored_parameters(self) -> int:
        """Adapter numbers kept between tasks: merged factors plus frozen task factors."""
        return sum(t.numel() for t in (self.merged_A, self.merged_B, self.frozen_A, self.frozen_B))

    def extra_repr(self) -> str:
        return (
            f"in={self.in_features}, out={self.out_features}, rank={self.rank}, frozen={self.n_frozen}, "
            f"task_open={self.task_A is not None}, fan_in_fan_out={self.fan_in_fan_out}"
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        # frozen adapters and the basis have a size that depends on the tasks seen: take the incoming
        # shape (dtype/device stay this layer's); an open task adapter is re-created to be loaded into
        w = self.base.weight
        for name in _RESIZABLE:
            t, mine = state_dict.get(prefix + name), getattr(self, name, None)
            if isinstance(t, torch.Tensor) and isinstance(mine, torch.Tensor) and t.shape != mine.shape:
                dtype = torch.long if name == "frozen_ranks" else w.dtype
                setattr(self, name, torch.zeros(t.shape, dtype=dtype, device=w.device))
        for name in ("task_B", "task_A"):
            t = state_dict.get(prefix + name)
            if isinstance(t, torch.Tensor) and getattr(self, name) is None:
                setattr(self, name, nn.Parameter(w.new_zeros(t.shape)))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


@dataclass(frozen=True)
class PMLoRAConfig:
    """PM-LoRA hyper-parameters (our defaults; the paper's are not public).

    ``rank``: rank ``r`` of the single evolving adapter; ``task_rank``: rank ``k <= r`` of each task's
    spectral orthogonal adapter; ``energy``: fraction of the merged update's squared singular values
    whose right singular vectors the task adapter must stay orthogonal to; ``target_modules``: as
    peft's (``"all-linear"``, a regular expression or a list of names; see
    :func:`~paperworks.pm_lora.targeting.find_target_modules`); ``orthogonal``: False drops the
    spectral orthogonality (the ablation "merging without projection").
    """

    rank: int = 16
    task_rank: int = 4
    energy: float = 0.95
    target_modules: str | tuple[str, ...] = ALL_LINEAR
    orthogonal: bool = True

    def __post_init__(self) -> None:
        positive_int(self.rank, "rank")
        positive_int(self.task_rank, "task_rank")
        if self.task_rank > self.rank:
            raise ValueError(
                f"task_rank: expected <= rank ({self.rank}), got {self.task_rank}: the merge truncates "
                "every task update to rank r"
            )
        e = fraction(self.energy, "energy")
        if e == 0.0:
            raise ValueError("energy: expected a number in (0, 1], got 0.0")
        object.__setattr__(self, "energy", e)
        tm = self.target_modules
        if isinstance(tm, list | set | frozenset):
            tm = tuple(tm)
            object.__setattr__(self, "target_modules", tm)
        if not isinstance(tm, str | tuple):
            raise TypeError(
                "target_modules: expected 'all-linear', a regular expression or names, "
                f"got {type(tm).__name__}"
            )
        if isinstance(tm, tuple) and (not tm or not all(isinstance(t, str) and t for t in tm)):
            raise ValueError(f"target_modules: expected non-empty module names, got {tm!r}")
        if isinstance(tm, str) and not tm:
            raise ValueError("target_modules: expected a non-empty string")
        if not isinstance(self.orthogonal, bool):
            raise TypeError(f"orthogonal: expected a bool, got {self.orthogonal!r}")


class ContinualAdapter(nn.Module, abc.ABC):
    """Wraps a model, replacing its target layers by :class:`ContinualLoRALinear` (in place).

    Protocol: per task ``begin_task(inputs=None)``, train :meth:`trainable_parameters` on the task's
    loss (plus :meth:`penalty`), ``end_task()``. The base model's own parameters are frozen.
    Everything the adapter keeps is in ``state_dict()`` (load it into the same method built on the
    same architecture). Subclasses implement :meth:`_begin` and :meth:`_end`.
    """

    def __init__(self, model: nn.Module, target_modules: str | Sequence[str], merged_rank: int) -> None:
        super().__init__()
        names = find_target_modules(model, target_modules)
        bases = {n: model.get_submodule(n) for n in names}
        for n, b in bases.items():  # every check before the model is touched: no partial wrapping
            w = b.weight
            n_in, n_out = (w.shape[0], w.shape[1]) if is_conv1d(b) else (w.shape[1], w.shape[0])
            _check_rank_fits(merged_rank, n_in, n_out, f"layer {n!r}")
        for p in model.parameters():
            p.requires_grad_(False)
        self.model = model
        self.layer_names = names
        self.tasks_seen = 0
        self.task_open = False
        self._layers: dict[str, ContinualLoRALinear] = {}
        for name in names:
            parent_name, _, child = name.rpartition(".")
            parent = model.get_submodule(parent_name) if parent_name else model
            layer = ContinualLoRALinear(bases[name], merged_rank)
            setattr(parent, child, layer)
            self._layers[name] = layer  # a plain dict: the layers are registered once, in the model

    @property
    def layers(self) -> dict[str, ContinualLoRALinear]:
        """Target name -> its :class:`ContinualLoRALinear` (the modules inside the wrapped model)."""
        return self._layers

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    def trainable_parameters(self) -> Iterator[nn.Parameter]:
        """The open task's trainable factors (empty between tasks)."""
        for layer in self.layers.values():
            for p in (layer.task_A, layer.task_B):
                if p is not None and p.requires_grad:
                    yield p

    def stored_parameters(self) -> int:
        """Adapter numbers kept after the tasks seen so far (what grows or stays constant)."""
        return sum(layer.stored_parameters() for layer in self.layers.values())

    def stored_bytes(self) -> int:
        return sum(
            t.numel() * t.element_size()
            for layer in self.layers.values()
            for t in (layer.merged_A, layer.merged_B, layer.frozen_A, layer.frozen_B)
        )

    def penalty(self) -> torch.Tensor:
        """Extra training loss of the method (zero unless a subclass adds one)."""
        return self.layers[self.layer_names[0]].base.weight.new_zeros(())

    def begin_task(self, inputs: torch.Tensor | None = None) -> None:
        """Prepare the layers for a new task (open its adapter).

        ``inputs``: a batch of the task's model inputs, for methods that design their subspace from
        the data (InfLoRA); the others ignore it. Raises if a task is already open.
        """
        if self.task_open:
            raise RuntimeError("begin_task: a task is already open; call end_task() first")
        self._begin(inputs)
        self.task_open = True

    def end_task(self) -> None:
        """Finish the current task (freeze, merge or keep its adapter)."""
        if not self.task_open:
            raise RuntimeError("end_task: no task is open; call begin_task() first")
        self._end()
        self.task_open = False
        self.tasks_seen += 1

    @abc.abstractmethod
    def _begin(self, inputs: torch.Tensor | None) -> None:
        """Open the task adapters."""

    @abc.abstractmethod
    def _end(self) -> None:
        """Close the task adapters."""

    def get_extra_state(self) -> dict[str, int]:
        return {"tasks_seen": self.tasks_seen}

    def set_extra_state(self, state: dict[str, int]) -> None:
        self.tasks_seen = int(state.get("tasks_seen", 0))


class PMLoRA(ContinualAdapter):
    """Progressive merging of spectral orthogonal low-rank adapters (PM-LoRA), our reading.

    Usage: ``pm = PMLoRA(model, PMLoRAConfig(...))``; per task: ``pm.begin_task()``, train
    ``pm.trainable_parameters()`` on ``loss(pm(x), y)``, ``pm.end_task()``. Between tasks the
    model holds one rank-``r`` adapter per target layer (:meth:`stored_parameters` is constant).
    """

    def __init__(self, model: nn.Module, config: PMLoRAConfig | None = None) -> None:
        config = PMLoRAConfig() if config is None else config
        if not isinstance(config, PMLoRAConfig):
            raise TypeError(f"config: expected PMLoRAConfig, got {type(config).__name__}")
        super().__init__(model, config.target_modules, config.rank)
        self.config = config

    def _begin(self, inputs: torch.Tensor | None) -> None:
        """Open a rank-``k`` task adapter per layer, orthogonal to the merged update's spectral subspace."""
        for layer in self.layers.values():
            V = spectral_basis(layer.merged_B, layer.merged_A, self.config.energy)
            layer.open_task(self.config.task_rank, V if self.config.orthogonal else None)

    def _end(self) -> None:
        """Merge each layer's task update into its evolving adapter (truncated SVD to rank ``r``)."""
        for layer in self.layers.values():
            B_t, A_t = layer.close_task()
            with torch.no_grad():
                B, A = merge_lowrank(layer.merged_B, layer.merged_A, B_t, A_t, layer.rank)
            layer.merged_B, layer.merged_A = B, A

    def orthogonality_error(self) -> float:
        """max over layers of ``||A_t V||_max``: 0 when the task adapter is orthogonal to the subspace."""
        err = 0.0
        for layer in self.layers.values():
            f = layer.task_factors()
            if f is not None and layer.basis.shape[1]:
                err = max(err, float((f[1].detach() @ layer.basis).abs().max()))
        return err
