"""Shared fixtures of the taskkv tests: a tiny word-level tokenizer with a chat template (offline)."""

import pytest

WORDS = ["<pad>", "<s>", "</s>", "<unk>", "<user>", "<assistant>", "<system>"] + [f"w{i}" for i in range(40)]
TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} </s> {% endfor %}"
    "{% if add_generation_prompt %}<assistant> {% endif %}"
)


@pytest.fixture(scope="session")
def tiny_tokenizer():
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    model = tokenizers.models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>")
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
    )
    fast.chat_template = TEMPLATE
    return fast
