"""The continual stream: scikit-learn's bundled digits, a pretraining part and permuted-pixel tasks.

Generative model. The 1,797 8x8 digit images (pixels scaled to [0, 1]) are split, per seed and
stratified by class, into a *pretraining* half (the backbone learns the plain images) and a *task*
half, itself split into task-train (70%) and task-test (30%) images shared by all tasks. Task ``t``
is a domain: a fixed random subset of ``frac_permuted * 64`` pixel positions is shuffled by a fixed
random permutation (latent: subset and permutation; observed: the transformed image and its digit
label, same 10 classes in every task). Tasks differ only in their input transformation, so one
network can in principle serve them all (domain-incremental, no task id at test time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

__all__ = ["ContinualStream", "Task", "make_stream"]


@dataclass(frozen=True)
class Task:
    """One task: train/test inputs (n, 64) float32 and labels (n,) int64, plus its pixel map."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    pixel_map: np.ndarray


@dataclass(frozen=True)
class ContinualStream:
    x_pretrain: torch.Tensor
    y_pretrain: torch.Tensor
    tasks: tuple[Task, ...]

    @property
    def n_features(self) -> int:
        return int(self.x_pretrain.shape[1])


def make_stream(n_tasks: int, seed: int, frac_permuted: float = 0.5) -> ContinualStream:
    """Build the stream of ``n_tasks`` permuted-digits tasks (module docstring) for ``seed``."""
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, int) or n_tasks < 1:
        raise ValueError(f"n_tasks: expected a positive int, got {n_tasks!r}")
    if not 0.0 < frac_permuted <= 1.0:
        raise ValueError(f"frac_permuted: expected a fraction in (0, 1], got {frac_permuted!r}")
    digits = load_digits()
    X = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    X_pre, X_task, y_pre, y_task = train_test_split(X, y, test_size=0.5, stratify=y, random_state=seed)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X_task, y_task, test_size=0.3, stratify=y_task, random_state=seed
    )
    rng = np.random.default_rng(seed + 7919)
    d = X.shape[1]
    m = max(2, round(frac_permuted * d))
    tasks = []
    for _ in range(n_tasks):
        subset = rng.choice(d, size=m, replace=False)
        pixel_map = np.arange(d)
        pixel_map[subset] = subset[rng.permutation(m)]
        tasks.append(
            Task(
                torch.from_numpy(X_tr[:, pixel_map].copy()),
                torch.from_numpy(y_tr),
                torch.from_numpy(X_te[:, pixel_map].copy()),
                torch.from_numpy(y_te),
                pixel_map,
            )
        )
    return ContinualStream(torch.from_numpy(X_pre), torch.from_numpy(y_pre), tuple(tasks))
