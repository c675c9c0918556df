import itertools
import math

import pytest
import torch

from paperworks.herm import Channel, HSMCodec, SceneConfig, make_codec, sample_episodes, transmit


@pytest.fixture(scope="module")
def codec():
    return make_codec(SceneConfig(), dim=512, seed=3)


def _random_table(codec, n, g, p_absent=0.3):
    vals = torch.stack(
        [torch.randint(0, m, (n, len(codec.entities)), generator=g) for m in codec.n_values], -1
    )
    absent = torch.rand(n, len(codec.entities), 1, generator=g) < p_absent
    return torch.where(absent, torch.full_like(vals, -1), vals)


def _noise(shape, n0, g):
    return torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g)) * math.sqrt(n0 / 2)


def test_exact_recovery_at_zero_noise(codec):
    g = torch.Generator().manual_seed(0)
    table = _random_table(codec, 60, g)
    dec = codec.decode(codec.encode_indices(table))
    assert torch.equal(dec.values, table)
    assert torch.equal(dec.readable, table >= 0)
    reported = dec.values >= 0
    assert torch.allclose(dec.confidence[reported], torch.ones(int(reported.sum())), atol=1e-4)
    assert bool((dec.posterior > 0.999).all())


def test_ego_binding_equals_encoding_in_the_receiver_frame(codec):
    g = torch.Generator().manual_seed(1)
    ep = sample_episodes(60, SceneConfig(), g)
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


# ---- MAP decoding against brute force --------------------------------------------------------


def _brute_force_map(codec, r, n0, q, presence):
    """argmax over every possible table of log p(r | table) + log prior (exact Gaussian likelihood)."""
    n_e, n_a = len(codec.entities), len(codec.attributes)
    sizes = codec.n_values
    if presence == "key":
        options = [range(-1, sizes[a]) for _ in range(n_e) for a in range(n_a)]
        tables = torch.tensor(list(itertools.product(*options))).reshape(-1, n_e, n_a)
        per_key = torch.tensor([math.log(q / m) for m in sizes])
        log_prior = torch.where(tables >= 0, per_key, math.log(1 - q)).sum(dim=(1, 2))
    else:
        entity = [(-1,) * n_a, *itertools.product(*[range(m) for m in sizes])]
        tables = torch.tensor(list(itertools.product(entity, repeat=n_e)))
        present = math.log(q) - sum(math.log(m) for m in sizes)
        log_prior = torch.where(tables[..., 0] >= 0, present, math.log(1 - q)).sum(dim=1)
    enc = codec.encode_indices(tables)  # (T, D)
    dist = (r[:, None, :] - enc[None]).abs().pow(2).sum(-1)  # (B, T)
    return tables[(-dist / n0 + log_prior[None]).argmax(dim=1)]


@pytest.mark.parametrize("presence", ["key", "entity"])
def test_map_decoding_matches_brute_force_on_small_codebooks(presence):
    codec = HSMCodec(["e0", "e1"], {"a": ["x", "y", "z"], "b": ["u", "v", "w"]}, dim=64, seed=1)
    g = torch.Generator().manual_seed(0)
    n, q, n0 = 600, 0.6, 12.0
    vals = torch.randint(0, 3, (n, 2, 2), generator=g)
    mask_shape = (n, 2, 2) if presence == "key" else (n, 2, 1)
    truth = torch.where(torch.rand(mask_shape, generator=g) < q, vals, -1)
    r = codec.encode_indices(truth) + _noise((n, 64), n0, g)
    best = _brute_force_map(codec, r, n0, q, presence)
    ours = codec.decode(r, prior_present=q, presence=presence, noise_var=n0, gain=1.0, iterations=3).values
    one_shot = codec.decode(
        r, prior_present=q, presence=presence, noise_var=n0, gain=1.0, iterations=1
    ).values
    agree = float((ours == best).all(dim=(1, 2)).float().mean())
    map_err = float((best != truth).any(dim=(1, 2)).float().mean())
    our_err = float((ours != truth).any(dim=(1, 2)).float().mean())
    assert map_err > 0.05  # a regime where the MAP table is often wrong: the agreement is not trivial
    assert agree >= 0.97
    assert our_err <= map_err + 0.015
    assert float((one_shot == best).all(dim=(1, 2)).float().mean()) < agree  # explaining away matters


