"""The generator's layout, seeds, chat-template goal spans."""

import numpy as np
import pytest

from paperworks.goal_accessibility import GoalRecallTask, crossover_turn, goal_spans_from_chat


def test_episode_layout_and_targets():
    task = GoalRecallTask(pressure=0.5)
    ep = task.sample(16, 6, np.random.default_rng(0))
    v = task.vocab
    assert ep.goal_span == (2, 24) and ep.goal_mask[:, 2:24].all() and ep.goal_mask.sum() == 16 * 22
    for b in range(16):
        facts = ep.tokens[b, 2:22]
        for t in range(6):
            k = ep.tokens[b, ep.query_pos[b, t]] - v.N_SPECIAL
            stated = [f for f in facts if (f - v.fact(0, 0)) // v.n_values == k]
            assert len(stated) == 1 and v.value((stated[0] - v.fact(0, 0)) % v.n_values) == ep.value[b, t]
            assert ep.tokens[b, ep.answer_pos[b, t] + 1] == ep.value[b, t]
            assert ep.tokens[b, ep.closer_pos[b, t] + 1] == ep.closer[b] == ep.tokens[b, 23]
            assert ep.turn_start[b, t] + ep.token_counts[b, t] == (
                ep.turn_start[b, t + 1] if t < 5 else ep.length[b]
            )
        assert len(set(ep.tokens[b, ep.query_pos[b]].tolist())) == 6  # no fact asked twice
    assert (
        ep.pressure.any()
        and (ep.pressure_closer[ep.pressure] != np.repeat(ep.closer[:, None], 6, 1)[ep.pressure]).all()
    )
    tgt = ep.loss_targets()
    assert (tgt >= 0).sum() == 16 * 6 * 2
    # crossover from token counts equals the first turn starting >= end - 1 + W
    W = 40
    for b in range(16):
        want = next((t for t in range(6) if ep.turn_start[b, t] >= 23 + W), 6)
        assert crossover_turn(ep.token_counts[b], ep.goal_span, W) == want


def test_same_seed_same_episodes():
    a = GoalRecallTask().sample(4, 3, 7)
    b = GoalRecallTask().sample(4, 3, 7)
    assert np.array_equal(a.tokens, b.tokens)


def test_bad_task_arguments():
    with pytest.raises(ValueError, match="n_turns"):
        GoalRecallTask().sample(2, 21)
    with pytest.raises(ValueError, match="max_filler"):
        GoalRecallTask(min_filler=5, max_filler=2)
    with pytest.raises(ValueError, match="pressure"):
        GoalRecallTask(pressure=1.5)


def test_chat_template_goal_spans(tiny_tokenizer):
    msgs = [
        {"role": "system", "content": "w1 w2 w3"},
        {"role": "user", "content": "w4"},
        {"role": "assistant", "content": "w5 w6"},
    ]
    spans = goal_spans_from_chat(tiny_tokenizer, msgs)
    ids = spans.input_ids.tolist()
    assert spans.spans[0] == (0, 5) and ids[:5] == tiny_tokenizer.convert_tokens_to_ids(
        ["<system>", "w1", "w2", "w3", "</s>"]
    )
    assert spans.goal_mask.tolist() == [True] * 5 + [False] * (len(ids) - 5)
    s, e = spans.spans[2]
    assert (spans.turn_rows[s:e] == 0).all() and (spans.turn_rows[:s] == -1).all()
    with pytest.raises(ValueError, match="goal role"):
        goal_spans_from_chat(tiny_tokenizer, msgs[1:])
