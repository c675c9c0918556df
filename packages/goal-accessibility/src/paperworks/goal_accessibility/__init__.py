"""Goal Accessibility Ratio (GAR): attention vs residual channels of instructions in long chats.

Reconstructed from the abstract of arXiv 2605.12922 ("When Attention Closes: How LLMs Lose the Thread
in Multi-Turn Interaction"). Pure functions of attention weights (:mod:`.gar`), a torchmetrics metric
(:class:`GoalAccessibilityRatio`, the ``metrics`` extra), closing masks and the crossover prediction
(:mod:`.masks`), hooks on Hugging Face eager-attention models (:mod:`.closure`), residual probes
(:mod:`.probes`), chat-template goal spans (:mod:`.chat`), the generated task (:mod:`.task`) and tiny
in-package models (:mod:`.models`, the ``hf`` extra).
"""

from .chat import ChatSpans, goal_spans_from_chat
from .closure import (
    GoalMassRecord,
    attention_modules,
    force_closure,
    gar,
    record_goal_mass,
    require_eager,
    window_closure,
)
from .gar import gar_by_turn, goal_accessibility_ratio, goal_mass, uniform_share
from .masks import additive, causal_mask, crossover_turn, force_closure_mask, window_mask
from .models import ARCHITECTURES, Architecture, TrainConfig, attention_pattern, tiny_llama, train_model
from .probes import emergence_layer, layer_probe_aucs, probe_auc
from .task import Episodes, GoalRecallTask, Vocab

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "ChatSpans",
    "Episodes",
    "GoalAccessibilityRatio",
    "GoalMassRecord",
    "GoalRecallTask",
    "TrainConfig",
    "Vocab",
    "additive",
    "attention_modules",
    "attention_pattern",
    "causal_mask",
    "crossover_turn",
    "emergence_layer",
    "force_closure",
    "force_closure_mask",
    "gar",
    "gar_by_turn",
    "goal_accessibility_ratio",
    "goal_mass",
    "goal_spans_from_chat",
    "layer_probe_aucs",
    "probe_auc",
    "record_goal_mass",
    "require_eager",
    "tiny_llama",
    "train_model",
    "uniform_share",
    "window_closure",
    "window_mask",
]


def __getattr__(name: str):
    if name == "GoalAccessibilityRatio":  # torchmetrics is an extra: import on first use
        from .metric import GoalAccessibilityRatio

        return GoalAccessibilityRatio
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
