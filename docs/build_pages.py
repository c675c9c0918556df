"""Write the sources of the results and documentation site from the repository, for Sphinx to render.

    python docs/build_pages.py [--out build/docs-src]
    sphinx-build -c docs build/docs-src site            # what `uv run nox -s docs` runs next

Nothing on the site is written by hand about a method: each page is made from

- ``packages/<slug>/README.md`` (what it is, install, usage, Fidelity, the README's prose about the
  reproduction and the benchmark, its API summary),
- ``reproduction/<slug>/report.json`` (the claims table: paper's value, mean, 95% interval, seeds,
  verdict; the run record; the figures beside it),
- ``packages/<slug>/benchmarks/results.json`` (the benchmark tables, rendered by
  :func:`paperworks.core.bench.render_results_file`),
- ``docs/fields.toml`` (the field of each method, for the catalog's filter),

and the API reference from each package's docstrings (sphinx-autoapi reads a copy of the sources
statically). The output folder is emptied first, so a removed package leaves no stale page.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

HOLDS, INCONCLUSIVE, INCONCLUSIVE_1, NOT_REPRODUCED = (
    "holds",
    "inconclusive",
    "inconclusive (1 seed)",
    "not reproduced",
)
VERDICTS = (HOLDS, INCONCLUSIVE, INCONCLUSIVE_1, NOT_REPRODUCED)
# a schema-1 report (no "schema" key) judged the mean alone: shown apart, never as a verdict
LEGACY_HOLDS, LEGACY_FAILS = "holds on the mean", "fails on the mean"
FIGURE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")
SECTION = re.compile(r"^## +(.+?)[ \t]*$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
# a Markdown link or image with an inline target: [text](target) / ![alt](target); text may span lines
GENERATED = re.compile(r"<!-- ([\w-]+):begin -->.*?<!-- \1:end -->", re.S)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


class SiteError(ValueError):
    """The repository does not hold what a page needs (an unknown field, an unknown verdict, ...)."""


# ------------------------------------------------------------------------------------------ reading


@dataclass
class Method:
    slug: str
    snake: str
    distribution: str
    description: str
    field: str
    readme: str
    report: dict[str, Any] | None
    bench_md: str | None
    has_api: bool = True  # its sources exist (src/paperworks/<snake>/__init__.py), so autoapi documents it

    @property
    def title(self) -> str:
        m = re.match(r"#\s+(.+)", self.readme.lstrip())
        return m.group(1).strip() if m else self.slug


def package_slugs(root: Path = ROOT) -> list[str]:
    return sorted(p.name for p in (root / "packages").glob("*") if (p / "pyproject.toml").is_file())


def load_fields(path: Path, slugs: Sequence[str]) -> dict[str, str]:
    """``docs/fields.toml``'s slug -> field for ``slugs``; every package needs one (an entry for a package
    that is not in the tree is ignored: a field may be given before its package lands)."""
    fields = tomllib.loads(path.read_text()).get("fields", {})
    missing = sorted(set(slugs) - set(fields))
    if missing:
        raise SiteError(f"{path.name}: every package needs a field under [fields]; missing: {missing}")
    bad = sorted(s for s in slugs if not isinstance(fields[s], str) or not fields[s].strip())
    if bad:
        raise SiteError(f"{path.name}: expected a non-empty string field for {bad}")
    return {s: fields[s].strip() for s in slugs}


def render_bench(path: Path) -> str | None:
    """The benchmark tables of ``results.json`` as Markdown (the core's renderer), None when absent."""
    if not path.is_file():
        return None
    from paperworks.core.bench import render_results_file

    return render_results_file(path)


def load_method(root: Path, slug: str, field: str) -> Method:
    pkg = root / "packages" / slug
    meta = tomllib.loads((pkg / "pyproject.toml").read_text())["project"]
    report_path = root / "reproduction" / slug / "report.json"
    readme = pkg / "README.md"
    report = json.loads(report_path.read_text()) if report_path.is_file() else None
    return Method(
        slug=slug,
        snake=slug.replace("-", "_"),
        distribution=meta["name"],
        description=meta.get("description", ""),
        field=field,
        readme=readme.read_text() if readme.is_file() else f"# {slug}\n\n{meta.get('description', '')}\n",
        report=report,
        bench_md=render_bench(pkg / "benchmarks" / "results.json"),
        has_api=(pkg / "src" / "paperworks" / slug.replace("-", "_") / "__init__.py").is_file(),
    )


# ------------------------------------------------------------------------------------------ claims


def fmt(x: Any) -> str:
    """A number for a table: 4 significant digits (as the core's reports); a string as it is."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int | float):
        return f"{float(x):.4g}"
    return str(x)


def is_legacy(report: Mapping[str, Any]) -> bool:
    return "schema" not in report


def claim_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each claim of a report as one plain row: key, kind, statement, paper_value, predicate, estimate,
    interval, n, verdict, note. A schema-1 report (mean only) gets the legacy verdicts."""
    rows = []
    legacy = is_legacy(report)
    for c in report.get("claims", []):
        if legacy:
            m = c.get("measured") or {}
            holds = c.get("holds")
            verdict = LEGACY_HOLDS if holds else LEGACY_FAILS
            rows.append(
                {
                    "key": c["key"],
                    "kind": "paper",
                    "exact": False,
                    "timing": False,
                    "statement": c.get("statement", ""),
                    "paper_value": None,
                    "predicate": c.get("predicate", ""),
                    "estimate": m.get("mean"),
                    "interval": None,
                    "n": m.get("n"),
                    "verdict": verdict,
                    "note": c.get("note", ""),
                }
            )
            continue
        verdict = c.get("verdict")
        if verdict not in VERDICTS:
            raise SiteError(f"{report.get('slug')}: claim {c.get('key')!r} has unknown verdict {verdict!r}")
        rows.append(
            {
                "key": c["key"],
                "kind": c.get("kind", "paper"),
                "exact": bool(c.get("exact")),
                "timing": bool(c.get("machine_dependent")),
                "statement": c.get("statement", ""),
                "paper_value": c.get("paper_value"),
                "predicate": c.get("predicate", ""),
                "estimate": c.get("estimate"),
                "interval": c.get("interval"),
                "n": c.get("n"),
                "verdict": verdict,
                "note": c.get("note", ""),
            }
        )
    return rows


def group_of(row: Mapping[str, Any]) -> str:
    return "exact" if row["exact"] else row["kind"]


def verdict_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per group ("paper", "mechanism", "exact", "legacy"): how many claims have each verdict."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        v = r["verdict"]
        if v in (LEGACY_HOLDS, LEGACY_FAILS):
            row = out.setdefault("legacy", {LEGACY_HOLDS: 0, LEGACY_FAILS: 0})
        else:
            v = INCONCLUSIVE if v == INCONCLUSIVE_1 else v
            row = out.setdefault(group_of(r), {HOLDS: 0, INCONCLUSIVE: 0, NOT_REPRODUCED: 0})
        row[v] += 1
    return out


def verdict_class(verdict: str) -> str:
    return {
        HOLDS: "verdict-holds",
        INCONCLUSIVE: "verdict-inconclusive",
        INCONCLUSIVE_1: "verdict-inconclusive",
        NOT_REPRODUCED: "verdict-not-reproduced",
    }.get(verdict, "verdict-legacy")


def inline(text: str) -> str:
    """Plain text with Markdown ``code`` spans, as safe HTML."""
    parts = re.split(r"`+([^`]+)`+", str(text))
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p) for i, p in enumerate(parts))


def count_label(n: int, verdict: str) -> str:
    """``1 holds``, ``3 hold``, ``2 inconclusive``, ``1 not reproduced``."""
    if verdict == HOLDS and n != 1:
        return f"{n} hold"
    return f"{n} {verdict}"


def verdict_badge(verdict: str) -> str:
    return f'<span class="verdict {verdict_class(verdict)}">{html.escape(verdict)}</span>'


def claims_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The claims as an HTML table, one ``<tr class="claim">`` per claim, verdicts coloured by class.

    Columns: the claim (the paper's statement, its key, the predicate that counts as reproduced and how
    the quantity is measured), kind, the paper's value, the mean over seeds, the 95% interval, the
    number of seeds, the verdict.
    """
    head = ("claim", "kind", "paper's value", "mean", "95% interval", "seeds", "verdict")
    out = ['<div class="pw-scroll"><table class="pw-claims">', "<thead><tr>"]
    out += [f"<th>{html.escape(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        kind = group_of(r) + (", timing" if r["timing"] else "")
        iv = r["interval"]
        interval = "–" if iv is None else f"[{fmt(iv[0])}, {fmt(iv[1])}]"
        if r["exact"] and iv is not None:
            interval = f"range {interval}"
        note = f'<div class="pw-note">{inline(r["note"])}</div>' if r["note"] else ""
        measured = (
            f'<div class="pw-key"><code>{html.escape(r["key"])}</code>: holds if '
            f'<code class="pw-predicate">{html.escape(r["predicate"])}</code></div>'
        )
        cells = [
            f"{inline(r['statement'])}{measured}{note}",
            html.escape(kind),
            inline(fmt(r["paper_value"])),
            fmt(r["estimate"]),
            interval,
            fmt(r["n"]) if r["n"] is not None else "–",
            verdict_badge(r["verdict"]),
        ]
        out.append(
            f'<tr class="claim" data-key="{html.escape(r["key"], quote=True)}" '
            f'data-verdict="{html.escape(r["verdict"], quote=True)}">'
            + "".join(f'<td class="pw-c{i}">{c}</td>' for i, c in enumerate(cells))
            + "</tr>"
        )
    out.append("</tbody></table></div>")
    return "\n".join(out)


def counts_html(counts: Mapping[str, Mapping[str, int]]) -> str:
    """``paper: 2 holds · 1 inconclusive`` etc., each count a coloured badge."""
    label = {"paper": "paper claims", "mechanism": "mechanism", "exact": "exact (not evidence)"}
    parts = []
    for group in ("paper", "mechanism", "exact", "legacy"):
        if group not in counts:
            continue
        row = counts[group]
        if group == "legacy":
            badges = " ".join(
                f'<span class="verdict verdict-legacy">{row[v]} {html.escape(v)}</span>' for v in row
            )
            parts.append(f'<span class="pw-group">report without intervals: {badges}</span>')
            continue
        badges = " ".join(
            f'<span class="verdict {verdict_class(v)}">{html.escape(count_label(n, v))}</span>'
            for v, n in row.items()
            if n
        )
        parts.append(f'<span class="pw-group">{label[group]}: {badges or "none"}</span>')
    return " ".join(parts) if parts else "no claims"


def raw_html(block: str) -> str:
    """A raw HTML block for MyST (a fence, so blank lines and Markdown-looking text stay HTML)."""
    return f"```{{raw}} html\n{block}\n```\n"


# ------------------------------------------------------------------------------------------ README


def split_sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``(intro, [(heading, body), ...])`` of a README split on its ``## `` headings (outside code and
    generated blocks, whose tables have headings of their own)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    masked = GENERATED.sub(blank, FENCE.sub(blank, text))
    heads = list(SECTION.finditer(masked))
    intro_end = heads[0].start() if heads else len(text)
    intro = re.sub(r"^\s*#\s+.+\n", "", text[:intro_end], count=1).strip()
    sections = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        sections.append((h.group(1).strip(), text[h.end() : end].strip("\n")))
    return intro, sections


def replace_block(text: str, name: str, replacement: str) -> tuple[str, bool]:
    """Replace the generated ``<!-- name:begin --> ... <!-- name:end -->`` block; say if there was one."""
    pattern = re.compile(rf"<!-- {re.escape(name)}:begin -->.*?<!-- {re.escape(name)}:end -->", re.S)
    new, n = pattern.subn(lambda _: replacement, text, count=1)
    return new, bool(n)


def demote_headings(md: str, by: int) -> str:
    """Shift Markdown ATX headings down by ``by`` levels (at most to level 6), outside code fences."""

    def shift(chunk: str) -> str:
        return re.sub(r"^(#{1,6})(?= )", lambda m: "#" * min(6, len(m.group(1)) + by), chunk, flags=re.M)

    out, last = [], 0
    for m in FENCE.finditer(md):
        out += [shift(md[last : m.start()]), m.group(0)]
        last = m.end()
    out.append(shift(md[last:]))
    return "".join(out)


class Assets:
    """Repository files a page links to, copied to the same relative path under the site's root."""

    def __init__(self, root: Path, extra: Path) -> None:
        self.root, self.extra = root, extra

    def add(self, path: Path) -> str:
        rel = path.resolve().relative_to(self.root)
        dest = self.extra / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
        return rel.as_posix()


