"""The quick reproduction end to end (one seed): structure and sanity of the report; test-item isolation;
the run's configuration."""

import dataclasses
import math

import numpy as np
import pytest

from paperworks.core import INCONCLUSIVE_1_SEED, Progress, torch_threads
from paperworks.prismic import EncoderConfig, GRPOConfig, HashedBowEmbedder, IntentDataConfig, SequenceData
from paperworks.prismic import experiments as ex
from paperworks.prismic.experiments import BASELINES, METHODS, QUICK, PrismicConfig, PrismicExperiment


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


@pytest.fixture(scope="module")
def quick_report():
    return PrismicExperiment().run(quick=True, seeds=1)


def _lists(x):
    """What a report's JSON-friendly config holds: tuples as lists."""
    if isinstance(x, dict):
        return {k: _lists(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_lists(v) for v in x]
    return x


def test_quick_reproduction_report(quick_report):
    report = quick_report
    assert report.seeds == [0]
    assert {c.claim.key for c in report.claims} == {
        "beats_baselines",
        "gain_over_single_signal",
        "gain_over_no_distillation",
    }
    m = report.per_seed[0]
    for d in ("focused", "noisy"):
        for method in (*METHODS, "prismic_head"):
            v = m[f"{d}/{method}/ndcg10"]
            assert 0.0 <= v <= m[f"{d}/{method}/recall10"] <= 1.0
            assert 0.0 <= m[f"{d}/{method}/ndcg10_unseen"] <= 1.0
        # the consolidated query beats a random ranking of the catalogue (10 / n_items hits) threefold
        assert m[f"{d}/consolidated/recall10"] > 3 * 10 / m[f"{d}/n_items"]
    assert any("NDCG@10" in t for t in report.tables)
    assert "| PRISMIC (distilled encoder) |" in next(iter(report.tables.values()))


def test_quick_claims_are_paired_and_one_seed_is_inconclusive(quick_report):
    """Every claim is a per-seed paired difference; one seed gives no interval, so no verdict; the
    estimate is the difference recomputed from the per-data-set metrics."""
    m = quick_report.per_seed[0]
    sets = QUICK.dataset_names

    def ndcg(method):
        return np.array([m[f"{d}/{method}/ndcg10"] for d in sets])

    expected = {
        "beats_baselines": (ndcg("prismic") - np.max([ndcg(b) for b in BASELINES], axis=0)).min(),
        "gain_over_single_signal": (ndcg("prismic") - ndcg("prismic_single")).mean(),
        "gain_over_no_distillation": (ndcg("prismic") - ndcg("consolidated")).mean(),
    }
    for c in quick_report.claims:
        assert c.claim.paired and not c.claim.exact and c.claim.kind == "paper"
        assert c.verdict == INCONCLUSIVE_1_SEED and not c.holds
        assert c.n == 1 and c.lo is None and c.hi is None
        assert math.isfinite(c.estimate)
        assert c.estimate == pytest.approx(expected[c.claim.key], abs=1e-12)


def test_config_quick_and_full_are_one_frozen_dataclass(quick_report):
    exp = PrismicExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PrismicConfig
    assert dataclasses.is_dataclass(quick) and type(quick).__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.embedder = "minilm"
    assert full == PrismicConfig() and quick != full
    assert full.dataset_names == ["focused", "multi_intent", "noisy", "large"]
    assert quick_report.config == _lists(dataclasses.asdict(quick))
    assert PrismicExperiment.default_seeds == 5


def test_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="embedder"):
        PrismicConfig(embedder="bert")
    with pytest.raises(ValueError, match="datasets"):
        PrismicConfig(datasets=())
    with pytest.raises(ValueError, match="distinct names"):
        PrismicConfig(datasets=(IntentDataConfig(name="a"), IntentDataConfig(name="a")))
    with pytest.raises(ValueError, match="encoder"):
        PrismicConfig(encoder={"epochs": 3})


def test_figures_write_a_png_of_the_headline_claim(quick_report, tmp_path):
    pytest.importorskip("matplotlib")
    names = PrismicExperiment().figures(quick_report, tmp_path)
    assert names == ["headline.png"]
    png = (tmp_path / "headline.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_figures_without_matplotlib_draw_nothing(quick_report, tmp_path, monkeypatch):
    monkeypatch.setattr(ex, "optional_pyplot", lambda: None)
    assert PrismicExperiment().figures(quick_report, tmp_path) == []
    assert not list(tmp_path.iterdir())


def test_the_experiment_takes_its_device_from_the_core(monkeypatch):
    """run_seed asks paperworks.core.choose_device (PAPERWORKS_DEVICE, `reproduce --device`) and hands the
    answer to every model; an impossible request fails loudly instead of silently running elsewhere."""
    seen = []

    def one(cfg, seed, embedder, enc, grpo, device="cpu"):
        seen.append(device)
        return {f"{m}/ndcg10": 0.0 for m in METHODS}

    monkeypatch.setattr(PrismicExperiment, "_one", staticmethod(one))
    exp = PrismicExperiment()
    monkeypatch.setenv("PAPERWORKS_DEVICE", "cpu")
    out = exp.run_seed(0, quick=True, progress=Progress(enabled=False))
    assert seen == ["cpu"] * len(QUICK.datasets) and out["cuda"] == 0.0
    import torch

    if not torch.cuda.is_available():
        monkeypatch.setenv("PAPERWORKS_DEVICE", "cuda")
        with pytest.raises(ValueError, match="device"):
            exp.run_seed(
                0,
                quick=True,
                progress=Progress(enabled=False),
            )
