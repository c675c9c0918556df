"""An agent backed by any OpenAI-compatible chat-completions client, and a client that replays a transcript.

:class:`OpenAIChatAgent` sends the firm's status (at the start of each business day) and each tool
result to ``client.chat.completions.create(model=..., messages=..., tools=..., tool_choice="auto")``
and plays the first tool call of the reply (one tool call per turn, as in the paper); a reply with
no tool call is a turn without one (the day ends). ``client`` is anything with that method: the
``openai`` SDK's ``OpenAI(base_url=..., api_key=...)``, a vLLM or llama.cpp server's client, or
:class:`ReplayClient`. Nothing here opens a connection itself.

:class:`ReplayClient` answers with recorded responses (dicts in the chat-completions response
shape, e.g. read from a JSON file) in order and records the requests it got.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from paperworks.core.validate import nonnegative_float

from .agents import Agent
from .tools import openai_tools

__all__ = ["OpenAIChatAgent", "ReplayClient", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = (
    "You run {firm}, a {role} in CoffeeBench, a 90-day coffee supply chain of 2 farmers, 2 roasters and 2 "
    "retailers. Maximise your net income. Each tool call costs 30 minutes of a 09:00-19:00 business day; "
    "call wait_for_next_day when done. Daily opex is charged every morning; held goods spoil 0.5% a day; "
    "invoices are due 30 days after delivery and accrue 0.1% a day when late; a firm whose cash is below "
    "zero at the start of a turn goes bankrupt. Make exactly one tool call per turn."
)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


class OpenAIChatAgent(Agent):
    """An LLM firm over an OpenAI-compatible client (see the module docstring)."""

    name = "openai_chat"

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        system_prompt: str = SYSTEM_PROMPT,
        temperature: float | None = None,
        max_messages: int = 60,
    ) -> None:
        create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
        if not callable(create):
            raise ValueError("client: expected an OpenAI-compatible client with chat.completions.create")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model: expected a model name, got {model!r}")
        if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 4:
            raise ValueError(f"max_messages: expected an integer >= 4, got {max_messages!r}")
        if not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt: expected a string, got {type(system_prompt).__name__}")
        if temperature is not None:
            temperature = nonnegative_float(temperature, "temperature")
        self.client, self.model, self.system_prompt = client, model, system_prompt
        self.temperature, self.max_messages = temperature, max_messages

    def reset(self, firm_id: str, rng: np.random.Generator) -> None:
        super().reset(firm_id, rng)
        self.messages: list[dict[str, Any]] = []
        self.transcript: list[dict[str, Any]] = []
        self._pending: str | None = None
        self._day = -1
        self._tools: list[dict] | None = None

    def act(self, observation: dict[str, Any]) -> dict[str, Any] | None:
        if self._tools is None:
            self._tools = openai_tools(observation["role"])
            self.messages = [
                {
                    "role": "system",
                    "content": self.system_prompt.format(firm=self.firm_id, role=observation["role"]),
                }
            ]
        if self._pending is not None:
            result = observation.get("last_result")
            self.messages.append(
                {"role": "tool", "tool_call_id": self._pending, "content": json.dumps(result)}
            )
            self._pending = None
        if observation["day"] != self._day:
            self._day = observation["day"]
            status = {k: v for k, v in observation.items() if k != "last_result"}
            self.messages.append(
                {"role": "user", "content": "Status at the start of your turn:\n" + json.dumps(status)}
            )
        if len(self.messages) > self.max_messages:  # keep the system prompt and the latest exchange
            tail = self.messages[-(self.max_messages - 1) :]
            while tail and tail[0]["role"] == "tool":
                tail = tail[1:]
            self.messages = [self.messages[0], *tail]
        kw: dict[str, Any] = {
            "model": self.model,
            "messages": list(self.messages),
            "tools": self._tools,
            "tool_choice": "auto",
        }
        if self.temperature is not None:
            kw["temperature"] = self.temperature
        response = self.client.chat.completions.create(**kw)
        choices = _get(response, "choices") or []
        message = _get(choices[0], "message") if choices else None
        calls = (_get(message, "tool_calls") or []) if message is not None else []
        content = _get(message, "content") if message is not None else None
        self.transcript.append({"day": observation["day"], "content": content, "tool_calls": len(calls)})
        if not calls:
            self.messages.append({"role": "assistant", "content": content or ""})
            return None
        first = calls[0]
        fn = _get(first, "function")
        name, raw = _get(fn, "name"), _get(fn, "arguments") or "{}"
        cid = _get(first, "id") or f"call_{len(self.transcript)}"
        self.messages.append(
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": raw}}],
            }
        )
        self._pending = cid
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = raw  # the environment answers with an error naming the problem
        return {"name": name, "arguments": arguments}


def _ns(v: Any) -> Any:
    if isinstance(v, dict):
        return SimpleNamespace(**{k: _ns(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_ns(x) for x in v]
    return v


class ReplayClient:
    """A stand-in OpenAI client answering with ``responses`` (chat-completions dicts) in order."""

    def __init__(self, responses: Sequence[dict[str, Any]]) -> None:
        if isinstance(responses, str | bytes | dict) or not isinstance(responses, Sequence):
            raise TypeError(f"responses: expected a list of response dicts, got {type(responses).__name__}")
        bad = [i for i, r in enumerate(responses) if not isinstance(r, dict)]
        if bad:
            raise TypeError(f"responses: expected response dicts; items {bad[:5]} are not dicts")
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **kwargs: Any) -> Any:
        if len(self.requests) >= len(self.responses):
            raise RuntimeError(
                f"ReplayClient: the transcript has {len(self.responses)} responses; a request past its end"
            )
        self.requests.append(kwargs)
        return _ns(self.responses[len(self.requests) - 1])
