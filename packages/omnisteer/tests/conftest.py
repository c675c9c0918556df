import pytest
import torch

from paperworks.core import torch_threads


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):
        yield


@pytest.fixture(scope="session")
def tiny_lm():
    """A random tiny LlamaForCausalLM (transformers), eval mode."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=16,
        attn_implementation="eager",
    )
    return transformers.LlamaForCausalLM(cfg).eval()
