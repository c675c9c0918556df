import warnings

import numpy as np
import pytest

from paperworks.tg_replay import TASKS, make_task


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_vector_tasks_step_like_gymnasium(env_id):
    import gymnasium as gym

    n = 4
    task = make_task(env_id, n, seed=3)
    task.reset()
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        envs = [gym.make(env_id).unwrapped for _ in range(n)]
        for e in envs:
            e.reset(seed=0)
    for e, s in zip(envs, task.state, strict=True):
        e.state = s.copy()
    compared = ended = 0
    for _ in range(300):
        if task.discrete:
            a = rng.integers(0, task.single_action_space.n, n)
        else:
            a = rng.uniform(-2, 2, (n, 1)).astype(np.float32)
        nxt, r, term, trunc, _ = task.step(a)
        for i, e in enumerate(envs):
            o, rr, te, _, _ = e.step(a[i])
            # Pendulum: gymnasium keeps the torque in float32, we in float64
            np.testing.assert_allclose(nxt[i], o, rtol=1e-5, atol=1e-5)
            assert rr == pytest.approx(r[i], rel=1e-5, abs=1e-5)
            assert te == term[i]
            compared += 1
            if term[i] or trunc[i]:
                ended += 1
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    e.reset(seed=0)
                e.state = task.state[i].copy()  # continue from our reset state
    assert compared == 300 * n
    if env_id == "CartPole-v1":
        assert ended > 0  # the comparison went through terminations and resets


def test_time_limit_truncates_and_streams_repeat_start_states():
    task = make_task("Pendulum-v1", 2, seed=1, streams=[0, 0])
    obs = task.reset()
    np.testing.assert_array_equal(obs[0], obs[1])  # one stream: the same start state
    for _ in range(199):
        _, _, term, trunc, _ = task.step(np.zeros((2, 1)))
        assert not trunc.any() and not term.any()
    _, _, _, trunc, obs = task.step(np.zeros((2, 1)))
    assert trunc.all()
    np.testing.assert_array_equal(obs[0], obs[1])  # the second episode starts alike too
    other = make_task("Pendulum-v1", 2, seed=1, streams=[0, 1]).reset()
    assert not np.array_equal(other[0], other[1])


def test_task_bad_input():
    with pytest.raises(ValueError, match="env_id"):
        make_task("MountainCar-v0", 2)
    task = make_task("CartPole-v1", 2)
    with pytest.raises(RuntimeError, match="reset"):
        task.step(np.zeros(2, int))
    task.reset()
    with pytest.raises(ValueError, match=r"action: expected ints in \[0, 2\)"):
        task.step(np.array([0, 2]))
    with pytest.raises(TypeError, match="action"):
        task.step(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="action: expected shape"):
        task.step(np.zeros(3, int))
    with pytest.raises(ValueError, match="streams"):
        make_task("CartPole-v1", 2, streams=[0])
    np.testing.assert_allclose(task.normalise(np.array([0.0, 250.0, 500.0])), [0.0, 0.5, 1.0])
