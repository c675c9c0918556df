"""A tiny "omni" model: a real transformers decoder fed text tokens, image patches and audio frames.

``OmniModel.lm`` is a random-initialised ``LlamaForCausalLM`` (transformers, extra ``hf``); images and
audio enter through plain ``nn.Module`` encoders (two-layer MLPs per patch / frame) whose outputs
replace the placeholder tokens' embeddings (``inputs_embeds``). Steering hooks go on
``OmniModel.lm`` (``lm.model.layers[l]``), as on any transformers decoder.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import nn

from paperworks.core.validate import positive_float, positive_int

from .data import OmniWorld, Vocab

__all__ = ["OmniModel", "tiny_llama_config", "train_omni_model"]


def tiny_llama_config(vocab_size: int, hidden: int = 64, layers: int = 6, heads: int = 4, max_len: int = 32):
    """A small ``LlamaConfig`` (eager attention, untied embeddings)."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_len,
        tie_word_embeddings=False,
        attn_implementation="eager",
    )


class OmniModel(nn.Module):
    """``LlamaForCausalLM`` plus image and audio encoders; :meth:`logits` gives last-position logits."""

    def __init__(
        self, vocab: Vocab, patch_dim: int, frame_dim: int, hidden: int = 64, layers: int = 6, heads: int = 4
    ) -> None:
        super().__init__()
        from transformers import LlamaForCausalLM

        self.vocab = vocab
        self.patch_dim, self.frame_dim = (
            positive_int(patch_dim, "patch_dim"),
            positive_int(frame_dim, "frame_dim"),
        )
        self.lm = LlamaForCausalLM(tiny_llama_config(vocab.size, hidden, layers, heads))
        self.image_encoder = nn.Sequential(nn.Linear(patch_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.audio_encoder = nn.Sequential(nn.Linear(frame_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    def embed(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """``inputs_embeds`` ``(n, seq, hidden)``: token embeddings, patches/frames encoded in place."""
        ids, feats = batch["input_ids"], batch["features"]
        emb = self.lm.get_input_embeddings()(ids)
        length = feats.shape[1]
        img = self.image_encoder(feats[..., : self.patch_dim])
        aud = self.audio_encoder(feats[..., : self.frame_dim])
        content = emb[:, 2 : 2 + length]
        content = torch.where((ids[:, 2 : 2 + length] == self.vocab.PATCH)[..., None], img, content)
        content = torch.where((ids[:, 2 : 2 + length] == self.vocab.FRAME)[..., None], aud, content)
        return torch.cat([emb[:, :2], content, emb[:, 2 + length :]], dim=1)

    def logits(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Next-token logits at the last input position, ``(n, vocab)``."""
        out = self.lm(inputs_embeds=self.embed(batch), use_cache=False, logits_to_keep=1)
        return out.logits[:, -1]

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.logits(batch)


def train_omni_model(
    model: OmniModel,
    world: OmniWorld,
    rng,
    *,
    steps: int,
    batch_size: int = 256,
    lr: float = 3e-3,
    device: str = "cpu",
) -> list[float]:
    """Train the whole omni model (decoder and encoders) on ``world``'s labels (cross-entropy at the
    last position, AdamW, cosine-decayed learning rate); returns the losses. Leaves it in eval mode."""
    steps = positive_int(steps, "steps")
    lr = positive_float(lr, "lr")
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    losses = []
    for _ in range(steps):
        b = {k: v.to(device) for k, v in world.sample(batch_size, rng).items()}
        loss = F.cross_entropy(model.logits(b), b["label"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses
