"""Bandit DS dimension and ListCascade: multiclass PAC learning with bandit feedback (arXiv 2605.25678).

Finite classes on finite domains are ``(|H|, |X|)`` integer arrays of label patterns. The dimensions
(:func:`ds_dimension`, :func:`bandit_ds_dimension`) are computed by exact search and return their witness
(:class:`PseudoBox`); the learners (:class:`ListCascade`, :class:`UniformExploration`,
:class:`FullInformationERM`) run the bandit PAC protocol (:func:`run_protocol`, :func:`sample_complexity`).

Integrations, imported on first use (each needs its extra): :class:`BanditPACLearner` (scikit-learn,
``[sklearn]``), :class:`BanditFeedbackEnv` (gymnasium, ``[gym]``), :class:`VWCbify` and the ``--cbify``
line writers (vowpal wabbit, ``[peer]``; the writers need no extra).
"""

from typing import Any

from ._validate import NonRealizableError
from .classes import (
    ConstructedClass,
    all_functions,
    fixed_ds_family,
    product_class,
    product_dimensions,
    random_class,
    random_label_sets,
    random_subclass,
    two_label_class,
)
from .dimensions import (
    Dimension,
    PseudoBox,
    SearchLimitError,
    bandit_ds_dimension,
    brute_force_dimensions,
    ds_dimension,
    neighbour_counts,
    search_space_size,
)
from .learners import FullInformationERM, ListCascade, UniformExploration, VersionSpace
from .pac import (
    ErrorCurve,
    Stream,
    geometric_weights,
    make_learner,
    measure_sample_complexity,
    run_protocol,
    sample_complexity,
    success_rate,
)

_LAZY = {
    "BanditPACLearner": ".estimator",
    "BanditFeedbackEnv": ".env",
    "VWCbify": ".vw",
    "cbify_lines": ".vw",
    "write_cbify_file": ".vw",
}

__all__ = [
    "BanditFeedbackEnv",
    "BanditPACLearner",
    "ConstructedClass",
    "Dimension",
    "ErrorCurve",
    "FullInformationERM",
    "ListCascade",
    "NonRealizableError",
    "PseudoBox",
    "SearchLimitError",
    "Stream",
    "UniformExploration",
    "VWCbify",
    "VersionSpace",
    "all_functions",
    "bandit_ds_dimension",
    "brute_force_dimensions",
    "cbify_lines",
    "ds_dimension",
    "fixed_ds_family",
    "geometric_weights",
    "make_learner",
    "measure_sample_complexity",
    "neighbour_counts",
    "product_class",
    "product_dimensions",
    "random_class",
    "random_label_sets",
    "random_subclass",
    "run_protocol",
    "sample_complexity",
    "search_space_size",
    "success_rate",
    "two_label_class",
    "write_cbify_file",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name], __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
