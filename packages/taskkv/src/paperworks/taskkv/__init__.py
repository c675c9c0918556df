"""TaskKV: step-level KV-cache retention for long-horizon agents (no public text; reconstructed).

Plain-tensor retention (:func:`retain_kv`, per-row step layouts :func:`step_layout`), the signed
utility labels (:func:`step_utility_labels`), the structured residual scorer
(:class:`ResidualStepScorer`) on content keys (:func:`content_keys`), the entropy regime classifier
(:class:`RegimeClassifier`), the combined policy (:class:`TaskKV`), streaming retention
(:class:`TaskKVStream`), chat-template step boundaries (:func:`step_offsets_from_chat`) and, with
the ``kvpress`` extra, the press :class:`TaskKVPress` (a kvpress ``ScorerPress``, imported lazily).
"""

from .attention import window_attention
from .chat import step_offsets_from_chat
from .policy import REGIME_SIGNALS, TaskKV, TaskKVConfig
from .retention import (
    StepLayout,
    check_budget,
    check_offsets,
    contiguous_scores,
    gather_tokens,
    n_keep_for,
    retain_kv,
    select_tokens,
    step_layout,
    token_priority,
)
from .rope import content_keys, rope_cos_sin, unrotate_keys
from .scorer import (
    FEATURE_NAMES,
    RegimeClassifier,
    ResidualStepScorer,
    attention_entropy,
    regime_auc,
    score_entropy,
    step_features,
)
from .stream import TaskKVStream
from .tasks import AgentTaskConfig, AgentTasks, Vocab, generate_tasks
from .utility import (
    GATES,
    answer_logprob,
    cache_layers,
    leave_one_step_out,
    prefill,
    query_logits,
    step_utility_labels,
)

__all__ = [
    "FEATURE_NAMES",
    "GATES",
    "REGIME_SIGNALS",
    "AgentTaskConfig",
    "AgentTasks",
    "RegimeClassifier",
    "ResidualStepScorer",
    "StepLayout",
    "TaskKV",
    "TaskKVConfig",
    "TaskKVPress",
    "TaskKVStream",
    "Vocab",
    "answer_logprob",
    "attention_entropy",
    "cache_layers",
    "check_budget",
    "check_offsets",
    "content_keys",
    "contiguous_scores",
    "gather_tokens",
    "generate_tasks",
    "leave_one_step_out",
    "n_keep_for",
    "prefill",
    "query_logits",
    "regime_auc",
    "retain_kv",
    "rope_cos_sin",
    "score_entropy",
    "select_tokens",
    "step_features",
    "step_layout",
    "step_offsets_from_chat",
    "step_utility_labels",
    "token_priority",
    "unrotate_keys",
    "window_attention",
]


def __getattr__(name: str):
    if name == "TaskKVPress":  # needs the kvpress extra: import on first use only
        from .press import TaskKVPress

        return TaskKVPress
    raise AttributeError(f"module 'paperworks.taskkv' has no attribute {name!r}")
