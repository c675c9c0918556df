"""Learners that defer: binary-relevance L2D and TBP trained by Recursive Policy Optimisation.

Both score every node's three actions with the same model class (linear in the features, ``s = x W + b``,
shape (m, n, 3)), trained full-batch by Adam on the same data: features X, labels Y and the expert's
correctness M on each training case (1 where the expert's label was right).

- :class:`BRL2D`: one Mozannar-Sontag surrogate per node (Mozannar and Sontag 2020, with a deferral
  cost): ``-sum_a r_v(a) log softmax(s_v)(a)`` with rewards ``r_v = (y_v, 1 - y_v, M_v - c_v) + c_v`` (shifted
  to be >= 0; the shift moves no argmax), whose minimiser puts ``softmax_a`` proportional to ``E[r_v(a) |
  x]``; decisions are the per-node argmax, coherent or not. :meth:`BRL2D.utility_estimates` turns the
  softmax back into expected utilities for the coherent projection.
- :class:`TBPRPO`: the same scores define TBP's coherent Gibbs distribution (:mod:`.tbp`); RPO maximises
  the exact expected utility ``E_P[sum_v u_v(a_v)]`` through the recursion; decoding by max-product
  (coherent by construction) or by the per-node argmax of TBP's marginals.
"""

from __future__ import annotations

import numpy as np
import torch

from paperworks.core.validate import finite_array, nonnegative_float, positive_float, positive_int

from .projection import coherent_projection
from .taxonomy import Taxonomy
from .tbp import tbp_expected_utility, tbp_marginals

__all__ = ["BRL2D", "TBPRPO"]


class _LinearScorer:
    def __init__(
        self,
        taxonomy: Taxonomy,
        *,
        epochs: int = 300,
        lr: float = 0.05,
        weight_decay: float = 1e-4,
        seed: int = 0,
    ):
        if not isinstance(taxonomy, Taxonomy):
            raise TypeError(f"taxonomy: expected a Taxonomy, got {type(taxonomy).__name__}")
        self.taxonomy = taxonomy
        self.epochs = positive_int(epochs, "epochs")
        self.lr = positive_float(lr, "lr")
        self.weight_decay = nonnegative_float(weight_decay, "weight_decay")
        self.seed = int(seed)
        self.W_: torch.Tensor | None = None
        self.b_: torch.Tensor | None = None

    def _data(self, X: object, Y: object, M: object, cost: object) -> tuple[torch.Tensor, ...]:
        X = finite_array(X, "X", ndim=2)
        n = self.taxonomy.n
        Y = self.taxonomy.check_labels(np.asarray(Y), "Y")
        M = np.asarray(M)
        if M.shape != Y.shape or not np.isin(M, (0, 1)).all():
            raise ValueError(f"M: expected the expert's 0/1 correctness of shape {Y.shape}, got {M.shape}")
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y: expected {X.shape[0]} rows (one per row of X), got {Y.shape[0]}")
        cost = finite_array(cost, "cost", shape=(n,))
        if (cost < 0).any():
            raise ValueError("cost: deferral costs expected >= 0")
        U = np.stack([Y, 1 - Y, M - cost[None]], axis=-1).astype(np.float32)
        self.cost_ = cost
        self.expert_rate_ = M.mean(0)
        return torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(U, dtype=torch.float32)

    def _scores(self, X: torch.Tensor) -> torch.Tensor:
        return torch.einsum("md,dna->mna", X, self.W_) + self.b_

    def scores(self, X: object) -> np.ndarray:
        """Node scores (m, n, 3) of features X (m, d)."""
        if self.W_ is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit(X, Y, M, cost) first")
        X = finite_array(X, "X", shape=(None, self.W_.shape[0]))
        with torch.inference_mode():
            return self._scores(torch.as_tensor(X, dtype=torch.float32)).double().numpy()

    def _fit(self, X: torch.Tensor, loss_fn) -> None:
        g = torch.Generator().manual_seed(self.seed)
        d, n = X.shape[1], self.taxonomy.n
        self.W_ = (torch.randn(d, n, 3, generator=g, dtype=torch.float32) * 0.01).requires_grad_(True)
        self.b_ = torch.zeros(n, 3, dtype=torch.float32, requires_grad=True)
        opt = torch.optim.Adam([self.W_, self.b_], lr=self.lr, weight_decay=self.weight_decay)
        self.losses_ = []
        for _ in range(self.epochs):
            opt.zero_grad()
            loss = loss_fn(self._scores(X))
            loss.backward()
            opt.step()
            self.losses_.append(float(loss.detach()))
        self.W_ = self.W_.detach()
        self.b_ = self.b_.detach()


class BRL2D(_LinearScorer):
    """Binary-relevance L2D: a per-node Mozannar-Sontag surrogate with a deferral cost (module docstring)."""

    def fit(self, X: object, Y: object, M: object, cost: object) -> BRL2D:
        Xt, U = self._data(X, Y, M, cost)
        shift = torch.as_tensor(self.cost_, dtype=torch.float32)[None, :, None]
        R = U + shift  # >= 0

        def loss(s: torch.Tensor) -> torch.Tensor:
            return -(R * torch.log_softmax(s, dim=-1)).sum(-1).sum(-1).mean()

        self._fit(Xt, loss)
        return self

    def predict_actions(self, X: object) -> np.ndarray:
        """Per-node argmax (m, n): the binary-relevance decisions."""
        return np.argmax(self.scores(X), axis=-1)

    def utility_estimates(self, X: object) -> np.ndarray:
        """Expected utilities (m, n, 3) implied by the surrogate: ``softmax_a * (1 + 2 c + e_bar) - c``,
        where ``e_bar`` is the expert's training accuracy per node (the softmax estimates
        ``E[r(a)] / sum_a E[r(a)]`` and ``sum_a E[r(a)] = 1 + 2 c + e``)."""
        s = self.scores(X)
        q = np.exp(s - s.max(-1, keepdims=True))
        q /= q.sum(-1, keepdims=True)
        total = 1 + 2 * self.cost_ + self.expert_rate_
        return q * total[None, :, None] - self.cost_[None, :, None]

    def predict_projected(self, X: object) -> np.ndarray:
        """The coherent projection (m, n) of the utility estimates."""
        return coherent_projection(self.taxonomy, self.utility_estimates(X))


class TBPRPO(_LinearScorer):
    """TBP's coherent Gibbs policy trained by RPO on the exact expected utility (module docstring)."""

    def __init__(self, taxonomy: Taxonomy, *, temperature: float = 1.0, **kw: object):
        super().__init__(taxonomy, **kw)  # type: ignore[arg-type]
        self.temperature = positive_float(temperature, "temperature")

    def fit(self, X: object, Y: object, M: object, cost: object) -> TBPRPO:
        Xt, U = self._data(X, Y, M, cost)

        def loss(s: torch.Tensor) -> torch.Tensor:
            return -tbp_expected_utility(self.taxonomy, s, U, self.temperature).mean()

        self._fit(Xt, loss)
        return self

    def predict_actions(self, X: object) -> np.ndarray:
        """Max-product decoding (m, n): the coherent joint action of the largest total score."""
        return coherent_projection(self.taxonomy, self.scores(X))

    def marginals(self, X: object) -> np.ndarray:
        """TBP's marginals P(a_v = a) (m, n, 3)."""
        s = torch.as_tensor(self.scores(X))
        return tbp_marginals(self.taxonomy, s, self.temperature).numpy()

    def predict_marginal_actions(self, X: object) -> np.ndarray:
        """Per-node argmax of the marginals (m, n): not coherent by construction."""
        return np.argmax(self.marginals(X), axis=-1)
