import numpy as np
import pytest
from scipy import stats

from paperworks.tg_replay import (
    MatchedWindowSampler,
    PrioritizedSampler,
    RingBuffer,
    SumTree,
    TruncatedGeometricSampler,
)


def _fill(buf, start, n):
    obs = np.arange(start, start + n, dtype=np.float32)[:, None]
    buf.add(obs, np.zeros(n, np.int64), np.arange(start, start + n, dtype=np.float32), obs + 1, np.zeros(n))


def test_ring_buffer_wraps_around_and_maps_ages():
    buf = RingBuffer(5, (1,))
    _fill(buf, 0, 3)
    assert len(buf) == 3 and buf.cursor == 3
    _fill(buf, 3, 4)  # 7 transitions into 5 slots: 0 and 1 are evicted
    assert len(buf) == 5 and buf.cursor == 2
    assert sorted(buf.reward.tolist()) == [2, 3, 4, 5, 6]
    # age 0 is the newest (6), age 4 the oldest kept (2)
    np.testing.assert_array_equal(buf.reward[buf.ages_to_slots(np.arange(5))], [6, 5, 4, 3, 2])
    np.testing.assert_array_equal(buf.slots_to_ages(buf.ages_to_slots(np.arange(5))), np.arange(5))
    _fill(buf, 7, 12)  # larger than the capacity at once: only the newest 5 survive
    np.testing.assert_array_equal(buf.reward[buf.ages_to_slots(np.arange(5))], [18, 17, 16, 15, 14])


def test_buffer_samples_recent_with_tg_and_batch_fields_agree():
    buf = RingBuffer(1000, (1,), sampler=TruncatedGeometricSampler(0.05), seed=0)
    _fill(buf, 0, 2500)
    batch = buf.sample(4096)
    np.testing.assert_array_equal(batch.reward, 2499 - batch.ages)
    np.testing.assert_array_equal(batch.next_obs[:, 0], batch.obs[:, 0] + 1)
    assert abs(batch.ages.mean() - TruncatedGeometricSampler(0.05).expected_recency(1000)) < 1.5


def test_buffer_seeded_determinism():
    def draw():
        buf = RingBuffer(100, (1,), sampler=TruncatedGeometricSampler(0.1), seed=5)
        _fill(buf, 0, 150)
        return buf.sample(32).slots

    np.testing.assert_array_equal(draw(), draw())


def test_continuous_actions_are_stored_as_floats():
    buf = RingBuffer(10, (3,), (2,), action_dtype=np.float32, seed=0)
    act = np.array([[0.25, -1.5], [2.0, 0.125]], np.float32)
    buf.add(np.zeros((2, 3)), act, np.zeros(2), np.zeros((2, 3)), np.array([False, True]))
    np.testing.assert_array_equal(buf.action[:2], act)
    np.testing.assert_array_equal(buf.done[:2], [0.0, 1.0])
    assert buf.sample(4).action.shape == (4, 2)


def test_buffer_bad_input_is_rejected_before_any_write():
    buf = RingBuffer(10, (2,))
    with pytest.raises(ValueError, match="empty buffer"):
        buf.sample(4)
    with pytest.raises(ValueError, match="obs: expected shape"):
        buf.add(np.zeros((3, 3)), np.zeros(3, int), np.zeros(3), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="reward: expected 3 rows"):
        buf.add(np.zeros((3, 2)), np.zeros(3, int), np.zeros(2), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="obs: expected finite"):
        buf.add(np.full((1, 2), np.nan), np.zeros(1, int), np.zeros(1), np.zeros((1, 2)), np.zeros(1))
    # float actions into the int storage used to be truncated silently
    with pytest.raises(TypeError, match="action: expected an integer array"):
        buf.add(np.zeros((1, 2)), np.array([1.7]), np.zeros(1), np.zeros((1, 2)), np.zeros(1))
    with pytest.raises(ValueError, match="done: expected 0/1"):
        buf.add(np.zeros((1, 2)), np.zeros(1, int), np.zeros(1), np.zeros((1, 2)), np.array([2]))
    assert len(buf) == 0 and buf.cursor == 0 and not buf.obs.any()
    buf.add(np.zeros((3, 2)), np.zeros(3, int), np.zeros(3), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="without replacement"):
        buf.sample(4, replace=False)
    with pytest.raises(ValueError, match="capacity"):
        RingBuffer(0, (2,))
    with pytest.raises(ValueError, match="PrioritizedSampler capacity"):
        RingBuffer(10, (2,), sampler=PrioritizedSampler(11))
    with pytest.raises(ValueError, match="ages: expected values in"):
        buf.ages_to_slots(np.array([3]))


