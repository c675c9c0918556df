import math

import pytest
import torch

from paperworks.herm import Channel, random_atoms, transmit


def test_awgn_hits_the_requested_snr():
    g = torch.Generator().manual_seed(0)
    x = random_atoms(64, 2048, g) * 3.0
    y = transmit(x, Channel("awgn", snr_db=-5.0), g)
    noise = torch.view_as_real(y - x).pow(2).mean()
    signal = torch.view_as_real(x).pow(2).mean()
    assert 10 * math.log10(float(signal / noise)) == pytest.approx(-5.0, abs=0.1)


def test_flip_and_erase_rates():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(50, 4000, generator=g) + 0.5
    y = transmit(x, Channel("flip", p=0.2), g)
    assert float((y < 0).float().mean()) == pytest.approx(0.2, abs=0.01)
    assert torch.allclose(y.abs(), x)
    z = random_atoms(50, 4000, g)
    e = transmit(z, Channel("erase", p=0.3), g)
    assert float((e == 0).float().mean()) == pytest.approx(0.3, abs=0.01)
    kept = e != 0
    assert torch.allclose(e[kept], z[kept])


def test_clean_channel_is_identity_and_seeded():
    x = random_atoms(4, 64)
    assert torch.equal(transmit(x, Channel()), x)
    a = transmit(x, Channel("awgn", snr_db=0.0), torch.Generator().manual_seed(5))
    b = transmit(x, Channel("awgn", snr_db=0.0), torch.Generator().manual_seed(5))
    assert torch.equal(a, b)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "rayleigh"}, "kind"),
        ({"kind": "awgn"}, "needs snr_db"),  # used to mean 'no noise'
        ({"kind": "awgn", "snr_db": 0.0, "p": 0.1}, "takes snr_db only"),
        ({"kind": "awgn", "snr_db": math.inf}, "finite"),
        ({"kind": "awgn", "snr_db": float("nan")}, "finite"),
        ({"kind": "awgn", "snr_db": 90.0}, r"\[-60, 60\]"),
        ({"kind": "awgn", "snr_db": "0"}, "real number"),
        ({"kind": "erase", "p": 0.3, "snr_db": 3.0}, "takes p only"),  # used to ignore snr
        ({"kind": "erase"}, "needs p"),
        ({"kind": "erase", "p": 1.5}, r"Channel\.p: expected a number in \[0, 1\]"),
        ({"kind": "flip", "p": 0.7}, r"p in \[0, 0\.5\]"),
        ({"kind": "flip", "p": float("nan")}, "finite"),
        ({"kind": "none", "p": 0.1}, "no parameter"),
    ],
)
def test_channel_parameters_are_validated_per_kind(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Channel(**kwargs)


def test_transmit_errors():
    with pytest.raises(ValueError, match="message"):
        transmit(torch.zeros(0, 4), Channel())
    with pytest.raises(ValueError, match="finite"):
        transmit(torch.tensor([[1.0, float("inf")]]), Channel("flip", p=0.1))
    with pytest.raises(TypeError, match="channel"):
        transmit(torch.ones(2, 4), "awgn")
    with pytest.raises(TypeError, match="generator"):
        transmit(torch.ones(2, 4), Channel("awgn", snr_db=0.0), 3)
    with pytest.raises(TypeError, match="dtype"):
        transmit(torch.ones(2, 4, dtype=torch.int64), Channel())
