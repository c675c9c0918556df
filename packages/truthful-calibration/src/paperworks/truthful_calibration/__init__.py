"""Truthful calibration errors (arXiv 2510.06388) and the standard ECEs they are compared with.

Pure functions take ``probs`` (n, k) and ``labels`` (n,) as NumPy arrays or torch tensors and return
floats; the classes accumulate batches with ``update`` and return the error with ``compute``.
"""

from .binning import equal_mass_bins, equal_width_bins, kd_bins
from .metrics import (
    ClasswiseECE,
    SmoothECE,
    TopLabelECE,
    TruthfulClasswiseError,
    TruthfulConfidenceError,
    TruthfulMulticlassError,
    TruthfulPropertyError,
)
from .ranking import kendall_tau, ranking_stability
from .standard import classwise_ece, smooth_ece, top_label_ece
from .synthetic import BlackwellProblem, blackwell_problem, distort, sample_labels, softmax_problem
from .truthful import (
    truthful_classwise_error,
    truthful_confidence_error,
    truthful_multiclass_error,
    truthful_property_error,
)

__all__ = [
    "BlackwellProblem",
    "ClasswiseECE",
    "SmoothECE",
    "TopLabelECE",
    "TruthfulClasswiseError",
    "TruthfulConfidenceError",
    "TruthfulMulticlassError",
    "TruthfulPropertyError",
    "blackwell_problem",
    "classwise_ece",
    "distort",
    "equal_mass_bins",
    "equal_width_bins",
    "kd_bins",
    "kendall_tau",
    "ranking_stability",
    "sample_labels",
    "smooth_ece",
    "softmax_problem",
    "top_label_ece",
    "truthful_classwise_error",
    "truthful_confidence_error",
    "truthful_multiclass_error",
    "truthful_property_error",
]
