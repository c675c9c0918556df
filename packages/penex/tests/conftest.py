"""One torch intra-op thread for the package's tests: the tensors and models are tiny, and several
threads only contend with each other (and with other processes) on a busy 2-core machine."""

import pytest

from paperworks.core import torch_threads


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    import torch  # noqa: F401  (torch_threads acts only once torch is imported)

    with torch_threads(1):
        yield
