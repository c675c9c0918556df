"""Task panels from long tables (``task_id, t, price, demand, covariates``) and the UCI Online Retail layout.

Every check a long table gets here names the offending column and tasks: fewer than three periods,
duplicate periods, NaN or negative prices, equal masked (last two) prices, covariates that vary within a
task, a ragged panel (tasks with different numbers of periods).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from paperworks.core.validate import finite_array

__all__ = ["check_panel_arrays", "load_online_retail", "panel_from_long", "panel_to_long"]


def check_panel_arrays(
    X: object, prices: object, demand: object, *, nonnegative: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate ``X`` (K, d), ``prices`` (K, T), ``demand`` (K, T); returns float arrays. ``nonnegative``:
    also reject negative prices (real data; the Gaussian generator's prices can dip below 0 in its tails)."""
    Xa = finite_array(X, "X", ndim=2)
    p = finite_array(prices, "prices", ndim=2)
    K, T = p.shape
    if Xa.shape[0] != K:
        raise ValueError(f"X: expected {K} rows (one per task), got {Xa.shape[0]}")
    y = finite_array(demand, "demand", shape=(K, T))
    if T < 3:
        raise ValueError(f"prices: expected >= 3 periods per task (two masked, one seen), got {T}")
    if nonnegative and (p < 0).any():
        raise ValueError(f"prices: expected non-negative prices, {int((p < 0).sum())} are negative")
    same = np.flatnonzero(np.isclose(p[:, -1], p[:, -2], rtol=0, atol=1e-12))
    if same.size:
        raise ValueError(f"prices: the two masked prices must differ; equal in tasks {same[:5].tolist()}")
    return Xa, p, y


def panel_from_long(df, covariates: list[str] | None = None):
    """A :class:`~.generator.DemandPanel` and the task ids from a long table with columns ``task_id``,
    ``t``, ``price``, ``demand`` and the ``covariates`` (default: every other column). Periods are sorted by
    ``t``; the last two are the masked, exogenous ones."""
    import pandas as pd

    from .generator import DemandPanel

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    need = ["task_id", "t", "price", "demand"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"df: missing columns {missing}")
    cov = [c for c in df.columns if c not in need] if covariates is None else list(covariates)
    absent = [c for c in cov if c not in df.columns]
    if absent:
        raise ValueError(f"covariates: not columns of df: {absent}")
    if not cov:
        raise ValueError("covariates: expected at least one covariate column")
    if df.empty:
        raise ValueError("df: expected a non-empty table")
    for col in ["price", "demand", *cov]:
        vals = pd.to_numeric(df[col], errors="coerce")
        if vals.isna().any():
            raise ValueError(f"{col}: expected numbers, found {int(vals.isna().sum())} NaN or non-numeric")
    dup = df.duplicated(["task_id", "t"])
    if dup.any():
        raise ValueError(f"t: duplicate periods in tasks {df.loc[dup, 'task_id'].unique()[:5].tolist()}")
    varying = df.groupby("task_id")[cov].nunique() > 1
    if varying.any().any():
        bad = varying.any(axis=1)
        raise ValueError(
            f"covariates: must be constant within a task; {list(varying.columns[varying.any()])} vary in "
            f"tasks {bad[bad].index[:5].tolist()}"
        )
    counts = df.groupby("task_id").size()
    if counts.min() < 3:
        raise ValueError(f"t: tasks need >= 3 periods; {counts[counts < 3].index[:5].tolist()} have fewer")
    if counts.nunique() != 1:
        raise ValueError(
            f"t: expected the same number of periods in every task, got {sorted(counts.unique())}"
        )
    d = df.sort_values(["task_id", "t"])
    ids = d["task_id"].drop_duplicates().to_numpy()
    T = int(counts.iloc[0])
    prices = d["price"].to_numpy(float).reshape(len(ids), T)
    demand = d["demand"].to_numpy(float).reshape(len(ids), T)
    X = d.groupby("task_id", sort=False)[cov].first().loc[ids].to_numpy(float)
    check_panel_arrays(X, prices, demand, nonnegative=True)
    return DemandPanel(X, prices, demand), ids


