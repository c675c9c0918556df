"""TaskKV: step-level KV-cache retention for long-horizon agents (no public text; reconstructed).

Plain-tensor retention (:func:`retain_kv`), the signed utility labels (:func:`step_utility_labels`),
the structured residual scorer (:class:`ResidualStepScorer`), the entropy regime classifier
(:class:`RegimeClassifier`), the combined policy (:class:`TaskKV`) and, with the ``kvpress`` extra,
the press :class:`TaskKVPress` (imported lazily).
"""

from .policy import TaskKV, TaskKVConfig
from .retention import (
    check_budget,
    check_offsets,
    contiguous_scores,
    gather_tokens,
    n_keep_for,
    retain_kv,
    select_tokens,
)
from .scorer import FEATURE_NAMES, RegimeClassifier, ResidualStepScorer, score_entropy, step_features
from .tasks import AgentTaskConfig, AgentTasks, Vocab, generate_tasks
from .utility import (
    answer_logprob,
    cache_layers,
    leave_one_step_out,
    prefill,
    query_logits,
    step_utility_labels,
)

__all__ = [
    "FEATURE_NAMES",
    "AgentTaskConfig",
    "AgentTasks",
    "RegimeClassifier",
    "ResidualStepScorer",
    "TaskKV",
    "TaskKVConfig",
    "TaskKVPress",
    "Vocab",
    "answer_logprob",
    "cache_layers",
    "check_budget",
    "check_offsets",
    "contiguous_scores",
    "gather_tokens",
    "generate_tasks",
    "leave_one_step_out",
    "n_keep_for",
    "prefill",
    "query_logits",
    "retain_kv",
    "score_entropy",
    "select_tokens",
    "step_features",
    "step_utility_labels",
]


def __getattr__(name: str):
    if name == "TaskKVPress":  # needs the kvpress extra: import on first use only
        from .press import TaskKVPress

        return TaskKVPress
    raise AttributeError(f"module 'paperworks.taskkv' has no attribute {name!r}")
