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
  breast_cancer, diabetes; loaded with its ``sklearn.datasets`` loaders), standardised and whitened.
  Voter types are groups of those items (wine: the 3 cultivars; the others: 4 communities found
  by ``sklearn.cluster.KMeans`` on the standardised rows) with fractions their sizes. In the
  ``"disagreement"`` regime a type prefers items like its own group: theta_g is the direction of its group's
  centroid from the overall mean (homophily; groups pull in opposite directions). In the
  ``"homogeneous"`` regime every type shares a latent consensus direction u (uniform on the
  sphere) and leans slightly to its group: theta_g = u + 0.25 c_g. Each seed bootstraps the items
  that estimate the centroids; agreement is measured on the original items.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_float, int_in_range, one_of, positive_int

from ._validation import check_cov, check_seed

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


def gaussian_items(n_batches: int, m: int, d: int, *, cov: object = None, seed: int = 0) -> np.ndarray:
    """Batches (n_batches, m, d) of i.i.d. N(0, cov) items (cov None: identity)."""
    n_batches = positive_int(n_batches, "n_batches")
    m = int_in_range(m, "m", 2)
    d = positive_int(d, "d")
    cov = check_cov(cov, d)
    z = np.random.default_rng(check_seed(seed)).standard_normal((n_batches, m, d))
    return z if cov is None else z @ np.linalg.cholesky(cov).T


def _norms(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.exp(0.5 * rng.standard_normal(n))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_instance(n_types: int, d: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Voters (n_types, d) with uniform directions and log-normal norms; fractions Dirichlet(1)."""
    n_types = positive_int(n_types, "n_types")
    d = int_in_range(d, "d", 2)
    rng = np.random.default_rng(check_seed(seed))
    u = _unit(rng.standard_normal((n_types, d)))
    return u * _norms(rng, n_types)[:, None], rng.dirichlet(np.ones(n_types))


def high_disagreement_instance(
    n_types: int, d: int, minority: float, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A majority bloc near a consensus u and one opposed minority (last row) of fraction ``minority``."""
    n_types = int_in_range(n_types, "n_types", 2)
    d = int_in_range(d, "d", 2)
    minority = finite_float(minority, "minority")
    if not (0.0 < minority < 0.5):
        raise ValueError(f"minority: expected a fraction in (0, 0.5), got {minority!r}")
    rng = np.random.default_rng(check_seed(seed))
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


def _relabel_by_first_seen(labels: np.ndarray) -> np.ndarray:
    """Cluster labels renumbered 0, 1, ... in the order their first member appears."""
    _, first = np.unique(labels, return_index=True)
    order = np.unique(labels)[np.argsort(first)]
    remap = np.empty(int(labels.max()) + 1, dtype=int)
    remap[order] = np.arange(len(order))
    return remap[labels]


@functools.cache
def _load(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Whitened items (N, d), group labels (N,), group names of a scikit-learn bundled data set."""
    from sklearn import datasets
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    if name == "wine":
        x, labels = datasets.load_wine(return_X_y=True)
        labels = labels.astype(int)
        names: tuple[str, ...] = ("cultivar_0", "cultivar_1", "cultivar_2")
    else:
        if name == "breast_cancer":
            x = datasets.load_breast_cancer(return_X_y=True)[0]
        else:
            x = datasets.load_diabetes(return_X_y=True, scaled=False)[0]
        z = (x - x.mean(0)) / x.std(0)
        with threadpool_limits(limits=1):  # a few hundred rows: threads only add start-up and contention
            km = KMeans(n_clusters=4, n_init=10, random_state=0).fit_predict(z)
        labels = _relabel_by_first_seen(km)
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
    one_of(name, "name", DATASETS)
    one_of(regime, "regime", REGIMES)
    seed = check_seed(seed)
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
