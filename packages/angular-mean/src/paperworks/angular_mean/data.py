"""Data: Gaussian item batches, synthetic voter populations, and preference data sets.

Generative models (what is latent, what is observed):

* Items: i.i.d. N(0, cov) vectors, observed in batches (B, m, d).
* :func:`random_instance`: n voter types with directions uniform on the sphere, norms
  log-normal(0, 0.5) (a voter's vector is observed with an arbitrary scale), fractions
  Dirichlet(1).
* :func:`high_disagreement_instance`: a majority bloc of ``n_types - 1`` types within 25 degrees of
  a latent consensus direction u (fractions Dirichlet(1) times 1 - minority) and one minority type
  of fraction ``minority`` at an angle uniform in [150, 180) degrees from u; norms as above.
* :func:`preference_dataset`: items are the rows of a data set bundled with scikit-learn (wine,
  breast_cancer, diabetes; read from the CSV files in its wheel), standardised and whitened.
  Voter types are groups of those items (wine: the 3 cultivars; the others: 4 k-means
  communities of the standardised rows) with fractions their sizes. In the ``"disagreement"``
  regime a type prefers items like its own group: theta_g is the direction of its group's
  centroid from the overall mean (homophily; groups pull in opposite directions). In the
  ``"homogeneous"`` regime every type shares a latent consensus direction u (uniform on the
  sphere) and leans slightly to its group: theta_g = u + 0.25 c_g. Each seed bootstraps the items
  that estimate the centroids; agreement is measured on the original items.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._validation import check_cov

__all__ = [
    "DATASETS",
    "REGIMES",
    "PreferenceData",
    "gaussian_items",
    "high_disagreement_instance",
    "preference_dataset",
    "random_instance",
]

DATASETS = ("wine", "breast_cancer", "diabetes")
REGIMES = ("homogeneous", "disagreement")


def _positive_int(x: object, name: str, minimum: int = 1) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer) or x < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {x!r}")
    return int(x)


def gaussian_items(n_batches: int, m: int, d: int, *, cov: object = None, seed: int = 0) -> np.ndarray:
    """Batches (n_batches, m, d) of i.i.d. N(0, cov) items (cov None: identity)."""
    n_batches = _positive_int(n_batches, "n_batches")
    m = _positive_int(m, "m", 2)
    d = _positive_int(d, "d")
    cov = check_cov(cov, d)
    z = np.random.default_rng(seed).standard_normal((n_batches, m, d))
    return z if cov is None else z @ np.linalg.cholesky(cov).T


def _norms(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.exp(0.5 * rng.standard_normal(n))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_instance(n_types: int, d: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Voters (n_types, d) with uniform directions and log-normal norms; fractions Dirichlet(1)."""
    n_types = _positive_int(n_types, "n_types")
    d = _positive_int(d, "d", 2)
    rng = np.random.default_rng(seed)
    u = _unit(rng.standard_normal((n_types, d)))
    return u * _norms(rng, n_types)[:, None], rng.dirichlet(np.ones(n_types))


