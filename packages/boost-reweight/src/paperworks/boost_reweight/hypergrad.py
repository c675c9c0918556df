"""BOOST's outer level: the hypergradient of the validation loss with respect to the head's parameters.

Bilevel problem (our reading; the paper's body was not readable):

    inner   theta*(phi) = argmin_theta  L_in(theta; phi) = mean_i w_i(phi) l_i(theta)
    outer   min_phi  L_val(theta*(phi))       (NLL on held-out *real* validation trajectories)

with ``w(phi) = n * softmax(h_phi(features) / T)`` (mean 1 over the batch). As in learning-to-reweight
(Ren et al. 2018, arXiv 1803.09050) and Meta-Weight-Net (Shu et al. 2019, arXiv 1902.07379),
``theta*`` is replaced by K unrolled look-ahead SGD steps ``theta_{k+1} = theta_k - alpha grad L_in``
from the current parameters, and ``d L_val(theta_K) / d phi`` is taken by differentiating through the
unrolled steps with :mod:`torch.func` (``functional_call`` + nested ``grad``: second order, exact for
the unrolled objective). :func:`hypergradient` is the functional form; :class:`TrajectoryReweighter`
wraps it around any ``nn.Module`` policy, a per-trajectory loss and a validation loader.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, grad

from paperworks.core.validate import nonnegative_float, positive_float, positive_int

from .weights import ReweightingHead, normalize_weights

__all__ = ["TrajectoryReweighter", "default_inputs", "hypergradient", "unrolled_val_loss"]

LossFn = Callable[[Any, Any], torch.Tensor]


def default_inputs(batch: Any) -> tuple[tuple, dict]:
    """How a batch is fed to the model: a mapping passes ``input_ids``/``attention_mask`` (a Hugging
    Face model) or ``inputs`` as keywords/positionals; a tensor or tuple passes its first element."""
    if isinstance(batch, Mapping):
        if "input_ids" in batch:
            return (), {k: batch[k] for k in ("input_ids", "attention_mask") if k in batch}
        if "inputs" in batch:
            return (batch["inputs"],), {}
        raise ValueError("batch: a mapping needs 'input_ids' or 'inputs' (or pass inputs_fn=)")
    if isinstance(batch, tuple | list):
        return (batch[0],), {}
    return (batch,), {}


def _logits_of(out: Any) -> Any:
    return getattr(out, "logits", out)


def unrolled_val_loss(
    model: nn.Module,
    loss_fn: LossFn,
    params: dict[str, torch.Tensor],
    weights: torch.Tensor,
    batch: Any,
    val_batch: Any,
    *,
    lookahead_lr: float,
    unroll_steps: int = 1,
    inputs_fn: Callable[[Any], tuple[tuple, dict]] = default_inputs,
    buffers: dict[str, torch.Tensor] | None = None,
) -> torch.Tensor:
    """``L_val(theta_K)`` after K look-ahead steps ``theta_{k+1} = theta_k - lr grad mean_i w_i l_i``.

    ``loss_fn(outputs, batch) -> (B,)`` per-trajectory losses (``outputs``: the model's output, or its
    ``.logits``); ``weights``: (B,) may carry a graph to the head; ``params``: name -> tensor (the
    starting point theta_0, treated as a constant). Differentiable in ``weights`` (and ``params``).
    """
    buffers = buffers or {}
    args, kwargs = inputs_fn(batch)
    vargs, vkwargs = inputs_fn(val_batch)

    def inner(p: dict[str, torch.Tensor], w: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, (p, buffers), args, kwargs)
        return (w * loss_fn(_logits_of(out), batch)).mean()

    g_inner = grad(inner)
    p = params
    for _ in range(unroll_steps):
        g = g_inner(p, weights)
        p = {k: p[k] - lookahead_lr * g[k] for k in p}
    out = functional_call(model, (p, buffers), vargs, vkwargs)
    return loss_fn(_logits_of(out), val_batch).mean()


def hypergradient(
    model: nn.Module,
    loss_fn: LossFn,
    head: nn.Module,
    features: torch.Tensor,
    batch: Any,
    val_batch: Any,
    *,
    lookahead_lr: float,
    unroll_steps: int = 1,
    temperature: float = 1.0,
    ess_penalty: float = 0.0,
    inputs_fn: Callable[[Any], tuple[tuple, dict]] = default_inputs,
) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """``(d L_val(theta_K) / d phi, L_val(theta_K))`` for the head's parameters phi (a dict like
    ``dict(head.named_parameters())``). ``features``: (B, d) features of ``batch``'s trajectories;
    the weights are ``B * softmax(head(features) / temperature)``. ``ess_penalty`` = lambda adds
    ``lambda * (mean_i w_i^2 - 1) = lambda * (B / ESS - 1)`` to the outer objective (the bound's
    effective-sample-size term; 0 = plain learning-to-reweight). The policy's parameters are not
    changed; the returned value is ``L_val(theta_K)`` without the penalty.
    """
    lr = positive_float(lookahead_lr, "lookahead_lr")
    k = positive_int(unroll_steps, "unroll_steps")
    temp = positive_float(temperature, "temperature")
    lam = nonnegative_float(ess_penalty, "ess_penalty")
    params = {n: p.detach() for n, p in model.named_parameters()}
    buffers = {n: b.detach() for n, b in model.named_buffers()}
    hbuf = {n: b.detach() for n, b in head.named_buffers()}
    phi = {n: p.detach() for n, p in head.named_parameters()}
    feats = features.detach()

    def outer(ph: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        logits = functional_call(head, (ph, hbuf), (feats,))
        w = feats.shape[0] * torch.softmax(logits / temp, dim=0)
        v = unrolled_val_loss(
            model,
            loss_fn,
            params,
            w,
            batch,
            val_batch,
            lookahead_lr=lr,
            unroll_steps=k,
            inputs_fn=inputs_fn,
            buffers=buffers,
        )
        return v + lam * ((w**2).mean() - 1.0), v.detach()

    g, value = grad(outer, has_aux=True)(phi)
    return g, value


class TrajectoryReweighter:
    """BOOST's reweighting head, trained on held-out real validation data, for any ``nn.Module`` policy.

    ``model``: the policy (its parameters are read, never written: the inner optimiser stays the
    user's); ``loss_fn(outputs, batch) -> (B,)``: per-trajectory loss (e.g. NLL of the agent's turns);
    ``val_loader``: an iterable of validation batches (cycled); ``feature_dim``: the width of the
    trajectory features given to :meth:`weights`/:meth:`step`. Each :meth:`step` takes one step of
    ``optimizer`` (SGD with momentum, as Meta-Weight-Net, or Adam) on the head along
    :func:`hypergradient` (K = ``unroll_steps`` look-ahead steps of size
    ``lookahead_lr``). :meth:`weights` gives mean-1 weights (no graph) for the inner loss;
    :meth:`export_weights` maps trajectory ids to weights normalised over the whole pool.
    """

    def __init__(
        self,
        model: nn.Module,
        loss_fn: LossFn,
        val_loader: Iterable[Any],
        *,
        feature_dim: int,
        head: nn.Module | None = None,
        hidden: int = 32,
        head_lr: float = 1e-2,
        lookahead_lr: float = 0.1,
        unroll_steps: int = 1,
        temperature: float = 1.0,
        ess_penalty: float = 0.0,
        inputs_fn: Callable[[Any], tuple[tuple, dict]] = default_inputs,
        optimizer: str = "sgd",
        momentum: float = 0.9,
        synthetic_ids: Iterable[Any] | None = None,
        val_ids: Iterable[Any] | None = None,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
        if not callable(loss_fn):
            raise TypeError("loss_fn: expected a callable (outputs, batch) -> per-trajectory losses (B,)")
        self.feature_dim = positive_int(feature_dim, "feature_dim")
        self.temperature = positive_float(temperature, "temperature")
        self.lookahead_lr = positive_float(lookahead_lr, "lookahead_lr")
        self.unroll_steps = positive_int(unroll_steps, "unroll_steps")
        self.ess_penalty = nonnegative_float(ess_penalty, "ess_penalty")
        positive_float(head_lr, "head_lr")
        val_batches = list(val_loader)
        if not val_batches:
            raise ValueError(
                "val_loader: the validation set is empty (BOOST's outer level needs real validation tasks)"
            )
        if synthetic_ids is not None and val_ids is not None:
            leaked = set(synthetic_ids) & set(val_ids)
            if leaked:
                some = sorted(map(str, leaked))[:5]
                raise ValueError(
                    f"val_ids: {len(leaked)} validation trajectories are also in the synthetic pool "
                    f"(e.g. {some})"
                )
        self.model, self.loss_fn, self.inputs_fn = model, loss_fn, inputs_fn
        self._val = val_batches
        self._val_iter = itertools.cycle(val_batches)
        p0 = next(iter(model.parameters()), None)
        self.head = head if head is not None else ReweightingHead(self.feature_dim, hidden, self.temperature)
        if p0 is not None:
            self.head.to(device=p0.device)
        if optimizer == "sgd":  # as Meta-Weight-Net: the step scales with the hypergradient itself
            self.optimizer = torch.optim.SGD(self.head.parameters(), lr=head_lr, momentum=momentum)
        elif optimizer == "adam":  # Adam rescales even a pure-noise hypergradient to steps of size lr
            self.optimizer = torch.optim.Adam(self.head.parameters(), lr=head_lr)
        else:
            raise ValueError(f"optimizer: expected 'sgd' or 'adam', got {optimizer!r}")
        self.last_val_loss = float("nan")

    def _check_features(self, features: torch.Tensor) -> torch.Tensor:
        if (
            not isinstance(features, torch.Tensor)
            or features.ndim != 2
            or features.shape[1] != self.feature_dim
        ):
            shape = tuple(features.shape) if isinstance(features, torch.Tensor) else type(features).__name__
            raise ValueError(f"features: expected a tensor of shape (B, {self.feature_dim}), got {shape}")
        if not bool(torch.isfinite(features).all()):
            raise ValueError("features: expected finite values (found NaN or inf)")
        return features

    @torch.no_grad()
    def weights(self, features: torch.Tensor, temperature: float | None = None) -> torch.Tensor:
        """(B, d) -> (B,) mean-1 weights for the inner loss (no graph)."""
        f = self._check_features(features)
        return normalize_weights(self.head(f), self.temperature if temperature is None else temperature)

    def step(self, batch: Any, features: torch.Tensor) -> float:
        """One outer step of the head along the hypergradient; returns ``L_val(theta_K)``."""
        f = self._check_features(features)
        g, value = hypergradient(
            self.model,
            self.loss_fn,
            self.head,
            f,
            batch,
            next(self._val_iter),
            lookahead_lr=self.lookahead_lr,
            unroll_steps=self.unroll_steps,
            temperature=self.temperature,
            ess_penalty=self.ess_penalty,
            inputs_fn=self.inputs_fn,
        )
        for n, p in self.head.named_parameters():
            p.grad = g[n].detach().clone()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.last_val_loss = float(value)
        return self.last_val_loss

    @torch.no_grad()
    def export_weights(
        self, ids: Iterable[Any], features: torch.Tensor, temperature: float | None = None
    ) -> dict[Any, float]:
        """Trajectory id -> weight, normalised to mean 1 over the given pool (e.g. every synthetic one)."""
        ids = list(ids)
        f = self._check_features(features)
        if len(ids) != f.shape[0]:
            raise ValueError(f"ids: expected {f.shape[0]} ids (one per feature row), got {len(ids)}")
        if len(set(ids)) != len(ids):
            raise ValueError("ids: expected unique trajectory ids")
        w = self.weights(f, temperature)
        return dict(zip(ids, w.tolist(), strict=True))
