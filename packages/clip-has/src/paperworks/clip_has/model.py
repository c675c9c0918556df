"""CLIP-lite: a tiny dual encoder (image CNN, text transformer) and its contrastive training loop.

``ClipLite.forward(images, tokens)`` returns ``(image_features, text_features, logit_scale)`` with
unit-norm features, as open_clip's models do, so :class:`~paperworks.clip_has.InfoNCELoss` or
``open_clip.loss.ClipLoss`` can train it. Sizes default to a few tens of thousands of parameters:
small enough to train on a CPU core in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from paperworks.core.validate import nonnegative_float, positive_float, positive_int

from .losses import clip_loss

__all__ = ["ClipLite", "ImageEncoder", "TextEncoder", "TrainConfig", "train_clip"]


class ImageEncoder(nn.Module):
    """Conv(3->w, s2) - GELU - Conv(w->2w, s2) - GELU - Conv(2w->2w, s2) - GELU - global mean - Linear.

    Input (B, 3, H, W) in [0, 1]; output (B, dim) (not normalised).
    """

    def __init__(self, dim: int = 32, width: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1),
            nn.GELU(),
        )
        self.proj = nn.Linear(2 * width, dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.proj(self.net(images - 0.5).mean(dim=(2, 3)))


class TextEncoder(nn.Module):
    """Token embedding + learned positions - one pre-norm transformer layer - mean over tokens - Linear.

    Input (B, L) int64 token ids (0 = padding, masked); output (B, dim) (not normalised).
    """

    def __init__(
        self, vocab_size: int, dim: int = 32, width: int = 32, length: int = 4, heads: int = 2
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, width, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(length, width) * 0.02)
        self.layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        pad = tokens == 0
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        x = self.norm(self.layer(x, src_key_padding_mask=pad))
        keep = (~pad).unsqueeze(-1).to(x.dtype)
        return self.proj((x * keep).sum(1) / keep.sum(1).clamp_min(1.0))


class ClipLite(nn.Module):
    """Image and text encoders with a learned logit scale (initialised at 1/0.07, as in CLIP)."""

    def __init__(
        self, vocab_size: int, dim: int = 32, image_width: int = 16, text_width: int = 32, length: int = 4
    ):
        super().__init__()
        self.image_encoder = ImageEncoder(dim, image_width)
        self.text_encoder = TextEncoder(vocab_size, dim, text_width, length)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def encode_image(self, images: torch.Tensor, normalize: bool = True) -> torch.Tensor:
        f = self.image_encoder(images)
        return F.normalize(f, dim=-1) if normalize else f

    def encode_text(self, tokens: torch.Tensor, normalize: bool = True) -> torch.Tensor:
        f = self.text_encoder(tokens)
        return F.normalize(f, dim=-1) if normalize else f

    def forward(
        self, images: torch.Tensor, tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.encode_image(images), self.encode_text(tokens), self.logit_scale.exp().clamp(max=100.0)

    @torch.no_grad()
    def concept_embeddings(self, captions: np.ndarray) -> torch.Tensor:
        """(n_nodes, dim): the normalised mean over templates of each concept's caption embedding.

        ``captions``: (n_nodes, n_templates, L) token ids (:func:`~paperworks.clip_has.caption_tokens`).
        """
        t = torch.as_tensor(captions)
        n, k, L = t.shape
        dev = self.logit_scale.device
        e = self.encode_text(t.reshape(n * k, L).to(dev)).reshape(n, k, -1).mean(1)
        return F.normalize(e, dim=-1)

    @torch.no_grad()
    def image_embeddings(self, images: np.ndarray, batch: int = 512) -> torch.Tensor:
        """(N, dim) normalised image embeddings, in batches."""
        x = torch.as_tensor(images)
        dev = self.logit_scale.device
        return torch.cat([self.encode_image(x[i : i + batch].to(dev)) for i in range(0, len(x), batch)])


@dataclass(frozen=True)
class TrainConfig:
    """Contrastive training: ``steps`` AdamW steps of ``batch`` pairs, ``lr``, ``weight_decay``."""

    steps: int = 400
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 0.1

    def __post_init__(self) -> None:
        positive_int(self.steps, "steps")
        positive_int(self.batch, "batch")
        positive_float(self.lr, "lr")
        nonnegative_float(self.weight_decay, "weight_decay")


def train_clip(
    model: ClipLite,
    images: np.ndarray,
    captions: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    config: TrainConfig,
    *,
    seed: int = 0,
    loss_fn: nn.Module | None = None,
) -> list[float]:
    """Train ``model`` on uniformly drawn (image, caption) pairs; returns the loss of every step.

    ``images`` (N, 3, H, W); ``captions`` (n_nodes, n_templates, L) token ids; ``pairs`` =
    ``(image_index, concept_index)`` (:func:`~paperworks.clip_has.hierarchical_pairs`); each drawn
    pair takes one of the concept's templates at random. ``loss_fn(image_f, text_f, scale)`` defaults
    to :func:`~paperworks.clip_has.clip_loss`.
    """
    img_idx, con_idx = (np.asarray(a, dtype=np.int64) for a in pairs)
    if img_idx.shape != con_idx.shape or img_idx.size == 0:
        raise ValueError("pairs: expected two non-empty index arrays of equal length")
    dev = model.logit_scale.device
    x = torch.as_tensor(images).to(dev)
    cap = torch.as_tensor(captions).to(dev)
    gen = torch.Generator().manual_seed(seed)
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or name.endswith("logit_scale") else decay).append(p)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
    )
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 20) * 0.5 * (1 + math.cos(math.pi * s / config.steps))
    )
    loss_fn = loss_fn or (lambda a, b, s: clip_loss(a, b, s))
    losses = []
    model.train()
    n_pairs, n_templates = img_idx.size, cap.shape[1]
    for _ in range(config.steps):
        pick = torch.randint(n_pairs, (config.batch,), generator=gen)
        tmpl = torch.randint(n_templates, (config.batch,), generator=gen).to(dev)
        i = torch.as_tensor(img_idx)[pick].to(dev)
        c = torch.as_tensor(con_idx)[pick].to(dev)
        loss = loss_fn(*model(x[i], cap[c, tmpl]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses
