"""The bench harness: interleaving, warm-up, paired bootstrap ratios, sizes, results files, errors."""

import io
import json
import math
import statistics
import sys
import time

import numpy as np
import pytest

from paperworks.core import Progress
from paperworks.core.bench import (
    BenchResult,
    bootstrap_ratio_interval,
    compare,
    load_results,
    pin_threads,
    results_markdown,
    write_results,
)


def spin(seconds: float) -> None:
    """Busy-wait on the wall clock: the time taken does not depend on CPU speed or load."""
    end = time.perf_counter_ns() + int(seconds * 1e9)
    while time.perf_counter_ns() < end:
        pass


def test_rounds_are_recorded_permutations_in_the_order_run():
    log = []
    sides = {n: (lambda n=n: log.append(n)) for n in ("a", "b", "c")}
    r = compare(sides, ours="a", warmup=0, repeats=12, number=1, seed=3)
    order = r.row().order
    assert len(order) == 12
    assert all(sorted(o) == ["a", "b", "c"] for o in order)
    assert len(set(order)) > 1 and len({o[0] for o in order}) > 1  # not one fixed order
    assert log == [n for o in order for n in o]  # the record is the order the calls ran in
    again = compare(sides, ours="a", warmup=0, repeats=12, number=1, seed=3)
    other = compare(sides, ours="a", warmup=0, repeats=12, number=1, seed=4)
    assert again.row().order == order and other.row().order != order


def test_warm_up_calls_are_run_but_not_recorded():
    calls = {"a": 0, "b": 0}

    def side(name):
        def f():
            calls[name] += 1
            if calls[name] <= 3:  # the warm-up calls are the slow ones
                spin(0.02)

        return f

    r = compare({"a": side("a"), "b": side("b")}, ours="a", warmup=3, repeats=4, number=2)
    assert calls == {"a": 3 + 4 * 2, "b": 3 + 4 * 2}
    for s in r.row().sides:
        assert len(s.times_s) == 4 and s.number == 2
        assert max(s.times_s) < 0.005  # a slow call in a timing would make it >= 10 ms per call


def test_auto_number_times_fast_calls_in_batches():
    calls = {"fast": 0, "slow": 0}

    def fast():
        calls["fast"] += 1

    def slow():
        calls["slow"] += 1
        spin(0.002)

    r = compare({"fast": fast, "slow": slow}, ours="fast", warmup=2, repeats=3, min_time_s=5e-4)
    row = r.row()
    assert row.side("fast").number > 10 and row.side("slow").number == 1
    assert calls == {n: 2 + 3 * row.side(n).number for n in calls}
    assert r.settings["number"] == "auto"
    assert (
        compare({"fast": fast, "slow": slow}, ours="fast", warmup=0, repeats=2).row().side("fast").number == 1
    )


def _quantile_linear(sorted_values, q):
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def test_bootstrap_interval_matches_direct_resampling():
    g = np.random.default_rng(11)
    ours = list(1e-3 * np.exp(g.normal(0, 0.2, 15)))
    peer = list(2e-3 * np.exp(g.normal(0, 0.2, 15)))
    est, low, high = bootstrap_ratio_interval(ours, peer, n_boot=500, seed=7, level=0.9)
    # Direct: the documented draws, then one resample at a time in plain Python.
    draws = np.random.default_rng(7).integers(0, 15, size=(500, 15))
    medians = sorted(statistics.median(ours[i] / peer[i] for i in row) for row in draws)
    assert est == pytest.approx(statistics.median(o / p for o, p in zip(ours, peer)), rel=1e-12)
    assert low == pytest.approx(_quantile_linear(medians, 0.05), rel=1e-12)
    assert high == pytest.approx(_quantile_linear(medians, 0.95), rel=1e-12)
    assert low < est < high
    assert bootstrap_ratio_interval(ours, peer, n_boot=500, seed=7, level=0.9) == (est, low, high)
    wide = bootstrap_ratio_interval(ours, peer, n_boot=500, seed=7, level=0.99)
    assert wide[1] <= low and wide[2] >= high


