"""Generated hierarchical multi-label data with controlled experts.

Generative model (what is latent, what is observed):

- observed features ``x ~ N(0, I_d)``;
- latent scores ``z_v = w_v . x + b_v + eps_v`` with ``eps_v ~ N(0, noise^2)`` (aleatoric: the best model
  cannot be certain) and weights ``w_v ~ N(0, I_d / d) * signal``;
- labels (observed in training): ``y_v = 1[z_v > 0]`` at a root and ``y_v = y_parent * 1[z_v > 0]`` below, so
  every label set is coherent; the true marginal is ``P(y_v = 1 | x) = prod_{u on the path to v}
  Phi((w_u . x + b_u) / noise)`` (:meth:`HierarchicalLabelModel.marginals`);
- the expert is right at node v with probability ``accuracy[v]`` independently (``M[i, v] = 1``); deferring
  node v costs ``cost[v]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from paperworks.core.validate import as_generator, finite_array, positive_float, positive_int

from .taxonomy import Taxonomy

__all__ = ["ControlledExpert", "HierarchicalLabelModel", "realized_utilities"]


@dataclass(frozen=True)
class ControlledExpert:
    """Per-node accuracy (n,) in [0, 1] and deferral cost (n,) >= 0."""

    accuracy: np.ndarray
    cost: np.ndarray

    def __post_init__(self) -> None:
        acc = finite_array(self.accuracy, "accuracy", ndim=1)
        cost = finite_array(self.cost, "cost", shape=(acc.size,))
        if ((acc < 0) | (acc > 1)).any():
            raise ValueError("accuracy: expert accuracies expected in [0, 1]")
        if (cost < 0).any():
            raise ValueError("cost: deferral costs expected >= 0")
        object.__setattr__(self, "accuracy", acc)
        object.__setattr__(self, "cost", cost)

    @classmethod
    def specialist(
        cls, taxonomy: Taxonomy, rng: object = None, cost: tuple[float, float] = (0.05, 0.2)
    ) -> ControlledExpert:
        """A reader who is reliable on one random subtree of each root (accuracy 0.95-0.99) and average
        elsewhere (0.7-0.85), with costs uniform in ``cost``."""
        rng = as_generator(rng)
        n = taxonomy.n
        good = np.zeros(n, bool)
        for r in taxonomy.roots:
            kids = taxonomy.children(int(r))
            pick = int(rng.choice(kids)) if kids.size else int(r)
            good |= taxonomy.ancestor[pick] | (np.arange(n) == pick)
        acc = np.where(good, rng.uniform(0.95, 0.99, n), rng.uniform(0.7, 0.85, n))
        return cls(acc, rng.uniform(cost[0], cost[1], n))

    def sample_correct(self, m: int, rng: object = None) -> np.ndarray:
        """Whether the expert is right (m, n) on m cases."""
        return (as_generator(rng).random((m, self.accuracy.size)) < self.accuracy).astype(np.int8)


class HierarchicalLabelModel:
    """The label model of the module docstring on ``taxonomy`` with ``d`` features."""

    def __init__(
        self, taxonomy: Taxonomy, d: int = 10, *, signal: float = 2.5, noise: float = 1.0, rng: object = None
    ):
        self.taxonomy = taxonomy
        self.d = positive_int(d, "d")
        self.noise = positive_float(noise, "noise")
        rng = as_generator(rng)
        self.W = rng.normal(0, 1 / np.sqrt(d), size=(d, taxonomy.n)) * positive_float(signal, "signal")
        # offsets keep deep labels from vanishing: roots lean positive, children near even odds
        self.b = np.where(
            taxonomy.parent < 0, rng.uniform(0.3, 1.2, taxonomy.n), rng.uniform(-0.4, 0.6, taxonomy.n)
        )

    def sample(self, m: int, rng: object = None) -> tuple[np.ndarray, np.ndarray]:
        """Features X (m, d) and coherent labels Y (m, n)."""
        rng = as_generator(rng)
        X = rng.normal(size=(m, self.d))
        z = X @ self.W + self.b + rng.normal(0, self.noise, size=(m, self.taxonomy.n))
        Y = (z > 0).astype(np.int8)
        for nodes in self.taxonomy.levels[1:]:
            Y[:, nodes] &= Y[:, self.taxonomy.parent[nodes]]
        return X, Y

    def marginals(self, X: np.ndarray) -> np.ndarray:
        """The true P(y_v = 1 | x) (m, n): the product of Phi along each path."""
        q = ndtr((X @ self.W + self.b) / self.noise)
        P = q.copy()
        for nodes in self.taxonomy.levels[1:]:
            P[:, nodes] *= P[:, self.taxonomy.parent[nodes]]
        return P


def realized_utilities(Y: np.ndarray, M: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """The utility of each action on each case (m, n, 3) given the labels and the expert's correctness:
    ``(y_v, 1 - y_v, M_v - c_v)``."""
    return np.stack([Y, 1 - Y, M - cost[None]], axis=-1).astype(float)
