"""Every package meets the handbook's anatomy: names, entry point, README, tests, benchmarks, imports."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())


README_SECTIONS = ["## Install", "## Usage", "## Fidelity", "## Reproduction", "## Benchmark"]
NETWORK = re.compile(
    r"\b(requests\.(get|post|Session)|urllib\.request|urlopen|http\.client|socket\.create_connection|"
    r"hf_hub_download|snapshot_download|fetch_openml|fetch_20newsgroups|fetch_california_housing|"
    r"fetch_covtype|fetch_lfw_\w+|fetch_olivetti_faces|fetch_kddcup99|fetch_rcv1|torchvision\.datasets)\b"
)
STDLIB = set(sys.stdlib_module_names)


def _meta(pkg: Path) -> dict:
    return tomllib.loads((pkg / "pyproject.toml").read_text())


def _snake(pkg: Path) -> str:
    return pkg.name.replace("-", "_")


def _py_files(pkg: Path, *subdirs: str) -> list[Path]:
    return sorted(f for d in subdirs for f in (pkg / d).rglob("*.py"))


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(dotted module, at module top level?) for every absolute import in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, id(node) in top))
    return out


def _req_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")


def test_there_are_packages():
    assert PACKAGES, "no packages under packages/"


def test_names_entry_point_and_build(pkg):
    meta = _meta(pkg)
    proj = meta["project"]
    assert proj["name"] == f"paperworks-{pkg.name}"
    assert proj["requires-python"].startswith(">=3.11")
    eps = proj["entry-points"]["paperworks.experiments"]
    assert list(eps) == [pkg.name]
    assert eps[pkg.name].startswith(f"paperworks.{_snake(pkg)}.experiments:")
    assert meta["build-system"]["build-backend"] == "hatchling.build"
    assert meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/paperworks"]
    assert "paperworks-core" in [_req_name(r) for r in proj["dependencies"]]
    assert "test" in meta.get("dependency-groups", {}), "a `test` dependency group for the nox session"


def test_src_layout_and_namespace(pkg):
    assert not (pkg / "src" / "paperworks" / "__init__.py").exists(), "breaks the PEP 420 namespace"
    init = pkg / "src" / "paperworks" / _snake(pkg) / "__init__.py"
    assert init.is_file()
    assert "__all__" in init.read_text()
    assert (pkg / "src" / "paperworks" / _snake(pkg) / "experiments.py").is_file()


def test_readme_sections_and_citation(pkg):
    text = (pkg / "README.md").read_text()
    positions = [text.find(s) for s in README_SECTIONS]
    assert all(p >= 0 for p in positions), (
        f"missing sections: {[s for s, p in zip(README_SECTIONS, positions) if p < 0]}"
    )
    assert positions == sorted(positions), "sections out of order"
    assert re.search(r"arXiv[:\s*]+\d{4}\.\d{4,5}|no public text", text), (
        "cite the arXiv id or say 'no public text'"
    )
    for block in ("reproduction", "benchmark"):
        assert f"<!-- {block}:begin -->" in text and f"<!-- {block}:end -->" in text


def test_tests_and_benchmarks_present(pkg):
    tests = sorted((pkg / "tests").glob("test_*.py"))
    assert tests, "no tests/test_*.py"
    for t in tests:
        assert t.name.startswith(f"test_{_snake(pkg)}"), (
            f"{t.name}: prefix test files with test_{_snake(pkg)}_"
        )
    assert list((pkg / "benchmarks").glob("*.py")), "no benchmarks/*.py"


def test_test_file_names_unique_across_repo():
    names = [p.name for p in ROOT.glob("packages/*/tests/test_*.py")] + [
        p.name for p in ROOT.glob("shared/tests/*.py")
    ]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"test files sharing a name across packages: {dupes}"


def test_no_import_of_another_method_package(pkg):
    own = f"paperworks.{_snake(pkg)}"
    for f in _py_files(pkg, "src", "tests", "benchmarks"):
        for mod, _ in _imports(f):
            if mod.startswith("paperworks.") and not (mod == own or mod.startswith(own + ".")):
                assert mod == "paperworks.core" or mod.startswith("paperworks.core."), f"{f}: imports {mod}"


def test_no_network_and_no_placeholders_in_source(pkg):
    for f in _py_files(pkg, "src"):
        for i, line in enumerate(f.read_text().splitlines(), 1):
            assert not NETWORK.search(line), f"{f}:{i}: a network call at run time"
            assert not re.search(r"\b(TODO|FIXME|XXX)\b|raise NotImplementedError", line), (
                f"{f}:{i}: placeholder"
            )


def _eager_modules(pkg: Path) -> set[Path]:
    """Modules loaded by ``import paperworks.<snake>`` or by the experiment's entry point: __init__.py,
    experiments.py and every module they import at top level, transitively (relative or absolute)."""
    src = pkg / "src" / "paperworks" / _snake(pkg)
    todo = [src / "__init__.py", src / "experiments.py"]
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        tree = ast.parse(f.read_text())
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level == 1:
                    names = [mod] if mod else [a.name for a in node.names]
                elif mod.startswith(f"paperworks.{_snake(pkg)}."):
                    names = [mod.split(".", 2)[2]]
                else:
                    continue
                todo += [src / f"{n.replace('.', '/')}.py" for n in names if n]
    return seen


def test_imports_are_declared(pkg):
    """Imports at the top of eagerly loaded modules are runtime dependencies; any other import (inside a
    function, or in an integration module users import explicitly) is a dependency or an extra."""
    proj = _meta(pkg)["project"]
    runtime = {_req_name(r) for r in proj["dependencies"]}
    extras = {_req_name(r) for reqs in proj.get("optional-dependencies", {}).values() for r in reqs}
    dists = packages_distributions()
    eager = _eager_modules(pkg)
    for f in _py_files(pkg, "src"):
        for mod, at_top in _imports(f):
            name = mod.split(".")[0]
            if name in STDLIB or name == "paperworks" or name == "__future__":
                continue
            provided = {d.lower().replace("_", "-") for d in dists.get(name, [name])}
            needed_at_import = at_top and f in eager
            allowed = runtime if needed_at_import else runtime | extras
            assert provided & allowed, f"{f}: imports {mod!r} ({sorted(provided)}), not declared" + (
                "" if needed_at_import else " as a dependency or an extra"
            )


def test_tests_of_each_package_run_alone(pkg):
    """No conftest or test imports reaching into another package's tests folder."""
    for f in _py_files(pkg, "tests"):
        text = f.read_text()
        for other in PACKAGES:
            if other != pkg:
                assert f"packages/{other.name}" not in text, f"{f}: refers to {other.name}"


@pytest.mark.parametrize("path", ["pyproject.toml", "uv.lock", "noxfile.py", ".ci/run", "README.md"])
def test_workspace_files_exist(root, path):
    assert (root / path).is_file()


def test_every_import_of_the_method_resolves_in_the_root_environment(pkg):
    """`uv run paperworks reproduce <slug>` from a fresh clone finds everything the method imports: the
    root's dev group pulls each package with the extras its experiment uses (import check, not a run)."""
    import importlib.util

    missing = set()
    for path in _py_files(pkg, "src"):
        for module, _top in _imports(path):
            top = module.split(".")[0]
            if top in STDLIB or top == "paperworks":
                continue
            if importlib.util.find_spec(top) is None:
                missing.add(f"{module} ({path.relative_to(pkg)})")
    assert not missing, f"{pkg.name}: not importable in the root environment: {sorted(missing)}"
