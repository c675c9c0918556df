"""Gathering saved reports into one page: the table of all methods and their verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["load_reports", "summary_markdown"]


def load_reports(root: str | Path) -> list[dict[str, Any]]:
    """Every ``<root>/<slug>/report.json``, sorted by slug. Unreadable files raise ``ValueError``."""
    reports = []
    for path in sorted(Path(root).glob("*/report.json")):
        try:
            data = json.loads(path.read_text())
            data["slug"], data["claims"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a paperworks report ({e})") from None
        reports.append(data)
    return reports


def summary_markdown(reports: list[dict[str, Any]]) -> str:
    """One markdown page: slug | paper | run | claims holding | each claim's verdict."""
    lines = [
        "# paperworks: reproduction summary",
        "",
        "| method | paper | run | claims holding | verdicts |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in reports:
        paper = r.get("paper", {})
        arxiv = f"arXiv {paper['arxiv']}" if paper.get("arxiv") else "no public text"
        claims = r["claims"]
        held = sum(bool(c["holds"]) for c in claims)
        verdicts = "; ".join(f"{c['key']}: {'holds' if c['holds'] else 'does not hold'}" for c in claims)
        run = f"{'quick' if r.get('quick') else 'full'}, {len(r.get('seeds', []))} seeds"
        lines.append(
            f"| {r['slug']} | {paper.get('title', '?')} ({arxiv}) | {run} | "
            f"{held}/{len(claims)} | {verdicts} |"
        )
    if not reports:
        lines.append("| (no reports found) | | | | |")
    return "\n".join(lines) + "\n"
