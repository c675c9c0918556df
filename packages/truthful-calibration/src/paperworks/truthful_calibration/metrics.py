"""``torchmetrics.Metric`` subclasses for every error of the package (the ``torch`` extra).

They are real torchmetrics metrics: child modules of a ``LightningModule``, members of a
``MetricCollection``, moved by ``.to()``, and synchronised across processes under DDP through their
states' ``dist_reduce_fx``. ``update(probs, labels)`` takes tensors (or NumPy arrays), ``compute()``
returns a 0-d tensor of the metric's dtype on its device, ``forward`` returns the batch's value and
accumulates it (``full_state_update=False``).

States. The equal-width top-label ECE and the smooth ECE have sufficient statistics of fixed size,
summed across batches and processes (``dist_reduce_fx="sum"``): per bin the count, the confidence
sum and the hit sum; per grid node the residual sum. Every other error needs the whole sample (its
bins are quantiles of it, or it sorts it), so its states are the predictions and labels themselves,
concatenated (``dist_reduce_fx="cat"``), and ``compute`` runs the NumPy function on them.

``validate_args=True`` (the default, as in torchmetrics) checks every batch with the functions'
checks, which copies it to the host; ``False`` skips them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from torchmetrics import Metric
from torchmetrics.utilities.data import dim_zero_cat

from paperworks.core.validate import int_in_range

from ._inputs import as_labels, as_probs, as_property_matrix, check_atol, check_n_bins
from .atb import classwise_atb, confidence_atb, multiclass_atb
from .standard import _smooth_from_mass, check_grid, check_opts, classwise_ece, top_label_ece
from .truthful import (
    _power_of_two,
    truthful_classwise_error,
    truthful_confidence_error,
    truthful_multiclass_error,
    truthful_property_error,
)

__all__ = [
    "ClasswiseATB",
    "ClasswiseECE",
    "ConfidenceATB",
    "MulticlassATB",
    "SmoothECE",
    "TopLabelECE",
    "TruthfulClasswiseError",
    "TruthfulConfidenceError",
    "TruthfulMulticlassError",
    "TruthfulPropertyError",
]


class _CalibrationMetric(Metric):
    """Common arguments and input checks; subclasses add their states."""

    is_differentiable: ClassVar[bool] = False
    higher_is_better: ClassVar[bool] = False
    full_state_update: ClassVar[bool] = False
    plot_lower_bound: ClassVar[float] = 0.0

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        atol: float | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = None if num_classes is None else int_in_range(num_classes, "num_classes", 2)
        self.atol = check_atol(atol)
        if not isinstance(validate_args, bool):
            raise TypeError(f"validate_args: expected a bool, got {validate_args!r}")
        self.validate_args = validate_args

    def _inputs(self, probs: Any, labels: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(probs, labels) as tensors on the metric's device, checked when ``validate_args``."""
        if self.validate_args:
            p = as_probs(probs, atol=self.atol)
            k = self._expected_classes()
            if k is not None and p.shape[1] != k:
                raise ValueError(f"probs: expected {k} classes (columns), got {p.shape[1]}")
            y = as_labels(labels, *p.shape)
            if not isinstance(probs, torch.Tensor):
                probs = torch.from_numpy(p)
            if not isinstance(labels, torch.Tensor):
                labels = torch.from_numpy(np.asarray(y, dtype=np.int64))
        probs = torch.as_tensor(probs, device=self.device).detach()  # no autograd graph kept in the states
        labels = torch.as_tensor(labels, device=self.device).detach().long()
        return probs, labels

    def _expected_classes(self) -> int | None:
        return self.num_classes

    def _scalar(self, value: float) -> torch.Tensor:
        return torch.tensor(value, dtype=self.dtype, device=self.device)


