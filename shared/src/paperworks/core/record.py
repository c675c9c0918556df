"""The run record: what ran, from which code, with which libraries, on which machine.

Read from package metadata and the OS; nothing heavy is imported (torch's version comes from its
metadata, its thread count only when some module already imported it).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["cpu_model", "git_state", "library_versions", "machine_record", "run_record"]

# Libraries worth naming in every record when installed (beside what the package declares).
COMMON = ("numpy", "scipy", "torch", "scikit-learn", "transformers", "pandas")


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist).split("+")[0]
    except metadata.PackageNotFoundError:
        return None


def library_versions(dist: str | None = None) -> dict[str, str]:
    """Versions of the libraries ``dist`` requires (its non-extra requirements) and of COMMON."""
    names: list[str] = []
    if dist is not None:
        try:
            reqs = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            reqs = []
        for r in reqs:
            if "extra ==" in r:
                continue
            m = re.match(r"[A-Za-z0-9_.\-]+", r)
            if m:
                names.append(m.group(0))
    out = {}
    for name in [*names, *COMMON]:
        v = _version(name)
        if v is not None and name not in out and not name.startswith("paperworks"):
            out[name] = v
    return out


def git_state(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the git checkout holding ``path``, or None outside one."""
    where = Path(path).resolve()
    where = where if where.is_dir() else where.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def machine_record() -> dict[str, Any]:
    """Python, platform, CPU model and count, and the thread settings in force."""
    threads: dict[str, Any] = {
        k: os.environ[k]
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        if k in os.environ
    }
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        threads["torch"] = torch.get_num_threads()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "load_average": load,  # 1, 5, 15 min: timings and wall time move with it
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "threads": threads,
    }


def run_record(dist: str | None, source: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The record of a run of distribution ``dist`` whose code lives at ``source`` (a module file)."""
    rec: dict[str, Any] = {}
    if dist is not None:
        rec["package"] = {"name": dist, "version": _version(dist)}
    rec["core"] = {"name": "paperworks-core", "version": _version("paperworks-core")}
    rec["git"] = git_state(source) if source is not None else None
    rec["libraries"] = library_versions(dist)
    rec.update(machine_record())
    return rec