def panel_to_long(panel, task_ids=None, covariates: list[str] | None = None):
    """The long table of a panel (``task_id, t, price, demand, x0..``)."""
    import pandas as pd

    K, T = panel.prices.shape
    names = covariates or [f"x{j}" for j in range(panel.X.shape[1])]
    ids = np.arange(K) if task_ids is None else np.asarray(task_ids)
    out = pd.DataFrame(
        {
            "task_id": np.repeat(ids, T),
            "t": np.tile(np.arange(T), K),
            "price": panel.prices.ravel(),
            "demand": panel.demand.ravel(),
        }
    )
    for j, n in enumerate(names):
        out[n] = np.repeat(panel.X[:, j], T)
    return out


RETAIL_COLUMNS = ("InvoiceNo", "StockCode", "Quantity", "InvoiceDate", "UnitPrice", "CustomerID", "Country")


def load_online_retail(path: str | os.PathLike, *, periods: int = 6, min_quantity: int = 1):
    """Weekly tasks from the UCI Online Retail layout (CSV; ``.xlsx`` needs openpyxl).

    Cancellations (InvoiceNo starting with "C") and non-positive quantities or prices are dropped. A task is
    a StockCode; a period is an ISO week with sales; price = quantity-weighted mean UnitPrice, demand = total
    Quantity. Each task keeps its last ``periods`` selling weeks (tasks with fewer, or with equal last two
    prices, are dropped). Covariates, constant per task: mean log price, log number of customers, share of
    UK sales, all over the kept weeks. Returns ``(panel, task_ids)``.
    """
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path: no such file {str(p)!r}")
    raw = pd.read_excel(p) if p.suffix.lower() in (".xlsx", ".xls") else pd.read_csv(p)
    missing = [c for c in RETAIL_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"path: {p.name} lacks the Online Retail columns {missing}")
    r = raw[~raw["InvoiceNo"].astype(str).str.startswith("C")]
    r = r[(r["Quantity"] >= min_quantity) & (r["UnitPrice"] > 0)].copy()
    if r.empty:
        raise ValueError(f"path: {p.name} has no sales after dropping cancellations and non-positive rows")
    r["week"] = pd.to_datetime(r["InvoiceDate"]).dt.to_period("W").astype(str)
    r["revenue"] = r["Quantity"] * r["UnitPrice"]
    r["uk"] = (r["Country"] == "United Kingdom") * r["Quantity"]
    weekly = (
        r.groupby(["StockCode", "week"])
        .agg(
            demand=("Quantity", "sum"),
            revenue=("revenue", "sum"),
            uk=("uk", "sum"),
            customers=("CustomerID", "nunique"),
        )
        .reset_index()
    )
    weekly["price"] = weekly["revenue"] / weekly["demand"]
    weekly = weekly.sort_values(["StockCode", "week"]).groupby("StockCode").tail(periods)
    n = weekly.groupby("StockCode")["week"].transform("size")
    weekly = weekly[n == periods].copy()
    if weekly.empty:
        raise ValueError(f"periods: no StockCode has {periods} selling weeks in {p.name}")
    weekly["t"] = weekly.groupby("StockCode").cumcount()
    g = weekly.groupby("StockCode")
    weekly["log_price"] = g["price"].transform(lambda s: np.log(s).mean())
    weekly["log_customers"] = np.log1p(g["customers"].transform("sum"))
    weekly["uk_share"] = g["uk"].transform("sum") / g["demand"].transform("sum")
    last = weekly[weekly["t"] >= periods - 2].pivot(index="StockCode", columns="t", values="price")
    keep = last.index[~np.isclose(last[periods - 2], last[periods - 1])]
    weekly = weekly[weekly["StockCode"].isin(keep)].rename(columns={"StockCode": "task_id"})
    cols = ["task_id", "t", "price", "demand", "log_price", "log_customers", "uk_share"]
    return panel_from_long(weekly[cols], covariates=["log_price", "log_customers", "uk_share"])
