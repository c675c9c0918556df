"""Step boundaries from a chat template: one step per message of an agent conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

__all__ = ["step_offsets_from_chat"]


def _ids(rendered) -> list[int]:
    if isinstance(rendered, Mapping) or hasattr(rendered, "keys"):
        rendered = rendered["input_ids"]
    if isinstance(rendered, torch.Tensor):
        rendered = rendered.tolist()
    if rendered and isinstance(rendered[0], list):  # a batch of one
        rendered = rendered[0]
    return [int(t) for t in rendered]


def step_offsets_from_chat(
    tokenizer, messages: Sequence[Mapping[str, str]], add_generation_prompt: bool = False, **template_kwargs
) -> tuple[torch.Tensor, np.ndarray]:
    """Token ids of a conversation under ``tokenizer``'s chat template and its step boundaries.

    Step ``i`` is message ``i`` as the template renders it (its role header, content and end marker);
    a generation prompt, when asked for, belongs to the last step. Returns ``(input_ids (1, seq),
    offsets (n_messages + 1,))``, ready for :class:`~.press.TaskKVPress` (``step_offsets``) or
    :func:`~.retention.retain_kv`. The boundaries are the token lengths of the rendered prefixes
    ``messages[:i]``, so the template must render each prefix as a prefix of the whole conversation
    (templates that rewrite earlier turns, e.g. dropping past reasoning, cannot be split this way:
    ValueError).
    """
    if not hasattr(tokenizer, "apply_chat_template"):
        raise TypeError(f"tokenizer: expected a transformers tokenizer, got {type(tokenizer).__name__}")
    if getattr(tokenizer, "chat_template", None) is None:
        raise ValueError("tokenizer: has no chat_template")
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence) or len(messages) == 0:
        raise TypeError("messages: expected a non-empty list of {'role', 'content'} mappings")
    for i, m in enumerate(messages):
        if (
            not isinstance(m, Mapping)
            or not isinstance(m.get("role"), str)
            or not isinstance(m.get("content"), str)
        ):
            raise TypeError(f"messages[{i}]: expected a mapping with string 'role' and 'content'")

    def render(msgs, gen: bool) -> list[int]:
        return _ids(
            tokenizer.apply_chat_template(
                list(msgs), tokenize=True, add_generation_prompt=gen, **template_kwargs
            )
        )

    full = render(messages, add_generation_prompt)
    bounds = [0]
    for i in range(1, len(messages)):
        prefix = render(messages[:i], False)
        if full[: len(prefix)] != prefix:
            raise ValueError(
                f"tokenizer: the chat template does not render messages[:{i}] as a prefix of the whole "
                "conversation, so its steps cannot be delimited"
            )
        if len(prefix) <= bounds[-1]:
            raise ValueError(f"messages[{i - 1}]: renders to no tokens of its own")
        bounds.append(len(prefix))
    if len(full) <= bounds[-1]:
        raise ValueError(f"messages[{len(messages) - 1}]: renders to no tokens of its own")
    bounds.append(len(full))
    return torch.tensor([full], dtype=torch.long), np.asarray(bounds, dtype=np.int64)
