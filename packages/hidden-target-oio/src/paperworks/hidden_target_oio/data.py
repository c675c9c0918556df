"""Demand from a long table ``(date, item, quantity)``, as a store exports sales (extra ``pandas``).

:func:`load_long_table` reads a CSV (or Parquet) path or a ``pandas.DataFrame`` and pivots it to a
``(T, n)`` demand matrix: one row per date (sorted), one column per item (sorted), quantities of repeated
``(date, item)`` rows summed, and a date on which an item has no row counted as zero demand. Missing
dates between the first and last are *not* invented (``fill_dates=True`` adds them as zero-demand rows,
for daily data). Negative or missing quantities are refused (returns are not demand).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .demand import TableDemand

__all__ = ["DemandTable", "load_long_table"]


@dataclass(frozen=True)
class DemandTable:
    """``quantities`` (T, n) with the ``dates`` (T,) and ``items`` (n,) that label its rows and columns."""

    dates: np.ndarray
    items: tuple[str, ...]
    quantities: np.ndarray

    def process(self, bootstrap: bool = False) -> TableDemand:
        """The table as a demand process (replay, or day bootstrap)."""
        return TableDemand(self.quantities, bootstrap=bootstrap)


def load_long_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    date: str = "date",
    item: str = "item",
    quantity: str = "quantity",
    fill_dates: bool = False,
) -> DemandTable:
    """Pivot a long demand table to a :class:`DemandTable` (see the module docstring)."""
    if isinstance(source, pd.DataFrame):
        df = source
    else:
        path = os.fspath(source)
        df = pd.read_parquet(path) if path.endswith((".parquet", ".pq")) else pd.read_csv(path)
    missing = [c for c in (date, item, quantity) if c not in df.columns]
    if missing:
        raise ValueError(f"source: missing column(s) {missing}; columns are {list(df.columns)}")
    if df.empty:
        raise ValueError("source: the table has no rows")
    q = pd.to_numeric(df[quantity], errors="coerce")
    if q.isna().any():
        raise ValueError(f"{quantity}: {int(q.isna().sum())} missing or non-numeric quantities")
    if not np.isfinite(q.to_numpy(dtype=float)).all():
        raise ValueError(f"{quantity}: expected finite quantities")
    if (q < 0).any():
        raise ValueError(f"{quantity}: {int((q < 0).sum())} negative quantities (returns are not demand)")
    try:
        dates = pd.to_datetime(df[date])
    except (ValueError, TypeError) as e:
        raise ValueError(f"{date}: could not parse dates ({e})") from None
    if dates.isna().any():
        raise ValueError(f"{date}: {int(dates.isna().sum())} missing dates")
    if df[item].isna().any():
        raise ValueError(f"{item}: {int(df[item].isna().sum())} missing item labels")
    long = pd.DataFrame({"date": dates, "item": df[item].astype(str), "q": q.astype(float)})
    wide = long.pivot_table(index="date", columns="item", values="q", aggfunc="sum", fill_value=0.0)
    wide = wide.sort_index().sort_index(axis=1)
    if fill_dates:
        full = pd.date_range(wide.index.min(), wide.index.max(), freq="D")
        wide = wide.reindex(full, fill_value=0.0)
    return DemandTable(
        dates=wide.index.to_numpy(),
        items=tuple(str(c) for c in wide.columns),
        quantities=wide.to_numpy(dtype=float),
    )
