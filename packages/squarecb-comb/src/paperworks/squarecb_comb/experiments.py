"""Headline reproduction of SquareCB.Comb on generated contextual combinatorial semi-bandits.

Before any evaluation seed, every method's exploration parameter is tuned, on a grid fixed in
advance and of the same size for every method, on seeds of its own (``tune_seeds``, disjoint from
the evaluation seeds), at one configuration per environment; the value with the lowest mean final
regret over the tuning seeds is the one every evaluation seed uses. The tuning runs once per
experiment instance and configuration (cached), and its results are recorded in every seed's
metrics (``tune_<env>_<method>_<i>``: mean final regret at grid value ``i``; ``tuned_<env>_<method>``:
the value chosen), so the report shows them.

Per evaluation seed:

1. linear (realisable for the linear models) environment, ``(m, A)`` in ``(1, 20), (3, 100),
   (5, 300), (10, 1000)``, horizon ``T = 4000`` (quick: 500): SquareCB.Comb (log-barrier program,
   the headline method) and its closed-form IGW variant, per-slot IGW (vowpal wabbit's CCB with
   SquareCB), epsilon-greedy top-m, CombLinUCB and CombLinTS, all on a linear oracle, in lockstep on
   one context stream with common reward draws;
2. from SquareCB.Comb's cumulative regret: the geometric mean over ``(m, A)`` at 12 log-spaced rounds
   of ``[T/10, T]`` (slope claim in ``T``) and the final regret per ``m A`` (slope claim in ``m A``);
3. nonlinear environment (a GP-sampled reward, see :mod:`.environment`), ``(m, A) = (3, 100)``,
   horizon 2500 (quick: 500): the oracle-based methods on a random-features (RBF kernel) oracle,
   CombLinUCB / CombLinTS on the raw features (a misspecified linear model, as a practitioner would
   start) and CombLinUCB on the same random features (kernel UCB);
4. per-round time of SquareCB.Comb's act + learn at ``A = 1000, m = 10``, timed by the core bench
   harness (:func:`paperworks.core.bench.compare`: warm-up calls, then the median over
   ``timing_repeats`` timings, one thread) on the agent that the linear run trained (quick mode: a
   fresh agent after a 200-round run), one call being one round on a pool of pre-drawn contexts
   (:class:`ActLearnRound`).

Every seed runs with BLAS pinned to one thread (small matrices; a thread pool only adds overhead on a
shared machine). The settings of both runs are one frozen dataclass,
:class:`SquareCBCombExperimentConfig` (defaults: the full run; :data:`QUICK`: the quick run).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from paperworks.core import Claim, Experiment, Paper, Progress, Report, SlopeClaim, optional_pyplot
from paperworks.core.bench import compare, pin_threads
from paperworks.core.validate import finite_array

from .agent import CombinatorialAgent, SquareCBComb
from .baselines import CombLinTS, CombLinUCB, EpsilonGreedyTopM, PerSlotIGW
from .environment import EnvironmentConfig, SemiBanditEnvironment
from .oracles import LinearOracle, RandomFeaturesOracle
from .simulate import simulate

__all__ = [
    "QUICK",
    "ActLearnRound",
    "SquareCBCombExperiment",
    "SquareCBCombExperimentConfig",
    "loglog_slope",
    "time_per_round",
    "tune",
]

FULL_GRID = ((1, 20), (3, 100), (5, 300), (10, 1000))
MA_SIZES = tuple(m * A for m, A in FULL_GRID)  # 20, 300, 1500, 10000
OURS = "squarecb_comb"
LINEAR_METHODS = (OURS, "squarecb_comb_igw", "per_slot_igw", "eps_greedy", "comb_linucb", "comb_lints")
NONLINEAR_METHODS = (*LINEAR_METHODS, "comb_linucb_rff")
VARIANTS = ("squarecb_comb_igw",)  # our own variants: reported, never a baseline
PARAM = {  # the exploration parameter each method is tuned on
    OURS: "gamma_scale",
    "squarecb_comb_igw": "gamma_scale",
    "per_slot_igw": "gamma_scale",
    "eps_greedy": "epsilon",
    "comb_linucb": "alpha",
    "comb_linucb_rff": "alpha",
    "comb_lints": "v",
}
TIMED = (10, 1000)  # (m, A) of the per-round time claim
# Rounds of the sqrt(T) slope claim, in thousandths of the horizon: 12 log-spaced points of [T/10, T]
# rounded to even thousandths, so that they are whole rounds for any horizon that is a multiple of 500.
REGRET_PERMILLE = (100, 124, 152, 188, 232, 284, 352, 432, 534, 658, 812, 1000)


def _baselines(methods: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in methods if k != OURS and k not in VARIANTS)


@dataclass(frozen=True)
class SquareCBCombExperimentConfig:
    """Settings of the reproduction; the defaults are the full run's, :data:`QUICK` the quick run's.

    Attributes:
        horizon: rounds ``T`` of each linear run (a multiple of 500, see ``REGRET_PERMILLE``).
        grid: the linear configurations ``(m, A)``; the ``m A`` slope claim needs all of
            ``FULL_GRID`` (its sizes are fixed).
        dim: feature dimension ``d`` of the environments and of the linear models.
        linear_methods, nonlinear_methods: the methods run in each environment (``squarecb_comb``
            always; the claims compare it with the others but its own variants).
        nonlinear, nonlinear_horizon: the nonlinear environment's ``(m, A)`` and rounds.
        lengthscale: the GP reward's RBF length scale.
        rff_features, rff_bandwidth: the random-features oracle of the nonlinear environment (fixed
            before any bandit run, from a supervised fit on tuning-seed data; README, Fidelity).
        gamma_grid, epsilon_grid, alpha_grid, v_grid: tuning grids of ``gamma_scale`` (SquareCB.Comb,
            its IGW variant, per-slot IGW), ``epsilon``, ``alpha`` (UCB) and ``v`` (Thompson
            sampling); all of one size. ``epsilon``, ``alpha`` and ``v`` include 0 (greedy), the edge
            of their range; a first tuning pass on a lower gamma grid (1 .. 1000) and grids without 0
            chose grid edges, so the grids were extended before the reported run.
        tune_seeds: seeds of the tuning runs (disjoint from the evaluation seeds 0..).
        tune_linear: ``(m, A)`` of the linear tuning runs (at ``horizon`` rounds); the nonlinear ones
            run at ``nonlinear`` and ``nonlinear_horizon``.
        timing_rounds: 0 to time act + learn at ``(m, A) = (10, 1000)`` on the agent trained by the
            linear run (whose grid must then include it), else the rounds a fresh agent plays
            before it is timed.
        timing_repeats: timings of the per-round time (each of auto-calibrated calls, >= 10 ms); the
            metric is their median.
    """

    horizon: int = 4_000
    grid: tuple[tuple[int, int], ...] = FULL_GRID
    dim: int = 10
    linear_methods: tuple[str, ...] = LINEAR_METHODS
    nonlinear_methods: tuple[str, ...] = NONLINEAR_METHODS
    nonlinear: tuple[int, int] = (3, 100)
    nonlinear_horizon: int = 2_500
    lengthscale: float = 0.7
    rff_features: int = 128
    rff_bandwidth: float = 1.0
    gamma_grid: tuple[float, ...] = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
    epsilon_grid: tuple[float, ...] = (0.0, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03)
    alpha_grid: tuple[float, ...] = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
    v_grid: tuple[float, ...] = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
    tune_seeds: tuple[int, ...] = (1000, 1001)
    tune_linear: tuple[int, int] = (3, 100)
    timing_rounds: int = 0
    timing_repeats: int = 20

    def __post_init__(self) -> None:
        for name, low in (("horizon", 500), ("dim", 2), ("nonlinear_horizon", 1), ("timing_repeats", 2)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name}: expected an int >= {low}, got {v!r}")
        for name in ("rff_features", "timing_rounds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}: expected a non-negative int, got {v!r}")
        if self.rff_features < 1:
            raise ValueError(f"rff_features: expected an int >= 1, got {self.rff_features}")
        if any(self.horizon * p % 1000 for p in REGRET_PERMILLE):
            raise ValueError(
                f"horizon: expected a multiple of 500 (whole checkpoint rounds), got {self.horizon}"
            )
        for name in ("lengthscale", "rff_bandwidth"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v) or v <= 0:
                raise ValueError(f"{name}: expected a positive finite number, got {v!r}")
        grids = {k: getattr(self, k) for k in ("gamma_grid", "epsilon_grid", "alpha_grid", "v_grid")}
        for name, g in grids.items():
            low_ok = (lambda x: x > 0) if name == "gamma_grid" else (lambda x: x >= 0)
            if not g or any(not isinstance(x, int | float) or not np.isfinite(x) or not low_ok(x) for x in g):
                sign = "positive" if name == "gamma_grid" else "non-negative"
                raise ValueError(f"{name}: expected {sign} finite values, got {g!r}")
            if list(g) != sorted(set(g)):
                raise ValueError(f"{name}: expected distinct increasing values, got {g!r}")
        if len({len(g) for g in grids.values()}) != 1:
            raise ValueError(
                f"gamma_grid: expected every tuning grid of one size, got {[len(g) for g in grids.values()]}"
            )
        if max(self.epsilon_grid) > 1:
            raise ValueError(f"epsilon_grid: expected probabilities, got {self.epsilon_grid!r}")
        if (
            not self.tune_seeds
            or len(set(self.tune_seeds)) != len(self.tune_seeds)
            or min(self.tune_seeds) < 100
        ):
            raise ValueError(
                f"tune_seeds: expected distinct seeds >= 100 (apart from the evaluation seeds), "
                f"got {self.tune_seeds!r}"
            )
        for name, cells in (
            ("grid", self.grid),
            ("nonlinear", (self.nonlinear,)),
            ("tune_linear", (self.tune_linear,)),
        ):
            if not cells or len(set(cells)) != len(cells):
                raise ValueError(f"{name}: expected distinct (m, A) pairs, got {cells!r}")
            for cell in cells:
                if (
                    len(cell) != 2
                    or not all(isinstance(x, int) and x >= 1 for x in cell)
                    or cell[0] > cell[1]
                ):
                    raise ValueError(f"{name}: expected (m, A) with 1 <= m <= A, got {cell!r}")
        for name, allowed in (("linear_methods", LINEAR_METHODS), ("nonlinear_methods", NONLINEAR_METHODS)):
            ms = getattr(self, name)
            if OURS not in ms or set(ms) - set(allowed) or len(set(ms)) != len(ms) or not _baselines(ms):
                raise ValueError(
                    f"{name}: expected {OURS!r} and at least one baseline from {allowed}, got {ms!r}"
                )
        if self.timing_rounds == 0 and TIMED not in self.grid:
            raise ValueError(f"timing_rounds: 0 times the linear run, whose grid lacks {TIMED}")

    def param_grid(self, method: str) -> tuple[float, ...]:
        """The tuning grid of ``method``'s exploration parameter."""
        return getattr(
            self,
            {"gamma_scale": "gamma_grid", "epsilon": "epsilon_grid", "alpha": "alpha_grid", "v": "v_grid"}[
                PARAM[method]
            ],
        )


