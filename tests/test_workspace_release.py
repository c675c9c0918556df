"""Releases: versions, core ranges, changelogs, the lock, and the release workflow run on one package.

The release workflow (.github/workflows/release.yml) builds one distribution per tag. Its build job's
shell steps are run here as the workflow writes them, on the lightest method package, so what a tag
would do (build the sdist and wheel, check the metadata, install the wheel alone in a fresh venv, run
the package's tests against it) is tested before any tag is pushed. Only the publish step cannot run.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())
DISTS = [ROOT / "shared", *PACKAGES]  # every distribution's folder, the core first
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
UV = shutil.which("uv")
# The package whose release steps the test runs: few, light dependencies and a short test suite.
PROBE = "angular-mean"

SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
CHANGE_TYPES = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def _project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]


def _ids(folders):
    return [f.name for f in folders]


CORE_VERSION = Version(_project(ROOT / "shared")["version"])


def core_range_problem(requirement: str, core: Version) -> str | None:
    """Why a method's ``paperworks-core`` requirement is not a release range admitting ``core``."""
    spec = Requirement(requirement).specifier
    if not any(s.operator in (">=", "~=", "==", "===") for s in spec):
        return f"{requirement!r}: no lower bound (declare the core series it was tested with)"
    if not any(s.operator in ("<", "<=", "~=", "==", "===") for s in spec):
        return f"{requirement!r}: no upper bound (a future core may break it)"
    if not spec.contains(core, prereleases=True):
        return f"{requirement!r} excludes the workspace core {core}"
    # While the major version is 0 a minor release may break the API: the range stops before it.
    breaking = Version(f"0.{core.minor + 1}") if core.major == 0 else Version(f"{core.major + 1}")
    if spec.contains(breaking, prereleases=True):
        return f"{requirement!r} admits {breaking}, the next core series that may break the API"
    return None


def _core_requirements(folder: Path) -> list[str]:
    deps = _project(folder).get("dependencies", [])
    return [r for r in deps if canonicalize_name(Requirement(r).name) == "paperworks-core"]


# -- versions and ranges ------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", DISTS, ids=_ids(DISTS))
def test_version_is_semantic(folder):
    v = _project(folder)["version"]
    assert SEMVER.fullmatch(v), f"{folder.name}/pyproject.toml: version {v!r} is not MAJOR.MINOR.PATCH"


def test_method_declares_a_core_range_admitting_the_workspace_core(pkg):
    reqs = _core_requirements(pkg)  # pkg: every package, from conftest
    assert len(reqs) == 1, f"{pkg.name}: expected one paperworks-core requirement, got {reqs}"
    problem = core_range_problem(reqs[0], CORE_VERSION)
    assert problem is None, f"packages/{pkg.name}/pyproject.toml: {problem}"


@pytest.mark.parametrize(
    "requirement, core, expected",
    [
        ("paperworks-core>=0.2,<0.3", "0.2.0", None),
        ("paperworks-core>=0.2,<0.3", "0.2.7", None),
        ("paperworks-core~=1.4", "1.9.0", None),
        ("paperworks-core>=0.2,<0.3", "0.3.0", "excludes the workspace core"),
        ("paperworks-core>=0.3,<0.4", "0.2.0", "excludes the workspace core"),
        ("paperworks-core", "0.2.0", "no lower bound"),
        ("paperworks-core>=0.2", "0.2.0", "no upper bound"),
        ("paperworks-core>=0.1,<1", "0.2.0", "admits 0.3"),
    ],
)
def test_core_range_check_catches_bad_ranges(requirement, core, expected):
    problem = core_range_problem(requirement, Version(core))
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


