"""Internal classifiers (ICs): the light heads attached after backbone blocks.

The IC used by SLIENet is a *mixed-pool* head: the feature map ``(B, C, H, W)`` is pooled to at most
``4 x 4`` by a learned convex mix of adaptive average and adaptive max pooling, flattened and fed to a
linear layer (the SDN head of Kaya et al. 2019, arXiv 1810.07052, with its mixing weight learned).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["MixedPoolIC"]


class MixedPoolIC(nn.Module):
    """Mixed average/max pooling head: ``(B, C, H, W) -> (B, num_classes)`` logits.

    ``p = s * avgpool(x) + (1 - s) * maxpool(x)`` with ``s = sigmoid(a)`` learned (``a = 0`` at
    init), both pools to ``min(feature_size, 4)`` squares, then ``Linear(C * side**2, num_classes)``.
    """

    def __init__(self, in_channels: int, feature_size: int, num_classes: int) -> None:
        super().__init__()
        for name, v in (
            ("in_channels", in_channels),
            ("feature_size", feature_size),
            ("num_classes", num_classes),
        ):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        side = min(feature_size, 4)
        self.side = side
        self.avg = nn.AdaptiveAvgPool2d(side)
        self.max = nn.AdaptiveMaxPool2d(side)
        self.mix = nn.Parameter(torch.zeros(()))
        self.fc = nn.Linear(in_channels * side * side, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(self.mix)
        pooled = s * self.avg(x) + (1 - s) * self.max(x)
        return self.fc(pooled.flatten(1))
