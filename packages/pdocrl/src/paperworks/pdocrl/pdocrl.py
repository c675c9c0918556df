"""PDOCRL: the primal-dual loop on the empirical decomposed Lagrangian (eq. L of :mod:`.lagrangian`).

Per iteration t (our reading of the paper's algorithm; README, Fidelity):

1. ``(w_t, Q_t)``: the saddle of ``L(pi_t, ., ., lam_t)`` over the classes ``W x Q`` (linear minimisation:
   an LP, in closed form for the tabular box);
2. ``lam_{t+1} = Proj_[0, B](lam_t - eta_lam dL/dlam)``, ``dL/dlam_k = -E_D[w_t (c_k - tau_k)]``
   (online linear optimisation; ``B`` from Slater's condition);
3. ``pi_{t+1}(a|s) ∝ pi_t(a|s) exp(eta_pi (1 - gamma) Q_t(s, a))`` (mirror descent: the policy-optimisation
   oracle; ``pi`` ascends L because dL/dpi(a|s) = inflow(s) Q_t(s, a) with a positive state weight).

The output is the uniform mixture of ``pi_1 .. pi_T`` (one iterate drawn at the start of an episode); its
returns are the mean of the iterates' returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import finite_array, nonnegative_float, positive_float, positive_int

from .cmdp import TabularCMDP
from .data import DatasetCounts, OfflineDataset
from .lagrangian import LinearQClass, SaddleSolution, restricted_saddle, tabular_saddle

__all__ = ["PDOCRL", "PDOCRLConfig", "PolicyMixture", "Problem", "q_box"]


@dataclass(frozen=True)
class PDOCRLConfig:
    """``iterations`` T; ``policy_lr`` eta_pi (on ``(1 - gamma) Q``, i.e. normalised values); ``dual_lr``
    eta_lam; ``lambda_bound`` B (``None``: the problem's Slater bound must be given to :meth:`PDOCRL.fit`);
    ``w_bound``: the weight class ``0 <= w <= w_bound`` (inf: unbounded); ``keep``: iterates stored."""

    iterations: int = 1000
    policy_lr: float = 1.0
    dual_lr: float = 0.5
    lambda_bound: float | None = None
    w_bound: float = np.inf
    keep: int = 100

    def __post_init__(self) -> None:
        positive_int(self.iterations, "iterations")
        positive_float(self.policy_lr, "policy_lr")
        nonnegative_float(self.dual_lr, "dual_lr")
        if self.lambda_bound is not None:
            positive_float(self.lambda_bound, "lambda_bound")
        if not (isinstance(self.w_bound, float | int) and self.w_bound > 0):
            raise ValueError(f"w_bound: expected a positive number or inf, got {self.w_bound!r}")
        positive_int(self.keep, "keep")


@dataclass(frozen=True, eq=False)
class Problem:
    """What an offline learner knows besides the data: sizes, ``initial`` (S,), ``gamma``, ``budgets`` (K,),
    a Slater bound on the multipliers, and the reward/cost ranges (defaults: those seen in the data)."""

    n_states: int
    n_actions: int
    initial: np.ndarray
    gamma: float
    budgets: np.ndarray
    lambda_bound: float

    def __post_init__(self) -> None:
        S = positive_int(self.n_states, "n_states")
        positive_int(self.n_actions, "n_actions")
        mu0 = finite_array(self.initial, "initial", shape=(S,))
        if mu0.min() < 0 or abs(mu0.sum() - 1) > 1e-8:
            raise ValueError("initial: expected a probability vector over states")
        g = float(self.gamma)
        if not 0 <= g < 1:
            raise ValueError(f"gamma: expected a discount in [0, 1), got {self.gamma!r}")
        tau = finite_array(self.budgets, "budgets", ndim=1)
        b = positive_float(self.lambda_bound, "lambda_bound")
        for name, v in (("initial", mu0), ("gamma", g), ("budgets", tau), ("lambda_bound", b)):
            object.__setattr__(self, name, v)

    @classmethod
    def of(cls, cmdp: TabularCMDP, lambda_bound: float) -> Problem:
        return cls(cmdp.n_states, cmdp.n_actions, cmdp.initial, cmdp.gamma, cmdp.budgets, lambda_bound)


def q_box(counts: DatasetCounts, problem: Problem) -> tuple[float, float]:
    """``(q_low, q_high)``: bounds on every ``Q_pi`` of ``r_lam`` for ``0 <= lam <= B`` (Q realisability
    for every policy: the paper's stronger condition, met by the tabular box), from the data's ranges."""
    seen = counts.supported
    r, c = counts.reward[seen], counts.costs[:, seen]
    B, tau = problem.lambda_bound, problem.budgets
    low = r.min() - B * np.maximum(c.max(axis=1) - tau, 0).sum()
    high = r.max() + B * np.maximum(tau - c.min(axis=1), 0).sum()
    return low / (1 - problem.gamma), high / (1 - problem.gamma)


@dataclass(frozen=True, eq=False)
class PolicyMixture:
    """The uniform mixture of stored iterates ``policies`` (m, S, A), with the multipliers ``lambdas``
    (T, K) and the Lagrangian ``values`` (T,) seen along the way."""

    policies: np.ndarray
    lambdas: np.ndarray
    values: np.ndarray

    def returns(self, cmdp: TabularCMDP) -> tuple[float, np.ndarray]:
        """Exact ``(J_r, J_c)`` of the mixture on the true CMDP: the mean over its iterates."""
        J, Jc = cmdp.returns_many(self.policies)
        return float(J.mean()), Jc.mean(axis=0)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One iterate, drawn uniformly (to act with for one episode)."""
        return self.policies[rng.integers(len(self.policies))]


class PDOCRL:
    """The primal-dual loop (module docstring). ``q_class=None``: the tabular box (closed form unless
    ``w_bound`` is finite); a :class:`~.lagrangian.LinearQClass`: any linear class, through the LP."""

    name = "PDOCRL"

    def __init__(self, config: PDOCRLConfig | None = None, *, q_class: LinearQClass | None = None) -> None:
        self.config = config or PDOCRLConfig()
        self.q_class = q_class

    def _allowed(self, counts: DatasetCounts) -> np.ndarray | None:
        """(S, A) actions the policy may use (``None``: all); the BCQ-Lagrangian baseline restricts it."""
        return None

    def _saddle(self, counts, problem, pi, lam, low, high) -> SaddleSolution:
        """The critic of iteration t: here the (w, Q) saddle of the restricted Lagrangian."""
        kw = dict(initial=problem.initial, gamma=problem.gamma, budgets=problem.budgets)
        if self.q_class is None and not np.isfinite(self.config.w_bound):
            return tabular_saddle(counts, pi, lam, q_low=low, **kw)
        cls = self.q_class or LinearQClass.tabular(problem.n_states, problem.n_actions, low, high)
        return restricted_saddle(counts, pi, lam, cls, w_bound=self.config.w_bound, **kw)

    def fit(self, data: OfflineDataset | DatasetCounts, problem: Problem) -> PolicyMixture:
        """Run T iterations on ``data`` (a data set or its counts) and return the mixture of iterates."""
        cfg = self.config
        counts = data if isinstance(data, DatasetCounts) else data.counts(problem.n_states, problem.n_actions)
        if counts.n == 0:
            raise ValueError("data: expected a non-empty data set")
        if counts.costs.shape[0] != problem.budgets.shape[0]:
            raise ValueError(
                f"budgets: expected one budget per cost in the data ({counts.costs.shape[0]}), "
                f"got {problem.budgets.shape[0]}"
            )
        B = problem.lambda_bound if cfg.lambda_bound is None else min(cfg.lambda_bound, problem.lambda_bound)
        low, high = q_box(counts, problem)
        S, A, K = problem.n_states, problem.n_actions, problem.budgets.shape[0]
        allowed = self._allowed(counts)
        pi = np.full((S, A), 1.0 / A) if allowed is None else allowed / allowed.sum(axis=1, keepdims=True)
        lam = np.zeros(K)
        T = cfg.iterations
        keep = set(np.linspace(0, T - 1, min(cfg.keep, T)).round().astype(int).tolist())
        stored, lambdas, values = [], np.zeros((T, K)), np.zeros(T)
        step = cfg.policy_lr * (1 - problem.gamma)
        for t in range(T):
            sol = self._saddle(counts, problem, pi, lam, low, high)
            if t in keep:
                stored.append(pi.copy())
            lambdas[t], values[t] = lam, sol.value
            slack = sol.costs - problem.budgets * sol.occupancy.sum()  # -dL/dlam
            lam = np.clip(lam + cfg.dual_lr * slack, 0.0, B)
            logits = np.log(np.maximum(pi, 1e-300)) + step * sol.q
            if allowed is not None:
                logits = np.where(allowed, logits, -np.inf)
            logits -= logits.max(axis=1, keepdims=True)
            pi = np.exp(logits)
            pi /= pi.sum(axis=1, keepdims=True)
        return PolicyMixture(policies=np.stack(stored), lambdas=lambdas, values=values)
