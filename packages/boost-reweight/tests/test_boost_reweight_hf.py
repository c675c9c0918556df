"""The Hugging Face integration with the real library: a tiny random Llama, the real Trainer."""

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from paperworks.boost_reweight import TrajectoryReweighter  # noqa: E402
from paperworks.boost_reweight.hf import WeightedTrainer, causal_lm_trajectory_nll, weighted_sampler  # noqa: E402

VOCAB, LEN = 24, 10


def _model():
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    cfg._attn_implementation = "eager"
    return transformers.LlamaForCausalLM(cfg)


def _data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (n, LEN), generator=g)
    labels = ids.clone()
    labels[:, : LEN // 2] = -100  # the user's turn is not trained on; the agent's half is
    return [
        {
            "input_ids": ids[i],
            "attention_mask": torch.ones(LEN, dtype=torch.long),
            "labels": labels[i],
            "weight": torch.tensor(1.0),
        }
        for i in range(n)
    ]


def _collate(rows):
    return {k: torch.stack([r[k] for r in rows]) for k in rows[0]}


def _args(tmp_path, **kw):
    return transformers.TrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        max_steps=2,
        learning_rate=1e-3,
        remove_unused_columns=False,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
        seed=0,
        **kw,
    )


def test_weighted_compute_loss_is_the_weighted_mean_and_zero_weight_removes_a_sample(tmp_path):
    model = _model()
    rows = _data(4)
    trainer = WeightedTrainer(model=model, args=_args(tmp_path), train_dataset=rows, data_collator=_collate)
    batch = _collate(rows)
    with torch.no_grad():
        per = causal_lm_trajectory_nll(model(input_ids=batch["input_ids"]).logits, batch["labels"])
    batch["weight"] = torch.tensor([2.0, 0.0, 1.0, 1.0])
    loss = trainer.compute_loss(model, dict(batch))
    assert float(loss.detach()) == pytest.approx(float((batch["weight"] * per).mean()), rel=1e-5)
    # a zero-weight sample's labels do not change the gradient
    g1 = torch.autograd.grad(trainer.compute_loss(model, dict(batch)), list(model.parameters()))
    b2 = dict(batch)
    b2["labels"] = batch["labels"].clone()
    b2["labels"][1, LEN // 2 :] = (b2["labels"][1, LEN // 2 :] + 1) % VOCAB
    g2 = torch.autograd.grad(trainer.compute_loss(model, b2), list(model.parameters()))
    assert all(torch.allclose(a, b) for a, b in zip(g1, g2, strict=True))


def test_trainer_trains_with_the_weight_column_and_with_the_weighted_sampler(tmp_path):
    rows = _data(8)
    for r, w in zip(rows, [0.0, 1.0] * 4, strict=True):
        r["weight"] = torch.tensor(w)
    out = WeightedTrainer(
        model=_model(), args=_args(tmp_path / "a"), train_dataset=rows, data_collator=_collate
    ).train()
    assert np.isfinite(out.training_loss)
    trainer = WeightedTrainer(
        model=_model(),
        args=_args(tmp_path / "b"),
        train_dataset=rows,
        data_collator=_collate,
        sample_weights=[0, 1] * 4,
    )
    sampler = trainer._get_train_sampler()
    assert isinstance(sampler, torch.utils.data.WeightedRandomSampler)
    assert all(i % 2 == 1 for i in sampler)  # zero-weight samples are never drawn
    assert np.isfinite(trainer.train().training_loss)
    with pytest.raises(ValueError, match="sample_weights"):
        WeightedTrainer(
            model=_model(),
            args=_args(tmp_path / "c"),
            train_dataset=rows,
            data_collator=_collate,
            sample_weights=[1.0],
        )


def test_reweighter_runs_on_a_causal_lm_and_exports_weights_by_id():
    model = _model()
    rows = _data(6)
    batch = _collate(rows)
    val = _collate(_data(4, seed=1))

    def loss_fn(logits, b):
        return causal_lm_trajectory_nll(logits, b["labels"])

    rw = TrajectoryReweighter(model, loss_fn, [val], feature_dim=3, head_lr=0.05, lookahead_lr=0.5)
    feats = torch.randn(6, 3)
    v0 = rw.step(batch, feats)
    rw.step(batch, feats)
    assert np.isfinite(v0)
    w = rw.export_weights([f"traj{i}" for i in range(6)], feats)
    assert len(w) == 6 and np.mean(list(w.values())) == pytest.approx(1.0, abs=1e-5)
    sampler = weighted_sampler(w, list(w), seed=0)
    assert len(list(sampler)) == 6
    with pytest.raises(ValueError, match="no agent turns"):
        bad = batch["labels"].clone()
        bad[0] = -100
        causal_lm_trajectory_nll(model(input_ids=batch["input_ids"]).logits, bad)
