"""Hooks on Hugging Face causal LMs (eager attention): GAR extraction, window and force closure.

Works on any ``transformers`` decoder whose attention modules are named ``...self_attn`` / ``...attn``,
take ``attention_mask`` as a keyword (the additive float mask, shape (B, 1, Tq, Tk)) and return
``(attn_output, attn_weights)`` (Llama, Mistral, Qwen2, Gemma, ... with ``attn_implementation="eager"``).

- :func:`window_closure` / :func:`force_closure`: context managers adding a closing mask to every
  layer's attention mask (forward pre-hooks); they stack, and leave the model untouched on exit;
- :func:`record_goal_mass`: records per layer the goal mass of every row, (B, H, Tq), reduced inside
  the hook, so the (B, H, Tq, Tk) attention matrices are never kept (unlike ``output_attentions=True``);
- :func:`gar`: one forward pass and the per-layer GAR of the selected rows.

A query always keeps its own key (the diagonal), so no row is ever fully masked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from paperworks.core.validate import nonnegative_int, positive_int

from .gar import _rows, goal_mass
from .masks import _check_goal_mask, additive

__all__ = [
    "GoalMassRecord",
    "attention_modules",
    "force_closure",
    "gar",
    "record_goal_mass",
    "require_eager",
    "window_closure",
]


def require_eager(model: nn.Module) -> None:
    """Raise unless ``model`` runs eager attention (the only one exposing weights and custom masks)."""
    cfg = getattr(model, "config", None)
    impl = getattr(cfg, "_attn_implementation", None)
    if impl != "eager":
        raise ValueError(
            f"attn_implementation: expected a model loaded with attn_implementation='eager' "
            f"(attention weights and custom masks), got {impl!r}"
        )


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """The attention modules of a Hugging Face decoder, in layer order."""
    require_eager(model)
    mods = [
        m
        for name, m in model.named_modules()
        if name.split(".")[-1] in ("self_attn", "attn") and type(m).__name__.endswith("Attention")
    ]
    if not mods:
        raise ValueError("model: found no attention modules named 'self_attn' or 'attn'")
    return mods


def _query_positions(kwargs: dict, q_len: int, k_len: int, device) -> torch.Tensor:
    cp = kwargs.get("cache_position")
    if cp is not None and cp.numel() == q_len:
        return cp.to(device)
    return torch.arange(k_len - q_len, k_len, device=device)


def _install(model: nn.Module, allowed_fn) -> list:
    """Pre-hooks that add ``additive(allowed_fn(q_pos, k_len, batch))`` to each layer's mask."""

    def hook(module, args, kwargs):
        hs = kwargs.get("hidden_states", args[0] if args else None)
        if hs is None:
            raise ValueError("model: attention called without hidden_states; cannot close its attention")
        B, q_len = hs.shape[0], hs.shape[1]
        mask = kwargs.get("attention_mask")
        if mask is None:
            k_len = q_len
            past = kwargs.get("past_key_values")
            if past is not None and hasattr(past, "get_seq_length"):
                k_len = q_len + int(past.get_seq_length(module.layer_idx))
            q_pos = _query_positions(kwargs, q_len, k_len, hs.device)
            base = additive(torch.arange(k_len, device=hs.device)[None, :] <= q_pos[:, None], hs.dtype)[
                None, None
            ]
        else:
            if mask.dtype == torch.bool:
                mask = additive(mask, hs.dtype)
            base, k_len = mask, mask.shape[-1]
            q_pos = _query_positions(kwargs, q_len, k_len, hs.device)
        allowed = allowed_fn(q_pos, k_len, B)  # (B or 1, q, k) bool
        diag = torch.arange(k_len, device=hs.device)[None, :] == q_pos[:, None]
        allowed = allowed | diag[None]
        kwargs["attention_mask"] = base + additive(allowed, base.dtype)[:, None]
        return args, kwargs

    return [m.register_forward_pre_hook(hook, with_kwargs=True) for m in attention_modules(model)]


@contextmanager
def _hooked(handles: list) -> Iterator[None]:
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextmanager
def window_closure(model: nn.Module, window: int, *, sinks: int = 0) -> Iterator[nn.Module]:
    """Inside the block each query attends only to its last ``window`` tokens (and the first ``sinks``).

    The mask of :func:`paperworks.goal_accessibility.masks.window_mask` applied in every layer: a
    sliding-window (Mistral-like) model, or StreamingLLM's sinks + window with ``sinks > 0``.
    """
    window = positive_int(window, "window")
    sinks = nonnegative_int(sinks, "sinks")

    def allowed(q_pos, k_len, B):
        kj = torch.arange(k_len, device=q_pos.device)
        d = q_pos[:, None] - kj[None, :]
        return ((d >= 0) & ((d < window) | (kj[None, :] < sinks)))[None]

    with _hooked(_install(model, allowed)):
        yield model


