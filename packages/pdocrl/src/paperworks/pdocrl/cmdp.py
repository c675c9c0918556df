"""Discounted tabular constrained MDPs: exact occupancies, returns and Q functions, and two generators.

A CMDP has transitions ``P`` (S, A, S), a reward ``r`` (S, A), costs ``c`` (K, S, A) with budgets
``tau`` (K,), an initial distribution ``mu0`` (S,) and a discount ``gamma`` in [0, 1). Returns are normalised,
``J(pi) = (1 - gamma) E[sum_t gamma^t r(s_t, a_t)] = <d_pi, r>``, where the occupancy
``d_pi(s, a) = (1 - gamma) sum_t gamma^t Pr(s_t = s, a_t = a)`` sums to 1. A policy is feasible when
``<d_pi, c_k> <= tau_k`` for every k (the cost form of the paper's "auxiliary returns above thresholds":
an auxiliary reward ``-c_k`` with threshold ``-tau_k``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from paperworks.core.validate import as_generator, finite_array, fraction, positive_int

__all__ = ["DENSE_STATES", "TabularCMDP", "check_policy", "garnet_cmdp", "gridworld_cmdp"]

DENSE_STATES = 300  # up to this many states, dense LAPACK/BLAS beats sparse set-up costs


def check_policy(policy: object, n_states: int, n_actions: int, name: str = "policy") -> np.ndarray:
    """A (S, A) array of action probabilities per state (rows sum to 1)."""
    pi = finite_array(policy, name, shape=(n_states, n_actions))
    if pi.min() < 0 or pi.max() > 1:
        raise ValueError(
            f"{name}: expected probabilities in [0, 1], got min {pi.min():.4g}, max {pi.max():.4g}"
        )
    worst = float(np.abs(pi.sum(axis=1) - 1).max())
    if worst > 1e-6:
        raise ValueError(f"{name}: expected each row (state) to sum to 1, off by {worst:.3g}")
    return pi / pi.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class TabularCMDP:
    """A discounted CMDP (module docstring for the conventions). Arrays are validated and copied."""

    transitions: np.ndarray  # (S, A, S)
    reward: np.ndarray  # (S, A)
    costs: np.ndarray  # (K, S, A)
    budgets: np.ndarray  # (K,)
    initial: np.ndarray  # (S,)
    gamma: float

    def __post_init__(self) -> None:
        P = finite_array(self.transitions, "transitions", ndim=3)
        S, A, S2 = P.shape
        if S2 != S:
            raise ValueError(f"transitions: expected shape (S, A, S), got {P.shape}")
        if P.min() < 0:
            raise ValueError(f"transitions: expected non-negative probabilities, got min {P.min():.4g}")
        worst = float(np.abs(P.sum(axis=2) - 1).max())
        if worst > 1e-8:
            raise ValueError(f"transitions: expected every row P[s, a, :] to sum to 1, off by {worst:.3g}")
        r = finite_array(self.reward, "reward", shape=(S, A))
        c = finite_array(self.costs, "costs", ndim=3)
        if c.shape[1:] != (S, A):
            raise ValueError(f"costs: expected shape (K, {S}, {A}), got {c.shape}")
        tau = finite_array(self.budgets, "budgets", ndim=1)
        if tau.shape[0] != c.shape[0]:
            raise ValueError(f"budgets: expected one budget per cost ({c.shape[0]}), got {tau.shape[0]}")
        mu0 = finite_array(self.initial, "initial", shape=(S,))
        if mu0.min() < 0 or abs(mu0.sum() - 1) > 1e-8:
            raise ValueError("initial: expected a probability vector over states (non-negative, sum 1)")
        g = fraction(self.gamma, "gamma", open_high=True)
        for name, value in (
            ("transitions", P / P.sum(axis=2, keepdims=True)),
            ("reward", r.copy()),
            ("costs", c.copy()),
            ("budgets", tau.copy()),
            ("initial", mu0 / mu0.sum()),
            ("gamma", g),
        ):
            object.__setattr__(self, name, value)

    @property
    def n_states(self) -> int:
        return self.transitions.shape[0]

    @property
    def n_actions(self) -> int:
        return self.transitions.shape[1]

    @property
    def n_costs(self) -> int:
        return self.costs.shape[0]

    def _p_pi(self, pi: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix(np.einsum("sa,sat->st", pi, self.transitions))

    def state_occupancy(self, policy: object) -> np.ndarray:
        """(S,) ``nu_pi = (1 - gamma) (I - gamma P_pi^T)^{-1} mu0`` (sums to 1)."""
        pi = check_policy(policy, self.n_states, self.n_actions)
        M = sp.identity(self.n_states, format="csc") - self.gamma * self._p_pi(pi).T.tocsc()
        return (1 - self.gamma) * spla.spsolve(M, self.initial)

    def occupancy(self, policy: object) -> np.ndarray:
        """(S, A) ``d_pi(s, a) = nu_pi(s) pi(a|s)``: the normalised discounted occupancy."""
        pi = check_policy(policy, self.n_states, self.n_actions)
        return self.state_occupancy(pi)[:, None] * pi

    def returns(self, policy: object) -> tuple[float, np.ndarray]:
        """``(J_r, J_c)``: the normalised reward return and the (K,) cost returns of ``policy``."""
        d = self.occupancy(policy)
        return float((d * self.reward).sum()), np.einsum("sa,ksa->k", d, self.costs)

    def returns_many(self, policies: object) -> tuple[np.ndarray, np.ndarray]:
        """``(J_r (m,), J_c (m, K))`` of ``m`` policies (m, S, A) at once (batched dense solves)."""
        pis = finite_array(policies, "policies", ndim=3)
        if pis.shape[1:] != (self.n_states, self.n_actions):
            raise ValueError(
                f"policies: expected shape (m, {self.n_states}, {self.n_actions}), got {pis.shape}"
            )
        if self.n_states > DENSE_STATES:
            out = [self.returns(p) for p in pis]
            return np.array([o[0] for o in out]), np.stack([o[1] for o in out])
        for p in pis:
            check_policy(p, self.n_states, self.n_actions, name="policies")
        P_pi = np.einsum("msa,sat->mst", pis, self.transitions)
        M = np.eye(self.n_states)[None] - self.gamma * np.swapaxes(P_pi, 1, 2)
        nu = (1 - self.gamma) * np.linalg.solve(
            M, np.broadcast_to(self.initial, (len(pis), self.n_states))[..., None]
        )[..., 0]
        d = nu[:, :, None] * pis
        return np.einsum("msa,sa->m", d, self.reward), np.einsum("msa,ksa->mk", d, self.costs)

    def q_function(self, policy: object, reward: object | None = None) -> np.ndarray:
        """(S, A) unnormalised ``Q_pi = reward + gamma P V_pi`` for ``reward`` (S, A; default: the reward)."""
        pi = check_policy(policy, self.n_states, self.n_actions)
        rw = self.reward if reward is None else finite_array(reward, "reward", shape=pi.shape)
        M = sp.identity(self.n_states, format="csc") - self.gamma * self._p_pi(pi).tocsc()
        v = spla.spsolve(M, (pi * rw).sum(axis=1))
        return rw + self.gamma * self.transitions @ v

    def step(self, state: int, action: int, rng: np.random.Generator) -> int:
        """One sampled next state."""
        return int(rng.choice(self.n_states, p=self.transitions[state, action]))


def gridworld_cmdp(
    size: int = 4,
    *,
    n_hazards: int = 3,
    slip: float = 0.1,
    gamma: float = 0.9,
    budget_quantile: float = 0.5,
    rng: object = None,
) -> TabularCMDP:
    """A ``size x size`` grid: start at (0, 0), an absorbing goal at the far corner (reward 1 per step
    there), ``n_hazards`` hazard cells off the corners (cost 1 per step spent in one), 4 moves that slip to a
    uniformly random move with probability ``slip``. The budget lies ``budget_quantile`` of the way from the
    least achievable cost to the cost of the reward-optimal policy, so that the constraint binds.
    """
    n = positive_int(size, "size")
    if n < 3:
        raise ValueError(f"size: expected an int >= 3, got {n}")
    k = positive_int(n_hazards, "n_hazards")
    if k > n * n - 3:
        raise ValueError(f"n_hazards: expected at most {n * n - 3} on a {n}x{n} grid, got {k}")
    slip = fraction(slip, "slip")
    q = fraction(budget_quantile, "budget_quantile", open_low=True, open_high=True)
    gen = as_generator(rng)
    S, A = n * n, 4
    goal = S - 1
    cells = [s for s in range(S) if s not in (0, goal, n - 1, S - n)]
    hazards = gen.choice(cells, size=k, replace=False)
    moves = np.array([(-1, 0), (1, 0), (0, -1), (0, 1)])
    nxt = np.zeros((S, A), dtype=int)
    for s in range(S):
        i, j = divmod(s, n)
        for a, (di, dj) in enumerate(moves):
            ii, jj = min(max(i + di, 0), n - 1), min(max(j + dj, 0), n - 1)
            nxt[s, a] = goal if s == goal else ii * n + jj
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            P[s, a, nxt[s, a]] += 1 - slip
            for b in range(A):
                P[s, a, nxt[s, b]] += slip / A
    r = np.zeros((S, A))
    r[goal] = 1.0
    c = np.zeros((1, S, A))
    c[0, hazards] = 1.0
    mu0 = np.zeros(S)
    mu0[0] = 1.0
    return _with_binding_budget(P, r, c, mu0, gamma, q)


def garnet_cmdp(
    n_states: int = 20,
    n_actions: int = 4,
    *,
    branching: int = 3,
    gamma: float = 0.9,
    budget_quantile: float = 0.5,
    rng: object = None,
) -> TabularCMDP:
    """A Garnet CMDP: each (s, a) moves to ``branching`` random states with Dirichlet(1) probabilities;
    reward and one cost uniform on [0, 1]; a uniform initial distribution; the budget as in
    :func:`gridworld_cmdp`."""
    S, A = positive_int(n_states, "n_states"), positive_int(n_actions, "n_actions")
    b = positive_int(branching, "branching")
    if b > S:
        raise ValueError(f"branching: expected at most n_states = {S}, got {b}")
    q = fraction(budget_quantile, "budget_quantile", open_low=True, open_high=True)
    gen = as_generator(rng)
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            P[s, a, gen.choice(S, size=b, replace=False)] = gen.dirichlet(np.ones(b))
    r = gen.uniform(size=(S, A))
    c = gen.uniform(size=(1, S, A))
    return _with_binding_budget(P, r, c, np.full(S, 1 / S), gamma, q)


def _with_binding_budget(P, r, c, mu0, gamma, q) -> TabularCMDP:
    from .lp import min_costs, solve_lp  # the LP is the ground truth for where the budget binds

    loose = TabularCMDP(P, r, c, np.full(c.shape[0], 1e9), mu0, gamma)
    unconstrained = solve_lp(loose)
    lo = min_costs(loose)
    # a strict Slater slack even where the reward-optimal policy is already the cheapest
    tau = lo + np.maximum(q * (unconstrained.costs - lo), 0.02)
    return TabularCMDP(P, r, c, tau, mu0, gamma)
