"""The hidden-target OIO policy, its hidden learners, and the baselines.

Protocol (one round ``t``; state ``x_t``, capacity set ``Y``, ``F_t = Y ∩ {y >= x_t}``)::

    y_t = policy.act(x_t)          # order up to y_t (feasible: y_t in F_t)
    g_t = loss.subgradient(y_t, d_t)   # from censored sales
    policy.update(g_t)
    x_{t+1} = (y_t - d_t)_+        # lost sales

Policies (all batch-aware: ``(n,)`` vectors or ``(R, n)`` rows of independent copies, each row with its
own step size when ``step`` is an array of ``R`` values):

- :class:`HiddenTargetPolicy` (the paper's principle): a hidden learner keeps a target ``z_t`` in ``Y``;
  the policy implements ``y_t = Proj_{F_t}(z_t)`` and feeds the learner the subgradient taken at the
  *implemented* point: ``z_{t+1} = Proj_Y(z_t - η_t g_t)``. ``r_t = ||z_t - y_t|| = dist(z_t, F_t)`` is the
  queue of the analysis (:mod:`.queue`).
- hidden learners (:class:`OGD`): static steps ``η = D / (G sqrt(T (1 + 2/p)))`` (:func:`static_step`),
  ``η_t = 1/(μ t)`` for ``μ``-strongly convex losses (:class:`StronglyConvexStep`), and the path-length
  tuned step ``η = sqrt((D² + 2 D P_T) / (T (1 + 2/p))) / G`` (:func:`path_length_step`).
- :class:`MaxCOSD` (Hihat et al., arXiv 2307.06048, our re-implementation from the paper's description):
  the order-up-to level is held fixed during a cycle while subgradients accumulate; when the candidate
  ``Proj_Y(y_cycle - γ Σ_cycle g)`` becomes feasible (``>= x``) it is implemented and a new cycle starts.
- :class:`DirectOGD`: OGD on the implemented state, ``y_{t+1} = Proj_{F_{t+1}}(y_t - η g_t)``.
- :class:`FixedLevel`: order up to a fixed level (the best fixed level in hindsight as a policy).
"""

from __future__ import annotations

import abc
import math

import numpy as np

from paperworks.core.validate import finite_float, fraction, positive_float, positive_int

from .capacity import CapacitySet, as_rows

__all__ = [
    "ConstantStep",
    "DirectOGD",
    "FixedLevel",
    "HiddenTargetPolicy",
    "MaxCOSD",
    "OGD",
    "Policy",
    "StronglyConvexStep",
    "path_length_step",
    "static_step",
]


def _check_p(p: object) -> float:
    v = fraction(p, "p")
    if v == 0.0:
        raise ValueError(
            "p: the common-demand probability is 0: the implemented level can then never move down to the "
            "target on a coupled capacity set and no regret bound holds; pass p in (0, 1]"
        )
    return v


def static_step(diameter: float, lipschitz: float, horizon: int, p: float = 1.0) -> float:
    """Static step of the hidden target: ``D / (G sqrt(T (1 + 2/p)))`` (our balancing of the bound).

    The regret splits into OGD's ``D²/(2η) + η G² T / 2`` and the feasibility cost ``G Σ r_t``, where the
    queue ``r_t`` gets arrivals ``<= η G`` and service on common-demand rounds (probability ``p``), so
    ``Σ r_t ≲ η G T / p``. Balancing gives this step and a regret of order ``D G sqrt(T / p)``.
    """
    D = positive_float(diameter, "diameter")
    G = positive_float(lipschitz, "lipschitz")
    T = positive_int(horizon, "horizon")
    return D / (G * math.sqrt(T * (1.0 + 2.0 / _check_p(p))))


def path_length_step(
    diameter: float, lipschitz: float, horizon: int, path_length: float, p: float = 1.0
) -> float:
    """Path-length tuned step for dynamic regret: ``sqrt((D² + 2 D P_T) / (T (1 + 2/p))) / G``."""
    D = positive_float(diameter, "diameter")
    G = positive_float(lipschitz, "lipschitz")
    T = positive_int(horizon, "horizon")
    P = finite_float(path_length, "path_length")
    if P < 0:
        raise ValueError(f"path_length: expected a number >= 0, got {P}")
    return math.sqrt((D * D + 2.0 * D * P) / (T * (1.0 + 2.0 / _check_p(p)))) / G


class ConstantStep:
    """``η_t = eta`` for every ``t``; ``eta``: a positive number or an ``(R,)`` array (one per row)."""

    def __init__(self, eta: object) -> None:
        arr = np.atleast_1d(np.asarray(eta, dtype=float))
        if arr.ndim != 1 or arr.size == 0 or not np.isfinite(arr).all() or (arr <= 0).any():
            raise ValueError(f"eta: expected positive finite step sizes, got {eta!r}")
        self.eta = arr

    def __call__(self, t: int) -> np.ndarray:
        return self.eta

    @property
    def rows(self) -> int:
        return self.eta.size


