"""Atomic writing of results: a reader never sees a half-written file or report folder."""

from __future__ import annotations

import json
import math
import os
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
    """Write ``report.json``, ``report.md`` and figures into ``folder``.

    Everything is first written into a staging folder beside ``folder``; files are then moved in
    with ``os.replace``, ``report.json`` last, so a folder holding ``report.json`` is complete.
    ``figures``: an experiment (its :meth:`~Experiment.figures`) or a callable ``(report, folder)``.
    """
    folder = check_writable(folder)
    stage = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.stage-"))
    try:
        draw = figures.figures if isinstance(figures, Experiment) else figures
        if draw is not None:
            names = list(draw(report, stage))
            missing = [n for n in names if not (stage / n).is_file()]
            if missing:
                raise FileNotFoundError(f"figures: reported {missing} but did not write them")
            report.figures = names
        atomic_write_text(stage / "report.md", report.to_markdown())
        atomic_write_json(stage / "report.json", report.to_dict())
        (folder / "report.json").unlink(missing_ok=True)
        for item in sorted(stage.iterdir(), key=lambda p: p.name == "report.json"):
            os.replace(item, folder / item.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return folder
