"""The results and documentation site: its generator (docs/build_pages.py) and the built site.

The generator's tests run in the workspace session. The built-site tests run in ``uv run nox -s docs``,
which builds the site and sets ``PAPERWORKS_DOCS_SITE``: a link check without a browser, then the home
page and two method pages loaded in a headless Chromium driven by playwright (no console errors, every
image loads, every internal link answers, one claims row per claim, the catalog's filters work), with
screenshots saved to ``PAPERWORKS_DOCS_ARTIFACTS`` (default ``build/docs-artifacts``). Where playwright
or a Chromium is missing, the browser tests skip and say why.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import urldefrag

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLUGS = sorted(p.name for p in (ROOT / "packages").glob("*") if (p / "pyproject.toml").is_file())
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


bp = _load(ROOT / "docs" / "build_pages.py", "paperworks_docs_build_pages")
check_site = _load(ROOT / "docs" / "check_site.py", "paperworks_docs_check_site")


def _report(slug: str) -> dict | None:
    path = ROOT / "reproduction" / slug / "report.json"
    return json.loads(path.read_text()) if path.is_file() else None


# ------------------------------------------------------------------------------------------ generator


def test_every_package_has_a_field(tmp_path):
    fields = bp.load_fields(ROOT / "docs" / "fields.toml", SLUGS)
    assert sorted(fields) == SLUGS
    toml = tmp_path / "fields.toml"
    toml.write_text('[fields]\nalpha = "RL"\nnot-yet-here = "RL"\nblank = " "\n')
    assert bp.load_fields(toml, ["alpha"]) == {"alpha": "RL"}
    with pytest.raises(bp.SiteError, match=r"missing: \['beta'\]"):
        bp.load_fields(toml, ["alpha", "beta"])
    with pytest.raises(bp.SiteError, match="non-empty"):
        bp.load_fields(toml, ["blank"])


def test_the_generator_writes_a_page_per_method_from_the_repository(tmp_path):
    out = tmp_path / "src"
    methods = bp.build(out)
    assert [m.slug for m in methods] == SLUGS
    index = (out / "index.md").read_text()
    for slug in SLUGS:
        page = (out / "methods" / f"{slug}.md").read_text()
        assert f'href="methods/{slug}.html"' in index
        report = _report(slug)
        if report is None:
            assert "No committed full run" in page
            continue
        # one claims row per claim of report.json, and the report beside the page
        assert page.count('<tr class="claim"') == len(report["claims"]), slug
        assert (out / "_extra" / "reproduction" / slug / "report.json").is_file()
        assert f"../reproduction/{slug}/report.json" in page
        for fig in report.get("figures") or []:
            if (ROOT / "reproduction" / slug / fig).is_file():
                assert f'<img src="../reproduction/{slug}/{fig}"' in page, (slug, fig)
                assert (out / "_extra" / "reproduction" / slug / fig).is_file()
        if (ROOT / "packages" / slug / "benchmarks" / "results.json").is_file():
            assert "<!-- benchmark:begin -->" not in page  # replaced by the tables of results.json
    assert (out / "_api_src" / "paperworks" / "core" / "__init__.py").is_file()
    assert not list((out / "_api_src").rglob("__pycache__"))


def _claim(**kw):
    c = {
        "key": "k",
        "statement": "A beats `B`",
        "predicate": "diff > 0",
        "kind": "paper",
        "exact": False,
        "paper_value": 0.5,
        "estimate": 0.25,
        "interval": [0.1, 0.4],
        "n": 5,
        "verdict": "holds",
        "note": "paired <difference>",
    }
    c.update(kw)
    return c


def test_claims_table_colours_each_verdict_and_shows_the_interval():
    report = {
        "schema": 2,
        "claims": [
            _claim(key="a"),
            _claim(key="b", verdict="inconclusive", interval=None),
            _claim(key="c", verdict="not reproduced", kind="mechanism"),
            _claim(key="d", verdict="inconclusive (1 seed)", n=1),
            _claim(key="e", exact=True, interval=[3, 3], machine_dependent=True),
        ],
    }
    rows = bp.claim_rows(report)
    table = bp.claims_table(rows)
    assert table.count('<tr class="claim"') == 5
    for cls in ("verdict-holds", "verdict-inconclusive", "verdict-not-reproduced"):
        assert f'class="verdict {cls}"' in table
    assert "[0.1, 0.4]" in table and "range [3, 3]" in table and "exact, timing" in table
    assert "<code>B</code>" in table and "&lt;difference&gt;" in table  # Markdown code, HTML escaped
    counts = bp.verdict_counts(rows)
    assert counts["paper"] == {"holds": 1, "inconclusive": 2, "not reproduced": 0}
    assert counts["mechanism"]["not reproduced"] == 1 and counts["exact"]["holds"] == 1
    with pytest.raises(bp.SiteError, match="unknown verdict"):
        bp.claim_rows({"schema": 2, "claims": [_claim(verdict="passes")]})


def test_a_report_without_intervals_is_shown_apart_not_as_a_verdict():
    legacy = {
        "claims": [
            {
                "key": "a",
                "statement": "s",
                "predicate": "x > 0",
                "measured": {"mean": 1.0, "n": 3},
                "holds": True,
            },
            {
                "key": "b",
                "statement": "s",
                "predicate": "x > 0",
                "measured": {"mean": -1, "n": 3},
                "holds": False,
            },
        ]
    }
    rows = bp.claim_rows(legacy)
    assert [r["verdict"] for r in rows] == [bp.LEGACY_HOLDS, bp.LEGACY_FAILS]
    assert bp.verdict_counts(rows) == {"legacy": {bp.LEGACY_HOLDS: 1, bp.LEGACY_FAILS: 1}}
    assert "verdict-legacy" in bp.claims_table(rows) and "verdict-holds" not in bp.claims_table(rows)


def test_readme_sections_keep_code_blocks_and_generated_blocks_whole():
    readme = (
        "# T\n\nintro\n\n## Install\n\n```\npip install x\n```\n\n## Benchmark\n\n"
        "<!-- benchmark:begin -->\n# x benchmarks\n\n## inner table\n\n| a |\n<!-- benchmark:end -->\n"
        "\nprose\n"
        "\n## API\n\n```python\n## not a heading\n```\n"
    )
    intro, sections = bp.split_sections(readme)
    assert intro == "intro"
    assert [h for h, _ in sections] == ["Install", "Benchmark", "API"]
    assert "pip install x" in sections[0][1] and "## not a heading" in sections[2][1]
    body, found = bp.replace_block(sections[1][1], "benchmark", "TABLES")
    assert found and body.startswith("TABLES") and "inner table" not in body


def test_readme_links_are_pointed_into_the_site(tmp_path):
    (tmp_path / "packages" / "x").mkdir(parents=True)
    (tmp_path / "reproduction" / "x").mkdir(parents=True)
    (tmp_path / "reproduction" / "x" / "report.md").write_text("r")
    (tmp_path / "reproduction" / "x" / "fig.png").write_bytes(b"png")
    assets = bp.Assets(tmp_path, tmp_path / "extra")
    md = (
        "see [the\nreport](../../reproduction/x/report.md#claims), ![a figure](../../reproduction/x/fig.png),"
        " [paper](https://arxiv.org/abs/1) and [above](#install)\n\n```\n[kept](../../nowhere)\n```\n"
    )
    out = bp.rewrite_links(md, tmp_path / "packages" / "x", tmp_path, assets, 1)
    assert '<a href="../reproduction/x/report.md#claims">the\nreport</a>' in out
    assert '<img src="../reproduction/x/fig.png" alt="a figure"' in out
    assert "[paper](https://arxiv.org/abs/1)" in out and "[above](#install)" in out
    assert "[kept](../../nowhere)" in out  # inside a code block: left alone
    assert (tmp_path / "extra" / "reproduction" / "x" / "fig.png").read_bytes() == b"png"
    with pytest.raises(bp.SiteError, match="points at nothing"):
        bp.rewrite_links("[x](missing.md)", tmp_path / "packages" / "x", tmp_path, assets, 1)


def test_docstring_conventions_become_valid_restructuredtext():
    pytest.importorskip("sphinx", reason="Sphinx is installed by the docs session (uv run nox -s docs)")
    conf = _load(ROOT / "docs" / "conf.py", "paperworks_docs_conf")
    lines = [
        "For logits the loss is",
        "",
        "    l(f, y) = exp(-alpha * f_y) + rho * sum_j exp(f_j)        (PENEX)",
        "",
        "with fitted V_inv_ and |theta|^2; see ``coef_`` and sum_{i}.",
        "",
        "- an item",
        "",
        "  its second paragraph",
        ":ivar coef_: the coefficients",
    ]
    out = conf.rst_docstring(lines)
    assert out[:5] == ["For logits the loss is", "", "::", "", lines[2]]  # equations as a literal block
    assert out[6] == r"with fitted ``V_inv_`` and ``|theta|``\ ^2; see ``coef_`` and sum_{i}."
    assert out[8:] == lines[6:]  # list paragraphs and fields untouched


# ------------------------------------------------------------------------------------------ the site

SITE = os.environ.get("PAPERWORKS_DOCS_SITE")
needs_site = pytest.mark.skipif(
    not SITE, reason="the built site is checked by `uv run nox -s docs` (PAPERWORKS_DOCS_SITE unset)"
)


@needs_site
def test_the_site_has_every_page():
    site = Path(SITE)
    for page in ("index.html", "verdicts.html", "reference.html", "methods/index.html"):
        assert (site / page).is_file(), page
    for slug in SLUGS:
        assert (site / "methods" / f"{slug}.html").is_file(), slug
        if _report(slug):
            assert (site / "reproduction" / slug / "report.json").is_file(), slug
    assert (site / "api" / "paperworks" / "core" / "index.html").is_file()


@needs_site
def test_every_internal_link_and_image_of_the_site_resolves_offline():
    problems = check_site.check(Path(SITE))
    assert not problems, "\n".join(problems[:50])


def _chromium() -> str | None:
    explicit = os.environ.get("PAPERWORKS_CHROMIUM")
    if explicit:
        return shutil.which(explicit) or explicit
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def _browser_pages() -> list[str]:
    """The home page and two method pages: those with a figure and the most claims."""
    with_figs = [
        s
        for s in SLUGS
        if (r := _report(s))
        and any((ROOT / "reproduction" / s / f).is_file() for f in r.get("figures") or [])
    ]
    ranked = sorted(with_figs, key=lambda s: (-len(_report(s)["claims"]), s))[:2]
    return ["index.html", *(f"methods/{s}.html" for s in ranked)]


@pytest.fixture(scope="module")
def served_site():
    """The built site over HTTP on the loopback (as GitHub Pages serves it), for the browser."""
    site = Path(SITE)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=site))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is installed by the docs session"
    )
    exe = _chromium()
    if exe is None:
        pytest.skip(
            "no Chromium found (looked for PAPERWORKS_CHROMIUM, " + ", ".join(BROWSERS) + "); on Debian "
            "`apt-get install chromium` (the docs session tries it when run as root)"
        )
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        except Exception as e:  # a browser that cannot start here is a skip, with its reason
            pytest.skip(f"Chromium at {exe} did not start: {str(e).splitlines()[0]}")
        yield b
        b.close()


def _artifacts() -> Path:
    out = Path(os.environ.get("PAPERWORKS_DOCS_ARTIFACTS", ROOT / "build" / "docs-artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    return out


@needs_site
@pytest.mark.parametrize("path", _browser_pages())
def test_a_page_loads_in_chromium_cleanly(browser, served_site, path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    external: list[str] = []
    page.on("request", lambda r: external.append(r.url) if not r.url.startswith(served_site) else None)

    response = page.goto(served_site + path, wait_until="networkidle")
    assert response is not None and response.ok, path
    page.screenshot(
        path=str(_artifacts() / (path.replace("/", "_").removesuffix(".html") + ".png")), full_page=True
    )

    assert not problems, problems
    assert not external, f"{path} fetched from outside the site: {external}"
    images = page.eval_on_selector_all(
        "img", "els => els.map(e => ({src: e.currentSrc || e.src, ok: e.complete && e.naturalWidth > 0}))"
    )
    assert all(i["ok"] for i in images), [i["src"] for i in images if not i["ok"]]

    # every internal link answers (the anchors are checked by the link check above)
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    internal = sorted({urldefrag(h)[0] for h in hrefs if h.startswith(served_site)})
    broken = [u for u in internal if not page.request.get(u).ok]
    assert not broken, broken

    if path.startswith("methods/"):
        slug = Path(path).stem
        report = _report(slug)
        rows = page.locator("table.pw-claims tbody tr.claim")
        assert rows.count() == len(report["claims"])
        assert rows.evaluate_all("rs => rs.map(r => r.dataset.key)") == [c["key"] for c in report["claims"]]
        assert page.locator(f'a[href$="reproduction/{slug}/report.json"]').count() >= 1
        assert len(images) >= 1  # these pages were chosen for their figures
    page.close()


@needs_site
def test_the_catalog_filters_by_field_and_by_verdict_counts(browser, served_site):
    page = browser.new_page()
    page.goto(served_site + "index.html", wait_until="networkidle")
    rows = page.locator("#pw-catalog tbody tr.pw-method")
    assert rows.count() == len(SLUGS)

    def shown() -> list[str]:
        return rows.evaluate_all("rs => rs.filter(r => !r.hidden).map(r => r.querySelector('a').textContent)")

    assert shown() == SLUGS
    fields = bp.load_fields(ROOT / "docs" / "fields.toml", SLUGS)
    field = fields[SLUGS[0]]
    page.select_option("#pw-field", field)
    assert shown() == [s for s in SLUGS if fields[s] == field]
    assert re.match(rf"{len(shown())} of {len(SLUGS)} methods shown", page.inner_text("#pw-shown"))

    page.click("#pw-reset")
    page.fill("#pw-min-not-reproduced", "1")
    expected = []
    for s in SLUGS:
        r = _report(s)
        if r and "schema" in r:
            rows_ = bp.claim_rows(r)
            if sum(1 for c in rows_ if bp.group_of(c) == "paper" and c["verdict"] == "not reproduced") >= 1:
                expected.append(s)
    assert shown() == expected
    page.close()
