"""Headline reproduction: rates of offline learners under partial coverage, and the lower-bound construction.

Per seed: a chain (10 states, 3 actions, slip 0.1), a combination lock (8 states + goal, 3 actions, code drawn
from the seed) and a Garnet MDP (150 states, 4 actions, branching 3) with gamma 0.9 and costs in [-1, 0].
Two behaviours per MDP (exact C* reported):

- *partial support* ``0.8 pi* + 0.2 uniform(K(s))`` with ``K(s)`` = {pi*(s), one random other action}: the
other
  actions are never taken. FQI, LCB and CQL run on it (rates on the Garnet; zero suboptimality on the chain
  and
  the lock, which have value gaps);
- *soft covering* ``0.5 pi_tau* + 0.5 partial support``: covers the soft-optimal comparator only. Soft
  Q-learning runs on it; its regularised gap ``J_tau(pi_tau*) - J_tau(pi_hat)`` is averaged over the 3 MDPs.

Each quantity is the mean over ``replicates`` data sets per size; every policy is evaluated exactly (DP).
Lower bound: :mod:`.lower_bound` with leak 0, every learner (tabular and on the class's 4 features, GDE and
the
DEC rule on the finite class {Q*_plus, Q*_minus}) on data of each size; worst-of-the-two suboptimality.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paperworks.core import Experiment, Paper, Progress, Report, SlopeClaim, optional_pyplot
from paperworks.core.bench import pin_threads
from paperworks.core.claims import Claim
from paperworks.core.validate import positive_float, positive_int

from .algorithms import CQL, FQI, LCB, SoftQ
from .data import collect_dataset, concentrability, covering_behaviour, partial_support_behaviour
from .decision import dec_policy, gde_policy
from .lower_bound import completeness_residual, lower_bound_pair, realisability_residual
from .mdp import TabularMDP, chain_mdp, combination_lock, garnet_mdp, greedy_policy

__all__ = ["OfflineDECConfig", "OfflineDECExperiment", "QUICK"]

SIZES = (500, 2000, 8000, 32000)
ZERO = 1e-9


@dataclass(frozen=True)
class OfflineDECConfig:
    """``sizes``: data-set sizes; ``replicates``: data sets per size and seed; ``tau``: soft-Q temperature;
    ``beta``: bonus scale (times v_span); ``cql_alpha0``: CQL's alpha at size n is ``cql_alpha0 / sqrt(n)``;
    ``noise``: off-comparator mass of the partial-support behaviour; ``lb_delta``: the construction's
    delta."""

    sizes: tuple[int, ...] = SIZES
    replicates: int = 2
    gamma: float = 0.9
    tau: float = 0.2
    beta: float = 0.1
    cql_alpha0: float = 10.0
    noise: float = 0.2
    chain_states: int = 10
    lock_horizon: int = 8
    garnet_states: int = 150
    garnet_actions: int = 4
    lb_delta: float = 0.5
    dec_eps: float = 0.05

    def __post_init__(self) -> None:
        if len(self.sizes) < 3 or list(self.sizes) != sorted(set(self.sizes)):
            raise ValueError(f"sizes: expected >= 3 increasing sizes, got {self.sizes!r}")
        for k in ("replicates", "chain_states", "lock_horizon", "garnet_states", "garnet_actions"):
            positive_int(getattr(self, k), k)
        for k in ("tau", "cql_alpha0", "lb_delta", "dec_eps"):
            positive_float(getattr(self, k), k)


QUICK = OfflineDECConfig(replicates=1)


def _subopt(m: TabularMDP, pi: np.ndarray) -> float:
    return max(m.optimal_value() - m.value(pi), 0.0)


class OfflineDECExperiment(Experiment):
    slug = "offline-dec"
    paper = Paper(
        "On the Complexity of Offline Reinforcement Learning with Q*-Approximation and Partial Coverage",
        arxiv="2602.12107",
    )
    default_seeds = 5
    quick_seeds = 2
    claims = (
        Claim(
            "lower_bound_floor",
            "On the construction (Q*-realisable, Bellman complete, identical data laws) every algorithm's "
            "worst-of-the-two suboptimality stays >= Delta/4 at all n",
            metric="lb/worst_over_delta_min",
            op=">=",
            threshold=0.25,
            note="min over n and over 9 learners (tabular and linear FQI/LCB/soft-Q, CQL, GDE, DEC) "
            "of worst/Delta",
        ),
        SlopeClaim(
            "lower_bound_flat",
            "... and does not fall with n (slope in [-0.1, 0.1])",
            metric="lb/worst/n{size}",
            sizes=SIZES,
            band=(-0.1, 0.1),
            note="min over the learners of the worst-of-the-two suboptimality",
        ),
        Claim(
            "lower_bound_identical_data",
            "The two MDPs' data laws are identical (per-sample KL = 0)",
            metric="lb/kl_per_sample",
            op="<=",
            threshold=1e-12,
            exact=True,
        ),
        Claim(
            "lower_bound_class",
            "Both MDPs are Q*-realisable and Bellman complete in the 4-feature linear class (direct check)",
            metric="lb/class_residual",
            op="<=",
            threshold=1e-9,
            exact=True,
            note="max of the realisability and completeness residuals over both MDPs",
        ),
        SlopeClaim(
            "softq_rate",
            "Soft Q-learning under partial coverage: the regularised-objective gap falls at least as n^-1/2 "
            "(eps^-2 samples; the earlier bound was eps^-4, n^-1/4)",
            metric="softq/gap/n{size}",
            sizes=SIZES,
            band=(-10.0, -0.4),
            paper_value="eps^-2 (slope -1/2)",
            note="J_tau(pi_tau*) - J_tau(pi_hat), mean over chain, lock and Garnet; "
            "steeper slopes reported as measured",
        ),
        SlopeClaim(
            "cql_rate",
            "CQL's suboptimality falls at least as n^-0.4 under partial coverage (Garnet)",
            metric="cql/subopt/n{size}",
            sizes=SIZES,
            band=(-10.0, -0.4),
            note="alpha = cql_alpha0 / sqrt(n)",
        ),
        SlopeClaim(
            "lcb_rate",
            "LCB value iteration's suboptimality falls at least as n^-0.4 under partial coverage (Garnet)",
            metric="lcb/subopt/n{size}",
            sizes=SIZES,
            band=(-10.0, -0.4),
        ),
        SlopeClaim(
            "fqi_plateau",
            "Greedy FQI plateaus where coverage is partial (slope > -0.15, Garnet)",
            metric="fqi/subopt/n{size}",
            sizes=SIZES,
            band=(-0.15, 10.0),
            kind="mechanism",
            note="unseen actions are predicted 0, above every true (negative) value: extrapolation error",
        ),
        Claim(
            "gap_zero",
            "With a value gap, pessimistic greedy (LCB) reaches zero suboptimality from offline data alone "
            "at "
            "the largest n in >= 90% of runs (chain and lock)",
            metric="gap/lcb_zero_frac",
            op=">=",
            threshold=0.9,
            note="fraction of (MDP, data set) runs per seed with J* - J(pi_hat) <= 1e-9",
        ),
    )

    def config(self, quick: bool) -> OfflineDECConfig:
        return QUICK if quick else OfflineDECConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        steps = len(cfg.sizes) * (cfg.replicates + 1)
        with progress.counter(f"seed {seed}", total=steps) as bar, pin_threads(1):
            return self._run(seed, cfg, bar)

    def _run(self, seed: int, cfg: OfflineDECConfig, bar) -> dict[str, float]:
        rng = np.random.default_rng(seed)
        g = cfg.gamma
        mdps = {
            "chain": chain_mdp(cfg.chain_states, 3, 0.1, g),
            "lock": combination_lock(cfg.lock_horizon, 3, g, rng=rng),
            "garnet": garnet_mdp(cfg.garnet_states, cfg.garnet_actions, 3, g, rng=rng),
        }
        out: dict[str, float] = {}
        setup = {}
        for name, m in mdps.items():
            pi_star = greedy_policy(m.optimal_q())
            pi_soft = m.soft_optimal_policy(cfg.tau)
            partial = partial_support_behaviour(pi_star, 1, cfg.noise, rng=rng)
            soft_cover = covering_behaviour(pi_soft, partial, 0.5)
            setup[name] = (m, partial, soft_cover, m.soft_value(pi_soft, cfg.tau))
            out[f"cstar/{name}"] = concentrability(m, pi_star, partial)
            out[f"cstar_soft/{name}"] = concentrability(m, pi_soft, soft_cover)
        softq = SoftQ(cfg.tau, g, cfg.beta)
        for n in cfg.sizes:
            acc: dict[str, list[float]] = {
                k: [] for k in ("softq", "lcb", "cql", "fqi", "gap_lcb", "gap_cql")
            }
            cql = CQL(alpha=cfg.cql_alpha0 / np.sqrt(n), gamma=g)
            for _ in range(cfg.replicates):
                for name, (m, partial, soft_cover, j_soft) in setup.items():
                    d_soft = collect_dataset(m, soft_cover, n, rng=rng)
                    acc["softq"].append(j_soft - m.soft_value(softq.fit(d_soft).policy, cfg.tau))
                    d = collect_dataset(m, partial, n, rng=rng)
                    lcb = _subopt(m, LCB(g, cfg.beta).fit(d).policy)
                    cq = _subopt(m, cql.fit(d).policy)
                    if name == "garnet":
                        acc["lcb"].append(lcb)
                        acc["cql"].append(cq)
                        acc["fqi"].append(_subopt(m, FQI(g).fit(d).policy))
                    else:
                        acc["gap_lcb"].append(float(lcb <= ZERO))
                        acc["gap_cql"].append(float(cq <= ZERO))
                bar.update()
            out[f"softq/gap/n{n}"] = float(np.mean(acc["softq"]))
            for k in ("lcb", "cql", "fqi"):
                out[f"{k}/subopt/n{n}"] = float(np.mean(acc[k]))
            if n == cfg.sizes[-1]:
                out["gap/lcb_zero_frac"] = float(np.mean(acc["gap_lcb"]))
                out["gap/cql_zero_frac"] = float(np.mean(acc["gap_cql"]))
        out.update(self._lower_bound(cfg, rng, bar))
        return out

    def _lower_bound(self, cfg: OfflineDECConfig, rng: np.random.Generator, bar) -> dict[str, float]:
        pair = lower_bound_pair(cfg.gamma, cfg.lb_delta, leak=0.0)
        g = cfg.gamma
        phi = pair.features
        cands = np.stack([m.optimal_q() for m in pair.mdps])
        learners = {
            "FQI": lambda d: FQI(g).fit(d).policy,
            "LCB": lambda d: LCB(g, cfg.beta).fit(d).policy,
            "SoftQ": lambda d: SoftQ(cfg.tau, g, cfg.beta).fit(d).policy,
            "FQI-linear": lambda d: FQI(g).fit(d, phi).policy,
            "LCB-linear": lambda d: LCB(g, cfg.beta).fit(d, phi).policy,
            "SoftQ-linear": lambda d: SoftQ(cfg.tau, g, cfg.beta).fit(d, phi).policy,
            "GDE": lambda d: gde_policy(cands, d, g, cfg.dec_eps, pair.plus.initial),
            "DEC": lambda d: dec_policy(cands, d, g, cfg.dec_eps, pair.plus.initial),
        }
        out: dict[str, float] = {}
        ratios = []
        for n in cfg.sizes:
            d = collect_dataset(pair.plus, pair.behaviour, n, rng=rng)  # the same law under minus
            worst = {k: pair.worst_suboptimality(f(d)) for k, f in learners.items()}
            worst["CQL"] = pair.worst_suboptimality(CQL(cfg.cql_alpha0 / np.sqrt(n), g).fit(d).policy)
            out[f"lb/worst/n{n}"] = min(worst.values())
            ratios.append(min(worst.values()) / pair.delta_gap)
            bar.update()
        out["lb/worst_over_delta_min"] = float(min(ratios))
        out["lb/kl_per_sample"] = pair.data_kl_per_sample()
        out["lb/class_residual"] = max(
            max(realisability_residual(m, phi), completeness_residual(m, phi, rng=rng)) for m in pair.mdps
        )
        out["lb/cstar_minus"] = concentrability(
            pair.minus, greedy_policy(pair.minus.optimal_q()), pair.behaviour
        )
        out["lb/cstar_plus_infinite"] = float(
            np.isinf(concentrability(pair.plus, greedy_policy(pair.plus.optimal_q()), pair.behaviour))
        )
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)
        rows = [
            "| n | soft-Q gap | LCB subopt | CQL subopt | FQI subopt | lower bound worst |",
            "|---|---|---|---|---|---|",
        ]
        for n in cfg.sizes:
            cells = [
                f"{np.mean([r[f'{k}/n{n}'] for r in per_seed]):.4g}"
                for k in ("softq/gap", "lcb/subopt", "cql/subopt", "fqi/subopt", "lb/worst")
            ]
            rows.append(f"| {n:,} | " + " | ".join(cells) + " |")
        cstar = ["| MDP | C* (partial support, pi*) | C* (soft covering, pi_tau*) |", "|---|---|---|"]
        for name in ("chain", "lock", "garnet"):
            a = np.mean([r[f"cstar/{name}"] for r in per_seed])
            b = np.mean([r[f"cstar_soft/{name}"] for r in per_seed])
            cstar.append(f"| {name} | {a:.3g} | {b:.3g} |")
        return {
            "Means over seeds": "\n".join(rows),
            "Single-policy concentrability (mean over seeds)": "\n".join(cstar),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        cfg = self.config(report.quick)
        sizes = np.array(cfg.sizes, dtype=float)
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        series = (
            ("softq/gap", "soft-Q: regularised gap (3 MDPs)", "C0", "o"),
            ("lcb/subopt", "LCB: suboptimality (Garnet)", "C1", "s"),
            ("cql/subopt", "CQL: suboptimality (Garnet)", "C2", "^"),
            ("fqi/subopt", "greedy FQI: suboptimality (Garnet)", "C3", "v"),
        )
        ax = axes[0]
        for j, (key, label, color, marker) in enumerate(series):
            vals = np.array([[r[f"{key}/n{n}"] for n in cfg.sizes] for r in report.per_seed])
            jitter = 1 + 0.04 * (j - 1.5)
            for row in vals:
                ax.scatter(sizes * jitter, row, color=color, marker=marker, s=14, alpha=0.45)
            ax.plot(sizes * jitter, vals.mean(axis=0), color=color, marker=marker, label=label)
        ref = sizes**-0.5 * (
            np.mean([r[f"softq/gap/n{cfg.sizes[0]}"] for r in report.per_seed]) * sizes[0] ** 0.5
        )
        ax.plot(sizes, ref, color="grey", linestyle="--", label="n^-1/2 reference")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("dataset size n (transitions)")
        ax.set_ylabel("gap / suboptimality (return units)")
        ax.set_title("Rates under partial coverage (points: seeds)")
        ax.legend(fontsize=8)
        ax = axes[1]
        delta = cfg.gamma * cfg.lb_delta
        vals = np.array([[r[f"lb/worst/n{n}"] / delta for n in cfg.sizes] for r in report.per_seed])
        for row in vals:
            ax.scatter(sizes, row, color="C4", s=14, alpha=0.5)
        ax.plot(sizes, vals.mean(axis=0), color="C4", marker="o", label="best learner's worst-of-two / Delta")
        ax.axhline(0.25, color="black", linestyle=":", label="Delta/4 (claim floor)")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.2)
        ax.set_xlabel("dataset size n (transitions)")
        ax.set_ylabel("worst-of-two suboptimality / Delta")
        ax.set_title("Lower-bound construction")
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        name = "offline_dec_rates.png"
        fig.savefig(Path(folder) / name, dpi=120)
        plt.close(fig)
        return [name]