def high_disagreement_instance(
    n_types: int, d: int, minority: float, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A majority bloc near a consensus u and one opposed minority (last row) of fraction ``minority``."""
    n_types = _positive_int(n_types, "n_types", 2)
    d = _positive_int(d, "d", 2)
    if not (0.0 < minority < 0.5):
        raise ValueError(f"minority: expected a fraction in (0, 0.5), got {minority!r}")
    rng = np.random.default_rng(seed)
    u = _unit(rng.standard_normal(d))

    def at_angle(angle: float) -> np.ndarray:
        w = rng.standard_normal(d)
        w = _unit(w - (w @ u) * u)
        return np.cos(angle) * u + np.sin(angle) * w

    bloc = [at_angle(np.deg2rad(rng.uniform(0.0, 25.0))) for _ in range(n_types - 1)]
    opp = at_angle(np.deg2rad(rng.uniform(150.0, 180.0)))
    thetas = np.vstack([*bloc, opp]) * _norms(rng, n_types)[:, None]
    alpha = np.append(rng.dirichlet(np.ones(n_types - 1)) * (1.0 - minority), minority)
    return thetas, alpha


@dataclass(frozen=True)
class PreferenceData:
    """Voter types of a preference data set: items (N, d), thetas (K, d), alpha (K,), group names."""

    name: str
    regime: str
    items: np.ndarray
    thetas: np.ndarray
    alpha: np.ndarray
    groups: tuple[str, ...]


def _sklearn_data_file(filename: str) -> Path:
    """Path of a data file bundled in scikit-learn's wheel, found without importing scikit-learn.

    Importing ``sklearn.datasets`` costs seconds; the bundled CSV files are all we need.
    """
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "preference_dataset needs scikit-learn's bundled data: pip install scikit-learn"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / filename
    if not path.is_file():
        raise FileNotFoundError(f"scikit-learn's bundled data file {filename!r} was not found at {path}")
    return path


def _kmeans(z: np.ndarray, k: int, seed: int = 0, n_iter: int = 100) -> np.ndarray:
    """Lloyd's k-means with k-means++ initialisation; returns labels (N,) relabelled by first seen."""
    rng = np.random.default_rng(seed)
    centres = [z[rng.integers(len(z))]]
    for _ in range(1, k):
        d2 = np.min(((z[:, None, :] - np.asarray(centres)[None]) ** 2).sum(-1), axis=1)
        centres.append(z[rng.choice(len(z), p=d2 / d2.sum())])
    c = np.asarray(centres)
    labels = np.zeros(len(z), dtype=int)
    for _ in range(n_iter):
        new = np.argmin(((z[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        c = np.vstack([z[labels == g].mean(0) if np.any(labels == g) else c[g] for g in range(k)])
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(first)
    remap = np.empty(k, dtype=int)
    remap[np.unique(labels)[order]] = np.arange(len(order))
    return remap[labels]


@functools.cache
def _load(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Whitened items (N, d), group labels (N,), group names of a bundled data set."""
    if name == "wine":
        raw = np.loadtxt(_sklearn_data_file("wine_data.csv"), delimiter=",", skiprows=1)
        x, labels = raw[:, :-1], raw[:, -1].astype(int)
        names: tuple[str, ...] = ("cultivar_0", "cultivar_1", "cultivar_2")
    else:
        if name == "breast_cancer":
            x = np.loadtxt(_sklearn_data_file("breast_cancer.csv"), delimiter=",", skiprows=1)[:, :-1]
        else:
            x = np.loadtxt(_sklearn_data_file("diabetes_data_raw.csv.gz"))
        labels = _kmeans((x - x.mean(0)) / x.std(0), 4, seed=0)
        names = tuple(f"community_{g}" for g in range(4))
    x = (x - x.mean(0)) / x.std(0)
    evals, evecs = np.linalg.eigh(np.cov(x, rowvar=False))
    evals = np.maximum(evals, 1e-10 * evals.max())
    x = x @ evecs @ np.diag(evals**-0.5) @ evecs.T  # ZCA whitening: items close to isotropic
    x.setflags(write=False)
    labels.setflags(write=False)
    return x, labels, names


def preference_dataset(name: str, regime: str, *, seed: int = 0) -> PreferenceData:
    """Voter types built from a scikit-learn bundled data set (see the module docstring)."""
    if name not in DATASETS:
        raise ValueError(f"name: unknown data set {name!r}; expected one of {list(DATASETS)}")
    if regime not in REGIMES:
        raise ValueError(f"regime: unknown regime {regime!r}; expected one of {list(REGIMES)}")
    x, labels, names = _load(name)
    rng = np.random.default_rng(seed)
    boot = rng.integers(0, len(x), size=len(x))
    xb, lb = x[boot], labels[boot]
    groups = np.unique(labels)
    centre = xb.mean(0)
    c = _unit(np.vstack([xb[lb == g].mean(0) - centre for g in groups]))
    alpha = np.array([np.mean(lb == g) for g in groups])
    if regime == "disagreement":
        thetas = c
    else:
        u = _unit(rng.standard_normal(x.shape[1]))
        thetas = _unit(u + 0.25 * c)
    return PreferenceData(name, regime, x, thetas, alpha / alpha.sum(), tuple(names[g] for g in groups))
