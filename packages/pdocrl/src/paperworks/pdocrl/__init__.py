"""PDOCRL: primal-dual offline constrained RL on a decomposed LP under partial data coverage
(arXiv 2505.17506), with the exact CMDP LP as ground truth, tabular baselines and the spurious-saddle example.
"""

from .baselines import (
    CBPL,
    GRIDS,
    PDCA,
    BCQLagrangian,
    COptiDICE,
    EmpiricalLP,
    imputed_counts,
)
from .cmdp import TabularCMDP, check_policy, garnet_cmdp, gridworld_cmdp
from .data import (
    DatasetCounts,
    OfflineDataset,
    collect_dataset,
    concentrability,
    load_dsrl_npz,
    partial_coverage_behaviour,
    save_dsrl_npz,
)
from .lagrangian import (
    LinearQClass,
    SaddleSolution,
    lagrangian,
    lagrangian_gradients,
    lagrangian_reward,
    restricted_saddle,
    tabular_saddle,
)
from .lp import InfeasibleBudgetError, LPSolution, min_costs, slater_bound, solve_empirical_lp, solve_lp
from .pdocrl import PDOCRL, PDOCRLConfig, PolicyMixture, Problem, q_box
from .saddle import gradient_saddle_solver, naive_q_class, restricted_best_response_value, spurious_example

__all__ = [
    "BCQLagrangian",
    "CBPL",
    "COptiDICE",
    "DatasetCounts",
    "EmpiricalLP",
    "GRIDS",
    "InfeasibleBudgetError",
    "LPSolution",
    "LinearQClass",
    "OfflineDataset",
    "PDCA",
    "PDOCRL",
    "PDOCRLConfig",
    "PolicyMixture",
    "Problem",
    "SaddleSolution",
    "TabularCMDP",
    "check_policy",
    "collect_dataset",
    "concentrability",
    "garnet_cmdp",
    "gradient_saddle_solver",
    "gridworld_cmdp",
    "imputed_counts",
    "lagrangian",
    "lagrangian_gradients",
    "lagrangian_reward",
    "load_dsrl_npz",
    "min_costs",
    "naive_q_class",
    "partial_coverage_behaviour",
    "q_box",
    "restricted_best_response_value",
    "restricted_saddle",
    "save_dsrl_npz",
    "slater_bound",
    "solve_empirical_lp",
    "solve_lp",
    "spurious_example",
    "tabular_saddle",
]
