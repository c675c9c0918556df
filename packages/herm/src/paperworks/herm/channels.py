"""Noisy channels acting on messages viewed as real symbol streams.

A message of shape ``(B, n)`` (real) or ``(B, D)`` (complex: ``2 D`` real symbols, the real and
imaginary parts) is sent through one of:

* ``none``: the identity;
* ``awgn``: additive white Gaussian noise at a signal-to-noise ratio ``snr_db`` measured against
  the mean power of the transmitted real symbols of each message;
* ``flip``: each real symbol's sign is flipped with probability ``p`` (magnitude kept);
* ``erase``: each symbol is dropped (received as exactly 0, so the receiver knows which) with
  probability ``p``; for complex messages a whole component is dropped.

The same definitions apply to every message format, so formats of one length are compared at one
energy per message relative to the noise (equal per-symbol SNR and equal length = equal energy).
Each kind takes exactly its own parameter: ``Channel("awgn", snr_db=-5)``, ``Channel("flip", p=0.1)``,
``Channel("erase", p=0.3)``, ``Channel()``; any other combination is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from paperworks.core.validate import finite_float, fraction, one_of

from ._checks import check_generator, shape_of

__all__ = ["Channel", "transmit"]

KINDS = ("none", "awgn", "flip", "erase")
_PARAM = {"none": None, "awgn": "snr_db", "flip": "p", "erase": "p"}


@dataclass(frozen=True)
class Channel:
    """A channel: ``kind`` in {"none", "awgn", "flip", "erase"}; ``snr_db`` (finite, in [-60, 60]) for
    awgn only, ``p`` for flip (in [0, 0.5]) and erase (in [0, 1]) only."""

    kind: str = "none"
    snr_db: float | None = None
    p: float | None = None

    def __post_init__(self) -> None:
        one_of(self.kind, "Channel.kind", KINDS)
        own = _PARAM[self.kind]
        for name in ("snr_db", "p"):
            value = getattr(self, name)
            if name != own and value is not None:
                raise ValueError(
                    f"Channel.{name}: a {self.kind!r} channel takes "
                    f"{'no parameter' if own is None else own + ' only'}, got {name}={value!r}"
                )
        if own is not None and getattr(self, own) is None:
            raise ValueError(f"Channel.{own}: a {self.kind!r} channel needs {own}")
        if self.kind == "awgn":
            snr = finite_float(self.snr_db, "Channel.snr_db")
            if not -60.0 <= snr <= 60.0:
                raise ValueError(f"Channel.snr_db: expected a number in [-60, 60] dB, got {snr}")
            object.__setattr__(self, "snr_db", snr)
        elif self.kind in ("flip", "erase"):
            p = fraction(self.p, "Channel.p")
            if self.kind == "flip" and p > 0.5:
                raise ValueError(
                    f"Channel.p: a flip rate above 0.5 is a different code; expected p in [0, 0.5], got {p}"
                )
            object.__setattr__(self, "p", p)

    @property
    def label(self) -> str:
        if self.kind == "awgn":
            return f"awgn {self.snr_db:g} dB"
        if self.kind == "none":
            return "clean"
        return f"{self.kind} p={self.p:g}"

    def __call__(self, message: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        return transmit(message, self, generator)


def _draw(fn, shape: torch.Size, generator: torch.Generator | None, like: torch.Tensor, **kw) -> torch.Tensor:
    """Random numbers drawn on the generator's device (the CPU unless given), then moved to ``like``'s."""
    device = generator.device if generator is not None else like.device
    return fn(shape, generator=generator, device=device, **kw).to(like.device)


def transmit(
    message: torch.Tensor, channel: Channel, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Send ``message`` (B, n) real or (B, D) complex through ``channel``; returns the same shape."""
    if (
        not isinstance(message, torch.Tensor)
        or message.ndim != 2
        or message.shape[0] == 0
        or message.shape[1] == 0
    ):
        raise ValueError(f"message: expected a non-empty (batch, n) tensor, got {shape_of(message)}")
    if not (message.dtype.is_floating_point or message.is_complex()):
        raise TypeError(f"message: expected a real floating or complex tensor, got dtype {message.dtype}")
    if not isinstance(channel, Channel):
        raise TypeError(f"channel: expected a Channel, got {type(channel).__name__}")
    generator = check_generator(generator)
    cplx = message.is_complex()
    x = torch.view_as_real(message.resolve_conj()) if cplx else message  # (B, D, 2) or (B, n)
    if not torch.isfinite(x).all():
        raise ValueError("message: expected finite values (NaN/inf found)")
    if channel.kind == "none":
        return message.clone()
    flat = x.reshape(x.shape[0], -1)
    if channel.kind == "awgn":
        power = flat.pow(2).mean(dim=1, keepdim=True)
        sigma = torch.sqrt(power / 10.0 ** (channel.snr_db / 10.0))
        out = flat + _draw(torch.randn, flat.shape, generator, flat, dtype=flat.dtype) * sigma
    elif channel.kind == "flip":
        flips = _draw(torch.rand, flat.shape, generator, flat) < channel.p
        out = torch.where(flips, -flat, flat)
    else:
        shape = x.shape[:2] if cplx else flat.shape
        keep = (_draw(torch.rand, shape, generator, flat) >= channel.p).to(flat.dtype)
        out = (x * keep[..., None] if cplx else flat * keep).reshape(flat.shape)
    out = out.reshape(x.shape)
    return torch.view_as_complex(out.contiguous()) if cplx else out
