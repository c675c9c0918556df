"""Encoder masking (no future leakage), truncation, bad input, seeded determinism, early stopping."""

import numpy as np
import pytest
import torch

from paperworks.core import torch_threads
from paperworks.prismic import (
    Adam,
    EncoderConfig,
    IntentDataConfig,
    SequenceData,
    SequenceEncoder,
    SequentialRecommender,
    generate_intent_data,
    pad_histories,
    train_valid_test,
)
from paperworks.prismic.ranking import ndcg_from_ranks, target_ranks


@pytest.fixture(autouse=True)
def _one_thread():
    """Small torch models train faster on one thread on the shared machine."""
    with torch_threads(1):
        yield


N, DT = 30, 16


def _leaks(model: SequenceEncoder, seq: torch.Tensor, t: int) -> bool:
    """Whether outputs at positions <= t change when the items after t (the targets) change."""
    model.eval()
    other = seq.clone()
    other[:, t + 1 :] = (seq[:, t + 1 :] % N) + 1  # different real items
    with torch.no_grad():
        a, b = model(seq)[:, : t + 1], model(other)[:, : t + 1]
    return not torch.allclose(a, b, atol=1e-6)


def test_causal_encoder_cannot_see_the_target():
    torch.manual_seed(0)
    text = torch.randn(N, DT)
    cfg = EncoderConfig(dim=16, n_heads=2, n_layers=2, max_len=8)
    seq = torch.as_tensor(pad_histories([np.arange(1, 9), np.arange(3, 8)], 8, N))
    causal = SequenceEncoder(text, cfg, causal=True)
    for t in range(3, 7):
        assert not _leaks(causal, seq, t)
    # the same check flags a bidirectional encoder: it would fail if the causal mask were dropped
    assert _leaks(SequenceEncoder(text, cfg, causal=False), seq, 4)


def test_padding_does_not_change_the_latest_state():
    torch.manual_seed(1)
    m = SequenceEncoder(torch.randn(N, DT), EncoderConfig(dim=16, n_layers=1, max_len=10)).eval()
    h = np.array([4, 9, 2, 7])
    a = torch.as_tensor(pad_histories([h], 6, N))
    b = torch.as_tensor(pad_histories([h], 10, N))
    with torch.no_grad():
        # left padding only adds masked keys; positions are counted from the right
        assert torch.allclose(m(a)[:, -1], m(b)[:, -1], atol=1e-5)


def test_truncation_keeps_the_most_recent_items():
    out = pad_histories([np.arange(1, 13), np.array([5, 6])], 5, 20)
    assert out.tolist() == [[8, 9, 10, 11, 12], [0, 0, 0, 5, 6]]


def test_bad_histories_are_rejected():
    with pytest.raises(ValueError, match="empty history"):
        pad_histories([np.array([1, 2]), np.array([], dtype=int)], 4, 10)
    with pytest.raises(ValueError, match="unknown item id 11"):
        pad_histories([np.array([1, 11])], 4, 10)
    with pytest.raises(ValueError, match="unknown item id 0"):
        pad_histories([np.array([0, 3])], 4, 10)
    with pytest.raises(ValueError, match="empty batch"):
        pad_histories([], 4, 10)
    m = SequenceEncoder(torch.randn(N, DT), EncoderConfig(dim=16, n_layers=1, max_len=4))
    with pytest.raises(ValueError, match="max_len=4"):
        m(torch.ones(1, 6, dtype=torch.int64))
    with pytest.raises(ValueError, match="item_text"):
        SequenceEncoder(torch.full((N, DT), float("nan")), EncoderConfig())


def test_nan_embeddings_and_distill_targets_are_rejected():
    hist = [np.array([1, 2, 3]), np.array([4, 5, 6, 7])]
    bad = np.random.default_rng(0).normal(size=(N, DT))
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="item_text"):
        SequentialRecommender(config=EncoderConfig(epochs=1)).fit(hist, bad)
    good = np.random.default_rng(0).normal(size=(N, DT))
    with pytest.raises(ValueError, match="distill_targets"):
        SequentialRecommender(config=EncoderConfig(epochs=1, max_len=4)).fit(hist, good, np.zeros((2, 3, DT)))


