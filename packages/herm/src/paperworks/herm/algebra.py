"""The vector-symbolic algebra of HSM: Fourier holographic reduced representations (FHRR).

A hypervector is a complex tensor of shape ``(..., D)`` whose atoms are unit phasors
``exp(i * theta)``, ``theta ~ U(-pi, pi]`` (Plate 1995, section 3.6; Plate 2003). The operations,
named and shaped as in torch-hd's FHRR (``torchhd.bind``, ``bundle``, ``multiset``, ``inverse``,
``dot_similarity``, ``cosine_similarity``), so that code written for one reads the other:

* binding ``a * b`` (elementwise complex product, phases add; broadcasts like ``torch.mul``);
  exact inverse ``conj(a)`` for atoms;
* bundling ``a + b`` (two hypervectors) and ``multiset`` (the sum of a stack ``(..., n, D)``);
* ``dot_similarity`` ``Re <a, b>`` and ``cosine_similarity``, and our normalised
  ``similarity = Re <a, b> / D`` (1 for equal atoms, mean 0 and variance ``1 / (2 D)`` for two
  independent atoms), the scale the decoder's thresholds are written in;
* fractional power encoding ``base ** x = exp(i * theta * x)``, so that
  ``base ** x * base ** d == base ** (x + d)``: translating a coordinate is a binding. This is what
  receiver-centric ego-binding uses to move positions from the sender's frame to the receiver's.

Arguments are checked for type, dtype and shape (a wrong one raises, naming the argument); values are
not read, so these primitives cost what the torch operation costs and a NaN propagates to the result,
as in torch and torch-hd. The decoders and channels, where a NaN would turn into a silent finite
answer (an argmax, a rounding), reject it.

Why FHRR (and not MAP or HRR): its binding is exactly invertible for atoms (MAP's too, HRR's only
approximately), and unlike MAP's self-inverse bipolar binding it has fractional powers, which a
frame change (ego-binding) needs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from paperworks.core.validate import nonnegative_float, positive_int

from ._checks import check_generator, check_hv

__all__ = [
    "bind",
    "bundle",
    "cosine_similarity",
    "dot_similarity",
    "fractional_power",
    "inverse",
    "multiset",
    "random_atoms",
    "recall_probability",
    "similarity",
    "similarity_std",
    "unbind",
]


def _check_pair(a: torch.Tensor, b: torch.Tensor, names: tuple[str, str], op: str) -> None:
    check_hv(a, names[0])
    check_hv(b, names[1])
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{op}: dimension mismatch, {names[0]} has D={a.shape[-1]} but {names[1]} has D={b.shape[-1]}"
        )
    try:
        torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError:
        raise ValueError(
            f"{op}: shapes {tuple(a.shape)} ({names[0]}) and {tuple(b.shape)} ({names[1]}) do not broadcast"
        ) from None


def random_atoms(n: int, dim: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``n`` independent FHRR atoms, shape ``(n, dim)``, complex64 unit phasors (torch-hd's
    ``FHRRTensor.random`` draws the same law)."""
    n = positive_int(n, "n")
    dim = positive_int(dim, "dim")
    generator = check_generator(generator)
    theta = (torch.rand(n, dim, generator=generator) * 2.0 - 1.0) * math.pi
    return torch.polar(torch.ones_like(theta), theta)