@contextmanager
def force_closure(model: nn.Module, goal_mask, from_pos) -> Iterator[nn.Module]:
    """Inside the block queries at positions ``>= from_pos`` cannot attend to the goal columns.

    ``goal_mask``: (B, T) bool over key positions (T >= every forward's key length is not required:
    columns beyond T are never goal); ``from_pos``: an int or (B,) positions (per-episode t0).
    """
    g = _check_goal_mask(goal_mask)
    fp = torch.as_tensor(from_pos).reshape(-1).to(g.device)
    if fp.numel() not in (1, g.shape[0]):
        raise ValueError(f"from_pos: expected an int or {g.shape[0]} positions, got {fp.numel()}")
    if (fp < 0).any():
        raise ValueError(f"from_pos: expected positions >= 0, got {int(fp.min())}")

    def allowed(q_pos, k_len, B):
        if B != g.shape[0]:
            raise ValueError(f"goal_mask: expected batch {B} to match the input, got {g.shape[0]}")
        gk = torch.zeros(B, k_len, dtype=torch.bool, device=q_pos.device)
        n = min(k_len, g.shape[1])
        gk[:, :n] = g[:, :n].to(q_pos.device)
        closed = (q_pos[None, :] >= fp.to(q_pos.device)[:, None])[:, :, None] & gk[:, None, :]
        return ~closed

    with _hooked(_install(model, allowed)):
        yield model


class GoalMassRecord:
    """What :func:`record_goal_mass` fills: ``masses[l]`` is (B, H, Tq) for each forward of layer ``l``."""

    def __init__(self) -> None:
        self.masses: list[torch.Tensor] = []

    def stacked(self) -> torch.Tensor:
        """(L, B, H, Tq) of the last forward pass."""
        if not self.masses:
            raise RuntimeError("no forward pass was recorded")
        return torch.stack(self.masses)


@contextmanager
def record_goal_mass(model: nn.Module, goal_mask, *, normalize: bool = False) -> Iterator[GoalMassRecord]:
    """Record every layer's per-row goal mass during the forward passes inside the block."""
    g = _check_goal_mask(goal_mask)
    mods = attention_modules(model)
    rec = GoalMassRecord()

    def hook(module, args, kwargs, output):
        w = output[1] if isinstance(output, tuple) and len(output) > 1 else None
        if w is None:
            raise ValueError(
                "attn_implementation: the attention returned no weights; load the model with 'eager'"
            )
        if module is mods[0]:
            rec.masses.clear()
        rec.masses.append(goal_mass(w.detach(), g.to(w.device)[:, : w.shape[-1]], normalize=normalize))

    handles = [m.register_forward_hook(hook, with_kwargs=True) for m in mods]
    with _hooked(handles):
        yield rec


@torch.inference_mode()
def gar(
    model: nn.Module, input_ids: torch.Tensor, goal_mask, rows=None, *, normalize: bool = False
) -> torch.Tensor:
    """(L,) per-layer GAR of one forward pass of ``model`` on ``input_ids`` (B, T).

    ``goal_mask``: (B, T) bool; ``rows``: (B, T) bool, the generated tokens' rows (default: every row
    after the last goal position of each episode). Compose with :func:`window_closure` /
    :func:`force_closure` to measure GAR under closure.
    """
    ids = torch.as_tensor(input_ids)
    if ids.ndim != 2:
        raise ValueError(f"input_ids: expected shape (batch, seq_len), got {tuple(ids.shape)}")
    g = _check_goal_mask(goal_mask)
    if tuple(g.shape) != tuple(ids.shape):
        raise ValueError(f"goal_mask: expected shape {tuple(ids.shape)} like input_ids, got {tuple(g.shape)}")
    if rows is None:
        last = g.shape[1] - 1 - torch.argmax(g.flip(1).to(torch.int8), dim=1)
        r = torch.arange(g.shape[1])[None, :] > last[:, None]
    else:
        r = _rows(rows, *ids.shape, ids.device)
    dev = next(model.parameters()).device
    with record_goal_mass(model, g.to(dev), normalize=normalize) as rec:
        model(input_ids=ids.to(dev))
    m = rec.stacked()  # (L, B, H, T)
    return m.mean(2)[:, r.to(m.device)].mean(1)
