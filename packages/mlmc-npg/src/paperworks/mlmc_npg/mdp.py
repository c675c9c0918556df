"""Tabular multi-objective MDPs: a builder, exact evaluators (linear solves) and a rollout sampler.

A :class:`TabularMOMDP` holds transitions ``P`` (shape ``(S, A, S)``), vector rewards ``R``
(``(S, A, M)``), a discount ``gamma`` in (0, 1) and an initial distribution ``rho`` (``(S,)``). For a
stochastic policy ``pi`` (``(S, A)``) the exact evaluator solves ``(I - gamma P_pi) V = r_pi`` for all
``M`` objectives at once and returns ``V`` (``(S, M)``), ``Q``/advantages (``(S, A, M)``), the returns
``J = rho^T V`` (``(M,)``) and the discounted state occupancy ``d`` (``(S,)``, sums to 1).

The sampler draws unbiased estimates of ``J``: a rollout runs for a geometric number of steps
``T ~ Geom(1 - gamma)`` (``P(T >= t) = gamma^t``) and returns the *undiscounted* reward sum, whose mean
is exactly ``sum_t gamma^t E[r_t] = J`` (no truncation bias). Rollouts are vectorised over the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_array,
    fraction,
    positive_float,
    positive_int,
    probability_vector,
)

from .scalarization import ConcaveScalarization, kinked_utility

__all__ = [
    "PolicyEvaluation",
    "TabularMOMDP",
    "kinked_problem",
    "pareto_vertices",
    "random_mdp",
    "solve_linear",
]


@dataclass(frozen=True)
class PolicyEvaluation:
    """Exact values of one policy: ``V (S, M)``, ``Q (S, A, M)``, ``advantage (S, A, M)``, ``J (M,)``,
    ``occupancy (S,)`` (the normalised discounted state visitation ``d_rho^pi``)."""

    V: np.ndarray
    Q: np.ndarray
    advantage: np.ndarray
    J: np.ndarray
    occupancy: np.ndarray


class TabularMOMDP:
    """A finite discounted MDP with ``M`` reward functions (shapes in the module docstring)."""

    def __init__(self, P: object, R: object, gamma: float, rho: object | None = None) -> None:
        P = probability_vector(P, "P", axis=-1)
        if P.ndim != 3 or P.shape[0] != P.shape[2]:
            raise ValueError(f"P: expected shape (S, A, S), got {P.shape}")
        S, A, _ = P.shape
        R = finite_array(R, "R")
        if R.ndim != 3 or R.shape[:2] != (S, A):
            raise ValueError(f"R: expected shape (S, A, M) = ({S}, {A}, M), got {R.shape}")
        self.gamma = fraction(gamma, "gamma", open_low=True, open_high=True)
        self.P, self.R = P, R
        self.rho = np.full(S, 1.0 / S) if rho is None else probability_vector(rho, "rho")
        if self.rho.shape != (S,):
            raise ValueError(f"rho: expected shape ({S},), got {self.rho.shape}")
        self._Pc = np.cumsum(P, axis=-1)
        self._Pc[..., -1] = 1.0
        self._rhoc = np.cumsum(self.rho)
        self._rhoc[-1] = 1.0

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def n_actions(self) -> int:
        return self.P.shape[1]

    @property
    def n_objectives(self) -> int:
        return self.R.shape[2]

    def check_policy(self, pi: object, name: str = "pi") -> np.ndarray:
        pi = probability_vector(pi, name, axis=-1)
        if pi.shape != (self.n_states, self.n_actions):
            raise ValueError(
                f"{name}: expected shape (S, A) = {(self.n_states, self.n_actions)}, got {pi.shape}"
            )
        return pi

    # -- exact evaluation ----------------------------------------------------------------------------
    def evaluate(self, pi: object) -> PolicyEvaluation:
        """Exact V, Q, advantages, J and occupancy of ``pi`` by one linear solve (all objectives at once)."""
        pi = self.check_policy(pi)
        S, g = self.n_states, self.gamma
        P_pi = np.einsum("sa,sat->st", pi, self.P)
        r_pi = np.einsum("sa,sam->sm", pi, self.R)
        system = np.eye(S) - g * P_pi
        V = np.linalg.solve(system, r_pi)
        Q = self.R + g * np.einsum("sat,tm->sam", self.P, V)
        adv = Q - V[:, None, :]
        d = (1 - g) * np.linalg.solve(system.T, self.rho)
        return PolicyEvaluation(V=V, Q=Q, advantage=adv, J=self.rho @ V, occupancy=d)

    def returns(self, pi: object) -> np.ndarray:
        """Exact ``J^pi`` (shape ``(M,)``)."""
        return self.evaluate(pi).J

    # -- sampling --------------------------------------------------------------------------------------
    def sample_returns(self, pi: object, n: int, rng: object = None) -> np.ndarray:
        """``n`` independent unbiased estimates of ``J^pi`` (shape ``(n, M)``), one rollout each.

        Each rollout starts at ``s_0 ~ rho``, plays ``a_t ~ pi(.|s_t)`` and stops after step ``t``
        with probability ``1 - gamma``; its estimate is the undiscounted sum of the rewards it saw.
        """
        pi = self.check_policy(pi)
        n = positive_int(n, "n")
        gen = as_generator(rng)
        return _rollouts(self, np.cumsum(pi, axis=-1), n, gen)

    def sample_advantages(self, pi: object, n_per_pair: int, rng: object = None) -> tuple[np.ndarray, int]:
        """Rollout estimates of the advantages ``(S, A, M)`` of ``pi`` and the rollouts used
        (``n_per_pair`` geometric-horizon rollouts from every pair ``(s, a)``: unbiased ``Q_hat``, then
        ``A_hat = Q_hat - sum_a pi Q_hat``)."""
        pi = self.check_policy(pi)
        k = positive_int(n_per_pair, "n_per_pair")
        gen = as_generator(rng)
        S, A = self.n_states, self.n_actions
        s0 = np.repeat(np.arange(S), A * k)
        a0 = np.tile(np.repeat(np.arange(A), k), S)
        G = _rollouts(self, np.cumsum(pi, axis=-1), s0.size, gen, start=s0, first_action=a0)
        Q = G.reshape(S, A, k, -1).mean(axis=2)
        return Q - np.einsum("sa,sam->sm", pi, Q)[:, None, :], int(s0.size)


def _rollouts(
    mdp: TabularMOMDP,
    pic: np.ndarray,
    n: int,
    gen: np.random.Generator,
    start: np.ndarray | None = None,
    first_action: np.ndarray | None = None,
) -> np.ndarray:
    """Vectorised geometric-horizon rollouts; ``pic``: the policy's cumulative probabilities (S, A).
    ``start``/``first_action``: fixed initial states and first actions (``(n,)``), for Q estimates."""
    pic = pic.copy()
    pic[:, -1] = 1.0
    out = np.zeros((n, mdp.n_objectives))
    idx = np.arange(n)
    s = np.searchsorted(mdp._rhoc, gen.random(n), side="right") if start is None else start.copy()
    first = True
    while idx.size:
        u = gen.random((idx.size, 2))
        a = (u[:, :1] > pic[s]).sum(axis=1)
        if first and first_action is not None:
            a = first_action.copy()
        first = False
        out[idx] += mdp.R[s, a]
        go = gen.random(idx.size) < mdp.gamma
        idx, s, a, u = idx[go], s[go], a[go], u[go]
        s = (u[:, 1:] > mdp._Pc[s, a]).sum(axis=1)
    return out


def random_mdp(
    n_states: int,
    n_actions: int,
    n_objectives: int = 2,
    gamma: float = 0.8,
    *,
    concentration: float = 1.0,
    rng: object = None,
) -> TabularMOMDP:
    """A random MDP (generative model): ``P(.|s,a) ~ Dirichlet(concentration)``, each reward
    ``R[s, a, m] ~ U[0, 1]`` independently, ``rho`` uniform."""
    S, A = positive_int(n_states, "n_states"), positive_int(n_actions, "n_actions")
    M = positive_int(n_objectives, "n_objectives")
    gen = as_generator(rng)
    P = gen.dirichlet(np.full(S, positive_float(concentration, "concentration")), size=(S, A))
    R = gen.random((S, A, M))
    return TabularMOMDP(P, R, gamma)


def solve_linear(mdp: TabularMOMDP, weights: object, max_iter: int = 1000) -> np.ndarray:
    """The optimal deterministic policy (one-hot, ``(S, A)``) for the scalar reward ``R @ weights``
    (policy iteration: exact, a few linear solves)."""
    w = finite_array(weights, "weights", shape=(mdp.n_objectives,))
    r = mdp.R @ w
    S, A = mdp.n_states, mdp.n_actions
    act = np.zeros(S, dtype=int)
    for _ in range(max_iter):
        P_pi = mdp.P[np.arange(S), act]
        V = np.linalg.solve(np.eye(S) - mdp.gamma * P_pi, r[np.arange(S), act])
        Q = r + mdp.gamma * mdp.P @ V
        best = Q.argmax(axis=1)
        keep = Q[np.arange(S), act] >= Q[np.arange(S), best] - 1e-12
        new = np.where(keep, act, best)
        if np.array_equal(new, act):
            break
        act = new
    return np.eye(A)[act]


def pareto_vertices(mdp: TabularMOMDP, n_angles: int = 257) -> np.ndarray:
    """Vertices ``(k, 2)`` of the upper-right (Pareto) boundary of the achievable return set of a
    two-objective MDP, ordered by increasing ``J_1``: the returns of the optimal deterministic policies
    for weights ``(cos a, sin a)``, ``a`` on a grid of ``(0, pi/2)``."""
    if mdp.n_objectives != 2:
        raise ValueError(f"mdp: expected 2 objectives for a Pareto boundary sweep, got {mdp.n_objectives}")
    angles = np.linspace(0, np.pi / 2, positive_int(n_angles, "n_angles") + 2)[1:-1]
    pts = np.array([mdp.returns(solve_linear(mdp, [np.cos(a), np.sin(a)])) for a in angles])
    pts = np.unique(np.round(pts, 12), axis=0)
    return pts[np.argsort(pts[:, 0])]


def kinked_problem(mdp: TabularMOMDP, kappa: float = 1.0, n_angles: int = 257) -> ConcaveScalarization:
    """The issue's kinked utility with its kink *at the optimum*, for a two-objective MDP.

    Among the edges of the Pareto boundary (:func:`pareto_vertices`) take the one whose normal is
    closest to the diagonal ``(1, 1)``; set ``c`` to its midpoint and ``n`` to its unit normal scaled to
    ``n_1 + n_2 = 2``. Then ``grad f(c) = n`` is normal to the achievable set at ``c``, so ``c`` is the
    maximiser of the concave ``f`` over achievable returns (KKT), ``F* = n.c``, and the optimal policy
    is stochastic (it mixes the edge's two vertex policies).
    """
    V = pareto_vertices(mdp, n_angles)
    if V.shape[0] < 2:
        raise ValueError("mdp: its Pareto boundary is a single point; no edge to place the kink on")
    e = np.diff(V, axis=0)
    normals = np.stack([-e[:, 1], e[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    diag = np.array([1.0, 1.0]) / np.sqrt(2.0)
    i = int(np.argmax(normals @ diag))
    n = normals[i] * 2.0 / normals[i].sum()
    c = 0.5 * (V[i] + V[i + 1])
    return kinked_utility(c, kappa=kappa, direction=n)
