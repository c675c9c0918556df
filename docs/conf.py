"""Sphinx configuration of the paperworks results and documentation site.

Build it with ``uv run nox -s docs``: ``docs/build_pages.py`` first writes the source tree (catalog,
one page per method, the verdict guide, a copy of each package's sources for the API reference) into
``build/docs-src``; ``sphinx-build -c docs build/docs-src site`` then renders it with this file.

Why Sphinx: the packages' docstrings are written in reStructuredText (``literal``, ``:class:``,
``:func:`` roles), which Sphinx resolves into cross-references; sphinx-autoapi reads the sources
statically (astroid), so no method package, and no torch, is imported or even installed to build the
API reference; Sphinx, myst-parser (the README pages are Markdown), sphinx-autoapi and the PyData
theme are all maintained, and the theme bundles its assets (the site works offline).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from sphinx.domains.python import PythonDomain

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(os.environ.get("PAPERWORKS_DOCS_SRC", ROOT / "build" / "docs-src")).resolve()

project = "paperworks"
author = "the paperworks contributors"
copyright = "the paperworks contributors"

extensions = ["myst_parser", "autoapi.extension", "sphinx.ext.napoleon"]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_api_src/**", "_extra/**"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # README headings start at H1 and may skip a level

# -- API reference: the copied sources under build/docs-src/_api_src/paperworks (one PEP 420 namespace)
autoapi_type = "python"
autoapi_dirs = [str(SRC / "_api_src" / "paperworks")]
autoapi_python_use_implicit_namespaces = True
autoapi_root = "api"
autoapi_add_toctree_entry = False  # the site's own api.md lists one entry per package
autoapi_keep_files = False
autoapi_options = ["members", "undoc-members", "show-inheritance", "show-module-summary", "imported-members"]
autoapi_member_order = "groupwise"
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # an "Attributes:" section as fields, not a second copy of autoapi's attributes

# -- HTML
html_theme = "pydata_sphinx_theme"
html_title = "paperworks"
html_static_path = [str(ROOT / "docs" / "_static")]
html_css_files = ["paperworks.css"]
html_js_files = ["catalog.js"]
html_extra_path = [str(SRC / "_extra")]  # reproduction/<slug>/report.json and figures, at stable URLs
html_favicon = str(ROOT / "docs" / "_static" / "favicon.svg")  # else browsers ask for a missing /favicon.ico
html_context = {"default_mode": "auto"}  # an unset mode makes the theme log a console error on load
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    # the full navigation tree on each of ~180 API pages costs most of the build time: collapse it
    "collapse_navigation": True,
    "navigation_depth": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": {"**": ["page-toc"], "index": []},
    "footer_start": ["copyright"],
    "footer_end": [],
    "show_version_warning_banner": False,
}
# the catalog, the guide and the method pages (wide claims tables) give the page's width to the article;
# the navigation bar, the breadcrumbs and the methods index lead to every method
html_sidebars = {"index": [], "verdicts": [], "methods/index": [], "methods/*": []}


# -- Docstrings: the project's conventions, read as reStructuredText -----------------------------------
# The docstrings are reStructuredText with a few habits of Markdown, kept here rather than fought:
# - an equation block, indented under a paragraph (``    l(f, y) = exp(-alpha f_y) + ...``), would be a
#   block quote with ``*`` read as emphasis: it becomes a literal block, as Markdown would show it;
# - fitted attributes end in "_" (scikit-learn's ``coef_``), read as a hyperlink reference, and ``|x|``
#   (a norm), read as a substitution: outside literals, both become literals.
_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING = re.compile(r"(?<![\w`*:|\\])([A-Za-z]\w*_)(?=[\s.,;:)\]]|$)")
_BARS = re.compile(r"(?<![\w|`])\|(?=\S)([^|`\n]+?)(?<=\S)\|(?![\w|`_])")
_LIST = re.compile(r"^([-*+]|\d+[.)]|#[.)]|\(\d+\))\s+")
_FIELD = re.compile(r"^(\s*:[^:\s][^:]*:)(.*)$")


def _literal_conventions(line: str) -> str:
    field = _FIELD.match(line)
    head, line = (field.group(1), field.group(2)) if field else ("", line)
    parts = _LITERAL.split(line)
    for i in range(0, len(parts), 2):  # even parts lie outside literals
        parts[i] = _BARS.sub(lambda m: f"``|{m.group(1)}|``\\ ", _TRAILING.sub(r"``\1``", parts[i]))
    return head + "".join(parts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def rst_docstring(lines: list[str]) -> list[str]:
    """The docstring's lines with the conventions above applied (literal blocks left as they are)."""
    out: list[str] = []
    keep_under: int | None = None  # inside a literal/directive/doctest block: lines indented past this
    prev_indent: int | None = None  # content indent of the last line of the previous paragraph
    prev_opens = False  # the previous paragraph ends in "::" or is a directive or a field
    for i, line in enumerate(lines):
        text = line.strip()
        if keep_under is not None:
            if not text or _indent(line) > keep_under:
                out.append(line)
                continue
            keep_under = None
        if not text:
            out.append(line)
            continue
        ind = _indent(line)
        starts_para = i == 0 or not lines[i - 1].strip()
        if text.startswith(">>>") and starts_para:
            out.append(line)
            keep_under = ind - 1  # a doctest block runs to the next blank line
            continue
        if (
            starts_para
            and prev_indent is not None
            and ind > prev_indent
            and not prev_opens
            and not _LIST.match(text)
            and not text.startswith((":", ".."))
        ):
            out += [" " * prev_indent + "::", "", line]
            keep_under = prev_indent
            continue
        out.append(_literal_conventions(line))
        marker = _LIST.match(text)
        prev_indent = ind + (marker.end() if marker else 0)
        opens = text.endswith("::") or (starts_para and text.startswith("..")) or bool(_FIELD.match(line))
        prev_opens = opens if starts_para else (prev_opens or opens)
        if text.endswith("::"):
            keep_under = ind
    return out


def _process_docstring(app, what, name, obj, options, lines) -> None:
    lines[:] = rst_docstring(lines)


# -- Cross-references: no "fuzzy" guesses across packages ---------------------------------------------
# A bare name in a signature or a field (``T``, ``names``) that matches nothing exactly makes Sphinx
# take any object whose name merely ends with it, often in another package (a TypeVar ``T`` of the
# core linked to an attribute of a method's config). Keep such guesses only for classes, functions
# and data of the same package; otherwise the name stays plain text.
_GUESSABLE = {"class", "exception", "function", "data", "module"}


class _PackageScopedPython(PythonDomain):
    def find_obj(self, env, modname, classname, name, type, searchmode=0):
        matches = super().find_obj(env, modname, classname, name, type, searchmode)
        if searchmode != 1 or len(matches) == 0:
            return matches
        stripped = name.removesuffix("()")
        exact = {stripped, f"{modname}.{stripped}", f"{modname}.{classname}.{stripped}"}
        if matches[0][0] in exact:
            return matches
        package = ".".join((modname or "").split(".")[:2])
        return [
            (n, entry)
            for n, entry in matches
            if package and n.startswith(package + ".") and entry.objtype in _GUESSABLE
        ]


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring, priority=600)  # after napoleon
    app.add_domain(_PackageScopedPython, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