def test_lock_records_every_workspace_version():
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    locked = {p["name"]: p["version"] for p in lock["package"] if "editable" in p.get("source", {})}
    for folder in DISTS:
        project = _project(folder)
        assert locked.get(project["name"]) == project["version"], (
            f"uv.lock has {project['name']} {locked.get(project['name'])}, pyproject {project['version']}: "
            "run `uv lock`"
        )


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_lock_is_current():
    r = subprocess.run([UV, "lock", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_no_package_is_named_core():
    assert "core" not in {p.name for p in PACKAGES}, "the tag core-v<version> releases paperworks-core"


# -- changelogs ---------------------------------------------------------------------------------------

HEADING = re.compile(r"^## \[(?P<v>Unreleased|[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?$")


def changelog_problems(text: str, version: str) -> list[str]:
    """What keeps ``text`` from being a Keep a Changelog file with a dated section for ``version``."""
    lines = text.splitlines()
    problems = []
    if not lines or lines[0] != "# Changelog":
        problems.append("the first line is not '# Changelog'")
    if "keepachangelog.com" not in text:
        problems.append("no link to keepachangelog.com (say which form the file follows)")
    sections: list[tuple[str, str | None, list[str]]] = []
    for ln in lines:
        if ln.startswith("## "):
            m = HEADING.match(ln)
            if not m:
                problems.append(f"{ln!r}: expected '## [Unreleased]' or '## [X.Y.Z] - YYYY-MM-DD'")
                continue
            sections.append((m["v"], m["date"], []))
        elif sections:
            sections[-1][2].append(ln)
    if not sections or sections[0][0] != "Unreleased":
        problems.append("the first section is not '## [Unreleased]'")
    released = [s for s in sections if s[0] != "Unreleased"]
    versions = []
    for v, date, body in released:
        if not SEMVER.fullmatch(v):
            problems.append(f"[{v}]: not MAJOR.MINOR.PATCH")
            continue
        if date is None:
            problems.append(f"[{v}]: no release date")
        kinds = [b[4:] for b in body if b.startswith("### ")]
        if not kinds:
            problems.append(f"[{v}]: no '### Added/Changed/...' subsection")
        problems += [f"[{v}]: '### {k}' is not one of {CHANGE_TYPES}" for k in kinds if k not in CHANGE_TYPES]
        if not any(b.startswith("- ") for b in body):
            problems.append(f"[{v}]: no entries")
        versions.append(Version(v))
    if versions != sorted(versions, reverse=True) or len(set(versions)) != len(versions):
        problems.append(f"versions are not newest first, each once: {[str(v) for v in versions]}")
    if Version(version) not in versions:
        problems.append(f"no section '## [{version}] - YYYY-MM-DD' for the version in pyproject.toml")
    return problems


@pytest.mark.parametrize("folder", DISTS, ids=_ids(DISTS))
def test_each_package_keeps_a_changelog(folder):
    path = folder / "CHANGELOG.md"
    assert path.is_file(), f"{path.relative_to(ROOT)}: missing"
    problems = changelog_problems(path.read_text(), _project(folder)["version"])
    assert not problems, f"{path.relative_to(ROOT)}: " + "; ".join(problems)


def test_changelog_check_catches_a_missing_version_and_bad_headings():
    good = (
        "# Changelog\n\nKeep a Changelog (https://keepachangelog.com/en/1.1.0/).\n\n## [Unreleased]\n\n"
        "## [0.2.0] - 2026-12-01\n\n### Changed\n\n- b\n\n## [0.1.0] - 2026-11-29\n\n### Added\n\n- a\n"
    )
    assert changelog_problems(good, "0.2.0") == []
    assert any("no section '## [0.3.0]" in p for p in changelog_problems(good, "0.3.0"))
    assert any("not one of" in p for p in changelog_problems(good.replace("### Added", "### New"), "0.2.0"))
    assert any("no release date" in p for p in changelog_problems(good.replace(" - 2026-11-29", ""), "0.2.0"))
    swapped = good.replace("[0.2.0]", "[X]").replace("[0.1.0]", "[0.2.0]").replace("[X]", "[0.1.0]")
    assert any("newest first" in p for p in changelog_problems(swapped, "0.2.0"))


def test_release_files_are_known_to_the_changed_packages_script():
    spec = importlib.util.spec_from_file_location(
        "changed_packages", ROOT / ".github/scripts/changed_packages.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    paths = [
        "CONTRIBUTING.md",
        "shared/CHANGELOG.md",
        f"packages/{PROBE}/CHANGELOG.md",
        str(WORKFLOW.relative_to(ROOT)),
    ]
    for path in paths:
        mod.changed_packages([path])  # raises UnknownPathError on a path CI does not know


# -- the release workflow -----------------------------------------------------------------------------


def _workflow() -> dict:
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load(WORKFLOW.read_text())
    wf["on"] = wf.pop(True, wf.get("on"))  # YAML 1.1 reads the key `on` as true
    return wf


def test_release_workflow_runs_on_release_tags_and_publishes_with_trusted_publishing():
    wf = _workflow()
    assert wf["on"] == {"push": {"tags": ["*-v[0-9]*"]}}
    assert wf["permissions"] == {"contents": "read"}
    build, publish = wf["jobs"]["build"], wf["jobs"]["publish"]
    scripts = "\n".join(s.get("run", "") for s in build["steps"])
    assert 'uv build --package "$DIST"' in scripts and "twine check --strict" in scripts
    for step in build["steps"]:
        assert "${{" not in step.get("run", ""), (
            f"{step.get('name')}: pass values through env:, not ${{{{ }}}}"
        )
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert [s["uses"] for s in publish["steps"]][-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert not any("password" in s.get("with", {}) for s in publish["steps"]), "no token: trusted publishing"


def _actionlint() -> str | None:
    here = Path(sys.executable).parent / "actionlint"
    return str(here) if here.is_file() else shutil.which("actionlint")


def test_actionlint_passes_on_the_release_workflow():
    exe = _actionlint()
    if exe is None:
        pytest.skip("actionlint is not installed (the lint dependency group has it on linux x86_64)")
    r = subprocess.run([exe, str(WORKFLOW)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


EXPRESSIONS = {"${{ github.ref_name }}": "tag"}


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env = {k: v for k, v in env.items() if not k.startswith(("UV_PROJECT", "GITHUB_", "PYTEST_"))}
    env["PATH"] = os.pathsep.join([str(Path(UV).parent), env.get("PATH", "")])
    env.update(extra)
    return env


def run_build_steps(tag: str, runner_temp: Path, *, only: int | None = None, **env: str):
    """Run the build job's ``run:`` steps (the first ``only`` of them) as Actions would, for ``tag``.

    Returns ``[(name, completed process, seconds)]`` up to the first failing step. Each step gets
    the step's ``env:`` (its expressions filled in), RUNNER_TEMP, GITHUB_ENV and GITHUB_OUTPUT;
    what a step appends to GITHUB_ENV reaches the steps after it.
    """
    build = _workflow()["jobs"]["build"]
    shell = build["defaults"]["run"]["shell"]
    assert shell == "bash"
    steps = [s for s in build["steps"] if "run" in s][:only]
    runner_temp.mkdir(parents=True, exist_ok=True)
    github_env, github_output = runner_temp / "github_env", runner_temp / "github_output"
    base = _clean_env(RUNNER_TEMP=str(runner_temp), GITHUB_OUTPUT=str(github_output), **env)
    done = []
    for step in steps:
        github_env.write_text("")
        step_env = dict(base)
        for key, value in step.get("env", {}).items():
            assert value in EXPRESSIONS, f"{step['name']}: env {key}={value!r} is not known to this test"
            step_env[key] = {"tag": tag}[EXPRESSIONS[value]]
        step_env["GITHUB_ENV"] = str(github_env)
        start = time.perf_counter()
        r = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=ROOT,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        done.append((step["name"], r, time.perf_counter() - start))
        if r.returncode != 0:
            break
        for line in github_env.read_text().splitlines():
            key, _, value = line.partition("=")
            base[key] = value
    return done


def _outputs(runner_temp: Path) -> dict[str, str]:
    lines = (runner_temp / "github_output").read_text().splitlines()
    return dict(line.partition("=")[::2] for line in lines)


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
@pytest.mark.parametrize(
    "tag, expected",
    [
        (f"core-v{CORE_VERSION}", ("paperworks-core", str(CORE_VERSION))),
        (f"{PROBE}-v{_project(ROOT / 'packages' / PROBE)['version']}", None),
    ],
    ids=["core", PROBE],
)
def test_release_tag_names_one_distribution_and_its_version(tag, expected, tmp_path):
    ((_, r, _),) = run_build_steps(tag, tmp_path, only=1)
    assert r.returncode == 0, r.stdout + r.stderr
    out = _outputs(tmp_path)
    dist, version = expected or (f"paperworks-{PROBE}", _project(ROOT / "packages" / PROBE)["version"])
    assert (out["distribution"], out["version"]) == (dist, version)


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
@pytest.mark.parametrize(
    "tag, message",
    [
        (f"{PROBE}-v9.9.9", "declares version"),
        ("no-such-method-v0.1.0", "no such package"),
        ("angular-mean-0.2.0", "is not <slug>-v<version>"),
    ],
)
def test_release_refuses_a_tag_that_does_not_match_the_tree(tag, message, tmp_path):
    ((_, r, _),) = run_build_steps(tag, tmp_path, only=1)
    assert r.returncode != 0 and message in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_release_steps_build_check_install_and_test_one_method_alone(tmp_path):
    """The build job end to end on PROBE; the core comes from a wheel built here (it is not on PyPI yet)."""
    core_dist = tmp_path / "core-dist"
    r = subprocess.run(
        [UV, "build", "--wheel", "--package", "paperworks-core", "--out-dir", str(core_dist), "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_clean_env(),
    )
    assert r.returncode == 0, r.stderr
    (core_wheel,) = core_dist.glob("paperworks_core-*.whl")
    version = _project(ROOT / "packages" / PROBE)["version"]
    runner_temp = tmp_path / "runner"
    done = run_build_steps(f"{PROBE}-v{version}", runner_temp, CORE_WHEEL=str(core_wheel))
    timings = ", ".join(f"{name}: {secs:.1f} s" for name, _, secs in done)
    name, last, _ = done[-1]
    assert last.returncode == 0, f"step '{name}' failed ({timings}):\n{last.stdout}\n{last.stderr}"
    assert len(done) == len([s for s in _workflow()["jobs"]["build"]["steps"] if "run" in s])
    stem = f"paperworks_{PROBE.replace('-', '_')}-{version}"
    assert sorted(p.name for p in (runner_temp / "dist").glob("paperworks*")) == [
        f"{stem}-py3-none-any.whl",
        f"{stem}.tar.gz",
    ]
    tested = done[-1][1].stdout
    snake = PROBE.replace("-", "_")
    assert f"paperworks.{snake}: {runner_temp / 'release-venv'}" in tested, tested  # the installed wheel ran
    assert re.search(r"\d+ passed", tested), tested
    print(timings)
