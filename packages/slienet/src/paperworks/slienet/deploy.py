"""Deployment: the SLIE plan as one static graph, and its exports (``torch.export`` and ONNX).

:class:`SliePlan` is the deterministic inference plan the calibration search selects: the stem and
the blocks up to the deepest selected IC (the late, "overthinking" blocks past depth k are cut off),
the selected ICs, and the average of their softmax outputs. Its ``forward`` has no data-dependent
branch, so it exports to a single graph; :class:`VanillaPlan` is the plain backbone for comparison.

On this CPU the analogue of the paper's TensorRT FP16 engine is an ONNX Runtime session with all graph
optimisations (``ORT_ENABLE_ALL``: constant folding, conv+BN+ReLU fusion) in FP32; ``torch.export``'s
``ExportedProgram`` is the PyTorch-native static graph. ``onnx``/``onnxruntime`` are the ``onnx``
extra, imported only inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .backbones import MultiExitNet, check_images

__all__ = ["OnnxPlan", "SliePlan", "VanillaPlan", "export_onnx", "export_onnx_module", "export_program"]


class SliePlan(nn.Module):
    """``x (B, C_in, S, S) -> probs (B, num_classes)``: softmax average of the ICs in ``subset``.

    ``depth`` (k) is the number of leading ICs the plan may use (SLIE5: k = 5); ``subset`` is a
    non-empty set of IC indices below ``depth``. The backbone is cut after the deepest selected IC.
    The modules are shared with ``model`` (no copy).
    """

    def __init__(self, model: MultiExitNet, subset: Sequence[int], depth: int) -> None:
        super().__init__()
        k_all = model.num_ics
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= k_all:
            raise ValueError(
                f"depth: expected an int in [1, {k_all}] (the model has {k_all} ICs), got {depth!r}"
            )
        sub = tuple(int(i) for i in subset)
        if not sub:
            raise ValueError("subset: expected at least one IC index, got an empty subset")
        if list(sub) != sorted(set(sub)) or sub[0] < 0 or sub[-1] >= depth:
            raise ValueError(
                f"subset: expected distinct increasing IC indices in [0, {depth - 1}], got {sub}"
            )
        self.subset = sub
        self.depth = depth
        self.in_channels = model.in_channels
        self.image_size = model.image_size
        self.taps = tuple(model.ic_after[i] for i in sub)
        self.stem = model.stem
        self.blocks = nn.ModuleList(list(model.blocks[: self.taps[-1] + 1]))
        self.heads = nn.ModuleList(model.ics[i] for i in sub)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        total = torch.zeros(())
        j = 0
        for i, block in enumerate(self.blocks):  # unrolled at export: a fixed, static sequence
            h = block(h)
            if j < len(self.taps) and i == self.taps[j]:
                total = total + F.softmax(self.heads[j](h), dim=-1)
                j += 1
        return total / len(self.taps)

    @torch.no_grad()
    def predict_proba(self, x: torch.Tensor) -> torch.Tensor:
        """Checked entry point: validates ``x`` and runs the plan in eval mode."""
        check_images(x, self.in_channels, self.image_size)
        self.eval()
        return self(x)


class VanillaPlan(nn.Module):
    """The plain backbone (stem, all blocks, final classifier) with a softmax: ``(B, ...) -> (B, C)``."""

    def __init__(self, model: MultiExitNet) -> None:
        super().__init__()
        self.in_channels = model.in_channels
        self.image_size = model.image_size
        self.stem = model.stem
        self.blocks = nn.Sequential(*model.blocks)
        self.head = model.head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softmax(self.head(self.blocks(self.stem(x))), dim=-1)

    @torch.no_grad()
    def predict_proba(self, x: torch.Tensor) -> torch.Tensor:
        check_images(x, self.in_channels, self.image_size)
        self.eval()
        return self(x)


def _example(plan: nn.Module, batch_size: int) -> torch.Tensor:
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size: expected a positive int, got {batch_size!r}")
    c, s = getattr(plan, "in_channels", None), getattr(plan, "image_size", None)
    if c is None or s is None:
        raise TypeError(
            "plan: expected a module with in_channels and image_size (SliePlan, VanillaPlan, ...)"
        )
    return torch.zeros(batch_size, c, s, s)


def export_program(plan: nn.Module, batch_size: int = 1) -> torch.export.ExportedProgram:
    """``torch.export`` the plan (eval mode) at a fixed batch size: one static ``ExportedProgram``."""
    plan.eval()
    with torch.no_grad():
        return torch.export.export(plan, (_example(plan, batch_size),))


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """Silence the exporter's warnings about torchvision ops it cannot register (none are used here)."""
    log = logging.getLogger("torch.onnx")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def export_onnx_module(
    module: nn.Module,
    example: torch.Tensor,
    path: str | Path,
    *,
    input_names: Sequence[str] = ("images",),
    output_names: Sequence[str] = ("probs",),
    opset: int = 18,
) -> Path:
    """Export any module (eval mode) at the fixed shape of ``example`` to ONNX (``onnx`` extra)."""
    import onnx  # noqa: F401 - fail early with a clear ImportError when the extra is missing

    path = Path(path)
    module.eval()
    kwargs = dict(input_names=list(input_names), output_names=list(output_names), opset_version=opset)
    with torch.no_grad(), _quiet_exporter():
        try:  # the TorchScript-based exporter: ~1-3 s here, against 10-30 s for the dynamo one
            torch.onnx.export(module, (example,), str(path), dynamo=False, **kwargs)
        except (TypeError, ValueError, RuntimeError):  # a torch without it: the torch.export-based exporter
            torch.onnx.export(module, (example,), str(path), dynamo=True, external_data=False, **kwargs)
    return path


def export_onnx(plan: nn.Module, path: str | Path, batch_size: int = 1, *, opset: int = 18) -> Path:
    """Export a plan to an ONNX file at ``path`` with input ``images`` and output ``probs``.

    The batch size is fixed (static shapes let ONNX Runtime plan memory once, as TensorRT does).
    Needs the ``onnx`` extra.
    """
    return export_onnx_module(plan, _example(plan, batch_size), path, opset=opset)


class OnnxPlan:
    """An ONNX Runtime session on an exported plan: ``plan(x (B, C, S, S) float32) -> probs (B, C)``.

    ``optimize=True`` enables all graph optimisations; ``threads`` sets intra-op threads.
    """

    def __init__(self, path: str | Path, *, threads: int = 1, optimize: bool = True) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = (
            ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if optimize
            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        )
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        self.input_shape = tuple(inp.shape)
        self.output_names = [o.name for o in self.session.get_outputs()]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if not isinstance(x, np.ndarray) or x.dtype != np.float32 or tuple(x.shape) != self.input_shape:
            raise ValueError(
                f"x: expected a float32 numpy array of shape {self.input_shape}, got "
                f"{type(x).__name__} {getattr(x, 'dtype', '')} {tuple(getattr(x, 'shape', ()))}"
            )
        return self.session.run(self.output_names[:1], {self.input_name: x})[0]
