"""Generator, RecBole atomic reader, template query writer (vs a brute-force re-count), consolidator."""

from collections import Counter

import numpy as np
import pytest
import torch

from paperworks.core import torch_threads
from paperworks.prismic import (
    GRPOConfig,
    GRPOConsolidator,
    HashedBowEmbedder,
    IntentDataConfig,
    TemplateQueryWriter,
    consolidate,
    generate_intent_data,
    leave_one_out,
    pad_histories,
    read_recbole_atomic,
    selection_reward,
    signal_inputs,
    train_valid_test,
)
from paperworks.prismic.consolidator import fragment_scores, reward_from_fragment_scores
from paperworks.prismic.data import SequenceData


@pytest.fixture(autouse=True)
def _one_thread():
    """Small torch models train faster on one thread on the shared machine."""
    with torch_threads(1):
        yield


SMALL = IntentDataConfig(n_users=40, n_categories=5, n_attributes=3, n_variants=2, n_intents=2)


def test_generator_is_seeded_and_valid():
    a, b = generate_intent_data(SMALL, 7), generate_intent_data(SMALL, 7)
    assert a.n_items == SMALL.n_items == 30
    assert all(np.array_equal(x, y) for x, y in zip(a.sequences, b.sequences))
    assert all(SMALL.min_len <= len(s) <= SMALL.max_len for s in a.sequences)
    # item text is "<attribute> <category> <variant>", consistent with the latent codes
    i = 17
    attr, cat, _ = a.item_texts[i].split()  # item 18: category 17 // 6 = 2, attribute (17 % 6) // 2 = 2
    assert (attr, cat) == ("wooden", "novel") and a.item_category[i] == 2 and a.item_attribute[i] == 2
    with pytest.raises(ValueError, match="noise"):
        IntentDataConfig(noise=1.5)


def test_recbole_reader_on_written_files(tmp_path):
    (tmp_path / "toy.inter").write_text(
        "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
        "u1\ti9\t5\t3\nu1\ti7\t4\t1\nu1\ti8\t3\t2\nu2\ti7\t1\t5\nu2\ti9\t1\t6\nu2\ti1\t1\t7\nu3\ti7\t1\t1\n"
    )
    (tmp_path / "toy.item").write_text(
        "item_id:token\ttitle:token_seq\tprice:float\ni7\tred lamp\t3\ni9\tblue tent\t4\n"
    )
    d = read_recbole_atomic(tmp_path / "toy.inter", tmp_path / "toy.item")
    # ids by first appearance: i9 -> 1, i7 -> 2, i8 -> 3, i1 -> 4; u3 (one interaction) dropped
    assert d.item_texts == ("blue tent", "red lamp", "i8", "i1")
    assert [s.tolist() for s in d.sequences] == [[2, 3, 1], [2, 1, 4]]  # sorted by timestamp
    with pytest.raises(ValueError, match="text_fields"):
        read_recbole_atomic(tmp_path / "toy.inter", tmp_path / "toy.item", text_fields=["brand"])
    (tmp_path / "bad.inter").write_text("user:token\titem_id:token\n")
    with pytest.raises(ValueError, match="user_id"):
        read_recbole_atomic(tmp_path / "bad.inter")


def test_recbole_reader_names_what_is_wrong(tmp_path):
    """0.2 stopped at a bare float() error on a bad timestamp and a header error on a space-separated file."""
    bad = tmp_path / "ts.inter"
    bad.write_text("user_id:token\titem_id:token\ttimestamp:float\nu1\ti1\t3\nu1\ti2\tyesterday\n")
    with pytest.raises(ValueError, match=r"inter_path: line 3: timestamp 'yesterday' is not a number"):
        read_recbole_atomic(bad)
    spaced = tmp_path / "spaced.inter"
    spaced.write_text("user_id:token item_id:token timestamp:float\nu1 i1 3\n")
    with pytest.raises(ValueError, match="tab-separated"):
        read_recbole_atomic(spaced)
    item = tmp_path / "spaced.item"
    item.write_text("item_id:token title:token_seq\ni1 red lamp\n")
    good = tmp_path / "good.inter"
    good.write_text("user_id:token\titem_id:token\nu1\ti1\nu1\ti2\nu1\ti1\n")
    with pytest.raises(ValueError, match=r"item_path: .*tab-separated"):
        read_recbole_atomic(good, item)
    (tmp_path / "latin.inter").write_bytes(b"user_id:token\titem_id:token\nu1\t\xe9\n")
    with pytest.raises(ValueError, match="UTF-8"):
        read_recbole_atomic(tmp_path / "latin.inter")


