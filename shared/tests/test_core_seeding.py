import random
import sys
import types

import numpy as np
import pytest

from paperworks.core import choose_device, seed_everything, torch_threads


def test_seed_everything_returns_generator_and_seeds_random():
    g1 = seed_everything(5)
    a = random.random()
    g2 = seed_everything(5)
    assert a == random.random()
    np.testing.assert_array_equal(g1.normal(size=3), g2.normal(size=3))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_seed_everything_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed: expected a non-negative int"):
        seed_everything(bad)


def test_choose_device_is_cpu_or_cuda(monkeypatch):
    monkeypatch.delenv("PAPERWORKS_DEVICE", raising=False)
    assert choose_device() in ("cpu", "cuda")
    assert choose_device("cpu") == "cpu"


def test_torch_is_seeded_only_when_already_imported(monkeypatch):
    calls = []
    fake = types.SimpleNamespace(manual_seed=calls.append)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    seed_everything(3)
    assert calls == [] and "torch" not in sys.modules  # not imported by seeding
    monkeypatch.setitem(sys.modules, "torch", fake)
    seed_everything(4)
    assert calls == [4]


def test_torch_threads_sets_and_restores(monkeypatch):
    state = {"n": 4}
    fake = types.SimpleNamespace(
        get_num_threads=lambda: state["n"], set_num_threads=lambda n: state.update(n=n)
    )
    monkeypatch.setitem(sys.modules, "torch", fake)
    with pytest.raises(RuntimeError, match="inside"):
        with torch_threads(1):
            assert state["n"] == 1
            raise RuntimeError("inside")
    assert state["n"] == 4  # restored even on error
    monkeypatch.delitem(sys.modules, "torch")
    with torch_threads(2):  # no torch imported: nothing to do, nothing imported
        assert "torch" not in sys.modules
    with pytest.raises(ValueError, match="n: expected a positive int"):
        with torch_threads(0):
            pass
