"""The four algorithms on a tabular MDP: oracle NPG, plug-in NPG ("vanilla"), MLMC-NPG, plug-in PG.

Every iteration ``t``: estimate the scalarisation weights ``w_t ~ grad f(J^{pi_t})`` (exact for the
oracle; :func:`plugin_weights` from ``batch`` rollouts; the mean of ``K = max(1, round(batch / c))``
:class:`MLMCEstimator` calls, ``c`` its expected cost, so the expected rollouts per iteration match),
take the advantages of the ``M`` objectives (exact, or rollout estimates with ``advantage_rollouts``
per state-action pair), then step

- NPG: ``theta += eta / (1 - gamma) * sum_m w_m A_m`` (:func:`npg_step`);
- PG: ``theta += eta * d(s) pi(a|s) sum_m w_m A_m(s, a) / (1 - gamma)`` (the exact softmax gradient).

The trace records the exact objective ``F(pi_t) = f(J^{pi_t})`` and the cumulative rollouts before each
iteration, so sample complexities are read off exactly (:func:`rollouts_to_accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, nonnegative_int, one_of, positive_float, positive_int

from .estimators import MLMCEstimator, plugin_weights
from .mdp import TabularMOMDP
from .policy import npg_step, policy_gradient, softmax_policy
from .scalarization import ConcaveScalarization

__all__ = ["METHODS", "NPGConfig", "NPGTrace", "optimal_value", "rollouts_to_accuracy", "run_npg"]

METHODS = ("oracle", "plugin_npg", "mlmc_npg", "plugin_pg")


@dataclass(frozen=True)
class NPGConfig:
    """``method`` in :data:`METHODS`; ``eta`` the step size; ``batch`` rollouts per iteration for the
    weights (MLMC: the expected rollouts, matched); ``max_level`` MLMC's ``L_max``; ``iterations``;
    ``advantage_rollouts``: 0 for exact advantages (an advantage oracle), else rollouts per (s, a)."""

    method: str = "mlmc_npg"
    eta: float = 0.5
    batch: int = 64
    max_level: int = 12
    iterations: int = 100
    advantage_rollouts: int = 0

    def __post_init__(self) -> None:
        one_of(self.method, "method", METHODS)
        positive_float(self.eta, "eta")
        positive_int(self.batch, "batch")
        positive_int(self.max_level, "max_level (L_max)")
        positive_int(self.iterations, "iterations")
        nonnegative_int(self.advantage_rollouts, "advantage_rollouts")


@dataclass(frozen=True)
class NPGTrace:
    """``values (T+1,)``: exact F after 0..T iterations; ``rollouts (T+1,)``: cumulative rollouts spent
    before reaching each of them; ``weights (T, M)``: the weights used; ``theta``: final logits."""

    values: np.ndarray
    rollouts: np.ndarray
    weights: np.ndarray
    theta: np.ndarray

    def gaps(self, f_star: float) -> np.ndarray:
        return f_star - self.values


def run_npg(
    mdp: TabularMOMDP,
    f: ConcaveScalarization,
    config: NPGConfig,
    rng: object = None,
    theta0: object | None = None,
) -> NPGTrace:
    """Run one algorithm for ``config.iterations`` iterations from ``theta0`` (default uniform policy)."""
    if f.n_objectives != mdp.n_objectives:
        raise ValueError(
            f"f: expected a utility of M = {mdp.n_objectives} objectives (the MDP's reward dimension), "
            f"got M = {f.n_objectives}"
        )
    gen = as_generator(rng)
    theta = np.zeros((mdp.n_states, mdp.n_actions)) if theta0 is None else np.array(theta0, dtype=float)
    mlmc = MLMCEstimator(f, config.max_level) if config.method == "mlmc_npg" else None
    calls = max(1, round(config.batch / mlmc.expected_cost)) if mlmc is not None else 0
    T = config.iterations
    values = np.empty(T + 1)
    spent = np.zeros(T + 1, dtype=np.int64)
    weights = np.empty((T, mdp.n_objectives))
    used = 0
    for t in range(T + 1):
        pi = softmax_policy(theta)
        ev = mdp.evaluate(pi)
        values[t] = float(f.value(ev.J))
        spent[t] = used
        if t == T:
            break

        def sampler(n: int, g: np.random.Generator, pi: np.ndarray = pi) -> np.ndarray:
            return mdp.sample_returns(pi, n, g)

        if config.method == "oracle":
            w = f.grad(ev.J)
        elif mlmc is not None:
            est = mlmc(sampler, gen, calls=calls)
            w, used = est.weights.mean(axis=0), used + est.rollouts
        else:
            est = plugin_weights(f, sampler, config.batch, gen)
            w, used = est.weights, used + est.rollouts
        if config.advantage_rollouts and config.method != "oracle":
            adv, n_adv = mdp.sample_advantages(pi, config.advantage_rollouts, gen)
            used += n_adv
        else:
            adv = ev.advantage
        weights[t] = w
        if config.method == "plugin_pg":
            theta = theta + config.eta * policy_gradient(pi, ev.occupancy, adv @ w, mdp.gamma)
        else:
            theta = npg_step(theta, w, adv, config.eta, mdp.gamma)
    return NPGTrace(values=values, rollouts=spent, weights=weights, theta=theta)


def optimal_value(
    mdp: TabularMOMDP, f: ConcaveScalarization, eta: float = 1.0, iterations: int = 3000, tol: float = 1e-12
) -> float:
    """``F* = max_pi f(J^pi)``: oracle NPG (exact weights and advantages) until F stops improving."""
    theta = np.zeros((mdp.n_states, mdp.n_actions))
    best = -np.inf
    for _ in range(iterations):
        ev = mdp.evaluate(softmax_policy(theta))
        value = float(f.value(ev.J))
        if value - best < tol and value >= best:
            best = value
            break
        best = max(best, value)
        theta = npg_step(theta, f.grad(ev.J), ev.advantage, eta, mdp.gamma)
    return best


def rollouts_to_accuracy(trace: NPGTrace, f_star: float, eps: float) -> float:
    """Rollouts spent until the gap ``F* - F(pi_t)`` is <= ``eps`` for good (the last exit: from that
    iteration to the end of the run); ``inf`` when the final iterate's gap exceeds ``eps``."""
    ok = trace.gaps(f_star) <= positive_float(eps, "eps")
    if not ok[-1]:
        return float("inf")
    bad = np.flatnonzero(~ok)
    first = 0 if bad.size == 0 else int(bad[-1]) + 1
    return float(trace.rollouts[first])