class StronglyConvexStep:
    """``η_t = 1 / (mu t)`` (Hazan et al. 2007), for ``mu``-strongly convex losses."""

    def __init__(self, mu: object) -> None:
        arr = np.atleast_1d(np.asarray(mu, dtype=float))
        if arr.ndim != 1 or arr.size == 0 or not np.isfinite(arr).all() or (arr <= 0).any():
            raise ValueError(f"mu: expected a positive strong-convexity modulus, got {mu!r}")
        self.mu = arr

    def __call__(self, t: int) -> np.ndarray:
        return 1.0 / (self.mu * t)

    @property
    def rows(self) -> int:
        return self.mu.size


def _as_step(step: object) -> ConstantStep | StronglyConvexStep:
    if isinstance(step, ConstantStep | StronglyConvexStep):
        return step
    if isinstance(step, int | float | np.ndarray | list | tuple) and not isinstance(step, bool):
        return ConstantStep(step)
    raise TypeError(f"step: expected a number, an array, ConstantStep or StronglyConvexStep, got {step!r}")


def _rows_for(capacity: CapacitySet, point: object, step, name: str) -> tuple[np.ndarray, bool]:
    rows, single = as_rows(point, capacity.n, name)
    R = max(rows.shape[0], step.rows)
    if rows.shape[0] not in (1, R) or step.rows not in (1, R):
        raise ValueError(f"{name}, step: {rows.shape[0]} rows and {step.rows} step sizes do not match")
    rows = np.broadcast_to(rows, (R, capacity.n)).copy()
    return rows, single and R == 1


class OGD:
    """Projected online gradient descent on ``Y``, ``z_{t+1} = Proj_Y(z_t - η_t g_t)``: the hidden learner."""

    def __init__(self, capacity: CapacitySet, step: object, z0: object = None) -> None:
        self.capacity = capacity
        self.step = _as_step(step)
        z0 = capacity.center() if z0 is None else z0
        z, self._single = _rows_for(capacity, z0, self.step, "z0")
        if not capacity.contains(z).all():
            raise ValueError("z0: expected a point of the capacity set")
        self.z = z
        self.t = 0

    def update_rows(self, g: np.ndarray) -> np.ndarray:
        self.t += 1
        eta = self.step(self.t)[:, None]
        self.z = self.capacity._project_rows(self.z - eta * g, self._lo, self.z)
        return self.z

    @property
    def _lo(self) -> np.ndarray:
        lo = getattr(self, "_lo_cache", None)
        if lo is None or lo.shape != self.z.shape:
            lo = np.broadcast_to(self.capacity.lo, self.z.shape).copy()
            self._lo_cache = lo
        return lo


