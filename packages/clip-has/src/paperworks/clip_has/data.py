"""Generated data with a known hierarchy: Gaussian image embeddings, 32x32 images and captions.

**Hierarchical Gaussian embeddings** (:func:`hierarchical_gaussian_embeddings`). Latent: a cone
direction ``m_0 = cone * w`` (``w`` a uniform unit vector: CLIP-like embeddings share a mean
direction), one offset ``z_c ~ N(0, s_k^2 I_d / d)`` per non-root concept at depth ``k`` with
``s_k = decay^(k-1)``; the mean of leaf ``l`` is ``m_0 + sum_{c on the path to l} z_c``. Observed:
``n_l ~ U{lo..hi}`` images per leaf, ``u = normalise(mean_l + eps)``, ``eps ~ N(0, noise^2 I_d / d)``.

**Hierarchical images** (:func:`hierarchical_images`). Each tree level sets one visual factor of a
single object on a grey background: level 1 the hue (children spread over the colour wheel), level 2
the shape (disk, square, triangle, cross, ring, diamond), level 3 the size, level 4 a stripe texture;
a leaf above level ``k`` takes the factor's neutral value. Nuisances: position jitter, brightness,
background level and pixel noise. Images are (N, 3, 32, 32) float32 in [0, 1].

**Captions** (:func:`caption_tokens`). Concept ``c`` is one token of its own, inserted in templates
such as "a photo of <c>": the token says nothing about the hierarchy, so a random-init text encoder
sees none (unlike images, whose pixels carry it).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, nonnegative_float, positive_float, positive_int

from .hierarchy import Hierarchy, as_hierarchy

__all__ = [
    "TEMPLATES",
    "Captions",
    "caption_tokens",
    "child_rank",
    "hierarchical_gaussian_embeddings",
    "hierarchical_images",
]

TEMPLATES = (("a", "photo", "of", "{}"), ("an", "image", "of", "{}"), ("a", "picture", "of", "{}"))
SHAPES = ("disk", "square", "triangle", "cross", "ring", "diamond")


def child_rank(tree: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
    """(rank of each concept among its siblings, number of siblings incl. itself); root: (0, 1)."""
    rank = np.zeros(tree.n_nodes, dtype=np.int64)
    count = np.ones(tree.n_nodes, dtype=np.int64)
    for ch in tree.children:
        for k, c in enumerate(ch):
            rank[c], count[c] = k, len(ch)
    return rank, count


def _images_per_leaf(
    tree: Hierarchy, gen: np.random.Generator, per_leaf: int | tuple[int, int]
) -> np.ndarray:
    if isinstance(per_leaf, tuple):
        lo, hi = per_leaf
        positive_int(lo, "images_per_leaf[0]")
        if hi < lo:
            raise ValueError(f"images_per_leaf: expected lo <= hi, got {per_leaf}")
        counts = gen.integers(lo, hi + 1, size=tree.leaves.size)
    else:
        counts = np.full(tree.leaves.size, positive_int(per_leaf, "images_per_leaf"))
    return np.repeat(tree.leaves, counts)


def hierarchical_gaussian_embeddings(
    tree: object,
    rng: object = None,
    *,
    dim: int = 32,
    images_per_leaf: int | tuple[int, int] = (2, 10),
    decay: float = 0.7,
    cone: float = 1.0,
    noise: float = 0.3,
) -> tuple[np.ndarray, np.ndarray]:
    """Unit image embeddings (N, dim) and their leaf labels (N,) from the model in the module docstring."""
    tree = as_hierarchy(tree)
    gen = as_generator(rng)
    positive_int(dim, "dim")
    positive_float(decay, "decay")
    nonnegative_float(cone, "cone")
    nonnegative_float(noise, "noise")
    w = gen.normal(size=dim)
    m0 = cone * w / np.linalg.norm(w)
    scale = np.where(tree.depth > 0, decay ** (tree.depth - 1.0), 0.0)
    z = gen.normal(size=(tree.n_nodes, dim)) * (scale / np.sqrt(dim))[:, None]
    # node means in pre-order: a node's mean is its parent's plus its offset
    means = np.zeros((tree.n_nodes, dim))
    for c in tree.order:
        par = tree.parents[c]
        means[c] = (m0 if par < 0 else means[par]) + z[c]
    labels = _images_per_leaf(tree, gen, images_per_leaf)
    u = means[labels] + gen.normal(size=(labels.size, dim)) * noise / np.sqrt(dim)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u, labels


def _factor_levels(tree: Hierarchy) -> np.ndarray:
    """(n, 4) factor values in [0, 1) per concept for levels 1..4 (NaN where the path stops above)."""
    rank, count = child_rank(tree)
    out = np.full((tree.n_nodes, 4), np.nan)
    for c in tree.order:
        par = tree.parents[c]
        if par >= 0:
            out[c] = out[par]
            k = tree.depth[c] - 1
            if k < 4:
                out[c, k] = rank[c] / count[c]
    return out


def hierarchical_images(
    tree: object,
    rng: object = None,
    *,
    images_per_leaf: int | tuple[int, int] = 16,
    size: int = 32,
    jitter: int = 3,
    pixel_noise: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Images (N, 3, size, size) float32 in [0, 1] with a visual hierarchy, and leaf labels (N,)."""
    tree = as_hierarchy(tree)
    gen = as_generator(rng)
    positive_int(size, "size")
    nonnegative_float(pixel_noise, "pixel_noise")
    labels = _images_per_leaf(tree, gen, images_per_leaf)
    n = labels.size
    f = _factor_levels(tree)[labels]  # (n, 4)
    hue = np.where(np.isnan(f[:, 0]), 0.0, f[:, 0]) + gen.uniform(-0.02, 0.02, n)
    shape = np.where(np.isnan(f[:, 1]), 0, np.floor(np.nan_to_num(f[:, 1]) * len(SHAPES))).astype(int)
    s = size / 32.0
    radius = s * np.where(np.isnan(f[:, 2]), 8.5, 5.0 + 7.0 * np.nan_to_num(f[:, 2]))
    stripes = np.where(np.isnan(f[:, 3]), 0.0, np.nan_to_num(f[:, 3]))
    sat = np.where(np.isnan(f[:, 0]), 0.0, 0.85)
    rgb = np.array([colorsys.hsv_to_rgb(h % 1.0, sv, 0.95) for h, sv in zip(hue, sat)])
    rgb *= gen.uniform(0.85, 1.1, size=(n, 1))
    cx = size / 2 + gen.integers(-jitter, jitter + 1, n)
    cy = size / 2 + gen.integers(-jitter, jitter + 1, n)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    dx = xx[None] - cx[:, None, None]
    dy = yy[None] - cy[:, None, None]
    r = radius[:, None, None]
    masks = np.stack(
        [
            dx**2 + dy**2 <= r**2,  # disk
            (np.abs(dx) <= 0.85 * r) & (np.abs(dy) <= 0.85 * r),  # square
            (dy <= 0.8 * r) & (dy >= -r + 2 * np.abs(dx)),  # triangle
            ((np.abs(dx) <= 0.3 * r) | (np.abs(dy) <= 0.3 * r))
            & (np.abs(dx) <= r)
            & (np.abs(dy) <= r),  # cross
            (dx**2 + dy**2 <= r**2) & (dx**2 + dy**2 >= (0.55 * r) ** 2),  # ring
            np.abs(dx) + np.abs(dy) <= 1.1 * r,  # diamond
        ],
        axis=1,
    )  # (n, 6, H, W)
    mask = masks[np.arange(n), shape]  # (n, H, W)
    period = np.where(stripes > 0, 2.0 + 6.0 * (1 - stripes), np.inf)
    stripe = np.where(
        np.isfinite(period)[:, None, None],
        (np.floor((xx[None] + yy[None]) / (period[:, None, None] / 2)) % 2) == 0,
        True,
    )
    obj = mask & stripe
    background = gen.uniform(0.15, 0.3, size=(n, 1, 1, 1))
    img = np.broadcast_to(background, (n, 3, size, size)).copy()
    img = np.where(obj[:, None], rgb[:, :, None, None], img)
    img += gen.normal(scale=pixel_noise, size=img.shape)
    return np.clip(img, 0.0, 1.0).astype(np.float32), labels


