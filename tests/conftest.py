from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())


def pytest_generate_tests(metafunc):
    if "pkg" in metafunc.fixturenames:
        metafunc.parametrize("pkg", PACKAGES, ids=[p.name for p in PACKAGES])


@pytest.fixture
def root():
    return ROOT
