"""The quick reproduction: structure, sanity, verdicts on intervals and seeded determinism."""

import dataclasses
import json

import numpy as np
import pytest

from paperworks.core.claims import HOLDS, INCONCLUSIVE_1_SEED
from paperworks.pandoras_router.experiments import (
    QUICK,
    PandorasRouterConfig,
    PandorasRouterExperiment,
    run_domain,
)


def test_run_domain_is_deterministic_per_seed():
    a, _ = run_domain("reasoning", 200, 3, embed="hashing")
    b, _ = run_domain("reasoning", 200, 3, embed="hashing")
    c, _ = run_domain("reasoning", 200, 4, embed="hashing")
    assert a == b
    assert a != c


def test_quick_experiment_report():
    exp = PandorasRouterExperiment(embed="hashing")
    report = exp.run(quick=True, seeds=1)
    assert report.slug == "pandoras-router"
    assert len(report.claims) == 12
    s = {k: v.mean for k, v in report.summary.items()}
    for d in ("multi_llm", "retrieval", "reasoning"):
        # the oracle bounds every policy; exhaustive uses every specialist's expensive estimate
        for pol in ("router", "exhaustive", "cheap", "random", "uncertainty", "routellm"):
            assert s[f"{d}_{pol}_gross"] <= s[f"{d}_oracle_gross"] + 1e-12
        assert s[f"{d}_exhaustive_calls"] == len({"multi_llm": range(11)}.get(d, range(6)))
        assert 0 <= s[f"{d}_call_ratio"] <= 1
        assert s[f"{d}_router_net"] >= s[f"{d}_cheap_net"]  # holds by a wide margin in every domain
        assert np.isfinite(s[f"{d}_routellm_total_cost"])
    assert 0 < s["bidder_acc_voi_self_assess_rate"] < 1
    assert s["bidder_acc_always_self_assess_rate"] == 1.0
    assert "Pandora's Bidder (multi_llm test split)" in report.tables
    md = report.to_markdown()
    assert "multi_llm_matches_exhaustive" in md
    # one seed, no per-seed standard error: no interval, so no verdict either way
    assert all(r.verdict == INCONCLUSIVE_1_SEED and r.lo is None for r in report.claims)
    # the recorded configuration is the quick one, as JSON data
    assert report.config == json.loads(json.dumps(dataclasses.asdict(exp.config(True))))
    assert report.config["n_queries"] == 600 and report.config["embedding"] == "hashing"


def test_quick_verdicts_on_three_seeds():
    """Three quick seeds (about a second): the wide-margin claims hold on their paired intervals."""
    report = PandorasRouterExperiment(embed="hashing").run(quick=True, seeds=3)
    res = {r.claim.key: r for r in report.claims}
    for d in ("multi_llm", "retrieval", "reasoning"):
        for key in (f"{d}_matches_exhaustive", f"{d}_beats_cheap"):
            assert res[key].n == 3 and res[key].verdict == HOLDS, (key, res[key])
            assert res[key].claim.paired
        # calls: the interval sits below exhaustive's (a ratio of 1) whatever the verdict on 0.4
        assert res[f"{d}_fewer_calls"].hi < 1.0


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = PandorasRouterExperiment(embed="hashing")
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is PandorasRouterConfig
    assert type(quick).__dataclass_params__.frozen
    assert quick == QUICK and full == dataclasses.replace(PandorasRouterConfig(), embedding="hashing")
    assert quick.n_queries < full.n_queries
    assert PandorasRouterExperiment(embed="minilm").config(True).embedding == "minilm"
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.lam = 3.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="embedding"):
        PandorasRouterConfig(embedding="bert")
    with pytest.raises(ValueError, match="train_fraction"):
        PandorasRouterConfig(train_fraction=1.0)
    with pytest.raises(ValueError, match="embed"):
        PandorasRouterExperiment(embed="bert")
