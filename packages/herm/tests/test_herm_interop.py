"""Interop with the real torch-hd (in the package's test group): our FHRR is torch-hd's FHRR."""

import pytest
import torch

torchhd = pytest.importorskip("torchhd")
from torchhd.tensors.fhrr import FHRRTensor  # noqa: E402

from paperworks.herm import (  # noqa: E402
    HSMCodec,
    bind,
    bundle,
    cosine_similarity,
    dot_similarity,
    from_torchhd,
    inverse,
    multiset,
    random_atoms,
    to_torchhd,
)


def test_round_trip_shares_memory_and_type():
    x = random_atoms(4, 32, torch.Generator().manual_seed(0))
    t = to_torchhd(x)
    assert isinstance(t, FHRRTensor) and t.data_ptr() == x.data_ptr()
    back = from_torchhd(t)
    assert type(back) is torch.Tensor and torch.equal(back, x)
    hd = torchhd.random(3, 32, "FHRR", generator=torch.Generator().manual_seed(1))
    assert type(from_torchhd(hd)) is torch.Tensor


def test_operations_agree_with_torchhd():
    g = torch.Generator().manual_seed(2)
    a, b = random_atoms(5, 64, g), random_atoms(5, 64, g)
    ta, tb = to_torchhd(a), to_torchhd(b)
    assert torch.allclose(bind(a, b), from_torchhd(torchhd.bind(ta, tb)))
    assert torch.allclose(bind(a, b[0]), from_torchhd(torchhd.bind(ta, tb[0])))  # both broadcast
    assert torch.allclose(bundle(a, b), from_torchhd(torchhd.bundle(ta, tb)))
    assert torch.allclose(multiset(a), from_torchhd(torchhd.multiset(ta)), atol=1e-5)
    assert torch.allclose(inverse(a), from_torchhd(torchhd.inverse(ta)))
    dot = torchhd.dot_similarity(ta, tb).as_subclass(torch.Tensor)
    assert torch.allclose(dot_similarity(a, b), dot, atol=1e-4)
    cos = torchhd.cosine_similarity(ta, tb).as_subclass(torch.Tensor)
    assert torch.allclose(cosine_similarity(a, b), cos, atol=1e-5)


def test_torchhd_cleanup_reads_an_hsm_message():
    codec = HSMCodec(["box", "ball"], {"color": ["red", "green", "blue"]}, dim=512, seed=0)
    m = codec.encode([("box", "color", "green"), ("ball", "color", "blue")])
    unbound = torchhd.bind(to_torchhd(m), torchhd.inverse(to_torchhd(codec.keys[0, 0])))
    best = torchhd.dot_similarity(unbound, to_torchhd(codec.codebooks[0])).argmax()
    assert codec.value_name("color", int(best)) == "green"
    # and a torch-hd message decodes with our codec
    back = codec.decode(from_torchhd(to_torchhd(m)))
    assert {(e, v) for e, _, v, _ in back.triples()} == {("box", "green"), ("ball", "blue")}


def test_interop_errors():
    with pytest.raises(TypeError, match="complex"):
        to_torchhd(torch.ones(4))
    with pytest.raises(TypeError, match="t: expected"):
        from_torchhd([1j])
    with pytest.raises(TypeError, match="another VSA"):
        from_torchhd(torchhd.random(2, 8, "MAP"))
