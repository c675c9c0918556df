"""Stochastic Dinkelbach-root: online learning of F-measure, Jaccard and other linear-fractional metrics.

Metrics (:func:`get_metric`, :class:`LinearFractionalMetric`), the online threshold learners
(:class:`DinkelbachTracker`, :func:`ofo_tracker`, :class:`OnlineConcaveUtility`), the batch Dinkelbach
method and best fixed threshold on a sample, an online logistic regression, the scikit-learn / river-style
:class:`DinkelbachClassifier`, the exact ETU-optimal F1 predictor, and a generator with known
``P(y = 1 | x)``. The headline experiment is
:class:`paperworks.stochastic_dinkelbach.experiments.StochasticDinkelbachExperiment`.
"""

from .classifier import DinkelbachClassifier
from .dinkelbach import DinkelbachResult, best_fixed_threshold, dinkelbach_root, threshold_counts
from .estimators import OnlineLogisticRegression, prequential_logistic
from .etu import etu_expected_f1, etu_optimal_f1, expected_f1
from .metrics import CELLS, LinearFractionalMetric, confusion_counts, fbeta, get_metric, metric_names
from .online import (
    CONCAVE_UTILITIES,
    ConcaveUtility,
    DinkelbachTracker,
    OnlineConcaveUtility,
    StreamResult,
    ofo_tracker,
    run_trackers,
)
from .synthetic import GaussianStream, PUOptimum

__all__ = [
    "CELLS",
    "CONCAVE_UTILITIES",
    "ConcaveUtility",
    "DinkelbachClassifier",
    "DinkelbachResult",
    "DinkelbachTracker",
    "GaussianStream",
    "LinearFractionalMetric",
    "OnlineConcaveUtility",
    "OnlineLogisticRegression",
    "PUOptimum",
    "StreamResult",
    "best_fixed_threshold",
    "confusion_counts",
    "dinkelbach_root",
    "etu_expected_f1",
    "etu_optimal_f1",
    "expected_f1",
    "fbeta",
    "get_metric",
    "metric_names",
    "ofo_tracker",
    "prequential_logistic",
    "run_trackers",
    "threshold_counts",
]
