import pytest
import torch

from paperworks.core import torch_threads


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):
        yield


@pytest.fixture(scope="session")
def tiny_lm():
    from paperworks.pruning_geometry.models import tiny_llama

    torch.manual_seed(0)
    model = tiny_llama(20, hidden=16, layers=4, heads=2, seed=3)
    # random init keeps layers near the identity; scale up so removals change predictions
    with torch.no_grad():
        for p in model.model.layers.parameters():
            if p.ndim == 2:
                p.mul_(20.0)
    return model


@pytest.fixture(scope="session")
def ids():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 20, (12, 7), generator=g)
