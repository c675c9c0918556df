"""The SLIE calibration search: the IC subset whose softmax average is most accurate on held-out data.

Given the softmax outputs ``P`` (K, N, C) of the K ICs on a calibration set with labels ``y`` (N,) and
a depth ``k`` (only ICs ``0..k-1`` may be used: the backbone is truncated after IC ``k``), the search
evaluates every non-empty subset ``S`` of ``{0..k-1}`` (``2^k - 1`` of them),

    acc(S) = mean_n [ argmax_c (1/|S|) sum_{j in S} P[j, n, c] == y_n ],

and returns the first maximiser in the order (subset size, then lexicographic), i.e. the smallest,
shallowest subset among equally accurate ones. All subsets are scored at once by one einsum over a
``(2^k - 1, k)`` membership matrix (no Python loop over samples), in well under a second for k <= 8.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from paperworks.core import validate

from ._checks import as_labels, as_probabilities, as_tensor, int_sequence

__all__ = ["SlieCalibrator", "SlieSelection", "calibrate_subset", "ensemble_accuracy", "subset_masks"]

MAX_DEPTH = 16


def subset_masks(k: int) -> torch.Tensor:
    """All non-empty subsets of ``range(k)`` as a ``(2^k - 1, k)`` float 0/1 matrix (size, then lex order)."""
    k = validate.int_in_range(k, "k", 1, MAX_DEPTH)
    rows = []
    for r in range(1, k + 1):
        for comb in itertools.combinations(range(k), r):
            row = [0.0] * k
            for i in comb:
                row[i] = 1.0
            rows.append(row)
    return torch.tensor(rows)


def _check_probs(ic_probs: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    p = as_probabilities(ic_probs, "ic_probs", ndim=3)
    if labels is None:
        raise TypeError("labels: expected the calibration labels (N,) as integer class indices, got None")
    y = as_labels(labels, "labels", n=p.shape[1], num_classes=p.shape[2])
    return p, y


def ensemble_accuracy(ic_probs: torch.Tensor, labels: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Accuracy ``(S,)`` of softmax averaging over each subset row of ``masks`` (S, K)."""
    p, y = _check_probs(ic_probs, labels)
    m = as_tensor(masks, "masks")
    if m.dim() != 2 or m.shape[1] != p.shape[0] or m.shape[0] == 0:
        raise ValueError(
            f"masks: expected a non-empty 0/1 matrix of shape (S, {p.shape[0]}), got {tuple(m.shape)}"
        )
    m = m.to(p.dtype)
    if not bool(((m == 0) | (m == 1)).all()):
        raise ValueError("masks: expected 0/1 membership entries")
    if bool((m.sum(1) == 0).any()):
        raise ValueError(
            "masks: every subset must contain at least one IC (an empty subset has no prediction)"
        )
    out = torch.empty(m.shape[0], dtype=torch.float64)
    chunk = max(1, int(2e7 // max(1, p.shape[1] * p.shape[2])))
    for s in range(0, m.shape[0], chunk):  # chunks of subsets bound the memory; samples stay vectorised
        avg = torch.einsum("sk,knc->snc", m[s : s + chunk], p)  # the 1/|S| factor does not change argmax
        out[s : s + chunk] = (avg.argmax(-1) == y).double().mean(-1)
    return out


@dataclass(frozen=True)
class SlieSelection:
    """Result of the calibration search: ``subset`` (IC indices, increasing), ``depth`` (k), the
    calibration accuracy of the chosen subset and of every subset (in :func:`subset_masks` order)."""

    subset: tuple[int, ...]
    depth: int
    accuracy: float
    all_accuracies: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "depth", validate.int_in_range(self.depth, "depth", 1, MAX_DEPTH))
        object.__setattr__(self, "subset", int_sequence(self.subset, "subset"))
        validate.fraction(self.accuracy, "accuracy")
        if not self.subset:
            raise ValueError("subset: expected at least one IC, got an empty subset")
        if (
            list(self.subset) != sorted(set(self.subset))
            or self.subset[0] < 0
            or self.subset[-1] >= self.depth
        ):
            raise ValueError(
                f"subset: expected distinct increasing IC indices below depth={self.depth}, got {self.subset}"
            )


def calibrate_subset(ic_probs: torch.Tensor, labels: torch.Tensor, depth: int) -> SlieSelection:
    """Exhaustive SLIE search over the non-empty subsets of the first ``depth`` ICs (module doc).

    ``ic_probs`` (K, N, C) softmax outputs of all K ICs on the calibration set, ``labels`` (N,).
    The calibration set must have at least C samples (one per class on average).
    """
    p, y = _check_probs(ic_probs, labels)
    k_all, n, c = p.shape
    depth = validate.int_in_range(depth, "depth", 1, min(k_all, MAX_DEPTH))
    if n < c:
        raise ValueError(
            f"ic_probs: the calibration set has {n} samples, fewer than the {c} classes; "
            "use at least one calibration sample per class"
        )
    masks = subset_masks(depth)
    acc = ensemble_accuracy(p[:depth], y, masks)
    best = int(torch.argmax(acc))  # first maximiser: smallest, then lexicographically first subset
    subset = tuple(int(i) for i in torch.nonzero(masks[best]).flatten())
    return SlieSelection(subset, depth, float(acc[best]), tuple(float(a) for a in acc))


class SlieCalibrator:
    """scikit-learn-style wrapper: ``fit(ic_probs, labels)`` sets ``subset_``, ``depth_``,
    ``calibration_accuracy_``; ``predict_proba(ic_probs)`` (K, N, C) -> (N, C) averages the subset."""

    def __init__(self, depth: int = 5) -> None:
        self.depth = validate.int_in_range(depth, "depth", 1, MAX_DEPTH)

    def fit(self, ic_probs: torch.Tensor, labels: torch.Tensor) -> SlieCalibrator:
        sel = calibrate_subset(ic_probs, labels, self.depth)
        self.selection_ = sel
        self.subset_ = sel.subset
        self.depth_ = sel.depth
        self.calibration_accuracy_ = sel.accuracy
        return self

    def _fitted(self) -> None:
        if not hasattr(self, "subset_"):
            raise RuntimeError("SlieCalibrator: call fit(ic_probs, labels) before predicting")

    def predict_proba(self, ic_probs: torch.Tensor) -> torch.Tensor:
        self._fitted()
        p = as_probabilities(ic_probs, "ic_probs", ndim=3)
        if p.shape[0] < self.depth_:
            raise ValueError(f"ic_probs: expected at least {self.depth_} ICs, got {p.shape[0]}")
        return p[list(self.subset_)].mean(0)

    def predict(self, ic_probs: torch.Tensor) -> np.ndarray:
        return self.predict_proba(ic_probs).argmax(-1).numpy()
