"""DCMOML: decision-conditioned masked-outcome meta-learning of heterogeneous linear price responses under
cross-task confounding (arXiv 2602.09969), with its closed-form identification target on a Gaussian generator.
"""

from .baselines import linear_dml, mixed_model, per_task_ols, pooled_ols
from .estimator import MaskedOutcomeMetaLearner, select_meta
from .generator import DemandConfig, DemandPanel, generate_panel, posterior_theta
from .metalearner import FittedMeta, MetaConfig, MetaNet, fit_meta, masked_loss
from .panel import check_panel_arrays, load_online_retail, panel_from_long, panel_to_long

__all__ = [
    "DemandConfig",
    "DemandPanel",
    "FittedMeta",
    "MaskedOutcomeMetaLearner",
    "MetaConfig",
    "MetaNet",
    "check_panel_arrays",
    "fit_meta",
    "generate_panel",
    "linear_dml",
    "load_online_retail",
    "masked_loss",
    "mixed_model",
    "panel_from_long",
    "panel_to_long",
    "per_task_ols",
    "pooled_ols",
    "posterior_theta",
    "select_meta",
]
