"""Chat-template helpers: token spans of each message, and the goal mask of the instruction messages.

``message_spans`` renders growing prefixes of the conversation with the tokenizer's own chat template
(``apply_chat_template``), so message ``k`` spans ``[len(prefix_{k-1}), len(prefix_k))``; this needs a
template under which a prefix renders as a prefix of the whole (true of the usual templates; checked).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ChatSpans", "goal_spans_from_chat"]


@dataclass(frozen=True)
class ChatSpans:
    """``input_ids`` (T,), ``goal_mask`` (T,) bool, ``spans`` [(start, end)] per message, ``roles``,
    ``turn_rows`` (T,) int: for each assistant message its index among the assistant messages at its
    tokens (the generated rows, for :class:`GoalAccessibilityRatio`), -1 elsewhere."""

    input_ids: np.ndarray
    goal_mask: np.ndarray
    spans: list[tuple[int, int]]
    roles: list[str]
    turn_rows: np.ndarray


def _ids(tokenizer, messages) -> list[int]:
    out = tokenizer.apply_chat_template(list(messages), tokenize=True, add_generation_prompt=False)
    if hasattr(out, "keys") and "input_ids" in out:
        out = out["input_ids"]
    return [int(t) for t in out]


def goal_spans_from_chat(
    tokenizer, messages: Sequence[dict], goal_roles: Sequence[str] = ("system",)
) -> ChatSpans:
    """Tokenise ``messages`` with the tokenizer's chat template and mark the goal messages' tokens.

    ``goal_roles``: the roles whose content defines the goal (the system prompt: instructions, persona,
    rules). Raises when no message has a goal role, or when the template is not prefix-stable.
    """
    if not messages:
        raise ValueError("messages: expected a non-empty conversation")
    roles = [m.get("role") for m in messages]
    if not any(r in goal_roles for r in roles):
        raise ValueError(
            f"messages: expected a message with a goal role {tuple(goal_roles)}, got roles {roles}"
        )
    full = _ids(tokenizer, messages)
    spans, prev = [], 0
    for k in range(len(messages)):
        ids = _ids(tokenizer, messages[: k + 1])
        if ids != full[: len(ids)]:
            raise ValueError(
                "tokenizer: its chat template does not render a prefix of the conversation as a prefix"
            )
        spans.append((prev, len(ids)))
        prev = len(ids)
    goal = np.zeros(len(full), dtype=bool)
    rows = np.full(len(full), -1, dtype=np.int64)
    turn = 0
    for (s, e), r in zip(spans, roles):
        if r in goal_roles:
            goal[s:e] = True
        if r == "assistant":
            rows[s:e] = turn
            turn += 1
    if not goal.any():
        raise ValueError("messages: the goal messages rendered to no tokens")
    return ChatSpans(np.asarray(full, dtype=np.int64), goal, spans, roles, rows)
