"""Max-min normalized improvement (maxmin-mtl): balanced multi-task updates through bottleneck tasks.

The shared update maximises the worst task's normalized improvement rate (its one-step improvement
relative to the best it could get alone) under an isotropic quadratic model; the optimum is a closed
form on a bottleneck set of tasks found by an active-set procedure. Baselines (linear scalarisation,
MGDA, PCGrad, CAGrad, Nash-MTL, FAMO) share the same weighting interface; :func:`libmtl_weighting`
puts max-min behind LibMTL's ``AbsWeighting`` interface.
"""

from .baselines import (
    FAMO,
    METHODS,
    MGDA,
    CAGrad,
    LinearScalarization,
    NashMTL,
    PCGrad,
    cagrad_weights,
    make_method,
    mgda_weights,
    nash_mtl_weights,
    pcgrad_weights,
)
from .data import MTLData, load_diabetes_tasks, make_multitask_regression
from .experiments import MaxMinMTLExperiment, delta_m
from .libmtl import LibMTLMaxMin, libmtl_weighting
from .rates import CURVATURE_MODES, best_scaled_worst_rate, normalized_improvement_rates, task_curvatures
from .solver import ActiveSetResult, closed_form, solve_maxmin
from .toy import (
    TOY_STARTS,
    pareto_front,
    pareto_stationarity,
    toy_loss_floor,
    toy_losses,
    toy_losses_and_grads,
)
from .training import MTLResult, ToyResult, run_mtl, run_toy
from .weighting import MaxMinResult, MaxMinWeighting, WeightMethod, gram_matrix, maxmin_weights

__all__ = [
    "CURVATURE_MODES",
    "FAMO",
    "MGDA",
    "METHODS",
    "TOY_STARTS",
    "ActiveSetResult",
    "CAGrad",
    "LibMTLMaxMin",
    "LinearScalarization",
    "MTLData",
    "MTLResult",
    "MaxMinMTLExperiment",
    "MaxMinResult",
    "MaxMinWeighting",
    "NashMTL",
    "PCGrad",
    "ToyResult",
    "WeightMethod",
    "best_scaled_worst_rate",
    "cagrad_weights",
    "closed_form",
    "delta_m",
    "gram_matrix",
    "libmtl_weighting",
    "load_diabetes_tasks",
    "make_method",
    "make_multitask_regression",
    "maxmin_weights",
    "mgda_weights",
    "nash_mtl_weights",
    "normalized_improvement_rates",
    "pareto_front",
    "pareto_stationarity",
    "pcgrad_weights",
    "run_mtl",
    "run_toy",
    "solve_maxmin",
    "task_curvatures",
    "toy_loss_floor",
    "toy_losses",
    "toy_losses_and_grads",
]
