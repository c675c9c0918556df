"""Deployment: the SLIE plan as one static graph, and its exports (``torch.export`` and ONNX).

:class:`SliePlan` is the deterministic inference plan the calibration search selects: the stem and
the blocks up to the deepest selected IC (the late, "overthinking" blocks past depth k are cut off),
the selected ICs, and the average of their softmax outputs. Its ``forward`` has no data-dependent
branch, so it exports to a single graph; :class:`VanillaPlan` is the plain backbone for comparison.

On this CPU the analogue of the paper's TensorRT FP16 engine is an ONNX Runtime session with all graph
optimisations (``ORT_ENABLE_ALL``: constant folding, conv+BN+ReLU fusion) in FP32; ``torch.export``'s
``ExportedProgram`` is the PyTorch-native static graph (``torch.compile`` / AOTInductor compile it).
Exports take a fixed batch size by default (static shapes let a runtime plan memory once, as
TensorRT does) or a dynamic batch axis (``dynamic_batch=True``, as the authors' export script does).
``onnx``/``onnxruntime`` are the ``onnx`` extra, imported only inside the functions that need them.

Warnings are filtered narrowly: only the exporter's notice that the TorchScript-based exporter is
legacy, and its logger's notes about torchvision operators (none are used here). Every other warning,
``torch.jit.TracerWarning`` above all (it reveals data-dependent control flow that a trace would
freeze into a constant), reaches the caller. An exporter that fails raises; there is no silent retry
with the other exporter.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paperworks.core import validate

from ._checks import as_images, check_module, int_sequence
from .backbones import MultiExitNet

__all__ = [
    "EXPORTERS",
    "OnnxPlan",
    "SliePlan",
    "VanillaPlan",
    "export_onnx",
    "export_onnx_module",
    "export_program",
    "ort_session",
]

#: the ONNX exporters :func:`export_onnx_module` can use: the TorchScript-based tracer (seconds per
#: graph here) and the ``torch.export``-based one (several times slower to export here)
EXPORTERS = ("torchscript", "dynamo")


class SliePlan(nn.Module):
    """``x (B, C_in, S, S) -> probs (B, num_classes)``: softmax average of the ICs in ``subset``.

    ``depth`` (k) is the number of leading ICs the plan may use (SLIE5: k = 5); ``subset`` is a
    non-empty set of IC indices below ``depth``. The backbone is cut after the deepest selected IC.
    The modules are shared with ``model`` (no copy).
    """

    def __init__(self, model: MultiExitNet, subset: Sequence[int], depth: int) -> None:
        super().__init__()
        check_module(model, "model", MultiExitNet)
        k_all = model.num_ics
        depth = validate.int_in_range(depth, "depth", 1, k_all)
        sub = int_sequence(subset, "subset")
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
        self.num_classes = model.num_classes
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
        """Checked entry point: validates ``x`` (shape, dtype, NaN/inf) and runs the plan in eval mode."""
        x = as_images(x, "x", in_channels=self.in_channels, image_size=self.image_size)
        self.eval()
        return self(x)


class VanillaPlan(nn.Module):
    """The plain backbone (stem, all blocks, final classifier) with a softmax: ``(B, ...) -> (B, C)``."""

    def __init__(self, model: MultiExitNet) -> None:
        super().__init__()
        check_module(model, "model", MultiExitNet)
        self.in_channels = model.in_channels
        self.image_size = model.image_size
        self.num_classes = model.num_classes
        self.stem = model.stem
        self.blocks = nn.Sequential(*model.blocks)
        self.head = model.head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softmax(self.head(self.blocks(self.stem(x))), dim=-1)

    @torch.no_grad()
    def predict_proba(self, x: torch.Tensor) -> torch.Tensor:
        """Checked entry point: validates ``x`` (shape, dtype, NaN/inf) and runs the plan in eval mode."""
        x = as_images(x, "x", in_channels=self.in_channels, image_size=self.image_size)
        self.eval()
        return self(x)


def _example(plan: nn.Module, batch_size: int) -> torch.Tensor:
    check_module(plan, "plan")
    batch_size = validate.positive_int(batch_size, "batch_size")
    c, s = getattr(plan, "in_channels", None), getattr(plan, "image_size", None)
    if c is None or s is None:
        raise TypeError(
            "plan: expected a module with in_channels and image_size (SliePlan, VanillaPlan, ...)"
        )
    device = next(iter(plan.parameters()), torch.zeros(())).device
    return torch.zeros(batch_size, c, s, s, device=device)


def export_program(
    plan: nn.Module, batch_size: int = 1, *, dynamic_batch: bool = False
) -> torch.export.ExportedProgram:
    """``torch.export`` the plan (eval mode): one static ``ExportedProgram``.

    ``dynamic_batch=False``: the batch size is fixed at ``batch_size``; ``True``: the batch axis is
    symbolic (traced at ``max(batch_size, 2)``, since torch.export specialises a size of 1).
    """
    if not isinstance(dynamic_batch, bool):
        raise TypeError(f"dynamic_batch: expected a bool, got {type(dynamic_batch).__name__}")
    example = _example(plan, max(batch_size, 2) if dynamic_batch else batch_size)
    plan.eval()
    kwargs = {}
    if dynamic_batch:
        kwargs["dynamic_shapes"] = ({0: torch.export.Dim("batch", min=1)},)
    with torch.no_grad():
        return torch.export.export(plan, (example,), **kwargs)


@contextlib.contextmanager
def _exporter_notices_filtered() -> Iterator[None]:
    """Hide the exporter's own notices (and nothing else): the legacy-exporter deprecation notice and
    the torchvision-operator notes of the ``torch.onnx`` logger."""
    log = logging.getLogger("torch.onnx")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore",
                message=r"You are using the legacy TorchScript-based ONNX export",
                category=DeprecationWarning,
            )
            warnings.filterwarnings(
                "ignore",
                message=r"The feature will be removed\. Please remove usage of this function",
                category=DeprecationWarning,
            )
            yield
    finally:
        log.setLevel(level)


def _names(values: Sequence[str], name: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise TypeError(f"{name}: expected a non-empty list of names, got {values!r}")
    out = []
    for v in values:
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"{name}: expected non-empty strings, got {v!r}")
        out.append(v)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: expected distinct names, got {out}")
    return out


def export_onnx_module(
    module: nn.Module,
    example: torch.Tensor,
    path: str | Path,
    *,
    input_names: Sequence[str] = ("images",),
    output_names: Sequence[str] = ("probs",),
    opset: int = 18,
    dynamic_batch: bool = False,
    exporter: str = "torchscript",
) -> Path:
    """Export a module (eval mode) to ONNX at ``path`` (``onnx`` extra); returns the path.

    ``example``: an input of the shape to export; ``dynamic_batch=True`` makes axis 0 of every input
    and output symbolic (``"batch"``), else every shape is fixed at the example's. ``exporter``: one of
    :data:`EXPORTERS`, ``"torchscript"`` (default; seconds per graph) or ``"dynamo"`` (the
    ``torch.export``-based one). A failing export raises ``RuntimeError`` naming the exporter; the file
    is checked with ``onnx.checker`` before it is returned.
    """
    import onnx  # fail early with a clear ImportError when the extra is missing

    check_module(module, "module")
    if not isinstance(example, torch.Tensor):
        raise TypeError(f"example: expected a torch.Tensor input, got {type(example).__name__}")
    if example.dim() == 0 or example.shape[0] == 0:
        raise ValueError(f"example: expected a batch of at least one input, got shape {tuple(example.shape)}")
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path: expected a file path, got {type(path).__name__}")
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path: the folder {path.parent} does not exist")
    inputs, outputs = _names(input_names, "input_names"), _names(output_names, "output_names")
    if len(inputs) != 1:
        raise ValueError(f"input_names: expected one name (the module takes one tensor), got {inputs}")
    opset = validate.int_in_range(opset, "opset", 13, 23)
    if not isinstance(dynamic_batch, bool):
        raise TypeError(f"dynamic_batch: expected a bool, got {type(dynamic_batch).__name__}")
    exporter = validate.one_of(exporter, "exporter", EXPORTERS)
    if dynamic_batch and exporter == "dynamo" and example.shape[0] == 1:
        example = example.expand(2, *example.shape[1:]).contiguous()  # torch.export specialises size 1
    module.eval()
    kwargs: dict = dict(input_names=inputs, output_names=outputs, opset_version=opset)
    if exporter == "torchscript":
        if dynamic_batch:
            kwargs["dynamic_axes"] = {n: {0: "batch"} for n in inputs + outputs}
        kwargs["dynamo"] = False
    else:
        if dynamic_batch:
            kwargs["dynamic_shapes"] = ({0: torch.export.Dim("batch", min=1)},)
        kwargs.update(dynamo=True, external_data=False, verbose=False)
    with torch.no_grad(), _exporter_notices_filtered():
        try:
            torch.onnx.export(module, (example,), str(path), **kwargs)
        except Exception as e:  # one exporter, chosen by the caller: its failure is the caller's to see
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            other = "dynamo" if exporter == "torchscript" else "torchscript"
            raise RuntimeError(
                f"export_onnx: the {exporter} exporter failed on {type(module).__name__} "
                f"({type(e).__name__}: {first[:300]}); exporter={other!r} may work"
            ) from e
    onnx.checker.check_model(str(path))
    return path


def export_onnx(
    plan: nn.Module,
    path: str | Path,
    batch_size: int = 1,
    *,
    opset: int = 18,
    dynamic_batch: bool = False,
    exporter: str = "torchscript",
) -> Path:
    """Export a plan to an ONNX file at ``path`` with input ``images`` and output ``probs``.

    ``dynamic_batch=False`` (default): the batch size is fixed at ``batch_size`` (static shapes let
    ONNX Runtime plan memory once, as TensorRT does); ``True``: a symbolic batch axis, so one file
    serves every batch size. Needs the ``onnx`` extra. See :func:`export_onnx_module`.
    """
    return export_onnx_module(
        plan, _example(plan, batch_size), path, opset=opset, dynamic_batch=dynamic_batch, exporter=exporter
    )


def ort_session(
    path: str | Path, *, threads: int = 1, optimize: bool = True, providers: Sequence[str] | None = None
):
    """An ``onnxruntime.InferenceSession`` on ``path``: ``threads`` intra-op threads, sequential
    execution, all graph optimisations when ``optimize``; ``providers``: execution providers in order
    of preference (default ``["CPUExecutionProvider"]``; each must be one that this onnxruntime build
    offers, ``onnxruntime.get_available_providers()``)."""
    import onnxruntime as ort

    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path: expected a path to an .onnx file, got {type(path).__name__}")
    if not Path(path).is_file():
        raise FileNotFoundError(f"path: no ONNX file at {path}")
    threads = validate.positive_int(threads, "threads")
    if not isinstance(optimize, bool):
        raise TypeError(f"optimize: expected a bool, got {type(optimize).__name__}")
    if providers is None:
        providers = ["CPUExecutionProvider"]
    if isinstance(providers, str) or not isinstance(providers, Sequence) or not providers:
        raise TypeError(
            f"providers: expected a non-empty list of execution provider names, got {providers!r}"
        )
    available = ort.get_available_providers()
    for prov in providers:
        if prov not in available:
            raise ValueError(
                f"providers: {prov!r} is not available in this onnxruntime build; available: {available}"
            )
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=list(providers))


class OnnxPlan:
    """An ONNX Runtime session on an exported plan: ``plan(x (B, C, S, S) float32) -> probs (B, C)``.

    ``optimize=True`` enables all graph optimisations; ``threads`` sets intra-op threads;
    ``providers`` the execution providers (default: CPU), see :func:`ort_session`. A graph exported
    with a dynamic batch axis accepts any batch size; a fixed one only its own.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        threads: int = 1,
        optimize: bool = True,
        providers: Sequence[str] | None = None,
    ) -> None:
        self.session = ort_session(path, threads=threads, optimize=optimize, providers=providers)
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        self.input_shape = tuple(d if isinstance(d, int) else None for d in inp.shape)
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.providers = tuple(self.session.get_providers())

    def __call__(self, x: np.ndarray) -> np.ndarray:
        shape = tuple(getattr(x, "shape", ()))
        ok = (
            isinstance(x, np.ndarray)
            and x.dtype == np.float32
            and len(shape) == len(self.input_shape)
            and all(want is None or want == got for want, got in zip(self.input_shape, shape, strict=True))
            and 0 not in shape
        )
        if not ok:
            want = "(" + ", ".join("batch" if d is None else str(d) for d in self.input_shape) + ")"
            raise ValueError(
                f"x: expected a float32 numpy array of shape {want}, got "
                f"{type(x).__name__} {getattr(x, 'dtype', '')} {shape}"
            )
        return self.session.run(self.output_names[:1], {self.input_name: x})[0]
