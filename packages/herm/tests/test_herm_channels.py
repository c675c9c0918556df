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


def test_channel_parameter_errors():
    with pytest.raises(ValueError, match="kind"):
        Channel("rayleigh")
    with pytest.raises(ValueError, match=r"Channel\.p: expected a probability"):
        Channel("erase", p=1.5)
    with pytest.raises(ValueError, match=r"p <= 0\.5"):
        Channel("flip", p=0.7)
    with pytest.raises(ValueError, match="snr_db"):
        Channel("awgn", snr_db=float("nan"))
    with pytest.raises(ValueError, match="message"):
        transmit(torch.zeros(0, 4), Channel())
    with pytest.raises(ValueError, match="finite"):
        transmit(torch.tensor([[1.0, float("inf")]]), Channel("flip", p=0.1))