class _WholeSample(_CalibrationMetric):
    """Keeps every batch (cat states); ``compute`` applies ``_fn`` to the concatenation."""

    def __init__(self, num_classes: int | None = None, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        self.add_state("probs", default=[], dist_reduce_fx="cat")
        self.add_state("labels", default=[], dist_reduce_fx="cat")

    def _expected_classes(self) -> int | None:
        if self.num_classes is not None:
            return self.num_classes
        return int(self.probs[0].shape[1]) if isinstance(self.probs, list) and self.probs else None

    def update(self, probs: Any, labels: Any) -> None:
        """Add a batch: probs (b, k), labels (b,)."""
        p, y = self._inputs(probs, labels)
        self.probs.append(p)
        self.labels.append(y)

    def compute(self) -> torch.Tensor:
        """The error over every batch seen (on every process) since the last reset."""
        if isinstance(self.probs, list) and not self.probs:
            raise ValueError(f"{type(self).__name__}.compute: no samples; call update() first")
        p = dim_zero_cat(self.probs).detach().cpu()
        if p.dtype in (torch.float16, torch.bfloat16):
            p = p.float()
        y = dim_zero_cat(self.labels).detach().cpu().numpy()
        return self._scalar(self._fn(p.numpy(), y))

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:  # pragma: no cover - every subclass sets it
        raise AssertionError("subclass must define _fn")


class TruthfulClasswiseError(_WholeSample):
    """:func:`~paperworks.truthful_calibration.truthful_classwise_error` over every batch.

    ``TruthfulClasswiseError(num_classes=None, n_bins=10, *, atol=None, validate_args=True)``.
    """

    def __init__(self, num_classes: int | None = None, n_bins: int = 10, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        self.n_bins = check_n_bins(n_bins)

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return truthful_classwise_error(p, y, self.n_bins, atol=self.atol)


class TruthfulMulticlassError(_WholeSample):
    """:func:`~paperworks.truthful_calibration.truthful_multiclass_error` (``n_bins`` a power of two)."""

    def __init__(self, num_classes: int | None = None, n_bins: int = 8, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        self.n_bins = _power_of_two(check_n_bins(n_bins))

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return truthful_multiclass_error(p, y, self.n_bins, atol=self.atol)


class TruthfulConfidenceError(_WholeSample):
    """:func:`~paperworks.truthful_calibration.truthful_confidence_error` (corrected confidence error)."""

    def __init__(
        self, num_classes: int | None = None, n_bins: int = 10, *, corrected: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(num_classes, **kwargs)
        self.n_bins = check_n_bins(n_bins)
        if not isinstance(corrected, bool):
            raise TypeError(f"corrected: expected a bool, got {corrected!r}")
        self.corrected = corrected

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return truthful_confidence_error(p, y, self.n_bins, corrected=self.corrected, atol=self.atol)


class TruthfulPropertyError(_WholeSample):
    """:func:`~paperworks.truthful_calibration.truthful_property_error` of ``A p``, ``A`` (d, k)."""

    def __init__(self, property_matrix: Any, n_bins: int = 8, **kwargs: Any) -> None:
        a = as_property_matrix(property_matrix, None)
        super().__init__(a.shape[1], **kwargs)
        self.property_matrix = a
        self.n_bins = check_n_bins(n_bins)
        if self.property_matrix.shape[0] > 1:
            _power_of_two(self.n_bins)

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return truthful_property_error(p, y, self.property_matrix, self.n_bins, atol=self.atol)


class ClasswiseATB(_WholeSample):
    """:func:`~paperworks.truthful_calibration.classwise_atb` over every batch (no bins)."""

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return classwise_atb(p, y, atol=self.atol)


class MulticlassATB(_WholeSample):
    """:func:`~paperworks.truthful_calibration.multiclass_atb`; ``property_matrix=None``: full multiclass."""

    def __init__(self, num_classes: int | None = None, property_matrix: Any = None, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        self.property_matrix = None
        if property_matrix is not None:
            self.property_matrix = as_property_matrix(property_matrix, self.num_classes, varying=True)
            self.num_classes = self.property_matrix.shape[1]

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return multiclass_atb(p, y, self.property_matrix, atol=self.atol)


class ConfidenceATB(_WholeSample):
    """:func:`~paperworks.truthful_calibration.confidence_atb` (corrected by default)."""

    def __init__(self, num_classes: int | None = None, *, corrected: bool = True, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        if not isinstance(corrected, bool):
            raise TypeError(f"corrected: expected a bool, got {corrected!r}")
        self.corrected = corrected

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return confidence_atb(p, y, corrected=self.corrected, atol=self.atol)


class ClasswiseECE(_WholeSample):
    """:func:`~paperworks.truthful_calibration.classwise_ece` over every batch."""

    def __init__(
        self, num_classes: int | None = None, n_bins: int = 15, *, binning: str = "width", **kwargs: Any
    ) -> None:
        super().__init__(num_classes, **kwargs)
        self.binning, _ = check_opts(binning)
        self.n_bins = check_n_bins(n_bins)

    def _fn(self, p: np.ndarray, y: np.ndarray) -> float:
        return classwise_ece(p, y, self.n_bins, binning=self.binning, atol=self.atol)


def _top(probs: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(confidence as float64, hit as float64): the first maximal class, as NumPy's argmax picks it."""
    top = probs.argmax(dim=1)
    conf = probs.gather(1, top[:, None])[:, 0].double()
    return conf, (top == labels).double()


class TopLabelECE(_CalibrationMetric):
    """:func:`~paperworks.truthful_calibration.top_label_ece` over every batch (the counterpart of
    torchmetrics' ``MulticlassCalibrationError``).

    ``binning="width"`` keeps per-bin sums (count, confidence, hits; summed across processes), so its
    memory does not grow with the data; ``binning="mass"`` keeps the batches (cat states).
    """

    def __init__(
        self,
        num_classes: int | None = None,
        n_bins: int = 15,
        *,
        binning: str = "width",
        norm: str = "l1",
        **kwargs: Any,
    ) -> None:
        super().__init__(num_classes, **kwargs)
        self.binning, self.norm = check_opts(binning, norm)
        self.n_bins = check_n_bins(n_bins)
        if self.binning == "width":
            m = self.n_bins
            self.add_state("count", default=torch.zeros(m, dtype=torch.long), dist_reduce_fx="sum")
            self.add_state("conf_sum", default=torch.zeros(m, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state("hit_sum", default=torch.zeros(m, dtype=torch.float64), dist_reduce_fx="sum")
        else:
            self.add_state("probs", default=[], dist_reduce_fx="cat")
            self.add_state("labels", default=[], dist_reduce_fx="cat")

    def update(self, probs: Any, labels: Any) -> None:
        """Add a batch: probs (b, k), labels (b,)."""
        p, y = self._inputs(probs, labels)
        if self.binning == "mass":
            self.probs.append(p)
            self.labels.append(y)
            return
        m = self.n_bins
        conf, hit = _top(p, y)
        bins = (conf * m).long().clamp_(max=m - 1)
        self.count += torch.bincount(bins, minlength=m)
        self.conf_sum += torch.bincount(bins, weights=conf, minlength=m).to(self.conf_sum.dtype)
        self.hit_sum += torch.bincount(bins, weights=hit, minlength=m).to(self.hit_sum.dtype)

    def compute(self) -> torch.Tensor:
        """The ECE over every batch seen (on every process) since the last reset."""
        if self.binning == "mass":
            if isinstance(self.probs, list) and not self.probs:
                raise ValueError("TopLabelECE.compute: no samples; call update() first")
            p = dim_zero_cat(self.probs).detach().cpu().float().numpy()
            y = dim_zero_cat(self.labels).detach().cpu().numpy()
            return self._scalar(
                top_label_ece(p, y, self.n_bins, binning="mass", norm=self.norm, atol=self.atol)
            )
        n = int(self.count.sum())
        if n == 0:
            raise ValueError("TopLabelECE.compute: no samples; call update() first")
        gap = (self.hit_sum - self.conf_sum).double()
        if self.norm == "l1":
            value = float(gap.abs().sum()) / n
        else:
            safe = self.count.clamp(min=1).double()
            value = float(torch.sqrt((gap**2 / safe).sum() / n))
        return self._scalar(value)


class SmoothECE(_CalibrationMetric):
    """:func:`~paperworks.truthful_calibration.smooth_ece` over every batch: the per-node residual sums
    on the confidence grid are summed across batches and processes."""

    def __init__(self, num_classes: int | None = None, *, grid: int = 128, **kwargs: Any) -> None:
        super().__init__(num_classes, **kwargs)
        self.grid = check_grid(grid)
        self.add_state("mass", default=torch.zeros(self.grid, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("total", default=torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")

    def update(self, probs: Any, labels: Any) -> None:
        """Add a batch: probs (b, k), labels (b,)."""
        p, y = self._inputs(probs, labels)
        conf, hit = _top(p, y)
        node = (conf * self.grid).long().clamp_(max=self.grid - 1)
        self.mass += torch.bincount(node, weights=hit - conf, minlength=self.grid).to(self.mass.dtype)
        self.total += y.shape[0]

    def compute(self) -> torch.Tensor:
        """The smooth ECE over every batch seen (on every process) since the last reset."""
        n = int(self.total)
        if n == 0:
            raise ValueError("SmoothECE.compute: no samples; call update() first")
        mass = self.mass.detach().cpu().double().numpy()[None, :] / n
        return self._scalar(float(_smooth_from_mass(mass)[0]))
