import math

from paperworks.taskkv.experiments import POLICIES, TaskKVExperiment


def test_quick_experiment_report_structure_and_sanity():
    report = TaskKVExperiment().run(quick=True, seeds=1)
    assert [c.claim.key for c in report.claims] == [c.key for c in TaskKVExperiment.claims]
    m = report.per_seed[0]
    for name in POLICIES:
        for suffix in ("", "_sparse", "_dense"):
            assert 0.0 <= m[f"sr_{name}{suffix}"] <= 1.0
    assert m["kv_tokens_kept"] == math.floor(0.2 * m["kv_tokens_full"])
    assert 0.0 <= m["fallback_rate_dense"] <= 1.0 and 0.0 <= m["label_sign_agreement"] <= 1.0
    assert (
        m["scorer_train_loss"] <= m["scorer_prior_loss"]
    )  # the residual starts at the prior and only improves
    assert all(math.isfinite(v) for v in m.values())
    md = report.to_markdown()
    assert "Success rate by policy" in md and "TaskKV" in md
