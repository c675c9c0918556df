"""Tiny transformers trained in-package on the goal-recall task: full, sliding-window and sink attention.

Every model is a random-initialised ``transformers.LlamaForCausalLM`` (eager attention, RoPE). The
*architecture* is the attention pattern it is trained (and run) with:

- ``full``: causal attention over the whole context (Llama-like);
- ``window``: a sliding window of ``window`` tokens in every layer (Mistral-like);
- ``sinks``: the window plus the first ``sinks`` tokens (StreamingLLM's attention sinks, trained in).

Training is supervised fine-tuning on the assistant tokens only (value and closer), AdamW with a
linear warm-up and cosine decay, under ``paperworks.core.torch_threads(1)`` by the caller.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import torch

from paperworks.core.validate import nonnegative_int, one_of, positive_float, positive_int

from .closure import window_closure
from .task import Episodes, GoalRecallTask

__all__ = ["ARCHITECTURES", "Architecture", "TrainConfig", "attention_pattern", "tiny_llama", "train_model"]

ARCHITECTURES = ("full", "window", "sinks")


@dataclass(frozen=True)
class Architecture:
    """One model variant: attention ``kind``, ``layers`` (depth), and the window/sinks it is trained with."""

    kind: str = "full"
    layers: int = 2
    window: int = 64
    sinks: int = 2
    hidden: int = 64
    heads: int = 4

    def __post_init__(self) -> None:
        one_of(self.kind, "kind", ARCHITECTURES)
        for k in ("layers", "window", "hidden", "heads"):
            positive_int(getattr(self, k), k)
        nonnegative_int(self.sinks, "sinks")
        if self.hidden % self.heads:
            raise ValueError(f"heads: expected a divisor of hidden={self.hidden}, got {self.heads}")

    @property
    def name(self) -> str:
        return f"{self.kind}-L{self.layers}"


@dataclass(frozen=True)
class TrainConfig:
    """SFT settings: ``steps`` of ``batch`` episodes with ``min_turns..max_turns`` turns, AdamW at ``lr``."""

    steps: int = 400
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.01
    warmup: int = 30
    min_turns: int = 1
    max_turns: int = 6

    def __post_init__(self) -> None:
        for k in ("steps", "batch", "min_turns", "max_turns"):
            positive_int(getattr(self, k), k)
        nonnegative_int(self.warmup, "warmup")
        positive_float(self.lr, "lr")
        if self.max_turns < self.min_turns:
            raise ValueError(f"max_turns: expected >= min_turns={self.min_turns}, got {self.max_turns}")


def tiny_llama(vocab_size: int, arch: Architecture, *, seed: int = 0, max_positions: int = 2048):
    """A random-initialised eager ``LlamaForCausalLM`` of the given depth and width (seeded)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=positive_int(vocab_size, "vocab_size"),
        hidden_size=arch.hidden,
        intermediate_size=2 * arch.hidden,
        num_hidden_layers=arch.layers,
        num_attention_heads=arch.heads,
        num_key_value_heads=arch.heads,
        max_position_embeddings=max_positions,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=5,
        tie_word_embeddings=True,
        initializer_range=0.1,  # larger than Llama's 0.02: breaks the lookup's saddle in ~150 steps
        attn_implementation="eager",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(cfg)
    return model


def compose_fact_embeddings(model, vocab) -> None:
    """Initialise each fact token's embedding as (key embedding + value embedding) / sqrt 2.

    An inductive bias (compositional token embeddings) so that a tiny model learns the one-hop lookup
    "query key -> fact token -> value" within a laptop budget; training then moves every embedding.
    """
    emb = model.get_input_embeddings().weight
    with torch.no_grad():
        k = torch.arange(vocab.n_keys).repeat_interleave(vocab.n_values)
        v = torch.arange(vocab.n_values).repeat(vocab.n_keys)
        ids = torch.as_tensor(vocab.fact(k.numpy(), v.numpy()))
        emb[ids] = (
            emb[torch.as_tensor(vocab.key(k.numpy()))] + emb[torch.as_tensor(vocab.value(v.numpy()))]
        ) / 2**0.5


def attention_pattern(model, arch: Architecture):
    """The context manager that gives ``model`` its architecture's attention (none for ``full``)."""
    if arch.kind == "full":
        return contextlib.nullcontext(model)
    return window_closure(model, arch.window, sinks=arch.sinks if arch.kind == "sinks" else 0)


def _batch(ep: Episodes, device) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(ep.tokens, device=device), torch.as_tensor(ep.loss_targets(), device=device)


def train_model(
    arch: Architecture,
    task: GoalRecallTask,
    cfg: TrainConfig,
    *,
    seed: int,
    device: str = "cpu",
    progress=None,
) -> tuple[torch.nn.Module, float]:
    """Train a tiny Llama with ``arch``'s attention on fresh episodes; returns (model, smoothed last loss).

    Every step draws ``cfg.batch`` new episodes (``rng(seed)``), with a number of turns uniform in
    ``[min_turns, max_turns]``; the loss is the cross-entropy of the generated tokens.
    """
    model = tiny_llama(task.vocab.size, arch, seed=seed)
    compose_fact_embeddings(model, task.vocab)
    model = model.to(device)
    model.train()
    rng = np.random.default_rng([seed, 7])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98))

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    loss_val = float("nan")
    ema = None
    with attention_pattern(model, arch):
        for step in range(cfg.steps):
            n_turns = int(rng.integers(cfg.min_turns, cfg.max_turns + 1))
            ids, tgt = _batch(task.sample(cfg.batch, n_turns, rng), device)
            logits = model(input_ids=ids).logits
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if step % 25 == 0 or step == cfg.steps - 1:
                loss_val = float(loss.detach())
                ema = loss_val if ema is None else 0.5 * ema + 0.5 * loss_val
                if progress is not None:
                    progress.log(f"train {arch.name}: step {step + 1}/{cfg.steps} loss {loss_val:.3f}")
    model.eval()
    return model, float(ema if ema is not None else loss_val)
