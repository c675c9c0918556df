"""Check a built site without a browser: every internal link, image, script and stylesheet resolves
(files and ``#anchors``), and no page loads anything from the network (the site works offline).

    python docs/check_site.py [site]

Exits 1 and lists the problems when there are any. Standard library only.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# attributes that load a resource when the page is shown (a link <a href> is followed, not loaded)
LOADS = {("img", "src"), ("script", "src"), ("link", "href"), ("iframe", "src"), ("source", "src")}
FOLLOWS = {("a", "href")}


@dataclass
class Page:
    ids: set[str] = field(default_factory=set)
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, url)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v for k, v in attrs if v is not None}
        for key in ("id", "name"):
            if key in a and (key == "id" or tag == "a"):
                self.page.ids.add(a[key])
        for t, attr in LOADS | FOLLOWS:
            if tag == t and attr in a:
                if tag == "link" and "stylesheet" not in a.get("rel", "") and "icon" not in a.get("rel", ""):
                    continue  # rel=canonical/next/prev/search: not loaded
                self.page.refs.append((tag, attr, a[attr]))


def parse(path: Path) -> Page:
    p = _Parser()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p.page


def check(site: Path) -> list[str]:
    """Problems found in ``site`` (empty when every internal reference resolves and nothing is remote)."""
    site = site.resolve()
    # _static holds the theme's files, among them Jinja templates named *.html that are no pages
    pages = {p: parse(p) for p in sorted(site.rglob("*.html")) if "_static" not in p.relative_to(site).parts}
    if not pages:
        return [f"{site}: no HTML pages"]
    problems = []
    for path, page in pages.items():
        where = path.relative_to(site).as_posix()
        for tag, attr, url in page.refs:
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") or url.startswith("//"):
                if (tag, attr) in LOADS:
                    problems.append(f"{where}: <{tag} {attr}> loads {url} from the network")
                continue
            if parts.scheme:  # mailto:, data:, javascript:
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            try:
                target.relative_to(site)
            except ValueError:
                problems.append(f"{where}: <{tag} {attr}={url!r}> leaves the site")
                continue
            if not target.is_file():
                problems.append(f"{where}: <{tag} {attr}={url!r}> points at nothing")
                continue
            frag = unquote(parts.fragment)
            if frag and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if frag not in ids:
                    problems.append(f"{where}: <{tag} {attr}={url!r}>: no #{frag} in {target.name}")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0] if args else "site")
    problems = check(site)
    for p in problems:
        print(p)
    print(f"check_site: {site}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
