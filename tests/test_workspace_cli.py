"""The installed CLI sees every package, loads each experiment, and refuses bad input in one line."""

import subprocess
import sys
from pathlib import Path

from paperworks.core import find_experiments, load_experiment

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "paperworks.core.cli", *args], capture_output=True, text=True, cwd=cwd
    )


def test_every_package_is_registered_and_loads():
    found = find_experiments()
    for pkg in PACKAGES:
        assert pkg.name in found, f"{pkg.name}: entry point not installed (uv sync --all-packages)"
        exp = load_experiment(pkg.name)
        assert exp.slug == pkg.name
        assert exp.claims, f"{pkg.name}: an experiment declares at least one claim"
        assert len({c.key for c in exp.claims}) == len(exp.claims)


def test_every_experiment_has_a_frozen_config_and_enough_seeds():
    """Quick and full are two instances of one frozen dataclass; comparative claims get >= 5 seeds
    in the full run unless ``seeds_note`` says why fewer fit the budget."""
    import dataclasses

    for pkg in PACKAGES:
        exp = load_experiment(pkg.name)
        quick, full = exp.config(True), exp.config(False)
        assert dataclasses.is_dataclass(full) and type(quick) is type(full), f"{pkg.name}: config"
        assert type(full).__dataclass_params__.frozen, f"{pkg.name}: config must be a frozen dataclass"
        comparative = [c.key for c in exp.claims if not c.exact]
        if comparative and exp.default_seeds < 5:
            assert exp.seeds_note.strip(), (
                f"{pkg.name}: {exp.default_seeds} seeds for claims {comparative}; "
                "set seeds_note (why fewer than 5)"
            )


def test_list_prints_every_package():
    r = _cli("list")
    assert r.returncode == 0, r.stderr
    for pkg in PACKAGES:
        assert f"{pkg.name}: " in r.stdout
    assert "cannot be loaded" not in r.stdout


def test_unknown_slug_lists_known_ones(tmp_path):
    r = _cli("reproduce", "no-such-method", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and "unknown method 'no-such-method'" in line
    for pkg in PACKAGES:
        assert pkg.name in line
    assert list(tmp_path.iterdir()) == []
