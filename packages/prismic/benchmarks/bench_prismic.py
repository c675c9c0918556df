"""Side by side on the core bench harness: PRISMIC's distilled encoder vs its consolidator at inference,
and our SASRec vs RecBole's (when RecBole is installed).

Data: the generated ``noisy`` set of the reproduction (its user count, 960 items), hashed bag-of-words
embeddings, one torch thread. Two questions, one :func:`paperworks.core.bench.compare` each (warm-up,
rounds interleaved in a seeded random order, medians, ratio ours/peer with a bootstrap interval):

1. *Inference* (the point of LLM-free inference): scoring users with the distilled encoder (ours,
   ``Prismic.score``) vs running the query writer + GRPO consolidator per user and retrieving with the
   consolidated query (``Prismic.score_consolidated``), for 1 user (latency) and for every user
   (throughput = users / median). Quality on the same users: test NDCG@10 of both.
2. *Training time per epoch* of our id-only SASRec vs RecBole's SASRec on the same generated data and
   the same (prefix, next item) pairs: ours builds and fits a fresh 1-epoch model per call, RecBole's
   trainer runs its next epoch (``Trainer._train_epoch``). Quality: test NDCG@10 of each after the same
   number of epochs, each by its own evaluator. RecBole is not in the workspace lock and not an extra
   of the package (its pins, old ray and ``setuptools<81``, would hold back the whole lock): install
   it only where you run this benchmark, ``pip install 'recbole>=1.2' 'setuptools<81'``. When it is
   not importable, this comparison is skipped and the results say so.

Run: ``uv run python packages/prismic/benchmarks/bench_prismic.py [--quick]`` or
``uv run paperworks bench prismic [--quick]``. The full run writes benchmarks/results.json and
results.md; ``--quick`` (1 user only, 3 rounds, 1 warm-up, a shorter fit) writes to a temporary
folder and prints.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from paperworks.core import torch_threads
from paperworks.core.bench import compare, publish
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

DATA = DATASETS["noisy"]
ENC = EncoderConfig(n_layers=1, max_len=15, epochs=8, batch_size=128)  # the benchmark's fixed budget
GRPO_ITERATIONS = 40
REPEATS = 20  # inference
TRAIN_REPEATS = 10  # training epochs (RecBole's epoch takes seconds; 10 is the harness's floor)
INSTALL_RECBOLE = "pip install 'recbole>=1.2' 'setuptools<81'"
NOTE_INFERENCE = (
    "Sides: `Prismic.score` (ours: the distilled SASRec-style encoder, no writer, no consolidator) and "
    "`Prismic.score_consolidated` (the template query writer + the GRPO consolidator per user, then "
    "retrieval with the consolidated query), both over the whole catalogue, under "
    "`torch.inference_mode`. Sizes: 1 user (latency) and every user of the set (throughput). Text "
    "embeddings are cached per process and warm in both sides (the warm-up calls fill the cache), so "
    "neither side pays for embedding texts. The consolidator here is a small policy over cached "
    "fragment embeddings, not an LLM: this measures our stand-in, not the LLM call the paper avoids."
)
NOTE_TRAINING = (
    "Sides: one training epoch of our id-only SASRec (a fresh model built and fitted for 1 epoch per "
    "call: model construction and padding the histories are inside the timing) and RecBole's SASRec "
    "(the trainer's next epoch, `Trainer._train_epoch`), same layers, width, heads, dropout, window, "
    "learning rate and batch size, on the same (prefix, next item) pairs (RecBole's leave-two-out "
    "training split). One call = one epoch (number = 1). Our epoch reads every position of a user's "
    "sequence in one pass; RecBole materialises each prefix as its own row, so an epoch is a different "
    "number of optimiser steps on each side (the training table gives both). 10 rounds (RecBole's epoch "
    "takes seconds; 3 in the quick run)."
)


def _ndcg(scores: torch.Tensor, targets: np.ndarray) -> float:
    return float(ndcg_from_ranks(target_ranks(scores, torch.as_tensor(targets - 1))).mean())


def _import_recbole():
    """RecBole's pieces, or the reason they are not importable."""
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
        return None, f"{type(e).__name__}: {e}"
    return (Config, create_dataset, data_preparation, SASRec, Trainer), None


