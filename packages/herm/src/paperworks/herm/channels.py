"""Noisy channels acting on messages viewed as real symbol streams.

A message of shape ``(B, n)`` (real) or ``(B, D)`` (complex: ``2 D`` real symbols, the real and
imaginary parts) is sent through one of:

* ``awgn``: additive white Gaussian noise at a signal-to-noise ratio ``snr_db`` measured against
  the mean power of the transmitted real symbols of each message;
* ``flip``: each real symbol's sign bit is flipped with probability ``p`` (magnitude kept);
* ``erase``: each symbol is dropped (received as 0) with probability ``p``; for complex messages a
  whole component is dropped.

The same definitions apply to every message format, so formats are compared at one SNR / rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["Channel", "transmit"]

_KINDS = ("none", "awgn", "flip", "erase")


@dataclass(frozen=True)
class Channel:
    """A channel: ``kind`` in {"none", "awgn", "flip", "erase"}; ``snr_db`` for awgn, ``p`` otherwise."""

    kind: str = "none"
    snr_db: float = math.inf
    p: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"Channel.kind: expected one of {_KINDS}, got {self.kind!r}")
        if self.kind == "awgn" and (math.isnan(self.snr_db) or not -60.0 <= self.snr_db <= math.inf):
            raise ValueError(f"Channel.snr_db: expected a number in [-60, inf] dB, got {self.snr_db!r}")
        if self.kind in ("flip", "erase") and not (0.0 <= self.p <= 1.0):
            raise ValueError(f"Channel.p: expected a probability in [0, 1], got {self.p!r}")
        if self.kind == "flip" and self.p > 0.5:
            raise ValueError(
                f"Channel.p: a flip rate above 0.5 is a different code; expected p <= 0.5, got {self.p!r}"
            )

    @property
    def label(self) -> str:
        if self.kind == "awgn":
            return f"awgn {self.snr_db:g} dB"
        if self.kind == "none":
            return "clean"
        return f"{self.kind} p={self.p:g}"

    def __call__(self, message: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        return transmit(message, self, generator)


def transmit(
    message: torch.Tensor, channel: Channel, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Send ``message`` (B, n) real or (B, D) complex through ``channel``; returns the same shape."""
    if not isinstance(message, torch.Tensor) or message.ndim != 2 or message.shape[0] == 0:
        raise ValueError(
            f"message: expected a non-empty (batch, n) tensor, got "
            f"{tuple(message.shape) if isinstance(message, torch.Tensor) else type(message).__name__}"
        )
    if not torch.isfinite(torch.view_as_real(message) if message.is_complex() else message).all():
        raise ValueError("message: expected finite values (NaN/inf found)")
    if channel.kind == "none":
        return message.clone()
    cplx = message.is_complex()
    x = torch.view_as_real(message) if cplx else message  # (B, D, 2) or (B, n)
    flat = x.reshape(x.shape[0], -1)
    if channel.kind == "awgn":
        if math.isinf(channel.snr_db):
            return message.clone()
        power = flat.pow(2).mean(dim=1, keepdim=True)
        sigma = torch.sqrt(power / 10.0 ** (channel.snr_db / 10.0))
        noise = torch.randn(flat.shape, generator=generator, dtype=flat.dtype) * sigma
        out = flat + noise
    elif channel.kind == "flip":
        flips = torch.rand(flat.shape, generator=generator) < channel.p
        out = torch.where(flips, -flat, flat)
    else:
        shape = x.shape[:2] if cplx else flat.shape
        keep = (torch.rand(shape, generator=generator) >= channel.p).to(flat.dtype)
        out = (x * keep[..., None] if cplx else flat * keep).reshape(flat.shape)
    out = out.reshape(x.shape)
    return torch.view_as_complex(out.contiguous()) if cplx else out
