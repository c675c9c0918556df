"""Hidden-target online inventory optimisation (OIO) on general convex capacity sets.

A hidden online learner keeps a target order-up-to level ``z_t`` in the capacity set ``Y``; the store
implements its Euclidean projection onto the feasible order-up-to set ``F_t = Y ∩ {y >= x_t}`` (stock can
be raised at once but lowered only by demand), and the learner is updated with the loss's subgradient at
the implemented level. The distance ``||z_t - y_t||`` is a scalar queue (:class:`QueueTrace`).
Paper: Pineci & Xu, arXiv 2606.14679 (abstract only); baseline MaxCOSD from Hihat et al., arXiv 2307.06048.

The gymnasium environment lives in :mod:`paperworks.hidden_target_oio.env` (extra ``gym``), the pandas
long-table loader in :mod:`paperworks.hidden_target_oio.data` (extra ``pandas``).
"""

from .capacity import Band, Box, BoxBudget, Budget, CapacitySet, Polytope
from .demand import (
    CorrelatedLognormal,
    DemandProcess,
    Intermittent,
    RegimeSwitching,
    Seasonal,
    TableDemand,
    common_demand_rate,
    validate_demand,
)
from .hindsight import best_fixed_level, expected_optimal_levels, path_length, total_loss
from .losses import NewsvendorLoss
from .policies import (
    OGD,
    ConstantStep,
    DirectOGD,
    FixedLevel,
    HiddenTargetPolicy,
    MaxCOSD,
    Policy,
    StronglyConvexStep,
    path_length_step,
    static_step,
)
from .queue import QueueTrace, lindley
from .simulate import SimulationResult, simulate

__all__ = [
    "OGD",
    "Band",
    "Box",
    "BoxBudget",
    "Budget",
    "CapacitySet",
    "ConstantStep",
    "CorrelatedLognormal",
    "DemandProcess",
    "DirectOGD",
    "FixedLevel",
    "HiddenTargetPolicy",
    "Intermittent",
    "MaxCOSD",
    "NewsvendorLoss",
    "Policy",
    "Polytope",
    "QueueTrace",
    "RegimeSwitching",
    "Seasonal",
    "SimulationResult",
    "StronglyConvexStep",
    "TableDemand",
    "best_fixed_level",
    "common_demand_rate",
    "expected_optimal_levels",
    "lindley",
    "path_length",
    "path_length_step",
    "simulate",
    "static_step",
    "total_loss",
    "validate_demand",
]
