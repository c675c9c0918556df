"""PGSB: LoRA model merging on a pretrained-guided shared basis, with Task Arithmetic, TIES, DARE and
KnOTS baselines behind one ``merge`` interface. peft interop lives in :mod:`paperworks.pgsb.peft_interop`."""

from .baselines import dare_merge, knots_merge, task_arithmetic_merge, ties_merge
from .lora import LoRAAdapter, adapters_from_peft_state_dict, adapters_to_peft_state_dict
from .merge import METHODS, merge, merge_layer
from .pgsb import PGSBConfig, pgsb_merge
from .shared_basis import SharedBasis, shared_basis

__all__ = [
    "METHODS",
    "LoRAAdapter",
    "PGSBConfig",
    "SharedBasis",
    "adapters_from_peft_state_dict",
    "adapters_to_peft_state_dict",
    "dare_merge",
    "knots_merge",
    "merge",
    "merge_layer",
    "pgsb_merge",
    "shared_basis",
    "task_arithmetic_merge",
    "ties_merge",
]