def inference(data, hist, test, quick: bool, extra_note: str = "") -> tuple[object, str]:
    emb = make_embedder("hash")
    writer = TemplateQueryWriter.for_generated(data.item_texts)
    enc = replace(ENC, epochs=2) if quick else ENC
    grpo = GRPOConfig(iterations=5 if quick else GRPO_ITERATIONS)
    model = Prismic(writer, emb, encoder=enc, grpo=grpo, seed=0).fit(hist, data.item_texts)
    n = len(hist)
    sizes = (1,) if quick else (1, n)
    reps = dict(repeats=3, warmup=1) if quick else dict(repeats=REPEATS, warmup=2)

    def encoder_side(h):
        with torch.inference_mode():
            return model.score(h)

    def consolidator_side(h):
        with torch.inference_mode():
            return model.score_consolidated(h)

    res = compare(
        {"distilled encoder (ours)": encoder_side, "writer + consolidator": consolidator_side},
        lambda users: hist[:users],
        sizes,
        ours="distilled encoder (ours)",
        name="Inference: distilled encoder vs writer + consolidator per user",
        size_label="users",
        note=NOTE_INFERENCE + extra_note,
        **reps,
    )
    q_enc, q_con = _ndcg(encoder_side(hist), test), _ndcg(consolidator_side(hist), test)
    head_cells = " | ".join(f"users / s at {size:,} user{'s' if size > 1 else ''}" for size in sizes)
    rows = [f"| side | test NDCG@10 | {head_cells} |", "| --- | --- |" + " --- |" * len(sizes)]
    for name, q in (("distilled encoder (ours)", q_enc), ("writer + consolidator", q_con)):
        rates = " | ".join(f"{size / res.row(size).side(name).median_s:,.0f}" for size in sizes)
        rows.append(f"| {name} | {q:.4f} | {rates} |")
    head = (
        f"Test NDCG@10 over all {n} users (leave-one-out, full ranking of {data.n_items} items), same "
        f"fitted model ({enc.epochs} encoder epochs at batch {enc.batch_size}, {grpo.iterations} GRPO "
        "iterations); users / s = users / median time above."
    )
    return res, head + "\n\n" + "\n".join(rows)


def training(data, recbole, quick: bool) -> tuple[object, str]:
    Config, create_dataset, data_preparation, SASRec, Trainer = recbole
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
    with contextlib.chdir(tmp):  # RecBole writes log/ and log_tensorboard/ folders into the cwd
        config = Config(model="SASRec", dataset="bench", config_dict=cfg)
        dataset = create_dataset(config)
        train, _, test_loader = data_preparation(config, dataset)
        peer = SASRec(config, train.dataset)
        trainer = Trainer(config, peer)
    ours_train = [s[:-2] for s in data.sequences]  # RecBole's LS split: train = all but the last 2 items
    text = make_embedder("hash").encode(list(data.item_texts))
    one_epoch = replace(ENC, epochs=1)
    epochs = itertools.count()
    reps = dict(repeats=3, warmup=1) if quick else dict(repeats=TRAIN_REPEATS, warmup=1)

    res = compare(
        {
            "our SASRec, id-only (ours)": lambda: SequentialRecommender(
                "sasrec", one_epoch, use_text=False
            ).fit(ours_train, text),
            "RecBole SASRec": lambda: trainer._train_epoch(train, next(epochs), show_progress=False),
        },
        ours="our SASRec, id-only (ours)",
        name="Training time per epoch: our SASRec vs RecBole's SASRec (id-only)",
        number=1,
        note=NOTE_TRAINING,
        **reps,
    )
    n_epochs = next(epochs)  # RecBole's trainer ran this many epochs (warm-up + rounds)
    peer_eval = trainer.evaluate(test_loader, load_best_model=False, show_progress=False)
    ours = SequentialRecommender("sasrec", replace(ENC, epochs=n_epochs), use_text=False).fit(
        ours_train, text
    )
    test_hist = [s[:-1] for s in data.sequences]
    test_t = np.array([s[-1] for s in data.sequences])
    q_ours, q_peer = _ndcg(ours.score(test_hist), test_t), float(peer_eval["ndcg@10"])
    pairs = sum(len(s) - 1 for s in ours_train)
    steps_ours = -(-len(ours_train) // ENC.batch_size)
    steps_peer = -(-pairs // ENC.batch_size)
    table = "\n".join(
        [
            f"{pairs} (prefix, next item) training pairs from {len(ours_train)} users; batch "
            f"{ENC.batch_size}: an epoch is {steps_ours} optimiser steps for ours (users per batch) and "
            f"{steps_peer} for RecBole (prefixes per batch). NDCG@10 after {n_epochs} epochs each (the "
            "epochs RecBole's trainer ran above), each by its own evaluator (RecBole's: full-sort "
            "leave-one-out; ours: full ranking of the last item).",
            "",
            "| side | test NDCG@10 | optimiser steps per epoch |",
            "| --- | --- | --- |",
            f"| our SASRec, id-only (ours) | {q_ours:.4f} | {steps_ours} |",
            f"| RecBole SASRec | {q_peer:.4f} | {steps_peer} |",
        ]
    )
    return res, table


def main(quick: bool = False) -> str:
    data = generate_intent_data(DATA, 0)
    hist, test = leave_one_out(data)
    recbole, why = _import_recbole()
    with torch_threads(1):
        results, tables = [], {}
        skipped = (
            ""
            if recbole is not None
            else f" RecBole is not importable here ({why}): the RecBole training comparison was skipped "
            f"(install it with `{INSTALL_RECBOLE}` to run it)."
        )
        res, q = inference(data, hist, test, quick, skipped)
        results.append(res)
        tables["Quality: inference (same users, same fitted model)"] = q
        if recbole is not None:
            res, q = training(data, recbole, quick)
            results.append(res)
            tables["Quality: SASRec after training (same pairs, same epochs)"] = q
        else:
            tables["RecBole comparison: skipped"] = (
                f"RecBole is not importable here ({why}), so the training-time comparison of our SASRec "
                "with RecBole's was not run. RecBole is deliberately outside the workspace lock; install "
                f"it where you run this benchmark (`{INSTALL_RECBOLE}`) and rerun."
            )
    return publish(results, __file__, quick=quick, title="prismic benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 user, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
