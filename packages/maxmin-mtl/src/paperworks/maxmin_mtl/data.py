"""Multi-task data with heads of very different scales and units: a generator and a bundled data set.

* :func:`make_multitask_regression` -- generative model. Observed inputs ``x ~ N(0, I_p)``; a latent
  shared representation ``h = tanh(x W / sqrt(p))`` (``W`` ``p x r`` Gaussian) that every task reads;
  task ``t`` observes ``y_t = s_t (h a_t + 0.5 sin(x b_t) + sigma e_t)`` with ``a_t ~ N(0, I_r / r)``
  (random signs, so tasks conflict on the shared trunk), a task-specific non-linear part along a random
  unit direction ``b_t``, noise ``e_t ~ N(0, 1)``, ``sigma = 0.3``, and unit scales ``s_t`` spread
  log-uniformly over ``[1e-2, 1e2]`` -- the loss scales then differ by up to eight orders of magnitude.
* :func:`load_diabetes_tasks` -- scikit-learn's bundled diabetes data in original units (no
  download): from age, blood pressure and five serum measurements predict disease progression (score,
  variance ~6e3), BMI (kg/m^2, ~2e1), log triglycerides s5 (~3e-1) and sex (classification).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ._checks import check_int, finite_float, one_of

__all__ = ["MTLData", "load_diabetes_tasks", "make_multitask_regression"]


@dataclass
class MTLData:
    """A multi-task data set. ``X_*``: ``(n, p)`` standardised inputs; ``Y_*``: list of ``k`` ``(n,)``
    targets (float for ``"regression"``, int class ids for ``"classification"``); ``names``/``units``
    describe the tasks; ``y_mean``/``y_std``: training statistics of regression targets (the heads
    de-standardise with them, so losses stay in the targets' own units)."""

    X_train: np.ndarray
    X_test: np.ndarray
    Y_train: list[np.ndarray]
    Y_test: list[np.ndarray]
    kinds: list[str]
    names: list[str]
    units: list[str]
    n_classes: list[int] = field(default_factory=list)
    y_mean: list[float] = field(default_factory=list)
    y_std: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        k = len(self.kinds)
        if not (len(self.Y_train) == len(self.Y_test) == len(self.names) == k) or k == 0:
            raise ValueError("MTLData: expected the same positive number of targets, kinds and names")
        bad = [kd for kd in self.kinds if kd not in ("regression", "classification")]
        if bad:
            raise ValueError(f"kinds: expected 'regression' or 'classification', got {bad}")
        if not self.n_classes:
            self.n_classes = [
                int(y.max()) + 1 if kd == "classification" else 1 for y, kd in zip(self.Y_train, self.kinds)
            ]
        if not self.y_mean:
            self.y_mean = [
                float(y.mean()) if kd == "regression" else 0.0 for y, kd in zip(self.Y_train, self.kinds)
            ]
            self.y_std = [
                float(y.std()) if kd == "regression" else 1.0 for y, kd in zip(self.Y_train, self.kinds)
            ]

    @property
    def n_tasks(self) -> int:
        return len(self.kinds)

    def target(self, t: int, split: str) -> torch.Tensor:
        """Task ``t``'s targets as a tensor (float32 or int64) for ``split`` in ``{"train", "test"}``."""
        one_of(split, "split", ("train", "test"))
        t = check_int(t, "t", 0)
        if t >= self.n_tasks:
            raise ValueError(f"t: expected a task index in [0, {self.n_tasks}), got {t}")
        y = {"train": self.Y_train, "test": self.Y_test}[split][t]
        if self.kinds[t] == "regression":
            return torch.as_tensor(y, dtype=torch.float32)
        return torch.as_tensor(y, dtype=torch.long)


def _standardise(Xtr: np.ndarray, Xte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return (Xtr - mu) / sd, (Xte - mu) / sd


def make_multitask_regression(
    n_train: int = 300,
    n_test: int = 2000,
    n_features: int = 12,
    n_tasks: int = 5,
    rank: int = 6,
    scale_range: tuple[float, float] = (1e-2, 1e2),
    noise: float = 0.3,
    seed: int = 0,
) -> MTLData:
    """Sample the generative model of the module docstring; task ``t`` has unit scale ``s_t``."""
    n_train = check_int(n_train, "n_train", 2)
    n_test = check_int(n_test, "n_test", 1)
    n_features = check_int(n_features, "n_features", 1)
    n_tasks = check_int(n_tasks, "n_tasks", 1)
    rank = check_int(rank, "rank", 1)
    seed = check_int(seed, "seed", 0)
    noise = finite_float(noise, "noise")
    if noise < 0:
        raise ValueError(f"noise: expected a number >= 0, got {noise}")
    try:
        lo, hi = (finite_float(v, "scale_range") for v in scale_range)
    except TypeError:
        raise TypeError(f"scale_range: expected a pair (low, high), got {scale_range!r}") from None
    if not (0 < lo <= hi):
        raise ValueError(f"scale_range: expected 0 < low <= high, got {scale_range}")
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_features, rank))
    A = rng.normal(size=(rank, n_tasks)) / np.sqrt(rank)
    B = rng.normal(size=(n_features, n_tasks))
    B /= np.linalg.norm(B, axis=0, keepdims=True)
    s = np.geomspace(lo, hi, n_tasks)
    X = rng.normal(size=(n_train + n_test, n_features))
    H = np.tanh(X @ W / np.sqrt(n_features))
    Y = s * (H @ A + 0.5 * np.sin(X @ B) + noise * rng.normal(size=(X.shape[0], n_tasks)))
    Xtr, Xte = _standardise(X[:n_train], X[n_train:])
    return MTLData(
        X_train=Xtr,
        X_test=Xte,
        Y_train=[Y[:n_train, t] for t in range(n_tasks)],
        Y_test=[Y[n_train:, t] for t in range(n_tasks)],
        kinds=["regression"] * n_tasks,
        names=[f"task{t}" for t in range(n_tasks)],
        units=[f"x{v:g}" for v in s],
    )


def load_diabetes_tasks(seed: int = 0, test_fraction: float = 0.3) -> MTLData:
    """scikit-learn's diabetes data (bundled, original units) as four tasks; split by ``seed``."""
    from sklearn.datasets import load_diabetes

    seed = check_int(seed, "seed", 0)
    test_fraction = finite_float(test_fraction, "test_fraction")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction: expected a number in (0, 1), got {test_fraction}")
    d = load_diabetes(scaled=False)
    X, y = d.data, d.target
    cols = list(d.feature_names)
    inputs = [cols.index(c) for c in ("age", "bp", "s1", "s2", "s3", "s4", "s6")]
    rng = np.random.default_rng(seed)
    perm = rng.permutation(X.shape[0])
    n_te = round(test_fraction * X.shape[0])
    te, tr = perm[:n_te], perm[n_te:]
    Xtr, Xte = _standardise(X[tr][:, inputs], X[te][:, inputs])
    targets = [
        y,
        X[:, cols.index("bmi")],
        X[:, cols.index("s5")],
        (X[:, cols.index("sex")] > 1.5).astype(int),
    ]
    return MTLData(
        X_train=Xtr,
        X_test=Xte,
        Y_train=[t[tr] for t in targets],
        Y_test=[t[te] for t in targets],
        kinds=["regression", "regression", "regression", "classification"],
        names=["progression", "bmi", "s5", "sex"],
        units=["score", "kg/m^2", "log mmol/L", "class"],
    )
