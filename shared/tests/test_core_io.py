"""Atomic writing and report folders."""

import json
import os

import pytest

from paperworks.core import Claim, Experiment, Paper, atomic_write_json, atomic_write_text, write_report
from paperworks.core.io import check_writable


class Tiny(Experiment):
    slug = "tiny"
    paper = Paper("Tiny")
    claims = (Claim("one", "is one", "x", ">=", 1.0),)

    def run_seed(self, seed, *, quick, progress):
        return {"x": 1.0}

    def figures(self, report, folder):
        (folder / "fig.txt").write_text("a figure")
        return ["fig.txt"]


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
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["fig.txt", "report.json", "report.md"]
    data = json.loads((folder / "report.json").read_text())
    assert data["figures"] == ["fig.txt"] and data["claims"][0]["holds"] is True
    assert "![fig](fig.txt)" in (folder / "report.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # staging removed


def test_failing_figure_leaves_no_report(tmp_path):
    class Broken(Tiny):
        def figures(self, report, folder):
            raise RuntimeError("plot failed")

    exp = Broken()
    with pytest.raises(RuntimeError, match="plot failed"):
        write_report(exp.run(seeds=1), tmp_path / "b", figures=exp)
    assert list((tmp_path / "b").iterdir()) == []


def test_check_writable_refuses_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(NotADirectoryError):
        check_writable(f)
