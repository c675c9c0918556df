"""Command-line values: seed specifications (counts, lists, ranges) and typed config overrides."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paperworks.core import Claim, Experiment, Paper
from paperworks.core.overrides import OverrideError, apply_overrides, typed_overrides
from paperworks.core.seeds import SeedSpecError, format_seed_spec, parse_seed_spec

# -- seed specs ----------------------------------------------------------------------------------


@given(st.integers(1, 5000))
def test_a_count_is_seeds_from_zero(n):
    assert parse_seed_spec(str(n)) == list(range(n))
    assert parse_seed_spec(f" {n} ") == list(range(n))


@given(st.integers(0, 10_000), st.integers(1, 500))
def test_a_range_is_half_open(lo, width):
    assert parse_seed_spec(f"{lo}:{lo + width}") == list(range(lo, lo + width))


@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=40, unique=True))
def test_lists_round_trip_through_the_shortest_spec(seeds):
    spec = format_seed_spec(seeds)
    assert parse_seed_spec(spec) == seeds
    if len(seeds) > 1:  # a plain list (a lone number would be a count)
        assert parse_seed_spec(",".join(map(str, seeds))) == seeds


@given(st.lists(st.tuples(st.integers(0, 300), st.integers(1, 20)), min_size=1, max_size=6))
def test_mixed_items_keep_order_or_name_a_repeat(items):
    spec = ",".join(f"{a}:{a + w}" if w > 1 else str(a) for a, w in items)
    expected = [s for a, w in items for s in (range(a, a + w) if w > 1 else [a])]
    if len(items) == 1 and items[0][1] == 1:
        expected = list(range(items[0][0]))  # a lone number is a count
        if not expected:
            with pytest.raises(SeedSpecError, match="at least 1"):
                parse_seed_spec(spec)
            return
    if len(set(expected)) < len(expected):
        with pytest.raises(SeedSpecError, match="named twice"):
            parse_seed_spec(spec)
    else:
        assert parse_seed_spec(spec) == expected


@given(st.text(alphabet="0123456789:,- x.e", max_size=12))
def test_any_text_parses_to_distinct_seeds_or_fails_with_the_expected_forms(text):
    try:
        seeds = parse_seed_spec(text)
    except SeedSpecError as e:
        assert str(e).startswith("seeds")
        return
    assert seeds and len(set(seeds)) == len(seeds) and all(s >= 0 for s in seeds)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("", "empty string"),
        ("0", "at least 1"),
        ("-3", "not a non-negative integer"),
        ("1e3", "not a non-negative integer"),
        ("5:5", "is empty"),
        ("7:3", "is empty"),
        ("1:2:3", "the form a:b"),
        ("1,,2", "empty item"),
        ("3,", "empty item"),
        ("2,2", "named twice"),
        ("0:3,1", "named twice"),
        ("0:99999999999", "at most"),
    ],
)
def test_malformed_specs_say_what_was_expected(spec, match):
    with pytest.raises(SeedSpecError, match=match):
        parse_seed_spec(spec)


def test_experiment_seed_list_takes_specs_counts_and_lists():
    class E(Experiment):
        slug = "e"
        paper = Paper("E")
        quick_seeds = 2

        def run_seed(self, seed, *, quick, progress):
            return {"m": 1.0}

    e = E()
    assert e.seed_list(True) == [0, 1] and e.seed_list(False) == [0, 1, 2, 3, 4]
    assert e.seed_list(False, "10:13") == [10, 11, 12]
    assert e.seed_list(False, "0,3,7") == [0, 3, 7]
    assert e.seed_list(False, 3) == [0, 1, 2] and e.seed_list(False, [4, 2]) == [4, 2]


# -- overrides -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inner:
    steps: int = 10
    lr: float = 0.1


@dataclass(frozen=True)
class Cfg:
    n: int = 5
    rate: float = 0.5
    name: str = "a"
    flag: bool = False
    sizes: tuple[int, ...] = (2, 4)
    band: tuple[float, float] = (0.0, 1.0)
    grid: tuple[tuple[int, int], ...] = ((1, 2),)
    mode: Literal["fast", "slow"] = "fast"
    cap: int | None = None
    inner: Inner = field(default_factory=Inner)
    words: tuple[str, ...] = ("x",)

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"Cfg.n: expected a positive int, got {self.n}")


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("n", "7", 7),
        ("n", "1_000", 1000),
        ("rate", "2", 2.0),
        ("rate", "1e-3", 1e-3),
        ("name", "hello, world", "hello, world"),
        ("flag", "true", True),
        ("flag", "No", False),
        ("flag", "1", True),
        ("sizes", "2,4,64", (2, 4, 64)),
        ("sizes", "(8,)", (8,)),
        ("sizes", "[3, 5]", (3, 5)),
        ("sizes", "16", (16,)),
        ("band", "0.1, 2", (0.1, 2.0)),
        ("grid", "(1, 20), (3, 100)", ((1, 20), (3, 100))),
        ("mode", "slow", "slow"),
        ("cap", "none", None),
        ("cap", "12", 12),
        ("inner.steps", "3", 3),
        ("words", "a,b", ("a", "b")),
    ],
)
def test_text_values_are_typed_by_the_annotation(key, text, value):
    typed = typed_overrides(Cfg(), {key: text}, where="demo")
    assert typed == {key: value} and type(typed[key]) is type(value)
    cfg = apply_overrides(Cfg(), typed)
    obj = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    assert obj == value


@pytest.mark.parametrize(
    ("key", "text", "match"),
    [
        ("nn", "1", r"unknown key 'nn' for demo; did you mean 'n'\? valid keys: n, rate, name, flag"),
        ("inner.step", "1", "unknown key 'inner.step'.*inner.steps"),
        ("n", "1.5", r"--set n=1.5: expected int for demo's n \(now 5\)"),
        ("n", "x", "expected int"),
        ("rate", "fast", "expected float"),
        ("flag", "maybe", "expected bool"),
        ("sizes", "1,a", r"expected tuple\[int, \.\.\.\]"),
        ("band", "1,2,3", r"expected tuple\[float, float\]"),
        ("mode", "medium", "expected Literal"),
        ("cap", "many", "expected"),
    ],
)
def test_bad_keys_and_values_are_one_line(key, text, match):
    with pytest.raises(OverrideError, match=match) as info:
        typed_overrides(Cfg(), {key: text}, where="demo")
    assert "\n" not in str(info.value)


def test_the_configs_own_checks_run_and_values_are_checked_too():
    with pytest.raises(OverrideError, match=r"Cfg rejects n=0: Cfg\.n: expected a positive int, got 0"):
        apply_overrides(Cfg(), typed_overrides(Cfg(), {"n": "0"}))
    assert typed_overrides(Cfg(), {"n": 3, "sizes": [1, 2]}) == {"n": 3, "sizes": (1, 2)}
    with pytest.raises(OverrideError, match="expected int"):
        typed_overrides(Cfg(), {"n": True})  # a bool is not an int here
    with pytest.raises(OverrideError, match="has no config"):
        typed_overrides(None, {"n": "1"}, where="plain")


class Configured(Experiment):
    slug = "configured"
    paper = Paper("Configured")
    claims = (Claim("c", "n is counted", "n", ">", 0.0),)
    seen: ClassVar[list] = []

    def config(self, quick: bool) -> Cfg:
        return Cfg(n=2) if quick else Cfg()

    def run_seed(self, seed, *, quick, progress):
        cfg = self.config(quick)
        return {"n": float(cfg.n), "steps": float(cfg.inner.steps)}

    def tables(self, per_seed, quick):
        return {"cfg": f"n={self.config(quick).n}"}


def test_overrides_reach_run_seed_tables_and_the_report_without_package_code():
    exp = Configured()
    report = exp.run(quick=True, seeds=2, overrides={"n": "9", "inner.steps": "4"})
    assert [m["n"] for m in report.per_seed] == [9.0, 9.0]
    assert report.per_seed[0]["steps"] == 4.0
    assert report.config["n"] == 9 and report.config["inner"] == {"steps": 4, "lr": 0.1}
    assert report.tables == {"cfg": "n=9"}
    assert report.record["overrides"] == {"n": 9, "inner.steps": 4}
    assert exp.config(False).n == 9 and exp.overrides == {"n": 9, "inner.steps": 4}  # kept for figures
    exp.configure(None)
    assert exp.config(True).n == 2 and exp.overrides == {}
    assert Configured().run(quick=True, seeds=1).per_seed == [{"n": 2.0, "steps": 10.0}]


def test_a_bad_override_fails_before_any_seed_runs():
    ran = []

    class Counting(Configured):
        def run_seed(self, seed, *, quick, progress):
            ran.append(seed)
            return super().run_seed(seed, quick=quick, progress=progress)

    with pytest.raises(OverrideError, match="unknown key 'x'"):
        Counting().run(quick=True, overrides={"x": "1"})
    with pytest.raises(OverrideError, match="Cfg rejects"):
        Counting().run(quick=True, overrides={"n": "0"})
    assert ran == []


def test_a_subclass_calling_super_config_applies_the_override_once():
    class Adjusting(Configured):
        def config(self, quick: bool) -> Cfg:
            from dataclasses import replace

            return replace(super().config(quick), name="adjusted")

    exp = Adjusting().configure({"n": "6", "name": "mine"})
    cfg = exp.config(True)
    assert cfg.n == 6 and cfg.name == "mine"  # the user's override wins over the subclass's adjustment
