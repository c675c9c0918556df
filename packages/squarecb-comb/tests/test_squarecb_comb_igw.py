"""Inverse-gap weighting: m = 1 against SquareCB's closed form, the m-subset rule's invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperworks.squarecb_comb import igw_marginals, inverse_gap_weighting, sample_subset


def _squarecb_closed_form(r: np.ndarray, gamma: float) -> np.ndarray:
    """Foster & Rakhlin (2020), Algorithm 1, written out arm by arm (a loop, no shared code)."""
    A = len(r)
    b = max(range(A), key=lambda a: (r[a], -a))
    p = [0.0] * A
    for a in range(A):
        if a != b:
            p[a] = 1.0 / (A + gamma * (r[b] - r[a]))
    p[b] = 1.0 - sum(p)
    return np.array(p)


@settings(max_examples=80, deadline=None)
@given(
    r=st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=40, unique=True),
    log_gamma=st.floats(-2, 5),
)
def test_m1_equals_squarecbs_closed_form(r: list[float], log_gamma: float) -> None:
    r = np.array(r)
    gamma = 10.0**log_gamma
    ref = _squarecb_closed_form(r, gamma)
    np.testing.assert_allclose(igw_marginals(r, 1, gamma), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(inverse_gap_weighting(r, gamma), ref, rtol=1e-12, atol=1e-15)


def test_m1_known_values() -> None:
    p = inverse_gap_weighting(np.array([0.1, 0.9, 0.5]), 10.0)
    np.testing.assert_allclose(p[[0, 2]], [1 / (3 + 8.0), 1 / (3 + 4.0)])
    assert p.sum() == pytest.approx(1.0) and np.argmax(p) == 1


@settings(max_examples=80, deadline=None)
@given(A=st.integers(1, 60), data=st.data(), log_gamma=st.floats(-2, 5), null_arm=st.booleans())
def test_m_subset_invariants(A: int, data: st.DataObject, log_gamma: float, null_arm: bool) -> None:
    m = data.draw(st.integers(1, A))
    r = np.array(data.draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=A, max_size=A)))
    q = igw_marginals(r, m, 10.0**log_gamma, null_arm=null_arm)
    assert q.shape == (A,) and np.all(q > 0) and np.all(q <= 1.0 + 1e-12)
    if null_arm:
        assert q.sum() <= m + 1e-9
    else:
        assert q.sum() == pytest.approx(m, rel=1e-12)
    lower = r[:, None] < r[None, :]  # monotone in the predicted reward (ties aside)
    assert np.all((q[:, None] <= q[None, :] + 1e-12) | ~lower)


def test_m_subset_closed_form_by_hand() -> None:
    r = np.array([0.9, 0.1, 0.7, 0.3, 0.5])  # greedy pair {0, 2}, weakest greedy 0.7
    m, gamma, A = 2, 5.0, 5
    q = igw_marginals(r, m, gamma)
    off = {1: 1 / (A / m + gamma * 0.6), 3: 1 / (A / m + gamma * 0.4), 4: 1 / (A / m + gamma * 0.2)}
    for i, v in off.items():
        assert q[i] == pytest.approx(v)
    assert q[0] == q[2] == pytest.approx(1 - sum(off.values()) / m)


def test_greedy_limit_and_full_set() -> None:
    r = np.array([0.3, 0.9, 0.1, 0.8])
    np.testing.assert_allclose(igw_marginals(r, 2, 1e12), [0, 1, 0, 1], atol=1e-10)
    np.testing.assert_array_equal(igw_marginals(r, 4, 3.0), np.ones(4))


def test_null_arm_leaves_slots_empty_for_negative_predictions() -> None:
    r = np.array([0.8, -0.5, -0.6, -0.9, 0.4])
    q = igw_marginals(r, 3, 1e6, null_arm=True)
    np.testing.assert_allclose(q, [1, 0, 0, 0, 1], atol=1e-5)  # two arms, one empty slot
    A, m, gamma = 5, 3, 4.0
    q = igw_marginals(r, m, gamma, null_arm=True)  # by hand: gaps to the empty slot's 0, A + m items
    off = 1.0 / ((A + m) / m + gamma * np.array([0.5, 0.6, 0.9]))
    np.testing.assert_allclose(q[[1, 2, 3]], off)
    np.testing.assert_allclose(q[[0, 4]], 1 - off.sum() / m)
    sizes = {sample_subset(q, np.random.default_rng(s)).size for s in range(50)}
    assert sizes <= {2, 3}
    # with positive predictions the null arms are never greedy: every slot filled but for exploration
    pos = np.abs(r) + 0.1
    assert igw_marginals(pos, 3, 1e6, null_arm=True).sum() == pytest.approx(3, abs=1e-4)
    q = igw_marginals(pos, 3, 2.0, null_arm=True)
    r_ref = np.sort(pos)[-3]
    assert q.sum() == pytest.approx(3 - 3 / (8 / 3 + 2.0 * r_ref))  # the null arms' exploration mass


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: inverse_gap_weighting(np.ones(3), 0.0), ValueError, "gamma: expected a number > 0"),
        (lambda: inverse_gap_weighting(np.ones(3), -1.0), ValueError, "gamma: expected a number > 0"),
        (lambda: inverse_gap_weighting(np.ones(3), np.inf), ValueError, "gamma: expected a finite"),
        (lambda: inverse_gap_weighting(np.ones(3), np.nan), ValueError, "gamma: expected a finite"),
        (lambda: inverse_gap_weighting(np.ones(3), "1"), TypeError, "gamma: expected a real number"),
        (lambda: inverse_gap_weighting(np.ones((2, 2)), 1.0), ValueError, "scores: expected a 1-d"),
        (lambda: inverse_gap_weighting([], 1.0), (TypeError, ValueError), "scores: expected"),
        (lambda: igw_marginals(np.ones(3), 4, 1.0), ValueError, "m: expected an int >= 1 <= 3"),
        (lambda: igw_marginals(np.ones(3), True, 1.0), TypeError, "m: expected an int"),
        (lambda: igw_marginals(np.ones(3), 1, 1.0, null_arm=1), TypeError, "null_arm: expected a bool"),
        (lambda: igw_marginals([0.1, np.nan], 1, 1.0), ValueError, "scores: expected finite"),
    ],
)
def test_bad_input(call, error, match: str) -> None:
    with pytest.raises(error, match=match):
        call()
