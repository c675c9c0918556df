"""Executors, the public ``assemble_report``, sweeps with seed files and resume, and the Ray engine.

The Ray tests start one local 2-CPU Ray instance for the module (10-25 s here); they need the core's
``ray`` extra and are skipped, with the reason, only where Ray is not installed. The comparison on
two method packages' quick runs needs those packages installed (the core session installs them).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from importlib.metadata import PackageNotFoundError, version

import pytest

from paperworks.core import Claim, Experiment, Paper
from paperworks.core.checkpoints import ResumeError, SeedStore
from paperworks.core.executors import LocalExecutor, RayExecutor, SeedTask, make_executor
from paperworks.core.experiment import (
    IncompleteReport,
    RunInterrupted,
    SeedResult,
    assemble_report,
)
from paperworks.core.progress import Progress
from paperworks.core.sweep import Job, config_label, grid, run_jobs

EXAMPLES = textwrap.dedent(
    """
    import os
    from dataclasses import dataclass

    import numpy as np

    from paperworks.core import Claim, Experiment, Paper, SlopeClaim


    @dataclass(frozen=True)
    class NoiseConfig:
        n: int = 400
        shift: float = 0.3


    class NoiseExperiment(Experiment):
        slug = "noise-method"
        paper = Paper("A noisy paper")
        claims = (
            Claim("shifted", "the mean moves by the shift", "mean", ">", 0.0),
            SlopeClaim("rate", "error falls as n^-1/2", "err/n{size}", (50, 100, 200, 400), (-0.8, -0.2)),
        )

        def config(self, quick):
            return NoiseConfig(n=200) if quick else NoiseConfig()

        def run_seed(self, seed, *, quick, progress):
            cfg = self.config(quick)
            x = np.random.normal(cfg.shift, 1.0, cfg.n)  # the legacy global state, seeded per seed
            rng = np.random.default_rng(seed)
            out = {"mean": float(x.mean())}
            for n in (50, 100, 200, 400):
                out[f"err/n{n}"] = float(abs(rng.normal(0.0, 1.0, (64, n)).mean(axis=1)).mean())
            return out


    class CountExperiment(Experiment):
        slug = "count-method"
        paper = Paper("A counting paper")
        claims = (Claim("big", "the count is big", "count", ">=", 10.0),)

        def run_seed(self, seed, *, quick, progress):
            return {"count": float(10 + seed), "pid": float(os.getpid())}
    """
)


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """The example module on sys.path here and on PYTHONPATH (which Ray's local workers inherit)."""
    root = tmp_path_factory.mktemp("examples")
    (root / "pw_sweep_examples.py").write_text(EXAMPLES)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root), *([old] if old else [])])
    sys.path.insert(0, str(root))
    import pw_sweep_examples

    yield pw_sweep_examples
    sys.path.remove(str(root))
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


class Tiny(Experiment):
    slug = "tiny"
    paper = Paper("Tiny")
    claims = (Claim("pos", "positive", "m", ">", 0.0),)

    def run_seed(self, seed, *, quick, progress):
        return {"m": 1.0 + seed}


def _comparable(report):
    d = report.to_dict()
    return {k: d[k] for k in ("slug", "quick", "seeds", "per_seed", "summary", "claims", "config", "tables")}


def test_assemble_report_builds_the_same_report_from_results_run_anywhere(examples):
    exp = examples.NoiseExperiment()
    direct = exp.run(quick=True, seeds=[4, 1, 7])
    results = [exp.run_one(s, quick=True) for s in (7, 4, 1)]  # out of order, as a cluster returns them
    as_json = [json.loads(json.dumps(r.to_dict())) for r in results]  # e.g. files of a Slurm array
    again = assemble_report(examples.NoiseExperiment(), as_json, seeds=[4, 1, 7])
    assert _comparable(again) == _comparable(direct)
    assert again.wall_time_s == pytest.approx(sum(r.seconds for r in results))
    assert [SeedResult.from_dict(d) for d in as_json] == results


def test_assemble_report_refuses_results_that_do_not_belong_together(examples):
    exp = examples.NoiseExperiment()
    r0 = exp.run_one(0, quick=True)
    with pytest.raises(ValueError, match="appears twice"):
        assemble_report(exp, [r0, r0])
    with pytest.raises(ValueError, match="quick and full"):
        assemble_report(exp, [r0, exp.run_one(1, quick=False)])
    with pytest.raises(ValueError, match=r"different config than the experiment's \(n: 200 there, 50 here\)"):
        assemble_report(examples.NoiseExperiment().configure({"n": 50}), [r0])
    with pytest.raises(ValueError, match="is of 'noise-method', not 'tiny'"):
        assemble_report(Tiny(), [r0])
    with pytest.raises(ValueError, match=r"seeds \[0\] were not requested"):
        assemble_report(exp, [r0], seeds=[1])
    with pytest.raises(ValueError, match="at least one"):
        assemble_report(exp, [])


def test_a_partial_set_of_results_is_an_incomplete_report():
    rep = assemble_report(Tiny(), [Tiny().run_one(s, quick=False) for s in (0, 2)], seeds=[0, 1, 2, 3])
    assert isinstance(rep, IncompleteReport) and rep.seeds == [0, 2] and rep.missing_seeds == [1, 3]
    d = rep.to_dict()
    assert d["incomplete"] is True and d["requested_seeds"] == [0, 1, 2, 3] and d["record"]["incomplete"]
    assert "**Incomplete run**: stopped after 2 of 4 seeds (missing [1, 3])" in rep.to_markdown()
    assert "incomplete" not in assemble_report(Tiny(), [Tiny().run_one(0, quick=False)], seeds=[0]).to_dict()


def test_ctrl_c_in_run_raises_with_the_report_of_the_finished_seeds():
    class Stops(Tiny):
        def run_seed(self, seed, *, quick, progress):
            if seed == 2:
                raise KeyboardInterrupt
            return super().run_seed(seed, quick=quick, progress=progress)

    with pytest.raises(RunInterrupted) as info:
        Stops().run(seeds=4)
    (rep,) = info.value.reports
    assert rep.seeds == [0, 1] and rep.missing_seeds == [2, 3]
    assert isinstance(info.value, KeyboardInterrupt)  # uncaught, it is still a Ctrl-C

    class StopsAtOnce(Tiny):
        def run_seed(self, seed, *, quick, progress):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        StopsAtOnce().run(seeds=2)
    assert not isinstance(info.value, RunInterrupted)


def test_run_jobs_writes_seed_files_and_reports_and_resume_skips_finished_seeds(tmp_path):
    ran = []

    class Logged(Tiny):
        def run_seed(self, seed, *, quick, progress):
            ran.append(seed)
            return super().run_seed(seed, quick=quick, progress=progress)

    folder = tmp_path / "tiny"
    (out,) = run_jobs([Job(Logged(), False, [0, 1], folder, "tiny")], LocalExecutor())
    assert ran == [0, 1] and out.folder == folder and out.reused == []
    assert sorted(p.name for p in (folder / "seeds").iterdir()) == ["0.json", "1.json"]
    assert json.loads((folder / "report.json").read_text())["seeds"] == [0, 1]
    ran.clear()
    (out,) = run_jobs([Job(Logged(), False, [0, 1, 2, 3], folder, "tiny")], LocalExecutor(), resume=True)
    assert ran == [2, 3] and out.reused == [0, 1] and out.report.seeds == [0, 1, 2, 3]
    assert [m["m"] for m in out.report.per_seed] == [1.0, 2.0, 3.0, 4.0]
    ran.clear()
    (out,) = run_jobs([Job(Logged(), False, [1, 3], folder, "tiny")], LocalExecutor(), resume=True)
    assert ran == [] and out.report.seeds == [1, 3]
    assert len(list((folder / "seeds").iterdir())) == 4  # seeds of the same config are kept for later
    (out,) = run_jobs([Job(Logged(), False, [5], folder, "tiny")], LocalExecutor())
    assert sorted(p.name for p in (folder / "seeds").iterdir()) == ["5.json"]  # a fresh run starts over


def test_resume_refuses_other_code_and_unreadable_seed_files(tmp_path):
    folder = tmp_path / "tiny"
    run_jobs([Job(Tiny(), False, [0], folder, "tiny")], LocalExecutor())
    path = folder / "seeds" / "0.json"
    data = json.loads(path.read_text())
    data["code"]["source"] = "0" * 16
    path.write_text(json.dumps(data))
    with pytest.raises(ResumeError, match=r"was run by different code \(.*source 0000000000000000.*there"):
        SeedStore(folder).resumable(Tiny(), False)
    path.write_text("{not json")
    with pytest.raises(ResumeError, match="cannot be read"):
        SeedStore(folder).resumable(Tiny(), False)


def test_grid_labels_and_executor_choice():
    assert grid({}) == [{}]
    assert grid({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    assert config_label({"n": "4", "lr": "0.1"}) == "n=4,lr=0.1"
    odd = config_label({"sizes": "(2, 4)"})
    assert odd.startswith("sizes=_2,_4_-") and len(odd) == len("sizes=_2,_4_-") + 8
    assert isinstance(make_executor("local"), LocalExecutor)
    assert isinstance(make_executor("ray", num_cpus=2), RayExecutor)
    with pytest.raises(ValueError, match="apply to --engine ray only"):
        make_executor("local", num_cpus=2)
    with pytest.raises(ValueError, match="give one or the other"):
        RayExecutor(address="auto", num_cpus=2)
    with pytest.raises(ValueError, match="engine: expected one of"):
        make_executor("dask")


def test_local_executor_yields_every_task_in_order():
    tasks = [SeedTask(Tiny(), s, False, key=i) for i, s in enumerate((3, 1))]
    got = [(t.key, r.seed, r.metrics) for t, r in LocalExecutor().map(tasks, Progress(enabled=False))]
    assert got == [(0, 3, {"m": 4.0}), (1, 1, {"m": 2.0})]


# -- Ray ---------------------------------------------------------------------------------------------

REAL_PACKAGES = ("angular-mean", "truthful-calibration")


@pytest.fixture(scope="module")
def ray_cluster(examples, tmp_path_factory):
    """One local Ray instance with 2 CPUs for the module (RayExecutors made in tests reuse it)."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (the core's `ray` extra: pip install 'paperworks-core[ray]')")
    temp = tmp_path_factory.mktemp("ray-out") / "out" / ".ray"  # as a sweep sets it: under --out
    executor = RayExecutor(num_cpus=2, temp_dir=temp)
    executor.start()
    yield temp
    executor.stop()


def _jobs(experiments, quick, seeds=None):
    return [Job(e, quick, e.seed_list(quick, seeds), None, e.slug) for e in experiments]


def test_ray_reports_are_identical_to_local_ones_and_run_on_reused_workers(examples, ray_cluster):
    import ray

    assert ray.cluster_resources().get("CPU") == 2.0
    assert any(ray_cluster.iterdir())  # Ray's session lives under the output folder
    make = [examples.NoiseExperiment, examples.CountExperiment]
    local = run_jobs(_jobs([m() for m in make], True, "0:6"), LocalExecutor())
    remote = run_jobs(_jobs([m() for m in make], True, "0:6"), RayExecutor(num_cpus=2))
    assert ray.is_initialized()  # a RayExecutor that found Ray running leaves it running
    noise_local, count_local = local
    noise_remote, count_remote = remote
    assert _comparable(noise_remote.report) == _comparable(noise_local.report)
    assert [m["count"] for m in count_remote.report.per_seed] == [
        m["count"] for m in count_local.report.per_seed
    ]
    pids = {m["pid"] for m in count_remote.report.per_seed}
    assert os.getpid() not in pids and len(pids) <= 2  # one seed per task, on at most 2 reused workers
    assert noise_remote.report.record["engine"] == "ray" and noise_remote.report.record["cluster_cpus"] == 2.0


def test_ray_carries_overrides_and_writes_seed_files(examples, ray_cluster, tmp_path):
    exp = examples.NoiseExperiment().configure({"n": "50"})
    (out,) = run_jobs([Job(exp, False, [0, 1], tmp_path / "noise", "noise")], RayExecutor(num_cpus=2))
    assert out.report.config == {"n": 50, "shift": 0.3}
    assert sorted(p.name for p in (tmp_path / "noise" / "seeds").iterdir()) == ["0.json", "1.json"]
    local = examples.NoiseExperiment().run(quick=False, seeds=[0, 1], overrides={"n": 50})
    assert out.report.per_seed == local.per_seed


@pytest.mark.parametrize("slugs", [REAL_PACKAGES], ids=["-".join(REAL_PACKAGES)])
def test_ray_gives_the_local_numbers_on_two_packages_quick_runs(ray_cluster, slugs, tmp_path):
    """Bit for bit against the local engine run with Ray's thread setting (a 1-CPU Ray task gets
    OMP_NUM_THREADS=1, and BLAS's thread count can move the last bits of a reduction); against the
    local engine with its default threads, the same verdicts and numbers equal to 1e-12."""
    import subprocess

    from paperworks.core import load_experiment
    from paperworks.core.io import _jsonable

    for slug in slugs:
        try:
            version(f"paperworks-{slug}")
        except PackageNotFoundError:
            pytest.skip(f"paperworks-{slug} is not installed here (the core session installs it)")
    remote = run_jobs(_jobs([load_experiment(s) for s in slugs], True), RayExecutor(num_cpus=2))
    cmd = [sys.executable, "-m", "paperworks.core.cli", "sweep", *slugs, "--quick", "--json"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    r = subprocess.run(
        [*cmd, "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    local_one_thread = json.loads(r.stdout)
    keys = ("slug", "quick", "seeds", "per_seed", "summary", "claims", "config", "tables")
    for a, b in zip(local_one_thread, remote):
        b = json.loads(json.dumps(_jsonable(b.report.to_dict())))
        assert {k: a[k] for k in keys} == {k: b[k] for k in keys}, a["slug"]
    local_default = run_jobs(_jobs([load_experiment(s) for s in slugs], True), LocalExecutor())
    for a, b in zip(local_default, remote):
        assert [c.verdict for c in a.report.claims] == [c.verdict for c in b.report.claims], a.job.label
        for x, y in zip(a.report.per_seed, b.report.per_seed):
            assert list(x) == list(y)
            assert all(x[k] == pytest.approx(y[k], rel=1e-12, abs=1e-300) for k in x), a.job.label
