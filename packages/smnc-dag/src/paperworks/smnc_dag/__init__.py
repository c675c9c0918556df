"""SMNC: structure-separated continuous DAG learning with multi-scale normalised closure."""

from .closure import (
    SMNCClosure,
    dyadic_walk_sums,
    n_scales_for,
    reachability_probability,
    smnc_logits,
    smnc_readout,
)
from .estimator import SMNC, SMNCConfig, check_data, enforce_acyclic
from .relations import RelationCues, cycle_loss, relation_loss
from .structure import SeparatedLinearSEM, SeparatedMLPSEM, logdet_acyclicity

__all__ = [
    "SMNC",
    "RelationCues",
    "SMNCClosure",
    "SMNCConfig",
    "SeparatedLinearSEM",
    "SeparatedMLPSEM",
    "check_data",
    "cycle_loss",
    "dyadic_walk_sums",
    "enforce_acyclic",
    "logdet_acyclicity",
    "n_scales_for",
    "reachability_probability",
    "relation_loss",
    "smnc_logits",
    "smnc_readout",
]
