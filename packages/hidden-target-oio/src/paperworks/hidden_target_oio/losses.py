"""Per-round losses of OIO and their subgradients, computable from censored (lost-sales) feedback.

``NewsvendorLoss(h, b, mu)`` is, for an order-up-to level ``y`` (n,) and demand ``d`` (n,),

    l_t(y) = sum_i h_i (y_i - d_i)_+ + b_i (d_i - y_i)_+  +  (mu / 2) ||y||^2

(holding cost ``h``, lost-sale penalty ``b``; ``mu > 0`` adds a quadratic capital cost and makes the loss
``mu``-strongly convex: the paper's strongly convex case, in our reading). A subgradient at ``y`` needs
only whether each product sold out, ``sales_i = min(y_i, d_i) < y_i`` or not, so it is available under
lost sales (censored demand): ``g_i = h_i`` when stock was left, ``-b_i`` when the product sold out, plus
``mu y_i``. Shapes: ``y``, ``d`` of ``(n,)`` or ``(R, n)``; values ``()`` or ``(R,)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NewsvendorLoss"]


def _vec(x: object, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(x, dtype=float))
    if arr.ndim != 1 or not np.isfinite(arr).all():
        raise ValueError(f"{name}: expected a finite number or a 1-d array, got {x!r}")
    return arr


@dataclass(frozen=True)
class NewsvendorLoss:
    """Newsvendor loss with holding cost ``h``, lost-sale cost ``b`` and optional quadratic term ``mu``.

    ``h``, ``b``: positive numbers or per-product arrays; ``mu >= 0``. The loss is ``G``-Lipschitz on a
    set of radius ``r`` with ``G = ||max(h, b)||_2 + mu r`` (:meth:`lipschitz`).
    """

    h: float | tuple[float, ...] = 1.0
    b: float | tuple[float, ...] = 3.0
    mu: float = 0.0

    def __post_init__(self) -> None:
        for name in ("h", "b"):
            v = _vec(getattr(self, name), name)
            if (v <= 0).any():
                raise ValueError(f"{name}: expected positive costs, got {getattr(self, name)!r}")
            object.__setattr__(self, name, float(v[0]) if v.size == 1 else tuple(float(x) for x in v))
        mu = float(self.mu)
        if not np.isfinite(mu) or mu < 0:
            raise ValueError(f"mu: expected a finite number >= 0, got {self.mu!r}")
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "_h", _vec(self.h, "h"))
        object.__setattr__(self, "_b", _vec(self.b, "b"))

    @property
    def h_arr(self) -> np.ndarray:
        return self._h

    @property
    def b_arr(self) -> np.ndarray:
        return self._b

    @property
    def critical_ratio(self) -> np.ndarray:
        """``b / (h + b)``: the demand quantile that minimises the expected newsvendor loss (mu = 0)."""
        return self.b_arr / (self.h_arr + self.b_arr)

    def value(self, y: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``l_t(y)`` summed over products: shape ``y.shape[:-1]``."""
        e = y - d
        out = (np.maximum(e, 0.0) * self._h - np.minimum(e, 0.0) * self._b).sum(axis=-1)
        if self.mu:
            out = out + 0.5 * self.mu * (y * y).sum(axis=-1)
        return out

    def subgradient(self, y: np.ndarray, d: np.ndarray) -> np.ndarray:
        """A subgradient of ``l_t`` at ``y`` (shape of ``y``); at ``y_i = d_i`` it takes ``-b_i``."""
        return self.subgradient_from_sales(y, np.minimum(y, d))

    def subgradient_from_sales(self, y: np.ndarray, sales: np.ndarray) -> np.ndarray:
        """The same subgradient from censored feedback ``sales = min(y, d)`` (what a store observes):
        ``h_i`` where stock was left (``sales_i < y_i``), ``-b_i`` where the product sold out."""
        g = np.where(sales < y, self._h, -self._b)
        if self.mu:
            g = g + self.mu * y
        return g

    def lipschitz(self, n: int, radius: float) -> float:
        """``G``: a bound on ``||g||_2`` over ``n`` products and levels with ``||y||_2 <= radius``."""
        hb = np.broadcast_to(np.maximum(self.h_arr, self.b_arr), (n,))
        return float(np.linalg.norm(hb) + self.mu * radius)
