"""A tiny real ``transformers`` decoder (LlamaForCausalLM) trained on the generated agent tasks.

``transformers`` is imported lazily (it belongs to the ``kvpress`` extra). Training uses a small
hand-written Adam so that the first ``torch.optim`` import (which can pull in ``torch._dynamo`` and
cost many seconds on a busy machine) stays out of the quick run.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from .tasks import AgentTasks

__all__ = ["answer_accuracy", "tiny_llama", "train_agent_model"]


def tiny_llama(
    vocab_size: int, *, hidden: int = 64, layers: int = 2, heads: int = 4, seed: int = 0, max_pos: int = 512
):
    """A random-initialised ``LlamaForCausalLM`` with a small config (eager attention, float32)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if vocab_size < 2:
        raise ValueError(f"vocab_size: expected at least 2 tokens, got {vocab_size}")
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_pos,
        attn_implementation="eager",
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.eval()
    return model


def _adam(params: list[torch.Tensor], lr: float, betas=(0.9, 0.98), eps: float = 1e-8, wd: float = 0.0):
    state = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    t = 0

    def step(lr_now: float = lr) -> None:
        nonlocal t
        t += 1
        with torch.no_grad():
            for p, (m, v) in zip(params, state, strict=True):
                if p.grad is None:
                    continue
                g = p.grad
                m.mul_(betas[0]).add_(g, alpha=1 - betas[0])
                v.mul_(betas[1]).addcmul_(g, g, value=1 - betas[1])
                mh = m / (1 - betas[0] ** t)
                vh = v / (1 - betas[1] ** t)
                if wd:
                    p.mul_(1 - lr_now * wd)
                p.addcdiv_(mh, vh.sqrt().add_(eps), value=-lr_now)
                p.grad = None

    return step


def train_agent_model(
    model,
    tasks: AgentTasks,
    *,
    steps: int,
    batch: int = 64,
    lr: float = 3e-3,
    rng: np.random.Generator,
    track=lambda it, desc: it,
) -> list[float]:
    """Train ``model`` to predict the next action (the answer token after the query) from the full context.

    Cross-entropy on the answer token only; cosine learning-rate decay with a short warm-up. Returns the
    loss per step.
    """
    dev = next(model.parameters()).device
    ids = torch.as_tensor(np.concatenate([tasks.context, tasks.query], axis=1), device=dev)
    ans = torch.as_tensor(tasks.answer, device=dev)
    params = [p for p in model.parameters() if p.requires_grad]
    step_fn = _adam(params, lr, wd=0.01)
    losses = []
    model.train()
    steps_iter: Iterable[int] = track(range(steps), "train tiny Llama")
    for s in steps_iter:
        idx = torch.as_tensor(rng.integers(0, len(tasks), size=batch), device=dev)
        logits = model(input_ids=ids[idx], use_cache=False).logits[:, -1]
        loss = torch.nn.functional.cross_entropy(logits, ans[idx])
        loss.backward()
        warm = min(1.0, (s + 1) / 50)
        step_fn(lr * warm * 0.5 * (1 + np.cos(np.pi * s / steps)))
        losses.append(loss.detach())
    model.eval()
    return [float(v) for v in torch.stack(losses).cpu()]  # one host sync, not one per step


@torch.inference_mode()
def answer_accuracy(model, tasks: AgentTasks, batch: int = 256) -> np.ndarray:
    """Per-trajectory success (argmax next action == answer) with the full context, shape (n,)."""
    dev = next(model.parameters()).device
    ids = torch.as_tensor(np.concatenate([tasks.context, tasks.query], axis=1), device=dev)
    out = []
    for i in range(0, len(tasks), batch):
        out.append(
            model(input_ids=ids[i : i + batch], use_cache=False).logits[:, -1].argmax(-1).cpu().numpy()
        )
    return np.concatenate(out) == tasks.answer
