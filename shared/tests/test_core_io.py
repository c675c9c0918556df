"""Atomic writing and report folders, with faults injected at every step of ``write_report``."""

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paperworks.core.experiment import Claim, Experiment, Paper
from paperworks.core.io import atomic_write_json, atomic_write_text, check_writable, write_report


class Tiny(Experiment):
    slug = "tiny"
    paper = Paper("Tiny")
    claims = (Claim("one", "is one", "x", ">=", 1.0),)

    def __init__(self, value=1.0, extra=False):
        self.value, self.extra = value, extra

    def run_seed(self, seed, *, quick, progress):
        return {"x": self.value}

    def figures(self, report, folder):
        (folder / "fig.txt").write_text(f"figure of x={self.value}")
        if not self.extra:
            return ["fig.txt"]
        (folder / "extra.txt").write_text("a figure only the old report has")
        return ["fig.txt", "extra.txt"]


def _snap(folder):
    """The report folder's files, name -> bytes; None when there is no folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _leftovers(root, name="tiny"):
    return sorted(p.name for p in Path(root).iterdir() if p.name.startswith(f".{name}."))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Old report (x=1, two figures) and new report (x=2, one figure), with their reference folders."""
    root = tmp_path_factory.mktemp("refs")
    out = {}
    for key, exp in {"old": Tiny(1.0, extra=True), "new": Tiny(2.0)}.items():
        report = exp.run(seeds=1)
        snap = _snap(write_report(report, root / key, figures=exp))
        data = json.loads(snap["report.json"])
        assert sorted(snap) == sorted(["report.json", "report.md", *data["figures"]])
        assert f"figure of x={exp.value}".encode() == snap["fig.txt"]
        assert f"| x | {exp.value:.4g} |".encode() in snap["report.md"]  # report.md tells the same run
        out[key] = (exp, report, snap)
    assert out["old"][2] != out["new"][2]
    return out


