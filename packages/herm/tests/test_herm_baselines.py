import pytest
import torch

from paperworks.herm import (
    Channel,
    HermMessenger,
    NeuralMessenger,
    NumericMessenger,
    SceneConfig,
    make_codec,
    sample_episodes,
    transmit,
)
from paperworks.herm.experiments import _score, _truth

SC = SceneConfig()


@pytest.fixture(scope="module")
def episodes():
    return sample_episodes(300, SC, torch.Generator().manual_seed(0))


def test_numeric_round_trip_and_equal_length(episodes):
    ep = episodes
    num = NumericMessenger(SC, length=2048)
    x = num.encode(ep.table)
    assert x.shape == (300, 2048)
    assert torch.equal(num.decode(x, ep.offset), _truth(ep))
    assert torch.equal(
        NumericMessenger(SC).decode(NumericMessenger(SC).encode(ep.table), ep.offset), _truth(ep)
    )


def test_numeric_repetition_buys_snr_and_combiners_match_their_channels(episodes):
    ep, g = episodes, torch.Generator().manual_seed(1)
    short, long_ = NumericMessenger(SC), NumericMessenger(SC, length=2048)
    awgn = Channel("awgn", snr_db=0.0)
    acc_short = _score(short.decode(transmit(short.encode(ep.table), awgn, g), ep.offset), ep)["triple_acc"]
    acc_long = _score(long_.decode(transmit(long_.encode(ep.table), awgn, g), ep.offset), ep)["triple_acc"]
    assert acc_long > acc_short + 0.3  # 81 copies averaged: about 19 dB more per number
    flips = transmit(long_.encode(ep.table), Channel("flip", p=0.2), g)
    median = NumericMessenger(SC, length=2048, combine="median")
    assert torch.equal(median.decode(flips, ep.offset), _truth(ep))  # the majority sign survives
    assert _score(long_.decode(flips, ep.offset), ep)["triple_acc"] < 0.9  # the mean shrinks by 1 - 2p
    erased = transmit(long_.encode(ep.table), Channel("erase", p=0.6), g)
    assert torch.equal(long_.decode(erased, ep.offset), _truth(ep))  # known erasures: average the rest


def test_herm_messenger_is_the_codec_map_decision():
    ep = sample_episodes(100, SC, torch.Generator().manual_seed(5))
    codec = make_codec(SC, dim=256, seed=2)
    herm = HermMessenger(codec, prior_present=0.8)
    r = transmit(herm.encode(ep.table), Channel("awgn", snr_db=-3.0), torch.Generator().manual_seed(3))
    d = codec.decode(r, ego_offset=ep.offset, prior_present=0.8, presence="entity")
    assert torch.equal(herm.decode(r, ep.offset), d.values)


def test_neural_fit_records_its_stopping_and_gain_control(episodes):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(4)
    net = NeuralMessenger(SC, n_symbols=64, hidden=32)
    net.fit(40, batch=32, generator=g, eval_every=5, patience=1, reductions=1, tol=0.5, n_validation=32)
    assert net.converged_ is True and net.steps_ < 40  # a loose tolerance plateaus early
    assert [s for s, _, _ in net.history_] == list(range(5, net.steps_ + 1, 5))
    lrs = [lr for _, _, lr in net.history_]
    assert min(lrs) < max(lrs)  # the learning rate was cut on the plateau
    net2 = NeuralMessenger(SC, n_symbols=64, hidden=32).fit(10, batch=32, generator=g, eval_every=5)
    assert net2.converged_ is False and net2.steps_ == 10
    x = net.encode(episodes.table)
    assert torch.allclose(x.pow(2).mean(dim=1), torch.ones(300), atol=1e-4)  # unit mean power
    assert torch.equal(net.decode(3.0 * x, episodes.offset), net.decode(x, episodes.offset))  # AGC
