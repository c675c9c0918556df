"""Each package README's Usage example runs as written (in a fresh interpreter, from a temp folder)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())


def usage_example(readme: Path) -> str:
    text = readme.read_text()
    section = text[text.index("## Usage") :]
    section = section[: section.find("\n## ", 1)]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, f"{readme}: the Usage section has no ```python example"
    return m.group(1)


def test_readme_usage_example_runs(pkg, tmp_path):
    code = usage_example(pkg / "README.md")
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, f"{pkg.name} README example failed:\n{r.stderr[-2000:]}"
