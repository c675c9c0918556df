"""Shared fixtures: a tiny random eager Llama (offline) and a word-level chat tokenizer."""

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_model():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(
        vocab_size=50,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg).eval()


WORDS = ["<pad>", "<s>", "</s>", "<unk>", "<system>", "<user>", "<assistant>"] + [f"w{i}" for i in range(30)]
TEMPLATE = "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} </s> {% endfor %}"


@pytest.fixture(scope="session")
def tiny_tokenizer():
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    tok = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>")
    )
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
    )
    fast.chat_template = TEMPLATE
    return fast
