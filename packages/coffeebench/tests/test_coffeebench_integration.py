import json
import warnings

import pytest

from paperworks.coffeebench import (
    EconomyConfig,
    OpenAIChatAgent,
    ReplayClient,
    openai_tools,
    read_jsonl,
    run_episode,
)
from paperworks.coffeebench.agents import reference_agents
from paperworks.coffeebench.runner import Episode


def test_pettingzoo_api_test_passes():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test

    from paperworks.coffeebench.pz_env import CoffeeBenchAEC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the agent-naming style hint
        api_test(CoffeeBenchAEC(days=3), num_cycles=300)


def test_aec_rewards_sum_to_net_income():
    pytest.importorskip("pettingzoo")
    import numpy as np

    from paperworks.coffeebench.pz_env import CoffeeBenchAEC

    env = CoffeeBenchAEC(days=4)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=5000):
        _obs, rew, term, trunc, info = env.last()
        total[agent] += rew
        mask = info["action_mask"]
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(mask))) if mask.any() else 0)
    e = env.episode.economy
    for a in env.possible_agents:
        assert abs(total[a] - e.firms[a].net_income) < 1e-6


def test_gymnasium_env_checker_passes_and_episode_runs():
    pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    from paperworks.coffeebench.gym_env import CoffeeBenchRoasterEnv

    env = CoffeeBenchRoasterEnv(days=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    env.reset(seed=0)
    done, steps, total = False, 0, 0.0
    while not done:
        _obs, r, term, trunc, info = env.step(5 if steps % 4 else 3)
        total += r
        steps += 1
        done = term or trunc
    assert abs(total - info["net_income"]) < 1e-6 and steps >= 3


def test_tools_are_openai_function_definitions():
    tools = openai_tools("roaster")
    names = {t["function"]["name"] for t in tools}
    assert "roast" in names and "produce_item" not in names and "set_retail_price" not in names
    for t in tools:
        assert t["type"] == "function"
        p = t["function"]["parameters"]
        assert p["type"] == "object" and p["additionalProperties"] is False
        assert set(p["required"]) <= set(p["properties"])
        json.dumps(t)
    with pytest.raises(ValueError, match="role"):
        openai_tools("barista")


def _reply(name=None, arguments=None, content=None, i=0):
    msg = {"role": "assistant", "content": content}
    if name is not None:
        msg["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ]
    return {"choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if name else "stop"}]}


def test_recorded_llm_transcript_replays(tmp_path):
    transcript = [
        _reply("view_trial_balance", {}, "Let me look at my books.", 0),
        _reply(
            "roast", {"green_item_id": "green_coffee_kg", "qty_kg": 5}, None, 1
        ),  # holds no green: an error
        _reply("post_listing", {"item_id": "roasted_coffee_kg", "qty": 20, "asking_price": 9.5}, None, 2),
        _reply(None, None, "Done for today.", 3),  # no tool call: the day ends
        _reply("wait_for_next_day", {}, None, 4),
    ]
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(transcript))
    client = ReplayClient(json.loads(path.read_text()))
    agent = OpenAIChatAgent(client, "recorded-model")
    log = tmp_path / "run.jsonl"
    res = run_episode({"roaster_A": agent}, config=EconomyConfig(days=2), seed=0, log_path=log)
    assert len(client.requests) == 5
    first = client.requests[0]
    assert first["model"] == "recorded-model" and first["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in first["tools"]} >= {"roast", "view_listings"}
    assert client.requests[1]["messages"][-1]["role"] == "tool"  # the tool result went back
    tool_results = [m for m in client.requests[2]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_results[-1]["content"])["status"] == "error"
    events = read_jsonl(log)
    mine = [e for e in events if e["event"] == "tool_call" and e["firm"] == "roaster_A"]
    assert [e["tool"] for e in mine] == [
        "view_trial_balance",
        "roast",
        "post_listing",
        "wait_for_next_day",
        "wait_for_next_day",
    ]
    assert [e["status"] for e in mine][:3] == ["ok", "error", "ok"]
    assert res.metrics["roaster_A"]["tool_errors"] == 1.0
    with pytest.raises(RuntimeError, match="past its end"):
        client.chat.completions.create(model="x", messages=[])
    with pytest.raises(ValueError, match="client"):
        OpenAIChatAgent(object(), "m")


def test_jsonl_log_is_written_atomically_and_views_render(tmp_path):
    log = tmp_path / "logs" / "run.jsonl"
    run_episode(config=EconomyConfig(days=5), seed=1, log_path=log)
    assert log.exists() and not (tmp_path / "logs" / "run.jsonl.partial").exists()
    events = read_jsonl(log)
    assert events[0]["event"] == "start" and events[-1]["event"] == "end"
    assert sum(e["event"] == "day_end" for e in events) == 5
    from paperworks.coffeebench.viewer import html_report, print_summary, summarize

    s = summarize(events)
    assert s["days"] == 5 and set(s["firms"]) == set(reference_agents())
    out = html_report(events, tmp_path / "run.html")
    text = out.read_text()
    assert text.startswith("<!doctype html>") and "<svg" in text and "roaster_A" in text
    pytest.importorskip("rich")
    from rich.console import Console

    console = Console(record=True, width=120)
    print_summary(events, console=console)
    assert "roaster_A" in console.export_text()


def test_episode_refuses_an_out_of_turn_action():
    ep = Episode(EconomyConfig(days=2), 0, reference_agents())
    who = ep.next_actor()
    other = next(f for f in reference_agents() if f != who)
    with pytest.raises(ValueError, match="turn"):
        ep.apply(other, None)


def test_a_failed_run_leaves_no_log(tmp_path):
    from paperworks.coffeebench import JsonlLog

    path = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="boom"), JsonlLog(path) as log:
        log({"event": "start"})
        raise RuntimeError("boom")
    assert not path.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: ReplayClient("not a list"), "responses"),
        (lambda: ReplayClient([{"choices": []}, "x"]), "responses"),
        (lambda: OpenAIChatAgent(ReplayClient([]), "m", temperature=-1.0), "temperature"),
        (lambda: Episode(EconomyConfig(days=2), 0, {"roaster_A": object()}), "agents"),
    ],
)
def test_public_constructors_name_the_bad_argument(make, fragment):
    with pytest.raises((TypeError, ValueError), match=fragment):
        make()