class Policy(abc.ABC):
    """Base: ``act(x) -> y`` (feasible order-up-to level) and ``update(g)`` (subgradient at ``y``)."""

    capacity: CapacitySet
    _single: bool
    y: np.ndarray | None = None

    @property
    @abc.abstractmethod
    def rows(self) -> int:
        """Number of independent rows (copies) the policy runs."""

    def act(self, x: object) -> np.ndarray:
        """Order-up-to level for state ``x`` (shape ``(n,)`` or ``(R, n)``); always in ``Y ∩ {y >= x}``."""
        rows, single = as_rows(x, self.capacity.n, "x")
        if (rows < 0).any():
            raise ValueError("x: expected non-negative inventory levels")
        if rows.shape[0] == 1 and self.rows > 1:
            rows = np.broadcast_to(rows, (self.rows, self.capacity.n)).copy()
        if rows.shape[0] != self.rows:
            raise ValueError(f"x: expected {self.rows} rows, got {rows.shape[0]}")
        y = self.act_rows(rows)
        return y[0].copy() if (single and self.rows == 1) else y.copy()

    def update(self, g: object) -> None:
        """Feed the subgradient of this round's loss at the played level (shape of the played ``y``)."""
        if self.y is None:
            raise ValueError("g: update() before act(): no order-up-to level was played yet")
        arr = np.asarray(g, dtype=float)
        expected = self.y.shape if self.rows > 1 or arr.ndim == 2 else (self.capacity.n,)
        if arr.shape != expected:
            raise ValueError(f"g: expected a subgradient of shape {expected}, got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError("g: expected finite subgradient values")
        self.update_rows(arr.reshape(self.y.shape))

    @abc.abstractmethod
    def act_rows(self, x: np.ndarray) -> np.ndarray:
        """Levels for states ``x`` (R, n), unchecked (the fast path used by :func:`~.simulate.simulate`)."""

    @abc.abstractmethod
    def update_rows(self, g: np.ndarray) -> None:
        """Feed subgradients ``g`` (R, n), unchecked."""

    def _lower(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(self.capacity.lo, x)


class HiddenTargetPolicy(Policy):
    """Implement the projection of a hidden target onto the feasible order-up-to set.

    ``learner``: an :class:`OGD` on the same capacity set (its ``z`` is the hidden target). After each
    :meth:`act`, ``target`` holds ``z_t`` and ``distance`` the queue ``r_t = ||z_t - y_t||`` (per row).
    """

    def __init__(self, capacity: CapacitySet, learner: OGD) -> None:
        if learner.capacity is not capacity:
            raise ValueError("learner: expected an OGD on the same capacity set object")
        self.capacity, self.learner = capacity, learner
        self._single = learner._single
        self.y = None
        self.target = learner.z.copy()
        self.distance = np.zeros(learner.z.shape[0])

    @property
    def rows(self) -> int:
        return self.learner.z.shape[0]

    def act_rows(self, x):
        z = self.learner.z
        start = self.y if self.y is not None else None
        y = self.capacity._project_rows(z, self._lower(x), start)
        self.y, self.target = y, z
        self.distance = np.sqrt(((z - y) ** 2).sum(axis=1))
        return y

    def update_rows(self, g):
        self.learner.update_rows(g)


class MaxCOSD(Policy):
    """MaxCOSD (Hihat, Gaïffas, Garrigos & Bussy 2023), re-implemented from the paper's description.

    Cycles: the level ``y`` of the current cycle is played while the cycle's subgradients accumulate in
    ``G``; after each round the candidate ``ŷ = Proj_Y(y - γ G)`` is formed, and at the next round it is
    implemented (and a new cycle starts, ``G = 0``) if it is feasible, ``ŷ >= x``; otherwise the cycle goes
    on with the same level (feasible under lost sales since ``x <= y``). ``step``: ``γ`` (a number or one
    per row). ``y0``: the first level (projected onto ``F_1``).
    """

    def __init__(self, capacity: CapacitySet, step: object, y0: object = None) -> None:
        self.capacity = capacity
        self.step = _as_step(step)
        y0 = capacity.center() if y0 is None else y0
        level, self._single = _rows_for(capacity, y0, self.step, "y0")
        self.level = level
        self.candidate = level.copy()
        self.acc = np.zeros_like(level)
        self.y = None
        self.t = 0
        self.cycles = 0
        self._lo = np.broadcast_to(capacity.lo, level.shape).copy()

    @property
    def rows(self) -> int:
        return self.level.shape[0]

    def act_rows(self, x):
        if self.y is None:  # first round: implement the projection of the initial level
            self.level = self.capacity._project_rows(self.level, self._lower(x), None)
            self.candidate = self.level.copy()
        else:
            ok = (self.candidate >= x - 1e-12).all(axis=1)
            if ok.any():
                self.level[ok] = self.candidate[ok]
                self.acc[ok] = 0.0
                self.cycles += int(ok.sum())
        self.y = self.level.copy()
        return self.y

    def update_rows(self, g):
        self.t += 1
        self.acc += g
        gamma = self.step(self.t)[:, None]
        self.candidate = self.capacity._project_rows(self.level - gamma * self.acc, self._lo, self.level)


class DirectOGD(Policy):
    """OGD on the implemented state: ``y_{t+1} = Proj_{F_{t+1}}(y_t - η g_t)`` (no hidden target)."""

    def __init__(self, capacity: CapacitySet, step: object, y0: object = None) -> None:
        self.capacity = capacity
        self.step = _as_step(step)
        y0 = capacity.center() if y0 is None else y0
        self.pending, self._single = _rows_for(capacity, y0, self.step, "y0")
        self.y = None
        self.t = 0

    @property
    def rows(self) -> int:
        return self.pending.shape[0]

    def act_rows(self, x):
        self.y = self.capacity._project_rows(self.pending, self._lower(x), self.y)
        return self.y

    def update_rows(self, g):
        self.t += 1
        self.pending = self.y - self.step(self.t)[:, None] * g


class FixedLevel(Policy):
    """Order up to ``level`` every round, projected onto ``F_t`` (feasible when ``x_1 <= level``)."""

    def __init__(self, capacity: CapacitySet, level: object) -> None:
        self.capacity = capacity
        rows, self._single = as_rows(level, capacity.n, "level")
        if not capacity.contains(rows).all():
            raise ValueError("level: expected a point of the capacity set")
        self.level = rows
        self.y = None

    @property
    def rows(self) -> int:
        return self.level.shape[0]

    def act_rows(self, x):
        self.y = self.capacity._project_rows(self.level, self._lower(x), self.y)
        return self.y

    def update_rows(self, g):
        return None
