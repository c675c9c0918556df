"""The quick reproduction end to end (one seed): structure and sanity of the report; test-item isolation."""

import math

import numpy as np
import pytest

from paperworks.core import torch_threads
from paperworks.prismic import EncoderConfig, GRPOConfig, HashedBowEmbedder, IntentDataConfig, SequenceData
from paperworks.prismic import experiments as ex
from paperworks.prismic.experiments import METHODS, PrismicExperiment


@pytest.fixture(autouse=True)
def _one_thread():
    """Small torch models train faster on one thread on the shared machine."""
    with torch_threads(1):
        yield


def test_test_items_are_not_used_for_training_or_selection(monkeypatch):
    """Changing every user's test item changes the test metrics only: the trained models' stopping epochs,
    the validation-chosen signal and the consolidator are the same."""
    cfg = IntentDataConfig(n_users=50, n_categories=4, n_attributes=3, n_variants=3, n_intents=2)
    enc = EncoderConfig(dim=16, n_layers=1, max_len=8, epochs=6, patience=2, batch_size=16)
    grpo = GRPOConfig(iterations=3, users_per_step=50)
    real = ex.generate_intent_data

    def shifted(c, seed):
        d = real(c, seed)
        seqs = tuple(np.append(s[:-1], s[-1] % d.n_items + 1) for s in d.sequences)
        return SequenceData(d.item_texts, seqs, d.name, d.item_category, d.item_attribute)

    emb = HashedBowEmbedder(32)
    a = PrismicExperiment._one(cfg, 0, emb, enc, grpo)
    monkeypatch.setattr(ex, "generate_intent_data", shifted)
    b = PrismicExperiment._one(cfg, 0, emb, enc, grpo)
    same = [
        k for k in a if k.endswith("best_epoch") or k in ("single_signal_index", "consolidator_signals_kept")
    ]
    assert len(same) == 6
    assert all(a[k] == b[k] for k in same)
    assert any(a[k] != b[k] for k in a if k.endswith("ndcg10"))  # the test items do reach the metrics


def test_quick_reproduction_report():
    report = PrismicExperiment().run(quick=True, seeds=1)
    assert report.seeds == [0]
    assert {c.claim.key for c in report.claims} == {
        "beats_baselines",
        "gain_over_single_signal",
        "gain_over_no_distillation",
    }
    m = report.per_seed[0]
    for d in ("focused", "noisy"):
        for method in METHODS:
            v = m[f"{d}/{method}/ndcg10"]
            assert 0.0 <= v <= m[f"{d}/{method}/recall10"] <= 1.0
        # the consolidated query beats a random ranking of the catalogue (10 / n_items hits) threefold
        assert m[f"{d}/consolidated/recall10"] > 3 * 10 / m[f"{d}/n_items"]
    assert all(math.isfinite(c.measured.mean) for c in report.claims)
    assert any("NDCG@10" in t for t in report.tables)
    assert "| prismic |" in next(iter(report.tables.values()))