def test_atomic_text_replaces_and_leaves_no_temp(tmp_path):
    p = tmp_path / "sub" / "a.txt"
    atomic_write_text(p, "one")
    atomic_write_text(p, "two")
    assert p.read_text() == "two"
    assert sorted(x.name for x in p.parent.iterdir()) == ["a.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask


def test_atomic_json_keeps_non_finite_as_strings(tmp_path):
    p = atomic_write_json(tmp_path / "r.json", {"a": float("nan"), "b": [1.0, float("inf")]})
    assert json.loads(p.read_text()) == {"a": "nan", "b": [1.0, "inf"]}


def test_write_report_folder_is_complete(tmp_path):
    exp = Tiny()
    folder = write_report(exp.run(seeds=2), tmp_path / "tiny", figures=exp)
    assert folder == tmp_path / "tiny"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["fig.txt", "report.json", "report.md"]
    data = json.loads((folder / "report.json").read_text())
    assert data["figures"] == ["fig.txt"] and data["claims"][0]["holds"] is True
    assert "![fig](fig.txt)" in (folder / "report.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # staging removed
    umask = os.umask(0)
    os.umask(umask)
    assert folder.stat().st_mode & 0o777 == 0o777 & ~umask  # not mkdtemp's 0700


def test_rewrite_replaces_the_whole_folder(tmp_path, runs):
    (old_exp, old_report, old_snap), (new_exp, new_report, new_snap) = runs["old"], runs["new"]
    target = tmp_path / "tiny"
    write_report(old_report, target, figures=old_exp)
    assert _snap(target) == old_snap
    write_report(new_report, target, figures=new_exp)
    assert _snap(target) == new_snap  # the old report's extra figure went with it
    assert _leftovers(tmp_path) == []


def test_cli_flow_check_writable_then_write(tmp_path, runs):
    """The CLI proves the folder writable first (creating it empty); the report then replaces it."""
    exp, report, snap = runs["new"]
    target = check_writable(tmp_path / "out" / "tiny")
    assert target.is_dir() and list(target.iterdir()) == []
    write_report(report, target, figures=exp)
    assert _snap(target) == snap and _leftovers(tmp_path / "out") == []


def test_failing_figure_leaves_no_report(tmp_path):
    class Broken(Tiny):
        def figures(self, report, folder):
            raise RuntimeError("plot failed")

    exp = Broken()
    with pytest.raises(RuntimeError, match="plot failed"):
        write_report(exp.run(seeds=1), tmp_path / "b", figures=exp)
    assert list(tmp_path.iterdir()) == []  # neither a report folder nor a stage


@pytest.mark.parametrize(
    "fail",
    [
        lambda report, folder: (_ for _ in ()).throw(RuntimeError("plot failed")),
        lambda report, folder: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")),
        lambda report, folder: ["never-written.png"],
    ],
    ids=["raises", "disk-full", "missing-file"],
)
def test_failing_figures_keep_the_previous_report(tmp_path, runs, fail):
    old_exp, old_report, old_snap = runs["old"]
    target = write_report(old_report, tmp_path / "tiny", figures=old_exp)
    _, new_report, _ = runs["new"]
    with pytest.raises((RuntimeError, OSError)):
        write_report(new_report, target, figures=fail)
    assert _snap(target) == old_snap and _leftovers(tmp_path) == []


class _FullFile:
    """A file whose every write fails as on a full disk."""

    def __init__(self, f):
        self._f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("previous", [True, False])
def test_disk_full_while_writing_keeps_the_previous_report(tmp_path, runs, monkeypatch, previous):
    old_exp, old_report, old_snap = runs["old"]
    new_exp, new_report, new_snap = runs["new"]
    target = tmp_path / "tiny"
    if previous:
        write_report(old_report, target, figures=old_exp)
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **kw: _FullFile(real_fdopen(fd, *a, **kw)))
    with pytest.raises(OSError) as e:
        write_report(new_report, target, figures=new_exp)
    monkeypatch.undo()
    assert e.value.errno == errno.ENOSPC
    assert _snap(target) == (old_snap if previous else None)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["tiny"] if previous else [])  # no stage, no temp
    write_report(new_report, target, figures=new_exp)  # space again
    assert _snap(target) == new_snap


def test_write_report_refuses_a_file_and_a_nameless_path(tmp_path, runs):
    exp, report, _ = runs["new"]
    (tmp_path / "tiny").write_text("x")
    with pytest.raises(NotADirectoryError):
        write_report(report, tmp_path / "tiny", figures=exp)
    with pytest.raises(ValueError, match="folder: expected a path ending in"):
        write_report(report, tmp_path / "..", figures=exp)
    assert (tmp_path / "tiny").read_text() == "x"


def test_check_writable_refuses_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(NotADirectoryError):
        check_writable(f)


# ---- leftovers of killed runs -------------------------------------------------------------------


def _copy_as(src_snap, folder):
    folder.mkdir()
    for name, data in src_snap.items():
        (folder / name).write_bytes(data)


def test_an_interrupted_swap_is_undone_before_the_next_write(tmp_path, runs):
    """Killed between 'old report aside' and 'stage in place': the next call puts the old one back."""
    _, _, old_snap = runs["old"]
    new_exp, new_report, new_snap = runs["new"]
    _copy_as(old_snap, tmp_path / f".tiny.old-{os.getpid()}-0a1b2c3d")
    _copy_as(new_snap, tmp_path / f".tiny.stage-{os.getpid()}-abcd_123")
    (tmp_path / ".tiny.stage-k2j4h5g6").mkdir()  # the former naming, without a pid

    class Broken(Tiny):
        def figures(self, report, folder):
            raise RuntimeError("plot failed")

    with pytest.raises(RuntimeError):  # a run that fails still leaves the last complete report in place
        write_report(new_report, tmp_path / "tiny", figures=Broken())
    assert _snap(tmp_path / "tiny") == old_snap and _leftovers(tmp_path) == []
    write_report(new_report, tmp_path / "tiny", figures=new_exp)
    assert _snap(tmp_path / "tiny") == new_snap and _leftovers(tmp_path) == []


def test_an_interrupted_swap_then_check_writable(tmp_path, runs):
    """The CLI's check_writable makes an empty folder first; the old report still comes back."""
    _, _, old_snap = runs["old"]
    _copy_as(old_snap, tmp_path / f".tiny.old-{os.getpid()}-0a1b2c3d")
    check_writable(tmp_path / "tiny")
    with pytest.raises(ZeroDivisionError):
        write_report(runs["new"][1], tmp_path / "tiny", figures=lambda r, f: 1 / 0 or [])
    assert _snap(tmp_path / "tiny") == old_snap and _leftovers(tmp_path) == []


def test_leftovers_of_live_writers_and_other_reports_are_kept(tmp_path, runs):
    exp, report, snap = runs["new"]
    live = os.getppid()  # a running process that is not this one
    keep = [
        f".tiny.stage-{live}-abcd1234",
        f".tiny.old-{live}-0a1b2c3d",
        ".tiny2.stage-1-abcd1234",
        ".other.old-1-0a1b2c3d",
        ".tiny.old-b.stage-1-abcd1234",  # the stage of a report named "tiny.old-b"
    ]
    for name in keep:
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text("{}")
    write_report(report, tmp_path / "tiny", figures=exp)
    assert _snap(tmp_path / "tiny") == snap
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*keep, "tiny"])


def test_leftovers_of_a_dead_writer_are_recovered(tmp_path, runs):
    """A writer SIGKILLed between its two renames: its pid is gone, its old report comes back."""
    _, _, old_snap = runs["old"]
    new_exp, new_report, new_snap = runs["new"]
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()  # reaped: its pid names no process
    _copy_as(old_snap, tmp_path / f".tiny.old-{child.pid}-0a1b2c3d")
    _copy_as({"fig.txt": b"half drawn"}, tmp_path / f".tiny.stage-{child.pid}-abcd1234")
    with pytest.raises(ZeroDivisionError):
        write_report(new_report, tmp_path / "tiny", figures=lambda r, f: 1 / 0 or [])
    assert _snap(tmp_path / "tiny") == old_snap and _leftovers(tmp_path) == []
    write_report(new_report, tmp_path / "tiny", figures=new_exp)
    assert _snap(tmp_path / "tiny") == new_snap and _leftovers(tmp_path) == []


# ---- faults at every step -----------------------------------------------------------------------


class Killed(BaseException):
    """The process died here: this call and every later one does nothing."""


_STEPS = [(os, "replace"), (os, "rename"), (os, "unlink"), (os, "rmdir"), (os, "mkdir"), (os, "chmod")]
_STEPS += [(shutil, "rmtree")]


@contextlib.contextmanager
def _faults(monkeypatch, k, mode):
    """Fail the k-th file-system step: ``kill`` (dead from then on) or ``error`` (one OSError)."""
    state = {"n": 0, "dead": False, "hit": None}

    def wrap(name, real):
        def step(*args, **kwargs):
            if state["dead"]:
                raise Killed(name)
            state["n"] += 1
            if state["n"] == k:
                state["hit"] = name
                if mode == "kill":
                    state["dead"] = True
                    raise Killed(name)
                raise OSError(errno.EIO, f"injected failure of {name}")
            return real(*args, **kwargs)

        return step

    with monkeypatch.context() as m:
        for mod, name in _STEPS:
            m.setattr(mod, name, wrap(name, getattr(mod, name)))
        yield state


@pytest.fixture
def no_fsync(monkeypatch):
    """Durability is not what these tests are about; without fsync they do not wait on a busy disk."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _setup(scenario, root, runs):
    """The state before the write; returns the snapshot of the report a reader should see."""
    old_exp, old_report, old_snap = runs["old"]
    if scenario == "replace":
        write_report(old_report, root / "tiny", figures=old_exp)
        return old_snap
    if scenario == "first":
        return None
    if scenario == "empty":  # after the CLI's check_writable
        check_writable(root / "tiny")
        return None
    assert scenario == "interrupted"
    _copy_as(old_snap, root / f".tiny.old-{os.getpid()}-0a1b2c3d")
    _copy_as(runs["new"][2], root / f".tiny.stage-{os.getpid()}-abcd1234")
    return old_snap


def _visible(root):
    """The complete report of ``tiny``: the folder's, or while it is missing, the one set aside."""
    target = root / "tiny"
    if (target / "report.json").is_file():
        return _snap(target)
    aside = [p for p in root.iterdir() if p.name.startswith(".tiny.old-") and (p / "report.json").is_file()]
    assert len(aside) <= 1, aside
    return _snap(aside[0]) if aside else None


def _count_steps(tmp_path, runs, monkeypatch, scenario):
    root = tmp_path / "count"
    root.mkdir()
    _setup(scenario, root, runs)
    with _faults(monkeypatch, 0, "error") as state:
        write_report(runs["new"][1], root / "tiny", figures=runs["new"][0])
    return state["n"]


@pytest.mark.parametrize("scenario", ["replace", "first", "empty", "interrupted"])
def test_kill_at_every_step_leaves_one_complete_report(tmp_path, runs, monkeypatch, no_fsync, scenario):
    new_exp, new_report, new_snap = runs["new"]
    n = _count_steps(tmp_path, runs, monkeypatch, scenario)
    assert n >= 8
    for k in range(1, n + 2):
        root = tmp_path / f"k{k}"
        root.mkdir()
        before = _setup(scenario, root, runs)
        with _faults(monkeypatch, k, "kill") as state:
            try:
                write_report(new_report, root / "tiny", figures=new_exp)
            except Killed:
                pass
        assert (state["hit"] is None) == (k == n + 1)
        seen = _visible(root)
        for p in root.glob(".tiny.old-*"):  # one set aside is whole while it holds report.json
            assert not (p / "report.json").exists() or _snap(p) == before, f"step {k} ({state['hit']})"
        assert seen in (before, new_snap), f"killed at step {k} ({state['hit']}): {seen and sorted(seen)}"
        if (root / "tiny").exists() and seen is not None:
            assert _snap(root / "tiny") in (before, new_snap)  # never a mixture
        # the next run puts the set-aside report back even if it fails itself, then a good run cleans up
        with pytest.raises(ZeroDivisionError):
            write_report(new_report, root / "tiny", figures=lambda r, f: 1 / 0 or [])
        assert _snap(root / "tiny") == seen or (seen is None and not _snap(root / "tiny"))
        assert _leftovers(root) == []
        write_report(new_report, root / "tiny", figures=new_exp)
        assert _snap(root / "tiny") == new_snap and _leftovers(root) == []


@pytest.mark.parametrize("scenario", ["replace", "first", "empty", "interrupted"])
def test_an_oserror_at_any_step_keeps_the_previous_report(tmp_path, runs, monkeypatch, no_fsync, scenario):
    new_exp, new_report, new_snap = runs["new"]
    n = _count_steps(tmp_path, runs, monkeypatch, scenario)
    for k in range(1, n + 1):
        root = tmp_path / f"k{k}"
        root.mkdir()
        before = _setup(scenario, root, runs)
        with _faults(monkeypatch, k, "error") as state:
            try:
                write_report(new_report, root / "tiny", figures=new_exp)
                raised = False
            except OSError:
                raised = True
        where = f"failure at step {k} ({state['hit']})"
        if raised:  # the CLI reports it; the previous report is as it was, and nothing is left beside it
            assert _snap(root / "tiny") in ((before,) if before else (None, {})), where
            assert _leftovers(root) == [], where
        else:  # a clean-up step failed, or the failure was harmless: the new report is in place
            assert _snap(root / "tiny") == new_snap, where
        write_report(new_report, root / "tiny", figures=new_exp)
        assert _snap(root / "tiny") == new_snap and _leftovers(root) == [], where
