"""Offline data sets as DSRL-style arrays, sampled from a behaviour policy's occupancy, and their counts.

Generative model: i.i.d. transitions ``(s, a) ~ d_mu`` (the behaviour policy's normalised discounted
occupancy), ``s' ~ P(. | s, a)``, with the reward and costs of ``(s, a)``. What is latent: ``P``, ``d_mu``,
the behaviour policy. What is observed: the arrays of :class:`OfflineDataset`, as DSRL/OSRL store them
(``observations, actions, rewards, costs, next_observations, terminals, timeouts``; here a state index
per row). The discounted, infinite-horizon setting has no terminals: those flags are all false.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from paperworks.core import atomic_write_bytes
from paperworks.core.validate import as_generator, finite_array, fraction, one_of, positive_int

from .cmdp import DENSE_STATES, TabularCMDP, check_policy

__all__ = [
    "DatasetCounts",
    "OfflineDataset",
    "collect_dataset",
    "concentrability",
    "load_dsrl_npz",
    "partial_coverage_behaviour",
    "save_dsrl_npz",
]

FIELDS = ("observations", "actions", "rewards", "costs", "next_observations", "terminals", "timeouts")


@dataclass(frozen=True, eq=False)
class OfflineDataset:
    """``n`` transitions: ``observations``, ``actions``, ``next_observations`` (n,) ints, ``rewards`` (n,),
    ``costs`` (n, K), ``terminals``/``timeouts`` (n,) bools."""

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    costs: np.ndarray
    next_observations: np.ndarray
    terminals: np.ndarray
    timeouts: np.ndarray

    def __post_init__(self) -> None:
        obs = finite_array(self.observations, "observations", ndim=1, dtype_kind="i")
        n = obs.shape[0]
        act = finite_array(self.actions, "actions", shape=(n,), dtype_kind="i")
        nxt = finite_array(self.next_observations, "next_observations", shape=(n,), dtype_kind="i")
        rew = finite_array(self.rewards, "rewards", shape=(n,))
        cost = finite_array(self.costs, "costs", dtype_kind="f")
        if cost.ndim == 1:
            cost = cost[:, None]
        if cost.ndim != 2 or cost.shape[0] != n:
            raise ValueError(f"costs: expected shape ({n}, K) or ({n},), got {np.shape(self.costs)}")
        flags = {}
        for name in ("terminals", "timeouts"):
            f = np.asarray(getattr(self, name))
            if f.shape != (n,) or f.dtype.kind not in "bui":
                raise ValueError(f"{name}: expected ({n},) booleans, got shape {f.shape}, dtype {f.dtype}")
            flags[name] = f.astype(bool)
        if (obs < 0).any() or (nxt < 0).any() or (act < 0).any():
            raise ValueError("observations/actions/next_observations: expected non-negative indices")
        for name, v in (
            ("observations", obs),
            ("actions", act),
            ("rewards", rew),
            ("costs", cost),
            ("next_observations", nxt),
            *flags.items(),
        ):
            object.__setattr__(self, name, v)

    def __len__(self) -> int:
        return int(self.observations.shape[0])

    @property
    def n_costs(self) -> int:
        return int(self.costs.shape[1])

    def counts(self, n_states: int, n_actions: int) -> DatasetCounts:
        """Sufficient statistics for tabular methods (every tabular estimator here reads only these)."""
        S, A = positive_int(n_states, "n_states"), positive_int(n_actions, "n_actions")
        if max(self.observations.max(), self.next_observations.max()) >= S or self.actions.max() >= A:
            raise ValueError(f"dataset: expected states < {S} and actions < {A}")
        idx = self.observations * A + self.actions
        n_sa = np.bincount(idx, minlength=S * A).reshape(S, A).astype(float)
        n_sas = sp.csr_matrix(
            (np.ones(len(self)), (idx, self.next_observations)), shape=(S * A, S)
        )  # duplicates are summed
        n_sas.sum_duplicates()
        safe = np.maximum(n_sa, 1.0)
        r = np.bincount(idx, weights=self.rewards, minlength=S * A).reshape(S, A) / safe
        c = np.stack(
            [
                np.bincount(idx, weights=self.costs[:, k], minlength=S * A).reshape(S, A) / safe
                for k in range(self.n_costs)
            ]
        )
        return DatasetCounts(n_sa=n_sa, n_sas=n_sas, reward=r, costs=c, n=len(self))


@dataclass(frozen=True, eq=False)
class DatasetCounts:
    """``n_sa`` (S, A), ``n_sas`` (sparse (S*A, S) counts of next states), mean ``reward`` (S, A) and
    ``costs`` (K, S, A) per seen pair (0 where unseen), and ``n``. ``supported``: the pairs seen at least
    once; ``mu`` = ``n_sa / n``."""

    n_sa: np.ndarray
    n_sas: np.ndarray
    reward: np.ndarray
    costs: np.ndarray
    n: int

    @property
    def supported(self) -> np.ndarray:
        return self.n_sa > 0

    @property
    def mu(self) -> np.ndarray:
        return self.n_sa / self.n

    @cached_property
    def transitions_sparse(self) -> sp.csr_matrix:
        """(S*A, S) empirical ``P_hat`` (rows of unseen pairs are empty)."""
        inv = 1.0 / np.maximum(self.n_sa, 1.0).ravel()
        return sp.csr_matrix(sp.diags(inv) @ self.n_sas)

    @cached_property
    def transitions(self) -> np.ndarray:
        """(S, A, S) dense empirical ``P_hat``; all zeros on unseen pairs (small state spaces)."""
        S, A = self.n_sa.shape
        return self.transitions_sparse.toarray().reshape(S, A, S)

    @property
    def dense(self) -> bool:
        """Whether the tabular solvers use dense algebra (up to ``DENSE_STATES`` states)."""
        return self.n_sa.shape[0] <= DENSE_STATES

    def expect_next(self, v: np.ndarray) -> np.ndarray:
        """(S, A) ``sum_s' P_hat(s'|s, a) v(s')``."""
        if self.dense:
            return self.transitions @ v
        return (self.transitions_sparse @ v).reshape(self.n_sa.shape)


def partial_coverage_behaviour(
    optimal_policy: object, *, noise: float = 0.2, support_fraction: float = 0.5, rng: object = None
) -> np.ndarray:
    """(S, A) behaviour ``mu = (1 - noise) pi* + noise * uniform(K_s)``, ``K_s`` a random
    ``support_fraction`` of the actions of each state: the data cover ``pi*`` (finite single-policy
    concentrability) while many pairs are never seen (partial coverage)."""
    pi = np.asarray(optimal_policy, dtype=float)
    if pi.ndim != 2:
        raise ValueError(f"optimal_policy: expected an (S, A) array, got shape {pi.shape}")
    pi = check_policy(pi, *pi.shape, name="optimal_policy")
    eps = fraction(noise, "noise")
    frac = fraction(support_fraction, "support_fraction", open_low=True)
    gen = as_generator(rng)
    S, A = pi.shape
    k = max(1, round(frac * A))
    extra = np.zeros((S, A))
    for s in range(S):
        extra[s, gen.choice(A, size=k, replace=False)] = 1.0 / k
    return (1 - eps) * pi + eps * extra


def collect_dataset(
    cmdp: TabularCMDP, behaviour: object, n: int, rng: object = None, *, outcomes: str = "bernoulli"
) -> OfflineDataset:
    """``n`` i.i.d. transitions from the behaviour's occupancy (module docstring). ``outcomes``:
    ``"bernoulli"`` observes each reward and cost as a Bernoulli draw of its mean (rewards and costs in
    [0, 1]: a hazard event happens or not), ``"mean"`` observes the means themselves."""
    pi = check_policy(behaviour, cmdp.n_states, cmdp.n_actions, name="behaviour")
    size = positive_int(n, "n")
    one_of(outcomes, "outcomes", ("bernoulli", "mean"))
    gen = as_generator(rng)
    if outcomes == "bernoulli":
        for name, x in (("reward", cmdp.reward), ("costs", cmdp.costs)):
            if x.min() < 0 or x.max() > 1:
                raise ValueError(f"outcomes: 'bernoulli' needs the CMDP's {name} in [0, 1]; use 'mean'")
    d = cmdp.occupancy(pi).ravel()
    d = np.maximum(d, 0) / np.maximum(d, 0).sum()
    idx = gen.choice(d.size, size=size, p=d)
    s, a = np.divmod(idx, cmdp.n_actions)
    # inverse-CDF sampling on the rows' cumulative sums laid end to end: row i's CDF lives in [i, i + 1]
    S = cmdp.n_states
    cum = np.cumsum(cmdp.transitions.reshape(-1, S), axis=1)
    cum /= cum[:, -1:]
    flat = (cum + np.arange(cum.shape[0])[:, None]).ravel()
    nxt = np.searchsorted(flat, idx + gen.uniform(size=size), side="right") - idx * S
    nxt = np.minimum(nxt, S - 1)
    rewards, costs = cmdp.reward[s, a], cmdp.costs[:, s, a].T
    if outcomes == "bernoulli":
        rewards = (gen.uniform(size=rewards.shape) < rewards).astype(float)
        costs = (gen.uniform(size=costs.shape) < costs).astype(float)
    return OfflineDataset(
        observations=s,
        actions=a,
        rewards=rewards,
        costs=costs,
        next_observations=nxt,
        terminals=np.zeros(size, dtype=bool),
        timeouts=np.zeros(size, dtype=bool),
    )


def concentrability(cmdp: TabularCMDP, policy: object, behaviour: object) -> float:
    """Single-policy concentrability ``C* = max d_pi / d_mu`` (inf when ``pi`` leaves the data's support)."""
    d_pi, d_mu = cmdp.occupancy(policy), cmdp.occupancy(behaviour)
    on = d_pi > 1e-12
    if (d_mu[on] <= 1e-12).any():
        return float("inf")
    return float((d_pi[on] / d_mu[on]).max())


def save_dsrl_npz(dataset: OfflineDataset, path: str | os.PathLike) -> Path:
    """Write the DSRL arrays to ``path`` (``.npz``) atomically."""
    import io

    buf = io.BytesIO()
    np.savez(buf, **{f: getattr(dataset, f) for f in FIELDS})
    return atomic_write_bytes(Path(path), buf.getvalue())


def load_dsrl_npz(path: str | os.PathLike) -> OfflineDataset:
    """Read a DSRL-style ``.npz`` (the arrays of :data:`FIELDS`; discrete observations as indices, or
    one-hot rows, which are turned into indices)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path: no such file {str(p)!r}")
    with np.load(p, allow_pickle=False) as z:
        missing = [f for f in FIELDS if f not in z.files]
        if missing:
            raise ValueError(f"path: {p.name} lacks the DSRL arrays {missing}")
        arrays = {f: z[f] for f in FIELDS}
    for f in ("observations", "next_observations"):
        a = arrays[f]
        if a.ndim == 2:  # one-hot rows, as DSRL stores a discrete observation vector
            if not ((a == 0) | (a == 1)).all() or not (a.sum(axis=1) == 1).all():
                raise ValueError(f"{f}: expected state indices or one-hot rows")
            arrays[f] = a.argmax(axis=1)
        elif a.dtype.kind == "f":
            if not np.all(a == np.round(a)):
                raise ValueError(f"{f}: expected integer state indices, got non-integral floats")
            arrays[f] = a.astype(np.int64)
    if arrays["actions"].dtype.kind == "f":
        a = arrays["actions"].reshape(len(arrays["actions"]), -1)
        if a.shape[1] != 1 or not np.all(a == np.round(a)):
            raise ValueError("actions: expected integer action indices")
        arrays["actions"] = a[:, 0].astype(np.int64)
    return OfflineDataset(**arrays)
