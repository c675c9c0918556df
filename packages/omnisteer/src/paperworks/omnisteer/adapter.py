"""OmniSteer: golden directions with an adapter that sets the steering strength per input and position.

At each steered layer ``l`` (our reading of arXiv 2602.10161; the paper's adapter is not public):

``h^l <- h^l + alpha_phi^l(h^l) u^l``, with
``alpha_phi^l(h) = alpha_max * sigmoid(w_2^T tanh(W_1 rms(h) + b_1) + b_2)``

with ``rms(h) = h / sqrt(mean(h^2))`` (scale-free input), ``u^l`` the unit golden refusal vector and
``alpha_max > 0`` the bound. With ``pooling="mean"`` the adapter reads the mean of ``rms(h_t)`` over the
sequence positions of the forward pass and sets one strength per input, used at every position
(a prompt-level strength; ``pooling="position"`` sets one strength per position from ``h_t`` alone).
The adapter (a few thousand parameters) is trained with the base model
frozen: cross-entropy towards the refusal token on harmful inputs plus ``kl_weight`` times
``KL(p_base || p_steered)`` of the next-token distribution on harmless ones (:func:`omnisteer_loss`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from paperworks.core.validate import nonnegative_float, positive_float, positive_int

from .hooks import check_directions, decoder_layers, steer

__all__ = [
    "OmniSteer",
    "PrefixCache",
    "StrengthAdapter",
    "cache_prefix",
    "from_layer",
    "suffix_logits",
    "load_steering",
    "omnisteer_loss",
    "save_steering",
    "train_adapter",
]


class StrengthAdapter(nn.Module):
    """Per-layer bounded strength ``alpha^l(h) in (0, alpha_max)``.

    ``forward(h (b, s, d), layer) -> (b, s)``. ``pooling``: ``"position"`` (a strength per position
    from that position's ``h_t``) or ``"mean"`` (one strength per input from the mean over the
    positions of the forward pass of ``rms(h_t)``, broadcast over the positions; no padding mask is
    seen, so batch unpadded prompts, and under a KV cache each new forward pass pools its own
    positions only).
    """

    POOLINGS = ("position", "mean")

    def __init__(
        self,
        hidden_size: int,
        layers: Sequence[int],
        alpha_max: float,
        width: int = 16,
        init_bias: float = -3.0,
        pooling: str = "position",
    ) -> None:
        super().__init__()
        if pooling not in self.POOLINGS:
            raise ValueError(f"pooling: expected one of {self.POOLINGS}, got {pooling!r}")
        self.pooling = pooling
        self.hidden_size = positive_int(hidden_size, "hidden_size")
        self.alpha_max = positive_float(alpha_max, "alpha_max")
        self.width = positive_int(width, "width")
        layers = tuple(int(x) for x in layers)
        if not layers or len(set(layers)) != len(layers) or min(layers) < 0:
            raise ValueError(f"layers: expected distinct non-negative layer indices, got {layers}")
        self.layers = layers
        self.nets = nn.ModuleDict()
        for layer in layers:
            net = nn.Sequential(nn.Linear(hidden_size, width), nn.Tanh(), nn.Linear(width, 1))
            nn.init.zeros_(net[2].weight)
            nn.init.constant_(net[2].bias, float(init_bias))
            self.nets[str(layer)] = net

    def forward(self, h: torch.Tensor, layer: int) -> torch.Tensor:
        if h.shape[-1] != self.hidden_size:
            raise ValueError(f"h: width {h.shape[-1]} != adapter hidden_size {self.hidden_size}")
        key = str(int(layer))
        if key not in self.nets:
            raise ValueError(f"layer: {layer} is not one of the adapter's layers {self.layers}")
        x = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        if self.pooling == "mean":
            a = self.nets[key](x.mean(-2)).squeeze(-1)  # (b,)
            return (self.alpha_max * torch.sigmoid(a))[..., None].expand(h.shape[:-1])
        return self.alpha_max * torch.sigmoid(self.nets[key](x).squeeze(-1))


class OmniSteer(nn.Module):
    """Golden refusal directions ``{layer: u^l}`` (stored unit) and a :class:`StrengthAdapter`.

    ``with omni.apply(model): model(...)`` steers ``model`` (a transformers decoder, eval mode).
    """

    def __init__(
        self, directions: Mapping[int, Any], alpha_max: float, width: int = 16, pooling: str = "position"
    ) -> None:
        super().__init__()
        if not isinstance(directions, Mapping) or not directions:
            raise ValueError("directions: expected a non-empty mapping layer -> direction")
        dirs = {}
        width_d = None
        for layer, v in directions.items():
            if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
                raise ValueError(f"directions: layer keys must be non-negative ints, got {layer!r}")
            t = torch.as_tensor(v, dtype=torch.get_default_dtype())
            if t.ndim != 1 or not torch.isfinite(t).all() or float(t.norm()) == 0.0:
                raise ValueError(f"directions[{layer}]: expected a finite non-zero 1-d vector")
            if width_d is None:
                width_d = t.shape[0]
            elif t.shape[0] != width_d:
                raise ValueError(f"directions[{layer}]: width {t.shape[0]} differs from {width_d}")
            dirs[layer] = t / t.norm()
        self.layers = tuple(sorted(dirs))
        for layer in self.layers:
            self.register_buffer(f"u_{layer}", dirs[layer])
        self.adapter = StrengthAdapter(int(width_d), self.layers, alpha_max, width, pooling=pooling)

    @property
    def directions(self) -> dict[int, torch.Tensor]:
        return {layer: getattr(self, f"u_{layer}") for layer in self.layers}

    @contextmanager
    def apply(self, model: nn.Module) -> Iterator[list[Any]]:
        """Steer ``model`` inside the block (hooks removed on exit)."""
        check_directions(model, self.directions)
        with steer(model, self.directions, self.adapter) as handles:
            yield handles


def omnisteer_loss(
    harmful_logits: torch.Tensor,
    refusal_token: int,
    harmless_logits: torch.Tensor,
    harmless_base_logits: torch.Tensor,
    kl_weight: float = 1.0,
) -> torch.Tensor:
    """``CE(harmful_logits, refusal) + kl_weight * KL(softmax(base) || softmax(steered))`` (means).

    Logits are the steered model's next-token logits at the last input position, ``(n, V)``;
    ``harmless_base_logits`` come from the unsteered model (no gradient needed).
    """
    if (
        harmful_logits.ndim != 2
        or harmless_logits.ndim != 2
        or harmless_logits.shape != harmless_base_logits.shape
    ):
        raise ValueError("logits: expected (n, V) harmful logits and two (m, V) harmless logits of one shape")
    target = torch.full((harmful_logits.shape[0],), int(refusal_token), device=harmful_logits.device)
    ce = F.cross_entropy(harmful_logits, target)
    kl = F.kl_div(
        F.log_softmax(harmless_logits, -1),
        F.log_softmax(harmless_base_logits.detach(), -1),
        log_target=True,
        reduction="batchmean",
    )
    return ce + float(kl_weight) * kl


def _n_rows(batch: Mapping[str, torch.Tensor], name: str) -> int:
    if not isinstance(batch, Mapping) or not batch:
        raise ValueError(f"{name}: expected a non-empty mapping of tensors")
    sizes = {int(v.shape[0]) for v in batch.values()}
    if len(sizes) != 1:
        raise ValueError(f"{name}: tensors disagree on the number of rows ({sorted(sizes)})")
    n = sizes.pop()
    if n == 0:
        raise ValueError(f"{name}: empty set")
    return n


@contextmanager
def from_layer(model: nn.Module, start: int) -> Iterator[nn.Module]:
    """Inside the block ``model`` runs only its decoder blocks ``start, start + 1, ...``.

    ``model(inputs_embeds=h)`` then treats ``h`` as the hidden states entering block ``start``. Hooks
    already registered on those blocks (e.g. by :func:`~paperworks.omnisteer.hooks.steer`) still
    fire. For decoders that feed ``inputs_embeds`` to the first block unchanged (Llama, Qwen2,
    Mistral; not Gemma, which rescales them); :func:`cache_prefix` checks this on a few rows.
    """
    layers = decoder_layers(model)
    n = len(layers)
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < n:
        raise ValueError(f"start: expected a layer index in [0, {n}), got {start!r}")
    owner = model.model if getattr(getattr(model, "model", None), "layers", None) is layers else model
    owner.layers = nn.ModuleList(list(layers)[start:])
    try:
        yield model
    finally:
        owner.layers = layers


def suffix_logits(model: nn.Module, hidden: torch.Tensor, start: int) -> torch.Tensor:
    """Last-position next-token logits ``(n, V)`` of a ``*ForCausalLM`` run from block ``start`` on
    ``hidden`` ``(n, seq, d)``, the hidden states entering that block (unpadded, causal)."""
    with from_layer(model, start):
        out = model(inputs_embeds=hidden, use_cache=False, logits_to_keep=1)
    return out.logits[:, -1]


@dataclass(frozen=True)
class PrefixCache:
    """The unsteered model's hidden states entering block ``start`` for the adapter's training sets,
    and its harmless last-position logits (the KL target); see :func:`cache_prefix`."""

    start: int
    harmful: torch.Tensor
    harmless: torch.Tensor
    harmless_base_logits: torch.Tensor


def cache_prefix(
    model: nn.Module,
    logits_fn: Callable[[Mapping[str, torch.Tensor]], torch.Tensor],
    harmful: Mapping[str, torch.Tensor],
    harmless: Mapping[str, torch.Tensor],
    start: int,
    *,
    chunk: int = 256,
) -> PrefixCache:
    """Run the unsteered ``model`` (a ``*ForCausalLM``, eval mode) once over both training sets under
    ``torch.inference_mode`` and keep the hidden states entering block ``start``.

    Steering at blocks ``>= start`` cannot change them, so :func:`train_adapter` with ``prefix=`` runs
    only the blocks from ``start`` on in each step. ``logits_fn`` as in :func:`train_adapter`. Raises
    if the suffix pass does not reproduce ``logits_fn`` on the first rows (a decoder that transforms
    ``inputs_embeds``, or a ``logits_fn`` that is not the model's last-position logits).
    """
    n1, n0 = _n_rows(harmful, "harmful"), _n_rows(harmless, "harmless")
    if model.training:
        raise RuntimeError("model: steering a model in training mode; call model.eval() first")
    layers = decoder_layers(model)
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < len(layers):
        raise ValueError(f"start: expected a layer index in [0, {len(layers)}), got {start!r}")
    got: list[torch.Tensor] = []

    def grab(module: nn.Module, args: Any, kwargs: Any) -> None:
        got.append(args[0] if args else kwargs["hidden_states"])

    def run(batch: Mapping[str, torch.Tensor], n: int, want_logits: bool):
        states, logits = [], []
        for i in range(0, n, chunk):
            got.clear()
            out = logits_fn({k: v[i : i + chunk] for k, v in batch.items()})
            states.append(got[0])
            if want_logits:
                logits.append(out)
        return torch.cat(states), (torch.cat(logits) if want_logits else None)

    handle = layers[start].register_forward_pre_hook(grab, with_kwargs=True)
    try:
        with torch.inference_mode():
            h1, _ = run(harmful, n1, False)
            h0, base0 = run(harmless, n0, True)
    finally:
        handle.remove()
    # out of inference mode: ordinary tensors that autograd may save
    h1, h0, base0 = h1.clone(), h0.clone(), base0.clone()
    with torch.no_grad():
        check = suffix_logits(model, h0[:8], start)
    if not torch.allclose(check, base0[:8], rtol=1e-4, atol=1e-4):
        raise ValueError(
            "model: running the blocks from `start` on the cached hidden states does not reproduce "
            "logits_fn; the decoder transforms inputs_embeds, or logits_fn is not its last-position logits"
        )
    return PrefixCache(start, h1, h0, base0)


def train_adapter(
    omni: OmniSteer,
    model: nn.Module,
    logits_fn: Callable[[Mapping[str, torch.Tensor]], torch.Tensor],
    harmful: Mapping[str, torch.Tensor],
    harmless: Mapping[str, torch.Tensor],
    refusal_token: int,
    *,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 1e-2,
    kl_weight: float = 1.0,
    generator: torch.Generator | None = None,
    prefix: PrefixCache | None = None,
    tol: float | None = None,
    window: int = 50,
) -> list[float]:
    """Train ``omni.adapter`` with :func:`omnisteer_loss`; the base ``model`` stays frozen.

    ``logits_fn(batch) -> (n, V)``: the model's last-position logits for a batch (a mapping of
    tensors with one leading row dimension, e.g. ``{"input_ids": ...}`` or ``{"inputs_embeds": ...}``).
    ``harmful`` / ``harmless``: such mappings (the whole training sets). The base model's parameters
    get ``requires_grad_(False)`` for the duration and their old flags back after.

    ``prefix``: a :class:`PrefixCache` of these sets (from :func:`cache_prefix`, ``start`` at most the
    first steered layer); each step then runs only the blocks from ``prefix.start`` on, harmful and
    harmless rows in one pass (same loss and gradients as the full pass, to float rounding).
    ``tol``: stop early once the mean loss of the last ``window`` steps is above ``1 - tol`` times
    that of the ``window`` before (checked every ``window`` steps); ``steps`` is then the maximum.
    Returns the losses (their number is the steps taken).
    """
    steps = positive_int(steps, "steps")
    batch_size = positive_int(batch_size, "batch_size")
    lr = positive_float(lr, "lr")
    kl_weight = nonnegative_float(kl_weight, "kl_weight")
    window = positive_int(window, "window")
    if tol is not None:
        tol = nonnegative_float(tol, "tol")
    n1, n0 = _n_rows(harmful, "harmful"), _n_rows(harmless, "harmless")
    if model.training:
        raise RuntimeError("model: steering a model in training mode; call model.eval() first")
    if prefix is not None:
        first = min(check_directions(model, omni.directions))
        if prefix.start > first:
            raise ValueError(f"prefix: cached at block {prefix.start}, after the first steered layer {first}")
        if prefix.harmful.shape[0] != n1 or prefix.harmless.shape[0] != n0:
            raise ValueError("prefix: its rows do not match the harmful / harmless sets")
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    opt = torch.optim.Adam(omni.adapter.parameters(), lr=lr)
    losses: list[float] = []
    try:
        if prefix is not None:
            base_all = prefix.harmless_base_logits
        else:
            with torch.no_grad():  # the unsteered model's harmless distributions, once
                base_all = torch.cat(
                    [logits_fn({k: v[i : i + 256] for k, v in harmless.items()}) for i in range(0, n0, 256)]
                )
        for step in range(steps):
            i1 = torch.randint(n1, (min(batch_size, n1),), generator=generator)
            i0 = torch.randint(n0, (min(batch_size, n0),), generator=generator)
            base0 = base_all[i0]
            if prefix is not None:
                h = torch.cat(
                    [
                        prefix.harmful[i1.to(prefix.harmful.device)],
                        prefix.harmless[i0.to(prefix.harmless.device)],
                    ]
                )
                with omni.apply(model):
                    logits = suffix_logits(model, h, prefix.start)
                l1, l0 = logits[: len(i1)], logits[len(i1) :]
            else:
                b1 = {k: v[i1] for k, v in harmful.items()}
                b0 = {k: v[i0] for k, v in harmless.items()}
                with omni.apply(model):
                    l1, l0 = logits_fn(b1), logits_fn(b0)
            loss = omnisteer_loss(l1, refusal_token, l0, base0, kl_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            done = step + 1
            if tol is not None and done >= 2 * window and done % window == 0:
                last = sum(losses[-window:]) / window
                before = sum(losses[-2 * window : -window]) / window
                if last > (1.0 - tol) * before:
                    break
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
    return losses


def save_steering(path: str | Path, omni: OmniSteer) -> Path:
    """Write ``omni`` (directions, adapter weights, its settings in the metadata) as safetensors."""
    from safetensors.torch import save_file

    path = Path(path)
    tensors = {f"direction.{layer}": u.contiguous() for layer, u in omni.directions.items()}
    tensors.update({f"adapter.{k}": v.contiguous() for k, v in omni.adapter.state_dict().items()})
    meta = {
        "format": "paperworks-omnisteer/1",
        "layers": json.dumps(list(omni.layers)),
        "alpha_max": repr(omni.adapter.alpha_max),
        "width": str(omni.adapter.width),
        "pooling": omni.adapter.pooling,
    }
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp), metadata=meta)
    tmp.replace(path)
    return path


def load_steering(path: str | Path) -> OmniSteer:
    """Read an :class:`OmniSteer` written by :func:`save_steering`."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        if meta.get("format") != "paperworks-omnisteer/1":
            raise ValueError(f"path: {path} is not an OmniSteer safetensors file")
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    layers = json.loads(meta["layers"])
    omni = OmniSteer(
        {layer: tensors[f"direction.{layer}"] for layer in layers},
        float(meta["alpha_max"]),
        int(meta["width"]),
        pooling=meta.get("pooling", "position"),
    )
    omni.adapter.load_state_dict(
        {k[len("adapter.") :]: v for k, v in tensors.items() if k.startswith("adapter.")}
    )
    return omni
