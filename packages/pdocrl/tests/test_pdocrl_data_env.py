"""Data sets: counts, DSRL files, concentrability, validation; the gymnasium environment."""

from __future__ import annotations

import numpy as np
import pytest

from paperworks.pdocrl import (
    OfflineDataset,
    collect_dataset,
    concentrability,
    garnet_cmdp,
    load_dsrl_npz,
    partial_coverage_behaviour,
    save_dsrl_npz,
    solve_lp,
)


@pytest.fixture(scope="module")
def garnet():
    m = garnet_cmdp(10, 3, rng=0)
    lp = solve_lp(m)
    return m, lp, partial_coverage_behaviour(lp.policy, noise=0.3, rng=0)


def test_counts_estimate_the_model(garnet):
    m, _, mu = garnet
    data = collect_dataset(m, mu, 60_000, rng=0, outcomes="mean")
    c = data.counts(10, 3)
    assert c.n_sa.sum() == 60_000
    np.testing.assert_allclose(c.mu, m.occupancy(mu), atol=0.01)
    seen = c.n_sa > 2000
    np.testing.assert_allclose(c.transitions[seen], m.transitions[seen], atol=0.05)
    np.testing.assert_allclose(c.reward[c.supported], m.reward[c.supported])
    bern = collect_dataset(m, mu, 60_000, rng=0).counts(10, 3)
    assert set(np.unique(collect_dataset(m, mu, 100, rng=1).rewards)) <= {0.0, 1.0}
    np.testing.assert_allclose(bern.reward[seen], m.reward[seen], atol=0.05)


def test_partial_coverage_covers_the_optimal_policy_only(garnet):
    m, lp, mu = garnet
    assert np.isfinite(concentrability(m, lp.policy, mu))
    assert (mu == 0).any()  # some pairs are never taken
    outside = np.where(mu == 0, 1.0, 0.0)
    outside[outside.sum(1) == 0] = 1.0
    outside /= outside.sum(1, keepdims=True)
    assert concentrability(m, outside, mu) == np.inf


def test_dsrl_round_trip_and_one_hot_observations(tmp_path, garnet):
    m, _, mu = garnet
    data = collect_dataset(m, mu, 50, rng=3)
    path = save_dsrl_npz(data, tmp_path / "d.npz")
    back = load_dsrl_npz(path)
    for f in ("observations", "actions", "rewards", "costs", "next_observations", "terminals", "timeouts"):
        np.testing.assert_array_equal(getattr(back, f), getattr(data, f))
    eye = np.eye(10)
    np.savez(
        tmp_path / "onehot.npz",
        observations=eye[data.observations],
        actions=data.actions.astype(float),
        rewards=data.rewards,
        costs=data.costs[:, 0],
        next_observations=eye[data.next_observations],
        terminals=data.terminals,
        timeouts=data.timeouts,
    )
    hot = load_dsrl_npz(tmp_path / "onehot.npz")
    np.testing.assert_array_equal(hot.observations, data.observations)
    assert hot.costs.shape == (50, 1)
    np.savez(tmp_path / "bad.npz", observations=data.observations)
    with pytest.raises(ValueError, match="lacks the DSRL arrays"):
        load_dsrl_npz(tmp_path / "bad.npz")
    with pytest.raises(FileNotFoundError, match="path"):
        load_dsrl_npz(tmp_path / "missing.npz")


def test_dataset_rejects_bad_input(garnet):
    m, _, mu = garnet
    ok = collect_dataset(m, mu, 5, rng=0)
    kw = {
        f: getattr(ok, f)
        for f in ("observations", "actions", "rewards", "costs", "next_observations", "terminals", "timeouts")
    }
    with pytest.raises(ValueError, match="non-empty"):
        OfflineDataset(**{k: v[:0] for k, v in kw.items()})
    with pytest.raises(ValueError, match="actions"):
        OfflineDataset(**{**kw, "actions": kw["actions"][:3]})
    with pytest.raises(ValueError, match="rewards"):
        OfflineDataset(**{**kw, "rewards": np.full(5, np.nan)})
    with pytest.raises(TypeError, match="observations"):
        OfflineDataset(**{**kw, "observations": kw["observations"] + 0.5})
    with pytest.raises(ValueError, match="states"):
        ok.counts(1, 3)
    with pytest.raises(ValueError, match="outcomes"):
        collect_dataset(m, mu, 5, outcomes="gaussian")
    with pytest.raises(ValueError, match="n"):
        collect_dataset(m, mu, 0)


def test_gymnasium_env_passes_the_checker_and_reports_costs(garnet):
    gym = pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    from paperworks.pdocrl.env import CMDPEnv

    m, _, _ = garnet
    env = CMDPEnv(m, max_steps=20)
    check_env(env, skip_render_check=True)
    env.reset(seed=0)
    total_cost = 0.0
    for _t in range(20):
        _obs, _reward, terminated, truncated, info = env.step(int(env.action_space.sample()))
        assert isinstance(info["cost"], float) and 0.0 <= info["cost"] <= 1.0
        total_cost += info["cost"]
    assert truncated and not terminated and isinstance(env.observation_space, gym.spaces.Discrete)
    with pytest.raises(ValueError, match="action"):
        env.step(7)
