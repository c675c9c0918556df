"""PM-LoRA: progressive merging of spectral orthogonal low-rank adapters for continual learning.

A single rank-``r`` LoRA per target ``nn.Linear`` evolves over a task stream: each task trains a
small adapter orthogonal to the merged adapter's principal input subspace, then a truncated SVD
merges it back to rank ``r``. Baselines (SeqLoRA, O-LoRA, per-task LoRA) share the same layers.
"""

from .adapter import ContinualAdapter, ContinualLoRALinear, PMLoRA, PMLoRAConfig, find_target_modules
from .baselines import OLoRA, PerTaskLoRA, SeqLoRA
from .data import ContinualStream, Task, make_stream
from .merge import lowrank_svd, merge_lowrank, project_out, spectral_basis
from .peft_io import base_model_copy, load_peft_state_dict, to_peft_model, to_peft_state_dict
from .training import (
    MLP,
    StreamResult,
    TrainConfig,
    average_accuracy,
    backward_transfer,
    pretrain_backbone,
    run_stream,
)

__all__ = [
    "MLP",
    "ContinualAdapter",
    "ContinualLoRALinear",
    "ContinualStream",
    "OLoRA",
    "PMLoRA",
    "PMLoRAConfig",
    "PerTaskLoRA",
    "SeqLoRA",
    "StreamResult",
    "Task",
    "TrainConfig",
    "average_accuracy",
    "backward_transfer",
    "base_model_copy",
    "find_target_modules",
    "load_peft_state_dict",
    "lowrank_svd",
    "make_stream",
    "merge_lowrank",
    "pretrain_backbone",
    "project_out",
    "run_stream",
    "spectral_basis",
    "to_peft_model",
    "to_peft_state_dict",
]
