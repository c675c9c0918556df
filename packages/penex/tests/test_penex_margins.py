"""Margins: brute-force agreement, scale invariance of the normalised margin, distribution summary."""

import numpy as np
import pytest
import torch
from torch import nn

from paperworks.penex import margin_distribution, multiclass_margins, normalized_margins, spectral_complexity


def test_margins_match_brute_force():
    g = torch.Generator().manual_seed(0)
    f = torch.randn(50, 6, generator=g)
    y = torch.randint(0, 6, (50,), generator=g)
    got = multiclass_margins(f, y)
    for i in range(50):
        others = [float(f[i, j]) for j in range(6) if j != int(y[i])]
        assert abs(float(got[i]) - (float(f[i, y[i]]) - max(others))) < 1e-6
    assert torch.equal(got > 0, f.argmax(1) == y)


def test_normalised_margins_invariant_to_output_scaling():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3, bias=False))
    x, y = torch.randn(20, 5), torch.randint(0, 3, (20,))
    m1 = normalized_margins(model, x, y)
    with torch.no_grad():
        model[2].weight.mul_(7.0)
    assert torch.allclose(normalized_margins(model, x, y), m1, atol=1e-6)
    w = model[0].weight.detach().double()
    assert spectral_complexity(nn.Sequential(model[0])) == pytest.approx(float(torch.linalg.svdvals(w)[0]))


def test_margin_distribution_summary():
    m = np.array([-1.0, 0.0, 0.5, 2.0, 3.0])
    d = margin_distribution(torch.tensor(m))
    assert d.n == 5 and d.median == 0.5 and d.fraction_nonpositive == pytest.approx(0.4)
    assert d.quantiles == tuple(np.quantile(m, d.levels))


def test_margin_errors():
    with pytest.raises(ValueError, match="C >= 2"):
        multiclass_margins(torch.zeros(3, 1), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="class indices"):
        multiclass_margins(torch.zeros(2, 3), torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="shape"):
        multiclass_margins(torch.zeros(2, 3), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match=r"nn\.Linear"):
        spectral_complexity(nn.ReLU())
    with pytest.raises(ValueError, match="finite"):
        margin_distribution(np.array([1.0, np.nan]))