def test_bootstrap_is_paired_over_rounds():
    # Rounds vary 100-fold, but in every round ours takes exactly half as long: a paired interval is
    # exactly [0.5, 0.5]; resampling the two sides separately would give a wide one.
    peer = list(np.geomspace(1e-4, 1e-2, 20))
    ours = [t / 2 for t in peer]
    assert bootstrap_ratio_interval(ours, peer) == pytest.approx((0.5, 0.5, 0.5), rel=1e-12)


def test_twice_the_work_reads_as_ratio_two_with_an_interval_containing_two():
    # Each call spins 0.2 ms x k x exp(e), e ~ N(0, 0.15) from a seeded generator: the per-round log
    # ratio is log 2 plus a symmetric noise, so its median is 2. A noiseless spin would give an
    # interval narrower than the call overhead (about 1e-4 of the ratio) and could miss 2 by that;
    # short spins keep the rounds that a busy machine preempts few, and the median ignores them.
    g = np.random.default_rng(5)

    def unit(k):
        spin(k * 2e-4 * math.exp(g.normal(0.0, 0.15)))

    sides = {"twice": lambda: unit(2), "once": lambda: unit(1)}
    r = compare(sides, ours="twice", peer="once", warmup=1, repeats=40, number=1, seed=0)
    q = r.ratio()
    assert q.peer == "once" and q.level == 0.95
    assert abs(q.estimate - 2.0) < 0.25
    assert q.low <= 2.0 <= q.high
    assert q.high - q.low < 0.8
    assert r.row().side("twice").median_s == pytest.approx(4e-4, rel=0.2)


def test_sizes_give_one_row_each_and_share_one_input():
    built = []

    def make_input(n):
        built.append(n)
        return np.arange(n, dtype=float)

    seen = {"sum": [], "dot": []}

    def side(name, fn):
        def f(x):
            seen[name].append(id(x))
            return fn(x)

        return f

    sides = {"sum": side("sum", np.sum), "dot": side("dot", lambda x: x @ x)}
    log = io.StringIO()
    progress = Progress(stream=log)
    r = compare(
        sides, make_input, [10, 1000, 5000], ours="sum", warmup=1, repeats=3, number=1, progress=progress
    )
    assert "size 5,000 (3/3)" in log.getvalue()
    assert built == [10, 1000, 5000]
    assert [row.size for row in r.rows] == [10, 1000, 5000]
    assert len(set(seen["sum"])) == len(set(seen["dot"])) == 3 and set(seen["sum"]) == set(seen["dot"])
    assert [len(row.sides) for row in r.rows] == [2, 2, 2] and r.ratio("dot", size=1000).peer == "dot"
    md = r.to_markdown()
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table) == 2 + 3 * 2  # header, rule, one line per size and side
    assert "| 1,000 | dot |" in md and "(ours)" in md


def test_results_files_round_trip(tmp_path):
    r1 = compare(
        {"a": lambda x: sum(x), "b": lambda x: sorted(x)},
        lambda s: list(range(s[0] * s[1])),
        sizes=[(2, 3), (4, 5)],
        ours="a",
        name="sum vs sort",
        size_label="n × d",
        warmup=1,
        repeats=3,
        note="A note.",
    )
    r2 = compare({"x": lambda: None, "y": lambda: None}, ours="y", repeats=2, warmup=0)
    js, md = write_results([r1, r2], tmp_path / "benchmarks")
    assert sorted(p.name for p in (tmp_path / "benchmarks").iterdir()) == ["results.json", "results.md"]
    back = load_results(tmp_path / "benchmarks")
    assert back == [r1, r2]
    assert back[0].row((4, 5)).size == (4, 5)
    data = json.loads(js.read_text())
    assert data["results"][0]["rows"][0]["size"] == [2, 3]
    assert data["results"][0]["machine"]["cpu_count"] == r1.machine["cpu_count"]
    text = md.read_text()
    assert text == results_markdown(back, "Benchmarks")
    assert "## sum vs sort" in text and "| n × d | side |" in text and "| 2 × 3 | a | " in text
    assert "## Machine" in text and r1.machine["python"] in text and "A note." in text
    with pytest.raises(ValueError, match="schema"):
        (tmp_path / "bad.json").write_text('{"results": []}')
        load_results(tmp_path / "bad.json")


