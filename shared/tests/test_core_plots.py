import sys

import pytest

from paperworks.core import optional_pyplot


def test_optional_pyplot_is_none_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    assert optional_pyplot() is None


def test_optional_pyplot_uses_agg_when_installed():
    pytest.importorskip("matplotlib")
    plt = optional_pyplot()
    assert plt is not None and plt.get_backend().lower() == "agg"
