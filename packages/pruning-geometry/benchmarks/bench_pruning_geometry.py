"""Search cost of TALE vs SLEB-like and block-influence (ShortGPT) pruning; latency of pruned models.

    uv run python packages/pruning-geometry/benchmarks/bench_pruning_geometry.py [--quick]

Two :func:`paperworks.core.bench.compare` calls on tiny ``LlamaForCausalLM`` models (hidden 32, 4
heads, random init with the decoder weights scaled so that layers matter) of 4, 8 and 12 layers:

1. search cost: one call of a side is one full search removing ``L / 2`` layers on a batch of 256
   sequences of 16 tokens: ``tale`` (greedy on a batched validation accuracy, every step accepted so
   that the work is fixed), ``sleb`` (greedy on the calibration cross-entropy) and
   ``block_influence`` (one forward pass with hooks, then a sort). TALE and SLEB both need
   ``O(L^2)`` forward passes, block influence one: the counts go in a table beside the timings.
2. latency: one forward pass (batch 256, 16 tokens) of the full 12-layer model vs the same model with
   half its layers removed (:func:`remove_layers`).

Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (4 layers only, 3
repeats) writes them to a temporary folder and prints the markdown.
"""

from __future__ import annotations

import argparse

import torch

from paperworks.core import torch_threads
from paperworks.core.bench import compare, publish
from paperworks.pruning_geometry import (
    block_influence_removal,
    remove_layers,
    sleb_search,
    tale_search,
    tiny_llama,
)

SIZES = (4, 8, 12)
VOCAB, BATCH, T = 32, 256, 16


def make_model(layers: int):
    model = tiny_llama(VOCAB, hidden=32, layers=layers, heads=4, seed=layers)
    with torch.no_grad():
        for p in model.model.layers.parameters():
            if p.ndim == 2:
                p.mul_(10.0)
    g = torch.Generator().manual_seed(layers)
    ids = torch.randint(0, VOCAB, (BATCH, T), generator=g)
    return model, ids


def val_fn(ids):
    def val(m):
        logits = m(input_ids=ids, use_cache=False).logits[:, -2]
        return (logits.argmax(-1) == ids[:, -1]).float().mean()

    return val


def loss_fn(ids):
    def loss(m):
        lg = m(input_ids=ids, use_cache=False).logits
        return torch.nn.functional.cross_entropy(lg[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))

    return loss


def tale(x):
    model, ids = x
    return tale_search(model, val_fn(ids), max_remove=len(model.model.layers) // 2, min_gain=-1e9)


def sleb(x):
    model, ids = x
    return sleb_search(model, loss_fn(ids), len(model.model.layers) // 2)


def bi(x):
    model, ids = x
    return block_influence_removal(
        model, {"input_ids": ids, "use_cache": False}, len(model.model.layers) // 2
    )


def forward_counts(sizes) -> str:
    rows = [
        "| layers L | removed | TALE forward passes | SLEB forward passes | block influence forward passes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for L in sizes:
        k = L // 2
        greedy = 1 + sum(L - i for i in range(k))
        rows.append(f"| {L} | {k} | {greedy} | {greedy} | 1 |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4 layers only, 3 repeats, results to a temp folder")
    args = ap.parse_args()
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (7, 1)
    with torch_threads(1), torch.inference_mode():
        search = compare(
            {"tale": tale, "sleb": sleb, "block_influence": bi},
            make_model,
            sizes,
            ours="tale",
            peer=["sleb", "block_influence"],
            name="search cost: remove L/2 layers (batch 256 x 16 tokens)",
            warmup=warmup,
            repeats=repeats,
            size_label="layers",
            threads=1,
        )
        L = sizes[-1]
        model, ids = make_model(L)
        pruned = remove_layers(model, list(range(1, L, 2)))
        latency = compare(
            {
                "pruned (L/2 layers)": lambda: pruned(input_ids=ids, use_cache=False),
                "full": lambda: model(input_ids=ids, use_cache=False),
            },
            ours="pruned (L/2 layers)",
            peer="full",
            name=f"latency: one forward pass, {L}-layer model vs half its layers removed",
            warmup=warmup,
            repeats=repeats * 3,
            threads=1,
        )
    tables = {"Forward passes per search (counted, not timed)": forward_counts(sizes)}
    publish([search, latency], __file__, quick=args.quick, title="pruning-geometry benchmarks", tables=tables)


if __name__ == "__main__":
    main()
