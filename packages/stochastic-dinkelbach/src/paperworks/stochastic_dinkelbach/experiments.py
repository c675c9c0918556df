"""Headline reproduction: regret rates, dependence on estimation error, bundled data sets, ETU vs PU.

Per seed:

1. **Rates** (generator :class:`GaussianStream`, known ``eta``): ``rate_replicates`` streams of
   ``max(sizes)`` rounds. The probability estimator is learned online (:func:`prequential_logistic`,
   averaged SGD) or given (the true ``eta``); the Dinkelbach-root tracker (Newton step) runs for F1, F2
   and Jaccard on both, plus the ``sqrt`` step and OFO for F1, and the concave-utility rule for G-mean.
   At each size ``n`` (a prefix of the stream): the online regret ``max_tau M_n(1[eta > tau]) - M_n(ours)``
   (the best fixed threshold on the true ``eta`` in hindsight, on the same rounds) and the population
   regret ``M* - M(1[eta_n > tau(lambda_n)])`` (exact, closed form), each averaged over the replicates.
2. **Estimation error**: the tracker on ``eta_t = clip(eta + s xi_t, 0, 1)`` (``xi_t ~ N(0, 1)``, the same
   draws at every level ``s``), ``noise_n`` rounds; population regret of the returned randomised
   classifier ``1[eta(x) + s xi > tau(lambda_n)]`` (exact by quadrature); per seed, the least-squares slope
   of the regret against ``s``.
3. **Bundled sets** (scikit-learn's breast_cancer with malignant as positive, digits one-vs-rest for each
   digit, wine one-vs-rest for each class): random stream orders; features standardised with the prefix's
   mean and spread; the same online logistic regression for every method; the final metric of the online
   predictions after the prefix (``prefix_fraction`` of the stream), for the Dinkelbach-root learner,
   threshold 0.5, a threshold tuned once on the prefix by ``TunedThresholdClassifierCV``, OFO and the best
   fixed threshold in hindsight (an oracle reference).
4. **ETU vs PU**: test samples of size ``n`` from the generator; the exact expected F1 of the ETU-optimal
   predictions (:func:`etu_expected_f1`, O(n^2)) and of the PU-optimal classifier ``1[eta > F*/2]``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from scipy.special import expit, logit

from paperworks.core import (
    Claim,
    Experiment,
    Paper,
    Progress,
    Report,
    SlopeClaim,
    loglog_slope,
    optional_pyplot,
)

from .dinkelbach import best_fixed_threshold_batch
from .estimators import OnlineLogisticRegression, prequential_logistic
from .etu import etu_expected_f1
from .metrics import confusion_counts, get_metric
from .online import ConcaveUtility, DinkelbachTracker, ofo_tracker, run_concave, run_trackers
from .synthetic import GaussianStream

__all__ = ["QUICK", "SIZES", "StochasticDinkelbachConfig", "StochasticDinkelbachExperiment"]

SIZES = (1000, 4000, 16000, 64000)  # the n for the rate claims
ETU_SIZES = (50, 200, 800)
NOISE_LEVELS = (0.0, 0.05, 0.1, 0.2)
METRICS = ("f1", "f2", "jaccard")
DATASETS = ("breast_cancer", "digits", "wine")
# dinkelbach_sqrt_step: the slower step, a diagnostic added after the first quick run (no claim on it)
METHODS = ("dinkelbach", "threshold_0.5", "tuned_once", "ofo", "hindsight", "dinkelbach_sqrt_step")
FLOOR = 1e-9  # regrets are floored here before the log-log fit (counted in *_nonpositive)


@dataclass(frozen=True)
class StochasticDinkelbachConfig:
    """Settings of the reproduction; the defaults are the full run's, :data:`QUICK` the quick run's.

    Generator: ``dim``, ``prior``, ``separation`` (see :class:`GaussianStream`). Estimator:
    ``learning_rate`` of the online logistic regression (step ``learning_rate / sqrt(t)``, averaged).
    Rates: ``rate_replicates`` streams of ``max(SIZES)`` rounds per seed; ``l1_test`` fresh points for
    the estimator's L1 error. Noise: ``noise_replicates`` streams of ``noise_n`` rounds. ETU:
    ``etu_replicates[i]`` test samples of size ``ETU_SIZES[i]``. Bundled (all of ``DATASETS``):
    ``permutations`` stream orders per one-vs-rest task, ``prefix_fraction``, ``tuning_cv`` folds and
    ``tuning_thresholds`` candidate thresholds for ``TunedThresholdClassifierCV``.
    """

    dim: int = 5
    prior: float = 0.25
    separation: float = 1.5
    learning_rate: float = 0.5
    rate_replicates: int = 16
    l1_test: int = 20_000
    noise_n: int = 16_000
    noise_replicates: int = 16
    etu_replicates: tuple[int, ...] = (400, 100, 25)
    permutations: int = 4
    prefix_fraction: float = 0.25
    tuning_cv: int = 5
    tuning_thresholds: int = 100

    def __post_init__(self) -> None:
        for name in (
            "dim",
            "rate_replicates",
            "l1_test",
            "noise_n",
            "noise_replicates",
            "permutations",
            "tuning_thresholds",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"StochasticDinkelbachConfig.{name}: expected a positive integer, got {v!r}")
        if not 0 < self.prior < 1:
            raise ValueError(f"StochasticDinkelbachConfig.prior: expected in (0, 1), got {self.prior}")
        for name in ("separation", "learning_rate"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"StochasticDinkelbachConfig.{name}: expected > 0, got {getattr(self, name)}"
                )
        reps = tuple(self.etu_replicates)
        if len(reps) != len(ETU_SIZES) or any(not isinstance(r, int) or r < 1 for r in reps):
            raise ValueError(
                f"StochasticDinkelbachConfig.etu_replicates: expected {len(ETU_SIZES)} positive integers "
                f"(one per size {ETU_SIZES}), got {reps}"
            )
        if not 0 < self.prefix_fraction < 1:
            raise ValueError(
                f"StochasticDinkelbachConfig.prefix_fraction: expected in (0, 1), got {self.prefix_fraction}"
            )
        if isinstance(self.tuning_cv, bool) or not isinstance(self.tuning_cv, int) or self.tuning_cv < 2:
            raise ValueError(
                f"StochasticDinkelbachConfig.tuning_cv: expected an integer >= 2, got {self.tuning_cv}"
            )
        object.__setattr__(self, "etu_replicates", reps)

    @property
    def stream(self) -> GaussianStream:
        return GaussianStream(self.dim, self.prior, self.separation)


# quick: the same sizes (the claims' metrics), fewer replicates and permutations
QUICK = StochasticDinkelbachConfig(
    rate_replicates=4,
    l1_test=5_000,
    noise_n=4_000,
    noise_replicates=4,
    etu_replicates=(40, 10, 3),
    permutations=1,
    tuning_cv=3,
)


def _slope_claims() -> tuple[SlopeClaim, ...]:
    out = []
    for m in METRICS:
        for kind, what in (("online", "online regret"), ("pop", "population regret")):
            out.append(
                SlopeClaim(
                    f"{kind}_regret_rate_{m}",
                    f"{what} of the Dinkelbach-root learner for {m.upper() if m != 'jaccard' else 'Jaccard'} "
                    "decays as n^(-1/2) (probability estimator learned online)",
                    f"{kind}_regret_{m}/n{{size}}",
                    sizes=SIZES,
                    band=(-0.65, -0.35),
                    note=(
                        "per seed, the log-log slope over n in {1e3, 4e3, 1.6e4, 6.4e4} of the regret "
                        "averaged over the replicate streams; "
                        + (
                            "online regret = best fixed threshold on the true eta in hindsight minus the "
                            "learner's realised metric on the same first n rounds"
                            if kind == "online"
                            else "population regret = M* - M(1[eta_n > tau(lambda_n)]), exact on the "
                            "generator"
                        )
                        + "; band fixed by the issue (the abstract's O~(n^-1/2), an upper bound)"
                    ),
                    paper_value="n^(-1/2) (slope -0.5), up to log factors",
                )
            )
    return tuple(out)


def _noise_claims() -> tuple[Claim, ...]:
    return tuple(
        Claim(
            f"regret_grows_with_estimation_error_{m}",
            f"population regret ({m}) grows with the conditional-probability estimation error",
            f"noise_regret_slope_{m}",
            ">",
            0.0,
            note="per seed, least-squares slope of the population regret of the returned classifier against "
            f"the noise level s in {NOISE_LEVELS} (eta_t = clip(eta + s xi, 0, 1), the same xi at every s); "
            "a linear fit because s = 0 is one of the levels; injected noise stands in for estimation error",
            kind="mechanism",
            paper_value="explicit dependence on the estimation error",
        )
        for m in METRICS
    )


def _bundled_claims() -> tuple[Claim, ...]:
    out = []
    for base, label in (
        ("threshold_0.5", "threshold 0.5"),
        ("tuned_once", "a threshold tuned once on a prefix"),
    ):
        for ds in DATASETS:
            out.append(
                Claim(
                    f"beats_{base.replace('.', '')}_{ds}",
                    f"on {ds}, the Dinkelbach-root learner's final online metric exceeds {label}'s",
                    f"diff_{base}_{ds}",
                    ">",
                    0.0,
                    note="paired: per seed, the mean over F1, F2 and Jaccard and over the one-vs-rest tasks "
                    "and stream orders of (ours - baseline), the metric of the online predictions after the "
                    "prefix; same estimator, stream and prefix for every method"
                    + ("; TunedThresholdClassifierCV on the prefix" if base == "tuned_once" else ""),
                    paired=True,
                )
            )
    return tuple(out)


ETU_CLAIM = SlopeClaim(
    "etu_pu_gap_shrinks",
    "the gap between the ETU-optimal and the PU-optimal classifier's expected test F1 shrinks with n",
    "etu_pu_gap/n{size}",
    sizes=ETU_SIZES,
    band=(-1e9, 0.0),
    note="per seed, the log-log slope over n in {50, 200, 800} of the mean (over test samples) of "
    "E[F1(ETU-optimal)] - E[F1(1[eta > F*/2])], both exact expectations over the labels given x; "
    "predicate: slope < 0",
    paper_value="ETU controlled by PU (gap -> 0)",
)


class StochasticDinkelbachExperiment(Experiment):
    """Regret rates, estimation-error dependence, bundled data sets and ETU vs PU."""

    slug: ClassVar[str] = "stochastic-dinkelbach"
    paper: ClassVar[Paper] = Paper(
        "Stochastic Dinkelbach-root: online learning of non-decomposable metrics (F-measure, Jaccard), "
        "online and population regret, ETU and PU",
        arxiv=None,
        note="no public text; method reconstructed from the abstract, Dinkelbach (1967), OFO (Busa-Fekete "
        "et al. 2015) and Kotlowski et al. 2024 (arXiv 2406.14743)",
    )
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int | None] = 2
    claims: ClassVar[tuple[Claim | SlopeClaim, ...]] = (
        *_slope_claims(),
        *_noise_claims(),
        *_bundled_claims(),
        ETU_CLAIM,
    )

    def __init__(self) -> None:
        self._curves: dict[str, dict[int, list[float]]] = {}

    def config(self, quick: bool) -> StochasticDinkelbachConfig:
        return QUICK if quick else StochasticDinkelbachConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        out: dict[str, float] = {}
        progress.log(f"seed {seed}: rates on the generator ({cfg.rate_replicates} streams of {SIZES[-1]})")
        out.update(self._rates(seed, cfg))
        progress.log(f"seed {seed}: estimation-error levels {NOISE_LEVELS}")
        out.update(self._noise(seed, cfg))
        for ds in DATASETS:
            progress.log(f"seed {seed}: bundled set {ds}")
            out.update(self._bundled(seed, cfg, ds))
        progress.log(f"seed {seed}: ETU vs PU at n in {ETU_SIZES}")
        out.update(self._etu(seed, cfg))
        return out

    # -- 1. rates --------------------------------------------------------------------------------
    def _rates(self, seed: int, cfg: StochasticDinkelbachConfig) -> dict[str, float]:
        gen = cfg.stream
        rng = np.random.default_rng([seed, 1])
        N, R = SIZES[-1], cfg.rate_replicates
        x, y, eta = gen.sample(N, rng, shape=(R,))
        probs, weights = prequential_logistic(x, y, learning_rate=cfg.learning_rate, checkpoints=SIZES)
        del x
        metrics = {m: get_metric(m) for m in METRICS}
        trackers, sources, names = [], [], []
        for m in METRICS:
            for src, tag in ((0, ""), (1, "_true_eta")):
                trackers.append(DinkelbachTracker(m))
                sources.append(src)
                names.append((m, f"{m}{tag}"))
        for src, tag in ((0, ""), (1, "_true_eta")):
            trackers.append(DinkelbachTracker("f1", step="sqrt"))
            sources.append(src)
            names.append(("f1", f"f1_sqrt_step{tag}"))
        trackers.append(ofo_tracker())
        sources.append(0)
        names.append(("f1", "f1_ofo"))
        stack = np.stack([probs, eta])
        preds, lams, final, _, _ = run_trackers(trackers, stack, y, sources=sources)
        out: dict[str, float] = {}
        best = {m: best_fixed_threshold_batch(eta, y, metrics[m], SIZES) for m in METRICS}
        opt = {m: gen.pu_optimum(metrics[m]).value for m in METRICS}
        for k, (m, key) in enumerate(names):
            met = metrics[m]
            on, pop = [], []
            for j, n in enumerate(SIZES):
                realised = met.value(*confusion_counts(y[:, :n], preds[k, :, :n]))
                on.append(float(np.mean(best[m][:, j] - realised)))
                lam_n = lams[k, :, n] if n < N else final[k]
                tau = met.threshold(lam_n)
                if sources[k] == 0:
                    w = weights[n]
                    with np.errstate(divide="ignore"):
                        value = gen.metric_of_halfspace(met, w[:, :-1], w[:, -1] - logit(tau))
                else:
                    value = gen.metric_of_threshold(met, tau)
                pop.append(float(np.mean(opt[m] - value)))
            for kind, vals in (("online", on), ("pop", pop)):
                arr = np.asarray(vals)
                out[f"{kind}_nonpositive_{key}"] = float(np.sum(arr <= 0))
                arr = np.maximum(arr, FLOOR)
                for n, v in zip(SIZES, arr):
                    out[f"{kind}_regret_{key}/n{n}"] = float(v)
                out[f"slope_{kind}_{key}"] = loglog_slope(SIZES, arr)[0]
                self._curves.setdefault(f"{kind}_{key}", {})[seed] = [float(v) for v in arr]
        # final online metric over the whole stream on the learned eta: ours vs threshold 0.5 (no claim)
        for k, (m, key) in enumerate(names):
            if key == m:
                met = metrics[m]
                out[f"gen_final_{m}_dinkelbach"] = float(np.mean(met.value(*confusion_counts(y, preds[k]))))
                half = (probs > 0.5).astype(np.int8)
                out[f"gen_final_{m}_threshold_0.5"] = float(np.mean(met.value(*confusion_counts(y, half))))
                out[f"gen_final_{m}_pu_optimum"] = opt[m]
        # the concave-utility rule (Kotlowski et al.) for G-mean, on the learned and the true eta
        util = ConcaveUtility("gmean")
        best_g = best_fixed_threshold_batch(eta, y, util, SIZES)
        both = run_concave(util, np.concatenate([probs, eta]), np.concatenate([y, y]), 1.0)
        for i, tag in enumerate(("", "_true_eta")):
            pg = both[i * R : (i + 1) * R]
            vals = []
            for j, n in enumerate(SIZES):
                realised = util.value(*confusion_counts(y[:, :n], pg[:, :n]))
                vals.append(float(np.mean(best_g[:, j] - realised)))
            arr = np.maximum(np.asarray(vals), FLOOR)
            for n, v in zip(SIZES, arr):
                out[f"online_regret_gmean{tag}/n{n}"] = float(v)
            out[f"slope_online_gmean{tag}"] = loglog_slope(SIZES, arr)[0]
        # the estimator's L1 error E|eta_n(x) - eta(x)| on fresh points
        xt, _, et = gen.sample(cfg.l1_test, np.random.default_rng([seed, 2]))
        l1 = []
        for n in SIZES:
            w = weights[n]
            l1.append(float(np.mean(np.abs(expit(xt @ w[:, :-1].T + w[:, -1]) - et[:, None]))))
        for n, v in zip(SIZES, l1):
            out[f"eta_l1_error/n{n}"] = v
        out["slope_eta_l1_error"] = loglog_slope(SIZES, l1)[0]
        return out

    # -- 2. estimation error -----------------------------------------------------------------------
    def _noise(self, seed: int, cfg: StochasticDinkelbachConfig) -> dict[str, float]:
        gen = cfg.stream
        rng = np.random.default_rng([seed, 3])
        R, n = cfg.noise_replicates, cfg.noise_n
        _, y, eta = gen.sample(n, rng, shape=(R,))
        xi = rng.standard_normal((R, n))
        stack = np.stack([np.clip(eta + s * xi, 0.0, 1.0) for s in NOISE_LEVELS])
        trackers, sources, keys = [], [], []
        for m in METRICS:
            for i, s in enumerate(NOISE_LEVELS):
                trackers.append(DinkelbachTracker(m))
                sources.append(i)
                keys.append((m, s))
        _, _, final, A, B = run_trackers(trackers, stack, y, sources=sources)
        out: dict[str, float] = {}
        for m in METRICS:
            met = get_metric(m)
            opt = gen.pu_optimum(met).value
            regrets = []
            for k, (mk, s) in enumerate(keys):
                if mk != m:
                    continue
                value = gen.metric_of_threshold(met, met.threshold(final[k]), noise=s)
                reg = float(np.mean(opt - value))
                regrets.append(reg)
                out[f"noise_pop_regret_{m}/s{s:g}"] = reg
                out[f"noise_online_metric_{m}/s{s:g}"] = float(np.mean(A[k] / B[k]))
            out[f"noise_regret_slope_{m}"] = float(np.polyfit(NOISE_LEVELS, regrets, 1)[0])
        return out

    # -- 3. bundled data sets ----------------------------------------------------------------------
    def _bundled(self, seed: int, cfg: StochasticDinkelbachConfig, ds: str) -> dict[str, float]:
        from sklearn.metrics import make_scorer
        from sklearn.model_selection import StratifiedKFold, TunedThresholdClassifierCV

        X, tasks = _load(ds)
        n = X.shape[0]
        m_pre = math.ceil(cfg.prefix_fraction * n)
        rng = np.random.default_rng([seed, 4, DATASETS.index(ds)])
        streams_x, streams_y = [], []
        for yk in tasks:
            for _ in range(cfg.permutations):
                perm = rng.permutation(n)
                xs = X[perm]
                mu, sd = xs[:m_pre].mean(0), xs[:m_pre].std(0)
                sd[sd == 0] = 1.0
                streams_x.append((xs - mu) / sd)
                streams_y.append(yk[perm])
        Xs, Ys = np.stack(streams_x), np.stack(streams_y)
        probs, _ = prequential_logistic(Xs, Ys, learning_rate=cfg.learning_rate)
        R = Xs.shape[0]
        out: dict[str, float] = {}
        results = {meth: {m: np.empty(R) for m in METRICS} for meth in METHODS}
        trackers = (
            [DinkelbachTracker(m) for m in METRICS]
            + [ofo_tracker(2.0 if m == "f2" else 1.0) for m in METRICS]
            + [DinkelbachTracker(m, step="sqrt") for m in METRICS]
        )
        preds, _, _, _, _ = run_trackers(trackers, probs[None], Ys)
        post = slice(m_pre, n)
        for mi, m in enumerate(METRICS):
            met = get_metric(m)

            def score(y_true, y_pred, met=met):
                return met.value(*confusion_counts(np.asarray(y_true), np.asarray(y_pred)))

            scorer = make_scorer(score)
            for r in range(R):
                yr, pr = Ys[r, post], probs[r, post]
                results["dinkelbach"][m][r] = met.value(*confusion_counts(yr, preds[mi, r, post]))
                results["ofo"][m][r] = met.value(*confusion_counts(yr, preds[len(METRICS) + mi, r, post]))
                results["dinkelbach_sqrt_step"][m][r] = met.value(
                    *confusion_counts(yr, preds[2 * len(METRICS) + mi, r, post])
                )
                results["threshold_0.5"][m][r] = met.value(*confusion_counts(yr, (pr > 0.5).astype(int)))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tuned = TunedThresholdClassifierCV(
                        OnlineLogisticRegression(learning_rate=cfg.learning_rate),
                        scoring=scorer,
                        cv=StratifiedKFold(cfg.tuning_cv, shuffle=True, random_state=seed),
                        thresholds=cfg.tuning_thresholds,
                    ).fit(Xs[r, :m_pre], Ys[r, :m_pre])
                thr = float(tuned.best_threshold_)
                results["tuned_once"][m][r] = met.value(*confusion_counts(yr, (pr > thr).astype(int)))
                results["hindsight"][m][r] = best_fixed_threshold_batch(pr[None], yr[None], met, (yr.size,))[
                    0, 0
                ]
        for meth in METHODS:
            for m in METRICS:
                out[f"bundled_{ds}_{meth}_{m}"] = float(results[meth][m].mean())
        for base in ("threshold_0.5", "tuned_once"):
            diffs = [results["dinkelbach"][m] - results[base][m] for m in METRICS]
            out[f"diff_{base}_{ds}"] = float(np.mean(diffs))
        return out

    # -- 4. ETU vs PU ------------------------------------------------------------------------------
    def _etu(self, seed: int, cfg: StochasticDinkelbachConfig) -> dict[str, float]:
        gen = cfg.stream
        f1 = get_metric("f1")
        tau = gen.pu_optimum(f1).threshold
        rng = np.random.default_rng([seed, 5])
        out: dict[str, float] = {}
        for n, reps in zip(ETU_SIZES, cfg.etu_replicates):
            etu, pu = [], []
            for _ in range(reps):
                _, _, eta = gen.sample(n, rng)
                E, _ = etu_expected_f1(eta)
                etu.append(float(E.max()))
                pu.append(float(E[int(np.sum(eta > tau))]))
            gap = float(np.mean(np.subtract(etu, pu)))
            out[f"etu_pu_gap/n{n}"] = max(gap, FLOOR)
            out[f"etu_expected_f1/n{n}"] = float(np.mean(etu))
            out[f"pu_expected_f1/n{n}"] = float(np.mean(pu))
        out["slope_etu_pu_gap"] = loglog_slope(ETU_SIZES, [out[f"etu_pu_gap/n{n}"] for n in ETU_SIZES])[0]
        return out

    # -- report ------------------------------------------------------------------------------------
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        def cell(key: str, fmt: str = "{:.4g}") -> str:
            v = np.array([s[key] for s in per_seed])
            if not np.all(np.isfinite(v)):
                return "–"
            if v.size == 1:
                return fmt.format(v[0])
            return f"{fmt.format(v.mean())} ± {v.std(ddof=1):.2g}"

        rows = [
            "| learner | online regret slope | population regret slope |"
            + "".join(f" online regret n={n} |" for n in SIZES),
            "| --- | --- | --- |" + " --- |" * len(SIZES),
        ]
        keys = [f"{m}{t}" for m in METRICS for t in ("", "_true_eta")] + [
            "f1_sqrt_step",
            "f1_sqrt_step_true_eta",
            "f1_ofo",
        ]
        for key in keys:
            rows.append(
                f"| {key} | {cell(f'slope_online_{key}', '{:.3f}')} | {cell(f'slope_pop_{key}', '{:.3f}')} |"
                + "".join(f" {cell(f'online_regret_{key}/n{n}')} |" for n in SIZES)
            )
        for key in ("gmean", "gmean_true_eta"):
            rows.append(
                f"| {key} (concave rule) | {cell(f'slope_online_{key}', '{:.3f}')} | – |"
                + "".join(f" {cell(f'online_regret_{key}/n{n}')} |" for n in SIZES)
            )
        rows.append(
            f"| estimator L1 error E\\|eta_n - eta\\| | {cell('slope_eta_l1_error', '{:.3f}')} | – |"
            + "".join(f" {cell(f'eta_l1_error/n{n}')} |" for n in SIZES)
        )
        t_rates = "\n".join(rows)
        rows = [
            "| metric |" + "".join(f" s={s:g} |" for s in NOISE_LEVELS) + " slope |",
            "| --- |" + " --- |" * 5,
        ]
        for m in METRICS:
            rows.append(
                f"| {m} |"
                + "".join(f" {cell(f'noise_pop_regret_{m}/s{s:g}')} |" for s in NOISE_LEVELS)
                + f" {cell(f'noise_regret_slope_{m}')} |"
            )
        t_noise = "\n".join(rows)
        rows = [
            "| data set | metric |" + "".join(f" {meth} |" for meth in METHODS),
            "| --- | --- |" + " --- |" * len(METHODS),
        ]
        for ds in DATASETS:
            for m in METRICS:
                rows.append(
                    f"| {ds} | {m} |"
                    + "".join(f" {cell(f'bundled_{ds}_{meth}_{m}', '{:.4f}')} |" for meth in METHODS)
                )
        t_bundled = "\n".join(rows)
        rows = ["| n | E[F1] ETU-optimal | E[F1] PU-optimal | gap |", "| --- | --- | --- | --- |"]
        for n in ETU_SIZES:
            rows.append(
                f"| {n} | {cell(f'etu_expected_f1/n{n}')} | {cell(f'pu_expected_f1/n{n}')} | "
                f"{cell(f'etu_pu_gap/n{n}')} |"
            )
        t_etu = "\n".join(rows)
        rows = ["| metric | Dinkelbach-root | threshold 0.5 | PU optimum M* |", "| --- | --- | --- | --- |"]
        for m in METRICS:
            rows.append(
                f"| {m} | {cell(f'gen_final_{m}_dinkelbach')} | {cell(f'gen_final_{m}_threshold_0.5')} | "
                f"{cell(f'gen_final_{m}_pu_optimum')} |"
            )
        t_gen = "\n".join(rows)
        return {
            "Rates on the generator: log-log slopes and online regret (mean ± sd over seeds)": t_rates,
            f"Generator: final online metric over {SIZES[-1]} rounds, learned eta (no claim)": t_gen,
            "Population regret against the noise level s of eta_t = eta + s xi (n = noise_n)": t_noise,
            "Bundled sets: final metric of the online predictions after the prefix": t_bundled,
            "ETU vs PU: exact expected test F1 on samples of size n": t_etu,
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None or not self._curves:
            return []
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        sizes = np.array(SIZES, dtype=float)
        colours = {"f1": "C0", "f2": "C1", "jaccard": "C2"}
        for ax, kind, title in zip(axes, ("online", "pop"), ("online regret", "population regret")):
            for m in METRICS:
                for tag, style in (("", "-"), ("_true_eta", ":")):
                    curves = self._curves.get(f"{kind}_{m}{tag}", {})
                    seeds = [s for s in report.seeds if s in curves]
                    if not seeds:
                        continue
                    vals = np.array([curves[s] for s in seeds])
                    for row in vals:
                        ax.plot(sizes, row, "o", color=colours[m], ms=3, alpha=0.5)
                    label = f"{m}, " + ("learned eta" if not tag else "true eta")
                    ax.plot(sizes, np.exp(np.log(vals).mean(0)), style, color=colours[m], label=label)
            ref = self._curves.get(f"{kind}_f1", {})
            if ref:
                first = np.exp(np.mean([np.log(v[0]) for v in ref.values()]))
                ax.plot(sizes, first * (sizes / sizes[0]) ** -0.5, "k--", lw=0.8, label="n^-1/2 reference")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("stream length n")
            ax.set_ylabel(title + " (mean over streams)")
            ax.set_title(title + ": points = seeds, lines = geometric mean")
            ax.legend(fontsize=7)
        fig.tight_layout()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / "regret_rates.png", dpi=120)
        plt.close(fig)
        return ["regret_rates.png"]


def _load(name: str):
    """Features (n, d) and the one-vs-rest label vectors of a bundled scikit-learn data set."""
    from sklearn import datasets

    if name == "breast_cancer":
        d = datasets.load_breast_cancer()
        return d.data.astype(float), [(d.target == 0).astype(np.int64)]  # malignant = positive (37%)
    if name == "digits":
        d = datasets.load_digits()
        return d.data.astype(float), [(d.target == k).astype(np.int64) for k in range(10)]
    d = datasets.load_wine()
    return d.data.astype(float), [(d.target == k).astype(np.int64) for k in range(3)]
