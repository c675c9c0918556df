"""One torch intra-op thread and one BLAS thread for the whole session: the models are tiny, and more
threads only contend with each other on a busy 2-core machine."""

import pytest
from threadpoolctl import threadpool_limits

from paperworks.core import torch_threads


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch  # noqa: F401  (torch_threads acts only once torch is imported)

    with threadpool_limits(1), torch_threads(1):
        yield
