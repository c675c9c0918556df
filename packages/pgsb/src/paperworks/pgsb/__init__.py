"""PGSB: LoRA model merging on a pretrained-guided shared basis, with Task Arithmetic, TIES, DARE and
KnOTS baselines behind one ``merge`` interface. peft interop lives in :mod:`paperworks.pgsb.peft_interop`."""

from .baselines import dare_merge, joint_svd, knots_merge, task_arithmetic_merge, ties_merge
from .lora import LoRAAdapter, MergedLoRA, adapters_from_peft_state_dict, adapters_to_peft_state_dict
from .merge import METHODS, OUTPUTS, merge, merge_layer, truncate_factors
from .pgsb import PGSBConfig, pgsb_merge
from .shared_basis import (
    SharedBasis,
    clear_null_cache,
    null_membership_threshold,
    null_overlap_threshold,
    shared_basis,
)

__all__ = [
    "METHODS",
    "OUTPUTS",
    "LoRAAdapter",
    "MergedLoRA",
    "PGSBConfig",
    "SharedBasis",
    "adapters_from_peft_state_dict",
    "adapters_to_peft_state_dict",
    "clear_null_cache",
    "dare_merge",
    "joint_svd",
    "knots_merge",
    "merge",
    "merge_layer",
    "null_membership_threshold",
    "null_overlap_threshold",
    "pgsb_merge",
    "shared_basis",
    "task_arithmetic_merge",
    "ties_merge",
    "truncate_factors",
]
