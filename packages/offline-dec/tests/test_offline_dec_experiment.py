import pytest

from paperworks.core import load_experiment
from paperworks.offline_dec.experiments import QUICK, OfflineDECExperiment


@pytest.fixture(scope="module")
def report():
    return OfflineDECExperiment().run(quick=True)


def test_quick_claims(report):
    verdicts = {r.claim.key: r.verdict for r in report.claims}
    for key in (
        "lower_bound_floor",
        "lower_bound_flat",
        "lower_bound_identical_data",
        "lower_bound_class",
        "gap_zero",
    ):
        assert verdicts[key] == "holds", (key, verdicts[key])
    valid = {"holds", "inconclusive", "not reproduced", "inconclusive (1 seed)"}
    assert all(r.verdict in valid and r.lo is not None for r in report.claims)
    assert all(rec["lb/cstar_plus_infinite"] == 1.0 for rec in report.per_seed)


def test_registered_and_config():
    assert isinstance(load_experiment("offline-dec"), OfflineDECExperiment)
    assert OfflineDECExperiment().config(True) == QUICK
    with pytest.raises(ValueError, match="sizes"):
        type(QUICK)(sizes=(10, 5, 20))


def test_seed_repeatable():
    exp = OfflineDECExperiment()
    a = exp.run_one(1, quick=True).metrics
    b = exp.run_one(1, quick=True).metrics
    assert a == b


def test_figure_written(report, tmp_path):
    pytest.importorskip("matplotlib")
    names = OfflineDECExperiment().figures(report, tmp_path)
    assert names and (tmp_path / names[0]).stat().st_size > 10_000
