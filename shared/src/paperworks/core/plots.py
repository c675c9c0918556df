"""Figures are optional: matplotlib comes with the ``plot`` extra, and a report without it has none."""

from __future__ import annotations

from types import ModuleType

__all__ = ["optional_pyplot"]


def optional_pyplot() -> ModuleType | None:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or None when matplotlib is missing.

    An experiment's :meth:`~paperworks.core.Experiment.figures` returns no figures when this is None.
    """
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
