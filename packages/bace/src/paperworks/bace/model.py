"""The BACE network: region encoders, a behaviour-selected adjacency, a graph-conditioned decoder.

Shapes (B windows, C contacts, R regions, L past samples, H forecast steps, d state size):

1. :class:`RegionEncoder` ``(B, C, L) -> (B, R, d)``: region ``r``'s state ``h_r`` reads only region
   ``r``'s contacts (a temporal 1-D convolution whose weight is masked to the region's contacts, then a
   region-specific linear read-out of the conv features; or a contact-pooling projection followed by a
   GRU over the window, ``encoder="gru"``).
2. :class:`PhaseAdjacency` ``phase (B,) -> (B, R, R)``: ``A_b = sigmoid(logits_b)`` with a zero diagonal,
   one matrix per phase (or one shared, ``shared=True``); ``A_b[r, j]`` is the weight of ``j -> r``.
3. Decoder: ``x_hat_c(t+1..t+H) = U_c [h_r ; sum_j A_b[r, j] m(h_j)] + S_c x_c(t-L+1..t) + beta_c`` for
   contact ``c`` of region ``r``: the region's own state, the adjacency-weighted messages of the other
   regions (``m`` an MLP shared by all regions), and a linear skip from the contact's own past. The only
   path from region ``j``'s data to region ``r``'s forecast runs through ``A_b[r, j]``.

:func:`bace_loss` is the training objective: MSE on future contacts plus ``sparsity * sum A_b`` (L1 on the
non-negative adjacency, averaged over the phase matrices).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["BACENet", "PhaseAdjacency", "RegionEncoder", "bace_loss"]


class RegionEncoder(nn.Module):
    """Per-region temporal encoder ``(B, C, L) -> (B, R, d)`` (see the module docstring)."""

    def __init__(
        self,
        regions: torch.Tensor,
        lag: int,
        hidden: int,
        channels: int = 8,
        kernel: int = 5,
        kind: str = "conv",
    ) -> None:
        super().__init__()
        R = int(regions.max()) + 1
        C = regions.numel()
        self.kind, self.R, self.k, self.d = kind, R, channels, hidden
        mask = (torch.arange(R).repeat_interleave(channels)[:, None] == regions[None, :]).float()  # (R*k, C)
        self.register_buffer("mask", mask)
        if kind == "conv":
            kernel = min(kernel, lag)
            self.conv = nn.Conv1d(C, R * channels, kernel)
            n_out = lag - kernel + 1
            self.readout = nn.Parameter(torch.randn(R, channels * n_out, hidden) / (channels * n_out) ** 0.5)
        elif kind == "gru":
            self.pool = nn.Parameter(torch.randn(R * channels, C) / C**0.5)
            self.region_embed = nn.Parameter(torch.zeros(R, channels))
            self.gru = nn.GRU(channels, hidden, batch_first=True)
        else:
            raise ValueError(f"encoder: expected 'conv' or 'gru', got {kind!r}")
        self.bias = nn.Parameter(torch.zeros(R, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B = x.shape[0]
        if self.kind == "conv":
            w = self.conv.weight * self.mask[:, :, None]
            y = torch.tanh(F.conv1d(x, w, self.conv.bias))  # (B, R*k, L')
            y = y.reshape(B, self.R, -1)  # (B, R, k*L')
            return torch.tanh(torch.einsum("brf,rfd->brd", y, self.readout) + self.bias)
        z = torch.einsum("qc,bcl->blq", self.pool * self.mask, x)  # (B, L, R*k)
        z = z.reshape(B, -1, self.R, self.k) + self.region_embed
        z = z.permute(0, 2, 1, 3).reshape(B * self.R, -1, self.k)
        _, h = self.gru(z)
        return torch.tanh(h[-1].reshape(B, self.R, self.d) + self.bias)


class PhaseAdjacency(nn.Module):
    """Learnable directed adjacency per behavioural phase: ``A_b = sigmoid(logits_b) * (1 - I)``."""

    def __init__(self, n_phases: int, n_regions: int, shared: bool = False, init_logit: float = 0.0) -> None:
        super().__init__()
        self.shared = shared
        self.logits = nn.Parameter(torch.full((1 if shared else n_phases, n_regions, n_regions), init_logit))
        self.register_buffer("off", 1.0 - torch.eye(n_regions))
        self.n_phases = n_phases

    def matrices(self) -> torch.Tensor:
        """All phase matrices ``(n_phases, R, R)`` (a shared matrix repeated)."""
        A = torch.sigmoid(self.logits) * self.off
        return A.expand(self.n_phases, -1, -1) if self.shared else A

    def forward(self, phase: torch.Tensor) -> torch.Tensor:
        A = torch.sigmoid(self.logits) * self.off
        return A[torch.zeros_like(phase)] if self.shared else A[phase]


class BACENet(nn.Module):
    """Forecaster ``(past (B, C, L), phase (B,)) -> future (B, C, H)``; see the module docstring."""

    def __init__(
        self,
        regions: torch.Tensor,
        n_phases: int,
        lag: int,
        horizon: int,
        hidden: int = 16,
        channels: int = 8,
        kernel: int = 5,
        encoder: str = "conv",
        shared_adjacency: bool = False,
    ) -> None:
        super().__init__()
        regions = torch.as_tensor(regions, dtype=torch.long)
        self.register_buffer("regions", regions)
        R, C = int(regions.max()) + 1, regions.numel()
        self.encoder = RegionEncoder(regions, lag, hidden, channels, kernel, encoder)
        self.adjacency = PhaseAdjacency(n_phases, R, shared_adjacency)
        self.message = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.out = nn.Parameter(torch.randn(C, 2 * hidden, horizon) / (2 * hidden) ** 0.5 * 0.1)
        self.skip = nn.Parameter(torch.zeros(C, lag, horizon))
        self.out_bias = nn.Parameter(torch.zeros(C, horizon))
        self.lag, self.horizon = lag, horizon

    def forward(self, past: torch.Tensor, phase: torch.Tensor) -> torch.Tensor:
        h = self.encoder(past)  # (B, R, d)
        A = self.adjacency(phase)  # (B, R, R)
        agg = torch.einsum("brj,bjd->brd", A, self.message(h))
        feats = torch.cat([h, agg], dim=-1)[:, self.regions]  # (B, C, 2d)
        y = torch.einsum("bcd,cdh->bch", feats, self.out)
        return y + torch.einsum("bcl,clh->bch", past, self.skip) + self.out_bias


def bace_loss(
    model: BACENet, past: torch.Tensor, future: torch.Tensor, phase: torch.Tensor, sparsity: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """``MSE(model(past, phase), future) + sparsity * mean_b sum_{r,j} A_b[r, j]``; returns (loss, mse)."""
    mse = F.mse_loss(model(past, phase), future)
    l1 = torch.sigmoid(model.adjacency.logits).mul(model.adjacency.off).sum((-1, -2)).mean()
    return mse + sparsity * l1, mse
