"""``reproduce`` and ``sweep`` end to end in a subprocess: seed files, Ctrl-C, --resume, --json, --set,
--device, the local sweep grid, and a missing Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

EXAMPLE = textwrap.dedent(
    """
    import os
    import time
    from dataclasses import dataclass

    from paperworks.core import Claim, Experiment, Paper, choose_device


    @dataclass(frozen=True)
    class SlowConfig:
        scale: float = 1.0
        label: str = "x"


    @dataclass(frozen=True)
    class FastConfig:
        width: int = 3


    class SlowExperiment(Experiment):
        slug = "slow-method"
        paper = Paper("A slow paper", arxiv="2501.00003")
        claims = (Claim("pos", "the gain is positive", "gain", ">", 0.0),)
        default_seeds = 4

        def config(self, quick: bool) -> SlowConfig:
            return SlowConfig(scale=0.5) if quick else SlowConfig()

        def run_seed(self, seed, *, quick, progress):
            cfg = self.config(quick)
            log = os.environ.get("PW_RUNLOG")
            if log:
                with open(log, "a") as f:
                    f.write(f"{seed}\\n")
            block = int(os.environ.get("PW_BLOCK_FROM", "-1"))
            if 0 <= block <= seed:
                with open(os.environ["PW_BLOCKED"], "w") as f:
                    f.write(str(seed))
                time.sleep(120)  # until Ctrl-C
            return {
                "gain": cfg.scale * (1 + seed),
                "on_cpu": float(choose_device() == "cpu"),
                "device_env_cpu": float(os.environ.get("PAPERWORKS_DEVICE") == "cpu"),
            }

        def figures(self, report, folder):
            (folder / "fig.txt").write_text(f"scale={self.config(report.quick).scale}")
            return ["fig.txt"]


    class FastExperiment(Experiment):
        slug = "fast-method"
        paper = Paper("A fast paper")
        claims = (Claim("wide", "it is wide", "width", ">=", 3.0),)
        default_seeds = 2

        def config(self, quick: bool) -> FastConfig:
            return FastConfig()

        def run_seed(self, seed, *, quick, progress):
            return {"width": float(self.config(quick).width)}
    """
)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "pw_run_example.py").write_text(EXAMPLE)
    info = root / "pw_run_example-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: paperworks-run-example\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(
        "[paperworks.experiments]\n"
        "slow-method = pw_run_example:SlowExperiment\n"
        "fast-method = pw_run_example:FastExperiment\n"
    )
    return root


def _env(site, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PW_", "PAPERWORKS_"))}
    return {**env, "PYTHONPATH": os.pathsep.join(map(str, [site, *extra.pop("paths", [])])), **extra}


def run_cli(args, site, cwd, **extra):
    return subprocess.run(
        [sys.executable, "-m", "paperworks.core.cli", *args],
        cwd=cwd,
        env=_env(site, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _wait_for(path, proc, timeout=60.0):
    end = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"exited early ({proc.returncode}): {proc.communicate()}")
        if time.monotonic() > end:
            proc.kill()
            raise AssertionError(f"{path} did not appear")
        time.sleep(0.05)


def _interrupt(args, site, cwd, block_from, log):
    blocked = cwd / "blocked"
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperworks.core.cli", *args],
        cwd=cwd,
        env=_env(site, PW_BLOCK_FROM=str(block_from), PW_BLOCKED=str(blocked), PW_RUNLOG=str(log)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job inherits SIGINT ignored, and Python then keeps it ignored: restore it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _wait_for(blocked, proc)  # seed `block_from` is running (and the earlier ones are done)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_ctrl_c_leaves_finished_seeds_and_an_incomplete_report_then_resume_runs_the_rest(site, tmp_path):
    log = tmp_path / "ran.log"
    args = ["reproduce", "slow-method", "--quick", "--seeds", "4", "--out", "out"]
    rc, out, err = _interrupt(args, site, tmp_path, 2, log)
    assert rc == 130, err
    folder = tmp_path / "out" / "slow-method"
    assert sorted(p.name for p in (folder / "seeds").iterdir()) == ["0.json", "1.json"]
    report = json.loads((folder / "report.json").read_text())
    assert report["incomplete"] is True and report["seeds"] == [0, 1]
    assert report["requested_seeds"] == [0, 1, 2, 3] and report["missing_seeds"] == [2, 3]
    assert [m["gain"] for m in report["per_seed"]] == [0.5, 1.0]
    assert (
        "**Incomplete run**: stopped after 2 of 4 seeds (missing [2, 3])"
        in (folder / "report.md").read_text()
    )
    assert (folder / "fig.txt").read_text() == "scale=0.5"
    assert "paperworks: interrupted: slow-method: 2 of 4 seeds finished; incomplete report written to" in err
    assert "Traceback" not in err
    assert "| pos |" in out  # the table of the finished seeds

    log.unlink()
    r = run_cli([*args, "--resume"], site, tmp_path, PW_RUNLOG=str(log))
    assert r.returncode == 0, r.stderr
    assert log.read_text().split() == ["2", "3"]  # seeds 0 and 1 were reused, not run again
    assert "reused seeds [0, 1]" in r.stdout
    report = json.loads((folder / "report.json").read_text())
    assert "incomplete" not in report and report["seeds"] == [0, 1, 2, 3]
    assert [m["gain"] for m in report["per_seed"]] == [0.5, 1.0, 1.5, 2.0]
    assert report["record"]["reused_seeds"] == [0, 1] and report["record"]["engine"] == "local"
    assert sorted(p.name for p in (folder / "seeds").iterdir()) == ["0.json", "1.json", "2.json", "3.json"]

    # a resume with another config is refused before anything runs, and says why
    before = (folder / "report.json").read_bytes()
    log.unlink()
    r = run_cli([*args, "--resume", "--set", "scale=2"], site, tmp_path, PW_RUNLOG=str(log))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (
        f"paperworks: error: --resume: seed 0 in {os.path.join('out', 'slow-method', 'seeds')} ran with a "
        "different config (scale: 0.5 there, 2.0 here); rerun without --resume to start over, or choose "
        "another --out"
    )
    assert not log.exists() and (folder / "report.json").read_bytes() == before


def test_ctrl_c_before_any_seed_finished_writes_nothing(site, tmp_path):
    rc, _out, err = _interrupt(
        ["reproduce", "slow-method", "--out", "out"], site, tmp_path, 0, tmp_path / "ran.log"
    )
    assert rc == 130
    assert "interrupted before any seed finished; nothing written" in err
    assert not (tmp_path / "out" / "slow-method").exists()


def test_resume_refuses_a_full_run_over_quick_seeds(site, tmp_path):
    assert (
        run_cli(
            ["reproduce", "slow-method", "--quick", "--seeds", "1", "--out", "o"], site, tmp_path
        ).returncode
        == 0
    )
    r = run_cli(["reproduce", "slow-method", "--seeds", "1", "--out", "o", "--resume"], site, tmp_path)
    assert r.returncode == 2 and "is from a quick run and this is a full run" in r.stderr


def test_json_goes_to_stdout_and_the_device_reaches_the_experiment(site, tmp_path):
    r = run_cli(
        ["reproduce", "slow-method", "--seeds", "0,3", "--set", "label=a b", "--device", "cpu", "--json"],
        site,
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # only the record on stdout; the table goes to stderr
    assert data["slug"] == "slow-method" and data["seeds"] == [0, 3] and data["config"]["label"] == "a b"
    assert [m["device_env_cpu"] for m in data["per_seed"]] == [1.0, 1.0]
    assert [m["on_cpu"] for m in data["per_seed"]] == [1.0, 1.0]
    assert "| pos |" in r.stderr


def test_device_cuda_without_a_gpu_is_one_line(site, tmp_path):
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(
        "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n"
    )
    r = run_cli(
        ["reproduce", "slow-method", "--device", "cuda", "--out", "out"], site, tmp_path, paths=[fake]
    )
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr.strip() == "paperworks: error: --device cuda: 'cuda' requested but torch sees no CUDA device"
    )
    assert not (tmp_path / "out").exists()


def test_version(site, tmp_path):
    from importlib.metadata import version

    r = run_cli(["--version"], site, tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == f"paperworks-core {version('paperworks-core')}"


def test_local_sweep_runs_slugs_by_configs_by_seeds(site, tmp_path):
    r = run_cli(
        ["sweep", "slow-method", "fast-method", "--set", "slow-method:scale=1,2", "--seeds", "0:2", "--json"],
        site,
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    records = json.loads(r.stdout)
    assert [(d["slug"], d["config"]) for d in records] == [
        ("slow-method", {"scale": 1.0, "label": "x"}),
        ("slow-method", {"scale": 2.0, "label": "x"}),
        ("fast-method", {"width": 3}),
    ]
    assert [[m["gain"] for m in d["per_seed"]] for d in records[:2]] == [[1.0, 2.0], [2.0, 4.0]]
    out = tmp_path / "paperworks-reports"
    assert sorted(p.name for p in out.iterdir()) == [
        "fast-method",
        "slow-method@scale=1",
        "slow-method@scale=2",
    ]
    assert (out / "slow-method@scale=2" / "fig.txt").read_text() == "scale=2.0"
    assert "slow-method@scale=1: paper claims: 0 hold, 1 inconclusive" in r.stderr  # 2 seeds: wide
    g = run_cli(["report", "--out", "paperworks-reports"], site, tmp_path)
    assert g.returncode == 0 and "3 reports gathered" in g.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["sweep", "slow-method", "fast-method", "--set", "scale=2"],
            "--set scale: fast-method has no such field",
        ),
        (["sweep", "slow-method", "--set", "other-method:scale=2"], "'other-method' is not one of the swept"),
        (["sweep", "slow-method", "--set", "scale=big"], "--set scale=big: expected float"),
        (["sweep", "slow-methd"], "did you mean 'slow-method'?"),
        (["sweep", "slow-method", "--num-cpus", "2"], "--address and --num-cpus apply to --engine ray only"),
        (
            ["reproduce", "slow-method", "--set", "scal=1"],
            "unknown key 'scal' for slow-method; did you mean 'scale'?",
        ),
        (["reproduce", "slow-method", "--set", "noequals"], "--set 'noequals': expected KEY=VALUE"),
    ],
)
def test_bad_sweep_input_is_one_line_and_writes_nothing(site, tmp_path, args, expected):
    r = run_cli(args, site, tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("paperworks: error: ") and expected in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == [site]


def test_engine_ray_without_ray_names_the_extra(site, tmp_path):
    fake = tmp_path / "noray"
    (fake / "ray").mkdir(parents=True)
    (fake / "ray" / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    r = run_cli(["sweep", "slow-method", "--engine", "ray", "--out", "out"], site, tmp_path, paths=[fake])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (
        "paperworks: error: --engine ray: Ray is not installed (pip install 'paperworks-core[ray]')"
    )
    assert not (tmp_path / "out").exists()