QUICK = SquareCBCombExperimentConfig(
    horizon=500,
    linear_methods=(OURS, "per_slot_igw", "comb_linucb"),
    nonlinear_methods=(OURS, "per_slot_igw", "comb_linucb"),
    nonlinear_horizon=500,
    gamma_grid=(10.0, 100.0, 1000.0),
    epsilon_grid=(0.01, 0.03, 0.1),
    alpha_grid=(0.1, 0.3, 1.0),
    v_grid=(0.1, 0.3, 1.0),
    tune_seeds=(1000,),
    tune_linear=(3, 100),
    timing_rounds=200,
)


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``log y`` on ``log x`` (both positive, >= 2 points), a float."""
    x = finite_array(x, "x", ndim=1)
    y = finite_array(y, "y", shape=x.shape)
    if x.size < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("x, y: expected two equal-length positive arrays of at least 2 points")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


class ActLearnRound:
    """One round of ``agent``'s act + learn per call, cycling through pre-drawn contexts of ``env``.

    The contexts and the reward draws (arm ``i`` pays when a uniform falls below its mean, as in
    :func:`~paperworks.squarecb_comb.simulate.simulate`) are drawn at construction, so a call times
    only ``act`` and ``learn`` (plus the indexing of the played arms' rewards).
    """

    def __init__(self, agent: CombinatorialAgent, env: SemiBanditEnvironment, pool: int = 32) -> None:
        if isinstance(pool, bool) or not isinstance(pool, int) or pool < 1:
            raise ValueError(f"pool: expected a positive int, got {pool!r}")
        if not isinstance(agent, CombinatorialAgent):
            raise TypeError(f"agent: expected a CombinatorialAgent, got {type(agent).__name__}")
        self.agent = agent
        self.contexts: list[np.ndarray] = []
        self.paid: list[np.ndarray] = []
        for _ in range(pool):
            X = env.context()
            mu = env.mean_rewards(X)
            self.contexts.append(X)
            self.paid.append((env.rng.random(mu.size) < mu).astype(float))
        self.calls = 0

    def __call__(self) -> None:
        j = self.calls % len(self.contexts)
        self.calls += 1
        X = self.contexts[j]
        a = self.agent.act(X)
        self.agent.learn(X, a, self.paid[j][a])


def time_per_round(agent: CombinatorialAgent, env: SemiBanditEnvironment, repeats: int) -> float:
    """Median seconds of one act + learn round of ``agent`` (core bench harness, one thread)."""
    res = compare(
        {"agent": ActLearnRound(agent, env)},
        ours="agent",
        warmup=5,
        repeats=repeats,
        min_time_s=0.01,
        threads=1,
    )
    return res.row().side("agent").median_s


def _make(
    method: str, A: int, m: int, seed: int, value: float, cfg: SquareCBCombExperimentConfig, kernel: bool
):
    """One agent of ``method`` with its exploration parameter at ``value``.

    ``kernel``: the oracle-based methods (and ``comb_linucb_rff``) get a random-features oracle;
    ``comb_linucb`` / ``comb_lints`` always model the raw features linearly.
    """
    d = cfg.dim

    def oracle():
        if kernel:
            return RandomFeaturesOracle(d, cfg.rff_features, cfg.rff_bandwidth, seed=seed)
        return LinearOracle(d)

    if method == OURS:
        return SquareCBComb(A, m, oracle(), gamma_scale=value, seed=seed)
    if method == "squarecb_comb_igw":
        return SquareCBComb(A, m, oracle(), gamma_scale=value, exploration="igw", seed=seed)
    if method == "per_slot_igw":
        return PerSlotIGW(A, m, oracle(), gamma_scale=value, seed=seed)
    if method == "eps_greedy":
        return EpsilonGreedyTopM(A, m, oracle(), epsilon=value, seed=seed)
    if method == "comb_linucb":
        return CombLinUCB(A, m, LinearOracle(d), alpha=value, seed=seed)
    if method == "comb_lints":
        return CombLinTS(A, m, LinearOracle(d), v=value, seed=seed)
    if method == "comb_linucb_rff":
        return CombLinUCB(
            A,
            m,
            RandomFeaturesOracle(d, cfg.rff_features, cfg.rff_bandwidth, seed=seed),
            alpha=value,
            seed=seed,
        )
    raise ValueError(f"method: expected one of {NONLINEAR_METHODS}, got {method!r}")


def _env(
    kind: str, cell: tuple[int, int], seed: int, cfg: SquareCBCombExperimentConfig
) -> SemiBanditEnvironment:
    m, A = cell
    if kind == "linear":
        return SemiBanditEnvironment(EnvironmentConfig(A, m, cfg.dim, "linear"), seed=10_000 * seed + A + m)
    conf = EnvironmentConfig(A, m, cfg.dim, "nonlinear", lengthscale=cfg.lengthscale)
    return SemiBanditEnvironment(conf, seed=10_000 * seed + 7)


def tune(
    cfg: SquareCBCombExperimentConfig, progress: Progress | None = None
) -> dict[str, dict[str, tuple[float, list[float]]]]:
    """Tune every method's exploration parameter on ``cfg.tune_seeds``; same grid size for all.

    Returns ``{env: {method: (chosen value, mean final regret per grid value)}}`` for ``env`` in
    ``("linear", "nonlinear")``. All grid values of all methods of one environment run in lockstep on
    one context stream per tuning seed (common reward draws), at ``cfg.tune_linear`` and ``cfg.horizon``
    (linear) or ``cfg.nonlinear`` and ``cfg.nonlinear_horizon`` (nonlinear).
    """
    progress = progress or Progress(enabled=False)
    out: dict[str, dict[str, tuple[float, list[float]]]] = {}
    plan = (
        ("linear", cfg.tune_linear, cfg.horizon, cfg.linear_methods),
        ("nonlinear", cfg.nonlinear, cfg.nonlinear_horizon, cfg.nonlinear_methods),
    )
    for kind, cell, horizon, methods in plan:
        m, A = cell
        sums = {k: np.zeros(len(cfg.param_grid(k))) for k in methods}
        for s in cfg.tune_seeds:
            progress.log(f"tuning ({kind}, m={m}, A={A}, T={horizon}, seed {s})")
            agents = {
                f"{k}|{i}": _make(k, A, m, s, float(v), cfg, kernel=kind == "nonlinear")
                for k in methods
                for i, v in enumerate(cfg.param_grid(k))
            }
            for name, r in simulate(agents, _env(kind, cell, s, cfg), horizon).items():
                k, i = name.split("|")
                sums[k][int(i)] += r.final_regret
        out[kind] = {}
        for k in methods:
            mean = sums[k] / len(cfg.tune_seeds)
            out[kind][k] = (float(cfg.param_grid(k)[int(np.argmin(mean))]), mean.tolist())
    return out


def _tag(m: int, A: int) -> str:
    return f"m{m}_A{A}"


class SquareCBCombExperiment(Experiment):
    """Regret scaling in T and in m A, tuned comparisons with baselines (linear, nonlinear), time."""

    slug: ClassVar[str] = "squarecb-comb"
    paper: ClassVar[Paper] = Paper(
        "SquareCB.Comb: contextual combinatorial semi-bandits with general reward function approximation",
        arxiv=None,
        note="no public text; method reconstructed from the abstract and SquareCB (Foster & Rakhlin 2020)",
    )
    claims: ClassVar[tuple[Claim | SlopeClaim, ...]] = (
        SlopeClaim(
            "regret_sqrt_T",
            "cumulative regret grows like sqrt(T) (log-log slope in T, linear environment, geometric "
            "mean over (m, A))",
            "regret_geomean_at_{size}permille_T",
            sizes=REGRET_PERMILLE,
            band=(0.4, 0.6),
            note="per seed, the log-log slope of the geometric mean over (m, A) of SquareCB.Comb's "
            "cumulative regret at 12 log-spaced rounds of [T/10, T] (sizes in thousandths of T); band "
            "0.5 +- 0.1, fixed before the run. Near-tautological, hence a mechanism claim: with "
            "gamma_t ~ sqrt(t) the exploration term alone grows like sqrt(T), so the slope mostly "
            "checks the schedule, not the paper's bound",
            kind="mechanism",
            paper_value="sqrt(T) (slope 0.5)",
        ),
        SlopeClaim(
            "regret_sqrt_mA",
            "regret scales with m and A as sqrt(m A) (log-log slope of R_T against m A, linear environment)",
            "regret_squarecb_comb_at_mA{size}",
            sizes=MA_SIZES,
            band=(0.4, 0.6),
            note="per seed, the log-log slope of SquareCB.Comb's final regret R_T over the 4 (m, A) "
            "configurations (m A = 20, 300, 1500, 10000); band 0.5 +- 0.1, fixed before the run. The "
            "paper's bound is an upper bound: a slope below the band is consistent with it but is not "
            "the sqrt(m A) rate",
            paper_value="sqrt(m A) (slope 0.5)",
        ),
        Claim(
            "beats_baselines_linear",
            "lower regret than the baselines (linear environment, every method tuned alike)",
            "regret_ratio_to_best_baseline_linear",
            "<",
            1.0,
            note="paired: per seed, mean over (m, A) of R_T(SquareCB.Comb) / min over baselines R_T on the "
            "same contexts and reward draws; baselines per-slot IGW, epsilon-greedy, CombLinUCB, "
            "CombLinTS, each at its tuned parameter; the abstract states a bound, not an empirical "
            "comparison",
            paired=True,
        ),
        Claim(
            "beats_baselines_nonlinear",
            "lower regret than the baselines when the reward is nonlinear (general function approximation)",
            "regret_ratio_to_best_baseline_nonlinear",
            "<",
            1.0,
            note="paired: per seed, R_T(SquareCB.Comb on a random-features oracle) / min over baselines "
            "R_T; baselines per-slot IGW and epsilon-greedy (same oracle), CombLinUCB and CombLinTS "
            "(misspecified linear model), CombLinUCB on the same random features, each tuned alike",
            paired=True,
        ),
        Claim(
            "per_round_time",
            "per-round computation stays practical for large arm sets (act+learn < 5 ms at A=1000, m=10)",
            "ms_per_round_A1000_m10",
            "<",
            5.0,
            note="median wall time of one act + learn round over 20 timings (core bench harness, one "
            "thread) on the agent trained by the linear run (quick: a fresh agent after 200 rounds)",
            machine_dependent=True,
        ),
    )
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int | None] = 3  # the quick run stays under 30 s on a loaded 2-core machine

    def __init__(self) -> None:
        self._tuned: dict[str, dict[str, dict[str, tuple[float, list[float]]]]] = {}

    def config(self, quick: bool) -> SquareCBCombExperimentConfig:
        return QUICK if quick else SquareCBCombExperimentConfig()

    def tuning(
        self, quick: bool, progress: Progress | None = None
    ) -> dict[str, dict[str, tuple[float, list[float]]]]:
        """:func:`tune` of this run's config, computed once per config (the seeds reuse it)."""
        cfg = self.config(quick)
        key = repr(dataclasses.astuple(cfg))
        if key not in self._tuned:
            with pin_threads(1):
                self._tuned[key] = tune(cfg, progress)
        return self._tuned[key]

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        tuned = self.tuning(quick, progress)
        with pin_threads(1):
            out = self._run_seed(seed, cfg, tuned, progress)
        for kind, per in tuned.items():
            for k, (value, means) in per.items():
                out[f"tuned_{kind}_{k}"] = value
                for i, v in enumerate(means):
                    out[f"tune_{kind}_{k}_{i}"] = v
        return out

    def _run_seed(
        self, seed: int, cfg: SquareCBCombExperimentConfig, tuned, progress: Progress
    ) -> dict[str, float]:
        T = cfg.horizon
        permille_rounds = np.array([T * p // 1000 for p in REGRET_PERMILLE])
        out: dict[str, float] = {}
        lin_base = _baselines(cfg.linear_methods)
        ratios, log_curves = [], []
        for m, A in progress.track(cfg.grid, desc=f"linear grid (seed {seed})"):
            env = _env("linear", (m, A), seed, cfg)
            agents = {
                k: _make(k, A, m, seed, tuned["linear"][k][0], cfg, kernel=False) for k in cfg.linear_methods
            }
            res = simulate(agents, env, T)
            tag = _tag(m, A)
            for name, r in res.items():
                out[f"regret_{name}_{tag}"] = r.final_regret
            curve = res[OURS].cumulative_regret
            out[f"regret_{OURS}_at_mA{m * A}"] = res[OURS].final_regret
            out[f"slope_T_{tag}"] = loglog_slope(
                permille_rounds, np.maximum(curve[permille_rounds - 1], 1e-12)
            )
            log_curves.append(np.log(np.maximum(curve[permille_rounds - 1], 1e-12)))
            ratios.append(res[OURS].final_regret / min(res[b].final_regret for b in lin_base))
            out[f"ratio_linear_{tag}"] = ratios[-1]
            out[f"ms_per_round_{tag}"] = 1e3 * res[OURS].seconds_per_round
            if (m, A) == TIMED and not cfg.timing_rounds:
                out["ms_per_round_A1000_m10"] = 1e3 * time_per_round(agents[OURS], env, cfg.timing_repeats)
        out["regret_ratio_to_best_baseline_linear"] = float(np.mean(ratios))
        geomean = np.exp(np.mean(log_curves, axis=0))
        for p, g in zip(REGRET_PERMILLE, geomean):
            out[f"regret_geomean_at_{p}permille_T"] = float(g)

        m, A = cfg.nonlinear
        progress.log(f"nonlinear environment m={m}, A={A}, T={cfg.nonlinear_horizon} (seed {seed})")
        env = _env("nonlinear", cfg.nonlinear, seed, cfg)
        agents = {
            k: _make(k, A, m, seed, tuned["nonlinear"][k][0], cfg, kernel=True) for k in cfg.nonlinear_methods
        }
        res = simulate(agents, env, cfg.nonlinear_horizon)
        for name, r in res.items():
            out[f"nonlinear_regret_{name}"] = r.final_regret
        out["regret_ratio_to_best_baseline_nonlinear"] = res[OURS].final_regret / min(
            res[b].final_regret for b in _baselines(cfg.nonlinear_methods)
        )

        if cfg.timing_rounds:  # timing at the large arm set, after a short run
            m, A = TIMED
            env = SemiBanditEnvironment(EnvironmentConfig(A, m, cfg.dim, "linear"), seed=seed)
            ours = SquareCBComb(A, m, LinearOracle(cfg.dim), gamma_scale=tuned["linear"][OURS][0], seed=seed)
            simulate({"ours": ours}, env, cfg.timing_rounds)
            out["ms_per_round_A1000_m10"] = 1e3 * time_per_round(ours, env, cfg.timing_repeats)
        return out

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)

        def cell(key: str) -> str:
            v = np.array([s[key] for s in per_seed])
            return f"{v.mean():.1f} ± {v.std(ddof=1) if v.size > 1 else 0.0:.1f}"

        lm = cfg.linear_methods
        rows = ["| (m, A) | " + " | ".join(lm) + " | slope in T (ours) |", "|" + " --- |" * (len(lm) + 2)]
        for m, A in cfg.grid:
            tag = _tag(m, A)
            slope = np.mean([s[f"slope_T_{tag}"] for s in per_seed])
            rows.append(
                f"| ({m}, {A}) | " + " | ".join(cell(f"regret_{k}_{tag}") for k in lm) + f" | {slope:.3f} |"
            )
        rows2 = ["| method | oracle | regret R_T |", "| --- | --- | --- |"]
        for k in cfg.nonlinear_methods:
            oracle = "linear (raw features)" if k in ("comb_linucb", "comb_lints") else "random features"
            rows2.append(f"| {k} | {oracle} | {cell(f'nonlinear_regret_{k}')} |")
        s0 = per_seed[0]
        rows3 = [
            "| environment | method | parameter | grid (mean final regret on the tuning seeds) | chosen |",
            "| --- | --- | --- | --- | --- |",
        ]
        for kind, methods in (("linear", lm), ("nonlinear", cfg.nonlinear_methods)):
            for k in methods:
                grid = cfg.param_grid(k)
                vals = [s0[f"tune_{kind}_{k}_{i}"] for i in range(len(grid))]
                chosen = s0[f"tuned_{kind}_{k}"]
                edge = " (grid edge)" if chosen in (grid[0], grid[-1]) else ""
                cells = ", ".join(f"{g:g}: {v:.0f}" for g, v in zip(grid, vals))
                rows3.append(f"| {kind} | {k} | {PARAM[k]} | {cells} | {chosen:g}{edge} |")
        m, A = cfg.nonlinear
        return {
            "Linear environment: final cumulative regret R_T (mean ± std over seeds)": "\n".join(rows),
            f"Nonlinear environment (GP reward, m={m}, A={A}): final cumulative regret": "\n".join(rows2),
            f"Tuning on seeds {list(cfg.tune_seeds)} (same grid size for every method)": "\n".join(rows3),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        """``regret_vs_T.png``: a 2 x 2 grid drawn from ``report.per_seed`` (every seed shown).

        (a) SquareCB.Comb's cumulative regret against the round (geometric mean over ``(m, A)``, the
        slope claim's quantity): one thin line per seed, the seeds' min-max band, their mean, and a
        slope-0.5 reference drawn below it; (b) final regret ``R_T`` of every linear-environment method
        against ``m A``: per-seed points, means joined, with a slope-0.5 reference; (c) final regret of
        every method in the nonlinear environment, per seed; (d) per seed,
        ``R_T(SquareCB.Comb) / min over baselines R_T`` per linear configuration and in the nonlinear
        environment (the paired ratios of the comparison claims).
        """
        plt = optional_pyplot()
        if plt is None or not report.per_seed:
            return []
        from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

        cfg = self.config(report.quick)
        rc = report.config or {}
        grid = [tuple(int(x) for x in cell) for cell in rc.get("grid", cfg.grid)]
        horizon = int(rc.get("horizon", cfg.horizon))
        per_seed = report.per_seed
        n = len(per_seed)
        plain = FuncFormatter(lambda v, _: f"{v:g}")

        def log_y(ax) -> None:
            ax.set_yscale("log")
            lo, hi = ax.get_ylim()
            decades = np.log10(hi / lo)  # denser labels on a short axis, sparser on a long one
            subs = (
                (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
                if decades < 1.2
                else (1.0, 2.0, 5.0)
                if decades < 3
                else (1.0,)
            )
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(NullFormatter())

        def log_x(ax, ticks) -> None:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_formatter(NullFormatter())

        fig, axes = plt.subplots(2, 2, figsize=(10.5, 8.0))
        (ax_t, ax_ma), (ax_sl, ax_ra) = axes
        methods = list(dict.fromkeys([*NONLINEAR_METHODS]))
        colors = dict(zip(methods, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
        markers = dict(zip(methods, ("o", "P", "s", "^", "v", "D", "X")))
        styles = dict(zip(methods, ("-", (0, (1, 1)), "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1)))))
        lin_methods = [k for k in LINEAR_METHODS if f"regret_{k}_{_tag(*grid[0])}" in per_seed[0]]
        nl_methods = [k for k in NONLINEAR_METHODS if f"nonlinear_regret_{k}" in per_seed[0]]
        rng = np.random.default_rng(0)  # horizontal jitter of per-seed points only

        # (a) the slope claim's curve
        t = np.array([horizon * p / 1000 for p in REGRET_PERMILLE])
        curves = np.array(
            [[s[f"regret_geomean_at_{p}permille_T"] for p in REGRET_PERMILLE] for s in per_seed]
        )
        ours_c = colors["squarecb_comb"]
        for i, c in enumerate(curves):
            ax_t.plot(t, c, color=ours_c, lw=0.7, alpha=0.45, label="one seed" if i == 0 else None)
        if n > 1:
            ax_t.fill_between(
                t, curves.min(0), curves.max(0), color=ours_c, alpha=0.15, lw=0, label="seed range"
            )
        mean = np.exp(np.log(curves).mean(0))
        slopes = [loglog_slope(t, c) for c in curves]
        ax_t.plot(
            t,
            mean,
            color=ours_c,
            lw=2.2,
            marker="o",
            ms=4,
            zorder=5,
            label=f"SquareCB.Comb, geo. mean of {n} seed(s) (mean slope {np.mean(slopes):.2f})",
        )
        ax_t.plot(
            t,
            0.6 * mean[0] * np.sqrt(t / t[0]),
            color="0.35",
            ls="--",
            lw=1.2,
            zorder=2,
            label="slope 0.5 (sqrt T) reference, drawn below",
        )
        log_x(ax_t, [x for x in (50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000) if t[0] <= x <= t[-1]])
        log_y(ax_t)
        ax_t.set_xlabel("round t (log scale)")
        ax_t.set_ylabel("cumulative regret (expected reward lost)")
        ax_t.set_title("(a) SquareCB.Comb regret vs t, geo. mean over (m, A)", fontsize=10)
        ax_t.legend(fontsize=7, loc="upper left")

        # (b) final regret of every method against m A
        mA = np.array([m * A for m, A in grid], dtype=float)
        for k, name in enumerate(lin_methods):
            keys = [f"regret_{name}_{_tag(m, A)}" for m, A in grid]
            vals = np.array([[s[key] for key in keys] for s in per_seed])
            shift = 10 ** (0.02 * (k - (len(lin_methods) - 1) / 2))  # methods side by side at each m A
            x = mA * shift
            jit = 10 ** rng.uniform(-0.008, 0.008, size=vals.shape)
            ax_ma.scatter(x * jit, vals, s=14, color=colors[name], marker=markers[name], alpha=0.6, lw=0)
            ax_ma.plot(
                x,
                np.exp(np.log(vals).mean(0)),
                color=colors[name],
                marker=markers[name],
                ls=styles[name],
                lw=2.0 if name == "squarecb_comb" else 1.2,
                ms=5,
                zorder=5 if name == "squarecb_comb" else 3,
                label=name,
            )
        ours_final = np.array([[s[f"regret_{OURS}_{_tag(m, A)}"] for m, A in grid] for s in per_seed])
        g0 = float(np.exp(np.log(ours_final[:, 0]).mean()))
        ax_ma.plot(
            mA,
            0.5 * g0 * np.sqrt(mA / mA[0]),
            color="0.35",
            ls="--",
            lw=1.2,
            zorder=2,
            label="slope 0.5 (sqrt mA) reference",
        )
        log_x(ax_ma, list(mA))
        ax_ma.set_yscale("log")
        lo, hi = ax_ma.get_ylim()
        ax_ma.set_ylim(lo, hi * (hi / lo) ** 0.35)  # headroom so the legend covers no data
        log_y(ax_ma)
        ax_ma.set_xlabel("m A (arms chosen x arms; log scale)")
        ax_ma.set_ylabel(f"final cumulative regret R_T, T = {horizon}")
        ax_ma.set_title("(b) linear env.: R_T per method (dots: seeds; lines: geo. means)", fontsize=10)
        ax_ma.legend(fontsize=7, loc="upper left", ncol=2)

        # (c) nonlinear environment: final regret of every method, per seed
        idx_nl = np.arange(len(nl_methods))
        for j, name in enumerate(nl_methods):
            vals = np.array([s[f"nonlinear_regret_{name}"] for s in per_seed])
            ax_sl.scatter(
                j + rng.uniform(-0.12, 0.12, n),
                vals,
                s=16,
                color=colors[name],
                marker=markers[name],
                alpha=0.7,
                lw=0,
            )
            ax_sl.plot([j - 0.25, j + 0.25], [vals.mean()] * 2, color=colors[name], lw=2.2)
        ax_sl.plot([], [], color="0.3", lw=2.2, label="mean over seeds")
        ax_sl.scatter([], [], s=16, color="0.3", label="one seed")
        short = {
            "squarecb_comb": "ours",
            "squarecb_comb_igw": "ours,\nIGW",
            "per_slot_igw": "per-slot\nIGW",
            "eps_greedy": "eps-\ngreedy",
            "comb_linucb": "LinUCB\n(linear)",
            "comb_lints": "LinTS\n(linear)",
            "comb_linucb_rff": "LinUCB\n(RFF)",
        }
        ax_sl.set_xticks(idx_nl, [short[k] for k in nl_methods], fontsize=7)
        ax_sl.set_xlim(-0.6, len(nl_methods) - 0.4)
        ax_sl.set_xlabel("method (ours: SquareCB.Comb; oracle: random features unless marked linear)")
        ax_sl.set_ylabel(
            f"final cumulative regret R_T, T = {int(rc.get('nonlinear_horizon', cfg.nonlinear_horizon))}"
        )
        ax_sl.set_title("(c) nonlinear (GP) env.: R_T per method and seed", fontsize=10)
        ax_sl.legend(fontsize=7, loc="best")

        # (d) paired ratios to the best baseline, per seed: linear configurations and the nonlinear env.
        idx = np.arange(len(grid) + 1)
        labels = [f"({m}, {A})" for m, A in grid] + [
            "nonlinear\n(3, 100)" if tuple(rc.get("nonlinear", cfg.nonlinear)) == (3, 100) else "nonlinear"
        ]
        ratio = np.array(
            [
                [s[f"ratio_linear_{_tag(m, A)}"] for m, A in grid]
                + [s["regret_ratio_to_best_baseline_nonlinear"]]
                for s in per_seed
            ]
        )
        ax_ra.axhline(1.0, color="0.35", ls="--", lw=1.0, zorder=1, label="1 (equal to best baseline)")
        for j in idx:
            ax_ra.scatter(
                j + rng.uniform(-0.08, 0.08, n),
                ratio[:, j],
                s=16,
                color=ours_c,
                alpha=0.6,
                lw=0,
                label="one seed" if j == 0 else None,
                zorder=3,
            )
        ax_ra.plot(
            idx,
            np.exp(np.log(ratio).mean(0)),
            color=ours_c,
            marker="_",
            ms=18,
            mew=2,
            ls="none",
            label="geo. mean",
            zorder=4,
        )
        ax_ra.set_xticks(idx, labels, fontsize=8)
        ax_ra.set_xlim(-0.5, len(idx) - 0.5)
        log_y(ax_ra)
        ax_ra.set_xlabel("linear configuration (m, A), and the nonlinear environment")
        ax_ra.set_ylabel("R_T(SquareCB.Comb) / min baseline R_T (ratio)")
        ax_ra.set_title("(d) regret ratio to the best tuned baseline (below 1: better)", fontsize=10)
        ax_ra.legend(fontsize=7, loc="best")

        fig.suptitle(f"SquareCB.Comb, {'quick' if report.quick else 'full'} run, {n} seed(s)", fontsize=11)
        fig.tight_layout()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / "regret_vs_T.png", dpi=110)
        plt.close(fig)
        return ["regret_vs_T.png"]
