"""pgsb tests: every test runs with one torch thread (the layers are small; on a shared 2-core machine
more threads only contend)."""

import pytest

from paperworks.core import torch_threads


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield
