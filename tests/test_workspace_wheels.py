"""Wheels: the core installs alone and lists nothing; method wheels share the namespace with it."""

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())


UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is not on PATH")


def _run(*args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    assert r.returncode == 0, r.stderr + r.stdout
    return r


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    names = ["paperworks-core"] + [f"paperworks-{p.name}" for p in PACKAGES[:2]]
    for name in names:
        _run(UV, "build", "--wheel", "--package", name, "--out-dir", str(out), "-q", cwd=ROOT)
    return out


def test_no_wheel_ships_a_namespace_init(wheels):
    for whl in wheels.glob("*.whl"):
        assert "paperworks/__init__.py" not in zipfile.ZipFile(whl).namelist(), whl.name


def test_core_wheel_alone_lists_nothing_and_methods_share_the_namespace(wheels, tmp_path):
    venv = tmp_path / "venv"
    _run(UV, "venv", "-q", str(venv))
    py = str(venv / "bin" / "python")
    core = next(wheels.glob("paperworks_core-*.whl"))
    _run(UV, "pip", "install", "-q", "--python", py, str(core))
    r = _run(str(venv / "bin" / "paperworks"), "list")
    assert r.stdout.strip() == "no paperworks methods installed"
    methods = [w for w in wheels.glob("*.whl") if w != core]
    if not methods:
        pytest.skip("no method package yet")
    _run(UV, "pip", "install", "-q", "--no-deps", "--python", py, *map(str, methods))
    snakes = [p.name.replace("-", "_") for p in PACKAGES[:2]]
    code = "import importlib.util as u, paperworks.core; " + "; ".join(
        f"assert u.find_spec('paperworks.{s}') is not None" for s in snakes
    )
    _run(py, "-c", code)
