"""Side by side on the core bench harness: PRISMIC's distilled encoder vs its consolidator at inference,
and our SASRec vs RecBole's (when RecBole is installed).

Data: the generated ``noisy`` set of the reproduction (its user count, 960 items), hashed bag-of-words
embeddings, one torch thread. Two questions, one :func:`paperworks.core.bench.compare` each (warm-up,
rounds interleaved in a seeded random order, medians, ratio ours/peer with a bootstrap interval):

1. *Inference* (the point of LLM-free inference): scoring users with the distilled encoder (ours,
   ``Prismic.score``) vs running the query writer + GRPO consolidator per user and retrieving with the
   consolidated query (``Prismic.score_consolidated``), for 1 user (latency) and for every user
   (throughput = users / median). Quality on the same users: test NDCG@10 of both.
2. *Time to quality* of our id-only SASRec vs RecBole's SASRec (the peer a practitioner would use) on
   the same generated data and the same (prefix, next item) pairs: each call trains a fresh model for
   the same number of optimiser steps ``S`` (sizes of the comparison), with the same number of pairs per
   step on average (ours: 32 users per step; RecBole: its prefixes, ``train_batch_size`` = 32 x the mean
   number of pairs per user), the same layers, width, heads, dropout, window and learning rate. RecBole's
   side is its ``SASRec`` on its own data loader, updated as its ``Trainer._train_epoch`` does (Adam,
   ``zero_grad``, ``calculate_loss``, ``backward``, ``step``), stopped after ``S`` steps. Quality: test
   NDCG@10 after ``S`` steps, both by **one evaluator** (ours: full ranking of the held-out last item,
   pessimistic ties, which make the value independent of item ids; RecBole's scores come from
   ``full_sort_predict``), with RecBole's own evaluator beside it as a cross-check. RecBole is the
   ``bench`` extra (``pip install 'paperworks-prismic[bench]'``: RecBole 1.2.0 and ``ray[tune]``, which
   ``recbole.quick_start`` imports); where it is not importable this comparison is skipped and the
   results say so.

Run: ``uv run python packages/prismic/benchmarks/bench_prismic.py [--quick]`` or
``uv run paperworks bench prismic [--quick]``. The full run writes benchmarks/results.json and
results.md; ``--quick`` (1 user only, 3 rounds, 1 warm-up, shorter fits, fewer steps) writes to a
temporary folder and prints.
"""

from __future__ import annotations

import argparse
import contextlib
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
# the inference benchmark's fixed budget (the reproduction's text-only item tower, no early stopping)
ENC = EncoderConfig(n_layers=1, max_len=15, epochs=8, batch_size=128, item_ids=False)
# the RecBole comparison: id-only SASRec with the reproduction's width, window, lr and 32 users per step
ENC_ID = EncoderConfig(n_layers=1, max_len=15, batch_size=32, lr=2e-3, epochs=10**6)
TIMED_STEPS = (20, 80)  # optimiser steps per timed call (the timing comparison's sizes)
CURVE_STEPS = (25, 50, 100, 200, 400, 600)  # test NDCG@10 after this many steps (the quality curve)
GRPO_ITERATIONS = 40
REPEATS = 20  # inference
TRAIN_REPEATS = 3  # training rounds per timed size (a RecBole step takes a large fraction of a second)
INSTALL_RECBOLE = "pip install 'paperworks-prismic[bench]'"
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
    "Sides: a fresh id-only SASRec trained for S optimiser steps per call, ours "
    "(`SequentialRecommender('sasrec', use_text=False)`, `max_steps=S`, 32 users per step) and RecBole's "
    "`SASRec` on RecBole's training loader (its prefixes, `train_batch_size` = 32 x the mean number of "
    "training pairs per user, so both see the same pairs per step on average), updated as "
    "`Trainer._train_epoch` does, stopped after S steps. Same data and (prefix, next item) pairs, 1 layer, "
    "width 64, 2 heads, dropout 0.2, window 15, lr 2e-3, full-softmax cross entropy. Model construction "
    "is inside the timing on both sides; RecBole's data set and loaders are built once, outside it."
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


def _ndcg_ranked(scores: torch.Tensor, targets: torch.Tensor) -> float:
    """The one evaluator of the RecBole comparison: NDCG@10, pessimistic ties, nothing excluded."""
    return float(ndcg_from_ranks(target_ranks(scores, targets)).mean())


