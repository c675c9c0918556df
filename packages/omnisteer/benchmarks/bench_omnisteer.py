"""Side by side on the core bench harness: our steering hooks and refusal-direction extraction vs the
steering-vectors library (or, where it is not installed, a plain hand-written forward hook).

One random tiny ``LlamaForCausalLM`` (4 layers, d = 64, eager attention, vocabulary of 64 word
tokens), batch 8, sequence lengths 32 / 128 / 512, one torch thread, ``torch.inference_mode``.

1. *Steering overhead*: one forward pass with a fixed vector added at layers 1 and 2 (all positions)
   by ``paperworks.omnisteer.steer`` (ours), by ``steering_vectors.SteeringVector.apply`` (peer), with
   an OmniSteer adapter (ours, adaptive strength), and the plain unsteered pass (the floor).
2. *Refusal-direction extraction*: difference-in-means vectors at every layer (last position) from 16
   harmful and 16 harmless prompts (strings, tokenised by the same in-memory word-level tokenizer
   on both sides): ours = ``record_activations`` + ``refusal_vector`` in one batched pass per set;
   peer = ``steering_vectors.train_steering_vector`` (``read_token_index=-1``, ``batch_size=16``).

steering-vectors 0.12 pins ``transformers<5`` and cannot live in the workspace (transformers 5).
Run it in a throwaway venv::

    uv venv /tmp/sv
    uv pip install --python /tmp/sv steering-vectors 'transformers<5' torch numpy scipy tqdm safetensors
    uv pip install --python /tmp/sv --no-deps -e shared -e packages/omnisteer
    /tmp/sv/bin/python packages/omnisteer/benchmarks/bench_omnisteer.py [--quick]

Without steering-vectors (e.g. in the workspace) the peer is a plain forward hook written the usual
way (``output[0] + v``), and extraction is compared with a per-prompt loop over
``output_hidden_states`` (what one writes without a library). The full run writes
benchmarks/results.json and results.md; ``--quick`` (the smallest length, 3 rounds) writes to a
temporary folder.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

from paperworks.core.bench import compare, write_results
from paperworks.omnisteer import OmniSteer, record_activations, refusal_vector, steer

try:
    import steering_vectors as sv
except ImportError:  # the workspace: transformers 5
    sv = None

BATCH, HIDDEN, LAYERS, VOCAB = 8, 64, 4, 64
LENGTHS = (32, 128, 512)
STEER_LAYERS = (1, 2)
N_PROMPTS = 16


def tiny_model():
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=VOCAB + 2,
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=1024,
        attn_implementation="eager",
        pad_token_id=0,
    )
    return transformers.LlamaForCausalLM(cfg).eval()


def word_tokenizer():
    """A word-level fast tokenizer over ``w0 .. w63`` built in memory (no files, no network)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<unk>": 1, **{f"w{i}": i + 2 for i in range(VOCAB)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>")