def test_channel_estimates_are_close_to_the_truth(codec):
    g = torch.Generator().manual_seed(7)
    table = _random_table(codec, 60, g, p_absent=0.2)
    m = codec.encode_indices(table)
    k = (table >= 0).sum(dim=(1, 2)).float()
    d = codec.decode(transmit(m, Channel("awgn", snr_db=-3.0), g), prior_present=0.8)
    n0 = k * 10**0.3  # SNR against the message's own power k per complex component
    assert float((d.noise_var / n0).mean()) == pytest.approx(1.0, abs=0.05)
    assert float(d.gain.mean()) == pytest.approx(1.0, abs=0.03)
    flipped = codec.decode(transmit(m, Channel("flip", p=0.2), g), prior_present=0.8)
    assert float(flipped.gain.mean()) == pytest.approx(0.6, abs=0.03)  # E[sign] = 1 - 2p


# ---- the readable list's false-alarm gate ----------------------------------------------------


def test_gate_false_alarm_rate_is_bounded_per_codebook_monte_carlo():
    """Pure noise: every key absent. With the MAP prior at 1 every key is decided present, so only the
    gate stands between noise and the list; the union bound per codebook gives a rate <= alpha for each
    attribute, and close to it (within 20 % below) since alpha / M is small and the values independent."""
    codec = make_codec(SceneConfig(), dim=512, seed=11)
    g = torch.Generator().manual_seed(12)
    alpha, n = 0.05, 2000
    noise = _noise((n, codec.dim), 15.0, g)
    d = codec.decode(noise, prior_present=1.0, false_alarm=alpha, iterations=1)
    rates = d.readable.float().mean(dim=(0, 1))  # per attribute: colour (8), shape (8), position (225)
    se = math.sqrt(alpha * (1 - alpha) / (n * len(codec.entities)))
    for a, rate in enumerate(rates.tolist()):
        assert rate <= alpha + 3 * se, (codec.attributes[a], rate)
        assert rate >= 0.8 * alpha - 3 * se, (
            codec.attributes[a],
            rate,
        )  # a bound on 225 values is 5x tighter


def test_never_lists_triples_from_noise(codec):
    g = torch.Generator().manual_seed(3)
    d = codec.decode(_noise((120, codec.dim), 18.0, g), prior_present=0.5)
    assert float(d.readable.float().mean()) < 0.01
    empty = codec.decode(torch.zeros(codec.dim, dtype=torch.complex64) + 1e-3)
    assert empty.triples() == []


def test_graceful_degradation_with_noise():
    codec = make_codec(SceneConfig(), dim=512, seed=3)
    g = torch.Generator().manual_seed(2)
    table = _random_table(codec, 60, g, p_absent=0.0)
    m = codec.encode_indices(table)
    accs = []
    for snr in (10.0, 0.0, -5.0, -10.0):
        d = codec.decode(transmit(m, Channel("awgn", snr_db=snr), g), prior_present=0.9)
        accs.append(float((d.values == table).float().mean()))
    assert accs[0] == 1.0
    assert all(b <= a + 0.01 for a, b in itertools.pairwise(accs))
    assert accs[-1] < 0.9  # it does degrade, not fall off a cliff at the first noise level
    assert accs[2] > 0.4


def test_explaining_away_helps_at_high_load():
    codec = HSMCodec([f"e{i}" for i in range(12)], {"a": range(16), "b": range(16)}, dim=256, seed=0)
    g = torch.Generator().manual_seed(4)
    table = _random_table(codec, 150, g, p_absent=0.0)
    m = codec.encode_indices(table)
    one = (codec.decode(m, iterations=1, prior_present=1.0).values == table).float().mean()
    many = (codec.decode(m, iterations=4, prior_present=1.0).values == table).float().mean()
    assert float(many) > float(one)


def test_codebooks_are_seeded():
    a = make_codec(SceneConfig(), dim=64, seed=7)
    b = make_codec(SceneConfig(), dim=64, seed=7)
    c = make_codec(SceneConfig(), dim=64, seed=8)
    assert torch.equal(a.keys, b.keys) and not torch.equal(a.keys, c.keys)
