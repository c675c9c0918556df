"""Small models run many times faster on one intra-op thread on a busy machine."""

import pytest
import torch

from paperworks.core import torch_threads


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    with torch_threads(1):
        yield
    assert torch.get_num_threads() >= 1
