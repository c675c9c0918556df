"""A small progress display on stderr for runs longer than a few seconds (no dependency)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")

__all__ = ["Progress"]


class Progress:
    """Progress lines on a stream: ``log`` for messages, ``track`` for loops.

    On a terminal the loop counter redraws one line; elsewhere (CI logs) it prints at most one line
    every ``every_s`` seconds. ``enabled=False`` silences everything (used in tests).
    """

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, every_s: float = 2.0) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = every_s
        self._t0 = time.perf_counter()

    def _elapsed(self) -> str:
        return f"[{time.perf_counter() - self._t0:6.1f}s]"

    def log(self, message: str) -> None:
        if self.enabled:
            print(f"{self._elapsed()} {message}", file=self.stream, flush=True)

    def track(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
        """Yield from ``items`` while showing ``desc i/total``."""
        if not self.enabled:
            yield from items
            return
        if total is None:
            try:
                total = len(items)  # type: ignore[arg-type]
            except TypeError:
                total = None
        tty = getattr(self.stream, "isatty", lambda: False)()
        last = -float("inf")
        i = 0
        for i, item in enumerate(items, 1):
            yield item
            now = time.perf_counter()
            if now - last >= (0.2 if tty else self.every_s) or i == total:
                last = now
                count = f"{i}/{total}" if total else str(i)
                end = "\r" if tty and i != total else "\n"
                print(f"{self._elapsed()} {desc} {count}", end=end, file=self.stream, flush=True)
        if tty and i != total:
            print(file=self.stream, flush=True)
