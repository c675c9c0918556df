import itertools

import pytest
import torch

from paperworks.herm import Channel, HSMCodec, SceneConfig, make_codec, sample_episodes, transmit


@pytest.fixture(scope="module")
def codec():
    return make_codec(SceneConfig(), dim=1024, seed=3)


def _random_table(codec, n, g, p_absent=0.3):
    vals = torch.stack(
        [torch.randint(0, m, (n, len(codec.entities)), generator=g) for m in codec.n_values], -1
    )
    absent = torch.rand(n, len(codec.entities), 1, generator=g) < p_absent
    return torch.where(absent, torch.full_like(vals, -1), vals)


def test_exact_recovery_at_zero_noise(codec):
    g = torch.Generator().manual_seed(0)
    table = _random_table(codec, 200, g)
    dec = codec.decode(codec.encode_indices(table))
    assert torch.equal(dec.values, table)
    reported = dec.values >= 0
    assert torch.allclose(dec.confidence[reported], torch.ones(int(reported.sum())), atol=1e-4)


def test_ego_binding_equals_encoding_in_the_receiver_frame(codec):
    g = torch.Generator().manual_seed(1)
    ep = sample_episodes(100, SceneConfig(), g)
    dec = codec.decode(codec.encode_indices(ep.table), ego_offset=ep.offset)
    r = codec.radius
    side = 2 * r + 1
    xy = ep.rel + ep.offset[:, None, :]
    want = ep.table.clone()
    want[..., 2] = torch.where(ep.present, (xy[..., 0] + r) * side + (xy[..., 1] + r), -1)
    assert torch.equal(dec.values, want)


def test_triples_are_readable_and_named(codec):
    m = codec.encode([("slot0", "color", "c3"), ("slot2", "pos", (1, -2)), ("slot4", "shape", "s7")])
    got = {(e, a, v) for e, a, v, _ in codec.decode(m).triples()}
    assert got == {("slot0", "color", "c3"), ("slot2", "pos", (1, -2)), ("slot4", "shape", "s7")}
    shifted = codec.decode(m, ego_offset=torch.tensor([2, 3])).triples()
    assert ("slot2", "pos", (3, 1)) in {(e, a, v) for e, a, v, _ in shifted}


def test_graceful_degradation_with_noise():
    codec = make_codec(SceneConfig(), dim=512, seed=3)
    g = torch.Generator().manual_seed(2)
    table = _random_table(codec, 100, g, p_absent=0.0)
    m = codec.encode_indices(table)
    accs = []
    for snr in (10.0, 0.0, -5.0, -10.0):
        d = codec.decode(transmit(m, Channel("awgn", snr_db=snr), g))
        accs.append(float((d.values == table).float().mean()))
    assert accs[0] == 1.0
    assert all(b <= a + 0.01 for a, b in itertools.pairwise(accs))
    assert accs[-1] < 0.9  # it does degrade, not fall off a cliff at the first noise level
    assert accs[2] > 0.4


def test_never_invents_triples_from_noise(codec):
    g = torch.Generator().manual_seed(3)
    noise = (
        torch.complex(torch.randn(200, codec.dim, generator=g), torch.randn(200, codec.dim, generator=g)) * 3
    )
    d = codec.decode(noise)
    assert float((d.values >= 0).float().mean()) < 0.01
    empty = codec.decode(torch.zeros(codec.dim, dtype=torch.complex64) + 1e-3)
    assert empty.triples() == []


def test_explaining_away_helps_at_high_load():
    codec = HSMCodec([f"e{i}" for i in range(12)], {"a": range(16), "b": range(16)}, dim=256, seed=0)
    g = torch.Generator().manual_seed(4)
    table = _random_table(codec, 300, g, p_absent=0.0)
    m = codec.encode_indices(table)
    one = (codec.decode(m, iterations=1, false_alarm=None).values == table).float().mean()
    many = (codec.decode(m, iterations=4, false_alarm=None).values == table).float().mean()
    assert float(many) > float(one)


def test_codebooks_are_seeded():
    a = make_codec(SceneConfig(), dim=64, seed=7)
    b = make_codec(SceneConfig(), dim=64, seed=7)
    c = make_codec(SceneConfig(), dim=64, seed=8)
    assert torch.equal(a.keys, b.keys) and not torch.equal(a.keys, c.keys)


def test_bad_input_errors(codec):
    with pytest.raises(KeyError, match="unknown value"):
        codec.encode([("slot0", "color", "ultraviolet")])
    with pytest.raises(KeyError, match="unknown entity"):
        codec.encode([("slot9", "color", "c0")])
    with pytest.raises(KeyError, match="unknown attribute"):
        codec.encode([("slot0", "smell", "c0")])
    with pytest.raises(ValueError, match="outside the radius"):
        codec.encode([("slot0", "pos", (99, 0))])
    with pytest.raises(ValueError, match="twice"):
        codec.encode([("slot0", "color", "c0"), ("slot0", "color", "c1")])
    with pytest.raises(ValueError, match="dimension mismatch"):
        codec.decode(torch.ones(2, 512, dtype=torch.complex64))
    with pytest.raises(ValueError, match="unknown symbol index"):
        codec.encode_indices(torch.full((1, 5, 3), 300))
    with pytest.raises(ValueError, match="values: expected shape"):
        codec.encode_indices(torch.zeros(1, 4, 3, dtype=torch.int64))
    with pytest.raises(ValueError, match="threshold"):
        codec.decode(codec.encode([]), threshold=1.5)
    with pytest.raises(ValueError, match="ego_offset"):
        codec.decode(torch.ones(2, 1024, dtype=torch.complex64), ego_offset=torch.zeros(3, 2))
    with pytest.raises(TypeError, match="complex"):
        codec.decode(torch.ones(1024))
    with pytest.raises(ValueError, match="finite"):
        codec.decode(torch.full((1024,), complex(float("nan"), 0.0)))
