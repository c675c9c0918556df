"""A battery of invalid calls on every exported function and class: each must raise a ``ValueError`` or
``TypeError`` from the package's own checks, with a message that names the offending argument."""

import numpy as np
import pytest
import torch

import paperworks.prismic as P

N, D = 12, 8
ITEMS = torch.nn.functional.normalize(torch.randn(N, D, generator=torch.Generator().manual_seed(0)), dim=-1)
Q = torch.nn.functional.normalize(torch.randn(3, 4, D, generator=torch.Generator().manual_seed(1)), dim=-1)
SEL = torch.ones(3, 2, 4)
TEXTS = tuple(f"red tent v{i}" for i in range(N))
HIST = [np.array([1, 2, 3]), np.array([4, 5, 6, 7])]
LOGP = -torch.rand(2, 3, 4)
ADV = torch.zeros(2, 3)
NAN = float("nan")


def _writer():
    return P.TemplateQueryWriter.for_generated([f"red tent {w}" for w in "abcdefghijkl"])


def _fitted_consolidator():
    q = Q
    return P.GRPOConsolidator(P.GRPOConfig(iterations=1, users_per_step=3), hidden=4).fit(
        q, torch.ones(3, 4), torch.ones(3, D), ITEMS, np.array([1, 2, 3])
    )