def plain_hook(model, vec, layers):
    """What one writes without a library: a forward hook adding ``vec`` to the block's output."""

    def hook(module, args, output):
        if isinstance(output, tuple):
            return (output[0] + vec, *output[1:])
        return output + vec

    return [model.model.layers[layer].register_forward_hook(hook) for layer in layers]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    lengths = LENGTHS[:1] if args.quick else LENGTHS
    repeats = 3 if args.quick else 15
    model = tiny_model()
    tok = word_tokenizer()
    gen = torch.Generator().manual_seed(0)
    vec = torch.randn(HIDDEN, generator=gen)
    dirs = dict.fromkeys(STEER_LAYERS, vec)
    omni = OmniSteer(dirs, alpha_max=2.0)
    peer_name = "steering-vectors" if sv is not None else "plain forward hook"

    def make_ids(length):
        return torch.randint(2, VOCAB + 2, (BATCH, length), generator=torch.Generator().manual_seed(length))

    def ours(ids):
        with torch.inference_mode(), steer(model, dirs, 1.0):
            return model(ids, use_cache=False).logits

    def adapter(ids):
        with torch.inference_mode(), omni.apply(model):
            return model(ids, use_cache=False).logits

    def plain(ids):
        with torch.inference_mode():
            return model(ids, use_cache=False).logits

    if sv is not None:
        sv_vec = sv.SteeringVector({layer: vec for layer in STEER_LAYERS}, "decoder_block")

        def peer(ids):
            with torch.inference_mode(), sv_vec.apply(model, multiplier=1.0):
                return model(ids, use_cache=False).logits
    else:

        def peer(ids):
            handles = plain_hook(model, vec, STEER_LAYERS)
            try:
                with torch.inference_mode():
                    return model(ids, use_cache=False).logits
            finally:
                for h in handles:
                    h.remove()

    # correctness first: the same steered logits on both sides
    ids = make_ids(lengths[0])
    torch.testing.assert_close(ours(ids), peer(ids), rtol=1e-5, atol=1e-5)
    sides = {"steer (ours)": ours, peer_name: peer, "OmniSteer adapter (ours)": adapter, "no steering": plain}
    r1 = compare(
        sides,
        make_ids,
        lengths,
        ours="steer (ours)",
        peer=peer_name,
        repeats=repeats,
        name=f"steered forward pass: ours vs {peer_name}",
        size_label="sequence length",
        note=f"batch {BATCH}, tiny Llama (4 layers, d={HIDDEN}), a fixed vector added at layers 1-2, "
        "all positions; 'no steering' is the floor; one thread, inference_mode",
    )

    def make_prompts(length):
        g = torch.Generator().manual_seed(1000 + length)
        words = torch.randint(0, VOCAB, (2 * N_PROMPTS, length), generator=g)
        texts = [" ".join(f"w{int(i)}" for i in row) for row in words]
        return texts[:N_PROMPTS], texts[N_PROMPTS:]

    all_layers = list(range(LAYERS))

    def extract_ours(prompts):
        harmful, harmless = prompts
        with torch.inference_mode(), record_activations(model, all_layers) as rec:
            model(tok(harmful, return_tensors="pt")["input_ids"], use_cache=False)
            model(tok(harmless, return_tensors="pt")["input_ids"], use_cache=False)
        return {layer: refusal_vector(rec[layer][0], rec[layer][1]) for layer in all_layers}

    if sv is not None:

        def extract_peer(prompts):
            harmful, harmless = prompts
            v = sv.train_steering_vector(
                model,
                tok,
                list(zip(harmful, harmless, strict=True)),
                layers=all_layers,
                read_token_index=-1,
                batch_size=N_PROMPTS,
            )
            return v.layer_activations
    else:

        def extract_peer(prompts):
            harmful, harmless = prompts
            acc = {}
            with torch.inference_mode():
                for sign, texts in ((1.0, harmful), (-1.0, harmless)):
                    for t in texts:
                        hs = model(
                            tok(t, return_tensors="pt")["input_ids"], output_hidden_states=True
                        ).hidden_states
                        for layer in all_layers:
                            acc[layer] = acc.get(layer, 0) + sign * hs[layer + 1][0, -1] / len(texts)
            return acc

    prompts = make_prompts(lengths[0])
    a, b = extract_ours(prompts), extract_peer(prompts)
    for layer in all_layers[:-1]:  # the last hidden state may be post-norm in output_hidden_states
        torch.testing.assert_close(a[layer], b[layer], rtol=1e-4, atol=1e-5)
    r2 = compare(
        {"record_activations + refusal_vector (ours)": extract_ours, peer_name: extract_peer},
        make_prompts,
        lengths,
        ours="record_activations + refusal_vector (ours)",
        peer=peer_name,
        repeats=repeats,
        name=f"refusal-direction extraction: ours vs {peer_name}",
        size_label="sequence length",
        note=f"{N_PROMPTS} harmful + {N_PROMPTS} harmless prompts (random word strings), difference in "
        f"means at all {LAYERS} layers, last position; tokenisation included on both sides",
    )

    rows = ["| sequence length | side | tokens / s (median) |", "| --- | --- | --- |"]
    for size in r1.rows:
        for side in size.sides:
            rows.append(f"| {size.size} | {side.name} | {BATCH * size.size / side.median_s:,.0f} |")
    env = (
        f"steering-vectors {sv.__version__ if hasattr(sv, '__version__') else ''} in a separate venv with "
        "transformers<5"
        if sv is not None
        else "workspace (no steering-vectors: plain-hook peer)"
    )
    import transformers

    tables = {
        "Throughput of the steered forward pass": "\n".join(rows),
        "Environment": f"peer: {peer_name}; run in: {env}; transformers {transformers.__version__}, "
        f"torch {torch.__version__}",
    }
    folder = Path(tempfile.mkdtemp()) if args.quick else Path(__file__).parent
    write_results([r1, r2], folder, title="OmniSteer: steering hooks and direction extraction", tables=tables)
    print((folder / "results.md").read_text())


if __name__ == "__main__":
    main()