def test_peak_memory_with_tracemalloc():
    calls = {"big": 0}

    def big():
        calls["big"] += 1
        return np.ones(1_000_000).sum()  # 8 MB, freed before returning

    r = compare({"big": big, "small": lambda: 1 + 1}, ours="big", memory=True, warmup=1, repeats=2, number=1)
    row = r.row()
    assert row.side("big").peak_bytes >= 8_000_000 > row.side("small").peak_bytes
    assert calls["big"] == 1 + 2 + 1  # the memory call is one extra, untimed
    assert "tracemalloc" in r.settings["memory"] and "peak memory" in r.to_markdown()
    assert compare({"a": big, "b": big}, ours="a", warmup=0, repeats=2).row().side("a").peak_bytes is None


def test_torch_memory_on_cpu_is_reported_as_not_measured():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        pytest.skip("CUDA present: the allocator's peak is measured")
    r = compare({"a": lambda: None, "b": lambda: None}, ours="a", memory="torch", warmup=0, repeats=2)
    assert r.row().side("a").peak_bytes is None
    assert "not measured" in r.settings["memory"] and "not measured" in r.to_markdown()


class _FakeCuda:
    def __init__(self, available):
        self.available, self.syncs, self.allocated, self.peak = available, 0, 100, 100

    def is_available(self):
        return self.available

    def is_initialized(self):
        return self.available

    def synchronize(self):
        self.syncs += 1

    def reset_peak_memory_stats(self):
        self.peak = self.allocated

    def memory_allocated(self):
        return self.allocated

    def max_memory_allocated(self):
        return self.peak


class _FakeTorch:
    """Stands in for torch (never imported by the harness): threads, CUDA sync and allocator stats."""

    __version__ = "9.9.9+cpu"

    def __init__(self, cuda):
        self.threads, self.cuda = 4, _FakeCuda(cuda)

    def get_num_threads(self):
        return self.threads

    def set_num_threads(self, n):
        self.threads = n


def test_torch_threads_sync_and_cuda_memory_with_a_stand_in(monkeypatch):
    torch = _FakeTorch(cuda=True)
    monkeypatch.setitem(sys.modules, "torch", torch)

    def alloc():
        torch.cuda.peak = max(torch.cuda.peak, torch.cuda.allocated + 1000)

    r = compare({"a": alloc, "b": lambda: None}, ours="a", memory="torch", warmup=1, repeats=3, threads=1)
    assert torch.threads == 4 and r.settings["threads"]["torch"] == 1  # pinned inside, restored after
    assert torch.cuda.syncs == 2 * (1 + 3 + 2)  # each timing (auto sync) and twice per memory call
    assert r.row().side("a").peak_bytes == 1000 and r.row().side("b").peak_bytes == 0
    assert "torch.cuda" in r.settings["memory"] and r.machine["torch"] == "9.9.9"
    cpu = _FakeTorch(cuda=False)
    monkeypatch.setitem(sys.modules, "torch", cpu)
    r = compare({"a": lambda: None, "b": lambda: None}, ours="a", memory="torch", warmup=1, repeats=2)
    assert cpu.cuda.syncs == 0 and r.row().side("a").peak_bytes is None
    assert "not measured" in r.settings["memory"]


