"""Internal classifiers (ICs): the light heads attached after backbone blocks.

The IC used by SLIENet is a *mixed-pool* head: the feature map ``(B, C, H, W)`` is pooled to at most
``4 x 4`` by a learned convex mix of adaptive average and adaptive max pooling, flattened and fed to a
linear layer (the SDN head of Kaya et al. 2019, arXiv 1810.07052, with its mixing weight learned).
"""

from __future__ import annotations

import torch
from torch import nn

from paperworks.core import validate

from ._checks import in_graph_capture

__all__ = ["MixedPoolIC"]


class MixedPoolIC(nn.Module):
    """Mixed average/max pooling head: ``(B, C, H, W) -> (B, num_classes)`` logits.

    ``p = s * avgpool(x) + (1 - s) * maxpool(x)`` with ``s = sigmoid(a)`` learned (``a = 0.5`` at
    init, as in the authors' code: ``s`` starts at 0.62), both pools to ``min(feature_size, 4)``
    squares, then ``Linear(C * side**2, num_classes)``.
    """

    #: initial value of the raw mixing parameter ``a`` (the authors' ``nn.Parameter(torch.tensor(0.5))``)
    MIX_INIT = 0.5

    def __init__(self, in_channels: int, feature_size: int, num_classes: int) -> None:
        super().__init__()
        in_channels = validate.positive_int(in_channels, "in_channels")
        feature_size = validate.positive_int(feature_size, "feature_size")
        num_classes = validate.int_in_range(num_classes, "num_classes", 2)
        side = min(feature_size, 4)
        self.side = side
        self.avg = nn.AdaptiveAvgPool2d(side)
        self.max = nn.AdaptiveMaxPool2d(side)
        self.mix = nn.Parameter(torch.tensor(self.MIX_INIT))
        self.fc = nn.Linear(in_channels * side * side, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x (B, in_channels, H, W) -> logits (B, num_classes)``."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x: expected a torch.Tensor feature map, got {type(x).__name__}")
        if not in_graph_capture() and (x.dim() != 4 or x.shape[1] * self.side**2 != self.fc.in_features):
            c = self.fc.in_features // self.side**2
            raise ValueError(f"x: expected a feature map of shape (B, {c}, H, W), got {tuple(x.shape)}")
        s = torch.sigmoid(self.mix)
        pooled = s * self.avg(x) + (1 - s) * self.max(x)
        return self.fc(pooled.flatten(1))
