"""Discovery of installed experiments through the ``paperworks.experiments`` entry point group."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from .experiment import Experiment

__all__ = ["GROUP", "UnknownSlugError", "find_experiments", "load_experiment"]

GROUP = "paperworks.experiments"


class UnknownSlugError(KeyError):
    def __init__(self, slug: str, known: list[str]) -> None:
        self.slug, self.known = slug, known
        listing = ", ".join(known) if known else "none installed"
        super().__init__(f"unknown method {slug!r}; known: {listing}")

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
