"""Measure the README's sweep timing: 2 packages x 6 quick seeds, local engine vs Ray, alternating rounds.

    uv run --extra ray python scripts/sweep_timing.py    # writes reproduction/sweep-timing.json

`scripts/readme_tables.py` renders the README's ``sweep-timing`` block from that file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from paperworks.core import atomic_write_json
from paperworks.core.record import machine_record

ROOT = Path(__file__).resolve().parent.parent
SLUGS = ("angular-mean", "truthful-calibration")
ENGINES = {"local": [], "ray": ["--engine", "ray", "--num-cpus", "2"]}


def main(rounds: int = 2) -> int:
    out: dict = {"slugs": list(SLUGS), "seeds": 6, "quick": True, "rounds": []}
    for r in range(rounds):
        row = {}
        for engine, extra in ENGINES.items():
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [
                    sys.executable,
                    "-m",
                    "paperworks.core.cli",
                    "sweep",
                    *SLUGS,
                    "--quick",
                    "--seeds",
                    "6",
                ]
                start = time.perf_counter()
                done = subprocess.run(
                    [*cmd, *extra, "--out", tmp], capture_output=True, text=True, env=os.environ
                )
                row[engine] = time.perf_counter() - start
                if done.returncode != 0:
                    print(done.stderr, file=sys.stderr)
                    return done.returncode
        out["rounds"].append(row)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v:.1f} s" for k, v in row.items()))
    out["machine"] = machine_record()
    atomic_write_json(ROOT / "reproduction" / "sweep-timing.json", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
