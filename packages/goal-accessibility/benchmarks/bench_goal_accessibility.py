"""GAR extraction cost on a tiny random Hugging Face Llama (eager): our hooks vs ``output_attentions=True``.

Sides at each context length: a plain forward pass (the floor), :func:`paperworks.goal_accessibility.gar`
(goal mass reduced inside forward hooks; the attention matrices are never kept) and transformers'
``output_attentions=True`` followed by :func:`goal_accessibility_ratio` on the returned matrices. The two
GAR routes must agree (checked before timing). The quality table gives the bytes each route keeps per
forward (our (L, B, H, T) masses vs the (L, B, H, T, T) matrices) and the largest difference.

    uv run --no-sync python packages/goal-accessibility/benchmarks/bench_goal_accessibility.py [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

from paperworks.core.bench import compare, write_results
from paperworks.goal_accessibility import gar, goal_accessibility_ratio

SIZES = (512, 2048, 8192)


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


def make_input(T: int):
    g = torch.Generator().manual_seed(T)
    ids = torch.randint(0, 128, (1, T), generator=g)
    goal = torch.zeros(1, T, dtype=torch.bool)
    goal[:, 1 : 1 + T // 16] = True  # a system prompt of T/16 tokens
    rows = torch.zeros(1, T, dtype=torch.bool)
    rows[:, T // 2 :] = True
    return ids, goal, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    model = tiny_llama()
    sizes = SIZES[:1] if args.quick else SIZES

    def plain(x):
        with torch.inference_mode():
            return model(input_ids=x[0]).logits

    def ours(x):
        return gar(model, x[0], x[1], x[2])

    def peer(x):
        with torch.inference_mode():
            att = model(input_ids=x[0], output_attentions=True).attentions
            return goal_accessibility_ratio(att, x[1], x[2])

    quality = [
        "| context | max abs diff (ours vs output_attentions) | kept by ours | kept by output_attentions |",
        "| --- | --- | --- | --- |",
    ]
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    for T in sizes:
        x = make_input(T)
        diff = float((ours(x) - peer(x)).abs().max())
        assert diff < 1e-5, diff
        quality.append(
            f"| {T} | {diff:.1e} | {L * H * T * 4 / 2**10:.0f} KiB | {L * H * T * T * 4 / 2**20:.0f} MiB |"
        )
    res = compare(
        {"gar_hooks": ours, "output_attentions": peer, "plain_forward": plain},
        make_input,
        sizes,
        ours="gar_hooks",
        name="GAR extraction: hooks vs output_attentions (tiny eager Llama, 2 layers)",
        warmup=1,
        repeats=3 if args.quick else 5,
        number=1,
        size_label="context length",
        note="ratio < 1: our hooks are faster; plain_forward is the floor (no GAR)",
    )
    folder = Path(tempfile.mkdtemp()) if args.quick else Path(__file__).parent
    _js, md = write_results(
        res,
        folder,
        title="goal-accessibility benchmarks",
        tables={"GAR agreement and kept memory": "\n".join(quality)},
    )
    print(md.read_text())


if __name__ == "__main__":
    main()