def rewrite_links(md: str, base: Path, root: Path, assets: Assets, page_depth: int) -> str:
    """Point a README's relative links at the site.

    A relative link to a file of the repository is copied under the site's root (``site/<same path>``)
    and linked there with inline HTML, which MyST leaves alone (it would otherwise look for a Sphinx
    document). Links with a scheme, anchors and links inside code fences are kept as they are; a
    relative link to nothing in the repository raises, as it is broken in the README too.
    """
    up = "../" * page_depth

    def one(m: re.Match[str]) -> str:
        bang, text, target = m.group(1), m.group(2), m.group(3)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            return m.group(0)
        path_part, _, frag = target.partition("#")
        path = (base / path_part).resolve()
        try:
            path.relative_to(root)
        except ValueError:
            raise SiteError(f"{base}: link {target!r} leaves the repository") from None
        if not path.exists():
            raise SiteError(f"{base}: link {target!r} points at nothing ({path})")
        if path.is_dir():
            return text  # a folder has no page on the site: keep the words
        href = html.escape(up + assets.add(path) + (f"#{frag}" if frag else ""), quote=True)
        if bang:
            return f'<img src="{href}" alt="{html.escape(text, quote=True)}" class="pw-figure">'
        return f'<a href="{href}">{text}</a>'

    out, last = [], 0
    for f in FENCE.finditer(md):
        out += [LINK.sub(one, md[last : f.start()]), f.group(0)]
        last = f.end()
    out.append(LINK.sub(one, md[last:]))
    return "".join(out)


# ------------------------------------------------------------------------------------------ pages


def figures_of(root: Path, slug: str, report: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
    """``(present, missing)``: the figures that ``report.json`` lists plus any other image in its folder;
    missing = listed but not there."""
    folder = root / "reproduction" / slug
    listed = list((report or {}).get("figures") or [])
    present = [f for f in listed if (folder / f).is_file()]
    missing = [f for f in listed if not (folder / f).is_file()]
    if folder.is_dir():
        present += sorted(
            p.name for p in folder.iterdir() if p.suffix.lower() in FIGURE_SUFFIXES and p.name not in listed
        )
    return present, missing


def record_html(report: Mapping[str, Any]) -> str:
    """The run record (versions, machine) as a small two-column table."""
    rec = report.get("record") or {}
    env = report.get("environment") or {}
    items: list[tuple[str, str]] = []
    if rec:
        pkg, core, git = rec.get("package") or {}, rec.get("core") or {}, rec.get("git") or {}
        if pkg:
            items.append(("package", f"{pkg.get('name')} {pkg.get('version')}"))
        if core:
            items.append(("core", f"{core.get('name')} {core.get('version')}"))
        if git:
            dirty = " (uncommitted changes)" if git.get("dirty") else ""
            items.append(("git commit", f"{git.get('commit')}{dirty}"))
        libs = rec.get("libraries") or {}
        if libs:
            items.append(("libraries", ", ".join(f"{k} {v}" for k, v in libs.items())))
        items.append(("python", str(rec.get("python", "?"))))
        cpu = f"{rec.get('cpu', '?')}, {rec.get('cpu_count', '?')} CPUs"
        if "cpus_usable" in rec:
            cpu += f" ({rec['cpus_usable']} usable)"
        items.append(("machine", f"{cpu}; {rec.get('platform', rec.get('machine', ''))}"))
    elif env:
        items.append(("environment", ", ".join(f"{k} {v}" for k, v in env.items())))
    wall = report.get("wall_time_s", rec.get("wall_time_s"))
    if wall is not None:
        items.append(("wall time", f"{float(wall):.0f} s"))
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in items)
    return f'<table class="pw-record"><tbody>{rows}</tbody></table>'


def reproduction_html(m: Method, root: Path, figures: Sequence[str], missing: Sequence[str]) -> str:
    """What replaces the README's generated reproduction block: the claims, links, figures, record."""
    if m.report is None:
        return raw_html(
            '<p class="pw-missing">No committed full run: <code>reproduction/'
            f"{html.escape(m.slug)}/report.json</code> is absent. "
            f"<code>uv run paperworks reproduce {html.escape(m.slug)} --out reproduction</code> "
            "writes it.</p>"
        )
    r = m.report
    rows = claim_rows(r)
    seeds = r.get("seeds") or []
    run = "quick run" if r.get("quick") else "full run"
    lines = [
        f'<p class="pw-run">{run}, {len(seeds)} seed{"s" if len(seeds) != 1 else ""} '
        f"({html.escape(', '.join(map(str, seeds)))}); {counts_html(verdict_counts(rows))}</p>"
    ]
    if is_legacy(r):
        lines.append(
            '<p class="pw-legacy">This report predates verdicts on intervals: each claim was judged on its '
            "mean alone, so its verdict is shown as <em>holds / fails on the mean</em> (see "
            '<a href="../verdicts.html">how to read a verdict</a>).</p>'
        )
    if r.get("seeds_note"):
        lines.append(f'<p class="pw-note">{inline(r["seeds_note"])}</p>')
    lines.append(claims_table(rows))
    base = f"../reproduction/{m.slug}"
    links = [f'<a href="{base}/report.json">report.json</a>']
    if (root / "reproduction" / m.slug / "report.md").is_file():
        links.append(f'<a href="{base}/report.md">report.md</a>')
    lines.append(f'<p class="pw-links">The full report: {" · ".join(links)}.</p>')
    for f in figures:
        src = html.escape(f"{base}/{f}", quote=True)
        lines.append(
            f'<figure class="pw-figure"><a href="{src}"><img src="{src}" alt="{html.escape(f, quote=True)}" '
            f"></a><figcaption><code>{html.escape(f)}</code></figcaption></figure>"
        )
    for f in missing:
        lines.append(
            f'<p class="pw-missing">report.json lists the figure <code>{html.escape(f)}</code>, '
            "which is not in the folder.</p>"
        )
    return raw_html("\n".join(lines))


def method_page(m: Method, root: Path, assets: Assets) -> str:
    """One method's page in MyST Markdown."""
    base = root / "packages" / m.slug
    intro, sections = split_sections(m.readme)
    figures, missing = figures_of(root, m.slug, m.report)
    arxiv = (m.report or {}).get("paper", {}).get("arxiv")
    paper_title = (m.report or {}).get("paper", {}).get("title")
    paper = html.escape(paper_title or "")
    paper = (
        f'<a href="https://arxiv.org/abs/{html.escape(arxiv)}">{paper} (arXiv {html.escape(arxiv)})</a>'
        if arxiv
        else f"{paper} (no public text)"
    )
    rows = claim_rows(m.report) if m.report else []
    meta = (
        '<dl class="pw-meta">'
        f"<dt>field</dt><dd>{html.escape(m.field)}</dd>"
        f"<dt>paper</dt><dd>{paper}</dd>"
        f"<dt>install</dt><dd><code>pip install {html.escape(m.distribution)}</code>, "
        f"import <code>paperworks.{html.escape(m.snake)}</code></dd>"
        f"<dt>claims</dt><dd>{counts_html(verdict_counts(rows)) if rows else 'no report yet'}</dd>"
        "</dl>"
    )
    out = [f"# {m.title}", "", raw_html(meta), rewrite_links(intro, base, root, assets, 1), ""]
    seen_repro = seen_bench = False
    for heading, body in sections:
        low = heading.lower()
        if low.startswith("reproduction"):
            seen_repro = True
            repro = reproduction_html(m, root, figures, missing)
            body, found = replace_block(body, "reproduction", "\n" + repro)
            body = rewrite_links(body, base, root, assets, 1)
            if not found:
                body = repro + "\n" + body
        elif low.startswith("benchmark"):
            seen_bench = True
            body, found = replace_block(body, "benchmark", "\n" + bench_section(m, root, assets) + "\n")
            body = rewrite_links(body, base, root, assets, 1)
            if not found:
                body = bench_section(m, root, assets) + "\n\n" + body
        else:
            body = rewrite_links(body, base, root, assets, 1)
        if low == "api" and m.has_api:
            body += f"\n\nThe full reference, from the docstrings: {{py:mod}}`paperworks.{m.snake}`.\n"
        out += [f"## {heading}", "", body, ""]
    if not seen_repro:
        out += ["## Reproduction", "", reproduction_html(m, root, figures, missing), ""]
    if not seen_bench:
        out += ["## Benchmark", "", bench_section(m, root, assets), ""]
    if m.has_api and not any(h.lower() == "api" for h, _ in sections):
        out += ["## API", "", f"The reference, from the docstrings: {{py:mod}}`paperworks.{m.snake}`.", ""]
    return "\n".join(out).rstrip() + "\n"


def bench_section(m: Method, root: Path, assets: Assets) -> str:
    if m.bench_md is None:
        return (
            f"No benchmark results are committed (`packages/{m.slug}/benchmarks/results.json` is absent); "
            f"`uv run paperworks bench {m.slug}` writes them."
        )
    md = m.bench_md
    md = re.sub(r"\A# .*\n+", "", md)  # the file's title: the section heading says it
    md = demote_headings(md, 1)
    return rewrite_links(md, root / "packages" / m.slug / "benchmarks", root, assets, 1)


