"""Truthful calibration errors (arXiv 2510.06388), the averaged two-bin error of Hartline et al.
(arXiv 2508.13100), and the standard ECEs they are compared with.

Pure functions take ``probs`` (n, k) and ``labels`` (n,) as NumPy arrays or torch tensors and return
floats. The metric classes (``TruthfulClasswiseError``, ``TopLabelECE``, ...) are
``torchmetrics.Metric`` subclasses from :mod:`paperworks.truthful_calibration.metrics`; they need the
``torch`` extra and are imported on first use, so the functions work without torch.
"""

from __future__ import annotations

from typing import Any

from .atb import binary_atb, classwise_atb, confidence_atb, multiclass_atb
from .binning import equal_mass_bins, equal_width_bins, kd_bins
from .ranking import kendall_tau, ranking_stability
from .standard import classwise_ece, smooth_ece, top_label_ece
from .synthetic import (
    BlackwellProblem,
    SoftmaxTask,
    blackwell_problem,
    distort,
    sample_labels,
    softmax_problem,
    softmax_task,
)
from .truthful import (
    truthful_classwise_error,
    truthful_confidence_error,
    truthful_multiclass_error,
    truthful_property_error,
)

METRICS = (
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
)


def __getattr__(name: str) -> Any:
    if name in METRICS:
        try:
            from . import metrics
        except ImportError as err:
            raise ImportError(
                f"{name} is a torchmetrics.Metric and needs torch and torchmetrics: "
                f"pip install 'paperworks-truthful-calibration[torch]' ({err})"
            ) from err
        return getattr(metrics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    *METRICS,
    "BlackwellProblem",
    "SoftmaxTask",
    "binary_atb",
    "blackwell_problem",
    "classwise_atb",
    "classwise_ece",
    "confidence_atb",
    "distort",
    "equal_mass_bins",
    "equal_width_bins",
    "kd_bins",
    "kendall_tau",
    "multiclass_atb",
    "ranking_stability",
    "sample_labels",
    "smooth_ece",
    "softmax_problem",
    "softmax_task",
    "top_label_ece",
    "truthful_classwise_error",
    "truthful_confidence_error",
    "truthful_multiclass_error",
    "truthful_property_error",
]
