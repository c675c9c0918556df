"""Round trips with torch-hd (the ``peer`` extra): our hypervectors are plain complex tensors,
torch-hd's FHRR hypervectors are the ``torchhd.FHRRTensor`` subclass of the same data.

``to_torchhd(x)`` views ``x`` as an ``FHRRTensor`` (no copy), so torch-hd's ``bind``, ``multiset``,
``dot_similarity``, ``cleanup``, ... apply to HSM messages and codebooks; ``from_torchhd(t)`` views a
torch-hd FHRR tensor as a plain complex tensor for :class:`~paperworks.herm.HSMCodec` and the
functions of :mod:`paperworks.herm.algebra`. Conventions that differ: our ``similarity`` is
``dot_similarity / D``; our atoms are drawn from the same law as ``FHRRTensor.random``.
"""

from __future__ import annotations

import torch

from ._checks import check_hv

__all__ = ["from_torchhd", "to_torchhd"]


def _fhrr():
    try:
        from torchhd.tensors.fhrr import FHRRTensor
    except ImportError:
        raise ImportError(
            "to_torchhd/from_torchhd need torch-hd: pip install 'paperworks-herm[peer]'"
        ) from None
    return FHRRTensor


def to_torchhd(x: torch.Tensor):
    """``x`` (..., D) complex64/complex128 viewed as a ``torchhd.FHRRTensor`` (shares memory)."""
    check_hv(x, "x")
    if x.dtype not in (torch.complex64, torch.complex128):
        raise TypeError(f"x: expected complex64 or complex128 (torch-hd's FHRR dtypes), got {x.dtype}")
    return x.resolve_conj().as_subclass(_fhrr())


def from_torchhd(t: torch.Tensor) -> torch.Tensor:
    """A torch-hd FHRR hypervector (or any complex tensor) as a plain ``torch.Tensor`` (shares memory)."""
    fhrr = _fhrr()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"t: expected a torchhd.FHRRTensor, got {type(t).__name__}")
    if type(t) is not torch.Tensor and not isinstance(t, fhrr):
        raise TypeError(f"t: expected an FHRR hypervector, got torch-hd's {type(t).__name__} (another VSA)")
    plain = t.as_subclass(torch.Tensor)
    check_hv(plain, "t")  # dtype and shape only
    return plain
