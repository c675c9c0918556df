"""DS and bandit DS: search vs brute force, closed forms, the two-label reduction, witnesses, limits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.listcascade import (
    PseudoBox,
    SearchLimitError,
    all_functions,
    bandit_ds_dimension,
    brute_force_dimensions,
    ds_dimension,
    neighbour_counts,
    product_class,
    product_dimensions,
    random_class,
    random_subclass,
    search_space_size,
    two_label_class,
)


@st.composite
def tiny_classes(draw):
    d = draw(st.integers(1, 4))
    k = draw(st.integers(1, 3))
    rows = draw(st.lists(st.tuples(*[st.integers(0, k - 1)] * d), min_size=1, max_size=10, unique=True))
    return np.array(rows, dtype=np.int64).reshape(len(rows), d)


@settings(max_examples=60, deadline=None)
@given(tiny_classes())
def test_search_equals_brute_force_on_tiny_classes(h):
    ds, bds = ds_dimension(h), bandit_ds_dimension(h)
    assert (ds.value, bds.value) == brute_force_dimensions(h)
    assert ds.value <= bds.value
    ds.witness.check(h)
    bds.witness.check(h)
    assert bds.witness.dimension == bds.value and len(ds.witness.points) == ds.value


def test_brute_force_is_independent_on_a_hand_built_class():
    # the pseudo-cube {00, 01, 10, 11} on points 0 and 2 plus noise: DS 2; at point 1 three labels,
    # at point 0 only two: best box is all of {0,1} x {0,1,2} restricted to points 0, 1 -> 1 + 2 = 3
    h = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 0], [1, 1, 1], [0, 2, 0], [1, 2, 1]])
    assert brute_force_dimensions(h) == (2, 3)
    assert ds_dimension(h).value == 2 and bandit_ds_dimension(h).value == 3


@pytest.mark.parametrize("d,k", [(1, 2), (2, 2), (3, 3), (4, 4), (5, 3), (6, 2), (3, 6)])
def test_all_functions_closed_forms(d, k):
    h = all_functions(d, k)
    ds, bds = ds_dimension(h), bandit_ds_dimension(h)
    assert ds.value == d and bds.value == d * (k - 1)
    assert bds.witness.counts == (k - 1,) * d and bds.witness.n_patterns == k**d


def test_product_closed_forms_and_single_label_points():
    sets = [[0, 1, 2], [3], [0, 4], [1, 2, 3, 4]]
    h = product_class(sets)
    assert product_dimensions(sets) == (3, 2 + 0 + 1 + 3)
    assert ds_dimension(h).value == 3 and bandit_ds_dimension(h).value == 6
    assert 1 not in bandit_ds_dimension(h).witness.points  # a one-label point has no neighbours


@pytest.mark.parametrize("seed", range(6))
def test_two_labels_per_point_bandit_ds_equals_ds(seed):
    rng = np.random.default_rng(seed)
    base = two_label_class(6, 5, rng)
    assert ds_dimension(base).value == bandit_ds_dimension(base).value == 6
    sub = random_subclass(base, int(rng.integers(2, 40)), rng)
    assert ds_dimension(sub).value == bandit_ds_dimension(sub).value


@pytest.mark.parametrize("seed", range(4))
def test_bandit_ds_sandwich_on_random_classes(seed):
    rng = np.random.default_rng(seed)
    h = random_class(6, 4, 150, rng)
    ds, bds = ds_dimension(h).value, bandit_ds_dimension(h).value
    assert ds <= bds <= 3 * ds


def test_a_grid_with_a_thin_third_point():
    # points 0, 1 carry a full 3 x 3 grid (bandit DS 4 there); point 2 has 3 labels, but only below one
    # pattern of the grid, so no box uses it (the label-count bound alone would allow 4 + 2)
    grid = product_class([[0, 1, 2], [0, 1, 2]])
    h = np.concatenate([np.c_[grid, np.zeros(9, int)], [[0, 0, 1], [0, 0, 2]]])
    assert brute_force_dimensions(h) == (2, 4)
    assert ds_dimension(h).value == 2 and bandit_ds_dimension(h).value == 4


def test_neighbour_counts_pairwise():
    b = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0]])
    got = neighbour_counts(b)
    assert got.tolist() == [[2, 1], [1, 1], [2, 1], [1, 1], [2, 0]]


def test_witness_check_rejects_a_bad_box():
    h = all_functions(2, 2)
    good = bandit_ds_dimension(h).witness
    good.check(h)
    with pytest.raises(ValueError, match="neighbour counts"):
        PseudoBox((0, 1), (1, 1), np.array([[0, 0], [0, 1], [1, 0]])).check(h)
    with pytest.raises(ValueError, match="not in H"):
        PseudoBox((0,), (1,), np.array([[0], [5]])).check(h)


def test_degenerate_classes():
    one = np.array([[1, 2, 0]])
    assert ds_dimension(one).value == 0 and bandit_ds_dimension(one).value == 0
    assert bandit_ds_dimension(one).witness.points == ()


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="hypotheses: expected a non-empty"):
        bandit_ds_dimension(np.zeros((0, 3), dtype=int))
    with pytest.raises(TypeError, match="hypotheses"):
        ds_dimension([[0, 1], [1]])  # ragged
    with pytest.raises(TypeError, match="hypotheses: expected an integer array"):
        ds_dimension(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match=r"labels in 0\.\.1"):
        bandit_ds_dimension(np.array([[0, 2]]), n_labels=2)
    with pytest.raises(ValueError, match="negative label"):
        ds_dimension(np.array([[0, -1]]))


def test_search_limits_raise_instead_of_hanging():
    h = random_class(8, 6, 2000, np.random.default_rng(0))
    with pytest.raises(SearchLimitError, match="max_nodes=50"):
        bandit_ds_dimension(h, max_nodes=50)
    assert search_space_size(all_functions(3, 3)) == 27
    wide = np.random.default_rng(0).integers(0, 30, size=(40, 10))
    with pytest.raises(SearchLimitError, match="search space"):
        bandit_ds_dimension(wide)
    with pytest.raises(SearchLimitError, match="max_patterns"):
        brute_force_dimensions(all_functions(3, 3))
