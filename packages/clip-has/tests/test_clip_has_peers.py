"""The real libraries: open_clip's ClipLoss and models, transformers' CLIPModel, torchmetrics' Metric
(two processes with gloo), networkx hierarchies."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from paperworks.clip_has import (
    ClipLite,
    HierarchicalAngularSeparation,
    InfoNCELoss,
    balanced_tree,
    caption_tokens,
    clip_loss,
    concept_prototypes,
    has_margins,
    hierarchical_images,
)

open_clip = pytest.importorskip("open_clip")


@pytest.mark.parametrize("batch", [1, 8, 64])
def test_infonce_matches_open_clip_cliploss(batch):
    g = torch.Generator().manual_seed(batch)
    x = torch.nn.functional.normalize(torch.randn(batch, 16, generator=g), dim=1).double()
    y = torch.nn.functional.normalize(torch.randn(batch, 16, generator=g), dim=1).double()
    scale = torch.tensor(14.3, dtype=torch.float64)
    ref = open_clip.loss.ClipLoss()(x, y, scale)
    assert float(clip_loss(x, y, scale)) == pytest.approx(float(ref), abs=1e-6)
    assert float(InfoNCELoss()(x, y, scale)) == pytest.approx(float(ref), abs=1e-6)
    # gradients agree too
    xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    clip_loss(xa, y, scale).backward()
    open_clip.loss.ClipLoss()(xb, y, scale).backward()
    torch.testing.assert_close(xa.grad, xb.grad)


def test_cliplite_trains_with_open_clip_loss_signature():
    tree = balanced_tree(2, 2)
    X, labels = hierarchical_images(tree, 0, images_per_leaf=2)
    cap = caption_tokens(tree)
    model = ClipLite(cap.vocab_size)
    feats = model(torch.as_tensor(X[:4]), torch.as_tensor(cap.tokens[labels[:4], 0]))
    assert torch.isfinite(open_clip.loss.ClipLoss()(*feats)) and torch.isfinite(InfoNCELoss()(*feats))


def _metric_from(tree, dim, mode="subtree", centre=None):
    return HierarchicalAngularSeparation(tree, dim, mode=mode, centre=centre)


def test_metric_equals_the_pure_function_over_batches():
    tree = balanced_tree(2, 3)
    rng = np.random.default_rng(0)
    labels = torch.from_numpy(np.repeat(tree.leaves, 6))
    x = torch.from_numpy(rng.normal(size=(labels.numel(), 8)))
    for centre in (None, "root"):
        metric = _metric_from(tree, 8, centre=centre)
        for k in range(0, labels.numel(), 17):
            metric.update(x[k : k + 17], labels[k : k + 17])
        res = metric.compute()
        want = has_margins(concept_prototypes(x, labels, tree, centre=centre), tree)
        assert float(res["margin"]) == pytest.approx(float(want.min()))
        assert float(res["rate"]) == pytest.approx(float((want > 0).double().mean()))
        metric.reset()
        assert float(metric.counts.sum()) == 0


def test_metric_bad_input():
    tree = balanced_tree(2, 2)
    m = _metric_from(tree, 4)
    with pytest.raises(ValueError, match="dimension 4"):
        m.update(torch.ones(2, 3), torch.tensor([3, 4]))
    with pytest.raises(ValueError, match="labels"):
        m.update(torch.ones(2, 4), torch.tensor([3, 99]))
    with pytest.raises(ValueError, match="zero vector"):
        m.update(torch.zeros(1, 4), torch.tensor([3]))
    m.update(torch.randn(2, 4), torch.tensor([3, 4]))  # leaves 5 and 6 of concept 2 never seen
    with pytest.raises(ValueError, match=r"concept 2 .*no embeddings"):
        m.compute()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, x: torch.Tensor, labels: torch.Tensor, queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        metric = HierarchicalAngularSeparation(balanced_tree(2, 3), x.shape[1])
        metric.update(x[rank::world], labels[rank::world])  # each process sees half the samples
        res = metric.compute()
        queue.put((rank, float(res["margin"]), float(res["rate"])))
    finally:
        dist.destroy_process_group()


def test_metric_syncs_across_two_processes():
    tree = balanced_tree(2, 3)
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.normal(size=(36, 6)))
    labels = torch.from_numpy(np.repeat(tree.leaves, 4))
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, 2, port, x, labels, queue)) for r in range(2)]
    for p in procs:
        p.start()
    results = sorted(queue.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    want = has_margins(concept_prototypes(x, labels, tree), tree)
    for _, margin, rate in results:
        assert margin == pytest.approx(float(want.min()))
        assert rate == pytest.approx(float((want > 0).double().mean()))
    single = HierarchicalAngularSeparation(tree, 6)
    single.update(x[::2], labels[::2])
    assert float(single.compute()["margin"]) != pytest.approx(float(want.min()))  # half the data differs


def _features(out) -> torch.Tensor:
    return out if isinstance(out, torch.Tensor) else out.pooler_output


def test_random_init_open_clip_and_transformers_models_feed_the_metric():
    from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg
    from transformers import CLIPConfig, CLIPModel

    tree = balanced_tree(2, 2)
    X, labels = hierarchical_images(tree, 0, images_per_leaf=3)
    images = torch.as_tensor(X)
    tokens = torch.arange(1, tree.n_nodes + 1)[:, None].repeat(1, 8)
    torch.manual_seed(0)
    oc = CLIP(
        embed_dim=16,
        vision_cfg=CLIPVisionCfg(layers=1, width=32, patch_size=8, image_size=32, head_width=16),
        text_cfg=CLIPTextCfg(context_length=8, vocab_size=64, width=32, heads=2, layers=1),
    ).eval()
    cfg = CLIPConfig(
        text_config=dict(
            vocab_size=64,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=16,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        ),
        projection_dim=16,
    )
    hf = CLIPModel(cfg).eval()
    with torch.no_grad():
        feats = [
            (oc.encode_image(images), oc.encode_text(tokens)),
            (
                _features(hf.get_image_features(pixel_values=images)),
                _features(hf.get_text_features(input_ids=tokens)),
            ),
        ]
    for img, txt in feats:
        assert img.shape == (len(X), 16) and txt.shape == (tree.n_nodes, 16)
        mi = HierarchicalAngularSeparation(tree, 16)
        mi.update(img, torch.as_tensor(labels))
        mt = HierarchicalAngularSeparation(tree, 16, mode="node")
        mt.update(txt, torch.arange(tree.n_nodes))
        for res in (mi.compute(), mt.compute()):
            assert 0.0 <= float(res["rate"]) <= 1.0 and torch.isfinite(res["margin"])
