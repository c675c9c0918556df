"""`paperworks report` warns when gathered reports come from different versions of a method or the core."""

import json
import logging
import subprocess
import sys

import pytest

from paperworks.core.gather import load_reports, summary_markdown, version_warnings


def report(slug, version, core, *, record=True):
    data = {
        "schema": 2,
        "slug": slug,
        "paper": {"title": f"The {slug} paper", "arxiv": None, "note": ""},
        "quick": False,
        "seeds": [0, 1],
        "wall_time_s": 1.0,
        "claims": [],
        "summary": {},
    }
    if record:
        data["record"] = {
            "package": {"name": f"paperworks-{slug}", "version": version},
            "core": {"name": "paperworks-core", "version": core},
        }
    return data


def write(root, folder, data):
    (root / folder).mkdir(parents=True)
    (root / folder / "report.json").write_text(json.dumps(data))


def test_one_version_everywhere_gives_no_warning():
    reports = [report("alpha", "0.2.0", "0.2.0"), report("beta", "1.3.1", "0.2.0")]
    assert version_warnings(reports) == []
    assert version_warnings(reports, installed={"paperworks-alpha": "0.2.0"}.get) == []
    assert "Warning" not in summary_markdown(reports)


def test_two_reports_of_one_method_from_different_versions_are_named():
    reports = [report("alpha", "0.1.0", "0.2.0"), report("alpha", "0.2.0", "0.2.0")]
    (w,) = version_warnings(reports, sources=["old/report.json", "alpha/report.json"])
    assert w.startswith("alpha: 2 reports come from different versions: ")
    assert "paperworks-alpha 0.1.0 with paperworks-core 0.2.0 (old/report.json)" in w
    assert "paperworks-alpha 0.2.0 with paperworks-core 0.2.0 (alpha/report.json)" in w
    # the same method and core version twice is no disagreement
    assert version_warnings([report("alpha", "0.2.0", "0.2.0")] * 2) == []


def test_reports_judged_by_different_core_versions_are_grouped():
    reports = [
        report("alpha", "0.2.0", "0.2.0"),
        report("beta", "0.1.0", "0.1.0"),
        report("gamma", "0.1.0", None),
    ]
    (w,) = version_warnings(reports)
    assert "different paperworks-core versions" in w
    assert "0.1.0 (beta); 0.2.0 (alpha); unknown (gamma)" in w


def test_reports_older_than_the_installed_code_when_asked():
    installed = {"paperworks-alpha": "0.3.0", "paperworks-core": "0.2.0"}.get
    reports = [report("alpha", "0.2.0", "0.2.0"), report("beta", "0.1.0", "0.2.0")]  # beta not installed
    (w,) = version_warnings(reports, installed=installed)
    assert w.startswith("reports made with other versions than those installed")
    assert "alpha (paperworks-alpha 0.2.0, installed 0.3.0)" in w and "beta" not in w
    old_core = [report("beta", "0.1.0", "0.1.0")]
    (w,) = version_warnings(old_core, installed=installed)
    assert "beta (paperworks-core 0.1.0, installed 0.2.0)" in w
    assert version_warnings(old_core) == []  # no installed check unless asked


def test_a_record_without_versions_counts_as_unknown():
    reports = [report("alpha", "0.2.0", "0.2.0"), report("alpha", None, None, record=False)]
    (slug_w, core_w) = version_warnings(reports)
    assert "paperworks-alpha unknown with paperworks-core unknown (report 2)" in slug_w
    assert "0.2.0 (alpha); unknown (alpha)" in core_w


def test_sources_must_match_the_reports():
    with pytest.raises(ValueError, match="sources: expected one per report"):
        version_warnings([report("alpha", "0.2.0", "0.2.0")], sources=[])


def test_load_reports_logs_the_warnings_and_the_summary_shows_them(tmp_path, caplog):
    write(tmp_path, "alpha", report("alpha", "0.2.0", "0.2.0"))
    write(tmp_path, "alpha-old", report("alpha", "0.1.0", "0.1.0"))
    with caplog.at_level(logging.WARNING, logger="paperworks.core.gather"):
        reports, problems = load_reports(tmp_path)
    assert len(reports) == 2 and problems == []
    messages = [r.getMessage() for r in caplog.records]
    assert any(
        m.startswith("paperworks: warning: alpha: 2 reports come from different versions") for m in messages
    )
    assert any(str(tmp_path / "alpha-old" / "report.json") in m for m in messages)
    summary = summary_markdown(reports)
    assert "**Warning: these reports come from different versions.**" in summary
    assert "- alpha: 2 reports come from different versions" in summary


def test_paperworks_report_prints_one_warning_line_each_and_still_succeeds(tmp_path):
    out = tmp_path / "out"
    write(out, "alpha", report("alpha", "0.2.0", "0.2.0"))
    write(out, "alpha-old", report("alpha", "0.1.0", "0.2.0"))
    write(out, "beta", report("beta", "0.1.0", "0.1.0"))
    r = subprocess.run(
        [sys.executable, "-m", "paperworks.core.cli", "report", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "3 reports gathered" in r.stdout
    lines = r.stderr.strip().splitlines()
    assert lines and all(ln.startswith("paperworks: warning: ") for ln in lines), r.stderr
    assert any("alpha: 2 reports come from different versions" in ln for ln in lines)
    assert any("different paperworks-core versions" in ln and "0.1.0 (beta)" in ln for ln in lines)
