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

from paperworks.core.validate import fraction, nonnegative_int, positive_int

__all__ = ["ContinualStream", "Task", "make_stream", "stream_to"]


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
    n_tasks = positive_int(n_tasks, "n_tasks")
    seed = nonnegative_int(seed, "seed")
    frac_permuted = fraction(frac_permuted, "frac_permuted", open_low=True)
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


def stream_to(stream: ContinualStream, device: str | torch.device) -> ContinualStream:
    """The same stream with every tensor on ``device`` (pixel maps stay NumPy)."""
    if not isinstance(stream, ContinualStream):
        raise TypeError(f"stream: expected a ContinualStream, got {type(stream).__name__}")
    dev = torch.device(device)
    tasks = tuple(
        Task(t.x_train.to(dev), t.y_train.to(dev), t.x_test.to(dev), t.y_test.to(dev), t.pixel_map)
        for t in stream.tasks
    )
    return ContinualStream(stream.x_pretrain.to(dev), stream.y_pretrain.to(dev), tasks)
