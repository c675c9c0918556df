import numpy as np
import pytest

from paperworks.toppo.tasks import (
    DEFAULT_TASKS,
    OBS_DIM,
    BatchedMultiTaskEnv,
    TaskSpec,
    normalised_return,
    random_policy_return,
)

gym = pytest.importorskip("gymnasium")
from paperworks.toppo.envs import make_gym_task  # noqa: E402

VARIANTS = (
    *DEFAULT_TASKS,
    TaskSpec("heavy_pendulum", "pendulum", 1.0, 200, params={"m": 1.4, "g": 9.0, "max_torque": 1.5}),
    TaskSpec("weak_car", "mountaincar", 1.0, 200, params={"power": 0.001}),
    TaskSpec("gymnasium_car", "mountaincar", 1.0, 200),  # gymnasium's own power, 0.0015
    TaskSpec("long_pole", "cartpole", 1.0, 200, params={"length": 1.0, "masspole": 0.3, "force_mag": 8.0}),
)


def _set_gym_state(env, spec, state):
    u = env.unwrapped
    u.state = state.astype(np.float32) if spec.kind == "mountaincar" else state.astype(np.float64).copy()


def _batch_state(b, spec):
    return {"cartpole": b.cart, "pendulum": b.pend, "mountaincar": b.car}[spec.kind][0]


@pytest.mark.parametrize("spec", VARIANTS, ids=lambda s: s.name)
def test_batched_dynamics_equal_gymnasium_step_by_step(spec):
    """Free-running trajectories with the same actions: observation, reward, termination and truncation
    agree with gymnasium's real environment at every step (state copied in at every reset)."""
    rng = np.random.default_rng(0)
    b = BatchedMultiTaskEnv([spec], 1, seed=1)
    env = make_gym_task(spec)
    obs_b = b.reset()
    env.reset(seed=0)
    _set_gym_state(env, spec, _batch_state(b, spec))
    steps = ends = truncs = 0
    for _ in range(600):
        a = rng.uniform(-1, 1, size=(1, 1)).astype(np.float32)
        if spec.kind == "mountaincar":  # pump in the direction of motion so that episodes reach the goal
            a = np.where(obs_b[:, 1:2] >= 0, 1.0, -1.0).astype(np.float32) * rng.uniform(0.8, 1.0)
        obs_g, r_g, term_g, trunc_g, _ = env.step(a[0])
        obs_b, r_b, term_b, trunc_b, info = b.step(a)
        steps += 1
        final = info["final_obs"][0, :OBS_DIM] if (term_b[0] or trunc_b[0]) else obs_b[0, :OBS_DIM]
        np.testing.assert_allclose(final, obs_g, rtol=1e-5, atol=1e-5)
        assert r_b[0] == pytest.approx(r_g, rel=1e-5, abs=1e-5)
        assert bool(term_b[0]) == term_g and bool(trunc_b[0]) == trunc_g
        if term_g or trunc_g:
            ends, truncs = ends + int(term_g), truncs + int(trunc_g)
            env.reset(seed=steps)
            _set_gym_state(env, spec, _batch_state(b, spec))
    if spec.kind == "pendulum":  # never terminates: three 200-step episodes end by truncation
        assert (ends, truncs) == (0, 3)
    else:  # the termination rule was exercised (pole falls, goal reached)
        assert ends > 0


def test_one_hot_and_padding():
    b = BatchedMultiTaskEnv(DEFAULT_TASKS, 3, seed=0)
    obs = b.reset()
    assert obs.shape == (15, OBS_DIM + 5)
    np.testing.assert_array_equal(obs[:, OBS_DIM:].argmax(1), b.task_ids)
    mc = b.task_ids == 4
    assert np.all(obs[mc, 2:OBS_DIM] == 0)


def test_random_references_fixed_before_the_run():
    for t in DEFAULT_TASKS:
        assert random_policy_return(t) == pytest.approx(t.r_random, abs=0.01 * abs(t.r_random) + 0.01)


def test_normalised_return_and_bad_input():
    r = np.array([t.r_ref for t in DEFAULT_TASKS])
    np.testing.assert_allclose(normalised_return(r, DEFAULT_TASKS), 1.0)
    np.testing.assert_allclose(normalised_return([t.r_random for t in DEFAULT_TASKS], DEFAULT_TASKS), 0.0)
    with pytest.raises(ValueError, match="returns"):
        normalised_return([1.0], DEFAULT_TASKS)
    with pytest.raises(ValueError, match="kind"):
        TaskSpec("x", "acrobot")
    with pytest.raises(ValueError, match="params"):
        TaskSpec("x", "cartpole", params={"g": 1.0})
    with pytest.raises(ValueError, match="r_ref"):
        TaskSpec("x", "cartpole", r_random=1.0, r_ref=1.0)
    b = BatchedMultiTaskEnv(DEFAULT_TASKS, 2, seed=0)
    b.reset()
    with pytest.raises(ValueError, match="actions"):
        b.step(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="actions"):
        b.step(np.full((10, 1), np.nan))
    with pytest.raises(ValueError, match="tasks"):
        BatchedMultiTaskEnv([], 2)
