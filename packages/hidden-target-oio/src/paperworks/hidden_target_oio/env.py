"""A gymnasium environment for OIO (extra ``gym``): the store's side of the protocol.

``InventoryEnv(capacity, demand, loss, horizon)``: the observation is the carried inventory ``x_t``
(``Box(0, hi)``), the action an order-up-to level (``Box(lo, hi)`` of the capacity set's bounding box).
``step(action)`` implements the feasible level closest to the action, ``y_t = Proj_{F_t}(action)`` (an
action outside ``Y ∩ {y >= x_t}`` is not an error: stock cannot be destroyed, capacity cannot be
exceeded), draws nothing new (the episode's demand path is drawn at ``reset`` from ``demand.sample`` with
the environment's ``np_random``), and returns ``reward = -l_t(y_t)``, ``x_{t+1} = (y_t - d_t)_+`` and an
``info`` dict with ``order_up_to`` (``y_t``), ``sales`` (``min(y_t, d_t)``: censored demand),
``subgradient`` (of ``l_t`` at ``y_t``, from the sales) and ``loss``. Episodes are truncated at ``horizon``.
The policies of :mod:`.policies` plug in directly: ``y = policy.act(obs)``, then
``policy.update(info["subgradient"])``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from paperworks.core.validate import positive_int

from .capacity import CapacitySet
from .demand import DemandProcess, validate_demand
from .losses import NewsvendorLoss

__all__ = ["InventoryEnv"]


class InventoryEnv(gym.Env):
    """OIO as a gymnasium ``Env`` with ``Box`` spaces (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's class attribute)

    def __init__(
        self,
        capacity: CapacitySet,
        demand: DemandProcess,
        loss: NewsvendorLoss | None = None,
        horizon: int = 1000,
        x0: object = None,
    ) -> None:
        if not isinstance(capacity, CapacitySet):
            raise TypeError(f"capacity: expected a CapacitySet, got {type(capacity).__name__}")
        if not hasattr(demand, "sample") or getattr(demand, "n", None) != capacity.n:
            raise ValueError(
                f"demand: expected a demand process with sample(T, rng) over {capacity.n} products"
            )
        self.capacity, self.demand = capacity, demand
        self.loss = loss if loss is not None else NewsvendorLoss()
        self.horizon = positive_int(horizon, "horizon")
        n = capacity.n
        x0 = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float)
        if x0.shape != (n,) or not np.isfinite(x0).all() or (x0 < 0).any() or not capacity.contains(x0):
            raise ValueError("x0: the initial state is outside the capacity set Y")
        self.x0 = x0
        self.observation_space = spaces.Box(low=0.0, high=capacity.hi.copy(), shape=(n,), dtype=np.float64)
        self.action_space = spaces.Box(
            low=capacity.lo.copy(), high=capacity.hi.copy(), shape=(n,), dtype=np.float64
        )
        self._x = x0.copy()
        self._t = 0
        self._path: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._path = validate_demand(self.demand.sample(self.horizon, self.np_random), self.capacity.n)
        self._x = self.x0.copy()
        self._t = 0
        return self._x.copy(), {"t": 0}

    def step(self, action):
        if self._path is None:
            raise RuntimeError("step() before reset()")
        a = np.asarray(action, dtype=float)
        if a.shape != (self.capacity.n,) or not np.isfinite(a).all():
            raise ValueError(f"action: expected {self.capacity.n} finite order-up-to levels, got {a!r}")
        y = self.capacity.project(a, lower=self._x)
        y = np.maximum(y, self._x)  # exact feasibility against rounding
        d = self._path[self._t]
        sales = np.minimum(y, d)
        loss = float(self.loss.value(y, d))
        g = self.loss.subgradient_from_sales(y, sales)
        self._x = np.clip(y - d, 0.0, self.capacity.hi)
        self._t += 1
        info = {"t": self._t, "order_up_to": y, "sales": sales, "subgradient": g, "loss": loss}
        return self._x.copy(), -loss, False, self._t >= self.horizon, info