def catalog_html(methods: Sequence[Method]) -> str:
    """The home page's table with its filters (docs/_static/catalog.js), one row per method."""
    fields = sorted({m.field for m in methods}, key=str.lower)
    opts = "".join(f'<option value="{html.escape(f, quote=True)}">{html.escape(f)}</option>' for f in fields)
    out = [
        '<form class="pw-filters" id="pw-filters" onsubmit="return false">',
        f'<label>field <select id="pw-field"><option value="">every field</option>{opts}</select></label>',
        '<label>claims of kind <select id="pw-kind"><option value="paper">paper</option>'
        '<option value="mechanism">mechanism</option><option value="all">paper + mechanism</option>'
        "</select></label>",
        '<label>at least <input id="pw-min-holds" type="number" min="0" value="0"> hold</label>',
        '<label>at least <input id="pw-min-inconclusive" type="number" min="0" value="0"> inconclusive'
        "</label>",
        '<label>at least <input id="pw-min-not-reproduced" type="number" min="0" value="0"> not reproduced'
        "</label>",
        '<label><input id="pw-judged" type="checkbox"> only reports with intervals</label>',
        '<button type="reset" id="pw-reset">reset</button>',
        '<output id="pw-shown" aria-live="polite"></output>',
        "</form>",
        '<div class="table-wrapper pw-scroll"><table class="pw-catalog" id="pw-catalog">',
        "<thead><tr><th>method</th><th>field</th><th>paper</th><th>paper claims</th><th>mechanism claims</th>"
        "<th>exact</th><th>seeds</th></tr></thead><tbody>",
    ]
    for m in methods:
        rows = claim_rows(m.report) if m.report else []
        counts = verdict_counts(rows)
        paper = counts.get("paper", {})
        mech = counts.get("mechanism", {})
        exact = sum(counts.get("exact", {}).values())
        legacy = counts.get("legacy")
        data = {
            "field": m.field,
            "judged": "0" if (legacy or m.report is None) else "1",
        }
        for kind, row in (("paper", paper), ("mechanism", mech)):
            for v, key in (
                (HOLDS, "holds"),
                (INCONCLUSIVE, "inconclusive"),
                (NOT_REPRODUCED, "not-reproduced"),
            ):
                data[f"{kind}-{key}"] = str(row.get(v, 0))
        attrs = " ".join(f'data-{k}="{html.escape(v, quote=True)}"' for k, v in data.items())
        arxiv = (m.report or {}).get("paper", {}).get("arxiv")
        paper_cell = (
            f'<a href="https://arxiv.org/abs/{html.escape(arxiv)}">arXiv {html.escape(arxiv)}</a>'
            if arxiv
            else "no public text"
        )

        def cell(row: Mapping[str, int]) -> str:
            badges = [
                f'<span class="verdict {verdict_class(v)}" title="{html.escape(v)}">'
                f"{html.escape(count_label(n, v))}</span>"
                for v, n in row.items()
                if n
            ]
            return " ".join(badges) or "–"

        if m.report is None:
            paper_counts, mech_counts = "no report", "–"
        elif legacy:
            paper_counts = (
                '<span class="verdict verdict-legacy" title="report without intervals">'
                f"{legacy[LEGACY_HOLDS]} hold, {legacy[LEGACY_FAILS]} fail on the mean</span>"
            )
            mech_counts = "–"
        else:
            paper_counts, mech_counts = cell(paper), cell(mech)
        seeds = len((m.report or {}).get("seeds") or [])
        out.append(
            f'<tr class="pw-method" {attrs}>'
            f'<td><a href="methods/{m.slug}.html"><strong>{html.escape(m.slug)}</strong></a>'
            f'<div class="pw-note">{inline(m.title)}</div></td>'
            f"<td>{html.escape(m.field)}</td><td>{paper_cell}</td><td>{paper_counts}</td>"
            f"<td>{mech_counts}</td><td>{exact or '–'}</td><td>{seeds or '–'}</td></tr>"
        )
    out.append("</tbody></table></div>")
    return "\n".join(out)


def home_page(methods: Sequence[Method]) -> str:
    judged = [m for m in methods if m.report and not is_legacy(m.report)]
    total = verdict_counts(r for m in judged for r in claim_rows(m.report))
    summary = counts_html(total)
    return "\n".join(
        [
            "# paperworks: methods and results",
            "",
            "One installable Python package per method of the NeurIPS 2026 collection: each implements the",
            "method as a library, reproduces the paper's headline claim at laptop scale, and is measured",
            "side by side against the baseline a practitioner would use instead. Every verdict below is read",
            "from a 95% interval over seeds ([how to read a verdict](verdicts.md)); a claim that does not",
            "reproduce says so.",
            "",
            raw_html(
                f'<p class="pw-run">{len(methods)} methods; over the {len(judged)} reports with intervals: '
                f"{summary}</p>"
            ),
            "Filter by field or by how many claims of a kind have each verdict; each row links to the",
            "method's page (what it is, install, usage, fidelity, the claims with their intervals, the",
            "figures, the benchmarks, the API).",
            "",
            raw_html(catalog_html(methods)),
            "```{toctree}",
            ":hidden:",
            "",
            "methods/index",
            "verdicts",
            "reference",
            "```",
            "",
        ]
    )


def methods_index(methods: Sequence[Method]) -> str:
    out = ["# Methods", "", "Every method, by field. The [catalog](index.md) compares their verdicts.", ""]
    for field in sorted({m.field for m in methods}, key=str.lower):
        out += ["```{toctree}", f":caption: {field}", ":maxdepth: 1", ""]
        out += [f"{m.slug}" for m in methods if m.field == field]
        out += ["```", ""]
    return "\n".join(out)


