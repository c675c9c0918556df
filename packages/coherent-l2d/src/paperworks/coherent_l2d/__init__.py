"""Coherent hierarchical multi-label learning to defer (arXiv 2605.02734): the Selective-Exclusion
contract and its checker, exact coherent projection by tree DP, Taxonomic Belief Propagation trained by
Recursive Policy Optimisation, binary-relevance L2D, generated data with controlled experts."""

from typing import Any

from .contract import ACTIONS, COMPATIBLE, DEFER, NEG, POS, VIOLATIONS, check_actions, is_coherent, violations
from .data import ControlledExpert, HierarchicalLabelModel, realized_utilities
from .io import load_chexpert_labels
from .l2d import BRL2D, TBPRPO
from .projection import coherent_projection, expected_utilities, joint_utility, nodewise_actions
from .taxonomy import CHEST_XRAY, Taxonomy, chest_xray_taxonomy, random_taxonomy
from .tbp import tbp_expected_utility, tbp_log_partition, tbp_marginals

__all__ = [
    "ACTIONS",
    "BRL2D",
    "CHEST_XRAY",
    "COMPATIBLE",
    "DEFER",
    "NEG",
    "POS",
    "TBPRPO",
    "VIOLATIONS",
    "CoherentL2D",
    "ControlledExpert",
    "HierarchicalLabelModel",
    "Taxonomy",
    "check_actions",
    "chest_xray_taxonomy",
    "coherent_projection",
    "expected_utilities",
    "is_coherent",
    "joint_utility",
    "load_chexpert_labels",
    "nodewise_actions",
    "random_taxonomy",
    "realized_utilities",
    "tbp_expected_utility",
    "tbp_log_partition",
    "tbp_marginals",
    "violations",
]


def __getattr__(name: str) -> Any:
    if name == "CoherentL2D":  # scikit-learn is the `sklearn` extra: imported on first use
        try:
            from .estimator import CoherentL2D
        except ImportError as e:
            raise ImportError(
                "CoherentL2D needs scikit-learn: pip install 'paperworks-coherent-l2d[sklearn]'"
            ) from e
        return CoherentL2D
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
