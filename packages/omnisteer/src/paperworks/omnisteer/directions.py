"""Refusal vectors per modality and layer, the golden refusal vector, and the dissolution profile.

Our reading of arXiv 2602.10161 (no full text public; see the README's Fidelity section):

- refusal vector (difference in means, Arditi et al. 2024): for modality ``m`` and layer ``l``,
  ``r_m^l = mean_i h^l(x_i^harmful, m) - mean_j h^l(x_j^harmless, m)`` at the last input position;
- mid-layer dissolution: ``||r_m^l||`` as a function of ``l``, per modality (non-text vectors shrink);
- golden refusal vector: stack the unit-normalised ``r_m^l`` of M >= 2 modalities as the columns of
  ``R^l`` (``d x M``), take its SVD ``R^l = U S V^T``; ``u^l = U[:, 0]`` signed so that
  ``u^l . r_text^l > 0``. Modal invariance: the energy share ``s_1^2 / sum_k s_k^2`` (1/M for
  orthogonal vectors, 1 for parallel ones) and the pairwise cosines of the ``r_m^l``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .hooks import _split, decoder_layers

__all__ = [
    "GoldenDirection",
    "golden_direction",
    "record_activations",
    "refusal_vector",
    "refusal_vectors_by_layer",
]


def _as_acts(x: Any, name: str) -> torch.Tensor:
    t = torch.as_tensor(x)
    if t.ndim != 2:
        raise ValueError(f"{name}: expected activations of shape (n, d), got {tuple(t.shape)}")
    if t.shape[0] == 0:
        raise ValueError(f"{name}: empty set of activations")
    if not torch.is_floating_point(t) or not torch.isfinite(t).all():
        raise ValueError(f"{name}: expected finite floating-point activations")
    return t


def refusal_vector(harmful: Any, harmless: Any) -> torch.Tensor:
    """``mean(harmful) - mean(harmless)``: the difference-in-means refusal vector, shape ``(d,)``.

    ``harmful``: ``(n1, d)``, ``harmless``: ``(n0, d)`` activations (one layer, last input position).
    Both sets must be non-empty and of one width; a zero vector (the two means coincide) is an error.
    """
    a, b = _as_acts(harmful, "harmful"), _as_acts(harmless, "harmless")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"harmful, harmless: widths differ ({a.shape[1]} vs {b.shape[1]})")
    r = a.double().mean(0) - b.double().mean(0)
    if float(r.norm()) == 0.0:
        raise ValueError("harmful, harmless: zero refusal vector (the two means coincide)")
    return r.to(a.dtype)


def refusal_vectors_by_layer(
    harmful: Mapping[int, Any], harmless: Mapping[int, Any]
) -> dict[int, torch.Tensor]:
    """``{layer: refusal_vector(harmful[layer], harmless[layer])}`` over the layers both hold."""
    if set(harmful) != set(harmless) or not harmful:
        raise ValueError(
            "harmful, harmless: expected the same non-empty layers, "
            f"got {sorted(harmful)} and {sorted(harmless)}"
        )
    return {layer: refusal_vector(harmful[layer], harmless[layer]) for layer in sorted(harmful)}


@contextmanager
def record_activations(
    model: nn.Module, layers: Sequence[int] | None = None, position: int | None = -1
) -> Iterator[dict[int, list[torch.Tensor]]]:
    """Record the output of decoder blocks during forward passes inside the block.

    Yields ``{layer: [tensor per forward pass]}``: ``(batch, d)`` at sequence index ``position``
    (default the last), or ``(batch, seq, d)`` when ``position`` is None. Detached copies.
    """
    blocks = decoder_layers(model)
    n = len(blocks)
    chosen = list(range(n)) if layers is None else list(layers)
    for layer in chosen:
        if isinstance(layer, bool) or not isinstance(layer, int) or not -n <= layer < n:
            raise ValueError(f"layers: {layer!r} out of range for a model with {n} decoder layers")
    chosen = sorted({layer % n for layer in chosen})
    store: dict[int, list[torch.Tensor]] = {layer: [] for layer in chosen}

    def make(layer: int) -> Callable[..., None]:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            h, _ = _split(output)
            store[layer].append((h if position is None else h[:, position]).detach().clone())

        return hook

    handles = []
    try:
        for layer in chosen:
            handles.append(blocks[layer].register_forward_hook(make(layer)))
        yield store
    finally:
        for handle in handles:
            handle.remove()


@dataclass(frozen=True)
class GoldenDirection:
    """The SVD of the stacked, unit-normalised per-modality refusal vectors at one layer.

    ``direction``: ``u`` (``(d,)``, unit, ``u . r_reference > 0``); ``singular_values``: ``(M,)``
    descending; ``energy_share``: ``s_1^2 / sum s_k^2``; ``cosines``: ``(M, M)`` pairwise cosines of the
    refusal vectors; ``modalities``: the column order; ``norms``: the raw ``||r_m||``;
    ``alignment``: the cosine of ``u`` with each ``r_m``.
    """

    direction: torch.Tensor
    singular_values: torch.Tensor
    energy_share: float
    cosines: torch.Tensor
    modalities: tuple[str, ...]
    norms: dict[str, float] = field(default_factory=dict)
    alignment: dict[str, float] = field(default_factory=dict)


def golden_direction(vectors: Mapping[str, Any], *, reference: str = "text") -> GoldenDirection:
    """The golden refusal vector of one layer from ``{modality: r_m (d,)}`` (>= 2 modalities).

    Columns are unit-normalised (so that a shrunken modality still counts: the direction, not the
    magnitude, is pooled), the first left singular vector is signed to agree with ``reference``.
    """
    if not isinstance(vectors, Mapping):
        raise TypeError(
            f"vectors: expected a mapping modality -> refusal vector, got {type(vectors).__name__}"
        )
    if len(vectors) < 2:
        raise ValueError(f"vectors: expected refusal vectors of at least two modalities, got {len(vectors)}")
    if reference not in vectors:
        raise ValueError(f"reference: {reference!r} is not one of the modalities {sorted(vectors)}")
    names = tuple(vectors)
    cols = []
    width = None
    norms = {}
    for name in names:
        v = torch.as_tensor(vectors[name]).double()
        if v.ndim != 1:
            raise ValueError(f"vectors[{name!r}]: expected a 1-d vector, got shape {tuple(v.shape)}")
        if width is None:
            width = v.shape[0]
        elif v.shape[0] != width:
            raise ValueError(f"vectors[{name!r}]: width {v.shape[0]} differs from {width}")
        if not torch.isfinite(v).all():
            raise ValueError(f"vectors[{name!r}]: NaN or inf entries")
        norm = float(v.norm())
        if norm == 0.0:
            raise ValueError(f"vectors[{name!r}]: zero refusal vector")
        norms[name] = norm
        cols.append(v / norm)
    r = torch.stack(cols, dim=1)  # (d, M)
    u, s, _ = torch.linalg.svd(r, full_matrices=False)
    g = u[:, 0]
    ref = cols[names.index(reference)]
    if float(g @ ref) < 0:
        g = -g
    energy = float(s[0] ** 2 / (s**2).sum())
    cos = r.T @ r
    return GoldenDirection(
        direction=g.to(torch.get_default_dtype()),
        singular_values=s,
        energy_share=energy,
        cosines=cos,
        modalities=names,
        norms=norms,
        alignment={name: float(g @ c) for name, c in zip(names, cols, strict=True)},
    )
