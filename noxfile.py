"""nox sessions, discovered from the tree: a new package under packages/ needs no edit here.

    uv run nox                      # every session
    uv run nox -s "tests(penex)"    # one package, in a venv holding only the core, it and its test group
    uv run nox -s lint core workspace

Each session's venv is filled from ``uv.lock`` with ``uv sync --frozen`` into that venv, so versions
match the lock, and the per-package venv holds only what the package declares (an undeclared import
fails there even when the shared workspace venv would hide it).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PACKAGES = sorted(p.name for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())

nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
# Some machines set PYTHONDONTWRITEBYTECODE=1: then every process recompiles torch's sources on import
# (seconds each). The session venvs are throwaway, so let them cache bytecode on first import.
os.environ["PYTHONDONTWRITEBYTECODE"] = ""


def _sync(session: nox.Session, *args: str) -> None:
    """``uv sync --frozen`` into this session's venv (not the workspace's .venv)."""
    session.run_install(
        "uv",
        "sync",
        "--frozen",
        "--no-default-groups",
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format) over the repo, actionlint over the workflows."""
    _sync(session, "--only-group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.y*ml"))
    session.run("actionlint", *workflows)


@nox.session
def core(session: nox.Session) -> None:
    """The core's own tests, with only the core and its test group installed."""
    _sync(session, "--package", "paperworks-core", "--extra", "ray", "--group", "test")
    session.run("pytest", "shared/tests", *session.posargs)


@nox.session
@nox.parametrize("slug", [nox.param(s, id=s) for s in PACKAGES])
def tests(session: nox.Session, slug: str) -> None:
    """One method package's tests, with only the core, that package and its test group installed."""
    _sync(session, "--package", f"paperworks-{slug}", "--group", "test")
    session.run("pytest", f"packages/{slug}/tests", *session.posargs)


@nox.session
def workspace(session: nox.Session) -> None:
    """Conventions every package must meet, the CLI end to end, the generated READMEs, the wheels."""
    _sync(session, "--all-packages", "--group", "dev")
    session.run("pytest", "tests", *session.posargs)


# Browsers the docs session's browser test can drive (playwright's own browser download is not used).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _find_or_install_chromium(session: nox.Session) -> None:
    """A Chromium for the browser test: one on PATH, else Debian's ``chromium`` when run as root with
    apt. Nothing found or installed is no failure: the browser test then skips and says why."""
    if os.environ.get("PAPERWORKS_CHROMIUM") or any(shutil.which(b) for b in BROWSERS):
        return
    if not (sys.platform == "linux" and shutil.which("apt-get") and os.geteuid() == 0):
        session.warn("no Chromium on PATH and no root apt-get to install one: the browser test will skip")
        return
    session.log("no Chromium on PATH: installing Debian's chromium for the browser test")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    anything = list(range(256))  # a failed install is reported by the test's skip, not here
    install = ("apt-get", "install", "-y", "-qq", "chromium")
    session.run(*install, external=True, env=env, success_codes=anything)
    if not shutil.which("chromium"):  # stale package lists: refresh them once
        session.run("apt-get", "update", "-qq", external=True, env=env, success_codes=anything)
        session.run(*install, external=True, env=env, success_codes=anything)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """The results and documentation site, built into site/ (not part of a plain ``uv run nox``).

    Pages come from the packages' READMEs, reproduction/ and benchmarks/results.json (docs/build_pages.py),
    the API reference from the docstrings (read statically: no method package or torch is installed);
    then the link check and the browser test (tests/test_workspace_docs.py), screenshots in
    build/docs-artifacts.
    """
    _sync(session, "--only-group", "docs")
    _find_or_install_chromium(session)
    session.run("python", "docs/build_pages.py", "--out", "build/docs-src")
    shutil.rmtree(ROOT / "site", ignore_errors=True)
    session.run("sphinx-build", "-b", "html", "-q", "-c", "docs", "build/docs-src", "site")
    session.run(
        "pytest",
        "tests/test_workspace_docs.py",
        *session.posargs,
        env={
            "PAPERWORKS_DOCS_SITE": str(ROOT / "site"),
            "PAPERWORKS_DOCS_ARTIFACTS": str(ROOT / "build" / "docs-artifacts"),
        },
    )
