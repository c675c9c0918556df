"""A minimal Adam (Kingma & Ba 2015) over a list of tensors.

``torch.optim`` imports ``torch._dynamo`` on first use, which costs 10-25 s on a busy 2-core machine,
longer than a quick reproduction may take; this update rule is the textbook one (bias-corrected first
and second moments, optional decoupled weight decay as in AdamW).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

__all__ = ["Adam"]


class Adam:
    """``Adam(params, lr, betas, eps, weight_decay)`` with ``zero_grad()`` and ``step()``."""

    def __init__(
        self,
        params: Iterable[torch.Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("params: expected at least one tensor that requires grad")
        if not lr > 0:
            raise ValueError(f"lr: expected a positive learning rate, got {lr!r}")
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam step over every parameter with a gradient (multi-tensor ``torch._foreach_*`` ops)."""
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        ps = [self.params[i] for i in live]
        gs = [p.grad for p in ps]
        ms = [self.m[i] for i in live]
        vs = [self.v[i] for i in live]
        torch._foreach_mul_(ms, b1)
        torch._foreach_add_(ms, gs, alpha=1 - b1)
        torch._foreach_mul_(vs, b2)
        torch._foreach_addcmul_(vs, gs, gs, value=1 - b2)
        if self.wd:
            torch._foreach_mul_(ps, 1 - self.lr * self.wd)
        # p -= lr * (m / c1) / (sqrt(v / c2) + eps), written as in torch.optim.Adam
        denom = torch._foreach_sqrt(vs)
        torch._foreach_div_(denom, c2**0.5)
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(ps, ms, denom, value=-self.lr / c1)
