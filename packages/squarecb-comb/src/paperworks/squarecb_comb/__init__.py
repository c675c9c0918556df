"""SquareCB.Comb: contextual combinatorial semi-bandits with regression oracles.

Each round the agent predicts every arm's reward with an online regression oracle, solves a
log-barrier (inverse-gap-weighting) convex program over the marginals of actions of at most ``m``
arms, samples an action with those marginals and learns from the played arms' rewards.
"""

from .agent import CombinatorialAgent, SquareCBComb, SquareCBCombConfig, gamma_schedule
from .baselines import CombLinTS, CombLinUCB, EpsilonGreedyTopM, PerArmSquareCB, inverse_gap_weighting
from .environment import EnvironmentConfig, SemiBanditEnvironment
from .oracles import LinearOracle, MLPOracle, RandomFeaturesOracle, RegressionOracle
from .program import MarginalSolution, kkt_residuals, program_objective, solve_marginals
from .sampling import sample_subset
from .simulate import SimulationResult, simulate

__all__ = [
    "CombLinTS",
    "CombLinUCB",
    "CombinatorialAgent",
    "EnvironmentConfig",
    "EpsilonGreedyTopM",
    "LinearOracle",
    "MLPOracle",
    "MarginalSolution",
    "PerArmSquareCB",
    "RandomFeaturesOracle",
    "RegressionOracle",
    "SemiBanditEnvironment",
    "SimulationResult",
    "SquareCBComb",
    "SquareCBCombConfig",
    "gamma_schedule",
    "inverse_gap_weighting",
    "kkt_residuals",
    "program_objective",
    "sample_subset",
    "simulate",
    "solve_marginals",
]
