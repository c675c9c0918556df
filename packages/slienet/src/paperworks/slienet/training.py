"""Training the multi-exit backbones: vanilla (final classifier only), SDN (ICs with the SDN weight
ramp) and SLIE (SDN ramp + light self-distillation), with one small hand-written optimiser.

The recipe is the authors' (their ``train_slienet``): SGD with Nesterov momentum 0.9 and weight
decay 1e-4, a cosine learning-rate schedule from 0.1 stepped once per epoch (``CosineAnnealingLR(T_max
= epochs)``: epoch ``e = 0..E-1`` runs at ``0.05 (1 + cos(pi e / E))``), and the IC weight ramp's
progress ``t = e / E`` with the 1-based epoch ``e = 1..E`` (constant within an epoch). The optimiser is
written out here in a few lines: creating the first ``torch.optim`` optimiser imports
``torch._dynamo`` and costs 10-25 s on a loaded 2-core machine, more than a quick run.

Training runs on the device of the model's parameters (``model.to(device)`` first); the batches are
drawn from a CPU generator seeded by ``seed``, so a seed gives the same batches on every device.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from paperworks.core import torch_threads, validate

from ._checks import as_images, as_labels, check_module
from .backbones import MultiExitNet
from .distill import sdn_ic_weights, self_distillation_loss

__all__ = ["NesterovSGD", "TrainConfig", "predict_all", "train_multi_exit"]

MODES = ("vanilla", "sdn", "slie")


@dataclass(frozen=True)
class TrainConfig:
    """``mode``: 'vanilla' (final CE only), 'sdn' (alpha = 0) or 'slie' (alpha, temperature).

    Defaults are the authors' (``lr`` 0.1, Nesterov ``momentum`` 0.9, ``weight_decay`` 1e-4,
    ``alpha`` 0.3, ``temperature`` 4) except ``epochs`` and ``batch_size`` (theirs: 100 and 128) and
    the augmentation: ``shift``, a random circular shift of up to that many pixels per batch (theirs:
    random crop with 4-pixel padding and horizontal flips per image). ``threads``: torch intra-op
    threads while training (restored after); 1 is much the fastest for laptop-scale models on a busy
    machine, ``None`` leaves torch's setting alone.
    """

    mode: str = "slie"
    epochs: int = 10
    batch_size: int = 64
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-4
    alpha: float = 0.3
    temperature: float = 4.0
    shift: int = 1
    threads: int | None = 1

    def __post_init__(self) -> None:
        validate.one_of(self.mode, "mode", MODES)
        validate.positive_int(self.epochs, "epochs")
        validate.positive_int(self.batch_size, "batch_size")
        validate.positive_float(self.lr, "lr")
        validate.fraction(self.momentum, "momentum", open_high=True)
        validate.nonnegative_float(self.weight_decay, "weight_decay")
        validate.fraction(self.alpha, "alpha")
        validate.positive_float(self.temperature, "temperature")
        validate.nonnegative_int(self.shift, "shift")
        if self.threads is not None:
            validate.positive_int(self.threads, "threads")


class NesterovSGD:
    """SGD with Nesterov momentum and L2 weight decay over ``params``."""

    def __init__(self, params: list[torch.Tensor], momentum: float = 0.9, weight_decay: float = 1e-4) -> None:
        if isinstance(params, torch.Tensor) or not isinstance(params, list | tuple):
            raise TypeError(
                f"params: expected a list of tensors (list(model.parameters())), got {type(params).__name__}"
            )
        for i, p in enumerate(params):
            if not isinstance(p, torch.Tensor):
                raise TypeError(f"params[{i}]: expected a torch.Tensor, got {type(p).__name__}")
        momentum = validate.fraction(momentum, "momentum", open_high=True)
        weight_decay = validate.nonnegative_float(weight_decay, "weight_decay")
        self.params = [p for p in params if p.requires_grad]
        self.bufs = [torch.zeros_like(p) for p in self.params]
        self.momentum = momentum
        self.weight_decay = weight_decay

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, lr: float) -> None:
        """One update with learning rate ``lr`` (>= 0) from the gradients in ``p.grad``."""
        lr = validate.nonnegative_float(lr, "lr")
        for p, b in zip(self.params, self.bufs, strict=True):
            if p.grad is None:
                continue
            g = p.grad.add(p, alpha=self.weight_decay)
            b.mul_(self.momentum).add_(g)
            p.sub_(g.add(b, alpha=self.momentum), alpha=lr)


def cosine_lr(base: float, step: int, total: int) -> float:
    """Cosine schedule from ``base`` to 0 over ``total`` steps (``CosineAnnealingLR``'s closed form)."""
    return 0.5 * base * (1 + math.cos(math.pi * min(step, total) / max(1, total)))


def _batches(n: int, batch_size: int, gen: torch.Generator) -> Iterator[torch.Tensor]:
    perm = torch.randperm(n, generator=gen)
    for s in range(0, n - batch_size + 1 if n >= batch_size else 1, batch_size):
        yield perm[s : s + batch_size]


def train_multi_exit(
    model: MultiExitNet,
    x: np.ndarray | torch.Tensor,
    y: np.ndarray | torch.Tensor,
    config: TrainConfig,
    *,
    seed: int = 0,
) -> MultiExitNet:
    """Train ``model`` in place on images ``x`` (N, C, S, S) and labels ``y`` (N,); returns it in eval mode.

    ``x`` must be finite and ``y`` hold class indices below ``model.num_classes``. Augmentation: a
    random circular shift of up to ``config.shift`` pixels per batch. Raises ``FloatingPointError``
    when the training loss stops being finite (checked once per epoch), instead of returning NaN
    weights.
    """
    check_module(model, "model", MultiExitNet)
    check_module(config, "config", TrainConfig)
    seed = validate.nonnegative_int(seed, "seed")
    xt = as_images(x, "x", in_channels=model.in_channels, image_size=model.image_size).float()
    yt = as_labels(y, "y", n=xt.shape[0], num_classes=model.num_classes)
    if config.threads is None:
        return _train(model, xt, yt, config, seed)
    with torch_threads(config.threads):
        return _train(model, xt, yt, config, seed)


def _train(
    model: MultiExitNet, xt: torch.Tensor, yt: torch.Tensor, config: TrainConfig, seed: int
) -> MultiExitNet:
    device = next(model.parameters()).device
    xt, yt = xt.to(device), yt.to(device)
    gen = torch.Generator().manual_seed(int(seed))
    opt = NesterovSGD(list(model.parameters()), config.momentum, config.weight_decay)
    costs = model.ic_costs
    model.train()
    for epoch in range(config.epochs):
        lr = cosine_lr(config.lr, epoch, config.epochs)  # stepped once per epoch, as the authors'
        progress = (epoch + 1) / config.epochs  # the authors' ep / epochs, ep = 1..E
        w = sdn_ic_weights(costs, progress)
        alpha = config.alpha if config.mode == "slie" else 0.0
        total = torch.zeros((), device=device)
        for idx in _batches(xt.shape[0], config.batch_size, gen):
            idx = idx.to(device)
            xb, yb = xt[idx], yt[idx]
            if config.shift:
                dx, dy = (int(v) for v in torch.randint(-config.shift, config.shift + 1, (2,), generator=gen))
                xb = torch.roll(xb, shifts=(dx, dy), dims=(2, 3))
            final, ics = model(xb)
            if config.mode == "vanilla":
                loss = F.cross_entropy(final, yb)
            else:
                loss = _ic_loss(final, ics, yb, w, alpha, config.temperature)
            opt.zero_grad()
            loss.backward()
            opt.step(lr)
            total = total + loss.detach()
        if not bool(torch.isfinite(total)):  # one host sync per epoch
            model.eval()
            raise FloatingPointError(
                f"train_multi_exit: the training loss stopped being finite in epoch {epoch + 1} of "
                f"{config.epochs} (mode {config.mode!r}, lr {config.lr:g}); lower config.lr"
            )
    model.eval()
    return model


def _ic_loss(
    final: torch.Tensor,
    ics: torch.Tensor,
    yb: torch.Tensor,
    w: torch.Tensor,
    alpha: float,
    temperature: float,
) -> torch.Tensor:
    """The training loop's call of the checked :func:`self_distillation_loss` on inputs it built itself."""
    return self_distillation_loss(
        final, ics, yb, w.to(final), alpha=alpha, temperature=temperature, check=False
    )


@torch.no_grad()
def predict_all(
    model: MultiExitNet, x: np.ndarray | torch.Tensor, batch_size: int = 512
) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax outputs of the final classifier ``(N, C)`` and of every IC ``(K, N, C)``, in eval mode.

    Runs on the model's device in chunks of ``batch_size`` images; returns CPU tensors.
    """
    check_module(model, "model", MultiExitNet)
    batch_size = validate.positive_int(batch_size, "batch_size")
    xt = as_images(x, "x", in_channels=model.in_channels, image_size=model.image_size).float()
    device = next(model.parameters()).device
    model.eval()
    finals, ics = [], []
    for s in range(0, xt.shape[0], batch_size):
        f, i = model(xt[s : s + batch_size].to(device))
        finals.append(F.softmax(f, -1).cpu())
        ics.append(F.softmax(i, -1).cpu())
    return torch.cat(finals), torch.cat(ics, dim=1)
