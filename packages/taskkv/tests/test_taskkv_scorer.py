import numpy as np
import pytest
import torch

from paperworks.taskkv import (
    FEATURE_NAMES,
    RegimeClassifier,
    ResidualStepScorer,
    attention_entropy,
    regime_auc,
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


def test_score_entropy_bounds_and_attention_entropy():
    flat = torch.zeros(2, 5)
    peaked = torch.tensor([[50.0, 0, 0, 0, 0]])
    torch.testing.assert_close(score_entropy(flat), torch.ones(2))
    assert float(score_entropy(peaked)[0]) < 1e-3
    # raw attention mass: even spread -> 1, one step -> 0, renormalised over the candidates only
    cand = torch.tensor([True, True, True, False])
    mass = torch.tensor([[0.1, 0.1, 0.1, 0.7], [0.0, 0.3, 0.0, 0.7]])
    ent = attention_entropy(mass, cand)
    torch.testing.assert_close(ent, torch.tensor([1.0, 0.0]), atol=1e-6, rtol=0)
    # unlike the entropy of z-scored scores, it is not invariant to the scale of the mass distribution
    sharp = torch.tensor([[0.5, 0.3, 0.2, 0.0]])
    assert float(attention_entropy(sharp**4, cand)[0]) < float(attention_entropy(sharp, cand)[0])
    with pytest.raises(ValueError, match="temperature"):
        score_entropy(flat, temperature=0)
    with pytest.raises(ValueError, match="candidates"):  # one droppable step: no ranking (was NaN)
        score_entropy(flat, torch.tensor([True, False, False, False, False]))
    with pytest.raises(ValueError, match="mass"):
        attention_entropy(-mass, cand)


def test_regime_classifier_threshold_is_fit_for_success():
    sig = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    # falling back helps on the two highest signals, hurts on 0.6, is neutral elsewhere
    gain = np.array([0, 0, -1, -1, 1, 1], dtype=float)
    clf = RegimeClassifier().fit(sig, gain)
    assert 0.6 <= clf.threshold_ < 0.7 and clf.predict([0.62, 0.75]).tolist() == [False, True]
    assert clf.train_gain_ == pytest.approx(2 / 6) and clf.train_fallback_rate_ == pytest.approx(2 / 6)
    # an accuracy fit on "recency better" would not see magnitudes; ties go to the log-likelihood
    tie = RegimeClassifier().fit(sig, np.zeros(6), loglik_gain=np.array([0, 0, 0, 0, 0, 2.0]))
    assert 0.7 <= tie.threshold_ < 0.9
    never = RegimeClassifier().fit(sig, -np.ones(6))
    assert never.threshold_ == 1.0 and not never.predict(sig).any()
    always = RegimeClassifier().fit(sig, np.ones(6))
    assert always.threshold_ == 0.0 and always.predict(sig).all()
    with pytest.raises(ValueError, match="threshold"):
        RegimeClassifier(threshold=1.5)
    with pytest.raises(ValueError, match="success_gain"):
        RegimeClassifier().fit(sig, gain[:3])


def test_regime_auc_matches_pairwise_definition():
    rng = np.random.default_rng(0)
    s = np.round(rng.random(40), 1)  # ties on purpose
    y = rng.random(40) < 0.4
    pairs = [(a > b) + 0.5 * (a == b) for a in s[y] for b in s[~y]]
    assert regime_auc(s, y) == pytest.approx(np.mean(pairs))
    assert regime_auc(np.r_[0.0, 1.0], np.array([False, True])) == 1.0
    with pytest.raises(ValueError, match="positive"):
        regime_auc(s, np.zeros(40, dtype=bool))


def test_intent_prior_is_flat_on_identical_content_keys_and_not_on_rotated_ones():
    """Steps of identical content: content keys give a flat intent (so a flat prior); the same keys
    rotated by RoPE at their positions do not (what the cached keys looked like before issue 35)."""
    from paperworks.taskkv import unrotate_keys

    g = torch.Generator().manual_seed(0)
    b, h, L, s, d = 2, 2, 4, 8, 8
    step = torch.randn(b, h, L, d, generator=g)
    content = step.repeat(1, 1, s, 1)  # (b, h, s*L, d): every step the same content
    att = torch.softmax(torch.zeros(b, h, 4, s * L), -1)  # flat attention: mass is flat too
    off = np.arange(s + 1) * L
    f = step_features(content, att, off, instruction_step=1)
    assert float(f[..., 1].std(1).max()) < 1e-4
    prior = ResidualStepScorer.prior(f)
    assert float(prior.abs().max()) < 1e-2
    # rotate as RoPE does (cos/sin of the positions), then the intent varies with position alone
    pos = torch.arange(s * L, dtype=torch.float32)
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.cat([pos[:, None] * inv, pos[:, None] * inv], -1)[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = content[..., : d // 2], content[..., d // 2 :]
    rotated = content * cos[:, None] + torch.cat([-x2, x1], -1) * sin[:, None]
    torch.testing.assert_close(unrotate_keys(rotated, cos, sin), content, atol=1e-5, rtol=0)
    f_rot = step_features(rotated, att, off, instruction_step=1)
    assert float(f_rot[..., 1].std(1).min()) > 0.1


def test_residual_is_zero_when_labels_rank_like_the_prior():
    keys, att, off = _inputs(b=32, seed=3)
    f = step_features(keys, att, off, instruction_step=1)
    prior = ResidualStepScorer.prior(f)
    for labels in (prior, 3 * prior + 5):  # any affine copy of the prior: nothing to correct
        for exclude in ((), (0, 5)):
            sc = ResidualStepScorer().fit(f, labels, exclude_steps=exclude)
            torch.testing.assert_close(sc.predict(f), prior, atol=1e-3, rtol=0)
    # a label that disagrees does move it
    moved = ResidualStepScorer().fit(f, -prior, exclude_steps=(0, 5))
    assert float((moved.predict(f) - prior).abs().max()) > 0.1


def test_ragged_features_match_each_row_alone():
    keys, att, _ = _inputs(b=2, s=6, L=3)
    rows = [np.arange(7) * 3, np.array([0, 3, 9, 12, 18])]  # 6 and 4 steps
    f = step_features(keys, att, rows, instruction_step=1)
    assert f.shape == (2, 6, 5)
    for i, o in enumerate(rows):
        alone = step_features(keys[i : i + 1], att[i : i + 1], o, instruction_step=1)[0]
        torch.testing.assert_close(f[i, : len(o) - 1], alone, atol=1e-5, rtol=0)
        assert torch.all(f[i, len(o) - 1 :] == 0)
