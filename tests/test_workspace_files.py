"""Generated READMEs are current, CI runs the README's test command, the changed-packages script."""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_readme_blocks_are_current():
    r = subprocess.run(
        [sys.executable, "scripts/readme_tables.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- test-command -->\n```bash\n(.+?)\n```", readme)
    assert m, "README.md: no test command block after <!-- test-command -->"
    command = m.group(1).strip()
    lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln and not ln.startswith("#")]
    assert lines[-1].strip() == command


def test_every_reproduction_folder_belongs_to_a_package():
    slugs = {p.name for p in PACKAGES}
    for folder in (ROOT / "reproduction").glob("*"):
        if folder.is_dir():
            assert folder.name in slugs, f"reproduction/{folder.name}: no such package"
            assert (folder / "report.json").is_file()
            assert not json.loads((folder / "report.json").read_text())["quick"], "commit full runs only"


@pytest.fixture
def changed():
    return _load(ROOT / ".github" / "scripts" / "changed_packages.py", "changed_packages")


def test_changed_packages_rules(changed, tmp_path):
    for slug in ("alpha", "beta"):
        (tmp_path / "packages" / slug).mkdir(parents=True)
        (tmp_path / "packages" / slug / "pyproject.toml").write_text("")
    (tmp_path / "packages" / "stray").mkdir()
    f = changed.changed_packages
    assert f(["packages/alpha/src/x.py", "reproduction/alpha/report.json"], tmp_path) == ["alpha"]
    assert f(["README.md"], tmp_path) == []
    assert f(["docs/conf.py", "docs/pages/verdicts.md"], tmp_path) == []
    for everything in (
        "shared/src/a.py",
        "uv.lock",
        "pyproject.toml",
        "noxfile.py",
        ".github/x.yml",
        "tests/t.py",
    ):
        assert f([everything], tmp_path) == ["alpha", "beta"]
    assert f(["packages/gone/README.md"], tmp_path) == []  # deleted package
    with pytest.raises(changed.UnknownPathError, match="'packages/stray' is not a known package"):
        f(["packages/stray/x.py"], tmp_path)
    with pytest.raises(changed.UnknownPathError, match="does not know"):
        f(["mystery/new.md"], tmp_path)


def test_changed_packages_cli_on_this_repo():
    script = ROOT / ".github" / "scripts" / "changed_packages.py"
    r = subprocess.run([sys.executable, str(script)], input="uv.lock\n", capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout) == [p.name for p in PACKAGES]
    r = subprocess.run([sys.executable, str(script)], input="mystery/file\n", capture_output=True, text=True)
    assert r.returncode == 2 and "does not know" in r.stderr


# A measured figure in README prose: a time (``12 s``, ``0.3 ms``, ``2 min``) or a ratio (``1.5x``, ``2×``).
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s?(?:s|ms|µs|us|min)\b|[x×](?!\w))")
GENERATED = re.compile(r"<!-- (\w[\w-]*):begin -->\n.*?<!-- \1:end -->", re.S)
FENCE = re.compile(r"```.*?```", re.S)
BUDGET = re.compile(r"(under|<=?|at most|within|budget of|limit of|timeout of)\s*$", re.I)


def stale_prose_figures(text: str) -> list[str]:
    """Figures stated in prose (outside generated blocks and code) that no generated block shows.

    A budget ("under 30 s") is not a measurement and is allowed.
    """
    blocks = " ".join(m.group(0) for m in GENERATED.finditer(text))
    prose = FENCE.sub("", GENERATED.sub("", text))
    return [
        m.group(0)
        for m in FIGURE.finditer(prose)
        if not BUDGET.search(prose[max(0, m.start() - 20) : m.start()]) and m.group(0) not in blocks
    ]


def test_stale_prose_figure_is_caught():
    text = (
        "The full run took 276 s and PENEX is 1.5x slower; it finishes under 30 s.\n"
        "<!-- reproduction:begin -->\nseeds [0, 1], 110 s on 2 CPUs; ratio 1.22x\n<!-- reproduction:end -->\n"
        "As the table shows (110 s, 1.22x), and in code: ```t = 9 s```\n"
    )
    assert stale_prose_figures(text) == ["276 s", "1.5x"]


@pytest.mark.parametrize(
    "readme", [ROOT / "README.md", *(p / "README.md" for p in PACKAGES)], ids=lambda p: p.parent.name
)
def test_readme_prose_states_no_figure_the_generated_blocks_do_not(readme):
    stale = stale_prose_figures(readme.read_text())
    assert not stale, (
        f"{readme.relative_to(ROOT)}: figures in prose that no generated block shows: {stale}; "
        "refer to the generated tables instead of restating them"
    )
