"""Baselines that remove as many layers as TALE: SLEB-like, block influence (ShortGPT), random.

- :func:`sleb_search`: SLEB (Song et al., arXiv 2402.09025) removes transformer blocks one at a time,
  each time the block whose removal gives the lowest perplexity on task-agnostic calibration text,
  re-evaluated on the current model; here ``loss_fn(model) -> float`` is that calibration loss
  (lower is better) and the search removes exactly ``n_remove`` blocks.
- :func:`block_influence`: ShortGPT (Men et al., arXiv 2403.03853) scores layer ``l`` by
  ``BI_l = 1 - mean_{i,t} cos(h_{l}[i, t], h_{l+1}[i, t])`` over calibration tokens (one forward pass) and
  removes the ``n`` layers of lowest BI at once (:func:`block_influence_removal`).
- :func:`random_removal`: ``n`` layers drawn uniformly without replacement.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import as_generator, nonnegative_int, positive_int

from .geometry import _batch_size, _call
from .layers import find_layers
from .tale import greedy_search

__all__ = ["block_influence", "block_influence_removal", "random_removal", "sleb_search"]


def sleb_search(
    model: nn.Module, loss_fn: Callable[[nn.Module], object], n_remove: int, *, layers_attr: str | None = None
) -> list[int]:
    """SLEB-like greedy removal of ``n_remove`` layers minimising ``loss_fn`` (a calibration loss)."""
    n_remove = nonnegative_int(n_remove, "n_remove")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn: expected a callable model -> float, got {type(loss_fn).__name__}")
    n = len(find_layers(model, layers_attr)[2])
    if n_remove > n - 1:
        raise ValueError(f"n_remove: expected at most {n - 1} (one layer must stay), got {n_remove}")
    if n_remove == 0:
        return []

    def score(m: nn.Module) -> float:
        from .tale import scalar_score

        return -scalar_score(loss_fn(m), "loss_fn")

    return greedy_search(model, score, max_remove=n_remove, min_gain=None, layers_attr=layers_attr).removed


@torch.inference_mode()
def block_influence(model: nn.Module, inputs, *, layers_attr: str | None = None) -> np.ndarray:
    """ShortGPT's block influence of every layer, shape ``(L,)``: ``1 - mean cos(h_in, h_out)``.

    ``inputs``: a tensor (``model(inputs)``) or a mapping of model kwargs (``model(**inputs)``), a
    batch of calibration sequences; the mean runs over every sequence and position.
    """
    if _batch_size(inputs) < 1:
        raise ValueError("inputs: expected a non-empty batch of calibration inputs")
    _, _, layers = find_layers(model, layers_attr)
    sims: list[float] = []

    def hook(module, args, kwargs, output):
        h = args[0] if args else kwargs["hidden_states"]
        out = output[0] if isinstance(output, tuple) else output
        cos = torch.nn.functional.cosine_similarity(h.double(), out.double(), dim=-1, eps=1e-12)
        sims.append(float(cos.mean()))

    handles = [layer.register_forward_hook(hook, with_kwargs=True) for layer in layers]
    try:
        _call(model, inputs)
    finally:
        for h in handles:
            h.remove()
    return 1.0 - np.array(sims)


def block_influence_removal(
    model: nn.Module, inputs, n_remove: int, *, layers_attr: str | None = None
) -> list[int]:
    """The ``n_remove`` layers of lowest block influence (ties: lower index first), ShortGPT's rule."""
    n_remove = nonnegative_int(n_remove, "n_remove")
    bi = block_influence(model, inputs, layers_attr=layers_attr)
    if n_remove > bi.size - 1:
        raise ValueError(f"n_remove: expected at most {bi.size - 1} (one layer must stay), got {n_remove}")
    return [int(i) for i in np.argsort(bi, kind="stable")[:n_remove]]


def random_removal(n_layers: int, n_remove: int, rng=None) -> list[int]:
    """``n_remove`` distinct layer indices of ``range(n_layers)`` drawn uniformly."""
    n_layers = positive_int(n_layers, "n_layers")
    n_remove = nonnegative_int(n_remove, "n_remove")
    if n_remove > n_layers - 1:
        raise ValueError(f"n_remove: expected at most {n_layers - 1} (one layer must stay), got {n_remove}")
    rng = as_generator(rng)
    return [int(i) for i in rng.choice(n_layers, size=n_remove, replace=False)]
