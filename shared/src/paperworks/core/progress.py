"""Progress on stderr with rate and ETA (tqdm), quiet unless a person is watching a terminal.

Every package reports progress through :class:`Progress`: ``log`` for milestones, ``track`` for loops.
By default (``Progress()``) it shows bars on stderr only when both stdout and stderr are terminals, so
logs, pipes and tests stay clean; ``PAPERWORKS_PROGRESS=1`` (or ``0``) forces it on (off).
Forced on a stream that is not a terminal (a CI log) it prints whole lines at most every ``every_s``
seconds instead of redrawing one.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

from tqdm import tqdm

T = TypeVar("T")

__all__ = ["Progress"]

_BAR = "{desc} {n_fmt}/{total_fmt} |{bar:20}| {percentage:3.0f}% [{elapsed}<{remaining}, {rate_fmt}]"
_LINE = "{desc} {n_fmt}/{total_fmt} {percentage:3.0f}% [{elapsed}<{remaining}, {rate_fmt}]"
_LINE_NO_TOTAL = "{desc} {n_fmt} [{elapsed}, {rate_fmt}]"


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _auto_enabled(stream: TextIO) -> bool:
    forced = os.environ.get("PAPERWORKS_PROGRESS", "").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return True
    if forced in ("0", "false", "no", "off"):
        return False
    return _isatty(sys.stdout) and _isatty(stream)


class _Lines:
    """A file for tqdm that turns its carriage-return redraws into whole lines (for logs)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._last = ""

    def write(self, s: str) -> int:
        text = s.replace("\r", "").replace("\x1b[A", "").strip()
        count = text.split("[", 1)[0]
        if text and count != self._last:  # tqdm redraws the last count on close (with a new rate)
            self.stream.write(text + "\n")
            self._last = count
        return len(s)

    def flush(self) -> None:
        self.stream.flush()


class Progress:
    """Progress lines on a stream: ``log`` for messages, ``track`` for loops (rate and ETA).

    ``enabled``: True shows progress, False silences it (tests); None (default) shows it on a
    ``stream`` given explicitly, and on stderr (no ``stream``) only when stdout and stderr are
    terminals or ``PAPERWORKS_PROGRESS=1`` (``0`` turns it off). ``every_s``: on a stream that is
    not a terminal, at most one line per loop every ``every_s`` seconds.
    """

    def __init__(
        self, enabled: bool | None = None, stream: TextIO | None = None, every_s: float = 2.0
    ) -> None:
        if enabled is None:  # a stream given on purpose is written to; the default one only when watched
            enabled = True if stream is not None else _auto_enabled(sys.stderr)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(enabled)
        self.every_s = every_s
        self._t0 = time.perf_counter()
        self._depth = 0

    def _elapsed(self) -> str:
        return f"[{time.perf_counter() - self._t0:6.1f}s]"

    def log(self, message: str) -> None:
        if self.enabled:
            tqdm.write(f"{self._elapsed()} {message}", file=self.stream)
            self.stream.flush()

    def _bar(self, items: Iterable[T] | None, desc: str, total: int | None) -> tqdm:
        tty = _isatty(self.stream)
        if tty:
            return tqdm(
                items,
                desc=desc,
                total=total,
                file=self.stream,
                mininterval=0.2,
                leave=self._depth == 0,
                position=self._depth,
                dynamic_ncols=True,
                bar_format=_BAR if total else _LINE_NO_TOTAL,
            )
        return tqdm(
            items,
            desc=desc,
            total=total,
            file=_Lines(self.stream),
            mininterval=self.every_s,
            maxinterval=max(self.every_s, 10.0),
            ascii=True,
            bar_format=_LINE if total else _LINE_NO_TOTAL,
        )

    def track(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
        """Yield from ``items`` while showing ``desc i/total``, the rate and the time left."""
        if not self.enabled:
            yield from items
            return
        if total is None:
            try:
                total = len(items)  # type: ignore[arg-type]
            except TypeError:
                total = None
        bar = self._bar(items, desc, total)
        self._depth += 1
        try:
            yield from bar
        finally:
            self._depth -= 1
            bar.close()

    @contextmanager
    def counter(self, desc: str, total: int | None = None) -> Iterator[_Counter]:
        """A bar advanced by hand (``.update()``) for work that finishes out of order (remote tasks)."""
        if not self.enabled:
            yield _Counter(None)
            return
        bar = self._bar(None, desc, total)
        self._depth += 1
        try:
            yield _Counter(bar)
        finally:
            self._depth -= 1
            bar.close()


class _Counter:
    def __init__(self, bar: tqdm | None) -> None:
        self._bar = bar

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)
