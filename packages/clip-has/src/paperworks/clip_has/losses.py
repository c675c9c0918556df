"""The symmetric InfoNCE (CLIP) loss: a ``torch.nn.Module`` and its functional twin.

For a batch of ``B`` matched pairs with features ``x_i`` (images) and ``y_i`` (texts) and a logit scale
``s = 1 / tau``, the logits are ``Z = s X Y^T`` and the loss is the mean of the two cross-entropies with
the diagonal as targets (Radford et al. 2021, eq. of the pseudo-code; open_clip's ``ClipLoss`` on one
process computes the same quantity)::

    L = 1/2 [ CE(Z, arange(B)) + CE(Z^T, arange(B)) ]

Shape checks are Python-level only (no host sync), so it is ``torch.compile``-able and differentiable
to any order.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["InfoNCELoss", "clip_loss", "clip_loss_from_logits"]


def clip_loss_from_logits(logits_per_image: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE from (B, B) image-to-text logits (row i: image i against every text)."""
    if logits_per_image.ndim != 2 or logits_per_image.shape[0] != logits_per_image.shape[1]:
        raise ValueError(
            f"logits_per_image: expected a square (B, B) tensor, got {tuple(logits_per_image.shape)}"
        )
    if logits_per_image.shape[0] == 0:
        raise ValueError("logits_per_image: expected a non-empty batch")
    labels = torch.arange(logits_per_image.shape[0], device=logits_per_image.device)
    return 0.5 * (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_image.T, labels))


def clip_loss(
    image_features: torch.Tensor,
    text_features: torch.Tensor,
    logit_scale: torch.Tensor | float,
    *,
    normalize: bool = False,
) -> torch.Tensor:
    """Symmetric InfoNCE of matched rows: (B, d) image and text features, ``logit_scale`` = 1/tau.

    ``normalize=True`` L2-normalises the features first (CLIP models usually hand in unit vectors).
    """
    if image_features.ndim != 2 or text_features.shape != image_features.shape:
        raise ValueError(
            "image_features, text_features: expected two (B, d) tensors of one shape, got "
            f"{tuple(image_features.shape)} and {tuple(text_features.shape)}"
        )
    if normalize:
        image_features = F.normalize(image_features, dim=-1)
        text_features = F.normalize(text_features, dim=-1)
    labels = torch.arange(image_features.shape[0], device=image_features.device)
    if image_features.shape[0] == 0:
        raise ValueError("image_features: expected a non-empty batch")
    # both directions as row-major logits: a cross-entropy over a transposed view is markedly slower
    logits_per_image = logit_scale * image_features @ text_features.T
    logits_per_text = logit_scale * text_features @ image_features.T
    return 0.5 * (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels))


class InfoNCELoss(nn.Module):
    """``torch.nn.Module`` form of :func:`clip_loss`: ``loss(image_features, text_features, logit_scale)``.

    The call signature matches open_clip's ``ClipLoss`` on one process, so either can train
    :class:`~paperworks.clip_has.ClipLite` (its ``forward`` returns the three arguments).
    """

    def __init__(self, normalize: bool = False) -> None:
        super().__init__()
        self.normalize = bool(normalize)

    def forward(
        self, image_features: torch.Tensor, text_features: torch.Tensor, logit_scale: torch.Tensor | float
    ) -> torch.Tensor:
        return clip_loss(image_features, text_features, logit_scale, normalize=self.normalize)
