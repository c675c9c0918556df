"""clip-has benchmarks: our InfoNCE against open_clip's ClipLoss, the HAS margin against a Python loop.

    uv run python packages/clip-has/benchmarks/bench_clip_has.py [--quick]

1. **InfoNCE step** (forward + backward on the same unit features and logit scale) at batch 256, 1,024,
   4,096: :func:`paperworks.clip_has.clip_loss` vs ``open_clip.loss.ClipLoss`` (one process). The
   quality table gives the largest |loss difference| and |gradient difference| at each batch.
2. **HAS margins** of random embeddings (dim 32) on random trees of 100, 1,000 and 10,000 concepts:
   the vectorised :func:`paperworks.clip_has.has_margins` vs a naive loop over concepts (descendants
   found by walking the tree, off-branch concepts by set difference, cosines by NumPy per concept).
   The quality table gives the largest |margin difference|.

Results go to ``results.json``/``results.md`` beside this file; ``--quick`` (smallest size only,
3 rounds) writes them to a temporary folder.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from paperworks.clip_has import clip_loss, has_margins, random_tree
from paperworks.core.bench import compare, publish

try:
    import open_clip
except ImportError:  # pragma: no cover - the benchmark needs the `peer` extra
    open_clip = None

BATCHES = (256, 1024, 4096)
CONCEPTS = (100, 1000, 10_000)
DIM = 32


class LossCase:
    def __init__(self, batch: int) -> None:
        g = torch.Generator().manual_seed(batch)
        self.x = torch.nn.functional.normalize(torch.randn(batch, 64, generator=g), dim=1)
        self.y = torch.nn.functional.normalize(torch.randn(batch, 64, generator=g), dim=1)
        self.scale = torch.tensor(1 / 0.07)


def _step(loss_fn, case: LossCase) -> tuple[float, torch.Tensor]:
    x = case.x.clone().requires_grad_(True)
    loss = loss_fn(x, case.y, case.scale)
    loss.backward()
    return loss.detach(), x.grad


def ours_step(case: LossCase):
    return _step(clip_loss, case)


_OPEN_CLIP_LOSS = open_clip.loss.ClipLoss() if open_clip is not None else None


def open_clip_step(case: LossCase):
    return _step(_OPEN_CLIP_LOSS, case)


def _tree_of(n: int):
    """The random tree (branching 2-4, some early leaves) closest in size to ``n`` among a few draws."""
    rng = np.random.default_rng(n)
    best = None
    for depth in range(3, 12):
        for _ in range(8):
            t = random_tree(rng, depth=depth, branching=(2, 4), leaf_prob=0.2, max_nodes=10**7)
            if best is None or abs(t.n_nodes - n) < abs(best.n_nodes - n):
                best = t
        if t.n_nodes > 2 * n:
            break
    return best


class HasCase:
    def __init__(self, n: int) -> None:
        self.tree = _tree_of(n)
        self.E = np.random.default_rng(n).normal(size=(self.tree.n_nodes, DIM))
        self.Et = torch.from_numpy(self.E)


def ours_has(case: HasCase):
    with torch.inference_mode():
        return has_margins(case.Et, case.tree)


def naive_has(case: HasCase):
    t = case.tree
    En = case.E / np.linalg.norm(case.E, axis=1, keepdims=True)
    parents = t.parents.tolist()
    children = [list(c) for c in t.children]
    out = []
    for c in range(t.n_nodes):
        if not children[c]:
            continue
        desc, stack = [], list(children[c])
        while stack:
            d = stack.pop()
            desc.append(d)
            stack.extend(children[d])
        anc, a = set(), c
        while parents[a] != -1:
            a = parents[a]
            anc.add(a)
        off = sorted(set(range(t.n_nodes)) - set(desc) - anc - {c})
        if not off:
            continue
        cos_d = En[desc] @ En[c]
        cos_o = En[off] @ En[c]
        out.append(cos_d.min() - cos_o.max())
    return np.array(out)


def run(quick: bool):
    kw = {"warmup": 1, "repeats": 3} if quick else {"warmup": 2, "repeats": 10}
    batches = BATCHES[:1] if quick else BATCHES
    concepts = CONCEPTS[:1] if quick else CONCEPTS
    results, tables = [], {}
    if open_clip is not None:
        results.append(
            compare(
                {"ours_clip_loss": ours_step, "open_clip_ClipLoss": open_clip_step},
                LossCase,
                batches,
                ours="ours_clip_loss",
                name="InfoNCE forward + backward",
                size_label="batch",
                **kw,
            )
        )
        rows = ["| batch | max abs loss difference | max abs gradient difference |", "| --- | --- | --- |"]
        for b in batches:
            case = LossCase(b)
            (l1, g1), (l2, g2) = ours_step(case), open_clip_step(case)
            rows.append(f"| {b} | {abs(float(l1 - l2)):.2e} | {float((g1 - g2).abs().max()):.2e} |")
        tables["InfoNCE agreement with open_clip ClipLoss (float32)"] = "\n".join(rows)
    else:  # pragma: no cover
        tables["InfoNCE agreement with open_clip ClipLoss"] = "open_clip is not installed: side skipped"
    has_kw = dict(kw)
    if not quick:
        has_kw["repeats"] = 5
    results.append(
        compare(
            {"ours_vectorised": ours_has, "naive_loop": naive_has},
            HasCase,
            concepts,
            ours="ours_vectorised",
            name="HAS margins of every concept",
            size_label="concepts",
            **has_kw,
        )
    )
    rows = [
        "| concepts (requested) | concepts (tree) | evaluated | max abs margin difference |",
        "| --- | --- | --- | --- |",
    ]
    for n in concepts:
        case = HasCase(n)
        a, b = ours_has(case).numpy(), naive_has(case)
        rows.append(f"| {n} | {case.tree.n_nodes} | {a.size} | {np.abs(a - b).max():.2e} |")
    tables["HAS margins: agreement with the naive loop"] = "\n".join(rows)
    return results, tables


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="smallest size only, 3 rounds, results to a temp folder"
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    results, tables = run(args.quick)
    publish(results, __file__, quick=args.quick, title="clip-has benchmarks", tables=tables)


if __name__ == "__main__":
    main()
