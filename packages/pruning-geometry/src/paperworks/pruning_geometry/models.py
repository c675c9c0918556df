"""Tiny real ``transformers`` models (Llama architecture) and their training on the generated tasks.

- :func:`tiny_llama`: a random-initialised ``LlamaForCausalLM`` from a small ``LlamaConfig`` (eager
  attention, float32), the language model of :class:`~paperworks.pruning_geometry.tasks.SuccessorTask`.
- :class:`InContextRegressor`: a ``LlamaModel`` (decoder layers at ``.model.layers``, as in every
  ``*ForCausalLM``) between a linear read-in of the token features and a linear read-out of a scalar:
  the in-context regressor of :class:`~paperworks.pruning_geometry.tasks.PolynomialTask`.

Both are trained with ``torch.optim.AdamW`` (linear warm-up, cosine decay) on fresh samples every step.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import as_generator, positive_int

from .tasks import PolynomialTask, SuccessorTask

__all__ = [
    "InContextRegressor",
    "lm_accuracy",
    "lm_loss",
    "regression_accuracy",
    "regression_loss",
    "tiny_llama",
    "tiny_llama_config",
    "train_lm",
    "train_regressor",
]


def tiny_llama_config(
    vocab_size: int, *, hidden: int = 32, layers: int = 4, heads: int = 4, max_pos: int = 64
):
    """A small ``LlamaConfig`` (MLP width ``2 * hidden``, eager attention, untied embeddings)."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=positive_int(vocab_size, "vocab_size"),
        hidden_size=positive_int(hidden, "hidden"),
        intermediate_size=2 * hidden,
        num_hidden_layers=positive_int(layers, "layers"),
        num_attention_heads=positive_int(heads, "heads"),
        num_key_value_heads=heads,
        max_position_embeddings=positive_int(max_pos, "max_pos"),
        attn_implementation="eager",
        tie_word_embeddings=False,
        use_cache=False,
    )


def tiny_llama(vocab_size: int, *, hidden: int = 32, layers: int = 4, heads: int = 4, seed: int = 0):
    """A random-initialised ``LlamaForCausalLM`` (in eval mode) with :func:`tiny_llama_config`."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    model = LlamaForCausalLM(tiny_llama_config(vocab_size, hidden=hidden, layers=layers, heads=heads))
    return model.eval()


class InContextRegressor(nn.Module):
    """``read_out(LlamaModel(inputs_embeds=read_in(tokens)))``: a scalar prediction per position.

    ``forward(tokens)``: tokens ``(n, T, 2)`` -> predictions ``(n, T)``. ``.model.layers`` is the
    decoder's ModuleList, ``.config`` its ``LlamaConfig``.
    """

    def __init__(self, config) -> None:
        super().__init__()
        from transformers import LlamaModel

        self.config = config
        self.read_in = nn.Linear(2, config.hidden_size)
        self.model = LlamaModel(config)
        self.read_out = nn.Linear(config.hidden_size, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.model(inputs_embeds=self.read_in(tokens), use_cache=False).last_hidden_state
        return self.read_out(h).squeeze(-1)


def _schedule(step: int, steps: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def _train(
    model: nn.Module, loss_of: Callable[[], torch.Tensor], steps: int, lr: float, track
) -> list[float]:
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, betas=(0.9, 0.98))
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _schedule(s, steps, warmup))
    model.train()
    losses = []
    for _ in track(range(steps)):
        loss = loss_of()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def regression_loss(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the predictions at every ``x`` token (the training objective)."""
    pred = model(tokens)[:, 0::2]
    return ((pred - targets) ** 2).mean()


def regression_accuracy(model: nn.Module, tokens: torch.Tensor, targets: torch.Tensor, tol: float) -> float:
    """Fraction of prompts whose query prediction is within ``tol`` of ``y_q`` (one batched pass)."""
    with torch.inference_mode():
        pred = model(tokens)[:, -1]
    return float(((pred - targets[:, -1]).abs() <= tol).float().mean())


def train_regressor(
    task: PolynomialTask,
    *,
    layers: int,
    hidden: int = 32,
    heads: int = 4,
    steps: int = 300,
    batch: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    track=lambda it: it,
) -> InContextRegressor:
    """Train an :class:`InContextRegressor` on fresh ID prompts of ``task`` every step."""
    rng = as_generator(np.random.default_rng(seed))
    torch.manual_seed(seed)
    model = InContextRegressor(tiny_llama_config(1, hidden=hidden, layers=layers, heads=heads))

    def loss_of() -> torch.Tensor:
        tok, y = task.sample(batch, "id", rng)
        return regression_loss(model, tok, y)

    model.train_losses_ = _train(model, loss_of, positive_int(steps, "steps"), lr, track)
    return model


def lm_loss(model: nn.Module, ids: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy over the whole sequence ``ids + answer`` (a perplexity's log)."""
    full = torch.cat([ids, answers[:, None]], dim=1)
    logits = model(input_ids=full[:, :-1], use_cache=False).logits
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), full[:, 1:].reshape(-1))


def lm_accuracy(model: nn.Module, ids: torch.Tensor, answers: torch.Tensor) -> float:
    """Fraction of prompts whose argmax next token after ``=`` is the answer digit (one batched pass)."""
    with torch.inference_mode():
        logits = model(input_ids=ids, use_cache=False).logits[:, -1, :10]
    return float((logits.argmax(-1) == answers).float().mean())


def train_lm(
    task: SuccessorTask,
    *,
    layers: int,
    hidden: int = 32,
    heads: int = 4,
    steps: int = 300,
    batch: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    track=lambda it: it,
):
    """Train a :func:`tiny_llama` on ID sequences: whole-sequence next-token loss + the answer's loss."""
    rng = as_generator(np.random.default_rng(seed))
    model = tiny_llama(task.vocab_size, hidden=hidden, layers=layers, heads=heads, seed=seed)

    def loss_of() -> torch.Tensor:
        ids, ans = task.sample(batch, "id", rng)
        full = torch.cat([ids, ans[:, None]], dim=1)
        logits = model(input_ids=full[:, :-1], use_cache=False).logits
        every = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), full[:, 1:].reshape(-1))
        return every + nn.functional.cross_entropy(logits[:, -1], ans)

    model.train_losses_ = _train(model, loss_of, positive_int(steps, "steps"), lr, track)
    return model
