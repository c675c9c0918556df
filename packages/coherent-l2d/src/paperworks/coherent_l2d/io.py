"""CheXpert-style label files: one row per study, one column per finding, values 1, 0, -1 or blank.

CheXpert's convention: 1 positive, 0 negative, -1 uncertain, blank not mentioned (read as negative).
:func:`load_chexpert_labels` maps uncertain labels by ``uncertain`` ("zeros", "ones" or "mask": keep them
out), and fills taxonomy nodes that have no column (e.g. a grouping node) as the OR of their children.
Rows that contradict the taxonomy (a positive finding under a negative parent column) are reported, not
fixed: ``on_inconsistent="raise"`` (default) names the first one, ``"mask"`` returns them in the mask.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from paperworks.core.validate import one_of

from .taxonomy import Taxonomy

__all__ = ["load_chexpert_labels"]


def load_chexpert_labels(
    path: str | Path,
    taxonomy: Taxonomy,
    *,
    columns: dict[str, str] | None = None,
    uncertain: str = "zeros",
    on_inconsistent: str = "raise",
) -> tuple[np.ndarray, np.ndarray]:
    """Labels Y (m, n) in the taxonomy's node order and a mask (m, n) of usable entries.

    ``columns``: CSV column -> node name where they differ (default: a case-insensitive match of names).
    """
    one_of(uncertain, "uncertain", ("zeros", "ones", "mask"))
    one_of(on_inconsistent, "on_inconsistent", ("raise", "mask"))
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path: no file at {p}")
    with p.open(newline="") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        rows = list(reader)
    by_name = {n.lower(): i for i, n in enumerate(taxonomy.names)}
    mapping: dict[str, int] = {}
    for col in header:
        node = (columns or {}).get(col, col)
        if node.lower() in by_name:
            mapping[col] = by_name[node.lower()]
    if columns:
        unknown = [node for node in columns.values() if node.lower() not in by_name]
        if unknown:
            raise ValueError(f"columns: nodes {unknown} are not in the taxonomy")
    if not mapping:
        raise ValueError(f"path: no column of {p.name} names a taxonomy node (columns: {header[:8]})")
    m, n = len(rows), taxonomy.n
    Y = np.zeros((m, n), np.int8)
    mask = np.ones((m, n), bool)
    present = np.zeros(n, bool)
    for col, v in mapping.items():
        present[v] = True
        for i, row in enumerate(rows):
            raw = (row.get(col) or "").strip()
            if raw == "":
                continue
            try:
                val = float(raw)
            except ValueError:
                raise ValueError(
                    f"path: row {i + 2}, column {col!r}: expected 1, 0, -1 or blank, got {raw!r}"
                ) from None
            if val == 1:
                Y[i, v] = 1
            elif val == -1:
                Y[i, v] = 1 if uncertain == "ones" else 0
                mask[i, v] = uncertain != "mask"
            elif val != 0:
                raise ValueError(
                    f"path: row {i + 2}, column {col!r}: expected 1, 0, -1 or blank, got {raw!r}"
                )
    for nodes in reversed(taxonomy.levels):  # nodes without a column: OR of their children
        for v in nodes:
            if not present[v]:
                kids = taxonomy.children(int(v))
                if kids.size:
                    Y[:, v] = Y[:, kids].max(1)
                    mask[:, v] = mask[:, kids].all(1)
    child = np.flatnonzero(taxonomy.parent >= 0)
    bad = (Y[:, child] == 1) & (Y[:, taxonomy.parent[child]] == 0)
    if bad.any():
        if on_inconsistent == "raise":
            taxonomy.check_labels(Y, "labels")  # raises, naming the count and the first row
        rows_bad = bad.any(1)
        mask[rows_bad] = False
    return Y, mask
