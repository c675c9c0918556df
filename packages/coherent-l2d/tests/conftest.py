"""One torch intra-op thread for the whole session: the models are tiny, and several threads only
contend with each other on a busy 2-core machine."""

import pytest

from paperworks.core import torch_threads


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    import torch  # noqa: F401  (torch_threads acts only once torch is imported)

    with torch_threads(1):
        yield
