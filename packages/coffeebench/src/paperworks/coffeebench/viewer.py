"""Viewing a run from its JSONL event log: a terminal summary (rich) and a static HTML report.

``summarize(events)`` reduces a log (:func:`paperworks.coffeebench.runner.read_jsonl`) to per-firm
figures and the daily net-income paths; ``print_summary(events)`` shows them with rich (the
``viewer`` extra); ``html_report(events, path)`` writes one self-contained HTML file (an inline SVG
chart of each firm's cumulative net income and the table), atomically.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperworks.core import atomic_write_text

from .config import FIRMS

__all__ = ["html_report", "print_summary", "summarize"]

_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def summarize(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-firm net income, tool calls, errors, messages and deals; daily net income per firm."""
    if not events:
        raise ValueError("events: expected a non-empty event log")
    daily = [e["net_income"] for e in events if e.get("event") == "day_end"]
    calls, errors, msgs, deals = Counter(), Counter(), Counter(), Counter()
    for e in events:
        kind = e.get("event")
        if kind == "tool_call":
            calls[e["firm"]] += 1
            errors[e["firm"]] += e["status"] == "error"
        elif kind == "message":
            msgs[e["sender"]] += 1
        elif kind == "deal":
            deals[e["seller"]] += 1
            deals[e["buyer"]] += 1
    start = next((e for e in events if e.get("event") == "start"), {})
    last = daily[-1] if daily else {}
    firms = {
        f: {
            "agent": start.get("agents", {}).get(f, "?"),
            "net_income": float(last.get(f, 0.0)),
            "tool_calls": calls[f],
            "errors": errors[f],
            "messages": msgs[f],
            "deals": deals[f],
        }
        for f in FIRMS
    }
    return {"seed": start.get("seed"), "days": len(daily), "firms": firms, "daily": daily}


def print_summary(events: Sequence[dict[str, Any]], console: Any = None) -> None:
    """A rich table of :func:`summarize` (needs the ``viewer`` extra)."""
    from rich.console import Console
    from rich.table import Table

    s = summarize(events)
    t = Table(title=f"CoffeeBench run: seed {s['seed']}, {s['days']} days")
    for col in ("firm", "agent", "net income ($)", "tool calls", "errors", "messages", "deals"):
        t.add_column(col, justify="left" if col in ("firm", "agent") else "right")
    for f, r in s["firms"].items():
        ni = r["net_income"]
        t.add_row(
            f,
            r["agent"],
            f"[{'green' if ni >= 0 else 'red'}]{ni:,.2f}[/]",
            str(r["tool_calls"]),
            str(r["errors"]),
            str(r["messages"]),
            str(r["deals"]),
        )
    (console or Console()).print(t)


def _svg(daily: list[dict[str, float]], w: int = 720, h: int = 320) -> str:
    if not daily:
        return ""
    vals = [v for d in daily for v in d.values()]
    lo, hi = min([*vals, 0.0]), max([*vals, 0.0])
    hi = hi if hi > lo else lo + 1.0
    pad, n = 50, max(len(daily) - 1, 1)

    def xy(i: int, v: float) -> str:
        return f"{pad + i * (w - 2 * pad) / n:.1f},{h - pad - (v - lo) * (h - 2 * pad) / (hi - lo):.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" '
        f'aria-label="cumulative net income">'
    ]
    zero = h - pad - (0.0 - lo) * (h - 2 * pad) / (hi - lo)
    parts.append(
        f'<line x1="{pad}" x2="{w - pad}" y1="{zero:.1f}" y2="{zero:.1f}" stroke="#999" '
        f'stroke-dasharray="4"/>'
    )
    for k, f in enumerate(FIRMS):
        pts = " ".join(xy(i, d.get(f, 0.0)) for i, d in enumerate(daily))
        parts.append(
            f'<polyline fill="none" stroke="{_COLOURS[k]}" stroke-width="1.5" '
            f'points="{pts}"><title>{f}</title></polyline>'
        )
        parts.append(
            f'<text x="{w - pad + 4}" y="{18 + 14 * k}" font-size="11" fill="{_COLOURS[k]}">{f}</text>'
        )
    parts.append(f'<text x="{pad}" y="{h - 12}" font-size="11">day 0 … {len(daily) - 1}</text>')
    parts.append(f'<text x="4" y="{pad - 10}" font-size="11">net income ($): {lo:,.0f} to {hi:,.0f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def html_report(events: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write a static HTML report of a run (chart and table) to ``path``; returns the path."""
    s = summarize(events)
    rows = "".join(
        f"<tr><td>{html.escape(f)}</td><td>{html.escape(str(r['agent']))}</td><td>{r['net_income']:,.2f}</td>"
        f"<td>{r['tool_calls']}</td><td>{r['errors']}</td><td>{r['messages']}</td><td>{r['deals']}</td></tr>"
        for f, r in s["firms"].items()
    )
    doc = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>CoffeeBench run</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "td:first-child,td:nth-child(2){text-align:left}</style></head><body>"
        f"<h1>CoffeeBench run: seed {s['seed']}, {s['days']} days</h1>{_svg(s['daily'])}"
        "<table><tr><th>firm</th><th>agent</th><th>net income ($)</th><th>tool calls</th><th>errors</th>"
        f"<th>messages</th><th>deals</th></tr>{rows}</table></body></html>"
    )
    return atomic_write_text(Path(path), doc)
