"""Headline reproduction: BOOST against the standard weightings on generated 20-questions dialogues.

Per seed (:mod:`.tasks` for the generative model): 24 real training trajectories, 24 held-out real
validation trajectories, and a pool of 480 synthetic ones from simulators with shifted answer
semantics (latent shift delta) and behaviour of mixed quality (latent eps). Every method trains the
same MLP policy (:mod:`.policy`) with the same inner budget (``inner.steps`` AdamW steps of
``inner.batch`` trajectories) and a tuning grid of the same size (3), selected by NLL on the real
validation trajectories; the reported quantity is the selected policy's *exact* success rate in the
real environment (every task rolled out greedily, weighted by the task prior), never its training
objective. Then BOOST's learned head is swept over a weight temperature (fresh policies on fixed
weights), and the real-only/uniform/BOOST comparison is repeated on a more shifted source mix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from scipy.stats import spearmanr

from paperworks.core import Claim, Experiment, Paper, Progress, choose_device, optional_pyplot, torch_threads

from .baselines import DomainClassifier, domain_classifier_weights, oracle_weights, rwr_weights, topq_weights
from .policy import BoostConfig, InnerConfig, train_boost, train_weighted, trajectory_features, val_nll
from .tasks import DialogueTaskConfig, exact_success, generate, merge
from .weights import effective_sample_size, normalize_weights, task_shift_proxy, type_coverage

__all__ = ["BASELINES", "METHODS", "QUICK", "BoostReweightConfig", "BoostReweightExperiment"]

METHODS = ("real_only", "uniform", "topq", "rwr", "dc", "boost", "oracle")
BASELINES = ("real_only", "uniform", "topq", "rwr", "dc")
LABELS = {
    "real_only": "real only",
    "uniform": "uniform",
    "topq": "top-q by return",
    "rwr": "RWR",
    "dc": "domain-classifier IW",
    "boost": "BOOST",
    "oracle": "oracle (truth)",
}


@dataclass(frozen=True)
class BoostReweightConfig:
    """One run's settings; the defaults are the full run's, :data:`QUICK` the quick one's.

    ``n_real``/``n_val``/``n_synthetic``: pool sizes; ``mix``/``shifted_mix``: P(delta = 0..3) of the
    synthetic sources in the headline and in the most shifted mix. Grids (3 values each, the same size
    for every method, selected by real validation NLL): AdamW weight decay for real-only
    (``wd_grid_real``) and uniform,
    q for top-q, beta for RWR, gamma for the domain-classifier weights and the oracle, the head's
    learning rate for BOOST. ``temperatures``: the weight-temperature sweep of BOOST's learned head
    (``inf`` = uniform), from flat to concentrated.
    """

    tasks: DialogueTaskConfig = field(default_factory=DialogueTaskConfig)
    n_real: int = 24
    n_val: int = 24
    n_synthetic: int = 480
    mix: tuple[float, ...] = (0.4, 0.2, 0.2, 0.2)
    shifted_mix: tuple[float, ...] = (0.1, 0.3, 0.3, 0.3)
    inner: InnerConfig = field(default_factory=InnerConfig)
    boost: BoostConfig = field(default_factory=BoostConfig)
    wd_grid_real: tuple[float, ...] = (1.0, 3.0, 10.0)
    wd_grid: tuple[float, ...] = (0.0, 0.03, 0.1)
    q_grid: tuple[float, ...] = (0.5, 0.75, 0.9)
    beta_grid: tuple[float, ...] = (0.3, 1.0, 3.0)
    gamma_grid: tuple[float, ...] = (0.25, 0.5, 1.0)
    head_lr_grid: tuple[float, ...] = (0.003, 0.01, 0.03)
    oracle_grid: tuple[float, ...] = (1.0, 2.0, 4.0)
    temperatures: tuple[float, ...] = (float("inf"), 3.0, 1.0, 0.3, 0.1, 0.03)

    def __post_init__(self) -> None:
        grids = (
            self.wd_grid_real,
            self.wd_grid,
            self.q_grid,
            self.beta_grid,
            self.gamma_grid,
            self.head_lr_grid,
            self.oracle_grid,
        )
        if len({len(g) for g in grids}) != 1 or not grids[0]:
            raise ValueError("grids: every method's tuning grid must have the same (positive) size")
        if len(self.temperatures) < 3 or self.temperatures[0] != float("inf"):
            raise ValueError("temperatures: expected >= 3 values starting with inf (uniform)")
        if any(not t > 0 for t in self.temperatures):
            raise ValueError(f"temperatures: expected values > 0, got {self.temperatures}")
        if list(self.temperatures[1:]) != sorted(self.temperatures[1:], reverse=True):
            raise ValueError("temperatures: expected a decreasing sweep (flat to concentrated)")
        for name in ("mix", "shifted_mix"):
            p = np.asarray(getattr(self, name))
            if p.shape != (self.tasks.max_delta + 1,) or abs(p.sum() - 1) > 1e-6 or np.any(p < 0):
                raise ValueError(f"{name}: expected {self.tasks.max_delta + 1} probabilities summing to 1")

    @property
    def grid_size(self) -> int:
        return len(self.wd_grid)


QUICK = BoostReweightConfig(
    n_synthetic=240,
    inner=InnerConfig(steps=200),
    wd_grid_real=(3.0,),
    wd_grid=(0.01,),
    q_grid=(0.75,),
    beta_grid=(1.0,),
    gamma_grid=(0.5,),
    head_lr_grid=(0.01,),
    oracle_grid=(2.0,),
    temperatures=(float("inf"), 1.0, 0.03),
)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(spearmanr(a, b)[0])


class BoostReweightExperiment(Experiment):
    slug = "boost-reweight"
    paper = Paper(
        "Bilevel Optimization of Synthetic Trajectories for Multi-Turn LLM Fine-Tuning (BOOST)",
        arxiv="2605.24743",
    )
    default_seeds = 5
    quick_seeds = 1
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "beats_uniform",
            "BOOST outperforms uniform treatment of real + synthetic trajectories",
            "success_boost",
            ">",
            0.0,
            baseline="success_uniform",
            note="exact success rate on the real task distribution, paired by seed",
        ),
        Claim(
            "beats_best_baseline",
            "BOOST consistently outperforms multiple baselines",
            "success_boost",
            ">",
            0.0,
            baseline="success_best_baseline",
            note="best of real-only, uniform, top-q, RWR, domain-classifier IW, per seed "
            "(max on the test quantity)",
        ),
        Claim(
            "weights_track_realism",
            "BOOST upweights synthetic trajectories that align with the real data distribution",
            "rho_realism",
            ">",
            0.3,
            note="Spearman of BOOST's weights with the true realism 1 - delta/3 over the synthetic pool",
        ),
        Claim(
            "weights_track_quality",
            "BOOST upweights synthetic trajectories of higher quality",
            "rho_quality",
            ">",
            0.3,
            note="Spearman of BOOST's weights with the true quality 1 - eps over the synthetic pool",
        ),
        Claim(
            "ess_falls",
            "Concentrating weight lowers the effective sample size",
            "rho_ess_concentration",
            "<",
            0.0,
            kind="mechanism",
            note="Spearman over the temperature sweep of concentration (1/T) with the synthetic pool's ESS",
        ),
        Claim(
            "shift_falls",
            "Concentrating BOOST's weight lowers the task-shift term",
            "rho_shift_concentration",
            "<",
            0.0,
            kind="mechanism",
            note="Spearman over the sweep of 1/T with the weighted domain-classifier log-odds "
            "(synthetic vs real)",
        ),
        Claim(
            "success_peaks_inside",
            "The trade-off: success peaks inside the weight-temperature sweep, not at either end",
            "sweep_peak_inside",
            ">",
            0.0,
            kind="mechanism",
            note="mean success of the interior temperatures minus the better of the two ends",
        ),
        Claim(
            "boost_ge_real_only_shifted",
            "BOOST is at least as good as real-only on the most shifted source mix",
            "success_boost_shifted",
            ">=",
            0.0,
            baseline="success_real_only",
        ),
        Claim(
            "uniform_below_real_only_shifted",
            "Naive uniform treatment degrades performance below real-only on the most shifted mix",
            "success_uniform_shifted",
            "<",
            0.0,
            baseline="success_real_only",
        ),
    )

    def config(self, quick: bool) -> BoostReweightConfig:
        return QUICK if quick else BoostReweightConfig()

    # -- one seed ------------------------------------------------------------------------------------
    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        device = torch.device(choose_device())
        with torch_threads(1):
            return self._run(seed, cfg, device, progress)

    def _run(
        self, seed: int, cfg: BoostReweightConfig, device: torch.device, progress: Progress
    ) -> dict[str, float]:
        tc = cfg.tasks
        g = np.random.default_rng([seed, 53])
        real = generate(tc, cfg.n_real, g, real=True, id_prefix="real")
        val = generate(tc, cfg.n_val, g, real=True, id_prefix="val").to(device)
        syn = generate(tc, cfg.n_synthetic, g, real=False, delta_probs=cfg.mix, id_prefix="syn")
        syn_shift = generate(tc, cfg.n_synthetic, g, real=False, delta_probs=cfg.shifted_mix, id_prefix="shf")
        pool = merge(real, syn).to(device)
        pool_shift = merge(real, syn_shift).to(device)
        kw = {"obs_dim": tc.obs_dim, "n_actions": tc.n_actions, "seed": seed}
        is_real = pool.is_real
        done = [0]

        def tick() -> None:
            done[0] += 1

        def select(candidates):
            """(val NLL, index, policy, extra) of the best candidate by real validation NLL."""
            scored = [(val_nll(c[0], val), i, *c) for i, c in enumerate(candidates)]
            best = min(scored, key=lambda s: (s[0], s[1]))
            return best

        def fixed(pl, syn_w, inner=cfg.inner):
            w = np.ones(len(pl))
            w[~pl.is_real] = syn_w
            pol = train_weighted(pl, w, inner, **kw)
            tick()
            return pol

        def with_wd(wd):
            return InnerConfig(cfg.inner.steps, cfg.inner.batch, cfg.inner.lr, wd, cfg.inner.hidden)

        out: dict[str, float] = {}
        sel: dict[str, tuple] = {}
        synm = ~is_real
        # real-only and uniform: AdamW weight-decay grid
        sel["real_only"] = select(
            [(train_weighted(pool, is_real.astype(float), with_wd(wd), **kw),) for wd in cfg.wd_grid_real]
        )
        done[0] += cfg.grid_size
        sel["uniform"] = select([(fixed(pool, np.ones(synm.sum()), with_wd(wd)),) for wd in cfg.wd_grid])
        ret = pool.ret[synm]
        sel["topq"] = select([(fixed(pool, topq_weights(ret, q)),) for q in cfg.q_grid])
        sel["rwr"] = select([(fixed(pool, rwr_weights(ret, b)),) for b in cfg.beta_grid])
        # domain classifier on features under the real-only policy (the strongest real-data view)
        feats_ro = trajectory_features(sel["real_only"][2], pool, tc.max_turns).cpu()
        dc = DomainClassifier().fit(feats_ro, is_real)
        p_real = dc.p_real(feats_ro[torch.as_tensor(synm)])
        sel["dc"] = select([(fixed(pool, domain_classifier_weights(p_real, gm)),) for gm in cfg.gamma_grid])
        boosts = []
        for lr in cfg.head_lr_grid:
            bcfg = BoostConfig(**{**cfg.boost.__dict__, "head_lr": lr})
            pol, rw, feats = train_boost(pool, val, cfg.inner, bcfg, max_turns=tc.max_turns, **kw)
            tick()
            boosts.append((pol, rw, feats))
        sel["boost"] = select(boosts)
        sel["oracle"] = select(
            [(fixed(pool, oracle_weights(syn.realism, syn.quality, gm)),) for gm in cfg.oracle_grid]
        )
        for m in METHODS:
            nll, idx, pol = sel[m][0], sel[m][1], sel[m][2]
            out[f"success_{m}"] = exact_success(pol, tc)
            out[f"val_nll_{m}"] = nll
            out[f"grid_index_{m}"] = float(idx)
        out["success_best_baseline"] = max(out[f"success_{m}"] for m in BASELINES)

        # BOOST's learned weights against the truth (synthetic pool)
        rw, feats = sel["boost"][3], sel["boost"][4]
        fs = feats[torch.as_tensor(synm, device=feats.device)]
        with torch.no_grad():
            logits = rw.head(fs).cpu()
        w_boost = normalize_weights(logits).numpy().astype(float)
        out["rho_realism"] = _spearman(w_boost, syn.realism)
        out["rho_quality"] = _spearman(w_boost, syn.quality)
        out["rho_quality_aligned"] = _spearman(w_boost[syn.delta == 0], syn.quality[syn.delta == 0])
        out["rho_realism_dc"] = _spearman(p_real, syn.realism)
        out["rho_quality_rwr"] = _spearman(rwr_weights(ret, 0.3), syn.quality)
        for d in range(tc.max_delta + 1):
            out[f"mean_weight_delta{d}"] = (
                float(w_boost[syn.delta == d].mean()) if np.any(syn.delta == d) else 1.0
            )

        # temperature sweep of the learned head: ESS, task shift, coverage, success (fresh policies)
        conc, ess, shift, succ, true_shift = [], [], [], [], []
        for i, temp in enumerate(cfg.temperatures):
            w = (
                np.ones(synm.sum())
                if np.isinf(temp)
                else normalize_weights(logits, temp).numpy().astype(float)
            )
            pol = fixed(pool, w)
            conc.append(0.0 if np.isinf(temp) else 1.0 / temp)
            ess.append(effective_sample_size(w))
            shift.append(task_shift_proxy(w, p_real))
            true_shift.append(float((w * syn.delta).sum() / w.sum()))
            out[f"sweep_true_shift/t{i}"] = true_shift[-1]
            succ.append(exact_success(pol, tc))
            out[f"sweep_success/t{i}"] = succ[-1]
            out[f"sweep_ess/t{i}"] = ess[-1]
            out[f"sweep_shift/t{i}"] = shift[-1]
            out[f"sweep_coverage/t{i}"] = type_coverage(w, syn.type, tc.n_types)
        out["rho_ess_concentration"] = _spearman(np.array(conc), np.array(ess))
        out["rho_shift_concentration"] = _spearman(np.array(conc), np.array(shift))
        out["rho_true_shift_concentration"] = _spearman(np.array(conc), np.array(true_shift))
        out["sweep_peak_inside"] = float(np.mean(succ[1:-1]) - max(succ[0], succ[-1]))
        out["ess_boost"] = effective_sample_size(w_boost)
        out["shift_boost"] = task_shift_proxy(w_boost, p_real)
        out["shift_uniform"] = task_shift_proxy(np.ones_like(w_boost), p_real)
        out["coverage_boost"] = type_coverage(w_boost, syn.type, tc.n_types)

        # the most shifted source mix: uniform and BOOST against real-only (same real data)
        u = select(
            [
                (fixed(pool_shift, np.ones(int((~pool_shift.is_real).sum())), with_wd(wd)),)
                for wd in cfg.wd_grid
            ]
        )
        bs = []
        for lr in cfg.head_lr_grid:
            bcfg = BoostConfig(**{**cfg.boost.__dict__, "head_lr": lr})
            bs.append(train_boost(pool_shift, val, cfg.inner, bcfg, max_turns=tc.max_turns, **kw))
            tick()
        b = select(bs)
        out["success_uniform_shifted"] = exact_success(u[2], tc)
        out["success_boost_shifted"] = exact_success(b[2], tc)
        for i, cand in enumerate(bs):
            out[f"success_boost_shifted_grid{i}"] = exact_success(cand[0], tc)
        out["grid_index_boost_shifted"] = float(b[1])
        out["grid_index_uniform_shifted"] = float(u[1])
        out["synthetic_in_sim_success"] = float(syn.success.mean())
        return out

    # -- report --------------------------------------------------------------------------------------
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)
        rows = [
            "| method | success on real tasks (mean ± sd over seeds) | real validation NLL "
            "| grid index chosen (per seed) |",
            "| --- | --- | --- | --- |",
        ]
        for m in METHODS:
            s = np.array([r[f"success_{m}"] for r in per_seed])
            v = np.array([r[f"val_nll_{m}"] for r in per_seed])
            gi = ",".join(str(int(r[f"grid_index_{m}"])) for r in per_seed)
            rows.append(
                f"| {LABELS[m]} | {100 * s.mean():.1f}% ± {100 * s.std():.1f} | {v.mean():.3f} | {gi} |"
            )
        sw = [
            "| temperature | success | ESS (synthetic pool) | task-shift proxy (DC log-odds) "
            "| true mean shift delta | type coverage |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for i, t in enumerate(cfg.temperatures):
            col = lambda k, i=i: np.mean([r[f"{k}/t{i}"] for r in per_seed])  # noqa: E731
            name = "inf (uniform)" if np.isinf(t) else f"{t:g}"
            sw.append(
                f"| {name} | {100 * col('sweep_success'):.1f}% | {col('sweep_ess'):.0f} "
                f"| {col('sweep_shift'):.2f} | {col('sweep_true_shift'):.2f} | {col('sweep_coverage'):.3f} |"
            )
        wt = ["| delta (shift) | 0 | 1 | 2 | 3 |", "| --- | --- | --- | --- | --- |"]
        wt.append(
            "| BOOST mean weight | "
            + " | ".join(
                f"{np.mean([r[f'mean_weight_delta{d}'] for r in per_seed]):.2f}"
                for d in range(cfg.tasks.max_delta + 1)
            )
            + " |"
        )
        return {
            "Success rate by method (selected grid point)": "\n".join(rows),
            "Weight-temperature sweep of BOOST's head (mean over seeds)": "\n".join(sw),
            "BOOST's weights by true shift": "\n".join(wt),
        }

    def figures(self, report, folder: Path) -> list[str]:
        """Headline: success by method (one point per seed, bar = mean) and the temperature sweep
        (success and ESS per seed against concentration)."""
        plt = optional_pyplot()
        if plt is None:
            return []
        cfg = self.config(report.quick) if hasattr(report, "quick") else self.config(False)
        per_seed = report.per_seed
        temps = [k for k in range(len(cfg.temperatures)) if f"sweep_success/t{k}" in per_seed[0]]
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.3), gridspec_kw={"width_ratios": [1.4, 1]})
        n = len(per_seed)
        jit = np.linspace(-0.2, 0.2, n) if n > 1 else np.zeros(1)
        for i, m in enumerate(METHODS):
            vals = np.array([100 * r[f"success_{m}"] for r in per_seed])
            color = "C0" if m == "boost" else ("0.55" if m == "oracle" else "0.8")
            ax.bar(
                i,
                vals.mean(),
                width=0.7,
                color=color,
                zorder=1,
                label={
                    "boost": "BOOST (mean)",
                    "uniform": "baselines (mean)",
                    "oracle": "oracle reference (mean)",
                }.get(m),
            )
            ax.scatter(i + jit, vals, s=14, color="k", zorder=3, label="one seed" if i == 0 else None)
        ax.set_xticks(range(len(METHODS)), [LABELS[m] for m in METHODS], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("success rate on real tasks (%)")
        ax.set_ylim(0, 105)
        ax.legend(fontsize=7, loc="upper left", frameon=False)
        ax.set_title("success by method (same inner budget, grid of 3)", fontsize=9)
        xs = np.arange(len(temps))
        names = ["uniform" if np.isinf(cfg.temperatures[k]) else f"T={cfg.temperatures[k]:g}" for k in temps]
        for j, r in enumerate(per_seed):
            bx.plot(
                xs,
                [100 * r[f"sweep_success/t{k}"] for k in temps],
                "-o",
                color="C0",
                alpha=0.5,
                ms=3,
                label="success, one seed" if j == 0 else None,
            )
        cx = bx.twinx()
        for j, r in enumerate(per_seed):
            cx.plot(
                xs,
                [r[f"sweep_ess/t{k}"] for k in temps],
                "--s",
                color="C1",
                alpha=0.5,
                ms=3,
                label="ESS, one seed" if j == 0 else None,
            )
        bx.set_xticks(xs, names, fontsize=8)
        bx.set_xlabel("weight temperature of BOOST's head (flat -> concentrated)")
        bx.set_ylabel("success rate on real tasks (%)", color="C0")
        cx.set_ylabel("effective sample size of the synthetic pool", color="C1")
        bx.set_ylim(0, 105)
        cx.set_ylim(0, None)
        h1, l1 = bx.get_legend_handles_labels()
        h2, l2 = cx.get_legend_handles_labels()
        bx.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower left", frameon=False)
        bx.set_title("the trade-off: temperature sweep", fontsize=9)
        fig.tight_layout()
        name = "boost_success_and_sweep.png"
        fig.savefig(Path(folder) / name, dpi=120)
        plt.close(fig)
        return [name]