@pytest.mark.parametrize("kind", ["tg", "matched_window", "per"])
def test_buffer_state_round_trip_continues_the_same_draws(kind, tmp_path):
    def make():
        tg = TruncatedGeometricSampler(0.05)
        sampler = {"tg": tg, "matched_window": MatchedWindowSampler(tg), "per": PrioritizedSampler(64)}[kind]
        return RingBuffer(64, (1,), sampler=sampler, seed=3)

    a = make()
    _fill(a, 0, 100)
    if kind == "per":
        slots, _, _ = a.sample_slots(16)
        a.update_priorities(slots, np.linspace(0.1, 3, 16))
    a.sample(8)  # advance the generator
    path = a.dumps(tmp_path / "buf.npz")
    state = a.state_dict()
    expected = [a.sample(16) for _ in range(3)]
    for restore in ("file", "dict"):
        b = make()
        _fill(b, 500, 7)  # different content and cursor, overwritten by the load
        if restore == "file":
            b.loads(path)
        else:
            b.load_state_dict(state)
        assert (b.cursor, len(b)) == (a.cursor, len(a))
        for want in expected:
            got = b.sample(16)
            np.testing.assert_array_equal(got.slots, want.slots)
            np.testing.assert_array_equal(got.reward, want.reward)
            np.testing.assert_array_equal(got.weights, want.weights)
    with pytest.raises(ValueError, match="capacity"):
        RingBuffer(65, (1,)).load_state_dict(state)


def test_sum_tree_matches_brute_force_prefix_sums():
    rng = np.random.default_rng(0)
    tree = SumTree(37)
    values = rng.random(37)
    tree.set(np.arange(37), values)
    tree.set(np.array([3, 3, 8]), np.array([0.0, 2.0, 0.5]))  # last write wins
    values[3], values[8] = 2.0, 0.5
    assert np.isclose(tree.total, values.sum())
    u = rng.random(1000) * values.sum()
    brute = np.searchsorted(np.cumsum(values), u, side="right")
    np.testing.assert_array_equal(tree.find(u), brute)


@pytest.mark.parametrize(
    ("index", "value", "msg"),
    [
        ([0], [np.nan], "value: expected finite"),
        ([0], [np.inf], "value: expected finite"),
        ([0], [-1.0], "value: expected non-negative"),
        ([0, 1], [1.0, 2.0, 3.0], "value: expected a scalar or shape"),
        ([16], [1.0], r"index: expected slot indices in \[0, 16\)"),
        ([-1], [1.0], r"index: expected slot indices in \[0, 16\)"),
        ([1.5], [1.0], "index: expected an integer array"),
    ],
)
def test_sum_tree_set_rejects_bad_input_and_writes_nothing(index, value, msg):
    tree = SumTree(16)
    tree.set(np.arange(16), np.ones(16))
    before = tree.tree.copy()
    with pytest.raises((ValueError, TypeError), match=msg):
        tree.set(np.array(index), np.array(value))
    np.testing.assert_array_equal(tree.tree, before)


@pytest.mark.parametrize("bad", [16.0, 17.5, -0.1, np.nan, np.inf])
def test_sum_tree_find_rejects_values_outside_the_mass(bad):
    tree = SumTree(16)
    tree.set(np.arange(16), np.ones(16))
    with pytest.raises(ValueError, match="values"):
        tree.find(np.array([1.0, bad]))
    with pytest.raises(ValueError, match="empty"):
        SumTree(4).find(np.array([0.0]))


@pytest.mark.parametrize("slot", [16, 17, -1, -16])
def test_per_update_priorities_checks_slot_range(slot):
    per = PrioritizedSampler(16)
    per.add(np.arange(16))
    per.update_priorities(np.arange(16), np.linspace(0.1, 2, 16))
    tree_before, pmf_before = per.tree.tree.copy(), per.pmf()
    with pytest.raises(ValueError, match=r"slots: expected slot indices in \[0, 16\)"):
        per.update_priorities(np.array([3, slot]), np.array([1.0, 1.0]))
    np.testing.assert_array_equal(per.tree.tree, tree_before)  # no partial write
    np.testing.assert_allclose(per.pmf().sum(), 1.0)
    np.testing.assert_array_equal(per.pmf(), pmf_before)
    slots, w = per.sample(64, rng=0)  # still samples
    assert slots.min() >= 0 and slots.max() < 16 and np.all(w > 0)


def test_per_empirical_distribution_and_weights():
    per = PrioritizedSampler(16, alpha=0.7, beta=0.5)
    buf = RingBuffer(16, (1,), sampler=per, seed=0)
    _fill(buf, 0, 12)
    td = np.linspace(0.1, 3.0, 12)
    buf.update_priorities(np.arange(12), td)
    pmf = per.pmf()
    assert np.all(pmf[12:] == 0)
    expected = (td + per.eps) ** 0.7
    np.testing.assert_allclose(pmf[:12], expected / expected.sum())
    slots, w = per.sample(200_000, rng=1)
    counts = np.bincount(slots, minlength=16)[:12]
    assert stats.chisquare(counts, pmf[:12] * slots.size).pvalue > 1e-3
    want = (12 * pmf[slots]) ** -0.5
    np.testing.assert_allclose(w, want / want.max())
    with pytest.raises(ValueError, match="empty buffer"):
        PrioritizedSampler(4).sample(2)
    with pytest.raises(ValueError, match="td_errors"):
        per.update_priorities(np.arange(2), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="td_errors: expected shape"):
        per.update_priorities(np.arange(3), np.array([1.0, 1.0]))
