"""Discovery of installed experiments through the ``paperworks.experiments`` entry point group.

:func:`find_experiments` reads only entry-point metadata; :func:`load_experiment` imports one
experiment; :func:`describe` reads one's declarations from its source without importing it
(:mod:`paperworks.core.declarations`), and imports it only when that fails.
"""

from __future__ import annotations

import difflib
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from .experiment import Experiment

if TYPE_CHECKING:
    from .declarations import Declarations

__all__ = ["GROUP", "UnknownSlugError", "describe", "find_experiments", "load_experiment"]

GROUP = "paperworks.experiments"


class UnknownSlugError(KeyError):
    def __init__(self, slug: str, known: list[str]) -> None:
        self.slug, self.known = slug, known
        listing = ", ".join(known) if known else "none installed"
        close = difflib.get_close_matches(slug, known, n=1, cutoff=0.5)
        self.suggestion = close[0] if close else None
        hint = f"did you mean {close[0]!r}? " if close else ""
        super().__init__(f"unknown method {slug!r}; {hint}known: {listing}")

    def __str__(self) -> str:
        return str(self.args[0])


def find_experiments() -> dict[str, EntryPoint]:
    """Installed experiments, slug -> entry point (not yet imported), sorted by slug."""
    eps = entry_points(group=GROUP)
    return {ep.name: ep for ep in sorted(eps, key=lambda e: e.name)}


def load_experiment(slug: str) -> Experiment:
    """Import and instantiate the experiment registered under ``slug``."""
    found = find_experiments()
    if slug not in found:
        raise UnknownSlugError(slug, sorted(found))
    obj = found[slug].load()
    exp = obj() if isinstance(obj, type) else obj
    if not isinstance(exp, Experiment):
        raise TypeError(f"entry point {slug!r} ({found[slug].value}) is not a paperworks Experiment")
    if exp.slug != slug:
        raise ValueError(f"entry point {slug!r} loads an experiment whose slug is {exp.slug!r}")
    dist = getattr(found[slug], "dist", None)
    if dist is not None:
        exp.distribution = dist.metadata["Name"]  # recorded in the run record
    return exp


def describe(slug: str, ep: EntryPoint | None = None) -> Declarations:
    """The declarations of the experiment ``slug`` (paper, claims, seeds, config fields).

    Read from the module's source without importing it; when that fails the experiment is loaded
    and the result says so (``source == "import"``, ``why_imported``).
    """
    from .declarations import Unreadable, declarations_from_experiment, read_declarations

    if ep is None:
        found = find_experiments()
        if slug not in found:
            raise UnknownSlugError(slug, sorted(found))
        ep = found[slug]
    try:
        d = read_declarations(ep)
    except Unreadable as e:
        return declarations_from_experiment(load_experiment(slug), ep, why=str(e))
    if d.slug != slug:
        raise ValueError(f"entry point {slug!r} names an experiment whose slug is {d.slug!r}")
    return d
