"""The headline experiment: frozen config, the issue's predicates, the quick run, its figure, repeats."""

from __future__ import annotations

import dataclasses
import math

import pytest

from paperworks.clip_has.experiments import QUICK, ClipHasConfig, ClipHasExperiment
from paperworks.core.claims import HOLDS, NOT_REPRODUCED


def test_config_is_one_frozen_dataclass():
    exp = ClipHasExperiment()
    assert exp.config(True) is QUICK and exp.config(False) == ClipHasConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        QUICK.clip_steps = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="lams"):
        ClipHasConfig(lams=(1.0, 0.1))
    with pytest.raises(ValueError, match="beyond_lam"):
        ClipHasConfig(beyond_lam=0.5)


def test_claims_are_the_issues_predicates():
    c = {x.key: x for x in ClipHasExperiment.claims}
    assert (c["closed_form"].op, c["closed_form"].threshold, c["closed_form"].exact) == ("<=", 1e-8, True)
    assert (c["transfer"].threshold, c["transfer"].exact) == (1.0, True)
    assert (c["infonce_regularised"].op, c["infonce_regularised"].threshold) == (">=", 0.9)
    assert c["infonce_rises"].paired and c["infonce_rises"].baseline == "infonce/frac_lam_min"
    assert c["image_init"].paired and (c["image_init"].op, c["image_init"].threshold) == (">", 0.0)
    # absence of text HAS at init holds by construction (one-token captions): reported, not claimed
    assert "text_init" not in c
    assert (c["text_trained"].op, c["text_trained"].threshold) == (">=", 0.9)
    assert (c["beyond"].op, c["beyond"].threshold) == (">=", 0.8)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    exp = ClipHasExperiment()
    report = exp.run(quick=True, seeds=1)
    folder = tmp_path_factory.mktemp("figs")
    return exp, report, folder, exp.figures(report, folder)


def test_quick_report(quick_run):
    exp, report, _, _ = quick_run
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    by_key = {r.claim.key: r for r in report.claims}
    # the exact claims hold at any size; one seed leaves the others without an interval
    assert by_key["closed_form"].verdict == HOLDS and by_key["transfer"].verdict == HOLDS
    assert all(r.verdict != NOT_REPRODUCED for k, r in by_key.items() if k not in ("text_trained",))
    assert s["linear/gap_max"] <= 1e-8
    assert s["infonce/frac_lam_max"] >= s["infonce/frac_lam_min"]
    assert set(exp.tables(report.per_seed, True))


def test_figure_is_a_non_empty_png(quick_run):
    pytest.importorskip("matplotlib")
    _, _, folder, names = quick_run
    assert names == ["has_vs_regularisation.png"]
    data = (folder / names[0]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_one_seed_is_repeatable(quick_run):
    exp, report, _, _ = quick_run
    seed = report.seeds[0]
    again = {**exp._linear(seed, QUICK), **exp._infonce(seed, QUICK), **exp._beyond(seed, QUICK)}
    assert again == pytest.approx({k: report.per_seed[0][k] for k in again})


def test_clip_training_is_repeatable():
    import numpy as np
    import torch

    from paperworks.clip_has import (
        ClipLite,
        TrainConfig,
        balanced_tree,
        caption_tokens,
        hierarchical_images,
        hierarchical_pairs,
        train_clip,
    )

    tree = balanced_tree(2, 2)
    X, labels = hierarchical_images(tree, 0, images_per_leaf=2)
    cap = caption_tokens(tree)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = ClipLite(cap.vocab_size)
        runs.append(
            train_clip(
                model, X, cap.tokens, hierarchical_pairs(labels, tree), TrainConfig(steps=5, batch=8), seed=1
            )
        )
    assert runs[0] == runs[1] and np.isfinite(runs[0]).all()