def bind(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """FHRR binding ``a * b`` (elementwise product), ``(..., D)`` tensors broadcast like ``torch.mul``
    (torch-hd's ``bind``); the last dimensions must be equal."""
    _check_pair(a, b, ("a", "b"), "bind")
    return a * b


def inverse(a: torch.Tensor) -> torch.Tensor:
    """Binding inverse: ``conj(a)`` (a new tensor, as torch-hd's); exact for unit-phasor atoms."""
    check_hv(a, "a")
    return a.conj().resolve_conj()


def unbind(m: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """``m * conj(key)`` (broadcasting as :func:`bind`): recovers ``v`` from ``key * v``, plus
    crosstalk when ``m`` is a bundle."""
    _check_pair(m, key, ("m", "key"), "unbind")
    return m * key.conj()


def bundle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Superposition of two hypervectors ``a + b`` (torch-hd's ``bundle``; broadcasting as :func:`bind`)."""
    _check_pair(a, b, ("a", "b"), "bundle")
    return a + b


def multiset(x: torch.Tensor) -> torch.Tensor:
    """Superposition of a stack: ``x`` (..., n, D) -> (..., D), the sum over ``n`` (torch-hd's
    ``multiset``)."""
    check_hv(x, "x")
    if x.ndim < 2 or x.shape[-2] == 0:
        raise ValueError(
            f"x: expected a non-empty stack of hypervectors (..., n, D), got shape {tuple(x.shape)}"
        )
    return x.sum(dim=-2)


def _others(b: torch.Tensor, a: torch.Tensor, op: str) -> None:
    check_hv(a, "a")
    check_hv(b, "b")
    if b.ndim > 2:
        raise ValueError(f"b: expected a codebook (m, D) or one hypervector (D,), got shape {tuple(b.shape)}")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"{op}: dimension mismatch, a has D={a.shape[-1]} but b has D={b.shape[-1]}")


def dot_similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``Re <a, b_j>``: ``a`` (..., D), ``b`` (m, D) -> (..., m), or ``b`` (D,) -> (...,) (torch-hd's
    ``dot_similarity``)."""
    _others(b, a, "dot_similarity")
    return (a @ (b.conj().T if b.ndim == 2 else b.conj())).real


def cosine_similarity(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``Re <a, b_j> / (|a| |b_j|)``, shapes as :func:`dot_similarity` (torch-hd's ``cosine_similarity``;
    norms clamped below at ``eps``)."""
    _others(b, a, "cosine_similarity")
    eps = nonnegative_float(eps, "eps")
    na = torch.linalg.vector_norm(a, dim=-1)
    nb = torch.linalg.vector_norm(b, dim=-1)
    mag = na[..., None] * nb if b.ndim == 2 else na * nb
    return dot_similarity(a, b) / mag.clamp(min=eps)


def similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Normalised similarity ``Re <a, b_j> / D`` = ``dot_similarity(a, b) / D``: ``a`` (..., D),
    ``b`` (m, D) -> (..., m). 1 for equal atoms; the scale of the decoder's thresholds."""
    _others(b, a, "similarity")
    if b.ndim != 2:
        raise ValueError(f"b: expected a codebook of shape (m, D), got {tuple(b.shape)}")
    return dot_similarity(a, b) / a.shape[-1]


def fractional_power(base: torch.Tensor, x: torch.Tensor | float) -> torch.Tensor:
    """Fractional power encoding ``base ** x`` for unit-phasor ``base`` (D,) and scalars ``x`` (...,).

    Returns ``(..., D)``. ``fractional_power(b, x) * fractional_power(b, y) == fractional_power(b, x + y)``.
    """
    check_hv(base, "base")
    if base.ndim != 1:
        raise ValueError(f"base: expected one hypervector of shape (D,), got {tuple(base.shape)}")
    if isinstance(x, bool) or (isinstance(x, torch.Tensor) and (x.is_complex() or x.dtype == torch.bool)):
        raise TypeError(
            f"x: expected real coordinates, got {x.dtype if isinstance(x, torch.Tensor) else 'a bool'}"
        )
    try:
        x = torch.as_tensor(x, dtype=torch.float32, device=base.device)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"x: expected real coordinates (a number or a tensor), got {type(x).__name__}"
        ) from None
    if not torch.isfinite(x).all():
        raise ValueError("x: expected finite coordinates (NaN/inf found)")
    theta = torch.angle(base)
    return torch.polar(torch.ones(x.shape + base.shape, device=base.device), x[..., None] * theta)


def similarity_std(dim: int) -> float:
    """Theoretical std of the similarity of two independent atoms: ``sqrt(1 / (2 D))``."""
    return math.sqrt(1.0 / (2.0 * positive_int(dim, "dim")))


def recall_probability(dim: int, n_items: int, n_candidates: int, noise_var: float = 0.0) -> float:
    """Probability that one unbind + clean-up picks the right value (no explaining away).

    The message bundles ``n_items`` bound atoms; complex channel noise of variance ``noise_var`` per
    component (in units where each atom has power 1) is added. Unbinding one key leaves the
    value plus ``n_items - 1`` random phasors plus noise, so the right value's similarity is
    ``N(1, (n_items - 1 + noise_var) / (2 D))`` and each of the ``n_candidates - 1`` wrong values'
    is ``N(0, (n_items + noise_var) / (2 D))`` (independent, by the central limit theorem).
    ``P = E_z[Phi((1 + s1 z) / s0) ** (n_candidates - 1)]``, computed by Gauss-Hermite quadrature.
    """
    dim = positive_int(dim, "dim")
    n_items = positive_int(n_items, "n_items")
    n_candidates = positive_int(n_candidates, "n_candidates")
    noise_var = nonnegative_float(noise_var, "noise_var")
    if n_candidates == 1:
        return 1.0
    s1 = math.sqrt((n_items - 1 + noise_var) / (2.0 * dim))
    s0 = math.sqrt((n_items + noise_var) / (2.0 * dim))
    z, w = np.polynomial.hermite_e.hermegauss(80)
    phi = np.array([0.5 * (1.0 + math.erf((1.0 + s1 * zi) / (s0 * math.sqrt(2.0)))) for zi in z])
    return float(np.sum(w * phi ** (n_candidates - 1)) / math.sqrt(2.0 * math.pi))
