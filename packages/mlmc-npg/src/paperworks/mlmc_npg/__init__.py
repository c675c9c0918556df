"""MLMC-NPG: natural policy gradient with multilevel Monte Carlo scalarisation gradients (arXiv 2603.08518).

Concave multi-objective RL maximises ``f(J_1^pi, ..., J_M^pi)``; the policy gradient needs
``grad f(J^pi)``, whose plug-in estimate ``grad f(J_hat)`` is biased. This package provides the
scalarisations, the plug-in and MLMC weight estimators, tabular MDPs with exact evaluators, the NPG
algorithms (oracle, plug-in, MLMC, plug-in PG) and an agent for gymnasium / mo-gymnasium environments.
"""

from .agents import MLMCNPGAgent, state_index
from .algorithms import METHODS, NPGConfig, NPGTrace, optimal_value, rollouts_to_accuracy, run_npg
from .estimators import (
    GaussianReturns,
    MLMCEstimator,
    ReturnSampler,
    WeightEstimate,
    mlmc_max_level,
    plugin_weights,
)
from .mdp import PolicyEvaluation, TabularMOMDP, kinked_problem, pareto_vertices, random_mdp, solve_linear
from .policy import (
    compatible_npg_direction,
    fisher_matrix,
    log_policy_features,
    npg_step,
    policy_gradient,
    softmax_policy,
)
from .scalarization import (
    ConcaveScalarization,
    NonConcaveError,
    check_concave,
    exponential_utility,
    kinked_utility,
    linear_utility,
    proportional_fairness,
)

__all__ = [
    "METHODS",
    "ConcaveScalarization",
    "GaussianReturns",
    "MLMCEstimator",
    "MLMCNPGAgent",
    "NPGConfig",
    "NPGTrace",
    "NonConcaveError",
    "PolicyEvaluation",
    "ReturnSampler",
    "TabularMOMDP",
    "WeightEstimate",
    "check_concave",
    "compatible_npg_direction",
    "exponential_utility",
    "fisher_matrix",
    "kinked_problem",
    "kinked_utility",
    "linear_utility",
    "log_policy_features",
    "mlmc_max_level",
    "npg_step",
    "optimal_value",
    "pareto_vertices",
    "plugin_weights",
    "policy_gradient",
    "proportional_fairness",
    "random_mdp",
    "rollouts_to_accuracy",
    "run_npg",
    "softmax_policy",
    "solve_linear",
    "state_index",
]