def test_writer_signals_match_a_brute_force_recount():
    data = generate_intent_data(SMALL, 1)
    hist, _ = leave_one_out(data)
    writer = TemplateQueryWriter.for_generated(data.item_texts, session_len=4)
    padded = pad_histories(hist, max(map(len, hist)), data.n_items)
    c = writer.write(padded)
    for u in range(5):
        words = [data.item_texts[i - 1].split() for i in hist[u]]
        for name, window in (("long", words), ("session", words[-4:])):
            counts = Counter(w[0] for w in window)
            top = max(counts.values())
            # ties: the most recent of the most frequent values
            expect = next(w[0] for w in reversed(window) if counts[w[0]] == top)
            assert (
                c.query(u, f"{name}_attribute")
                == ("usually likes " if name == "long" else "now looking for ") + expect
            )
            assert c.support[u, c.signals.index(f"{name}_attribute")] == pytest.approx(top / len(window))
        assert c.query(u, "recent") == "recently " + data.item_texts[hist[u][-1] - 1]
        assert c.query(u, "first") == "earlier " + data.item_texts[hist[u][0] - 1]
    with pytest.raises(ValueError, match="empty history"):
        writer.write(np.zeros((2, 3), dtype=np.int64))


def test_consolidate_and_reward():
    q = torch.eye(3)[None].repeat(2, 1, 1)  # two users, three orthogonal fragments
    z = torch.tensor([[[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]])
    out = consolidate(q, z)
    assert torch.allclose(out[0, 0], torch.tensor([1.0, 1.0, 0.0]) / 2**0.5)
    assert torch.all(out[0, 1] == 0)
    items = torch.eye(3)
    r = selection_reward(q, z, items, torch.tensor([2, 2]))
    assert r[0, 1] == 0  # empty selection
    assert r[1, 0] == pytest.approx(1.0)  # target ranked first
    assert r[0, 0] == pytest.approx(0.5)  # scores (.71, .71, 0): target at rank 2, 1 / log2(4)


def test_grpo_consolidator_learns_the_rewarded_signal_and_is_seeded():
    data = generate_intent_data(IntentDataConfig(n_users=120, n_categories=6, n_intents=2, noise=0.0), 0)
    hist, _ = leave_one_out(data)
    emb = HashedBowEmbedder(64)
    items = emb.encode(list(data.item_texts))
    inputs, targets = [h[:-1] for h in hist], np.array([h[-1] for h in hist])
    _, q, s, ctx = signal_inputs(TemplateQueryWriter.for_generated(data.item_texts), emb, inputs, items)
    cfg = GRPOConfig(iterations=25, users_per_step=120)
    a = GRPOConsolidator(cfg, seed=0).fit(q, s, ctx, items, targets)
    b = GRPOConsolidator(cfg, seed=0).fit(q, s, ctx, items, targets)
    assert a.reward_curve_ == b.reward_curve_
    assert np.mean(a.reward_curve_[-5:]) > np.mean(a.reward_curve_[:3])  # the policy improves its reward
    with pytest.raises(ValueError, match="targets"):
        GRPOConsolidator(cfg).fit(q, s, ctx, items, targets + 10_000)
    bad = q.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="queries"):
        GRPOConsolidator(cfg).fit(bad, s, ctx, items, targets)


def test_fast_reward_matches_the_direct_route():
    # the GRPO loop ranks with z @ (fragment . item) scores; the direct route re-normalises q(z)
    g = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(6, 4, 16, generator=g), dim=-1)
    items = torch.nn.functional.normalize(torch.randn(50, 16, generator=g), dim=-1)
    z = torch.bernoulli(torch.full((6, 5, 4), 0.5), generator=g)
    z[0, 0] = 0  # one empty selection
    t = torch.randint(0, 50, (6,), generator=g)
    direct = selection_reward(q, z, items, t)
    fast = reward_from_fragment_scores(fragment_scores(q, items), z, t)
    assert torch.allclose(direct, fast)
    assert fast[0, 0] == 0


def test_train_valid_test_split():
    data = SequenceData(("a", "b", "c", "d", "e"), (np.array([1, 2, 3, 4, 5]), np.array([5, 4, 3, 2])))
    sp = train_valid_test(data)
    assert [h.tolist() for h in sp.train] == [[1, 2, 3], [5, 4]]
    assert sp.valid_targets.tolist() == [4, 3]
    assert [h.tolist() for h in sp.test_inputs] == [[1, 2, 3, 4], [5, 4, 3]]
    assert sp.test_targets.tolist() == [5, 2]
    short = SequenceData(("a", "b", "c"), (np.array([1, 2, 3]),))
    with pytest.raises(ValueError, match=">= 4 items"):
        train_valid_test(short)