def training(data, recbole, quick: bool) -> tuple[object, str]:
    Config, create_dataset, data_preparation, SASRec, Trainer = recbole
    from recbole.utils import init_seed

    tmp = Path(tempfile.mkdtemp(prefix="prismic-bench-"))
    (tmp / "bench").mkdir()
    lines = ["user_id:token\titem_id:token\ttimestamp:float"]
    for u, s in enumerate(data.sequences):
        lines += [f"u{u}\ti{i}\t{t}" for t, i in enumerate(s)]
    (tmp / "bench" / "bench.inter").write_text("\n".join(lines) + "\n")
    ours_train = [s[:-2] for s in data.sequences]  # RecBole's LS split: train = all but the last 2 items
    pairs = sum(len(s) - 1 for s in ours_train)
    rb_batch = round(ENC_ID.batch_size * pairs / len(ours_train))  # the same pairs per step on average
    cfg = {
        "data_path": str(tmp),
        "checkpoint_dir": str(tmp / "ckpt"),
        "load_col": {"inter": ["user_id", "item_id", "timestamp"]},
        "MAX_ITEM_LIST_LENGTH": ENC_ID.max_len,
        "hidden_size": ENC_ID.dim,
        "inner_size": 2 * ENC_ID.dim,
        "n_layers": ENC_ID.n_layers,
        "n_heads": ENC_ID.n_heads,
        "hidden_dropout_prob": ENC_ID.dropout,
        "attn_dropout_prob": ENC_ID.dropout,
        "loss_type": "CE",
        "train_neg_sample_args": None,
        "train_batch_size": rb_batch,
        "eval_batch_size": 4096,
        "learning_rate": ENC_ID.lr,
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
    text = make_embedder("hash").encode(list(data.item_texts))
    test_hist = [s[:-1] for s in data.sequences]
    test_t = torch.as_tensor(np.array([s[-1] for s in data.sequences]) - 1)

    def ours_fit(steps: int):
        return SequentialRecommender("sasrec", replace(ENC_ID, max_steps=steps), use_text=False).fit(
            ours_train, text
        )

    def recbole_fit(steps: int):
        init_seed(0, True)
        model = SASRec(config, train.dataset)
        opt = torch.optim.Adam(model.parameters(), lr=ENC_ID.lr)  # RecBole's learner "adam", no decay
        model.train()
        done = 0
        while done < steps:
            for interaction in train:
                opt.zero_grad()
                loss = model.calculate_loss(interaction)
                loss.backward()
                opt.step()
                done += 1
                if done == steps:
                    break
        return model.eval()

    def recbole_ndcg(model) -> float:
        scores, targets = [], []
        with torch.inference_mode():
            for interaction, _, _, positive_i in test_loader:
                scores.append(model.full_sort_predict(interaction)[:, 1:])  # column 0 is RecBole's padding
                targets.append(positive_i - 1)
        return _ndcg_ranked(torch.cat(scores), torch.cat(targets))

    timed = (5, 10) if quick else TIMED_STEPS
    curve_steps = (10, 20) if quick else CURVE_STEPS
    reps = dict(repeats=2, warmup=1) if quick else dict(repeats=TRAIN_REPEATS, warmup=1)
    res = compare(
        {"our SASRec, id-only (ours)": ours_fit, "RecBole SASRec": recbole_fit},
        lambda s: s,
        timed,
        ours="our SASRec, id-only (ours)",
        name="Training time: our SASRec vs RecBole's SASRec (id-only), same optimiser steps",
        size_label="optimiser steps",
        number=1,
        note=NOTE_TRAINING,
        **reps,
    )
    # quality after S steps, one evaluator: ours refitted per S (the same seeded trajectory), RecBole's
    # one run evaluated at each S (its loop is ours to stop)
    q_ours = {s: _ndcg_ranked(ours_fit(s).score(test_hist), test_t) for s in curve_steps}
    q_peer, peer_model = {}, None
    init_seed(0, True)
    peer_model = SASRec(config, train.dataset)
    opt = torch.optim.Adam(peer_model.parameters(), lr=ENC_ID.lr)
    done = 0
    while done < curve_steps[-1]:
        for interaction in train:
            peer_model.train()
            opt.zero_grad()
            peer_model.calculate_loss(interaction).backward()
            opt.step()
            done += 1
            if done in curve_steps:
                q_peer[done] = recbole_ndcg(peer_model.eval())
            if done == curve_steps[-1]:
                break
    with contextlib.chdir(tmp):
        trainer = Trainer(config, peer_model)  # RecBole's own evaluator on the same final model
        own = float(trainer.evaluate(test_loader, load_best_model=False, show_progress=False)["ndcg@10"])

    def seconds(name: str, s: int) -> float:
        """Training time of ``s`` steps: the line through the two timed sizes (construction + per step)."""
        (s1, t1), (s2, t2) = ((k, res.row(k).side(name).median_s) for k in (timed[0], timed[-1]))
        return t1 + (t2 - t1) * (s - s1) / (s2 - s1)

    rows = [f"| {s} | {q_ours[s]:.4f} | {q_peer[s]:.4f} |" for s in curve_steps]
    goal = 0.9 * min(max(q_ours.values()), max(q_peer.values()))

    def reach(q: dict[int, float], name: str) -> str:
        for s in curve_steps:
            if q[s] >= goal:
                return f"{s} steps, about {seconds(name, s):.1f} s"
        return "not reached in the grid"

    table = "\n".join(
        [
            f"{pairs} (prefix, next item) training pairs from {len(ours_train)} users; ours: 32 users per "
            f"step, RecBole: {rb_batch} prefixes per step. Test NDCG@10 of the held-out last item of "
            "every user after S optimiser steps, one evaluator for both (ours: full ranking, pessimistic "
            f"ties). RecBole's own evaluator on its {curve_steps[-1]}-step model gives NDCG@10 {own:.4f} "
            "(full-sort, no history masking for sequential models; ties as `torch.topk` breaks them).",
            "",
            "| optimiser steps | our SASRec: test NDCG@10 | RecBole SASRec: test NDCG@10 |",
            "| --- | --- | --- |",
            *rows,
            "",
            f"Time to quality, NDCG@10 >= {goal:.4f} (90% of the lower of the two sides' best on the "
            "curve; the first point of the curve reaching it, timed by the line through the two timings "
            f"above, {timed[0]} and {timed[-1]} steps): ours "
            f"{reach(q_ours, 'our SASRec, id-only (ours)')}; RecBole {reach(q_peer, 'RecBole SASRec')}.",
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
            tables["Quality: SASRec after the same optimiser steps (one evaluator)"] = q
        else:
            tables["RecBole comparison: skipped"] = (
                f"RecBole is not importable here ({why}), so the time-to-quality comparison of our SASRec "
                f"with RecBole's was not run. Install the `bench` extra (`{INSTALL_RECBOLE}`) and rerun."
            )
    return publish(results, __file__, quick=quick, title="prismic benchmarks", tables=tables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 user, 3 rounds, temporary folder")
    main(quick=parser.parse_args().quick)
