"""The vector-symbolic algebra of HSM: Fourier holographic reduced representations (FHRR).

A hypervector is a complex tensor of shape ``(..., D)`` whose atoms are unit phasors
``exp(i * theta)``, ``theta ~ U(-pi, pi]`` (Plate 1995, section 3.6; Plate 2003). The operations:

* binding ``a * b`` (elementwise complex product, phases add); exact inverse ``conj(a)`` for atoms;
* bundling ``sum_k a_k`` (superposition);
* similarity ``Re <a, b> / D`` (1 for equal atoms, mean 0 and variance ``1 / (2 D)`` for two
  independent atoms);
* fractional power encoding ``base ** x = exp(i * theta * x)``, so that
  ``base ** x * base ** d == base ** (x + d)``: translating a coordinate is a binding. This is what
  receiver-centric ego-binding uses to move positions from the sender's frame to the receiver's.

Why FHRR (and not MAP or HRR): its binding is exactly invertible for atoms (MAP's too, HRR's only
approximately), and unlike MAP's self-inverse bipolar binding it has fractional powers, which a
frame change (ego-binding) needs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = [
    "bind",
    "bundle",
    "fractional_power",
    "inverse",
    "random_atoms",
    "recall_probability",
    "similarity",
    "similarity_std",
    "unbind",
]


def _check_hv(x: torch.Tensor, name: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor hypervector, got {type(x).__name__}")
    if not torch.is_complex(x):
        raise TypeError(f"{name}: expected a complex FHRR hypervector, got dtype {x.dtype}")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"{name}: expected shape (..., D) with D >= 1, got {tuple(x.shape)}")


def _check_pair(a: torch.Tensor, b: torch.Tensor, names: tuple[str, str]) -> None:
    _check_hv(a, names[0])
    _check_hv(b, names[1])
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"dimension mismatch: {names[0]} has D={a.shape[-1]} but {names[1]} has D={b.shape[-1]}"
        )


def random_atoms(n: int, dim: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``n`` independent FHRR atoms, shape ``(n, dim)``, complex64 unit phasors."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected a positive int, got {n!r}")
    if not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim: expected a positive int, got {dim!r}")
    theta = (torch.rand(n, dim, generator=generator) * 2.0 - 1.0) * math.pi
    return torch.polar(torch.ones_like(theta), theta)


def bind(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """FHRR binding ``a * b`` (elementwise product); shapes ``(..., D)`` must match exactly."""
    _check_pair(a, b, ("a", "b"))
    if a.shape != b.shape:
        raise ValueError(
            f"bind: shapes must match (no silent broadcasting), got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    return a * b


def inverse(a: torch.Tensor) -> torch.Tensor:
    """Binding inverse: ``conj(a)``; exact for unit-phasor atoms (``a * conj(a) == 1``)."""
    _check_hv(a, "a")
    return a.conj()


def unbind(m: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """``m * conj(key)``: recovers ``v`` from ``key * v`` (plus crosstalk when ``m`` is a bundle)."""
    _check_pair(m, key, ("m", "key"))
    if m.shape != key.shape:
        raise ValueError(f"unbind: shapes must match, got m {tuple(m.shape)} and key {tuple(key.shape)}")
    return m * key.conj()


def bundle(x: torch.Tensor, dim: int = -2) -> torch.Tensor:
    """Superposition: sum of the hypervectors along ``dim`` (default: the stack axis of ``(..., n, D)``)."""
    _check_hv(x, "x")
    if x.ndim < 2:
        raise ValueError(f"x: expected a stack of hypervectors (..., n, D), got shape {tuple(x.shape)}")
    return x.sum(dim=dim)


def similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Pairwise similarity ``Re <a_i, b_j> / D``: ``a`` (..., n, D), ``b`` (m, D) -> (..., n, m)."""
    _check_pair(a, b, ("a", "b"))
    if b.ndim != 2:
        raise ValueError(f"b: expected a codebook of shape (m, D), got {tuple(b.shape)}")
    return (a @ b.conj().T).real / a.shape[-1]


def fractional_power(base: torch.Tensor, x: torch.Tensor | float) -> torch.Tensor:
    """Fractional power encoding ``base ** x`` for unit-phasor ``base`` (D,) and scalars ``x`` (...,).

    Returns ``(..., D)``. ``fractional_power(b, x) * fractional_power(b, y) == fractional_power(b, x + y)``.
    """
    _check_hv(base, "base")
    if base.ndim != 1:
        raise ValueError(f"base: expected one hypervector of shape (D,), got {tuple(base.shape)}")
    x = torch.as_tensor(x, dtype=torch.float32)
    if not torch.isfinite(x).all():
        raise ValueError("x: expected finite coordinates")
    theta = torch.angle(base)
    return torch.polar(torch.ones(x.shape + base.shape), x[..., None] * theta)


def similarity_std(dim: int) -> float:
    """Theoretical std of the similarity of two independent atoms: ``sqrt(1 / (2 D))``."""
    return math.sqrt(1.0 / (2.0 * dim))


def recall_probability(dim: int, n_items: int, n_candidates: int, noise_var: float = 0.0) -> float:
    """Probability that one unbind + clean-up picks the right value (no explaining away).

    The message bundles ``n_items`` bound atoms; complex channel noise of variance ``noise_var`` per
    component (in units where each atom has power 1) is added. Unbinding one key leaves the
    value plus ``n_items - 1`` random phasors plus noise, so the right value's similarity is
    ``N(1, (n_items - 1 + noise_var) / (2 D))`` and each of the ``n_candidates - 1`` wrong values'
    is ``N(0, (n_items + noise_var) / (2 D))`` (independent, by the central limit theorem).
    ``P = E_z[Phi((1 + s1 z) / s0) ** (n_candidates - 1)]``, computed by Gauss-Hermite quadrature.
    """
    if dim < 1 or n_items < 1 or n_candidates < 1 or noise_var < 0:
        raise ValueError(
            f"recall_probability: expected dim, n_items, n_candidates >= 1 and noise_var >= 0, "
            f"got {dim}, {n_items}, {n_candidates}, {noise_var}"
        )
    if n_candidates == 1:
        return 1.0
    s1 = math.sqrt((n_items - 1 + noise_var) / (2.0 * dim))
    s0 = math.sqrt((n_items + noise_var) / (2.0 * dim))
    z, w = np.polynomial.hermite_e.hermegauss(80)
    from math import erf

    phi = np.array([0.5 * (1.0 + erf((1.0 + s1 * zi) / (s0 * math.sqrt(2.0)))) for zi in z])
    return float(np.sum(w * phi ** (n_candidates - 1)) / math.sqrt(2.0 * math.pi))
