import numpy as np
import pytest
from scipy import stats

from paperworks.tg_replay import PrioritizedSampler, RingBuffer, SumTree, TruncatedGeometricSampler


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


def test_buffer_bad_input():
    buf = RingBuffer(10, (2,))
    with pytest.raises(ValueError, match="empty buffer"):
        buf.sample(4)
    with pytest.raises(ValueError, match="obs: expected shape"):
        buf.add(np.zeros((3, 3)), np.zeros(3), np.zeros(3), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="reward: expected 3 rows"):
        buf.add(np.zeros((3, 2)), np.zeros(3), np.zeros(2), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        buf.add(np.full((1, 2), np.nan), np.zeros(1), np.zeros(1), np.zeros((1, 2)), np.zeros(1))
    buf.add(np.zeros((3, 2)), np.zeros(3), np.zeros(3), np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="without replacement"):
        buf.sample(4, replace=False)
    with pytest.raises(ValueError, match="capacity"):
        RingBuffer(0, (2,))
    with pytest.raises(ValueError, match="PrioritizedSampler capacity"):
        RingBuffer(10, (2,), sampler=PrioritizedSampler(11))


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
