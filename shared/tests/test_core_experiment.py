"""The experiment protocol: seeds, summaries, claim verdicts, validation."""

import math

import numpy as np
import pytest

from paperworks.core import Claim, Experiment, MetricSummary, Paper, Progress, seed_everything


class Noisy(Experiment):
    slug = "noisy"
    paper = Paper("A noisy paper", arxiv="2501.00001")
    claims = (
        Claim("positive", "the gain is positive", "gain", ">", 0.0),
        Claim("small", "the loss stays below one half", "loss", "<=", 0.5),
    )
    default_seeds = 4

    def run_seed(self, seed, *, quick, progress):
        rng = np.random.default_rng(seed)
        return {"gain": float(rng.normal(1.0, 0.1)), "loss": 0.75 if quick else 0.25}


def test_run_summarises_over_seeds_and_judges_claims():
    report = Noisy().run(quick=True)
    assert report.seeds == [0, 1, 2, 3]
    gains = [np.random.default_rng(s).normal(1.0, 0.1) for s in range(4)]
    s = report.summary["gain"]
    assert s.mean == pytest.approx(np.mean(gains))
    assert s.std == pytest.approx(np.std(gains, ddof=1))
    assert (s.min, s.max, s.n) == (pytest.approx(min(gains)), pytest.approx(max(gains)), 4)
    verdicts = {r.claim.key: r.verdict for r in report.claims}
    assert verdicts == {"positive": "holds", "small": "not reproduced"}  # quick mode makes loss 0.75
    one = Noisy().run(quick=False, seeds=[7])
    assert [r.verdict for r in one.claims] == ["inconclusive (1 seed)"] * 2


def test_same_seed_same_report_and_global_state_seeded():
    a, b = Noisy().run(quick=True, seeds=[3, 5]), Noisy().run(quick=True, seeds=[3, 5])
    assert a.per_seed == b.per_seed
    seed_everything(11)
    x = np.random.rand(3)  # noqa: NPY002 - checking the legacy global state
    seed_everything(11)
    np.testing.assert_array_equal(x, np.random.rand(3))  # noqa: NPY002


def test_markdown_and_dict_carry_claims_and_spread():
    report = Noisy().run(quick=True, seeds=2)
    md = report.to_markdown()
    assert "paper claims: 1 hold, 0 inconclusive, 1 not reproduced" in md
    assert "`loss <= 0.5`" in md and "**not reproduced**" in md and "## Run record" in md
    d = report.to_dict()
    assert d["paper"]["arxiv"] == "2501.00001"
    assert [c["verdict"] for c in d["claims"]] == ["holds", "not reproduced"]
    assert set(d["summary"]) == {"gain", "loss"}


def test_claim_predicates_and_nan():
    c = Claim("k", "s", "m", ">=", 1.0)
    assert c.holds(1.0) and not c.holds(0.99) and not c.holds(math.nan)
    assert Claim("k", "s", "m", "<", 1.0).holds(0.5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"op": "=="}, "'k': op"),
        ({"threshold": math.inf}, "'k': threshold"),
        ({"key": "has space"}, "Claim.key"),
        ({"kind": "vibes"}, "'k': kind"),
        ({"exact": True, "paired": True}, "exact claim cannot also be paired"),
    ],
)
def test_bad_claims_are_named(kwargs, match):
    base = {"key": "k", "statement": "s", "metric": "m", "op": ">", "threshold": 0.0}
    with pytest.raises(ValueError, match=match):
        Claim(**{**base, **kwargs})


def test_bad_seeds_and_bad_metrics():
    with pytest.raises(ValueError, match="seeds: expected a positive"):
        Noisy().run(seeds=0)
    with pytest.raises(ValueError, match="distinct"):
        Noisy().run(seeds=[1, 1])

    class Inconsistent(Noisy):
        def run_seed(self, seed, *, quick, progress):
            return {"gain": 1.0, "loss": 0.1} if seed == 0 else {"gain": 1.0}

    with pytest.raises(ValueError, match="same names"):
        Inconsistent().run(seeds=2)

    class Missing(Noisy):
        def run_seed(self, seed, *, quick, progress):
            return {"gain": 1.0}

    with pytest.raises(ValueError, match=r"claims need metrics \['loss'\]"):
        Missing().run(seeds=1)

    class NotNumber(Noisy):
        def run_seed(self, seed, *, quick, progress):
            return {"gain": "high", "loss": 0.1}

    with pytest.raises(TypeError, match="'gain' is not a number"):
        NotNumber().run(seeds=1)


def test_metric_summary_single_value_and_empty():
    assert MetricSummary.of([2.0]).format() == "2"
    with pytest.raises(ValueError, match="at least one"):
        MetricSummary.of([])


def test_progress_writes_lines(capsys):
    import io

    buf = io.StringIO()
    p = Progress(stream=buf, every_s=0.0)
    assert list(p.track(range(3), "step")) == [0, 1, 2]
    p.log("done")
    out = buf.getvalue()
    assert "step 3/3 100% [" in out and "it/s]" in out and "done" in out  # count, rate and ETA (tqdm)
    assert out.count("step 3/3") == 1  # one line per state on a stream that is not a terminal
    silent = io.StringIO()
    list(Progress(enabled=False, stream=silent).track(range(3), "x"))
    assert silent.getvalue() == ""


def test_quick_seeds_default_applies_only_to_quick_runs():
    class QuickTwo(Noisy):
        quick_seeds = 2

    assert QuickTwo().run(quick=True).seeds == [0, 1]
    assert QuickTwo().run(quick=False).seeds == [0, 1, 2, 3]
    assert QuickTwo().run(quick=True, seeds=[9]).seeds == [9]
    assert Noisy().run(quick=True).seeds == [0, 1, 2, 3]


def test_run_record_and_config_are_recorded():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        steps: int
        sizes: tuple[int, ...] = (1, 2)

    class Configured(Noisy):
        def config(self, quick):
            return Cfg(steps=10 if quick else 100)

    rep = Configured().run(quick=True, seeds=2)
    assert rep.config == {"steps": 10, "sizes": [1, 2]}
    assert Configured().run(quick=False, seeds=2).config["steps"] == 100
    rec = rep.to_dict()["record"]
    for key in ("core", "git", "libraries", "python", "cpu", "cpu_count", "threads", "wall_time_s", "seeds"):
        assert key in rec, key
    assert rec["libraries"]["numpy"] == np.__version__ and rec["seeds"] == [0, 1]
    assert rec["git"] is None or set(rec["git"]) == {"commit", "dirty"}

    @dataclasses.dataclass
    class Loose:
        steps: int = 1

    class Unfrozen(Noisy):
        def config(self, quick):
            return Loose()

    with pytest.raises(TypeError, match="frozen dataclass"):
        Unfrozen().run(seeds=1)


def test_claims_table_escapes_pipes_in_cells():
    from paperworks.core import claims_table

    row = {
        "key": "k",
        "kind": "paper",
        "statement": "|J* - J| is small",
        "paper_value": None,
        "predicate": "|x| <= 1",
        "estimate": 0.5,
        "interval": [0.1, 0.9],
        "n": 5,
        "verdict": "holds",
    }
    line = claims_table([row]).splitlines()[2]
    assert line.count(" | ") + 2 == 10  # nine cells: the statement's and predicate's pipes are escaped
    assert "\\|J* - J\\|" in line and "`\\|x\\| <= 1`" in line
