"""The real gymnasium environment (env checker, a policy episode) and the pandas long-table loader."""

from __future__ import annotations

import numpy as np
import pytest

import paperworks.hidden_target_oio as oio

gym = pytest.importorskip("gymnasium")
pd = pytest.importorskip("pandas")


def _env(**kw):
    from paperworks.hidden_target_oio.env import InventoryEnv

    Y = oio.BoxBudget(0.0, 10.0, 12.0, n=3)
    return InventoryEnv(
        Y, oio.CorrelatedLognormal((3.0, 4.0, 5.0)), oio.NewsvendorLoss(), horizon=50, **kw
    ), Y


def test_inventory_env_passes_gymnasiums_env_checker():
    from gymnasium.utils.env_checker import check_env

    env, _ = _env()
    check_env(env, skip_render_check=True)
    assert isinstance(env.observation_space, gym.spaces.Box) and isinstance(env.action_space, gym.spaces.Box)


def test_a_policy_runs_an_episode_with_act_and_update_and_matches_simulate():
    env, Y = _env()
    loss = oio.NewsvendorLoss()
    pol = oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.2, Y.center()))
    x, _ = env.reset(seed=3)
    demand = env._path.copy()
    total, done = 0.0, False
    while not done:
        y = pol.act(x)
        x, reward, terminated, truncated, info = env.step(y)
        assert np.allclose(info["order_up_to"], y) and Y.contains(info["order_up_to"])
        pol.update(info["subgradient"])
        total -= reward
        done = terminated or truncated
    ref = oio.simulate({"h": oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.2, Y.center()))}, Y, loss, demand)["h"]
    assert total == pytest.approx(ref.total_loss[0])


def test_env_projects_infeasible_actions_and_checks_its_arguments():
    env, _ = _env()
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.full(3, 10.0))  # over the budget: projected
    assert info["order_up_to"].sum() == pytest.approx(12.0)
    with pytest.raises(ValueError, match="x0"):
        _env(x0=np.full(3, 9.0))
    with pytest.raises(ValueError, match="action"):
        env.step(np.zeros(2))


def test_long_table_loader_on_a_small_csv(tmp_path):
    from paperworks.hidden_target_oio.data import load_long_table

    path = tmp_path / "sales.csv"
    path.write_text(
        "date,item,quantity\n"
        "2024-01-01,apple,3\n2024-01-01,pear,1\n2024-01-01,apple,2\n"
        "2024-01-02,pear,4\n2024-01-04,apple,1\n"
    )
    table = load_long_table(path)
    assert table.items == ("apple", "pear")
    assert np.array_equal(table.quantities, [[5.0, 1.0], [0.0, 4.0], [1.0, 0.0]])
    filled = load_long_table(path, fill_dates=True)
    assert filled.quantities.shape == (4, 2) and filled.quantities[2].sum() == 0.0
    assert np.array_equal(table.process().sample(3), table.quantities)
    Y = oio.Box(0.0, 10.0, n=2)
    pol = oio.HiddenTargetPolicy(Y, oio.OGD(Y, 0.5))
    run = oio.simulate({"h": pol}, Y, oio.NewsvendorLoss(), table.quantities)["h"]
    assert run.losses.shape == (3, 1)


@pytest.mark.parametrize(
    "text, message",
    [
        ("date,item,quantity\n2024-01-01,a,-1\n", "negative"),
        ("date,item,quantity\n2024-01-01,a,\n", "missing"),
        ("date,item,qty\n2024-01-01,a,1\n", "missing column"),
        ("date,item,quantity\nnot-a-date,a,1\n", "date"),
    ],
)
def test_long_table_loader_refuses_bad_tables(tmp_path, text, message):
    from paperworks.hidden_target_oio.data import load_long_table

    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_long_table(path)