def reference_page(methods: Sequence[Method]) -> str:
    out = [
        "# API reference",
        "",
        "Generated from the docstrings of each package (read from the sources, not imported), which give",
        "tensor shapes and the equation or section of the paper each function implements. The core,",
        "`paperworks.core`, holds the experiment, claim and report protocol shared by every method.",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        "",
        "paperworks.core <api/paperworks/core/index>",
    ]
    out += [
        f"paperworks.{m.snake} ({m.field}) <api/paperworks/{m.snake}/index>" for m in methods if m.has_api
    ]
    out += ["```", ""]
    return "\n".join(out)


def verdict_examples(methods: Sequence[Method]) -> str:
    """For the verdict guide: one real claim of each verdict from the committed reports, preferring
    paper claims with a proper interval, each from another method."""
    out = ["## Examples from this collection", ""]
    used: set[str] = set()
    for v in (HOLDS, INCONCLUSIVE, NOT_REPRODUCED):
        candidates = [
            (m, r)
            for m in methods
            if m.report and not is_legacy(m.report)
            for r in claim_rows(m.report)
            if r["verdict"] == v and not r["exact"]
        ]
        if not candidates:
            continue

        def rank(mr: tuple[Method, Mapping[str, Any]]) -> tuple[bool, bool, bool]:
            m, r = mr
            iv = r["interval"]
            return (m.slug in used, r["kind"] != "paper", iv is None or iv[0] == iv[1])

        m, hit = min(candidates, key=rank)  # stable: the first best candidate in catalog order
        used.add(m.slug)
        iv = hit["interval"]
        interval = "no interval" if iv is None else f"95% interval [{fmt(iv[0])}, {fmt(iv[1])}]"
        out.append(
            f"- **{v}**: [{m.slug}](methods/{m.slug}.md), `{hit['key']}` ({hit['kind']}): "
            f"predicate `{hit['predicate']}`, mean {fmt(hit['estimate'])}, {interval} over "
            f"{fmt(hit['n'])} seeds."
        )
    return "\n".join(out) + "\n"


def copy_api_sources(root: Path, dest: Path, methods: Sequence[Method]) -> None:
    """Every package's sources under one ``paperworks`` namespace folder, for sphinx-autoapi."""
    ns = dest / "paperworks"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(root / "shared" / "src" / "paperworks" / "core", ns / "core", ignore=ignore)
    for m in methods:
        if m.has_api:
            shutil.copytree(
                root / "packages" / m.slug / "src" / "paperworks" / m.snake, ns / m.snake, ignore=ignore
            )


def build(out: Path, root: Path = ROOT) -> list[Method]:
    """Write the whole source tree into ``out`` (emptied first); return the methods it holds."""
    slugs = package_slugs(root)
    fields = load_fields(root / "docs" / "fields.toml", slugs)
    methods = [load_method(root, s, fields[s]) for s in slugs]
    if out.exists():
        shutil.rmtree(out)
    (out / "methods").mkdir(parents=True)
    extra = out / "_extra"
    extra.mkdir()
    (extra / ".nojekyll").write_text("")
    assets = Assets(root, extra)
    for m in methods:
        folder = root / "reproduction" / m.slug
        if folder.is_dir():
            for p in sorted(folder.iterdir()):
                if p.is_file():
                    assets.add(p)
        (out / "methods" / f"{m.slug}.md").write_text(method_page(m, root, assets))
    (out / "index.md").write_text(home_page(methods))
    (out / "methods" / "index.md").write_text(methods_index(methods))
    (out / "reference.md").write_text(reference_page(methods))
    verdicts = (root / "docs" / "pages" / "verdicts.md").read_text()
    (out / "verdicts.md").write_text(verdicts.replace("<!-- examples -->", verdict_examples(methods)))
    copy_api_sources(root, out / "_api_src", methods)
    return methods


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "docs-src", help="the Sphinx source folder")
    args = ap.parse_args(argv)
    try:
        methods = build(args.out.resolve())
    except SiteError as e:
        print(f"build_pages: {e}", file=sys.stderr)
        return 2
    print(f"build_pages: {len(methods)} method pages in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
