"""Side by side: PRISMIC's distilled encoder vs its consolidator at inference; our SASRec vs RecBole's.

1. Inference (the point of LLM-free inference): scoring all users with the distilled encoder vs running
   the query writer + consolidator per user and retrieving with the consolidated query. Latency of one
   user and throughput over all users; medians over interleaved repeats.
2. Training time per epoch of our SASRec (id-only, same sizes) vs RecBole's SASRec (install it only here,
   not as a package extra: ``pip install 'recbole>=1.2' 'setuptools<81'``; RecBole 1.2 pulls ray,
   which needs ``setuptools<81`` for ``pkg_resources``), on the same generated data, same training pairs, one
   thread, interleaved epochs. Skipped with a note when RecBole is not installed.

Writes the markdown table to ``benchmarks/results.md``. Run: ``python benchmarks/bench_prismic.py``.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from paperworks.core import atomic_write_text, torch_threads
from paperworks.prismic import (
    EncoderConfig,
    GRPOConfig,
    Prismic,
    SequentialRecommender,
    TemplateQueryWriter,
    generate_intent_data,
    leave_one_out,
    make_embedder,
)
from paperworks.prismic.experiments import DATASETS
from paperworks.prismic.ranking import ndcg_from_ranks, target_ranks

REPEATS = 7
ENC = EncoderConfig(n_layers=1, max_len=15, epochs=8, batch_size=128)  # as measured in results.md


def _timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def _ndcg(scores: torch.Tensor, targets: np.ndarray) -> float:
    return float(ndcg_from_ranks(target_ranks(scores, torch.as_tensor(targets - 1))).mean())


def inference_rows(data, hist, test) -> list[str]:
    emb = make_embedder("hash")
    writer = TemplateQueryWriter.for_generated(data.item_texts)
    model = Prismic(writer, emb, encoder=ENC, grpo=GRPOConfig(iterations=40), seed=0).fit(
        hist, data.item_texts
    )
    model.score(hist[:2]), model.score_consolidated(hist[:2])  # warm-up
    enc_all, con_all, enc_one, con_one = [], [], [], []
    for _ in range(REPEATS):  # interleaved
        enc_all.append(_timed(lambda: model.score(hist)))
        con_all.append(_timed(lambda: model.score_consolidated(hist)))
        enc_one.append(_timed(lambda: model.score(hist[:1])))
        con_one.append(_timed(lambda: model.score_consolidated(hist[:1])))
    n = len(hist)
    med = statistics.median
    q_enc, q_con = _ndcg(model.score(hist), test), _ndcg(model.score_consolidated(hist), test)
    return [
        f"| inference latency, 1 user (ms) | {1e3 * med(enc_one):.2f} | {1e3 * med(con_one):.2f} | "
        f"{med(enc_one) / med(con_one):.2f} |",
        f"| inference throughput, {n} users (users/s) | {n / med(enc_all):.0f} | {n / med(con_all):.0f} | "
        f"{med(con_all) / med(enc_all):.2f} |",
        f"| test NDCG@10 | {q_enc:.4f} | {q_con:.4f} | {q_enc / q_con:.2f} |",
    ]


def recbole_rows(data, hist) -> list[str]:
    # RecBole 1.2.1 still reads aliases that NumPy 2 removed (np.float_ in Config.compatibility_settings):
    # restore them for RecBole only; they are plain synonyms of the NumPy 2 names
    for old, new in (("float_", np.float64), ("complex_", np.complex128), ("unicode_", np.str_)):
        if old not in np.__dict__:
            setattr(np, old, new)
    try:
        from recbole.config import Config
        from recbole.data import create_dataset, data_preparation
        from recbole.model.sequential_recommender import SASRec
        from recbole.trainer import Trainer
    except ImportError as e:
        return [
            f"| training time per epoch (s) | n/a | RecBole not importable here: {type(e).__name__} | n/a |"
        ]
    tmp = Path(tempfile.mkdtemp(prefix="prismic-bench-"))
    (tmp / "bench").mkdir()
    lines = ["user_id:token\titem_id:token\ttimestamp:float"]
    for u, s in enumerate(data.sequences):
        lines += [f"u{u}\ti{i}\t{t}" for t, i in enumerate(s)]
    (tmp / "bench" / "bench.inter").write_text("\n".join(lines) + "\n")
    cfg = {
        "data_path": str(tmp),
        "checkpoint_dir": str(tmp / "ckpt"),
        "load_col": {"inter": ["user_id", "item_id", "timestamp"]},
        "MAX_ITEM_LIST_LENGTH": ENC.max_len,
        "hidden_size": ENC.dim,
        "inner_size": 2 * ENC.dim,
        "n_layers": ENC.n_layers,
        "n_heads": ENC.n_heads,
        "hidden_dropout_prob": ENC.dropout,
        "attn_dropout_prob": ENC.dropout,
        "loss_type": "CE",
        "train_neg_sample_args": None,
        "train_batch_size": ENC.batch_size,
        "learning_rate": ENC.lr,
        "epochs": 1,
        "eval_args": {"split": {"LS": "valid_and_test"}, "order": "TO", "mode": "full", "group_by": "user"},
        "metrics": ["NDCG", "Recall"],
        "topk": [10],
        "valid_metric": "NDCG@10",
        "device": "cpu",
        "use_gpu": False,
        "show_progress": False,
        "seed": 0,
        "reproducibility": True,
        "state": "ERROR",
    }
    config = Config(model="SASRec", dataset="bench", config_dict=cfg)
    dataset = create_dataset(config)
    train, _, test_loader = data_preparation(config, dataset)
    peer = SASRec(config, train.dataset)
    with contextlib.chdir(tmp):  # RecBole's trainer writes a log_tensorboard/ folder into the cwd
        trainer = Trainer(config, peer)
    ours_train = [s[:-2] for s in data.sequences]  # RecBole's LS split: train = all but the last 2 items
    text = make_embedder("hash").encode(list(data.item_texts))
    one_epoch = replace(ENC, epochs=1)
    ours_t, peer_t = [], []
    for epoch in range(ENC.epochs):  # interleaved, one epoch each
        ours_t.append(
            _timed(lambda: SequentialRecommender("sasrec", one_epoch, use_text=False).fit(ours_train, text))
        )
        peer_t.append(_timed(lambda e=epoch: trainer._train_epoch(train, e, show_progress=False)))
    peer_eval = trainer.evaluate(test_loader, load_best_model=False, show_progress=False)
    ours = SequentialRecommender("sasrec", ENC, use_text=False).fit(ours_train, text)
    test_hist = [s[:-1] for s in data.sequences]
    test_t = np.array([s[-1] for s in data.sequences])
    q_ours = _ndcg(ours.score(test_hist), test_t)
    q_peer = float(peer_eval["ndcg@10"])
    med = statistics.median
    pairs = sum(len(s) - 1 for s in ours_train)
    return [
        f"| training time per epoch, SASRec id-only, {pairs} (prefix, next) pairs (s) | "
        f"{med(ours_t):.3f} | {med(peer_t):.3f} | {med(ours_t) / med(peer_t):.2f} |",
        f"| SASRec test NDCG@10 after {ENC.epochs} epochs (own evaluators) | {q_ours:.4f} | {q_peer:.4f} | "
        f"{q_ours / max(q_peer, 1e-12):.2f} |",
    ]


def main() -> None:
    cfg = DATASETS["noisy"]
    data = generate_intent_data(cfg, 0)
    hist, test = leave_one_out(data)
    with torch_threads(1):
        rows = inference_rows(data, hist, test)
        rows += recbole_rows(data, hist)
    head = [
        f"Data: generated `noisy` set, {cfg.n_users} users, {data.n_items} items, hashed bag-of-words "
        f"embeddings, one CPU thread, medians over {REPEATS} interleaved repeats (training: "
        f"{ENC.epochs} interleaved epochs). Rows 1-3: ours = distilled encoder, peer = writer + "
        "consolidator at inference. Rows 4-5: ours = our SASRec, peer = RecBole's SASRec.",
        "",
        "| measure | ours | peer | ratio (ours / peer) |",
        "| --- | --- | --- | --- |",
    ]
    table = "\n".join(head + rows) + "\n"
    print(table)
    atomic_write_text(Path(__file__).with_name("results.md"), table)


if __name__ == "__main__":
    sys.exit(main())
