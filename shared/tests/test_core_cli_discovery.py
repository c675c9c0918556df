"""``list`` and ``show`` read declarations from the source without importing the experiment module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

from paperworks.core import Experiment
from paperworks.core.declarations import (
    Unreadable,
    _ExperimentDefaults,
    declarations_from_experiment,
    read_declarations,
)

# A package shaped like a method package: a heavy import at the top of the experiment module (it
# leaves a marker file when executed), claims built by a helper from sibling-module constants,
# a config dataclass with a nested one, and the quick run as a module constant.
HEAVY = "import os\nopen(os.environ['PW_HEAVY_MARKER'], 'w').write('imported')\n"
DATA = textwrap.dedent(
    '''
    from dataclasses import dataclass

    DOMAINS = ("alpha", "beta")

    @dataclass(frozen=True)
    class Inner:
        """Inner settings. ``steps``: optimiser steps."""

        steps: int = 100
        lr: float = 0.01
    '''
)
EXPERIMENTS = textwrap.dedent(
    '''
    """Demo experiment."""

    from __future__ import annotations

    import math
    from dataclasses import dataclass, field, replace
    from typing import ClassVar

    import pw_heavy_fake  # stands for torch: must not run during a static read

    from paperworks.core import Claim, Experiment, Paper, SlopeClaim

    from .data import DOMAINS, Inner

    NOTE = "our generative model of the {d} domain"


    @dataclass(frozen=True)
    class DemoConfig:
        """Settings. ``n``: samples per domain; ``sizes``: the scaling sizes."""

        n: int = 200
        sizes: tuple[int, ...] = (8, 16, 32)
        cap: float = math.inf  # the clip applied to scores
        inner: Inner = field(default_factory=Inner)
        names: tuple[str, ...] = field(default_factory=lambda: tuple(d.upper() for d in DOMAINS))
        mode: str = "exact"
        """How the scores are computed."""


    QUICK = DemoConfig(n=20, inner=Inner(steps=5))


    def _claims(*, kind: str = "paper") -> tuple:
        out: list = []
        for d in DOMAINS:
            out += [
                Claim(
                    f"{d}_wins",
                    f"{d}: the method wins",
                    f"{d}_gain",
                    ">",
                    0.0,
                    note=NOTE.format(d=d) + f" ({QUICK.n} quick samples)",
                    kind=kind,
                    paired=True,
                )
            ]
        return tuple(out)


    class Base(Experiment):
        default_seeds: ClassVar[int] = 6


    class DemoExperiment(Base):
        slug: ClassVar[str] = "demo-method"
        paper = Paper("A demo paper", arxiv="2501.00002", note="reconstructed " + "from the abstract")
        claims = (
            *_claims(),
            SlopeClaim("rate", "error falls as n^-1/2", "err/n{size}", (8, 16, 32), (-0.7, -0.3)),
        )
        quick_seeds = 2
        seeds_note = f"{len(DOMAINS)} domains per seed"

        def config(self, quick: bool) -> DemoConfig:
            return QUICK if quick else DemoConfig()

        def run_seed(self, seed, *, quick, progress):
            return {}
    '''
)
ODD = textwrap.dedent(
    """
    import pw_heavy_fake

    from paperworks.core import Claim, Experiment, Paper

    def _load():
        import json
        return json.loads('[["k", "s", "m", ">", 0.0]]')

    class OddExperiment(Experiment):
        slug = "odd-method"
        paper = Paper("An odd paper")
        claims = tuple(Claim(*c) for c in _load())  # a call the static read does not make

        def run_seed(self, seed, *, quick, progress):
            return {"m": 1.0}
    """
)


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    pkg = root / "pw_demo_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import pw_heavy_fake\n")
    (pkg / "data.py").write_text(DATA)
    (pkg / "experiments.py").write_text(EXPERIMENTS)
    (root / "pw_odd_mod.py").write_text(ODD)
    (root / "pw_heavy_fake.py").write_text(HEAVY)
    info = root / "pw_demo-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: paperworks-demo-method\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(
        "[paperworks.experiments]\n"
        "demo-method = pw_demo_pkg.experiments:DemoExperiment\n"
        "odd-method = pw_odd_mod:OddExperiment\n"
    )
    marker = tmp_path / "heavy-imported"
    monkeypatch.setenv("PW_HEAVY_MARKER", str(marker))
    monkeypatch.syspath_prepend(str(root))
    return root, marker


def _ep(name, value):
    return EntryPoint(name=name, value=value, group="paperworks.experiments")


def test_the_static_read_matches_the_imported_experiment_and_imports_nothing(site):
    _, marker = site
    d = read_declarations(_ep("demo-method", "pw_demo_pkg.experiments:DemoExperiment"))
    assert not marker.exists() and "pw_demo_pkg" not in sys.modules and "pw_heavy_fake" not in sys.modules
    assert d.slug == "demo-method" and d.source == "static"
    assert (
        d.paper.citation == "A demo paper (arXiv 2501.00002)"
        and d.paper.note == "reconstructed from the abstract"
    )
    assert [c.key for c in d.claims] == ["alpha_wins", "beta_wins", "rate"]
    assert d.claims[0].note == "our generative model of the alpha domain (20 quick samples)"
    assert (d.default_seeds, d.quick_seeds, d.seeds_note) == (6, 2, "2 domains per seed")
    fields = {f.name: f for f in d.config_fields}
    assert list(fields) == ["n", "sizes", "cap", "inner", "inner.steps", "inner.lr", "names", "mode"]
    assert (fields["n"].default, fields["n"].quick) == ("200", "20")
    assert fields["inner"].quick == "Inner(steps=5, lr=0.01)" and fields["inner.steps"].quick == "5"
    assert fields["names"].default == "('ALPHA', 'BETA')" and fields["cap"].default == "inf"
    assert fields["n"].help == "samples per domain" and fields["cap"].help == "the clip applied to scores"
    assert (
        fields["mode"].help == "How the scores are computed."
        and fields["inner.steps"].help == "optimiser steps"
    )
    # now import it, and compare with the same record built from the live object
    from pw_demo_pkg.experiments import DemoExperiment

    assert marker.exists()
    live = declarations_from_experiment(DemoExperiment())
    for name in ("slug", "paper", "claims", "default_seeds", "quick_seeds", "seeds_note", "config_class"):
        assert getattr(d, name) == getattr(live, name), name
    assert [(f.name, f.default, f.quick) for f in d.config_fields] == [
        (f.name, f.default, f.quick) for f in live.config_fields
    ]


def test_what_cannot_be_read_statically_says_why(site):
    with pytest.raises(Unreadable, match="pw_odd_mod line 7: statement Import"):
        read_declarations(_ep("odd-method", "pw_odd_mod:OddExperiment"))
    with pytest.raises(Unreadable, match="no source file"):
        read_declarations(_ep("x", "pw_no_such_module:X"))
    with pytest.raises(Unreadable, match="expected module:Class"):
        read_declarations(_ep("x", "pw_odd_mod"))


def test_the_base_class_defaults_match_the_experiment_base():
    for name in ("claims", "default_seeds", "quick_seeds", "seeds_note"):
        assert getattr(_ExperimentDefaults, name) == getattr(Experiment, name), name


def _cli(args, root, cwd, **env):
    env = {**os.environ, "PYTHONPATH": str(root), **env}
    code = (
        "import sys, json\n"
        "from paperworks.core.cli import main\n"
        f"rc = main({args!r})\n"
        "print(json.dumps({'rc': rc, 'heavy': 'pw_heavy_fake' in sys.modules}), file=sys.stderr)\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)


def test_list_reads_statically_and_falls_back_to_importing_with_a_note(site, tmp_path):
    root, marker = site
    r = _cli(["list"], root, tmp_path)
    tail = json.loads(r.stderr.strip().splitlines()[-1])
    assert tail["rc"] == 0, r.stderr
    assert "demo-method: A demo paper (arXiv 2501.00002)" in r.stdout
    assert "    - rate: error falls as n^-1/2  [slope of log err/n<n> in [-0.7, -0.3]]" in r.stdout
    assert "odd-method: An odd paper (no public text)" in r.stdout  # by importing it
    assert "paperworks: odd-method: read by importing it (the static read stopped at:" in r.stderr
    assert "demo-method: read by importing" not in r.stderr
    assert tail["heavy"] is True  # odd-method's fallback imported its heavy module ...
    marker.unlink()
    r = _cli(["show", "demo-method"], root, tmp_path)
    assert json.loads(r.stderr.strip().splitlines()[-1]) == {"rc": 0, "heavy": False}  # ... show did not
    assert not marker.exists()
    out = r.stdout
    assert out.startswith(
        "demo-method: A demo paper (arXiv 2501.00002)\n  distribution: paperworks-demo-method 1.2.3"
    )
    assert "  seeds: 6 (quick: 2); 2 domains per seed" in out
    assert "  - alpha_wins [paper]: alpha: the method wins" in out and "predicate: alpha_gain > 0" in out
    assert "config (DemoConfig; override with --set KEY=VALUE):" in out
    assert "n           : int = 200  (quick: 20)" in out and "samples per domain" in out
    r = _cli(["show", "demo-method", "--json"], root, tmp_path)
    data = json.loads(r.stdout)
    assert data["slug"] == "demo-method" and data["source"] == "static"
    assert [f["name"] for f in data["config"]][:2] == ["n", "sizes"]


def test_show_an_unknown_slug_suggests_the_closest(site, tmp_path):
    root, _ = site
    r = _cli(["show", "demo-metod"], root, tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("paperworks: error")]
    assert lines and "unknown method 'demo-metod'; did you mean 'demo-method'?" in lines[0]
    assert json.loads(r.stderr.strip().splitlines()[-1])["rc"] == 2