@dataclass(frozen=True)
class Captions:
    """Token ids (n_nodes, n_templates, length), the vocabulary size and the words (index = id)."""

    tokens: np.ndarray
    vocab_size: int
    words: tuple[str, ...]

    def text(self, concept: int, template: int = 0) -> str:
        return " ".join(self.words[t] for t in self.tokens[concept, template] if t != 0)


def caption_tokens(tree: object, templates: tuple[tuple[str, ...], ...] = TEMPLATES) -> Captions:
    """Captions "a photo of <c>" etc.: template words, then one token per concept (id 0 is padding)."""
    tree = as_hierarchy(tree)
    if not templates:
        raise ValueError("templates: expected at least one template")
    words = ["<pad>"]
    for t in templates:
        if sum(w == "{}" for w in t) != 1:
            raise ValueError(f"templates: each template needs exactly one '{{}}', got {t}")
        for w in t:
            if w != "{}" and w not in words:
                words.append(w)
    offset = len(words)
    words.extend(f"<c{c}>" for c in range(tree.n_nodes))
    length = max(len(t) for t in templates)
    tokens = np.zeros((tree.n_nodes, len(templates), length), dtype=np.int64)
    for j, t in enumerate(templates):
        for k, w in enumerate(t):
            tokens[:, j, k] = offset + np.arange(tree.n_nodes) if w == "{}" else words.index(w)
    return Captions(tokens, len(words), tuple(words))
