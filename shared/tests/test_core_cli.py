"""The `paperworks` command end to end, in a subprocess, on an example experiment registered through a
real entry point (a .dist-info folder on PYTHONPATH, as an installed package would have)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from paperworks.core import find_experiments

EXAMPLE = textwrap.dedent(
    """
    from paperworks.core import Claim, Experiment, Paper

    class ExampleExperiment(Experiment):
        slug = "example-method"
        paper = Paper("An example paper", arxiv="2501.00001")
        claims = (
            Claim("beats", "the method beats the baseline", "gain", ">", 0.0),
            Claim("cheap", "it costs less than the baseline", "cost_ratio", "<=", 0.5),
        )
        default_seeds = 2

        def run_seed(self, seed, *, quick, progress):
            for _ in progress.track(range(3), "training"):
                pass
            return {"gain": 0.5 + seed, "cost_ratio": 0.8}

    class Broken:
        pass

    class NeedsExtraExperiment(ExampleExperiment):
        slug = "needs-extra"

        def run_seed(self, seed, *, quick, progress):
            import paperworks_absent_peer_module  # an optional peer that is not installed

            return {}
    """
)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "paperworks_example_mod.py").write_text(EXAMPLE)
    info = root / "paperworks_example-0.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: paperworks-example\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(
        "[paperworks.experiments]\n"
        "example-method = paperworks_example_mod:ExampleExperiment\n"
        "broken-method = paperworks_example_mod:Broken\n"
    )
    extra = root / "paperworks_needs_extra-0.0.0.dist-info"
    extra.mkdir()
    (extra / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: paperworks-needs-extra\nVersion: 0.0.0\n"
        "Provides-Extra: peer\nProvides-Extra: plot\n"
    )
    (extra / "entry_points.txt").write_text(
        "[paperworks.experiments]\nneeds-extra = paperworks_example_mod:NeedsExtraExperiment\n"
    )
    return root


def run_cli(args, site, cwd, **env_extra):
    env = {**os.environ, "PYTHONPATH": str(site), **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "paperworks.core.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_list_shows_methods_claims_and_survives_a_broken_one(site, tmp_path):
    r = run_cli(["list"], site, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "example-method: An example paper (arXiv 2501.00001)" in r.stdout
    assert "beats: the method beats the baseline  [gain > 0]" in r.stdout
    assert "broken-method: cannot be loaded" in r.stdout


def test_reproduce_writes_report_and_reports_failed_claims(site, tmp_path):
    r = run_cli(
        ["reproduce", "example-method", "--quick", "--seeds", "3", "--out", "out"],
        site,
        tmp_path,
        PAPERWORKS_PROGRESS="1",  # progress is quiet unless a terminal watches, or this says so
    )
    assert r.returncode == 0, r.stderr
    # gain = 0.5 + seed over seeds 0..2: t interval [-0.98, 3.98] straddles 0; cost_ratio 0.8 > 0.5 always
    assert "| beats |" in r.stdout and "*inconclusive*" in r.stdout and "**not reproduced**" in r.stdout
    assert "paper claims: 0 hold, 1 inconclusive, 1 not reproduced" in r.stdout
    assert "training 3/3 100% [" in r.stderr and "it/s]" in r.stderr  # progress (rate, ETA) on stderr
    seeds = sorted(p.name for p in (tmp_path / "out" / "example-method" / "seeds").iterdir())
    assert seeds == ["0.json", "1.json", "2.json"]  # every finished seed, kept beside the report
    data = json.loads((tmp_path / "out" / "example-method" / "report.json").read_text())
    assert data["seeds"] == [0, 1, 2] and data["quick"] is True
    assert data["summary"]["gain"]["mean"] == pytest.approx(1.5)
    g = run_cli(["report", "--out", "out"], site, tmp_path)
    assert g.returncode == 0, g.stderr
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| An example paper (arXiv 2501.00001) | quick, 3 seeds | 0 / 1 / 1 |" in summary
    assert data["claims"][0]["interval"] == [
        pytest.approx(-0.98414, abs=1e-4),
        pytest.approx(3.98414, abs=1e-4),
    ]
    assert data["record"]["package"] == {"name": "paperworks-example", "version": "0.0.0"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["reproduce", "nope"], "unknown method 'nope'; known: "),
        (
            ["reproduce", "exmaple-method"],
            "unknown method 'exmaple-method'; did you mean 'example-method'? known: ",
        ),
        (["reproduce", "example-method", "--seeds", "0"], "--seeds: '0': a count must be at least 1"),
        (["reproduce", "example-method", "--seeds", "x"], "--seeds: 'x': 'x' is not a non-negative integer"),
        (["reproduce", "example-method", "--seeds", "3:1"], "--seeds: '3:1': range '3:1' is empty"),
        (["reproduce", "example-method", "--seeds", "1,1"], "--seeds: '1,1': seed 1 is named twice"),
        (["reproduce", "example-method", "--out", "afile"], "--out: cannot write the report folder"),
        (["report", "--out", "missing"], "--out: missing is not a folder of reports"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(site, tmp_path, args, expected):
    work = tmp_path / "work"
    work.mkdir()
    (work / "afile").write_text("not a folder")
    before = sorted(p.name for p in work.rglob("*"))
    r = run_cli(args, site, work)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("paperworks: error: ") and expected in lines[0]
    if "unknown method" in expected:
        assert "broken-method" in lines[0] and "example-method" in lines[0]
    assert sorted(p.name for p in work.rglob("*")) == before


def test_unwritable_out_is_refused_before_running(site, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root ignores permissions
            pytest.skip("running as a user who can write anywhere")
        r = run_cli(["reproduce", "example-method", "--out", str(locked)], site, tmp_path)
        assert r.returncode == 2 and "--out: cannot write" in r.stderr
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_list_with_nothing_installed(tmp_path):
    if find_experiments():
        pytest.skip("method packages are installed in this environment (the core session has none)")
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli(["list"], empty, tmp_path)
    assert r.returncode == 0
    assert r.stdout == "no paperworks methods installed\n"


def test_corrupt_report_is_one_line(site, tmp_path):
    (tmp_path / "out" / "bad").mkdir(parents=True)
    (tmp_path / "out" / "bad" / "report.json").write_text("{not json")
    r = run_cli(["report", "--out", "out"], site, tmp_path)
    assert r.returncode == 2 and "cannot be read as JSON" in r.stderr and "--skip-bad" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_report_skips_bad_and_hidden_folders_when_asked(site, tmp_path):
    assert run_cli(["reproduce", "example-method", "--quick", "--out", "out"], site, tmp_path).returncode == 0
    good = json.loads((tmp_path / "out" / "example-method" / "report.json").read_text())
    hidden = tmp_path / "out" / ".example-method.stage-1234"
    hidden.mkdir()
    (hidden / "report.json").write_text(json.dumps(good))  # a staging folder of an interrupted write
    for name, broken in [("no-verdict", {"verdict": None}), ("claims-int", None)]:
        (tmp_path / "out" / name).mkdir()
        bad = json.loads(json.dumps(good))
        if broken is None:
            bad["claims"] = 5
        else:
            bad["claims"][0].update(broken)
        (tmp_path / "out" / name / "report.json").write_text(json.dumps(bad))
    r = run_cli(["report", "--out", "out"], site, tmp_path)
    assert r.returncode == 2 and "'claims'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run_cli(["report", "--out", "out", "--skip-bad"], site, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "claims[0].verdict" in r.stderr and "1 reports gathered" in r.stdout
    assert (tmp_path / "out" / "summary.md").read_text().count("| [example-method]") == 1


def test_help_lists_the_commands(site, tmp_path):
    r = run_cli(["--help"], site, tmp_path)
    assert r.returncode == 0
    for cmd in ("list", "reproduce", "report"):
        assert cmd in r.stdout


def test_a_missing_optional_module_is_one_line_naming_it_and_the_extras(site, tmp_path):
    r = run_cli(["reproduce", "needs-extra", "--quick", "--out", "out"], site, tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr, r.stderr
    assert lines[-1] == (
        "paperworks: error: needs-extra: the experiment needs the optional module "
        "'paperworks_absent_peer_module', which is not installed "
        "(pip install 'paperworks-needs-extra[peer,plot]')"
    )
    assert not (tmp_path / "out" / "needs-extra" / "report.json").exists()


def test_disk_full_while_writing_is_one_line_and_keeps_the_results(tmp_path, monkeypatch, capsys):
    import errno

    from paperworks.core import Claim, Experiment, Paper, cli, registry, sweep

    class Tiny(Experiment):
        slug = "tiny"
        paper = Paper("Tiny")
        claims = (Claim("pos", "positive", "m", ">", 0.0),)

        def run_seed(self, seed, *, quick, progress):
            return {"m": 1.0 + seed}

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(registry, "load_experiment", lambda slug: Tiny())
    monkeypatch.setattr(sweep, "write_report", full)
    out = tmp_path / "out"
    assert cli.main(["reproduce", "tiny", "--quick", "--seeds", "2", "--out", str(out)]) == 2
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("paperworks: error")]
    assert len(errors) == 1 and "No space left on device" in errors[0]
    assert f"seeds [0, 1] in {out / 'tiny' / 'seeds'}" in errors[0]
    kept = [json.loads((out / "tiny" / "seeds" / f"{s}.json").read_text())["metrics"] for s in (0, 1)]
    assert kept == [{"m": 1.0}, {"m": 2.0}]
