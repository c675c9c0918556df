import pytest

from paperworks.core import torch_threads


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    with torch_threads(1):
        yield
