"""Headline reproduction of Hierarchical Angular Separation (HAS) and its image-to-text transfer.

Per seed, four blocks (settings in :class:`ClipHasConfig`, fixed before any run):

1. **Linear UFM** (``linear_runs`` runs): a random tree (depth 3-4, branching 2-4; every other run
   unbalanced), hierarchical Gaussian image embeddings (:func:`~.data.hierarchical_gaussian_embeddings`)
   with 2-10 images per leaf, pairs from hierarchical co-occurrence. The closed-form minimiser of the
   linear loss is checked against scipy's L-BFGS from a random start; the L-BFGS text embeddings are
   scored for HAS against three image premises: raw prototypes, prototypes centred at the plain image
   mean (root-centred) and prototypes centred at the pair-weighted mean (the theorem's premise).
2. **InfoNCE UFM** (``infonce_runs`` balanced random trees): population InfoNCE with weight decay
   ``lam`` over the grid ``lams`` (global minimiser by L-BFGS, convex); the share of runs whose text
   embeddings satisfy HAS, among runs whose pair-centred image prototypes do (the theorem's premise).
3. **Beyond the analysis** (``beyond_runs``): unbalanced trees and a share ``beyond_noise`` of pairs
   re-drawn at random, InfoNCE at ``beyond_lam``; the mean text HAS rate.
4. **CLIP-lite**: a random-init image CNN and text transformer (:class:`~.model.ClipLite`) on
   generated 32x32 images with a visual hierarchy and one-token captions; HAS rates of the image
   prototypes and the text embeddings against label-permutation nulls at init, then after contrastive
   training (AdamW, CLIP loss with a learned temperature).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from paperworks.core import (
    Claim,
    Experiment,
    Paper,
    Progress,
    Report,
    choose_device,
    optional_pyplot,
    torch_threads,
)
from paperworks.core.validate import fraction, positive_float, positive_int

from .data import caption_tokens, hierarchical_gaussian_embeddings, hierarchical_images
from .has import concept_prototypes, has_margin, has_margins, has_permutation_null
from .hierarchy import Hierarchy, balanced_tree, random_tree
from .model import ClipLite, TrainConfig, train_clip
from .ufm import (
    fit_infonce,
    hierarchical_pairs,
    linear_contrastive_loss,
    linear_loss_minimiser,
    minimise_linear_loss_lbfgs,
    pair_matrix,
    pair_statistics,
)

__all__ = ["QUICK", "ClipHasConfig", "ClipHasExperiment", "lam_key"]

SHAPES = ((3, 2), (3, 3), (3, 4), (4, 2), (4, 3))  # (depth, branching) of the generated trees


def lam_key(lam: float) -> str:
    return f"infonce/frac/lam{lam:g}"


@dataclass(frozen=True)
class ClipHasConfig:
    """Settings (defaults: the full run; :data:`QUICK`: the quick run)."""

    linear_runs: int = 20
    infonce_runs: int = 10
    beyond_runs: int = 10
    max_nodes: int = 200
    dim: int = 32
    tau: float = 0.1
    lam_linear: float = 1.0
    lams: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
    beyond_lam: float = 1.0
    beyond_noise: float = 0.2
    beyond_leaf_prob: float = 0.3
    clip_depth: int = 3
    clip_branching: int = 3
    clip_images_per_leaf: int = 12
    clip_steps: int = 1000
    clip_batch: int = 128
    n_permutations: int = 200

    def __post_init__(self) -> None:
        for name in ("linear_runs", "infonce_runs", "beyond_runs", "dim", "clip_depth", "clip_branching"):
            positive_int(getattr(self, name), name)
        if positive_int(self.max_nodes, "max_nodes") < 15:
            raise ValueError(
                f"max_nodes: expected >= 15 (the smallest tree of depth 3, branching 2), got {self.max_nodes}"
            )
        for name in ("clip_images_per_leaf", "clip_steps", "clip_batch", "n_permutations"):
            positive_int(getattr(self, name), name)
        for name in ("tau", "lam_linear", "beyond_lam"):
            positive_float(getattr(self, name), name)
        if len(self.lams) < 2 or any(b <= a for a, b in zip(self.lams, self.lams[1:])) or self.lams[0] <= 0:
            raise ValueError(f"lams: expected >= 2 increasing positive values, got {self.lams}")
        if self.beyond_lam not in self.lams:
            raise ValueError(f"beyond_lam: expected one of lams {self.lams}, got {self.beyond_lam}")
        fraction(self.beyond_noise, "beyond_noise", open_high=True)
        fraction(self.beyond_leaf_prob, "beyond_leaf_prob", open_high=True)


QUICK = ClipHasConfig(
    linear_runs=6,
    infonce_runs=3,
    beyond_runs=3,
    max_nodes=40,
    clip_images_per_leaf=6,
    clip_steps=120,
    n_permutations=100,
)


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def _tree(gen: np.random.Generator, unbalanced: bool, leaf_prob: float, max_nodes: int) -> Hierarchy:
    shapes = [(d, b) for d, b in SHAPES if sum(b**k for k in range(d + 1)) <= max_nodes]
    depth, branching = shapes[int(gen.integers(len(shapes)))]
    return random_tree(
        gen,
        depth=depth,
        branching=(branching, branching) if not unbalanced else (2, branching),
        leaf_prob=leaf_prob if unbalanced else 0.0,
        max_nodes=max_nodes,
    )


def _ufm(tree: Hierarchy, gen: np.random.Generator, dim: int, noise: float = 0.0):
    U, labels = hierarchical_gaussian_embeddings(tree, gen, dim=dim)
    img, con = hierarchical_pairs(labels, tree, noise=noise, rng=gen)
    return U, labels, pair_matrix(img, con, len(U), tree.n_nodes)


class ClipHasExperiment(Experiment):
    """HAS in the unconstrained features model (linear loss, InfoNCE) and in a tiny CLIP."""

    slug: ClassVar[str] = "clip-has"
    paper: ClassVar[Paper] = Paper(
        "Hierarchical Angular Separation: why hierarchy emerges in CLIP embeddings",
        note="no public text; the HAS definition, the UFM losses and every set-up are reconstructed "
        "from the abstract (README Fidelity)",
    )
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int | None] = 2
    claims: ClassVar[tuple] = (
        Claim(
            "closed_form",
            "For a linear contrastive loss we derive a closed-form solution",
            "linear/gap_max",
            "<=",
            1e-8,
            note="largest |L_lin(closed form) - L_lin(L-BFGS)| over the seed's runs",
            exact=True,
        ),
        Claim(
            "transfer",
            "When the image embeddings satisfy HAS with a positive margin, the global minimiser induces "
            "HAS in the text embeddings",
            "linear/transfer_rate",
            ">=",
            1.0,
            note="share of runs with a positive pair-centred image margin whose L-BFGS text embeddings "
            "satisfy HAS; an identity of the closed form (cosines are scale-free), so exact",
            exact=True,
        ),
        Claim(
            "infonce_regularised",
            "Analogous guarantees for InfoNCE under sufficient regularisation",
            "infonce/min_frac_above",
            ">=",
            0.9,
            note="smallest HAS share over the weight decays at or above the smallest grid value with "
            "share >= 0.9 (runs with a positive pair-centred image margin)",
        ),
        Claim(
            "infonce_rises",
            "The InfoNCE guarantee needs regularisation: the HAS share rises with it",
            "infonce/frac_lam_max",
            ">",
            0.0,
            baseline="infonce/frac_lam_min",
            note="HAS share at the largest minus at the smallest weight decay of the grid",
        ),
        Claim(
            "image_init",
            "HAS already holds weakly in randomly initialised CLIP image embeddings",
            "clip/image_rate_init",
            ">",
            0.0,
            baseline="clip/image_null95_init",
            kind="mechanism",
            note="random-init CNN: image-prototype HAS rate minus its label-permutation 95th percentile",
        ),
        Claim(
            "text_trained",
            "In text embeddings HAS emerges after contrastive training",
            "clip/text_rate_trained",
            ">=",
            0.9,
            kind="mechanism",
            note="CLIP-lite after training: share of evaluated concepts with a positive text margin",
        ),
        Claim(
            "beyond",
            "HAS emerges even beyond the regimes covered by the analysis",
            "beyond/text_rate",
            ">=",
            0.8,
            kind="mechanism",
            note="InfoNCE UFM on unbalanced trees with noisy co-occurrence: mean text HAS rate",
        ),
    )

    def config(self, quick: bool) -> ClipHasConfig:
        return QUICK if quick else ClipHasConfig()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        cfg = self.config(quick)
        out: dict[str, float] = {}
        with threadpool_limits(1), torch_threads(1):
            out.update(self._linear(seed, cfg))
            out.update(self._infonce(seed, cfg))
            out.update(self._beyond(seed, cfg))
            out.update(self._clip(seed, cfg))
        return out

    # ------------------------------------------------------------------ blocks
    def _linear(self, seed: int, cfg: ClipHasConfig) -> dict[str, float]:
        gaps, prem, raw, rootc, text = [], [], [], [], []
        for r in range(cfg.linear_runs):
            gen = np.random.default_rng(_seed(seed, 1, r))
            tree = _tree(gen, unbalanced=r % 2 == 1, leaf_prob=cfg.beyond_leaf_prob, max_nodes=cfg.max_nodes)
            U, _, P = _ufm(tree, gen, cfg.dim)
            V_cf = linear_loss_minimiser(U, P, cfg.lam_linear)
            V_num = minimise_linear_loss_lbfgs(U, P, cfg.lam_linear, rng=gen)
            gaps.append(
                abs(
                    linear_contrastive_loss(V_cf, U, P, cfg.lam_linear)
                    - linear_contrastive_loss(V_num, U, P, cfg.lam_linear)
                )
            )
            st = pair_statistics(U, P)
            prem.append(has_margin(st.centred, tree) > 0)
            raw.append(has_margin(st.mu, tree) > 0)
            rootc.append(has_margin(st.mu - U.mean(0), tree) > 0)
            text.append(has_margin(V_num, tree) > 0)
        prem_a, raw_a, rootc_a, text_a = (np.array(x, bool) for x in (prem, raw, rootc, text))

        def implied(premise: np.ndarray) -> float:
            return float(text_a[premise].mean()) if premise.any() else 0.0

        return {
            "linear/gap_max": float(max(gaps)),
            "linear/transfer_rate": implied(prem_a),
            "linear/premise_share": float(prem_a.mean()),
            "linear/raw_share": float(raw_a.mean()),
            "linear/rootc_share": float(rootc_a.mean()),
            "linear/text_share": float(text_a.mean()),
            "linear/raw_implies_text": implied(raw_a),
            "linear/rootc_implies_text": implied(rootc_a),
        }

    def _infonce(self, seed: int, cfg: ClipHasConfig) -> dict[str, float]:
        holds = np.zeros((cfg.infonce_runs, len(cfg.lams)), bool)
        premise = np.zeros(cfg.infonce_runs, bool)
        for r in range(cfg.infonce_runs):
            gen = np.random.default_rng(_seed(seed, 2, r))
            tree = _tree(gen, unbalanced=False, leaf_prob=0.0, max_nodes=cfg.max_nodes)
            U, _, P = _ufm(tree, gen, cfg.dim)
            premise[r] = has_margin(pair_statistics(U, P).centred, tree) > 0
            V = None
            for j in reversed(
                range(len(cfg.lams))
            ):  # strong to weak decay, warm-started (convex: same minimiser)
                V, _ = fit_infonce(U, P, cfg.lams[j], tau=cfg.tau, V0=V, gtol=1e-8, maxiter=5000)
                holds[r, j] = has_margin(V, tree) > 0
        out: dict[str, float] = {"infonce/premise_share": float(premise.mean())}
        frac = holds[premise].mean(0) if premise.any() else np.zeros(len(cfg.lams))
        for lam, f in zip(cfg.lams, frac):
            out[lam_key(lam)] = float(f)
        ok = np.flatnonzero(frac >= 0.9)
        out["infonce/min_frac_above"] = float(frac[ok[0] :].min()) if ok.size else float(frac.max())
        out["infonce/smallest_lam_holding"] = float(cfg.lams[ok[0]]) if ok.size else float("inf")
        if not np.isfinite(out["infonce/smallest_lam_holding"]):
            out["infonce/smallest_lam_holding"] = -1.0  # none holds (finite marker)
        out["infonce/frac_lam_min"] = float(frac[0])
        out["infonce/frac_lam_max"] = float(frac[-1])
        out["infonce/frac_all_runs_lam_max"] = float(holds[:, -1].mean())
        return out

    def _beyond(self, seed: int, cfg: ClipHasConfig) -> dict[str, float]:
        rates, full = [], []
        for r in range(cfg.beyond_runs):
            gen = np.random.default_rng(_seed(seed, 3, r))
            tree = _tree(gen, unbalanced=True, leaf_prob=cfg.beyond_leaf_prob, max_nodes=cfg.max_nodes)
            U, _, P = _ufm(tree, gen, cfg.dim, noise=cfg.beyond_noise)
            V, _ = fit_infonce(U, P, cfg.beyond_lam, tau=cfg.tau, gtol=1e-8, maxiter=5000)
            m = has_margins(V, tree)
            rates.append(float((m > 0).mean()))
            full.append(float(m.min() > 0))
        return {"beyond/text_rate": float(np.mean(rates)), "beyond/has_share": float(np.mean(full))}

    def _clip(self, seed: int, cfg: ClipHasConfig) -> dict[str, float]:
        gen = np.random.default_rng(_seed(seed, 4))
        tree = balanced_tree(cfg.clip_depth, cfg.clip_branching)
        X, labels = hierarchical_images(tree, gen, images_per_leaf=cfg.clip_images_per_leaf)
        cap = caption_tokens(tree)
        device = choose_device()
        torch.manual_seed(_seed(seed, 5))
        model = ClipLite(cap.vocab_size).to(device)
        node_labels = np.arange(tree.n_nodes)

        def rates(tag: str) -> dict[str, float]:
            img = model.image_embeddings(X).double().cpu()
            txt = model.concept_embeddings(cap.tokens).double().cpu()
            res = {
                f"clip/image_rate_{tag}": float(
                    (has_margins(concept_prototypes(img, labels, tree), tree) > 0).double().mean()
                ),
                f"clip/text_rate_{tag}": float((has_margins(txt, tree) > 0).double().mean()),
                f"clip/text_rate_centred_{tag}": float(
                    (has_margins(txt - txt.mean(0), tree) > 0).double().mean()
                ),
            }
            null_i = has_permutation_null(
                img, labels, tree, n_permutations=cfg.n_permutations, rng=_seed(seed, 6)
            )
            null_t = has_permutation_null(
                txt, node_labels, tree, mode="node", n_permutations=cfg.n_permutations, rng=_seed(seed, 7)
            )
            res[f"clip/image_null95_{tag}"] = float(np.quantile(null_i, 0.95))
            res[f"clip/text_null95_{tag}"] = float(np.quantile(null_t, 0.95))
            # zero-shot leaf accuracy (is the encoder trained?): image -> nearest leaf caption
            leaves = torch.from_numpy(tree.leaves.copy())
            pred = leaves[(img @ txt[leaves].T).argmax(1)]
            res[f"clip/leaf_accuracy_{tag}"] = float((pred == torch.as_tensor(labels)).double().mean())
            return res

        out = rates("init")
        pairs = hierarchical_pairs(labels, tree, rng=gen)
        losses = train_clip(
            model,
            X,
            cap.tokens,
            pairs,
            TrainConfig(steps=cfg.clip_steps, batch=cfg.clip_batch),
            seed=_seed(seed, 8),
        )
        out.update(rates("trained"))
        out["clip/final_loss"] = float(np.mean(losses[-20:]))
        return out

    # ------------------------------------------------------------------ report
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        cfg = self.config(quick)

        def cell(key: str) -> str:
            v = np.array([s[key] for s in per_seed], float)
            sd = v.std(ddof=1) if v.size > 1 else 0.0
            return f"{v.mean():.3f} ± {sd:.3f}"

        lam_rows = ["| weight decay lam | text HAS share (premise runs) |", "| --- | --- |"]
        lam_rows += [f"| {lam:g} | {cell(lam_key(lam))} |" for lam in cfg.lams]
        lin = [
            "| image premise | share of runs with it | share of those whose text satisfies HAS |",
            "| --- | --- | --- |",
            f"| raw prototypes | {cell('linear/raw_share')} | {cell('linear/raw_implies_text')} |",
            f"| root-centred (plain image mean) | {cell('linear/rootc_share')} | "
            f"{cell('linear/rootc_implies_text')} |",
            f"| pair-centred (theorem) | {cell('linear/premise_share')} | {cell('linear/transfer_rate')} |",
        ]
        clip = ["| CLIP-lite | init | trained |", "| --- | --- | --- |"]
        for name, key in (
            ("image-prototype HAS rate", "clip/image_rate"),
            ("image permutation 95th pct", "clip/image_null95"),
            ("text HAS rate", "clip/text_rate"),
            ("text permutation 95th pct", "clip/text_null95"),
            ("text HAS rate, mean-centred", "clip/text_rate_centred"),
            ("zero-shot leaf accuracy", "clip/leaf_accuracy"),
        ):
            clip.append(f"| {name} | {cell(key + '_init')} | {cell(key + '_trained')} |")
        return {
            "InfoNCE: HAS share against weight decay": "\n".join(lam_rows),
            "Linear loss: the premise and the implication": "\n".join(lin),
            "CLIP-lite: HAS rates against permutation nulls": "\n".join(clip),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        cfg = self.config(report.quick)
        lams = np.array(cfg.lams)
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        ax = axes[0]
        per = np.array([[s[lam_key(lam)] for lam in lams] for s in report.per_seed])
        rng = np.random.default_rng(0)
        for k, row in enumerate(per):
            jit = lams * np.exp(rng.uniform(-0.08, 0.08, lams.size))
            ax.scatter(jit, row, s=18, color="C0", alpha=0.5, label="per seed" if k == 0 else None)
        ax.plot(lams, per.mean(0), "-o", color="C0", ms=6, mec="k", label="mean over seeds")
        ax.axhline(0.9, color="C3", ls="--", lw=1, label="claim threshold 0.9")
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("weight decay lam on the text embeddings (log scale)")
        ax.set_ylabel("share of runs with text HAS")
        ax.set_title("InfoNCE UFM: HAS needs regularisation")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        ax = axes[1]
        items = [
            ("image\ninit", "clip/image_rate_init", "clip/image_null95_init"),
            ("text\ninit", "clip/text_rate_init", "clip/text_null95_init"),
            ("text\ntrained", "clip/text_rate_trained", "clip/text_null95_trained"),
            ("image\ntrained", "clip/image_rate_trained", "clip/image_null95_trained"),
        ]
        for x, (_, key, null) in enumerate(items):
            v = np.array([s[key] for s in report.per_seed])
            nv = np.array([s[null] for s in report.per_seed])
            off = rng.uniform(-0.08, 0.08, v.size)
            ax.scatter(x - 0.15 + off, v, s=22, color="C0", label="HAS rate (per seed)" if x == 0 else None)
            ax.scatter(
                x + 0.15 + off,
                nv,
                s=22,
                color="C7",
                marker="x",
                label="permutation 95th pct" if x == 0 else None,
            )
        ax.set_xticks(range(len(items)), [i[0] for i in items])
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("share of concepts with a positive margin")
        ax.set_title("CLIP-lite: random init and after training")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        name = "has_vs_regularisation.png"
        fig.savefig(folder / name, dpi=120)
        plt.close(fig)
        return [name]
