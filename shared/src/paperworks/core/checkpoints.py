"""Finished seeds on disk: ``<report folder>/seeds/<seed>.json``, written atomically as each completes.

They let an interrupted run leave its finished seeds behind, and ``--resume`` skip them: a seed file
is reused only when it was run for the same slug, the same quick/full mode, the same resolved config
and the same code (:func:`~paperworks.core.experiment.code_version`); anything else is refused with
the reason, before any seed runs.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from .experiment import Experiment, SeedResult, canonical, code_version, config_diff
from .io import atomic_write_json

__all__ = ["SEEDS_DIR", "ResumeError", "SeedStore"]

SEEDS_DIR = "seeds"


class ResumeError(ValueError):
    """Finished seeds that cannot be reused for this run; the message says why (one line)."""


def _code_text(code: dict | None) -> str:
    if not code:
        return "unknown code"
    return f"{code.get('package')} {code.get('version')} source {code.get('source')}, core {code.get('core')}"


class SeedStore:
    """The finished seeds of one report folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.dir = self.folder / SEEDS_DIR

    def path(self, seed: int) -> Path:
        return self.dir / f"{int(seed)}.json"

    def write(self, result: SeedResult) -> Path:
        return atomic_write_json(self.path(result.seed), result.to_dict())

    def load(self) -> dict[int, SeedResult]:
        """Every seed file here (none when the folder has none); raise :class:`ResumeError` on a bad one."""
        out: dict[int, SeedResult] = {}
        if not self.dir.is_dir():
            return out
        for p in sorted(self.dir.glob("*.json")):
            if p.name.startswith(".") or not p.stem.isdigit():
                continue  # a temporary file of an interrupted write, or not ours
            try:
                result = SeedResult.from_dict(json.loads(p.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise ResumeError(
                    f"--resume: {p} cannot be read ({e}); remove it or rerun without --resume"
                ) from None
            if result.seed != int(p.stem):
                raise ResumeError(f"--resume: {p} holds seed {result.seed}, not {p.stem}")
            out[result.seed] = result
        return out

    def resumable(self, experiment: Experiment, quick: bool) -> dict[int, SeedResult]:
        """The finished seeds that this run may reuse; :class:`ResumeError` if any was run otherwise."""
        found = self.load()
        if not found:
            return found
        config = canonical(experiment.resolved_config(quick))
        code = canonical(code_version(experiment))
        again = "rerun without --resume to start over, or choose another --out"
        for seed in sorted(found):
            r = found[seed]
            where = f"--resume: seed {seed} in {self.dir}"
            if r.slug != experiment.slug:
                raise ResumeError(f"{where} is of {r.slug!r}, not {experiment.slug!r}; {again}")
            if r.quick != quick:
                modes = ("a quick", "a full")
                raise ResumeError(
                    f"{where} is from {modes[0] if r.quick else modes[1]} run and this is "
                    f"{modes[0] if quick else modes[1]} run; {again}"
                )
            if canonical(r.config) != config:
                raise ResumeError(
                    f"{where} ran with a different config ({config_diff(r.config, config)}); {again}"
                )
            if canonical(r.code) != code:
                raise ResumeError(
                    f"{where} was run by different code ({_code_text(r.code)} there, "
                    f"{_code_text(code_version(experiment))} here); {again}"
                )
        return found

    def carry(self, stage: str | Path, seeds: Iterable[int]) -> None:
        """Copy the files of ``seeds`` into ``stage/seeds`` (a report folder being staged)."""
        target = Path(stage) / SEEDS_DIR
        for seed in seeds:
            src = self.path(seed)
            if src.is_file():
                target.mkdir(exist_ok=True)
                shutil.copyfile(src, target / src.name)
