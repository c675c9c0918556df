"""Finite discounted MDPs, exact dynamic-programming evaluation and generators.

An MDP is ``(P, r, d0, gamma)`` with ``P`` of shape ``(S, A, S)`` (rows sum to 1), mean rewards ``r`` of shape
``(S, A)`` in ``[-1, 1]``, an initial distribution ``d0`` of shape ``(S,)`` and ``gamma`` in ``[0, 1)``.
Observed
rewards are ``+1`` with probability ``(1 + r) / 2`` and ``-1`` otherwise (unbiased, in the stated range).

Every returned policy is evaluated exactly: ``V^pi = (I - gamma P_pi)^{-1} r_pi`` (a linear solve, not a
rollout),
and the entropy-regularised objective ``J_tau(pi) = E_{d0}[sum_t gamma^t (r(s_t, a_t) - tau log pi(a_t |
s_t))]``
by the same solve with ``r_pi`` replaced by ``r_pi + tau H(pi(. | s))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, finite_array, fraction, positive_int, probability_vector

__all__ = [
    "TabularMDP",
    "chain_mdp",
    "check_policy",
    "combination_lock",
    "garnet_mdp",
    "greedy_policy",
    "softmax_policy",
]

REWARD_RANGE = (-1.0, 1.0)


def check_policy(policy: object, n_states: int, n_actions: int, name: str = "policy") -> np.ndarray:
    """A ``(S, A)`` array of action probabilities (rows on the simplex)."""
    pi = probability_vector(policy, name, axis=-1)
    if pi.shape != (n_states, n_actions):
        raise ValueError(f"{name}: expected shape ({n_states}, {n_actions}), got {pi.shape}")
    return pi


def greedy_policy(q: np.ndarray) -> np.ndarray:
    """The deterministic policy ``argmax_a q(s, a)`` (ties to the lowest index) as ``(S, A)``
    probabilities."""
    q = np.asarray(q, dtype=float)
    pi = np.zeros_like(q)
    pi[np.arange(q.shape[0]), np.argmax(q, axis=1)] = 1.0
    return pi


def softmax_policy(q: np.ndarray, tau: float) -> np.ndarray:
    """``pi(a | s) ∝ exp(q(s, a) / tau)``: the soft-greedy policy of temperature ``tau``."""
    z = np.asarray(q, dtype=float) / tau
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _soft_max_value(q: np.ndarray, tau: float) -> np.ndarray:
    """``V(s) = tau log sum_a exp(q(s, a) / tau)`` (stable)."""
    m = q.max(axis=1)
    return m + tau * np.log(np.exp((q - m[:, None]) / tau).sum(axis=1))


def _entropy(pi: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(pi > 0, pi * np.log(pi), 0.0).sum(axis=1)


@dataclass(frozen=True, eq=False)
class TabularMDP:
    """A finite discounted MDP. ``transitions (S, A, S)``, ``rewards (S, A)`` in [-1, 1], ``initial (S,)``."""

    transitions: np.ndarray
    rewards: np.ndarray
    initial: np.ndarray
    gamma: float

    def __post_init__(self) -> None:
        P = finite_array(self.transitions, "transitions", ndim=3)
        S, A, S2 = P.shape
        if S2 != S:
            raise ValueError(f"transitions: expected shape (S, A, S), got {P.shape}")
        P = probability_vector(P, "transitions", axis=-1)
        r = finite_array(self.rewards, "rewards", shape=(S, A))
        lo, hi = REWARD_RANGE
        if r.min() < lo or r.max() > hi:
            raise ValueError(
                f"rewards: expected mean rewards in [{lo}, {hi}], got [{r.min():.4g}, {r.max():.4g}]"
            )
        d0 = probability_vector(self.initial, "initial")
        if d0.shape != (S,):
            raise ValueError(f"initial: expected shape ({S},), got {d0.shape}")
        gamma = fraction(self.gamma, "gamma", open_high=True)
        for k, v in (("transitions", P), ("rewards", r), ("initial", d0), ("gamma", gamma)):
            object.__setattr__(self, k, v)
        for arr in (P, r, d0):
            arr.setflags(write=False)

    @property
    def n_states(self) -> int:
        return self.transitions.shape[0]

    @property
    def n_actions(self) -> int:
        return self.transitions.shape[1]

    @property
    def v_range(self) -> tuple[float, float]:
        """Bounds on any (unregularised) value: ``[min r, max r] / (1 - gamma)``."""
        return float(self.rewards.min()) / (1 - self.gamma), float(self.rewards.max()) / (1 - self.gamma)

    # ------------------------------------------------------------------ exact evaluation
    def _solve(self, pi: np.ndarray, per_state_reward: np.ndarray) -> np.ndarray:
        P_pi = np.einsum("sa,sat->st", pi, self.transitions)
        return np.linalg.solve(np.eye(self.n_states) - self.gamma * P_pi, per_state_reward)

    def state_values(self, policy: object) -> np.ndarray:
        """``V^pi (S,)`` by the linear solve ``(I - gamma P_pi) V = r_pi``."""
        pi = check_policy(policy, self.n_states, self.n_actions)
        return self._solve(pi, (pi * self.rewards).sum(axis=1))

    def q_values(self, policy: object) -> np.ndarray:
        """``Q^pi (S, A) = r + gamma P V^pi``."""
        return self.rewards + self.gamma * self.transitions @ self.state_values(policy)

    def value(self, policy: object) -> float:
        """``J(pi) = E_{d0} V^pi(s)``."""
        return float(self.initial @ self.state_values(policy))

    def soft_value(self, policy: object, tau: float) -> float:
        """``J_tau(pi)``: the entropy-regularised objective (Uehara et al. 2023's soft value)."""
        pi = check_policy(policy, self.n_states, self.n_actions)
        per_state = (pi * self.rewards).sum(axis=1) + tau * _entropy(pi)
        return float(self.initial @ self._solve(pi, per_state))

    def occupancy(self, policy: object) -> np.ndarray:
        """Normalised discounted occupancy ``d^pi(s, a) = (1 - gamma) sum_t gamma^t P(s_t = s, a_t = a)``."""
        pi = check_policy(policy, self.n_states, self.n_actions)
        P_pi = np.einsum("sa,sat->st", pi, self.transitions)
        d_s = (1 - self.gamma) * np.linalg.solve((np.eye(self.n_states) - self.gamma * P_pi).T, self.initial)
        return np.clip(d_s, 0.0, None)[:, None] * pi

    # ------------------------------------------------------------------ optimal control
    def optimal_q(self, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
        """``Q*`` by policy iteration (exact: each evaluation is a linear solve)."""
        pi = greedy_policy(self.rewards)
        for _ in range(max_iter):
            q = self.q_values(pi)
            new = greedy_policy(q)
            if np.array_equal(new, pi) or np.max(q.max(axis=1) - (q * pi).sum(axis=1)) <= tol:
                return q
            pi = new
        raise RuntimeError("optimal_q: policy iteration did not converge")

    def optimal_value(self) -> float:
        return float(self.initial @ self.optimal_q().max(axis=1))

    def soft_optimal_q(self, tau: float, tol: float = 1e-12) -> np.ndarray:
        """The soft-optimal ``Q_tau*``: fixed point of ``Q = r + gamma P [tau log sum_a exp(Q / tau)]``."""
        q = np.zeros_like(self.rewards)
        for _ in range(100_000):
            new = self.rewards + self.gamma * self.transitions @ _soft_max_value(q, tau)
            if np.max(np.abs(new - q)) <= tol:
                return new
            q = new
        raise RuntimeError("soft_optimal_q: soft value iteration did not converge")

    def soft_optimal_policy(self, tau: float) -> np.ndarray:
        return softmax_policy(self.soft_optimal_q(tau), tau)

    def bellman_optimality(self, q: np.ndarray) -> np.ndarray:
        """``(T q)(s, a) = r(s, a) + gamma sum_s' P(s' | s, a) max_a' q(s', a')``."""
        return self.rewards + self.gamma * self.transitions @ np.asarray(q, dtype=float).max(axis=1)

    def soft_bellman(self, q: np.ndarray, tau: float) -> np.ndarray:
        """``(T_tau q)(s, a) = r + gamma P [tau log sum exp(q / tau)]``."""
        return self.rewards + self.gamma * self.transitions @ _soft_max_value(np.asarray(q, dtype=float), tau)

    def sample_rewards(self, states: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Observed rewards in {-1, +1} with mean ``r(s, a)``."""
        p_plus = (1.0 + self.rewards[states, actions]) / 2.0
        return np.where(rng.random(states.shape) < p_plus, 1.0, -1.0)


# ---------------------------------------------------------------------------------------- generators


def chain_mdp(n_states: int = 10, n_actions: int = 3, slip: float = 0.1, gamma: float = 0.9) -> TabularMDP:
    """A chain 0 -> n-1. Action 0 moves right, action 1 left, others stay; with probability ``slip`` the move
    fails (stay). Every step costs -1 except in the absorbing goal ``n-1`` (reward 0). Start in state 0."""
    S, A = positive_int(n_states, "n_states"), positive_int(n_actions, "n_actions")
    if S < 2 or A < 2:
        raise ValueError(f"n_states, n_actions: expected >= 2 each, got {S}, {A}")
    slip = fraction(slip, "slip", open_high=True)
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            target = min(s + 1, S - 1) if a == 0 else max(s - 1, 0) if a == 1 else s
            P[s, a, target] += 1 - slip
            P[s, a, s] += slip
    P[S - 1] = 0.0
    P[S - 1, :, S - 1] = 1.0
    r = -np.ones((S, A))
    r[S - 1] = 0.0
    d0 = np.zeros(S)
    d0[0] = 1.0
    return TabularMDP(P, r, d0, gamma)


def combination_lock(
    horizon: int = 8, n_actions: int = 3, gamma: float = 0.9, rng: object = None
) -> TabularMDP:
    """A combination lock of ``horizon`` states plus an absorbing goal: in state h one action (drawn from
    ``rng``) advances to h+1, every other action resets to state 0. Each step costs -1 (goal: 0)."""
    H, A = positive_int(horizon, "horizon"), positive_int(n_actions, "n_actions")
    if A < 2:
        raise ValueError(f"n_actions: expected >= 2, got {A}")
    gen = as_generator(rng)
    code = gen.integers(0, A, size=H)
    S = H + 1
    P = np.zeros((S, A, S))
    for h in range(H):
        P[h, :, 0] = 1.0
        P[h, code[h], 0] = 0.0
        P[h, code[h], h + 1] = 1.0
    P[H, :, H] = 1.0
    r = -np.ones((S, A))
    r[H] = 0.0
    d0 = np.zeros(S)
    d0[0] = 1.0
    return TabularMDP(P, r, d0, gamma)


def garnet_mdp(
    n_states: int = 40, n_actions: int = 4, branching: int = 3, gamma: float = 0.9, rng: object = None
) -> TabularMDP:
    """A Garnet MDP: each (s, a) moves to ``branching`` random states with Dirichlet(1) weights; mean rewards
    ~ U(-1, 0) (costs); uniform initial distribution."""
    S, A = positive_int(n_states, "n_states"), positive_int(n_actions, "n_actions")
    b = positive_int(branching, "branching")
    if b > S:
        raise ValueError(f"branching: expected <= n_states ({S}), got {b}")
    gen = as_generator(rng)
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            nxt = gen.choice(S, size=b, replace=False)
            P[s, a, nxt] = gen.dirichlet(np.ones(b))
    r = -gen.random((S, A))
    return TabularMDP(P, r, np.full(S, 1.0 / S), gamma)
