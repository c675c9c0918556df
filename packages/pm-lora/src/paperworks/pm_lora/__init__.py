"""PM-LoRA: progressive merging of spectral orthogonal low-rank adapters for continual learning.

A single rank-``r`` LoRA per target layer (``nn.Linear`` or GPT-2 ``Conv1D``, chosen like peft's
``target_modules``) evolves over a task stream: each task trains a small adapter orthogonal to the
merged adapter's principal input subspace, then a truncated SVD merges it back to rank ``r``.
Baselines (SeqLoRA, O-LoRA, InfLoRA, per-task LoRA) share the same layers; the merged adapter reads
and writes peft LoRA state dicts and ``save_pretrained`` folders.
"""

from .adapter import ContinualAdapter, ContinualLoRALinear, PMLoRA, PMLoRAConfig
from .baselines import InfLoRA, OLoRA, PerTaskLoRA, SeqLoRA
from .data import ContinualStream, Task, make_stream, stream_to
from .merge import lowrank_svd, merge_lowrank, project_out, spectral_basis
from .peft_io import (
    base_model_copy,
    from_peft_dir,
    load_peft_state_dict,
    save_peft_dir,
    to_peft_model,
    to_peft_state_dict,
)
from .targeting import ALL_LINEAR, find_target_modules
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
    "ALL_LINEAR",
    "MLP",
    "ContinualAdapter",
    "ContinualLoRALinear",
    "ContinualStream",
    "InfLoRA",
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
    "from_peft_dir",
    "load_peft_state_dict",
    "lowrank_svd",
    "make_stream",
    "merge_lowrank",
    "pretrain_backbone",
    "project_out",
    "run_stream",
    "save_peft_dir",
    "spectral_basis",
    "stream_to",
    "to_peft_model",
    "to_peft_state_dict",
]
