"""Side by side: paperworks.herm FHRR operations vs torch-hd's FHRR (the peer), one process.

For D in 1,024 / 4,096 / 10,000: B = 64 messages, each bundling K = 15 bound (key, value) pairs with
values from a codebook of 64. Timed (medians over interleaved repeats, torch.inference_mode):
* encode: bind keys with values and bundle (ours: ``bind`` + ``bundle``; peer: ``torchhd.bind`` +
  ``torchhd.multiset``);
* decode: unbind every key and clean up against the codebook (ours: ``unbind`` + ``similarity``;
  peer: ``torchhd.bind(m, torchhd.inverse(k))`` + ``torchhd.dot_similarity``).
Decoding accuracy on the same vectors through AWGN at -15 dB: the peer's one-shot decode, ours one-shot,
and ours with iterated explaining away (``HSMCodec.decode``). Run: ``python benchmarks/bench_herm.py``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import torch
import torchhd
from torchhd.tensors.fhrr import FHRRTensor

from paperworks.core import atomic_write_text
from paperworks.herm import Channel, HSMCodec, bind, bundle, similarity, transmit, unbind

DIMS = (1024, 4096, 10000)
B, K, M = 64, 15, 64
REPEATS = 31
SNR_DB = -15.0


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _row(dim: int) -> str:
    g = torch.Generator().manual_seed(dim)
    codec = HSMCodec([f"k{i}" for i in range(K)], {"v": range(M)}, dim=dim, seed=dim)
    keys, cb = codec.keys[:, 0], codec.codebooks[0]
    idx = torch.randint(0, M, (B, K), generator=g)
    keys_b = keys[None].expand(B, K, dim).contiguous()
    vals = cb[idx]
    hd_keys, hd_vals, hd_cb = (t.as_subclass(FHRRTensor) for t in (keys_b, vals, cb))
    with torch.inference_mode():
        ours_enc = lambda: bundle(bind(keys_b, vals))  # noqa: E731
        peer_enc = lambda: torchhd.multiset(torchhd.bind(hd_keys, hd_vals))  # noqa: E731
        m = ours_enc()
        assert torch.allclose(m, peer_enc().as_subclass(torch.Tensor), atol=1e-4)
        m_b = m[:, None, :].expand(B, K, dim).contiguous()
        hd_m = m_b.as_subclass(FHRRTensor)
        ours_dec = lambda: similarity(unbind(m_b, keys_b), cb).argmax(-1)  # noqa: E731

        def peer_dec():
            return torchhd.dot_similarity(torchhd.bind(hd_m, torchhd.inverse(hd_keys)), hd_cb).argmax(-1)

        assert torch.equal(ours_dec(), peer_dec().as_subclass(torch.Tensor))
        for fn in (ours_enc, peer_enc, ours_dec, peer_dec) * 2:  # warm-up
            fn()
        te, tpe, td, tpd = [], [], [], []
        for _ in range(REPEATS):  # interleaved
            te.append(_time(ours_enc))
            tpe.append(_time(peer_enc))
            td.append(_time(ours_dec))
            tpd.append(_time(peer_dec))
        r = transmit(m, Channel("awgn", snr_db=SNR_DB), g)
        r_b = r[:, None, :].expand(B, K, dim).contiguous()
        peer_pred = torchhd.dot_similarity(
            torchhd.bind(r_b.as_subclass(FHRRTensor), torchhd.inverse(hd_keys)), hd_cb
        ).argmax(-1)
        acc_peer = float((peer_pred.as_subclass(torch.Tensor) == idx).float().mean())
        table = idx[:, :, None]
        one = codec.decode(r, iterations=1, threshold=1e-6, false_alarm=None).values
        many = codec.decode(r, iterations=4, threshold=1e-6, false_alarm=None).values
        acc_one = float((one == table).float().mean())
        acc_many = float((many == table).float().mean())
    me, mpe, md, mpd = (statistics.median(t) * 1e3 for t in (te, tpe, td, tpd))
    return (
        f"| {dim} | {me:.2f} | {mpe:.2f} | {me / mpe:.2f} | {md:.2f} | {mpd:.2f} | {md / mpd:.2f} "
        f"| {acc_peer:.3f} | {acc_one:.3f} | {acc_many:.3f} |"
    )


def main() -> str:
    torch.set_num_threads(1)
    rows = [
        "| D | encode ours (ms) | encode torch-hd (ms) | ratio | decode ours (ms) | decode torch-hd (ms) "
        "| ratio | acc torch-hd one-shot | acc ours one-shot | acc ours iterative |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows += [_row(dim) for dim in DIMS]
    table = "\n".join(rows)
    note = (
        f"B={B} messages x K={K} bound pairs, codebook {M}, medians of {REPEATS} interleaved repeats, "
        f"1 torch thread, CPU; accuracy after AWGN {SNR_DB:g} dB. ratio = ours / torch-hd "
        f"(torch {torch.__version__.split('+')[0]}, torch-hd {torchhd.__version__})."
    )
    text = table + "\n\n" + note + "\n"
    print(text)
    atomic_write_text(Path(__file__).with_name("results.md"), text)
    return text


if __name__ == "__main__":
    main()
