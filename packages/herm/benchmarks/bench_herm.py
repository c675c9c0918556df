"""Side by side: paperworks.herm FHRR operations vs torch-hd's FHRR (the peer), one process.

For D in 1,024 / 4,096 / 10,000: B = 64 messages, each bundling K = 15 bound (key, value) pairs with
values from a codebook of 64. Two questions, one :func:`paperworks.core.bench.compare` each (under
``torch.inference_mode``, one torch thread, the same tensors for both sides):

* encode: bind keys with values and bundle (ours: ``bind`` + ``multiset``; peer: ``torchhd.bind`` +
  ``torchhd.multiset``);
* decode: unbind every key and clean up against the codebook (ours: ``unbind`` + ``similarity``;
  peer: ``torchhd.bind(m, torchhd.inverse(k))`` + ``torchhd.dot_similarity``).

Before timing, the script asserts equal encodings and equal one-shot decodings. Quality table, on the
same vectors through AWGN at -15 dB: the peer's one-shot decode, ours one-shot, and ours with iterated
explaining away (``HSMCodec.decode``), which torch-hd has no counterpart for.

    uv run python packages/herm/benchmarks/bench_herm.py [--quick]
    uv run paperworks bench herm [--quick]

``--quick``: D = 1,024 only, 3 rounds after 1 warm-up call, results written to a temporary folder
(the committed ``benchmarks/results.*`` are left alone) and printed.
"""

from __future__ import annotations

import argparse
import functools
from types import SimpleNamespace

import torch
import torchhd
from torchhd.tensors.fhrr import FHRRTensor

from paperworks.core.bench import compare, publish
from paperworks.herm import Channel, HSMCodec, bind, multiset, similarity, transmit, unbind

DIMS = (1024, 4096, 10000)
B, K, M = 64, 15, 64
SNR_DB = -15.0
REPEATS, WARMUP = 31, 2
TITLE = "herm benchmarks"
SETUP = f"B = {B} messages x K = {K} bound pairs, codebook of {M} values, complex64, CPU."
PEER_NOTE = (
    "torch-hd's inputs are viewed as `FHRRTensor` once, outside the timing (`as_subclass`, no copy); "
    "its calls then pay torch-hd's `__torch_function__` dispatch, which is part of the peer."
)


@functools.cache
def make_input(dim: int) -> SimpleNamespace:
    """The vectors of one D, shared by both compares and the quality table (built once per D)."""
    g = torch.Generator().manual_seed(dim)
    codec = HSMCodec([f"k{i}" for i in range(K)], {"v": range(M)}, dim=dim, seed=dim)
    keys, cb = codec.keys[:, 0], codec.codebooks[0]
    idx = torch.randint(0, M, (B, K), generator=g)
    keys_b = keys[None].expand(B, K, dim).contiguous()
    vals = cb[idx]
    hd_keys, hd_vals, hd_cb = (t.as_subclass(FHRRTensor) for t in (keys_b, vals, cb))
    m = multiset(bind(keys_b, vals))
    peer_m = torchhd.multiset(torchhd.bind(hd_keys, hd_vals)).as_subclass(torch.Tensor)
    assert torch.allclose(m, peer_m, atol=1e-4)
    m_b = m[:, None, :].expand(B, K, dim).contiguous()
    x = SimpleNamespace(
        codec=codec,
        idx=idx,
        keys_b=keys_b,
        vals=vals,
        cb=cb,
        m=m,
        m_b=m_b,
        hd_keys=hd_keys,
        hd_vals=hd_vals,
        hd_cb=hd_cb,
        hd_m=m_b.as_subclass(FHRRTensor),
        received=transmit(m, Channel("awgn", snr_db=SNR_DB), g),
    )
    assert torch.equal(ours_decode(x), peer_decode(x).as_subclass(torch.Tensor))
    return x


def ours_encode(x: SimpleNamespace) -> torch.Tensor:
    return multiset(bind(x.keys_b, x.vals))


def peer_encode(x: SimpleNamespace) -> torch.Tensor:
    return torchhd.multiset(torchhd.bind(x.hd_keys, x.hd_vals))


def ours_decode(x: SimpleNamespace) -> torch.Tensor:
    return similarity(unbind(x.m_b, x.keys_b), x.cb).argmax(-1)


def peer_decode(x: SimpleNamespace) -> torch.Tensor:
    return torchhd.dot_similarity(torchhd.bind(x.hd_m, torchhd.inverse(x.hd_keys)), x.hd_cb).argmax(-1)


def quality_table(dims: tuple[int, ...]) -> str:
    """Decoding accuracy of the triples after AWGN at ``SNR_DB``, on the benchmark's own vectors."""
    rows = [
        "| D | torch-hd one-shot | ours one-shot | ours iterative (4 iterations of explaining away) |",
        "| --- | --- | --- | --- |",
    ]
    for dim in dims:
        x = make_input(dim)
        r_b = x.received[:, None, :].expand(B, K, dim).contiguous()
        unbound = torchhd.bind(r_b.as_subclass(FHRRTensor), torchhd.inverse(x.hd_keys))
        peer = torchhd.dot_similarity(unbound, x.hd_cb)
        acc_peer = float((peer.argmax(-1).as_subclass(torch.Tensor) == x.idx).float().mean())
        table = x.idx[:, :, None]
        one = x.codec.decode(x.received, iterations=1, prior_present=1.0).values
        many = x.codec.decode(x.received, iterations=4, prior_present=1.0).values
        acc_one = float((one == table).float().mean())
        acc_many = float((many == table).float().mean())
        rows.append(f"| {dim} | {acc_peer:.3f} | {acc_one:.3f} | {acc_many:.3f} |")
    return "\n".join(rows) + (
        f"\n\nFraction of the {B} x {K} (key, value) pairs decoded right after AWGN at {SNR_DB:g} dB, "
        f"same vectors as the timings; our MAP decoder with the prior of a key being present at 1, so every "
        f"key is decoded to a value, as torch-hd's argmax (torch-hd {torchhd.__version__})."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="D = 1,024 only, 3 rounds; temporary output")
    args = parser.parse_args()
    dims = DIMS[:1] if args.quick else DIMS
    repeats, warmup = (3, 1) if args.quick else (REPEATS, WARMUP)
    common = dict(
        make_input=make_input,
        sizes=dims,
        ours="ours",
        peer="torch-hd",
        warmup=warmup,
        repeats=repeats,
        threads=1,
        size_label="D",
    )
    with torch.inference_mode():
        results = [
            compare(
                {"ours": ours_encode, "torch-hd": peer_encode},
                name="FHRR encode: bind K pairs and bundle",
                note=f"{SETUP} Ours: `bind` + `multiset`; torch-hd: `bind` + `multiset`. {PEER_NOTE}",
                **common,
            ),
            compare(
                {"ours": ours_decode, "torch-hd": peer_decode},
                name="FHRR decode: unbind every key and clean up (one shot)",
                note=(
                    f"{SETUP} Ours: `unbind` + `similarity` + argmax; torch-hd: `bind(m, inverse(k))` + "
                    f"`dot_similarity` + argmax. {PEER_NOTE}"
                ),
                **common,
            ),
        ]
        tables = {"Quality: decoding accuracy through AWGN (same vectors)": quality_table(dims)}
    publish(
        results, __file__, quick=args.quick, title=TITLE + (" (quick)" if args.quick else ""), tables=tables
    )


if __name__ == "__main__":
    main()
