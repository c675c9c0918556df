"""Offline decision-estimation under Q*-approximation and partial coverage (Liu, Snyder and Wei, arXiv
2602.12107),
made executable on tabular and linear-feature MDPs: soft Q-learning, CQL, LCB and greedy FQI offline, the
decision-estimation objective on finite classes, a lower-bound construction with direct checks, exact DP
evaluation of every returned policy."""

from .algorithms import CQL, FQI, LCB, FitResult, SoftQ, cql_penalty, cql_penalty_grad, one_hot_features
from .data import (
    OfflineDataset,
    collect_dataset,
    concentrability,
    covering_behaviour,
    partial_support_behaviour,
)
from .decision import dec_objective, dec_policy, excess_td_loss, gde_policy, version_space
from .lower_bound import (
    LowerBoundPair,
    completeness_residual,
    data_log_likelihood,
    lower_bound_pair,
    optimal_actions,
    realisability_residual,
    span_residual,
)
from .mdp import TabularMDP, chain_mdp, combination_lock, garnet_mdp, greedy_policy, softmax_policy

__all__ = [
    "CQL",
    "FQI",
    "LCB",
    "FitResult",
    "LowerBoundPair",
    "OfflineDataset",
    "SoftQ",
    "TabularMDP",
    "chain_mdp",
    "collect_dataset",
    "combination_lock",
    "completeness_residual",
    "concentrability",
    "covering_behaviour",
    "cql_penalty",
    "cql_penalty_grad",
    "data_log_likelihood",
    "dec_objective",
    "dec_policy",
    "excess_td_loss",
    "garnet_mdp",
    "gde_policy",
    "greedy_policy",
    "lower_bound_pair",
    "one_hot_features",
    "optimal_actions",
    "partial_support_behaviour",
    "realisability_residual",
    "softmax_policy",
    "span_residual",
    "version_space",
]
