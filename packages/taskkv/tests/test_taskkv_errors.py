"""A battery of invalid calls on every exported function: each gives a one-line error from the
package naming the argument (never a silent broadcast, a NaN meaning "no fallback", or an
AttributeError from deep inside)."""

import numpy as np
import pytest
import torch

import paperworks.taskkv as tk
from paperworks.taskkv.toymodel import tiny_llama

pytest.importorskip("transformers")

V = tk.Vocab(n_objects=5, n_locations=5, n_fillers=6)
CFG = tk.AgentTaskConfig(n_steps=10, n_errors=(1, 2), vocab=V)
T = CFG.context_len
OFF = CFG.offsets
MODEL = tiny_llama(V.size, hidden=16, layers=1, heads=2, seed=0)
K = torch.randn(2, 2, T, 8)
ATT = torch.softmax(torch.randn(2, 2, 4, T), -1)
CTX = torch.as_tensor(tk.generate_tasks(2, CFG, np.random.default_rng(0)).context)
Q = torch.full((2, 1), V.ACT)
ANS = torch.tensor([V.obj0, V.obj0 + 1])
NAN_K = K.clone()
NAN_K[0, 0, 0, 0] = float("nan")


def _feats():
    return tk.step_features(K, ATT, OFF, 1)


CASES = [
    # retention
    ("check_budget bool", lambda: tk.check_budget(True), TypeError, "budget"),
    ("check_budget nan", lambda: tk.check_budget(float("nan")), ValueError, "budget"),
    ("n_keep_for seq 0", lambda: tk.n_keep_for(0.2, 0), ValueError, "seq_len"),
    ("check_offsets not covering", lambda: tk.check_offsets([0, 4, 7], 8), ValueError, "offsets"),
    ("check_offsets not from 0", lambda: tk.check_offsets([2, 4, 8], 8), ValueError, "offsets"),
    ("check_offsets strings", lambda: tk.check_offsets(["0", "8"], 8), TypeError, "offsets"),
    ("step_layout rows vs batch", lambda: tk.step_layout([OFF, OFF], T, batch=3), ValueError, "offsets"),
    ("contiguous_scores 0", lambda: tk.contiguous_scores(0), ValueError, "n_steps"),
    ("select_tokens list scores", lambda: tk.select_tokens("abc", OFF, 4), TypeError, "step_scores"),
    (
        "select_tokens NaN",
        lambda: tk.select_tokens(torch.full((10,), float("nan")), OFF, 4),
        ValueError,
        "step_scores",
    ),
    ("select_tokens n_keep 0", lambda: tk.select_tokens(torch.zeros(10), OFF, 0), ValueError, "n_keep"),
    ("select_tokens float n_keep", lambda: tk.select_tokens(torch.zeros(10), OFF, 4.0), TypeError, "n_keep"),
    ("select_tokens steps", lambda: tk.select_tokens(torch.zeros(9), OFF, 4), ValueError, "step_scores"),
    (
        "select_tokens pin range",
        lambda: tk.select_tokens(torch.zeros(10), OFF, 8, (12,)),
        ValueError,
        "pinned",
    ),
    ("select_tokens pin type", lambda: tk.select_tokens(torch.zeros(10), OFF, 8, 1), TypeError, "pinned"),
    (
        "token_priority shape",
        lambda: tk.token_priority(torch.zeros(3, 10), tk.step_layout(OFF, T, 2)),
        ValueError,
        "step_scores",
    ),
    (
        "gather_tokens 3-D",
        lambda: tk.gather_tokens(K[0], torch.zeros(2, 3, dtype=torch.long)),
        ValueError,
        "x",
    ),
    ("gather_tokens out of range", lambda: tk.gather_tokens(K, torch.full((2, 3), T)), ValueError, "kept"),
    ("gather_tokens float idx", lambda: tk.gather_tokens(K, torch.zeros(2, 3)), TypeError, "kept"),
    ("retain_kv NaN keys", lambda: tk.retain_kv(NAN_K, NAN_K, OFF, 0.5, torch.zeros(10)), ValueError, "keys"),
    (
        "retain_kv score batch",
        lambda: tk.retain_kv([K], [K], OFF, 0.5, torch.zeros(3, 10)),
        ValueError,
        "step_scores",
    ),
    ("retain_kv dict", lambda: tk.retain_kv({"k": K}, [K], OFF, 0.5, torch.zeros(10)), TypeError, "keys"),
    # features, scorer, classifier
    ("step_features offsets from 4", lambda: tk.step_features(K, ATT, OFF + 4, 1), ValueError, "offsets"),
    ("step_features NaN keys", lambda: tk.step_features(NAN_K, ATT, OFF, 1), ValueError, "keys"),
    (
        "step_features negative attn",
        lambda: tk.step_features(K, -ATT, OFF, 1),
        ValueError,
        "window_attention",
    ),
    ("step_features int keys", lambda: tk.step_features(K.long(), ATT, OFF, 1), TypeError, "keys"),
    ("step_features seq", lambda: tk.step_features(K, ATT[..., :-1], OFF, 1), ValueError, "window_attention"),
    ("step_features instruction", lambda: tk.step_features(K, ATT, OFF, 10), ValueError, "instruction_step"),
    (
        "step_features intent shape",
        lambda: tk.step_features(K, ATT, OFF, 1, torch.zeros(2, 3)),
        ValueError,
        "intent_keys",
    ),
    ("scorer hidden 0", lambda: tk.ResidualStepScorer(hidden=0), ValueError, "hidden"),
    ("scorer ridge -1", lambda: tk.ResidualStepScorer(ridge=-1.0), ValueError, "ridge"),
    ("scorer lr str", lambda: tk.ResidualStepScorer(lr="fast"), TypeError, "lr"),
    ("scorer predict unfit", lambda: tk.ResidualStepScorer().predict(_feats()), RuntimeError, "fit"),
    (
        "scorer labels shape",
        lambda: tk.ResidualStepScorer().fit(_feats(), torch.zeros(2, 9)),
        ValueError,
        "labels",
    ),
    (
        "scorer labels NaN",
        lambda: tk.ResidualStepScorer().fit(_feats(), torch.full((2, 10), float("nan"))),
        ValueError,
        "labels",
    ),
    (
        "scorer constant labels",
        lambda: tk.ResidualStepScorer().fit(_feats(), torch.ones(2, 10)),
        ValueError,
        "labels",
    ),
    ("scorer features 2-D", lambda: tk.ResidualStepScorer.prior(torch.zeros(2, 10)), ValueError, "features"),
    (
        "scorer exclude range",
        lambda: tk.ResidualStepScorer().fit(_feats(), torch.randn(2, 10), (11,)),
        ValueError,
        "exclude_steps",
    ),
    ("score_entropy 1-D", lambda: tk.score_entropy(torch.zeros(5)), ValueError, "scores"),
    (
        "score_entropy one candidate",
        lambda: tk.score_entropy(torch.zeros(2, 3), torch.tensor([True, False, False])),
        ValueError,
        "candidates",
    ),
    (
        "score_entropy candidates shape",
        lambda: tk.score_entropy(torch.zeros(2, 3), torch.ones(4, dtype=torch.bool)),
        ValueError,
        "candidates",
    ),
    ("attention_entropy negative", lambda: tk.attention_entropy(-torch.ones(2, 3)), ValueError, "mass"),
    ("regime_auc one class", lambda: tk.regime_auc(np.zeros(4), np.zeros(4, bool)), ValueError, "positive"),
    ("regime_auc shapes", lambda: tk.regime_auc(np.zeros(4), np.zeros(3, bool)), ValueError, "positive"),
    ("classifier threshold", lambda: tk.RegimeClassifier(threshold=2.0), ValueError, "threshold"),
    (
        "classifier fit lengths",
        lambda: tk.RegimeClassifier().fit(np.zeros(3), np.zeros(2)),
        ValueError,
        "success_gain",
    ),
    (
        "classifier fit range",
        lambda: tk.RegimeClassifier().fit(np.full(3, 2.0), np.zeros(3)),
        ValueError,
        "signal",
    ),
    (
        "classifier fit NaN",
        lambda: tk.RegimeClassifier().fit(np.full(3, np.nan), np.zeros(3)),
        ValueError,
        "signal",
    ),
    ("classifier predict NaN", lambda: tk.RegimeClassifier().predict([np.nan]), ValueError, "signal"),
    # policy
    ("config regime_signal", lambda: tk.TaskKVConfig(regime_signal="vibes"), ValueError, "regime_signal"),
    ("config pin bool", lambda: tk.TaskKVConfig(pin_current=1), TypeError, "pin_current"),
    ("config window 0", lambda: tk.TaskKVConfig(window=0), ValueError, "window"),
    ("config temperature", lambda: tk.TaskKVConfig(temperature=0.0), ValueError, "temperature"),
    ("TaskKV config type", lambda: tk.TaskKV(config={"budget": 0.2}), TypeError, "config"),
    ("TaskKV scorer type", lambda: tk.TaskKV(scorer="mlp"), TypeError, "scorer"),
    (
        "compress negative attention",
        lambda: tk.TaskKV().compress([K], [K], [-ATT], OFF),
        ValueError,
        "window_attention",
    ),
    ("compress NaN keys", lambda: tk.TaskKV().compress([NAN_K], [K], [ATT], OFF), ValueError, "keys"),
    (
        "compress values seq",
        lambda: tk.TaskKV().compress([K], [K[:, :, :-1]], [ATT], OFF),
        ValueError,
        "values",
    ),
    (
        "compress layer count",
        lambda: tk.TaskKV().compress([K, K], [K, K], [ATT], OFF),
        ValueError,
        "window_attention",
    ),
    ("compress tensor not list", lambda: tk.TaskKV().compress(K, K, ATT, OFF), TypeError, "keys"),
    (
        "compress content keys",
        lambda: tk.TaskKV().compress([K], [K], [ATT], OFF, [K[:1]]),
        ValueError,
        "content_keys",
    ),
    (
        "decide one droppable step",
        lambda: tk.TaskKV().decide(tk.TaskKV().features([K[:, :, :12]], [ATT[..., :12]], [0, 4, 8, 12])),
        ValueError,
        "droppable",
    ),
    ("features 3-D", lambda: tk.TaskKV().decide(torch.zeros(2, 10, 5)), ValueError, "features"),
    # utility (the cases first)
    (
        "answer_logprob batch",
        lambda: tk.answer_logprob(torch.zeros(2, 3, 10), torch.tensor([1])),
        ValueError,
        "answer",
    ),
    (
        "answer_logprob vocab",
        lambda: tk.answer_logprob(torch.zeros(2, 3, 10), torch.tensor([1, 10])),
        ValueError,
        "answer",
    ),
    (
        "answer_logprob float answer",
        lambda: tk.answer_logprob(torch.zeros(2, 3, 10), torch.zeros(2)),
        TypeError,
        "answer",
    ),
    (
        "answer_logprob 2-D logits",
        lambda: tk.answer_logprob(torch.zeros(2, 10), torch.tensor([1, 2])),
        ValueError,
        "logits",
    ),
    ("labels answer[:1]", lambda: tk.step_utility_labels(MODEL, CTX, Q, ANS[:1], OFF), ValueError, "answer"),
    ("labels query batch", lambda: tk.step_utility_labels(MODEL, CTX, Q[:1], ANS, OFF), ValueError, "query"),
    (
        "labels float context",
        lambda: tk.step_utility_labels(MODEL, CTX.float(), Q, ANS, OFF),
        TypeError,
        "context",
    ),
    ("labels offsets", lambda: tk.step_utility_labels(MODEL, CTX, Q, ANS, [0, 4, 8]), ValueError, "offsets"),
    (
        "labels gate",
        lambda: tk.step_utility_labels(MODEL, CTX, Q, ANS, OFF, gate="saliency"),
        ValueError,
        "gate",
    ),
    (
        "loo per-row offsets",
        lambda: tk.leave_one_step_out(MODEL, CTX, Q, ANS, [OFF, OFF]),
        ValueError,
        "offsets",
    ),
    (
        "loo answer out of vocab",
        lambda: tk.leave_one_step_out(MODEL, CTX, Q, ANS + 100, OFF),
        ValueError,
        "answer",
    ),
    ("prefill 1-D", lambda: tk.prefill(MODEL, CTX[0]), ValueError, "context"),
    (
        "query_logits bias shape",
        lambda: tk.query_logits(
            MODEL, tk.cache_layers(tk.prefill(MODEL, CTX)), Q, T, key_bias=torch.zeros(2, 3)
        ),
        ValueError,
        "key_bias",
    ),
    (
        "query_logits context_len",
        lambda: tk.query_logits(MODEL, tk.cache_layers(tk.prefill(MODEL, CTX)), Q, 3),
        ValueError,
        "context_len",
    ),
    ("query_logits layers", lambda: tk.query_logits(MODEL, [K], Q, T), TypeError, "layers"),
    ("cache_layers", lambda: tk.cache_layers([K]), TypeError, "cache"),
    # rope, attention, stream, data
    (
        "unrotate_keys cos shape",
        lambda: tk.unrotate_keys(K, torch.zeros(1, T, 4), torch.zeros(1, T, 4)),
        ValueError,
        "cos",
    ),
    ("content_keys tensor", lambda: tk.content_keys(MODEL, K), TypeError, "keys"),
    (
        "window_attention window",
        lambda: tk.window_attention(MODEL.model.layers[0].self_attn, torch.zeros(2, T, 16), K, 0, None),
        ValueError,
        "window",
    ),
    ("stream policy", lambda: tk.TaskKVStream(MODEL, "taskkv", 8), TypeError, "policy"),
    ("stream query first", lambda: tk.TaskKVStream(MODEL, tk.TaskKV(), 8).query(Q), RuntimeError, "append"),
    ("generate n 0", lambda: tk.generate_tasks(0, CFG, np.random.default_rng(0)), ValueError, "n"),
    ("task config step_len", lambda: tk.AgentTaskConfig(step_len=3), ValueError, "step_len"),
    ("task config dense", lambda: tk.AgentTaskConfig(dense_fraction=1.5), ValueError, "dense_fraction"),
]


@pytest.mark.parametrize(("call", "exc", "name"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_call_gives_a_named_error(call, exc, name):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    assert name in msg and "\n" not in msg.strip()
    assert (
        type(info.value).__module__ == "builtins"
    )  # TypeError/ValueError/RuntimeError, not library internals


def test_battery_covers_every_exported_function():
    named = " ".join(c[0] for c in CASES)
    covered = {
        "check_budget",
        "n_keep_for",
        "check_offsets",
        "step_layout",
        "contiguous_scores",
        "select_tokens",
        "token_priority",
        "gather_tokens",
        "retain_kv",
        "step_features",
        "score_entropy",
        "attention_entropy",
        "regime_auc",
        "answer_logprob",
        "prefill",
        "query_logits",
        "cache_layers",
        "unrotate_keys",
        "content_keys",
        "window_attention",
    }
    aliases = {
        "labels": "step_utility_labels",
        "loo": "leave_one_step_out",
        "generate": "generate_tasks",
        "scorer": "ResidualStepScorer",
        "classifier": "RegimeClassifier",
        "config": "TaskKVConfig",
        "compress": "TaskKV",
        "stream": "TaskKVStream",
        "task config": "AgentTaskConfig",
    }
    functions = {n for n in tk.__all__ if callable(getattr(tk, n)) and not n.isupper()}
    seen = {n for n in covered if n in named} | set(aliases.values())
    seen |= {
        "TaskKV",
        "TaskKVPress",
        "StepLayout",
        "AgentTasks",
        "Vocab",
        "step_offsets_from_chat",
        "rope_cos_sin",
    }
    # TaskKVPress: test_taskkv_press; step_offsets_from_chat: test_taskkv_stream; rope_cos_sin: content_keys
    assert functions <= seen, sorted(functions - seen)