@pytest.mark.parametrize("kind", ["sasrec", "bert4rec"])
def test_fit_is_seeded(kind):
    rng = np.random.default_rng(0)
    hist = [rng.integers(1, N + 1, rng.integers(3, 9)) for _ in range(24)]
    text = rng.normal(size=(N, DT)).astype(np.float32)
    cfg = EncoderConfig(dim=16, n_layers=1, max_len=6, epochs=2, batch_size=8)
    a = SequentialRecommender(kind, cfg, seed=3).fit(hist, text).score(hist[:5])
    b = SequentialRecommender(kind, cfg, seed=3).fit(hist, text).score(hist[:5])
    assert a.shape == (5, N)
    assert torch.equal(a, b)


TINY = IntentDataConfig(n_users=60, n_categories=4, n_attributes=3, n_variants=3, n_intents=2, noise=0.1)
ES = EncoderConfig(dim=16, n_layers=1, max_len=8, epochs=12, patience=2, batch_size=16, lr=5e-3)


def _with_last_items(data: SequenceData, new_last: np.ndarray, pos: int) -> SequenceData:
    seqs = [s.copy() for s in data.sequences]
    for s, x in zip(seqs, new_last):
        s[pos] = x
    return SequenceData(data.item_texts, tuple(seqs), data.name)


@pytest.mark.parametrize("kind", ["sasrec", "bert4rec"])
def test_early_stopping_never_sees_the_test_item(kind):
    data = generate_intent_data(TINY, 0)
    text = np.random.default_rng(0).normal(size=(data.n_items, DT)).astype(np.float32)
    other = np.random.default_rng(1).integers(1, data.n_items + 1, data.n_users)

    def fit(d):
        sp = train_valid_test(d)
        return SequentialRecommender(kind, ES, seed=0).fit(sp.train, text, valid_targets=sp.valid_targets)

    a = fit(data)
    b = fit(_with_last_items(data, other, -1))  # different test items
    c = fit(_with_last_items(data, other, -2))  # different validation items
    # the test items change nothing: same curves, same stopping epoch, same parameters
    assert a.valid_curve_ == b.valid_curve_ and a.loss_curve_ == b.loss_curve_
    assert a.best_epoch_ == b.best_epoch_
    for (k, x), y in zip(a.model_.state_dict().items(), b.model_.state_dict().values()):
        assert torch.equal(x, y), k
    # ... while the validation items do drive the selection (the check above can fail)
    assert a.valid_curve_ != c.valid_curve_
    # early stopping: stops after `patience` epochs without improvement, restores the best epoch
    assert len(a.valid_curve_) == len(a.loss_curve_) <= ES.epochs
    assert len(a.valid_curve_) == ES.epochs or len(a.valid_curve_) == a.best_epoch_ + ES.patience
    assert a.valid_curve_[a.best_epoch_ - 1] == max(a.valid_curve_)
    sp = train_valid_test(data)
    again = ndcg_from_ranks(target_ranks(a.score(sp.train), torch.as_tensor(sp.valid_targets - 1))).mean()
    assert float(again) == pytest.approx(max(a.valid_curve_), abs=1e-6)


def test_valid_targets_are_checked():
    hist = [np.array([1, 2, 3]), np.array([4, 5, 6, 7])]
    text = np.random.default_rng(0).normal(size=(N, DT))
    with pytest.raises(ValueError, match="valid_targets"):
        SequentialRecommender(config=EncoderConfig(epochs=1)).fit(hist, text, valid_targets=np.array([1]))
    with pytest.raises(ValueError, match="valid_targets: unknown item id"):
        SequentialRecommender(config=EncoderConfig(epochs=1)).fit(
            hist, text, valid_targets=np.array([1, N + 1])
        )


def test_adam_matches_the_textbook_update():
    w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = Adam([w], lr=0.1, weight_decay=0.01)
    x, m, v = np.array([1.0, -2.0, 0.5]), np.zeros(3), np.zeros(3)
    for t in range(1, 4):
        opt.zero_grad()
        (w**3).sum().backward()
        opt.step()
        g = 3 * x**2
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g**2
        x = x * (1 - 0.1 * 0.01)
        x = x - 0.1 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    assert np.allclose(w.detach().numpy(), x, rtol=1e-5)
