"""SquareCB.Comb: contextual combinatorial semi-bandits with regression oracles.

Each round the agent predicts every arm's reward with an online regression oracle, computes the
inclusion marginals of an action of at most ``m`` arms (the log-barrier convex program, or the
closed-form inverse-gap weighting that is SquareCB's at ``m = 1``), samples an action with those
marginals and learns from the played arms' rewards.
"""

from .agent import EXPLORATIONS, CombinatorialAgent, SquareCBComb, SquareCBCombConfig, gamma_schedule
from .baselines import CombLinTS, CombLinUCB, EpsilonGreedyTopM, PerSlotIGW
from .environment import KINDS, EnvironmentConfig, SemiBanditEnvironment, check_action
from .igw import igw_marginals, inverse_gap_weighting
from .oracles import LinearOracle, MLPOracle, RandomFeaturesOracle, RegressionOracle
from .program import MarginalSolution, check_program_args, kkt_residuals, program_objective, solve_marginals
from .sampling import sample_subset
from .simulate import SimulationResult, simulate

__all__ = [
    "EXPLORATIONS",
    "KINDS",
    "CombLinTS",
    "CombLinUCB",
    "CombinatorialAgent",
    "EnvironmentConfig",
    "EpsilonGreedyTopM",
    "LinearOracle",
    "MLPOracle",
    "MarginalSolution",
    "PerSlotIGW",
    "RandomFeaturesOracle",
    "RegressionOracle",
    "SemiBanditEnvironment",
    "SimulationResult",
    "SquareCBComb",
    "SquareCBCombConfig",
    "check_action",
    "check_program_args",
    "gamma_schedule",
    "igw_marginals",
    "inverse_gap_weighting",
    "kkt_residuals",
    "program_objective",
    "sample_subset",
    "simulate",
    "solve_marginals",
]
