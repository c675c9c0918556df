"""Headline reproduction: Pandora's Router on three domains and Pandora's Bidder.

Per seed and domain (multi-LLM, retrieval-augmented, reasoning budgets; see :mod:`.domains`):
queries are split 60/40 into train/test; the cheap estimator (a ridge head on query embeddings,
MiniLM in the full run, feature hashing in ``--quick``) is fitted on the training split at
willingness-to-pay ``lam = 10`` value units per dollar; on the test split every policy routes with
the same cheap beliefs and the same expensive readings ``Y = V + N(0, tau^2)``. The quality-vs-cost
curve repeats this for ``lam`` in {3, 10, 30} (and RouteLLM thresholds). The bidder experiment
takes the multi-LLM test split, the specialist most often best on the training split as the
strategic one, and prices each query at the best competing claim ``max_j (V_j + N(0, sc^2))``
with accurate (``sc = 0.02``) or noisy (``sc = 0.3``) competitors.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
from threadpoolctl import threadpool_limits

from paperworks.core import Claim, Experiment, Paper, Progress, Report, optional_pyplot

from .baselines import (
    RouteLLMRouter,
    cheap_only,
    evaluate,
    exhaustive,
    oracle,
    random_subset,
    uncertainty_threshold,
)
from .bidder import PandorasBidder, market_outcome
from .domains import make_domain
from .estimators import CheapValueEstimator, embed_texts, minilm_available
from .router import RoutingResult, pandoras_route

__all__ = ["QUICK", "PandorasRouterConfig", "PandorasRouterExperiment", "run_bidder", "run_domain"]

DOMAIN_NAMES = ("multi_llm", "retrieval", "reasoning")
POLICIES = ("router", "exhaustive", "cheap", "random", "uncertainty", "routellm", "oracle")
EMBEDDINGS = ("minilm", "hashing")


@dataclass(frozen=True)
class PandorasRouterConfig:
    """Settings of one run (defaults: the full run; :data:`QUICK`: ``--quick``).

    ``n_queries`` per domain, split ``train_fraction`` / rest into train and test; ``embedding`` of
    the query texts (``"minilm"``: the offline MiniLM encoder, ``"hashing"``: 128-d feature hashing);
    ``lam``: willingness to pay (value units per dollar) of the headline comparison, ``curve_lams``
    those of the quality-vs-cost sweep; ``routellm_thresholds``: the RouteLLM curve;
    ``ridge_alpha``: the cheap head's ridge penalty; ``uncertainty_z``: the uncertainty-threshold
    baseline's z; ``competitor_noise_accurate`` / ``_noisy``: the std of competing claims in the
    Bidder's market.
    """

    n_queries: int = 2000
    embedding: str = "minilm"
    train_fraction: float = 0.6
    lam: float = 10.0
    curve_lams: tuple[float, ...] = (3.0, 10.0, 30.0)
    routellm_thresholds: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
    ridge_alpha: float = 1.0
    uncertainty_z: float = 1.0
    competitor_noise_accurate: float = 0.02
    competitor_noise_noisy: float = 0.3

    def __post_init__(self) -> None:
        n = self.n_queries
        if isinstance(n, bool) or not isinstance(n, int) or n < 10:
            raise ValueError(f"PandorasRouterConfig.n_queries: expected an int >= 10, got {n!r}")
        if self.embedding not in EMBEDDINGS:
            raise ValueError(
                f"PandorasRouterConfig.embedding: expected one of {EMBEDDINGS}, got {self.embedding!r}"
            )
        if not 0.0 < self.train_fraction < 1.0:
            raise ValueError(
                "PandorasRouterConfig.train_fraction: expected a number in (0, 1), "
                f"got {self.train_fraction!r}"
            )
        for name in ("lam", "ridge_alpha", "competitor_noise_accurate", "competitor_noise_noisy"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and np.isfinite(v) and v > 0):
                raise ValueError(f"PandorasRouterConfig.{name}: expected a positive finite number, got {v!r}")
        if not (np.isfinite(self.uncertainty_z) and self.uncertainty_z >= 0):
            raise ValueError(
                "PandorasRouterConfig.uncertainty_z: expected a finite number >= 0, "
                f"got {self.uncertainty_z!r}"
            )
        if not self.curve_lams or any(not (np.isfinite(x) and x > 0) for x in self.curve_lams):
            raise ValueError(
                f"PandorasRouterConfig.curve_lams: expected positive finite numbers, got {self.curve_lams!r}"
            )
        if any(not 0.0 <= t <= 1.0 for t in self.routellm_thresholds):
            raise ValueError(
                "PandorasRouterConfig.routellm_thresholds: expected probabilities in [0, 1], "
                f"got {self.routellm_thresholds!r}"
            )

    @property
    def competitor_noise(self) -> dict[str, float]:
        """Label -> std of the competing claims: ``{"acc": ..., "noisy": ...}``."""
        return {"acc": self.competitor_noise_accurate, "noisy": self.competitor_noise_noisy}


QUICK = PandorasRouterConfig(n_queries=600, embedding="hashing")


def _routellm_choice(
    X_tr: np.ndarray, q_tr: np.ndarray, v_tr: np.ndarray, price_tr: np.ndarray, X_te: np.ndarray
) -> tuple[RouteLLMRouter, int, int, float]:
    """Strong = best mean quality on train; weak = best mean value among the cheaper half.

    Label: the strong model's success probability beats the weak one's by 0.05 (RouteLLM's
    "strong wins"). The threshold maximises mean value on the training split.
    """
    strong = int(np.argmax(q_tr.mean(axis=0)))
    cheap_half = np.argsort(price_tr.mean(axis=0))[: max(1, q_tr.shape[1] // 2)]
    weak = int(cheap_half[np.argmax(v_tr[:, cheap_half].mean(axis=0))])
    if weak == strong:
        weak = int(np.argsort(price_tr.mean(axis=0))[0])
    labels = (q_tr[:, strong] > q_tr[:, weak] + 0.05).astype(float)
    clf = RouteLLMRouter(alpha=1.0).fit(X_tr, labels)
    prob = clf.predict_proba(X_tr)
    grid = np.linspace(0.0, 1.0, 21)
    train_value = [np.where(prob > t, v_tr[:, strong], v_tr[:, weak]).mean() for t in grid]
    return clf, strong, weak, float(grid[int(np.argmax(train_value))])


def _two_model_result(go_strong: np.ndarray, strong: int, weak: int, k: int) -> RoutingResult:
    n = go_strong.shape[0]
    onehot = np.full((n, k), -1.0)
    onehot[np.arange(n), np.where(go_strong == 1, strong, weak)] = 1.0
    return cheap_only(onehot)


def run_domain(
    name: str,
    n: int,
    seed: int,
    *,
    embed: str,
    lams: tuple[float, ...] | None = None,
    config: PandorasRouterConfig | None = None,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """One domain, one seed: metrics ``{policy}_{gross,net,calls,total_cost}`` at ``config.lam``,
    curve points ``curve_{policy}_lam{lam}_{quality,cost}`` for ``lams`` (default: ``config.lam``
    alone), and the arrays the bidder needs. ``config``: the other settings (default: the full run's)."""
    cfg = PandorasRouterConfig() if config is None else config
    data = make_domain(name, n, seed)
    X = embed_texts(data.texts, model=embed)
    # The linear algebra here is small: one BLAS thread is faster than several on a busy machine.
    with threadpool_limits(1, user_api="blas"):
        return _run_domain(data, X, n, seed, (cfg.lam,) if lams is None else tuple(lams), cfg)


def _run_domain(data, X, n, seed, lams, cfg: PandorasRouterConfig):
    rng = np.random.default_rng(seed + 7919)
    perm = rng.permutation(n)
    n_tr = int(cfg.train_fraction * n)
    tr, te = perm[:n_tr], perm[n_tr:]
    eps = rng.normal(size=(te.size, data.quality.shape[1]))
    out: dict[str, float] = {}
    keep: dict[str, np.ndarray] = {}
    lam_list = sorted(set(lams) | {cfg.lam})
    k_count = data.quality.shape[1]
    # One ridge fit for every lam at once (columns stacked): the heads are independent per column.
    V_all = np.hstack([data.value(lam) for lam in lam_list])
    est = CheapValueEstimator(alpha=cfg.ridge_alpha, random_state=seed).fit(X[tr], V_all[tr])
    m_all, s_all = est.predict_belief(X[te])
    V_lam = data.value(cfg.lam)
    clf, strong, weak, thr = _routellm_choice(X[tr], data.quality[tr], V_lam[tr], data.price[tr], X[te])
    q_te, p_te = data.quality[te], data.price[te]
    idx = np.arange(te.size)
    for j, lam in enumerate(lam_list):
        cols = slice(j * k_count, (j + 1) * k_count)
        m, s, Vte = m_all[:, cols], s_all[:, cols], V_all[te][:, cols]
        Y = Vte + eps * data.tau
        c = lam * data.inspect_price
        router = pandoras_route(m, s, data.tau, c, Y)
        sigma = s * s / np.sqrt(s * s + data.tau**2)
        out[f"cost_over_sigma_lam{lam:g}"] = float((c[None, :] / sigma).mean())
        results = {
            "router": router,
            "exhaustive": exhaustive(m, s, data.tau, c, Y),
            "cheap": cheap_only(m),
            "random": random_subset(m, s, data.tau, c, Y, router.n_inspections, rng),
            "uncertainty": uncertainty_threshold(m, s, data.tau, c, Y, z=cfg.uncertainty_z),
            "oracle": oracle(Vte),
        }
        if lam == cfg.lam:
            results["routellm"] = _two_model_result(clf.route(X[te], thr), strong, weak, k_count)
        for pol, res in results.items():
            ev = evaluate(res, Vte, p_te, 1.0 / lam)
            if lam == cfg.lam:
                for key, val in ev.items():
                    out[f"{pol}_{key}"] = val
            out[f"curve_{pol}_lam{lam:g}_quality"] = float(q_te[idx, res.choice].mean())
            out[f"curve_{pol}_lam{lam:g}_cost"] = ev["total_cost"]
            out[f"curve_{pol}_lam{lam:g}_calls"] = ev["calls"]
        if lam == cfg.lam:
            for t in cfg.routellm_thresholds:
                res = _two_model_result(clf.route(X[te], t), strong, weak, k_count)
                out[f"curve_routellm_t{t:g}_quality"] = float(q_te[idx, res.choice].mean())
                out[f"curve_routellm_t{t:g}_cost"] = evaluate(res, Vte, p_te, 1.0 / lam)["total_cost"]
            best_train = np.bincount(np.argmax(V_lam[tr], axis=1), minlength=k_count)
            keep = {
                "V": Vte,
                "m": m,
                "s": s,
                "Y": Y,
                "c": c,
                "tau": data.tau,
                "strategic": np.array(int(np.argmax(best_train))),
            }
    out["quality_ratio"] = out["router_gross"] / out["exhaustive_gross"]
    out["call_ratio"] = out["router_calls"] / out["exhaustive_calls"]
    out["net_gain_vs_cheap"] = out["router_net"] - out["cheap_net"]
    return out, keep


def run_bidder(
    keep: dict[str, np.ndarray], seed: int, config: PandorasRouterConfig | None = None
) -> dict[str, float]:
    """Pandora's Bidder vs never/always self-assessing, with accurate and noisy competitors."""
    cfg = PandorasRouterConfig() if config is None else config
    rng = np.random.default_rng(seed + 104729)
    V, k = keep["V"], int(keep["strategic"])
    comp = np.delete(np.arange(V.shape[1]), k)
    out: dict[str, float] = {}
    for label, noise in cfg.competitor_noise.items():
        claims = V[:, comp] + rng.normal(0, noise, (V.shape[0], comp.size))
        winner = comp[np.argmax(claims, axis=1)]
        price = claims.max(axis=1)
        comp_value = V[np.arange(V.shape[0]), winner]
        for strategy in ("voi", "never", "always"):
            bidder = PandorasBidder(float(keep["tau"][k]), float(keep["c"][k]), strategy)
            bid = bidder.decide(keep["m"][:, k], keep["s"][:, k], price, keep["Y"][:, k])
            res = market_outcome(bid, V[:, k], price, comp_value)
            for key in ("efficiency", "utility", "self_assess_rate"):
                out[f"bidder_{label}_{strategy}_{key}"] = res[key]
        out[f"bidder_{label}_eff_gain"] = (
            out[f"bidder_{label}_voi_efficiency"] - out[f"bidder_{label}_never_efficiency"]
        )
        out[f"bidder_{label}_util_gain"] = (
            out[f"bidder_{label}_voi_utility"] - out[f"bidder_{label}_never_utility"]
        )
    return out


_DOMAIN_NOTE = "our generative model of the paper's {d} domain (domains.py), not its data"


def _domain_claims() -> tuple[Claim, ...]:
    claims: list[Claim] = []
    for d in DOMAIN_NAMES:
        where = _DOMAIN_NOTE.format(d=d)
        claims += [
            Claim(
                f"{d}_matches_exhaustive",
                f"{d}: the Router matches the routing quality of exhaustive estimation (issue: within 2%)",
                f"{d}_quality_ratio",
                ">=",
                0.98,
                note="gross value Router / exhaustive on the same test queries, beliefs and expensive "
                f"readings (paired per seed); {where}",
                paper_value="matches exhaustive",
                paired=True,
            ),
            Claim(
                f"{d}_fewer_calls",
                f"{d}: ... while querying the expensive estimator far less often "
                "(issue: at most 40% as often)",
                f"{d}_call_ratio",
                "<=",
                0.4,
                note="expensive calls per query Router / exhaustive (exhaustive calls all K), same "
                "queries (paired per seed); 0.4 is the issue's reading of 'far less often'. Review "
                "(issue 28): the cheap std s_k is one constant per specialist and errors are treated "
                f"as independent, which inflates the calls; {where}",
                paper_value="far less often",
                paired=True,
            ),
            Claim(
                f"{d}_beats_cheap",
                f"{d}: the Router beats cheap-only routing (net of estimation cost)",
                f"{d}_net_gain_vs_cheap",
                ">",
                0.0,
                note="net value Router - cheap-only on the same test queries (paired per seed); "
                f"implied by the abstract's trade-off, not stated in it; {where}",
                paired=True,
            ),
        ]
    market = "our market model: one strategic specialist facing the best competing claim as its price"
    claims += [
        Claim(
            "bidder_efficiency_accurate",
            "Bidder: value-of-information reasoning improves allocative "
            "efficiency when competing estimates are accurate (vs. never self-assessing)",
            "bidder_acc_eff_gain",
            ">",
            0.0,
            note="efficiency VOI bidder - never self-assessing, same queries and competing claims "
            f"(sd 0.02; paired per seed); {market}",
            paper_value="improves efficiency",
            paired=True,
        ),
        Claim(
            "bidder_utility_noisy",
            "Bidder: when competing estimates are noisy it can increase the "
            "strategic specialist's utility ...",
            "bidder_noisy_util_gain",
            ">",
            0.0,
            note="specialist utility VOI bidder - never self-assessing, same queries and competing "
            f"claims (sd 0.3; paired per seed); {market}",
            paper_value="can increase utility",
            paired=True,
        ),
        Claim(
            "bidder_efficiency_noisy",
            "Bidder: ... at the expense of allocative efficiency",
            "bidder_noisy_eff_gain",
            "<",
            0.0,
            note="efficiency VOI bidder - never self-assessing, same queries and competing claims "
            f"(sd 0.3; paired per seed); {market}, where its incentive aligns with welfare (issue 28)",
            paper_value="at the expense of efficiency",
            paired=True,
        ),
    ]
    return tuple(claims)


class PandorasRouterExperiment(Experiment):
    """Pandora's Router vs. baselines on three domains, and Pandora's Bidder."""

    slug: ClassVar[str] = "pandoras-router"
    paper: ClassVar[Paper] = Paper(
        "Pandora's Router and Pandora's Bidder: routing to specialists when value estimation costs",
        arxiv=None,
        note="no public text; reconstructed from the abstract, Weitzman (1979) and Doval (2018)",
    )
    claims: ClassVar[tuple[Claim, ...]] = _domain_claims()
    default_seeds: ClassVar[int] = 5

    def __init__(self, embed: str | None = None) -> None:
        if embed is not None and embed not in EMBEDDINGS:
            raise ValueError(f"embed: expected one of {EMBEDDINGS} or None, got {embed!r}")
        self.embed = embed

    def config(self, quick: bool) -> PandorasRouterConfig:
        """QUICK or the full run's settings; the embedding is the one the run will use (``embed``
        when given, else MiniLM in the full run when its package is installed, else hashing)."""
        cfg = QUICK if quick else PandorasRouterConfig()
        if self.embed is not None:
            return replace(cfg, embedding=self.embed)
        if cfg.embedding == "minilm" and not minilm_available():
            return replace(cfg, embedding="hashing")
        return cfg

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        embed = cfg.embedding
        metrics: dict[str, float] = {"embedding_is_minilm": float(embed == "minilm")}
        keep_llm: dict[str, np.ndarray] = {}
        for name in progress.track(DOMAIN_NAMES, f"domains (embedding: {embed})"):
            res, keep = run_domain(name, cfg.n_queries, seed, embed=embed, lams=cfg.curve_lams, config=cfg)
            metrics.update({f"{name}_{k}": v for k, v in res.items()})
            if name == "multi_llm":
                keep_llm = keep
        metrics.update(run_bidder(keep_llm, seed, cfg))
        return metrics

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)
        lam0, curve_lams, noise = cfg.lam, cfg.curve_lams, cfg.competitor_noise

        def cell(key: str, fmt: str = ".4f") -> str:
            vals = np.array([m[key] for m in per_seed])
            sd = vals.std(ddof=1) if vals.size > 1 else 0.0
            return f"{vals.mean():{fmt}} ± {sd:{fmt}}"

        tables = {}
        for d in DOMAIN_NAMES:
            rows = [
                "| policy | routing quality (gross value) | net value | expensive calls / query | "
                "total cost $ / query |",
                "| --- | --- | --- | --- | --- |",
            ]
            for pol in POLICIES:
                rows.append(
                    f"| {pol} | {cell(f'{d}_{pol}_gross')} | {cell(f'{d}_{pol}_net')} | "
                    f"{cell(f'{d}_{pol}_calls', '.2f')} | {cell(f'{d}_{pol}_total_cost', '.5f')} |"
                )
            tables[f"Routing on {d} (lam = {lam0:g}, test split, mean ± std over seeds)"] = "\n".join(rows)
        rows = [
            "| domain | lam | inspection cost / preposterior std | Router calls / query | "
            "exhaustive calls / query | call ratio |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for d in DOMAIN_NAMES:
            for lam in curve_lams:
                key = f"{d}_curve_{{}}_lam{lam:g}_calls"
                ratio = np.array([m[key.format("router")] / m[key.format("exhaustive")] for m in per_seed])
                rows.append(
                    f"| {d} | {lam:g} | {cell(f'{d}_cost_over_sigma_lam{lam:g}', '.3f')} | "
                    f"{cell(key.format('router'), '.2f')} | {cell(key.format('exhaustive'), '.2f')} | "
                    f"{ratio.mean():.3f} |"
                )
        tables["Expensive calls against the price of estimation (sweep over lam)"] = "\n".join(rows)
        rows = [
            "| competitors | strategy | efficiency | specialist utility | self-assess rate |",
            "| --- | --- | --- | --- | --- |",
        ]
        for label in noise:
            for strategy in ("voi", "never", "always"):
                p = f"bidder_{label}_{strategy}"
                rows.append(
                    f"| {label} (sd {noise[label]:g}) | {strategy} | {cell(p + '_efficiency')} "
                    f"| {cell(p + '_utility')} | {cell(p + '_self_assess_rate', '.3f')} |"
                )
        tables["Pandora's Bidder (multi_llm test split)"] = "\n".join(rows)
        return tables

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        s = report.summary
        cfg = self.config(report.quick)
        lam0, curve_lams, thresholds = cfg.lam, cfg.curve_lams, cfg.routellm_thresholds
        fig, axes = plt.subplots(1, len(DOMAIN_NAMES), figsize=(5 * len(DOMAIN_NAMES), 4))
        for ax, d in zip(axes, DOMAIN_NAMES):
            for pol in POLICIES:
                if pol == "routellm":
                    keys = [f"{d}_curve_routellm_t{t:g}" for t in thresholds]
                    keys.append(f"{d}_curve_routellm_lam{lam0:g}")
                else:
                    keys = [f"{d}_curve_{pol}_lam{lam:g}" for lam in curve_lams]
                xs = [s[k + "_cost"].mean for k in keys]
                ys = [s[k + "_quality"].mean for k in keys]
                order = np.argsort(xs)
                ax.plot(np.array(xs)[order], np.array(ys)[order], marker="o", label=pol)
            ax.set_xlabel("total cost per query ($, answer + estimation)")
            ax.set_ylabel("mean answer quality")
            ax.set_title(d)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(folder / "quality_vs_cost.png", dpi=110)
        plt.close(fig)
        return ["quality_vs_cost.png"]
