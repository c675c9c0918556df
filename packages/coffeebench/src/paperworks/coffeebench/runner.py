"""Running an episode: the turn schedule, the metrics, and JSONL event logs.

Schedule (the paper's business day): each day every live firm gets turns in round-robin order (the
day's order is :attr:`Economy.day_order`, a fresh seeded random permutation, so no seat moves
first more often than another), one tool call per turn, until it calls ``wait_for_next_day``, takes a
turn without a tool call, or spends its ``calls_per_day`` calls; then the day ends.
:class:`Episode` exposes the schedule step by step (``next_actor`` / ``observation`` / ``apply``),
which the PettingZoo and gymnasium environments drive; :func:`run_episode` plays it with agents.

Metrics per firm (:func:`firm_metrics`): ``net_income`` (the truth ledger), ``idle_drift_rate``
(the share of business days alive with no successful productive tool call: listing, offer,
proposal, acceptance, message, production, roasting, pricing, payment, return),
``messages_per_day`` and ``negotiations_per_day`` (private proposals sent),
``proposals_received`` and ``proposals_accepted`` (private proposals that reached the firm, and
those it accepted, over the run), ``bankrupt``.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .agents import Agent, reference_agents
from .config import FIRMS, EconomyConfig
from .engine import Economy
from .tools import PRODUCTIVE_TOOLS

__all__ = ["Episode", "EpisodeResult", "JsonlLog", "firm_metrics", "read_jsonl", "run_episode"]


class JsonlLog:
    """Events as JSON lines, written to ``path`` atomically on :meth:`close` (a temp file, then rename).

    Used as a context manager, a block that raises leaves nothing at ``path`` (the partial file is
    removed)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".partial")
        self._fh = open(self._tmp, "w", encoding="utf-8")
        self.n = 0

    def __call__(self, event: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(event, default=_plain, separators=(",", ":")) + "\n")
        self.n += 1

    def close(self) -> Path:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            os.replace(self._tmp, self.path)
        return self.path

    def __enter__(self) -> JsonlLog:
        return self

    def discard(self) -> None:
        """Drop what was written (nothing appears at ``path``)."""
        if not self._fh.closed:
            self._fh.close()
        self._tmp.unlink(missing_ok=True)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:  # a run that failed leaves no log that looks complete
            self.discard()


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass
class EpisodeResult:
    seed: int
    days: int
    agents: dict[str, str]
    metrics: dict[str, dict[str, float]]
    daily_net_income: list[dict[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "days": self.days,
            "agents": self.agents,
            "metrics": self.metrics,
            "daily_net_income": self.daily_net_income,
        }


class Episode:
    """One run of the economy under the paper's turn schedule."""

    def __init__(
        self,
        config: EconomyConfig | None = None,
        seed: int = 0,
        agents: Mapping[str, Agent] | None = None,
        log: Any = None,
    ) -> None:
        self._log = log
        self.economy = Economy(config, seed, log=self._event if log is not None else None)
        self.config = self.economy.config
        self.agents = dict(agents) if agents is not None else {}
        unknown = sorted(set(self.agents) - set(FIRMS))
        if unknown:
            raise ValueError(f"agents: unknown firm ids {unknown}; firms are {list(FIRMS)}")
        for fid, a in self.agents.items():
            if not (callable(getattr(a, "act", None)) and callable(getattr(a, "reset", None))):
                raise TypeError(
                    f"agents[{fid!r}]: expected an agent with reset(firm_id, rng) and act(observation), "
                    f"got {type(a).__name__}"
                )
        for i, fid in enumerate(FIRMS):
            if fid in self.agents:
                self.agents[fid].reset(
                    fid, np.random.default_rng(np.random.SeedSequence([self.economy.seed, 54, 1 + i]))
                )
        self._queue: deque[str] = deque()
        self._last: dict[str, dict | None] = dict.fromkeys(FIRMS)
        self.productive_days: dict[str, set[int]] = {f: set() for f in FIRMS}
        self.no_call_turns = dict.fromkeys(FIRMS, 0)
        if log is not None:
            self._event(
                {
                    "event": "start",
                    "day": 0,
                    "seed": self.economy.seed,
                    "agents": {k: getattr(a, "name", type(a).__name__) for k, a in self.agents.items()},
                }
            )

    def _event(self, e: dict[str, Any]) -> None:
        self._log(e)

    @property
    def done(self) -> bool:
        return self.economy.finished

    def next_actor(self) -> str | None:
        """The firm whose turn it is (opening and closing days as needed); ``None`` once the run is over."""
        e = self.economy
        while True:
            if e.finished:
                return None
            if not e.started:
                e.begin_day()
                self._queue = deque(f for f in e.day_order if not e.firms[f].bankrupt)
                self._last = dict.fromkeys(FIRMS)
            while self._queue and e.firms[self._queue[0]].day_over:
                self._queue.popleft()
            if self._queue:
                return self._queue[0]
            e.end_day()

    def observation(self, firm_id: str) -> dict[str, Any]:
        obs = self.economy.observe(firm_id)
        obs["last_result"] = self._last[firm_id]
        return obs

    def apply(self, firm_id: str, tool_call: Mapping[str, Any] | None) -> dict[str, Any]:
        """Play ``firm_id``'s turn: a call ``{"name", "arguments"}``, or ``None`` (no tool call: a no-op
        that ends the firm's day, as in the paper)."""
        if firm_id != self.next_actor():
            raise ValueError(f"firm_id: it is {self.next_actor()!r}'s turn, not {firm_id!r}'s")
        e = self.economy
        if tool_call is None:
            self.no_call_turns[firm_id] += 1
            res = e.call(firm_id, "wait_for_next_day")
            res = (
                {"status": "ok", "message": "no tool call: the day ends (no-op)"}
                if res["status"] == "ok"
                else res
            )
        else:
            if not isinstance(tool_call, Mapping) or "name" not in tool_call:
                res = e.call(firm_id, None, None)
            else:
                res = e.call(firm_id, tool_call["name"], tool_call.get("arguments"))
                if res["status"] == "ok" and tool_call["name"] in PRODUCTIVE_TOOLS:
                    self.productive_days[firm_id].add(e.day)
        self._last[firm_id] = res
        if self._queue and self._queue[0] == firm_id:
            self._queue.rotate(-1)
        return res

    def play(self) -> EpisodeResult:
        """Run to the end with ``self.agents`` (every firm needs one)."""
        missing = [f for f in FIRMS if f not in self.agents]
        if missing:
            raise ValueError(f"agents: no agent for {missing}")
        while (fid := self.next_actor()) is not None:
            self.apply(fid, self.agents[fid].act(self.observation(fid)))
        return self.result()

    def result(self) -> EpisodeResult:
        e = self.economy
        metrics = {f: firm_metrics(self, f) for f in FIRMS}
        if self._log is not None:
            self._event({"event": "end", "day": e.day, "metrics": metrics})
        names = {k: getattr(a, "name", type(a).__name__) for k, a in self.agents.items()}
        return EpisodeResult(e.seed, e.day, names, metrics, [d["net_income"] for d in e.daily])


def firm_metrics(ep: Episode, firm_id: str) -> dict[str, float]:
    e = ep.economy
    f = e.firms[firm_id]
    played = max(1, (f.bankrupt_day if f.bankrupt_day is not None else e.day))
    calls = sum(v for k, v in f.counts.items() if ":" in k)
    errors = sum(v for k, v in f.counts.items() if k.endswith(":error"))
    totals = e.ledger_totals(firm_id)
    return {
        "net_income": float(f.net_income),
        "revenue": float(totals.get("revenue", 0.0) + totals.get("sale_reversal", 0.0)),
        "cash": float(f.cash),
        "idle_drift_rate": 1.0 - len(ep.productive_days[firm_id]) / played,
        "messages_per_day": f.counts.get("messages", 0) / max(1, e.day),
        "negotiations_per_day": f.counts.get("negotiations", 0) / max(1, e.day),
        "proposals_received": float(f.counts.get("proposals_received", 0)),
        "proposals_accepted": float(f.counts.get("proposals_accepted", 0)),
        "tool_calls": float(calls),
        "tool_errors": float(errors),
        "bankrupt": float(f.bankrupt),
    }


def run_episode(
    agents: Mapping[str, Agent] | None = None,
    *,
    config: EconomyConfig | None = None,
    seed: int = 0,
    log_path: str | os.PathLike[str] | None = None,
) -> EpisodeResult:
    """Play one run. ``agents``: firm -> agent (missing firms get the reference agents);
    ``log_path``: write every event as JSON lines there (atomically, at the end)."""
    full = reference_agents()
    full.update(agents or {})
    if log_path is None:
        return Episode(config, seed, full).play()
    with JsonlLog(log_path) as log:
        return Episode(config, seed, full, log=log).play()