def test_threads_are_recorded():
    with pin_threads(1) as rec:
        assert rec["requested"] == 1
    r = compare({"a": lambda: None, "b": lambda: None}, ours="a", threads=1, warmup=0, repeats=2)
    assert r.settings["threads"]["requested"] == 1
    assert r.machine["cpu_count"] >= 1 and r.machine["numpy"] == np.__version__ and r.machine["cpu"]
    if "torch" in sys.modules:
        assert r.settings["threads"]["torch"] == 1


def test_an_error_in_a_side_names_it():
    def broken():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom") as e:
        compare({"ok": lambda: None, "broken": broken}, ours="ok", warmup=1)
    assert "'broken'" in "".join(e.value.__notes__)


def _ok():
    return None


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"sides": {}}, ValueError, "sides"),
        ({"sides": {"a": 3, "b": _ok}}, TypeError, r"sides\['a'\]"),
        ({"ours": "c"}, ValueError, "ours"),
        ({"peer": "c"}, ValueError, "peer"),
        ({"peer": "a"}, ValueError, "peer"),
        ({"peer": ["b", "b"]}, ValueError, "peer"),
        ({"repeats": 1}, ValueError, "repeats"),
        ({"warmup": -1}, ValueError, "warmup"),
        ({"number": 0}, ValueError, "number"),
        ({"min_time_s": 0.0}, ValueError, "min_time_s"),
        ({"level": 1.0}, ValueError, "level"),
        ({"memory": "gpu"}, ValueError, "memory"),
        ({"threads": 0}, ValueError, "threads"),
        ({"sync": 3}, ValueError, "sync"),
        ({"sizes": [1, 2]}, ValueError, "sizes"),
        ({"make_input": 5}, TypeError, "make_input"),
        ({"make_input": lambda n: n, "sizes": []}, ValueError, "sizes"),
        ({"make_input": lambda n: n, "sizes": [1, 1]}, ValueError, "sizes"),
    ],
)
def test_bad_arguments_are_named(kwargs, exc, match):
    args = {"sides": {"a": _ok, "b": _ok}, "ours": "a", "warmup": 0, "repeats": 2, **kwargs}
    with pytest.raises(exc, match=match):
        compare(**args)


def test_bootstrap_bad_arguments_are_named():
    with pytest.raises(ValueError, match="ours_s, peer_s"):
        bootstrap_ratio_interval([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap_ratio_interval([1.0], [1.0])
    with pytest.raises(ValueError, match="peer_s"):
        bootstrap_ratio_interval([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_ratio_interval([1.0, 2.0], [1.0, 2.0], n_boot=0)
    with pytest.raises(TypeError, match="results"):
        results_markdown([{"name": "not a result"}])
    assert isinstance(BenchResult.from_dict(compare({"a": _ok}, ours="a", repeats=2).to_dict()), BenchResult)


def test_extra_tables_are_stored_and_the_markdown_regenerates_from_json(tmp_path):
    from paperworks.core.bench import render_results_file

    res = compare({"a": lambda: None, "b": lambda: None}, ours="a", repeats=3, warmup=1, number=1)
    quality = "| method | NDCG@10 |\n| --- | --- |\n| a | 0.31 |"
    js, md = write_results(res, tmp_path, title="T", tables={"Quality on the same inputs": quality})
    assert "## Quality on the same inputs" in md.read_text() and "| a | 0.31 |" in md.read_text()
    assert render_results_file(tmp_path) == md.read_text() == render_results_file(js)


def test_publish_writes_beside_the_script_only_in_a_full_run(tmp_path, capsys):
    from paperworks.core.bench import publish

    res = compare({"a": lambda: None, "b": lambda: None}, ours="a", repeats=3, warmup=1, number=1)
    script = tmp_path / "benchmarks" / "bench_x.py"
    script.parent.mkdir()
    quick = publish(res, script, quick=True, title="T")
    assert (
        not (script.parent / "results.json").exists()
        and "committed results left alone" in capsys.readouterr().out
    )
    full = publish(res, script, quick=False, title="T")
    assert (script.parent / "results.md").read_text() == full and "# T" in quick
