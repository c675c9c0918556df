"""Stateful metric classes in torchmetrics' shape: ``update(probs, labels)`` accumulates batches,
``compute()`` returns the error over everything seen, ``reset()`` clears; calling the object on a
batch updates it and returns that batch's value (like ``Metric.forward``).

Binned errors need the whole sample (the bins are quantiles of it), so the state is the
concatenated predictions and labels. Inputs are NumPy arrays or torch tensors; values are floats.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._inputs import as_labels, as_probs
from .standard import _check_opts, classwise_ece, smooth_ece, top_label_ece
from .truthful import (
    truthful_classwise_error,
    truthful_confidence_error,
    truthful_multiclass_error,
    truthful_property_error,
)

__all__ = [
    "ClasswiseECE",
    "SmoothECE",
    "TopLabelECE",
    "TruthfulClasswiseError",
    "TruthfulConfidenceError",
    "TruthfulMulticlassError",
    "TruthfulPropertyError",
]


class _CalibrationMetric:
    """Accumulates (probs, labels) batches; subclasses name the function and its options."""

    _fn: Callable[..., float]

    def __init__(self, num_classes: int | None = None, *, atol: float = 1e-4, **options: Any) -> None:
        if num_classes is not None and (
            isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2
        ):
            raise ValueError(f"num_classes: expected an int >= 2 or None, got {num_classes!r}")
        self.num_classes = num_classes
        self.atol = atol
        self.options = options
        self.reset()

    def reset(self) -> None:
        self._probs: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []

    def _check(self, probs: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
        p = as_probs(probs, atol=self.atol)
        k = p.shape[1]
        expected = self.num_classes or (self._probs[0].shape[1] if self._probs else k)
        if k != expected:
            raise ValueError(f"probs: expected {expected} classes (columns), got {k}")
        return p, as_labels(labels, p.shape[0], k)

    def update(self, probs: Any, labels: Any) -> None:
        """Add a batch: probs (b, k), labels (b,)."""
        p, y = self._check(probs, labels)
        self._probs.append(p)
        self._labels.append(y)

    def compute(self) -> float:
        """The error over all batches seen since the last reset."""
        if not self._probs:
            raise ValueError(f"{type(self).__name__}.compute: no samples; call update() first")
        p = np.concatenate(self._probs)
        y = np.concatenate(self._labels)
        return type(self)._fn(p, y, atol=self.atol, **self.options)

    def __call__(self, probs: Any, labels: Any) -> float:
        p, y = self._check(probs, labels)
        self._probs.append(p)
        self._labels.append(y)
        return type(self)._fn(p, y, atol=self.atol, **self.options)

    forward = __call__

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({opts})"


class TruthfulClasswiseError(_CalibrationMetric):
    """Stateful :func:`truthful_classwise_error`. ``TruthfulClasswiseError(num_classes=None, n_bins=10)``."""

    _fn = staticmethod(truthful_classwise_error)

    def __init__(self, num_classes: int | None = None, n_bins: int = 10, *, atol: float = 1e-4) -> None:
        super().__init__(num_classes, atol=atol, n_bins=n_bins)


class TruthfulMulticlassError(_CalibrationMetric):
    """Stateful :func:`truthful_multiclass_error` (``n_bins`` a power of two)."""

    _fn = staticmethod(truthful_multiclass_error)

    def __init__(self, num_classes: int | None = None, n_bins: int = 8, *, atol: float = 1e-4) -> None:
        super().__init__(num_classes, atol=atol, n_bins=n_bins)


class TruthfulConfidenceError(_CalibrationMetric):
    """Stateful :func:`truthful_confidence_error` (corrected confidence error)."""

    _fn = staticmethod(truthful_confidence_error)

    def __init__(
        self, num_classes: int | None = None, n_bins: int = 10, *, corrected: bool = True, atol: float = 1e-4
    ) -> None:
        super().__init__(num_classes, atol=atol, n_bins=n_bins, corrected=corrected)


class TruthfulPropertyError(_CalibrationMetric):
    """Stateful :func:`truthful_property_error` for a property matrix ``A`` of shape (d, k)."""

    _fn = staticmethod(truthful_property_error)

    def __init__(self, property_matrix: Any, n_bins: int = 8, *, atol: float = 1e-4) -> None:
        a = np.atleast_2d(np.asarray(property_matrix, dtype=float))
        super().__init__(a.shape[1], atol=atol, n_bins=n_bins)
        self.property_matrix = a

    def compute(self) -> float:
        if not self._probs:
            raise ValueError("TruthfulPropertyError.compute: no samples; call update() first")
        p, y = np.concatenate(self._probs), np.concatenate(self._labels)
        return truthful_property_error(p, y, self.property_matrix, atol=self.atol, **self.options)

    def __call__(self, probs: Any, labels: Any) -> float:
        p, y = self._check(probs, labels)
        self._probs.append(p)
        self._labels.append(y)
        return truthful_property_error(p, y, self.property_matrix, atol=self.atol, **self.options)

    forward = __call__


class TopLabelECE(_CalibrationMetric):
    """Stateful :func:`top_label_ece` (torchmetrics' ``MulticlassCalibrationError`` counterpart)."""

    _fn = staticmethod(top_label_ece)

    def __init__(
        self,
        num_classes: int | None = None,
        n_bins: int = 15,
        *,
        binning: str = "width",
        norm: str = "l1",
        atol: float = 1e-4,
    ) -> None:
        _check_opts(binning, norm)
        super().__init__(num_classes, atol=atol, n_bins=n_bins, binning=binning, norm=norm)


class ClasswiseECE(_CalibrationMetric):
    """Stateful :func:`classwise_ece`."""

    _fn = staticmethod(classwise_ece)

    def __init__(
        self, num_classes: int | None = None, n_bins: int = 15, *, binning: str = "width", atol: float = 1e-4
    ) -> None:
        _check_opts(binning)
        super().__init__(num_classes, atol=atol, n_bins=n_bins, binning=binning)


class SmoothECE(_CalibrationMetric):
    """Stateful :func:`smooth_ece`."""

    _fn = staticmethod(smooth_ece)

    def __init__(self, num_classes: int | None = None, *, grid: int = 128, atol: float = 1e-4) -> None:
        super().__init__(num_classes, atol=atol, grid=grid)
