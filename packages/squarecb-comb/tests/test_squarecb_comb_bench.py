"""The benchmark's sides run, vowpal wabbit's through its real Python interface (test group)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_squarecb_comb.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_squarecb_comb_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_side_plays_a_round_and_vw_learns() -> None:
    pytest.importorskip("vowpalwabbit")
    bench = _bench()
    inp = bench.make_input(20)
    assert set(inp) == {bench.OURS, bench.OURS1, bench.VW, bench.VW_PARSE}
    for side in inp.values():
        side()
        side()
    assert inp[bench.OURS].agent.t_ == bench.PREWARM + 2
    vw = inp[bench.VW]
    pmf = vw.vw.predict(vw.lines[0])
    assert len(pmf) == 20 and abs(sum(pmf) - 1.0) < 1e-4
    for w in bench._WORKSPACES:
        w.finish()
    bench._WORKSPACES.clear()
