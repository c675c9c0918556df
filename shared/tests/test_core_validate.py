"""Argument validators: accepted values come back normalised, bad ones raise one line naming the argument."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from paperworks.core import validate as v


def _one_line_naming(excinfo, name):
    msg = str(excinfo.value)
    assert msg.startswith(f"{name}: expected"), msg
    assert "\n" not in msg


# ---- ints ---------------------------------------------------------------------------------------


@given(st.integers(min_value=1, max_value=2**80))
def test_positive_int_accepts_positive_ints(n):
    assert v.positive_int(n, "n") == n and type(v.positive_int(n, "n")) is int


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16, np.uint64])
def test_int_checks_accept_numpy_integers_as_python_ints(dtype):
    out = v.positive_int(dtype(3), "n")
    assert out == 3 and type(out) is int
    assert v.nonnegative_int(dtype(0), "n") == 0


@pytest.mark.parametrize("bad", [3.0, "3", None, True, np.bool_(True), np.float64(2.0), np.array([3]), 1j])
@pytest.mark.parametrize("check", [v.positive_int, v.nonnegative_int])
def test_int_checks_reject_other_types(check, bad):
    with pytest.raises(TypeError) as e:
        check(bad, "n_steps")
    _one_line_naming(e, "n_steps")


@given(st.integers(max_value=0))
def test_positive_int_rejects_non_positive(n):
    with pytest.raises(ValueError, match=r"^k: expected an int >= 1, got -?\d+$"):
        v.positive_int(n, "k")


def test_nonnegative_int_bounds():
    assert v.nonnegative_int(0, "k") == 0
    with pytest.raises(ValueError, match="k: expected an int >= 0, got -1"):
        v.nonnegative_int(-1, "k")


@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-60, 60))
def test_int_in_range_is_inclusive_on_both_ends(lo, hi, x):
    if lo <= x <= hi:
        assert v.int_in_range(x, "x", lo, hi) == x
    else:
        with pytest.raises(ValueError, match=rf"^x: expected an int >= {lo} <= {hi}, got {x}$"):
            v.int_in_range(x, "x", lo, hi)


def test_int_in_range_open_ends():
    assert v.int_in_range(10**30, "x", 0) == 10**30
    assert v.int_in_range(-(10**30), "x", None, 0) == -(10**30)
    with pytest.raises(ValueError, match="x: expected an int <= 4, got 5"):
        v.int_in_range(5, "x", hi=4)


# ---- floats -------------------------------------------------------------------------------------


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**6), 10**6))
def test_finite_float_returns_the_same_number_as_float(x):
    out = v.finite_float(x, "x")
    assert type(out) is float and out == float(x)


@pytest.mark.parametrize("x", [np.float32(0.5), np.float16(0.5), np.int64(2), Fraction(1, 2)])
def test_finite_float_accepts_numpy_scalars_and_fractions(x):
    assert v.finite_float(x, "x") == float(x)


@pytest.mark.parametrize("bad", ["0.5", None, True, np.bool_(False), [0.5], np.array(0.5), 1j])
@pytest.mark.parametrize("check", [v.finite_float, v.positive_float, v.nonnegative_float, v.fraction])
def test_float_checks_reject_other_types(check, bad):
    with pytest.raises(TypeError) as e:
        check(bad, "lr")
    _one_line_naming(e, "lr")
    assert type(bad).__name__ in str(e.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float32("nan"), 10**400])
@pytest.mark.parametrize("check", [v.finite_float, v.positive_float, v.nonnegative_float, v.fraction])
def test_float_checks_reject_non_finite(check, bad):
    with pytest.raises(ValueError, match=r"^lr: expected a finite number, got (nan|inf|-inf)$"):
        check(bad, "lr")


def test_positive_and_nonnegative_float_bounds():
    assert v.positive_float(1e-300, "t") == 1e-300
    assert v.nonnegative_float(0, "t") == 0.0
    assert v.nonnegative_float(-0.0, "t") == 0.0
    with pytest.raises(ValueError, match=r"^t: expected a number > 0, got 0\.0$"):
        v.positive_float(0.0, "t")
    with pytest.raises(ValueError, match="t: expected a number >= 0, got -1e-09"):
        v.nonnegative_float(-1e-9, "t")


@given(st.floats(-2, 3), st.booleans(), st.booleans())
def test_fraction_matches_the_interval(x, open_low, open_high):
    inside = (x > 0 if open_low else x >= 0) and (x < 1 if open_high else x <= 1)
    if inside:
        assert v.fraction(x, "alpha", open_low=open_low, open_high=open_high) == x
    else:
        with pytest.raises(ValueError, match=r"^alpha: expected a number in [\[(]0, 1[\])], got "):
            v.fraction(x, "alpha", open_low=open_low, open_high=open_high)


def test_fraction_ends_and_message():
    assert (
        v.fraction(0, "a") == 0.0 and v.fraction(1, "a") == 1.0 and v.fraction(np.float32(0.25), "a") == 0.25
    )
    with pytest.raises(ValueError, match=r"^a: expected a number in \(0, 1\), got 1.0$"):
        v.fraction(1.0, "a", open_low=True, open_high=True)
    with pytest.raises(ValueError, match=r"^a: expected a number in \(0, 1\], got 0.0$"):
        v.fraction(0.0, "a", open_low=True)


# ---- choices and generators ---------------------------------------------------------------------


def test_one_of():
    assert v.one_of("mean", "reduction", ("mean", "sum")) == "mean"
    with pytest.raises(ValueError, match=r"^reduction: expected one of \['mean', 'sum'\], got 'Mean'$"):
        v.one_of("Mean", "reduction", ["mean", "sum"])
    with pytest.raises(
        TypeError, match=r"^reduction: expected one of \['mean', 'sum'\], got None \(NoneType\)$"
    ):
        v.one_of(None, "reduction", iter(["mean", "sum"]))


def test_as_generator_passes_a_generator_through():
    g = np.random.default_rng(3)
    assert v.as_generator(g) is g


@given(st.integers(0, 2**64))
def test_as_generator_seeds_agree_with_default_rng(seed):
    a = v.as_generator(seed).random(3)
    assert np.array_equal(a, np.random.default_rng(seed).random(3))
    assert np.array_equal(
        v.as_generator(np.uint32(seed % 2**32)).random(2), np.random.default_rng(seed % 2**32).random(2)
    )


def test_as_generator_none_gives_fresh_generators():
    a, b = v.as_generator(None), v.as_generator(None)
    assert isinstance(a, np.random.Generator) and a is not b
    assert not np.array_equal(a.random(4), b.random(4))


@pytest.mark.parametrize(
    "bad", [1.0, "0", True, np.bool_(True), np.random.RandomState(0), [0], np.random.PCG64(0)]
)
def test_as_generator_rejects_other_types(bad):
    with pytest.raises(TypeError) as e:
        v.as_generator(bad, "sampler_rng")
    _one_line_naming(e, "sampler_rng")
    assert "Generator, an int seed or None" in str(e.value)


def test_as_generator_rejects_negative_seeds():
    with pytest.raises(ValueError, match=r"^rng: expected a non-negative int seed, got -1$"):
        v.as_generator(-1)


# ---- arrays -------------------------------------------------------------------------------------


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3), elements=st.floats(-1e6, 1e6)))
def test_finite_array_accepts_finite_floats_unchanged(x):
    out = v.finite_array(x, "x")
    assert out.dtype == np.float64 and np.array_equal(out, x)


def test_finite_array_dtypes():
    assert v.finite_array([1, 2], "x").dtype == np.float64
    assert v.finite_array(np.ones(2, np.float32), "x").dtype == np.float32  # float32 stays float32
    assert v.finite_array(np.arange(3), "idx", dtype_kind="i").dtype.kind == "i"
    assert v.finite_array([True, False], "mask", dtype_kind=None).dtype == bool
    for bad, kind in [
        ([True], "f"),
        (["a"], "f"),
        ([1.5], "i"),
        ([1 + 1j], "f"),
        ([None], None),
        ("abc", "f"),
    ]:
        with pytest.raises(TypeError) as e:
            v.finite_array(bad, "x", dtype_kind=kind)
        _one_line_naming(e, "x")
    with pytest.raises(TypeError, match=r"^x: expected an array, got \[\[1\], \[1, 2\]\] \(list\)"):
        v.finite_array([[1], [1, 2]], "x")
    with pytest.raises(ValueError, match="dtype_kind: expected one of"):
        v.finite_array([1.0], "x", dtype_kind="c")


def test_finite_array_shapes_never_broadcast():
    x = np.zeros((4, 3))
    assert v.finite_array(x, "x", shape=(None, 3)) is x
    assert v.finite_array(x, "x", ndim=2) is x
    with pytest.raises(ValueError, match=r"^x: expected shape \(n, 2\), got \(4, 3\)$"):
        v.finite_array(x, "x", shape=(None, 2))
    with pytest.raises(ValueError, match=r"^x: expected shape \(3,\), got \(1, 3\)$"):
        v.finite_array(np.zeros((1, 3)), "x", shape=(3,))
    with pytest.raises(ValueError, match=r"^x: expected a 1-d array, got shape \(4, 3\)$"):
        v.finite_array(x, "x", ndim=1)
    with pytest.raises(ValueError, match=r"^x: expected a 2-d array, got shape \(\)$"):
        v.finite_array(1.0, "x", ndim=2)


def test_finite_array_empty_and_non_finite():
    with pytest.raises(ValueError, match=r"^batch: expected a non-empty array, got shape \(0, 3\)$"):
        v.finite_array(np.zeros((0, 3)), "batch", shape=(None, 3))
    assert v.finite_array(np.zeros((0, 3)), "batch", allow_empty=True).shape == (0, 3)
    with pytest.raises(ValueError, match=r"^x: expected finite values, found 2 NaN or inf$"):
        v.finite_array([1.0, np.nan, np.inf], "x")


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=st.floats(0.01, 1)))
def test_probability_vector_accepts_normalised_rows(w):
    p = w / w.sum(axis=1, keepdims=True)
    out = v.probability_vector(p, "p")
    assert np.allclose(out, p, atol=1e-12)
    assert np.allclose(out.sum(axis=1), 1, atol=1e-12)
    np.random.default_rng(0).choice(p.shape[1], p=out[0])  # strict consumers accept it
    q = v.probability_vector(p.T, "p", axis=0)
    assert np.allclose(q.sum(axis=0), 1, atol=1e-12)


def test_probability_vector_renormalises_within_atol():
    out = v.probability_vector([0.5, 0.5 + 5e-7], "p")
    assert out.dtype == np.float64 and abs(out.sum() - 1) < 1e-15


@pytest.mark.parametrize(
    ("bad", "kw", "pattern"),
    [
        ([0.5, 0.6], {}, r"summing to 1 along axis -1, off by 0.1"),
        ([[0.5, 0.5], [0.2, 0.2]], {}, r"summing to 1 along axis -1, off by 0.6"),
        ([[0.5, 0.5], [0.5, 0.5]], {"axis": 0}, None),
        ([1.5, -0.5], {}, r"expected probabilities in \[0, 1\], got min -0.5, max 1.5"),
        ([np.nan, 1.0], {}, r"finite values"),
        ([], {}, r"non-empty"),
        (0.5, {}, r"at least a 1-d array"),
        ([0.5, 0.5], {"axis": 1}, r"with an axis 1, got shape \(2,\)"),
    ],
)
def test_probability_vector_rejects(bad, kw, pattern):
    if pattern is None:  # columns of this matrix do sum to 1
        assert v.probability_vector(bad, "p", **kw).shape == (2, 2)
        return
    with pytest.raises(ValueError, match=pattern) as e:
        v.probability_vector(bad, "probs", **kw)
    _one_line_naming(e, "probs")


def test_probability_vector_rejects_wrong_types():
    with pytest.raises(TypeError, match=r"^p: expected a real-valued array, got dtype <U1$"):
        v.probability_vector(["a", "b"], "p")
