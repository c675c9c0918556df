import numpy as np
import pytest
import torch

from paperworks.taskkv import (
    FEATURE_NAMES,
    RegimeClassifier,
    ResidualStepScorer,
    score_entropy,
    step_features,
)


def _inputs(b=4, h=2, s=6, L=3, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    keys = torch.randn(b, h, s * L, d, generator=g)
    att = torch.softmax(torch.randn(b, h, 4, s * L, generator=g), -1)
    return keys, att, np.arange(s + 1) * L


def test_step_features_against_loop_reference():
    keys, att, off = _inputs()
    f = step_features(keys, att, off, instruction_step=1)
    assert f.shape == (4, 6, len(FEATURE_NAMES))
    a = att.mean(dim=(1, 2))
    for s in range(6):
        torch.testing.assert_close(f[:, s, 0], a[:, off[s] : off[s + 1]].sum(1))
    # intent alignment of the instruction with itself is the maximum, 1
    torch.testing.assert_close(f[:, 1, 1], torch.ones(4), atol=1e-5, rtol=0)
    assert torch.all(f[..., 1] <= 1 + 1e-5)
    with pytest.raises(ValueError, match="instruction_step"):
        step_features(keys, att, off, instruction_step=9)
    with pytest.raises(ValueError, match="window_attention"):
        step_features(keys, att[:, :, :, :-1], off)


def test_residual_scorer_denoises_the_prior():
    keys, att, off = _inputs(b=64, seed=1)
    f = step_features(keys, att, off)
    # labels: the prior plus a signal the prior misses (recency) plus noise
    prior = ResidualStepScorer.prior(f)
    g = torch.Generator().manual_seed(2)
    labels = prior + 3 * f[..., 3] + 0.1 * torch.randn(prior.shape, generator=g)
    free = ResidualStepScorer(iters=300, ridge=0.0).fit(f, labels)  # unregularised: fits the signal
    assert free.train_loss_ < 0.5 * free.prior_loss_
    sc = ResidualStepScorer(iters=300).fit(f, labels)  # ridge 1: a shrunk correction towards the labels
    rest = (torch.arange(6) != 0).nonzero().ravel()
    y = labels[:, rest]

    def corr(a):
        return float(np.corrcoef(a[:, rest].ravel(), y.ravel())[0, 1])

    assert corr(prior) < corr(sc.predict(f)) <= corr(free.predict(f)) + 1e-3
    assert (sc.predict(f) - prior).abs().mean() < (free.predict(f) - prior).abs().mean()
    stiff = ResidualStepScorer(iters=300, ridge=1e6).fit(f, labels)  # infinite ridge: the prior itself
    torch.testing.assert_close(stiff.predict(f), prior, atol=1e-2, rtol=0)
    assert sc.predict(f).shape == (64, 6)
    with pytest.raises(RuntimeError, match="fit"):
        ResidualStepScorer().predict(f)
    with pytest.raises(ValueError, match="labels"):
        ResidualStepScorer().fit(f, labels[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        ResidualStepScorer().fit(f * float("nan"), labels)


def test_score_entropy_bounds_and_classifier():
    flat = torch.zeros(2, 5)
    peaked = torch.tensor([[50.0, 0, 0, 0, 0]])
    torch.testing.assert_close(score_entropy(flat), torch.ones(2))
    assert float(score_entropy(peaked)[0]) < 1e-3
    ent = np.array([0.1, 0.2, 0.3, 0.8, 0.9, 0.95])
    clf = RegimeClassifier().fit(ent, ent > 0.5)
    assert clf.train_accuracy_ == 1.0 and 0.3 <= clf.threshold_ < 0.8
    assert clf.predict([0.05, 0.99]).tolist() == [False, True]
    with pytest.raises(ValueError, match="threshold"):
        RegimeClassifier(threshold=1.5)
    with pytest.raises(ValueError, match="temperature"):
        score_entropy(flat, temperature=0)
