"""Atomic writing of results: a reader never sees a half-written file or report folder."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .experiment import Experiment, Report

_UMASK = os.umask(0)
os.umask(_UMASK)

__all__ = ["atomic_write_bytes", "atomic_write_json", "atomic_write_text", "check_writable", "write_report"]


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the file the usual permissions
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def _jsonable(obj: Any) -> Any:
    """Non-finite floats become strings ("nan", "inf") so the file stays strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    return obj


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(_jsonable(obj), indent=2, allow_nan=False) + "\n")


def check_writable(folder: str | os.PathLike[str]) -> Path:
    """Create ``folder`` if needed and prove a file can be written there; raise ``OSError`` if not."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(dir=folder, prefix=".paperworks-probe-")
    os.close(fd)
    os.unlink(probe)
    return folder


def write_report(
    report: Report,
    folder: str | os.PathLike[str],
    figures: Callable[[Report, Path], list[str]] | Experiment | None = None,
) -> Path:
    """Write ``report.json``, ``report.md`` and figures as the folder ``folder``, whole or not at all.

    The complete report is staged in a hidden sibling ``.<name>.stage-<pid>-*`` and renamed into
    place; a previous report is first renamed aside to ``.<name>.old-<pid>-*`` and removed after.
    So ``folder`` holds the old complete report or the new one, except between those two renames,
    when it is missing and the old report sits complete in ``.old-*``: the next call puts it back
    (and removes what killed runs left) before writing. On ``OSError`` the previous report is
    left as it was and the stage removed. Files in ``folder`` that are not part of the new report
    go with the old one. ``figures``: an experiment (its :meth:`~Experiment.figures`) or a
    callable ``(report, folder)`` returning the names of the files it wrote.
    """
    folder = Path(folder)
    if folder.name in ("", ".", ".."):
        raise ValueError(f"folder: expected a path ending in the report folder's name, got {str(folder)!r}")
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} exists and is not a folder")
    _recover(folder)
    check_writable(folder.parent)
    stage = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.stage-{os.getpid()}-"))
    try:
        os.chmod(stage, 0o777 & ~_UMASK)  # mkdtemp makes 0700; the folder keeps the usual permissions
        draw = figures.figures if isinstance(figures, Experiment) else figures
        if draw is not None:
            names = list(draw(report, stage))
            missing = [n for n in names if not (stage / n).is_file()]
            if missing:
                raise FileNotFoundError(f"figures: reported {missing} but did not write them")
            report.figures = names
        atomic_write_text(stage / "report.md", report.to_markdown())
        atomic_write_json(stage / "report.json", report.to_dict())  # last: a folder with it is complete
        _swap_in(stage, folder)
    except BaseException:
        _discard(stage)
        raise
    return folder


def _swap_in(stage: Path, folder: Path) -> None:
    try:
        os.rename(stage, folder)  # no folder yet, or an empty one (check_writable's): replaced at once
        return
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    old = folder.parent / f".{folder.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(folder, old)
    try:
        os.rename(stage, folder)
    except BaseException:
        os.rename(old, folder)
        raise
    _discard(old)


def _discard(path: Path) -> None:
    """Remove a stage or an old report, ``report.json`` first so that a half-removed one is never complete."""
    try:
        (path / "report.json").unlink(missing_ok=True)
        shutil.rmtree(path)
    except OSError:
        pass  # left for the next call


def _leftovers(folder: Path) -> tuple[list[Path], list[Path]]:
    """Stages and old reports of ``folder`` whose writer is gone (this process counts as gone)."""
    pattern = re.compile(rf"\.{re.escape(folder.name)}\.(stage|old)-(?:(\d+)-)?[A-Za-z0-9_]+")
    stages: list[Path] = []
    olds: list[Path] = []
    try:
        entries = list(os.scandir(folder.parent))
    except OSError:
        return stages, olds
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m and not (m[2] and _alive(int(m[2]))):
            (stages if m[1] == "stage" else olds).append(Path(entry.path))
    return stages, olds


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _recover(folder: Path) -> None:
    """Undo what killed writers left: put a complete old report back where none is, remove the rest."""
    stages, olds = _leftovers(folder)
    complete = [p for p in olds if (p / "report.json").is_file()]
    if complete and (not folder.exists() or _is_empty_dir(folder)):
        best = max(complete, key=_mtime)
        olds.remove(best)  # kept aside if it cannot be put back: the next call tries again
        try:
            os.rename(best, folder)  # replaces an empty folder at once
        except OSError:
            pass
    for p in stages + olds:
        _discard(p)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _is_empty_dir(path: Path) -> bool:
    try:
        with os.scandir(path) as it:
            return next(it, None) is None
    except OSError:
        return False
