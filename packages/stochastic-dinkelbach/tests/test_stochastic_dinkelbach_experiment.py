"""The quick reproduction: config, claims, report structure, metrics, repeatability."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from paperworks.core.claims import INCONCLUSIVE_1_SEED, SlopeClaim
from paperworks.stochastic_dinkelbach.experiments import (
    ETU_SIZES,
    QUICK,
    SIZES,
    StochasticDinkelbachConfig,
    StochasticDinkelbachExperiment,
)


def test_config_quick_and_full_are_one_frozen_dataclass():
    exp = StochasticDinkelbachExperiment()
    quick, full = exp.config(True), exp.config(False)
    assert type(quick) is type(full) is StochasticDinkelbachConfig and quick is QUICK and quick != full
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.noise_n = 3  # type: ignore[misc]
    for bad in ({"prior": 1.0}, {"etu_replicates": (1, 2)}, {"tuning_cv": 1}, {"rate_replicates": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            StochasticDinkelbachConfig(**bad)


def test_claims_are_the_issues_predicates():
    by_key = {c.key: c for c in StochasticDinkelbachExperiment.claims}
    for m in ("f1", "f2", "jaccard"):
        for kind in ("online", "pop"):
            c = by_key[f"{kind}_regret_rate_{m}"]
            assert isinstance(c, SlopeClaim) and c.band == (-0.65, -0.35) and c.sizes == SIZES
        noise = by_key[f"regret_grows_with_estimation_error_{m}"]
        assert (noise.op, noise.threshold, noise.kind) == (">", 0.0, "mechanism")
    for base in ("threshold_05", "tuned_once"):
        for ds in ("breast_cancer", "digits", "wine"):
            c = by_key[f"beats_{base}_{ds}"]
            assert c.paired and (c.op, c.threshold) == (">", 0.0)
    etu = by_key["etu_pu_gap_shrinks"]
    assert etu.sizes == ETU_SIZES and etu.band[1] == 0.0


@pytest.fixture(scope="module")
def report():
    return StochasticDinkelbachExperiment().run(quick=True, seeds=1)


def test_quick_report(report):
    assert len(report.claims) == len(StochasticDinkelbachExperiment.claims)
    assert all(c.verdict == INCONCLUSIVE_1_SEED for c in report.claims)
    assert all(math.isfinite(c.estimate) for c in report.claims)
    s = report.per_seed[0]
    assert all(math.isfinite(v) for v in s.values())
    assert report.config == json.loads(json.dumps(dataclasses.asdict(QUICK)))
    # regrets are positive and decrease from the shortest to the longest stream
    for m in ("f1", "f2", "jaccard"):
        assert s[f"online_regret_{m}/n1000"] > s[f"online_regret_{m}/n64000"] > 0
        assert s[f"pop_regret_{m}/n1000"] > s[f"pop_regret_{m}/n64000"] > 0
        assert s[f"noise_pop_regret_{m}/s0.2"] > s[f"noise_pop_regret_{m}/s0"] >= 0
    # on the long generated stream the learner beats threshold 0.5 (optimal thresholds are far from 0.5)
    for m in ("f1", "f2", "jaccard"):
        assert s[f"gen_final_{m}_threshold_0.5"] < s[f"gen_final_{m}_dinkelbach"]
    # ETU dominates PU on every sample size (the gap is an exact expectation, floored at 1e-9)
    for n in ETU_SIZES:
        assert s[f"etu_expected_f1/n{n}"] >= s[f"pu_expected_f1/n{n}"]
    # the oracle threshold in hindsight bounds every online method on the bundled sets
    for ds in ("breast_cancer", "digits", "wine"):
        for meth in ("dinkelbach", "threshold_0.5", "tuned_once"):
            assert s[f"bundled_{ds}_hindsight_f1"] >= s[f"bundled_{ds}_{meth}_f1"] - 1e-12
    assert set(report.tables) and "| digits | f1 |" in "".join(report.tables.values())
    assert "## Claims" in report.to_markdown()


def test_a_seed_repeats_exactly():
    exp = StochasticDinkelbachExperiment()
    cfg = exp.config(True)
    assert exp._etu(3, cfg) == exp._etu(3, cfg)
    assert exp._noise(3, cfg) == exp._noise(3, cfg)
    assert exp._bundled(3, cfg, "wine") == exp._bundled(3, cfg, "wine")
