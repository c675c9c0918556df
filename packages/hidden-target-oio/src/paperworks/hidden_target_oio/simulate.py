"""Run policies through the OIO protocol in lockstep on one demand path (or one path per row).

:func:`simulate` plays ``T`` rounds: each policy acts on its state ``x_t`` (``y_t in F_t`` is checked
every round), suffers ``l_t(y_t)``, gets the subgradient from its censored sales ``min(y_t, d_t)``, and
moves to ``x_{t+1} = (y_t - d_t)_+``. A :class:`~.policies.HiddenTargetPolicy` also records its queue
trace (:class:`~.queue.QueueTrace`). Everything is vectorised over the rows of the policies, so a grid of
step sizes (or several demand paths, ``demand`` of shape ``(T, R, n)``) runs in one loop over rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .capacity import CapacitySet, as_rows
from .demand import validate_demand
from .losses import NewsvendorLoss
from .policies import HiddenTargetPolicy, Policy
from .queue import QueueTrace

__all__ = ["SimulationResult", "simulate"]


@dataclass(frozen=True)
class SimulationResult:
    """One policy's run: per-round losses (T, R), optional levels and states (T, R, n), queue trace.

    ``infeasibility``: the largest violation of ``y_t in Y ∩ {y >= x_t}`` over the run (0 up to rounding).
    """

    losses: np.ndarray
    queue: QueueTrace | None
    infeasibility: float
    levels: np.ndarray | None = None
    states: np.ndarray | None = None

    @property
    def total_loss(self) -> np.ndarray:
        return self.losses.sum(axis=0)

    def cumulative_loss(self) -> np.ndarray:
        return np.cumsum(self.losses, axis=0)


def simulate(
    policies: Mapping[str, Policy],
    capacity: CapacitySet,
    loss: NewsvendorLoss,
    demand: object,
    x0: object = None,
    *,
    record: bool = False,
    check: bool = True,
    callback: Callable[[int], None] | None = None,
) -> dict[str, SimulationResult]:
    """Play every policy for ``T = len(demand)`` rounds; returns name -> :class:`SimulationResult`.

    ``demand``: ``(T, n)`` (the same path for every row) or ``(T, R, n)`` (row ``r`` sees path ``r``);
    non-negative and finite. ``check``: verify ``y_t in F_t`` every round (``infeasibility``; NaN when
    off). ``x0``: the initial state ``(n,)``, in ``Y`` (default: the zero vector
    when it lies in ``Y``, else ``capacity.lo``). ``record``: keep levels and states. ``callback(t)``
    is called every 1000 rounds (progress).
    """
    if not policies:
        raise ValueError("policies: expected at least one policy")
    d = validate_demand(demand, capacity.n)
    T = d.shape[0]
    if x0 is None:
        zero = np.zeros(capacity.n)
        x0 = zero if capacity.contains(zero) else capacity.lo.copy()
    x0r, _ = as_rows(x0, capacity.n, "x0")
    if x0r.shape[0] != 1:
        raise ValueError(f"x0: expected one initial state of shape ({capacity.n},), got {np.shape(x0)}")
    if (x0r < 0).any() or not capacity.contains(x0r[0], tol=1e-9):
        raise ValueError("x0: the initial state is outside the capacity set Y")
    for name, pol in policies.items():
        if pol.capacity is not capacity:
            raise ValueError(f"policies[{name!r}]: built on another capacity set object")
        if d.ndim == 3 and pol.rows != d.shape[1]:
            raise ValueError(f"demand: {d.shape[1]} paths but policy {name!r} has {pol.rows} rows")
    names = list(policies)
    rows = {k: policies[k].rows for k in names}
    x = {k: np.broadcast_to(x0r, (rows[k], capacity.n)).copy() for k in names}
    losses = {k: np.empty((T, rows[k])) for k in names}
    hidden = [k for k in names if isinstance(policies[k], HiddenTargetPolicy)]
    qdist = {k: np.empty((T, rows[k])) for k in hidden}
    qarr = {k: np.empty((T, rows[k])) for k in hidden}
    levels = {k: np.empty((T, rows[k], capacity.n)) for k in names} if record else {}
    states = {k: np.empty((T, rows[k], capacity.n)) for k in names} if record else {}
    worst = dict.fromkeys(names, 0.0 if check else float("nan"))
    service = d.min(axis=-1)  # (T,) or (T, R)
    for t in range(T):
        dt = d[t]
        for k in names:
            pol = policies[k]
            xt = x[k]
            y = pol.act_rows(xt)
            if check:
                bad = max(float((xt - y).max()), float(capacity._violation_rows(y).max()))
                if bad > worst[k]:
                    worst[k] = bad
            losses[k][t] = loss.value(y, dt)
            g = loss.subgradient(y, dt)
            if record:
                levels[k][t] = y
                states[k][t] = xt
            if k in qdist:
                z_before = pol.learner.z
                qdist[k][t] = pol.distance
                pol.update_rows(g)
                qarr[k][t] = np.sqrt(((pol.learner.z - z_before) ** 2).sum(axis=1))
            else:
                pol.update_rows(g)
            x[k] = np.maximum(y - dt, 0.0)
        if callback is not None and (t + 1) % 1000 == 0:
            callback(t + 1)
    out = {}
    for k in names:
        q = None
        if k in qdist:
            s = np.broadcast_to(service[:, None] if service.ndim == 1 else service, qdist[k].shape)
            q = QueueTrace(qdist[k], qarr[k], np.array(s))
        out[k] = SimulationResult(
            losses[k], q, worst[k], levels.get(k) if record else None, states.get(k) if record else None
        )
    return out
