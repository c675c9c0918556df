"""Which packages a change must test: reads changed paths (one per line), prints a JSON list of slugs.

    git diff --name-only BASE HEAD | python3 .github/scripts/changed_packages.py

- packages/<slug>/... or reproduction/<slug>/...  -> that package;
- the core, the lock, the workspace files, CI, workspace tests, scripts -> every package;
- top-level documentation and the site's sources (docs/: built and checked by the docs workflow) -> nothing;
- anything else raises: a path this script does not know must not silently get no CI.
A packages/<slug> folder that no longer exists (a deleted package) has nothing left to test.
Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = {"shared", "pyproject.toml", "uv.lock", "noxfile.py", ".github", ".ci", "tests", "scripts"}
NOTHING = {"README.md", "CONTRIBUTING.md", ".gitignore", "LICENSE"}
NOTHING_UNDER = {"docs"}  # folders whose files test no package


class UnknownPathError(ValueError):
    pass


def all_packages(root: Path = ROOT) -> list[str]:
    return sorted(p.name for p in (root / "packages").glob("*") if (p / "pyproject.toml").is_file())


def changed_packages(paths: list[str], root: Path = ROOT) -> list[str]:
    known = all_packages(root)
    out: set[str] = set()
    for raw in paths:
        path = raw.strip()
        if not path:
            continue
        parts = Path(path).parts
        top = parts[0]
        if top in EVERYTHING:
            return known
        if (top in NOTHING and len(parts) == 1) or (top in NOTHING_UNDER and len(parts) > 1):
            continue
        if top in ("packages", "reproduction") and len(parts) >= 2:
            slug = parts[1]
            if slug in known:
                out.add(slug)
                continue
            if top == "packages" and not (root / "packages" / slug).exists():
                continue  # deleted package
            if top == "reproduction" and len(parts) == 2 and slug in ("summary.md", "sweep-timing.json"):
                continue
            raise UnknownPathError(f"{path}: '{top}/{slug}' is not a known package (no pyproject.toml)")
        raise UnknownPathError(f"{path}: this script does not know which packages '{top}' affects")
    return sorted(out)


def main() -> int:
    try:
        slugs = changed_packages(sys.stdin.read().splitlines())
    except UnknownPathError as e:
        print(f"changed_packages: {e}", file=sys.stderr)
        return 2
    print(json.dumps(slugs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