# (id, callable, exception, text the message must contain: the argument's name)
CASES = [
    # ranking
    ("ndcg k=0", lambda: P.ndcg_from_ranks(torch.tensor([0]), 0), ValueError, "k"),
    ("ndcg k=-1", lambda: P.ndcg_from_ranks(torch.tensor([0]), -1), ValueError, "k"),
    ("ndcg k=2.5", lambda: P.ndcg_from_ranks(torch.tensor([0]), 2.5), TypeError, "k"),
    ("ndcg k=True", lambda: P.ndcg_from_ranks(torch.tensor([0]), True), TypeError, "k"),
    ("ndcg nan rank", lambda: P.ndcg_from_ranks(torch.tensor([NAN])), ValueError, "ranks"),
    ("ndcg negative rank", lambda: P.ndcg_from_ranks(torch.tensor([-1])), ValueError, "ranks"),
    ("ndcg string ranks", lambda: P.ndcg_from_ranks(np.array(["a"])), TypeError, "ranks"),
    ("recall k=0", lambda: P.recall_from_ranks(torch.tensor([0]), 0), ValueError, "k"),
    ("recall k=2.5", lambda: P.recall_from_ranks(torch.tensor([0]), 2.5), TypeError, "k"),
    ("recall nan rank", lambda: P.recall_from_ranks(torch.tensor([NAN])), ValueError, "ranks"),
    ("recall negative rank", lambda: P.recall_from_ranks(torch.tensor([-3])), ValueError, "ranks"),
    (
        "ranks float targets",
        lambda: P.target_ranks(torch.zeros(1, 3), torch.tensor([1.7])),
        TypeError,
        "targets",
    ),
    (
        "ranks bool targets",
        lambda: P.target_ranks(torch.zeros(1, 3), torch.tensor([True])),
        TypeError,
        "targets",
    ),
    ("ranks target oob", lambda: P.target_ranks(torch.zeros(1, 3), torch.tensor([3])), ValueError, "targets"),
    (
        "ranks negative target",
        lambda: P.target_ranks(torch.zeros(1, 3), torch.tensor([-1])),
        ValueError,
        "targets",
    ),
    ("ranks shape", lambda: P.target_ranks(torch.zeros(2, 3), torch.tensor([1])), ValueError, "targets"),
    (
        "ranks nan scores",
        lambda: P.target_ranks(torch.full((1, 3), NAN), torch.tensor([1])),
        ValueError,
        "scores",
    ),
    (
        "ranks int scores",
        lambda: P.target_ranks(torch.zeros(1, 3, dtype=torch.int64), torch.tensor([1])),
        TypeError,
        "scores",
    ),
    ("ranks no items", lambda: P.target_ranks(torch.zeros(1, 0), torch.tensor([0])), ValueError, "targets"),
    (
        "ranks ties",
        lambda: P.target_ranks(torch.zeros(1, 3), torch.tensor([1]), ties="first"),
        ValueError,
        "ties",
    ),
    (
        "ranks exclude dtype",
        lambda: P.target_ranks(torch.zeros(1, 3), torch.tensor([1]), exclude=torch.zeros(1, 3)),
        ValueError,
        "exclude",
    ),
    (
        "ranks string scores",
        lambda: P.target_ranks(np.array([["a", "b"]]), torch.tensor([1])),
        TypeError,
        "scores",
    ),
    ("metrics k=0", lambda: P.RankingMetrics(0), ValueError, "k"),
    ("metrics k float", lambda: P.RankingMetrics(2.5), TypeError, "k"),
    ("metrics ties", lambda: P.RankingMetrics(ties="x"), ValueError, "ties"),
    ("metrics empty", lambda: P.RankingMetrics().compute(), ValueError, "RankingMetrics"),
    (
        "metrics update float targets",
        lambda: P.RankingMetrics().update(torch.zeros(1, 3), torch.tensor([0.5])),
        TypeError,
        "targets",
    ),
    ("history_mask n_items", lambda: P.history_mask(HIST, 0), ValueError, "n_items"),
    ("history_mask unknown id", lambda: P.history_mask(HIST, 5), ValueError, "histories[1]"),
    ("history_mask empty", lambda: P.history_mask([], 5), ValueError, "histories"),
    # consolidation
    ("consolidate selection 2", lambda: P.consolidate(Q, torch.full((3, 4), 2.0)), ValueError, "selection"),
    ("consolidate selection -1", lambda: P.consolidate(Q, -torch.ones(3, 4)), ValueError, "selection"),
    ("consolidate selection 0.5", lambda: P.consolidate(Q, torch.full((3, 4), 0.5)), ValueError, "selection"),
    ("consolidate selection shape", lambda: P.consolidate(Q, torch.ones(3, 5)), ValueError, "selection"),
    ("consolidate queries 2d", lambda: P.consolidate(Q[0], torch.ones(4, 8)), ValueError, "queries"),
    (
        "consolidate queries nan",
        lambda: P.consolidate(torch.full((3, 4, D), NAN), torch.ones(3, 4)),
        ValueError,
        "queries",
    ),
    (
        "consolidate string queries",
        lambda: P.consolidate(np.array([[["a"]]]), torch.ones(1, 1)),
        TypeError,
        "queries",
    ),
    (
        "reward selection 3",
        lambda: P.selection_reward(Q, SEL * 3, ITEMS, torch.tensor([0, 1, 2])),
        ValueError,
        "selection",
    ),
    (
        "reward target oob",
        lambda: P.selection_reward(Q, SEL, ITEMS, torch.tensor([0, 1, N])),
        ValueError,
        "targets",
    ),
    (
        "reward float targets",
        lambda: P.selection_reward(Q, SEL, ITEMS, torch.tensor([0.0, 1, 2])),
        TypeError,
        "targets",
    ),
    ("reward k=0", lambda: P.selection_reward(Q, SEL, ITEMS, torch.tensor([0, 1, 2]), k=0), ValueError, "k"),
    (
        "reward items width",
        lambda: P.selection_reward(Q, SEL, ITEMS[:, :3], torch.tensor([0, 1, 2])),
        ValueError,
        "items",
    ),
    (
        "reward items nan",
        lambda: P.selection_reward(Q, SEL, torch.full((N, D), NAN), torch.tensor([0, 1, 2])),
        ValueError,
        "items",
    ),
    (
        "reward selection 2d",
        lambda: P.selection_reward(Q, torch.ones(3, 4), ITEMS, torch.tensor([0, 1, 2])),
        ValueError,
        "selection",
    ),
    ("fragment items width", lambda: P.fragment_scores(Q, ITEMS[:, :3]), ValueError, "items"),
    ("fragment queries 2d", lambda: P.fragment_scores(Q[0], ITEMS), ValueError, "queries"),
    ("fragment nan", lambda: P.fragment_scores(Q * NAN, ITEMS), ValueError, "queries"),
    (
        "frag reward selection",
        lambda: P.reward_from_fragment_scores(P.fragment_scores(Q, ITEMS), SEL * 2, torch.tensor([0, 1, 2])),
        ValueError,
        "selection",
    ),
    (
        "frag reward targets",
        lambda: P.reward_from_fragment_scores(P.fragment_scores(Q, ITEMS), SEL, torch.tensor([0, 1])),
        ValueError,
        "targets",
    ),
    (
        "frag reward k",
        lambda: P.reward_from_fragment_scores(
            P.fragment_scores(Q, ITEMS), SEL, torch.tensor([0, 1, 2]), k=-1
        ),
        ValueError,
        "k",
    ),
    (
        "frag reward nan",
        lambda: P.reward_from_fragment_scores(torch.full((3, 4, N), NAN), SEL, torch.tensor([0, 1, 2])),
        ValueError,
        "frag",
    ),
    ("policy n_signals", lambda: P.SignalPolicy(0), ValueError, "n_signals"),
    ("policy hidden", lambda: P.SignalPolicy(3, hidden=2.5), TypeError, "hidden"),
    ("policy features", lambda: P.SignalPolicy(3)(torch.zeros(2, 4, 2)), ValueError, "features"),
    ("consolidator config", lambda: P.GRPOConsolidator({"iterations": 3}), TypeError, "config"),
    ("consolidator k", lambda: P.GRPOConsolidator(k=0), ValueError, "k"),
    ("consolidator seed", lambda: P.GRPOConsolidator(seed=-1), ValueError, "seed"),
    (
        "consolidator fit targets 0",
        lambda: P.GRPOConsolidator().fit(Q, torch.ones(3, 4), torch.ones(3, D), ITEMS, np.array([0, 1, 2])),
        ValueError,
        "targets",
    ),
    (
        "consolidator fit float targets",
        lambda: P.GRPOConsolidator().fit(Q, torch.ones(3, 4), torch.ones(3, D), ITEMS, np.array([1.5, 1, 2])),
        TypeError,
        "targets",
    ),
    (
        "consolidator fit support shape",
        lambda: P.GRPOConsolidator().fit(Q, torch.ones(3, 3), torch.ones(3, D), ITEMS, np.array([1, 1, 2])),
        ValueError,
        "support",
    ),
    (
        "consolidator fit context nan",
        lambda: P.GRPOConsolidator().fit(
            Q, torch.ones(3, 4), torch.full((3, D), NAN), ITEMS, np.array([1, 1, 2])
        ),
        ValueError,
        "context",
    ),
    (
        "consolidator fit items width",
        lambda: P.GRPOConsolidator().fit(
            Q, torch.ones(3, 4), torch.ones(3, D), ITEMS[:, :2], np.array([1, 1, 2])
        ),
        ValueError,
        "items",
    ),
    (
        "consolidator predict unfitted",
        lambda: P.GRPOConsolidator().predict(Q, torch.ones(3, 4), torch.ones(3, D)),
        RuntimeError,
        "fit",
    ),
    (
        "consolidator predict signals",
        lambda: _fitted_consolidator().predict(Q[:, :3], torch.ones(3, 3), torch.ones(3, D)),
        ValueError,
        "queries",
    ),
    # GRPO
    ("grpo beta -1", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, beta=-1.0), ValueError, "beta"),
    ("grpo beta nan", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, beta=NAN), ValueError, "beta"),
    ("grpo clip 0", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, clip_eps=0.0), ValueError, "clip_eps"),
    ("grpo clip 1", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, clip_eps=1.0), ValueError, "clip_eps"),
    ("grpo clip str", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, clip_eps="0.2"), TypeError, "clip_eps"),
    ("grpo positive logp", lambda: P.grpo_loss(-LOGP, LOGP, LOGP, ADV), ValueError, "logp"),
    ("grpo positive logp_old", lambda: P.grpo_loss(LOGP, -LOGP + 0.1, LOGP, ADV), ValueError, "logp_old"),
    ("grpo positive logp_ref", lambda: P.grpo_loss(LOGP, LOGP, -LOGP + 0.1, ADV), ValueError, "logp_ref"),
    ("grpo nan logp", lambda: P.grpo_loss(LOGP * NAN, LOGP, LOGP, ADV), ValueError, "logp"),
    ("grpo 2d logp", lambda: P.grpo_loss(LOGP[0], LOGP[0], LOGP[0], ADV), ValueError, "logp"),
    ("grpo logp_old shape", lambda: P.grpo_loss(LOGP, LOGP[:1], LOGP, ADV), ValueError, "logp_old"),
    ("grpo advantages shape", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV[:1]), ValueError, "advantages"),
    ("grpo advantages nan", lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV * NAN), ValueError, "advantages"),
    (
        "grpo mask 0.5",
        lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, mask=torch.full_like(LOGP, 0.5)),
        ValueError,
        "mask",
    ),
    (
        "grpo mask shape",
        lambda: P.grpo_loss(LOGP, LOGP, LOGP, ADV, mask=torch.ones(2, 3)),
        ValueError,
        "mask",
    ),
    (
        "grpo empty",
        lambda: P.grpo_loss(
            torch.zeros(0, 3, 4), torch.zeros(0, 3, 4), torch.zeros(0, 3, 4), torch.zeros(0, 3)
        ),
        ValueError,
        "logp",
    ),
    ("GRPOLoss beta", lambda: P.GRPOLoss(beta=-1.0), ValueError, "beta"),
    ("GRPOLoss clip", lambda: P.GRPOLoss(clip_eps=1.5), ValueError, "clip_eps"),
    ("GRPOLoss positive logp", lambda: P.GRPOLoss()(-LOGP, LOGP, LOGP, ADV), ValueError, "logp"),
    ("k3 positive", lambda: P.k3_kl(torch.tensor([0.5]), torch.tensor([-0.1])), ValueError, "logp"),
    ("k3 shape", lambda: P.k3_kl(torch.tensor([-0.5]), torch.tensor([-0.1, -0.2])), ValueError, "logp_ref"),
    ("k3 nan", lambda: P.k3_kl(torch.tensor([NAN]), torch.tensor([-0.1])), ValueError, "logp"),
    ("advantages 1 per group", lambda: P.group_advantages(torch.zeros(3, 1)), ValueError, "rewards"),
    ("advantages nan", lambda: P.group_advantages(torch.full((2, 3), NAN)), ValueError, "rewards"),
    ("advantages eps", lambda: P.group_advantages(torch.zeros(2, 3), eps=0.0), ValueError, "eps"),
    ("advantages empty", lambda: P.group_advantages(torch.zeros(0, 3)), ValueError, "rewards"),
    ("GRPOConfig group 1", lambda: P.GRPOConfig(group_size=1), ValueError, "group_size"),
    ("GRPOConfig beta", lambda: P.GRPOConfig(beta=-0.1), ValueError, "beta"),
    ("GRPOConfig beta str", lambda: P.GRPOConfig(beta="0.1"), TypeError, "beta"),
    ("GRPOConfig lr", lambda: P.GRPOConfig(lr=0.0), ValueError, "lr"),
    ("GRPOConfig iterations float", lambda: P.GRPOConfig(iterations=2.5), TypeError, "iterations"),
    # embeddings
    ("check_embeddings strings", lambda: P.check_embeddings(np.array([["a", "b"]]), "x"), TypeError, "x"),
    ("check_embeddings 1d", lambda: P.check_embeddings(np.zeros(3), "x"), ValueError, "x"),
    ("check_embeddings nan", lambda: P.check_embeddings(np.full((2, 2), NAN), "x"), ValueError, "x"),
    ("check_embeddings width", lambda: P.check_embeddings(np.zeros((2, 2)), "x", dim=3), ValueError, "x"),
    ("check_embeddings zero width", lambda: P.check_embeddings(np.zeros((2, 0)), "x"), ValueError, "x"),
    ("check_embeddings objects", lambda: P.check_embeddings(np.array([[None]]), "x"), TypeError, "x"),
    ("hash dim 1", lambda: P.HashedBowEmbedder(1), ValueError, "dim"),
    ("hash dim float", lambda: P.HashedBowEmbedder(2.5), TypeError, "dim"),
    ("hash empty text", lambda: P.HashedBowEmbedder(8).encode(["red tent", ""]), ValueError, "texts[1]"),
    ("hash blank text", lambda: P.HashedBowEmbedder(8).encode(["   "]), ValueError, "texts[0]"),
    ("hash one string", lambda: P.HashedBowEmbedder(8).encode("red tent"), TypeError, "texts"),
    ("hash non-string", lambda: P.HashedBowEmbedder(8).encode(["a", 3]), TypeError, "texts[1]"),
    ("hash None", lambda: P.HashedBowEmbedder(8).encode(None), TypeError, "texts"),
    ("minilm device", lambda: P.MiniLMEmbedder("tpu"), ValueError, "device"),
    ("make_embedder kind", lambda: P.make_embedder("bert"), ValueError, "kind"),
    # data
    (
        "generate seed -1",
        lambda: P.generate_intent_data(P.IntentDataConfig(n_users=5), -1),
        ValueError,
        "seed",
    ),
    (
        "generate seed float",
        lambda: P.generate_intent_data(P.IntentDataConfig(n_users=5), 1.5),
        TypeError,
        "seed",
    ),
    ("generate config", lambda: P.generate_intent_data({"n_users": 5}, 0), TypeError, "config"),
    ("config n_users 0", lambda: P.IntentDataConfig(n_users=0), ValueError, "n_users"),
    ("config noise 2", lambda: P.IntentDataConfig(noise=2.0), ValueError, "noise"),
    ("config taste str", lambda: P.IntentDataConfig(taste="0.5"), TypeError, "taste"),
    ("config max_len", lambda: P.IntentDataConfig(min_len=8, max_len=5), ValueError, "max_len"),
    ("config intents", lambda: P.IntentDataConfig(n_categories=2, n_intents=3), ValueError, "n_intents"),
    ("config categories", lambda: P.IntentDataConfig(n_categories=99), ValueError, "n_categories"),
    ("config session_mean", lambda: P.IntentDataConfig(session_mean=0.5), ValueError, "session_mean"),
    ("SequenceData empty texts", lambda: P.SequenceData((), (np.array([1]),)), ValueError, "item_texts"),
    ("SequenceData unknown id", lambda: P.SequenceData(("a",), (np.array([2]),)), ValueError, "sequences[0]"),
    (
        "SequenceData float ids",
        lambda: P.SequenceData(("a",), (np.array([1.0]),)),
        ValueError,
        "sequences[0]",
    ),
    ("leave_one_out type", lambda: P.leave_one_out(HIST), TypeError, "data"),
    (
        "leave_one_out short",
        lambda: P.leave_one_out(P.SequenceData(("a", "b"), (np.array([1, 2]),))),
        ValueError,
        "sequences",
    ),
    ("split type", lambda: P.train_valid_test(None), TypeError, "data"),
    (
        "split short",
        lambda: P.train_valid_test(P.SequenceData(("a", "b"), (np.array([1, 2, 1]),))),
        ValueError,
        "sequences",
    ),
    ("pad max_len 0", lambda: P.pad_histories(HIST, 0), ValueError, "max_len"),
    ("pad max_len float", lambda: P.pad_histories(HIST, 2.5), TypeError, "max_len"),
    ("pad n_items 0", lambda: P.pad_histories(HIST, 4, 0), ValueError, "n_items"),
    ("pad float ids", lambda: P.pad_histories([np.array([1.5])], 4), TypeError, "histories[0]"),
    ("pad id 0", lambda: P.pad_histories([np.array([0, 1])], 4), ValueError, "histories[0]"),
    ("pad empty history", lambda: P.pad_histories([np.array([], dtype=int)], 4), ValueError, "histories[0]"),
    ("pad 2d history", lambda: P.pad_histories([np.ones((2, 2), dtype=int)], 4), ValueError, "histories[0]"),
    ("pad empty batch", lambda: P.pad_histories([], 4), ValueError, "histories"),
    ("pad None", lambda: P.pad_histories(None, 4), TypeError, "histories"),
    ("recbole path type", lambda: P.read_recbole_atomic(None), TypeError, "inter_path"),
    ("recbole min_len", lambda: P.read_recbole_atomic("x.inter", min_len=0), ValueError, "min_len"),
    (
        "recbole missing",
        lambda: P.read_recbole_atomic("/nonexistent/x.inter"),
        FileNotFoundError,
        "inter_path",
    ),
    (
        "recbole text_fields str",
        lambda: P.read_recbole_atomic("x.inter", text_fields="title"),
        TypeError,
        "text_fields",
    ),
    # signals
    ("writer texts", lambda: P.TemplateQueryWriter(None, [], ["a"]), TypeError, "item_texts"),
    ("writer facets count", lambda: P.TemplateQueryWriter(["a b"], [], ["x"]), ValueError, "item_facets"),
    (
        "writer facet width",
        lambda: P.TemplateQueryWriter(["a b"], [("a",)], ["x", "y"]),
        ValueError,
        "item_facets",
    ),
    ("writer facet names", lambda: P.TemplateQueryWriter(["a b"], [("a",)], [3]), TypeError, "facet_names"),
    (
        "writer session_len",
        lambda: P.TemplateQueryWriter(["a b"], [("a",)], ["x"], session_len=0),
        ValueError,
        "session_len",
    ),
    ("writer histories 1d", lambda: _writer().write(np.array([1, 2])), ValueError, "histories"),
    ("writer histories float", lambda: _writer().write(np.array([[1.0, 2.0]])), TypeError, "histories"),
    ("writer histories unknown", lambda: _writer().write(np.array([[1, 13]])), ValueError, "histories"),
    ("writer histories empty row", lambda: _writer().write(np.array([[0, 0]])), ValueError, "histories"),
    ("writer histories right-padded", lambda: _writer().write(np.array([[1, 0]])), ValueError, "histories"),
    ("writer histories ragged", lambda: _writer().write([[1, 2], [3]]), ValueError, "histories"),
    (
        "candidates select unknown",
        lambda: _writer().write(np.array([[1, 2]])).select(["nope"]),
        ValueError,
        "signals",
    ),
    (
        "candidates select str",
        lambda: _writer().write(np.array([[1, 2]])).select("recent"),
        TypeError,
        "signals",
    ),
    (
        "candidates query user",
        lambda: _writer().write(np.array([[1, 2]])).query(5, "recent"),
        ValueError,
        "user",
    ),
    (
        "candidates query signal",
        lambda: _writer().write(np.array([[1, 2]])).query(0, "nope"),
        KeyError,
        "signal",
    ),
    ("candidates embed", lambda: _writer().write(np.array([[1, 2]])).embed("hash"), TypeError, "embedder"),
    (
        "candidates index",
        lambda: P.CandidateQueries(("a",), ("x",), np.array([[1]]), np.ones((1, 1))),
        ValueError,
        "index",
    ),
    (
        "candidates support",
        lambda: P.CandidateQueries(("a",), ("x",), np.array([[0]]), np.ones((2, 1))),
        ValueError,
        "support",
    ),
    (
        "signal_inputs writer",
        lambda: P.signal_inputs("w", P.HashedBowEmbedder(8), HIST, np.zeros((N, 8))),
        TypeError,
        "writer",
    ),
    (
        "signal_inputs embedder",
        lambda: P.signal_inputs(_writer(), None, HIST, np.zeros((N, 8))),
        TypeError,
        "embedder",
    ),
    (
        "signal_inputs item_emb",
        lambda: P.signal_inputs(_writer(), P.HashedBowEmbedder(8), HIST, np.zeros((N, 5))),
        ValueError,
        "item_emb",
    ),
    (
        "signal_inputs empty",
        lambda: P.signal_inputs(_writer(), P.HashedBowEmbedder(8), [], np.zeros((N, 8))),
        ValueError,
        "histories",
    ),
    # encoders
    ("EncoderConfig dim", lambda: P.EncoderConfig(dim=0), ValueError, "dim"),
    ("EncoderConfig heads", lambda: P.EncoderConfig(dim=10, n_heads=3), ValueError, "n_heads"),
    ("EncoderConfig dropout", lambda: P.EncoderConfig(dropout=1.0), ValueError, "dropout"),
    ("EncoderConfig mask_prob", lambda: P.EncoderConfig(mask_prob=0.0), ValueError, "mask_prob"),
    ("EncoderConfig lr", lambda: P.EncoderConfig(lr=-1e-3), ValueError, "lr"),
    (
        "EncoderConfig distill weight",
        lambda: P.EncoderConfig(distill_weight=-1.0),
        ValueError,
        "distill_weight",
    ),
    ("EncoderConfig distill loss", lambda: P.EncoderConfig(distill_loss="mse"), ValueError, "distill_loss"),
    (
        "EncoderConfig temperature",
        lambda: P.EncoderConfig(distill_temperature=0.0),
        ValueError,
        "distill_temperature",
    ),
    (
        "EncoderConfig perplexity",
        lambda: P.EncoderConfig(distill_perplexity=1.0),
        ValueError,
        "distill_perplexity",
    ),
    ("EncoderConfig item_ids", lambda: P.EncoderConfig(item_ids=1), TypeError, "item_ids"),
    ("EncoderConfig max_steps", lambda: P.EncoderConfig(max_steps=0), ValueError, "max_steps"),
    ("EncoderConfig epochs float", lambda: P.EncoderConfig(epochs=2.5), TypeError, "epochs"),
    (
        "encoder item_text nan",
        lambda: P.SequenceEncoder(torch.full((N, D), NAN), P.EncoderConfig()),
        ValueError,
        "item_text",
    ),
    (
        "encoder item_text 1d",
        lambda: P.SequenceEncoder(torch.zeros(N), P.EncoderConfig()),
        ValueError,
        "item_text",
    ),
    ("encoder config", lambda: P.SequenceEncoder(ITEMS, {"dim": 8}), TypeError, "config"),
    (
        "encoder no text no ids",
        lambda: P.SequenceEncoder(ITEMS, P.EncoderConfig(item_ids=False), use_text=False),
        ValueError,
        "item_ids",
    ),
    (
        "encoder seq float",
        lambda: P.SequenceEncoder(ITEMS, P.EncoderConfig(dim=8, n_layers=1))(torch.ones(1, 3)),
        ValueError,
        "seq",
    ),
    (
        "encoder seq unknown",
        lambda: P.SequenceEncoder(ITEMS, P.EncoderConfig(dim=8, n_layers=1))(torch.full((1, 3), 99)),
        ValueError,
        "seq",
    ),
    (
        "encoder seq too long",
        lambda: P.SequenceEncoder(ITEMS, P.EncoderConfig(dim=8, n_layers=1, max_len=2))(
            torch.ones(1, 3, dtype=torch.int64)
        ),
        ValueError,
        "seq",
    ),
    ("recommender kind", lambda: P.SequentialRecommender("gru4rec"), ValueError, "kind"),
    ("recommender config", lambda: P.SequentialRecommender(config={"dim": 8}), TypeError, "config"),
    ("recommender seed", lambda: P.SequentialRecommender(seed=-1), ValueError, "seed"),
    ("recommender device", lambda: P.SequentialRecommender(device="gpu0"), ValueError, "device"),
    ("recommender use_text", lambda: P.SequentialRecommender(use_text="yes"), TypeError, "use_text"),
    (
        "recommender fit item_text",
        lambda: P.SequentialRecommender().fit(HIST, np.full((N, D), NAN)),
        ValueError,
        "item_text",
    ),
    (
        "recommender fit short history",
        lambda: P.SequentialRecommender().fit([np.array([1])], ITEMS),
        ValueError,
        "histories",
    ),
    (
        "recommender fit distill shape",
        lambda: P.SequentialRecommender(config=P.EncoderConfig(max_len=4)).fit(
            HIST, ITEMS, torch.zeros(2, 3, D)
        ),
        ValueError,
        "distill_targets",
    ),
    (
        "recommender fit distill nan",
        lambda: P.SequentialRecommender(config=P.EncoderConfig(max_len=4)).fit(
            HIST, ITEMS, torch.full((2, 4, D), NAN)
        ),
        ValueError,
        "distill_targets",
    ),
    (
        "recommender fit distill bert",
        lambda: P.SequentialRecommender("bert4rec", P.EncoderConfig(max_len=4)).fit(
            HIST, ITEMS, torch.zeros(2, 4, D)
        ),
        ValueError,
        "distill_targets",
    ),
    (
        "recommender fit valid float",
        lambda: P.SequentialRecommender().fit(HIST, ITEMS, valid_targets=np.array([1.0, 2.0])),
        ValueError,
        "valid_targets",
    ),
    (
        "recommender fit valid unknown",
        lambda: P.SequentialRecommender().fit(HIST, ITEMS, valid_targets=np.array([1, N + 1])),
        ValueError,
        "valid_targets",
    ),
    ("recommender score unfitted", lambda: P.SequentialRecommender().score(HIST), RuntimeError, "fit"),
    (
        "teacher_temperature perplexity",
        lambda: P.teacher_temperature(torch.randn(4, N), 0.5),
        ValueError,
        "perplexity",
    ),
    (
        "teacher_temperature unreachable",
        lambda: P.teacher_temperature(torch.randn(4, N), 2.0 * N),
        ValueError,
        "perplexity",
    ),
    (
        "teacher_temperature nan",
        lambda: P.teacher_temperature(torch.full((4, N), NAN)),
        ValueError,
        "teacher_logits",
    ),
    ("Adam empty", lambda: P.Adam([]), ValueError, "params"),
    ("Adam lr", lambda: P.Adam([torch.zeros(1, requires_grad=True)], lr=0.0), ValueError, "lr"),
    # pipeline
    ("Prismic writer", lambda: P.Prismic("writer", P.HashedBowEmbedder(8)), TypeError, "writer"),
    ("Prismic embedder", lambda: P.Prismic(_writer(), "hash"), TypeError, "embedder"),
    ("Prismic grpo", lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8), grpo={}), TypeError, "grpo"),
    (
        "Prismic encoder",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8), encoder={}),
        TypeError,
        "encoder",
    ),
    (
        "Prismic signals str",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8), signals="recent"),
        TypeError,
        "signals",
    ),
    (
        "Prismic signals empty",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8), signals=[]),
        ValueError,
        "signals",
    ),
    ("Prismic seed", lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8), seed=-2), ValueError, "seed"),
    (
        "Prismic fit empty",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8)).fit([], TEXTS),
        ValueError,
        "histories",
    ),
    (
        "Prismic fit short",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8)).fit([np.array([1])], TEXTS),
        ValueError,
        "histories",
    ),
    (
        "Prismic fit scalar history",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8)).fit([5, 6], TEXTS),
        ValueError,
        "histories[0]",
    ),
    (
        "Prismic fit texts str",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8)).fit(HIST, "red tent"),
        TypeError,
        "item_texts",
    ),
    (
        "Prismic score unfitted",
        lambda: P.Prismic(_writer(), P.HashedBowEmbedder(8)).score(HIST),
        RuntimeError,
        "fit",
    ),
]


@pytest.mark.parametrize(("case", "call", "exc", "name"), CASES, ids=[c[0] for c in CASES])
def test_invalid_call_raises_a_named_error(case, call, exc, name):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    assert name in message, f"{case}: the message {message!r} does not name {name!r}"
    assert "\n" not in message.strip(), f"{case}: expected a one-line message, got {message!r}"


def test_every_public_callable_is_exercised():
    """Each name in __all__ that can be called wrongly appears in the battery (protocols excepted)."""
    import inspect

    source = inspect.getsource(inspect.getmodule(test_every_public_callable_is_exercised))
    protocols = {"QueryWriter", "TextEmbedder", "Split"}
    missing = [n for n in P.__all__ if n not in protocols and f"P.{n}" not in source and n != "Prismic"]
    assert not missing, missing
