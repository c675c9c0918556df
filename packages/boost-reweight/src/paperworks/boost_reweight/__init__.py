"""BOOST (arXiv 2605.24743): bilevel trajectory reweighting of synthetic multi-turn data.

The inner level trains a policy on ``mean_i w_i l_i``; the outer level trains a lightweight
reweighting head ``h_phi`` (features -> mean-1 weights) on held-out real validation trajectories,
with a :mod:`torch.func` hypergradient through K unrolled look-ahead steps. The Hugging Face
``Trainer`` hook lives in :mod:`paperworks.boost_reweight.hf` (extra ``hf``; imported lazily).
"""

from .baselines import DomainClassifier, domain_classifier_weights, oracle_weights, rwr_weights, topq_weights
from .hypergrad import TrajectoryReweighter, default_inputs, hypergradient, unrolled_val_loss
from .policy import (
    BoostConfig,
    DialoguePolicy,
    InnerConfig,
    train_boost,
    train_weighted,
    trajectory_features,
    trajectory_nll,
    val_nll,
)
from .tasks import DialogueTaskConfig, Trajectories, check_pool, exact_success, generate, merge
from .weights import (
    ReweightingHead,
    effective_sample_size,
    normalize_weights,
    task_shift_proxy,
    type_coverage,
)

__all__ = [
    "BoostConfig",
    "DialoguePolicy",
    "DialogueTaskConfig",
    "DomainClassifier",
    "InnerConfig",
    "ReweightingHead",
    "TrajectoryReweighter",
    "Trajectories",
    "WeightedTrainer",
    "causal_lm_trajectory_nll",
    "check_pool",
    "default_inputs",
    "domain_classifier_weights",
    "effective_sample_size",
    "exact_success",
    "generate",
    "hypergradient",
    "merge",
    "normalize_weights",
    "oracle_weights",
    "rwr_weights",
    "task_shift_proxy",
    "topq_weights",
    "train_boost",
    "train_weighted",
    "trajectory_features",
    "trajectory_nll",
    "type_coverage",
    "unrolled_val_loss",
    "val_nll",
    "weighted_sampler",
]

_HF = ("WeightedTrainer", "causal_lm_trajectory_nll", "weighted_sampler")


def __getattr__(name: str):  # the transformers integration is an extra: import it on first use
    if name in _HF:
        from . import hf

        return getattr(hf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
