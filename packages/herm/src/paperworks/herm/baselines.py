"""Message formats compared with HSM: numerical, neural (learned), unstructured superposition.

Every messenger maps the scout's slot table (B, n_slots, 3) [colour, shape, position index in the
scout's frame; -1 = empty] to a message, and a received message plus the sender offset (B, 2) back
to a table in the *receiver's* frame (same layout, -1 = not reported). Ego alignment is given to
every format (numerical and neural add the offset to decoded coordinates; superposition re-binds
the position clean-up), so the comparison isolates the message format. In the experiment every
format is sent at the same length (numeric: repeated), hence at one SNR with the same energy.
"""

from __future__ import annotations

import torch
from torch import nn

from paperworks.core.validate import fraction, int_in_range, one_of, positive_float, positive_int

from ._checks import check_generator, check_int_tensor
from .channels import Channel, transmit
from .hsm import DecodedMessage, HSMCodec
from .scene import SceneConfig, sample_episodes

__all__ = ["HermMessenger", "NeuralMessenger", "NumericMessenger", "SuperpositionMessenger", "make_codec"]


def make_codec(config: SceneConfig, dim: int, seed: int = 0) -> HSMCodec:
    """The HSM vocabulary of a scene: slots x {colour, shape, position (fractional power)}."""
    if not isinstance(config, SceneConfig):
        raise TypeError(f"config: expected a SceneConfig, got {type(config).__name__}")
    return HSMCodec(
        [f"slot{i}" for i in range(config.n_slots)],
        {
            "color": [f"c{i}" for i in range(config.n_colors)],
            "shape": [f"s{i}" for i in range(config.n_shapes)],
        },
        position=("pos", config.radius),
        dim=dim,
        seed=seed,
    )


def _pos_xy(idx: torch.Tensor, radius: int) -> torch.Tensor:
    side = 2 * radius + 1
    return torch.stack([idx // side - radius, idx % side - radius], dim=-1)


def _pos_idx(xy: torch.Tensor, radius: int) -> tuple[torch.Tensor, torch.Tensor]:
    ok = (xy.abs() <= radius).all(dim=-1)
    side = 2 * radius + 1
    return (xy[..., 0] + radius) * side + (xy[..., 1] + radius), ok


def _check_table(table: object, config: SceneConfig) -> torch.Tensor:
    """A slot table (B, n_slots, 3) of int indices, -1 = empty (the layout of :class:`Episodes`)."""
    if isinstance(table, torch.Tensor) and (table.dtype.is_floating_point or table.is_complex()):
        raise TypeError(f"table: expected integer indices, got dtype {table.dtype}")
    table = check_int_tensor(table, "table")
    if table.ndim != 3 or table.shape[1:] != (config.n_slots, 3) or table.shape[0] == 0:
        raise ValueError(f"table: expected shape (B >= 1, {config.n_slots}, 3), got {tuple(table.shape)}")
    side = 2 * config.radius + 1
    for j, (name, n) in enumerate(
        (("colour", config.n_colors), ("shape", config.n_shapes), ("position", side**2))
    ):
        col = table[..., j]
        if (col < -1).any() or (col >= n).any():
            raise ValueError(f"table[..., {j}]: expected {name} indices in -1..{n - 1}")
    if ((table < 0).any(dim=-1) != (table < 0).all(dim=-1)).any():
        raise ValueError("table: a slot is either empty (all -1) or has a colour, a shape and a position")
    return table


def _check_offset(offset: object, b: int) -> torch.Tensor:
    off = check_int_tensor(offset, "offset")
    if off.shape != (b, 2):
        raise ValueError(f"offset: expected shape ({b}, 2) integer offsets, got {tuple(off.shape)}")
    return off


def _check_received(received: object, width: int, complex_: bool) -> torch.Tensor:
    kind = "complex" if complex_ else "real"
    if not isinstance(received, torch.Tensor):
        raise TypeError(f"received: expected a {kind} (B, {width}) tensor, got {type(received).__name__}")
    if received.is_complex() != complex_ or not (complex_ or received.dtype.is_floating_point):
        raise TypeError(f"received: expected a {kind} (B, {width}) tensor, got dtype {received.dtype}")
    if received.ndim != 2 or received.shape[1] != width or received.shape[0] == 0:
        raise ValueError(f"received: expected shape (B >= 1, {width}), got {tuple(received.shape)}")
    x = torch.view_as_real(received.resolve_conj()) if complex_ else received
    if not torch.isfinite(x).all():
        raise ValueError("received: expected finite values (NaN/inf found)")
    return received


class HermMessenger:
    """HSM with receiver-centric ego-binding and MAP decoding (:meth:`HSMCodec.decode`).

    ``decode`` returns the MAP table (what the task acts on); :meth:`decode_message` the whole
    :class:`~paperworks.herm.DecodedMessage` (posteriors, the readable list).
    """

    name = "herm"

    def __init__(
        self,
        codec: HSMCodec,
        *,
        iterations: int = 3,
        prior_present: float = 0.5,
        presence: str = "entity",
        false_alarm: float = 0.01,
    ) -> None:
        if not isinstance(codec, HSMCodec):
            raise TypeError(f"codec: expected an HSMCodec, got {type(codec).__name__}")
        if codec.position_name is None or len(codec.attributes) != 3:
            raise ValueError(
                "codec: expected a scene codec (colour, shape, position), e.g. make_codec(config, dim)"
            )
        self.codec = codec
        self.options = {
            "iterations": positive_int(iterations, "iterations"),
            "prior_present": fraction(prior_present, "prior_present", open_low=True),
            "presence": one_of(presence, "presence", ("key", "entity")),
            "false_alarm": fraction(false_alarm, "false_alarm", open_low=True, open_high=True),
        }

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        """(B, n_slots, 3) slot table -> (B, D) HSM messages (checked by :meth:`HSMCodec.encode_indices`)."""
        return self.codec.encode_indices(table)

    def decode_message(self, received: torch.Tensor, offset: torch.Tensor) -> DecodedMessage:
        received = _check_received(received, self.codec.dim, True)
        offset = _check_offset(offset, received.shape[0])
        return self.codec.decode(received, ego_offset=offset, **self.options)

    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        return self.decode_message(received, offset).values


class SuperpositionMessenger:
    """Unstructured superposition: ``m = sum (E_e + A_a + V_v)`` over triples, no binding.

    Decoding detects which entities and values are present but cannot tell which value belongs to
    which entity (semantic entanglement): the detected values of each attribute are dealt to the
    detected entities in score order.
    """

    name = "superposition"

    def __init__(self, codec: HSMCodec, threshold: float = 0.5) -> None:
        if not isinstance(codec, HSMCodec):
            raise TypeError(f"codec: expected an HSMCodec, got {type(codec).__name__}")
        if codec.position_name is None or len(codec.attributes) != 3:
            raise ValueError(
                "codec: expected a scene codec (colour, shape, position), e.g. make_codec(config, dim)"
            )
        self.codec = codec
        self.threshold = fraction(threshold, "threshold", open_low=True)

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        c = self.codec
        table = check_int_tensor(table, "table").to(c.device)
        if table.ndim != 3 or table.shape[1:] != (len(c.entities), 3) or table.shape[0] == 0:
            raise ValueError(
                f"table: expected shape (B >= 1, {len(c.entities)}, 3), got {tuple(table.shape)}"
            )
        m = torch.zeros(table.shape[0], c.dim, dtype=torch.complex64, device=c.device)
        for a, cb in enumerate(c.codebooks):
            idx = table[:, :, a]
            if (idx < -1).any() or (idx >= cb.shape[0]).any():
                raise ValueError(f"table[..., {a}]: expected indices in -1..{cb.shape[0] - 1}")
            present = (idx >= 0).to(torch.float32)[..., None]
            m = m + (present * (c.E[None] + c.A[a][None, None] + cb[idx.clamp(min=0)])).sum(dim=1)
        return m

    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        c = self.codec
        received = _check_received(received, c.dim, True).to(c.device)
        offset = _check_offset(offset, received.shape[0]).to(c.device)
        n_a = len(c.attributes)
        kept = (received != 0).to(torch.float32)
        d_eff = kept.sum(dim=1, keepdim=True).clamp(min=1.0)
        ent = (received @ c.E.conj().T).real / d_eff / n_a  # (B, n_e), ~1 for a present entity
        present = ent >= self.threshold
        n_present = present.sum(dim=1)
        b = received.shape[0]
        out = torch.full((b, len(c.entities), n_a), -1, dtype=torch.int64, device=c.device)
        # present entities in slot order; values in decreasing score order
        slot_rank = torch.where(
            present, torch.arange(len(c.entities), device=c.device)[None], len(c.entities)
        )
        slot_rank = slot_rank.argsort(dim=1)
        pos_a = c.attributes.index(c.position_name)
        rows = torch.arange(b, device=c.device)
        for a, cb in enumerate(c.codebooks):
            r = received * c.shift(offset) if a == pos_a else received
            scores = (r @ cb.conj().T).real / d_eff
            order = scores.argsort(dim=1, descending=True)
            k = min(len(c.entities), cb.shape[0])
            for j in range(k):  # loop over slots (at most n_slots), vectorised over the batch
                take = j < n_present
                slot = slot_rank[:, j]
                cur = out[rows, slot, a]
                out[rows, slot, a] = torch.where(take, order[:, j], cur)
        return out


class NumericMessenger:
    """Raw numbers: per slot ``[present, colour, shape, x, y]`` as centred levels, repeated to ``length``.

    Each field is sent as a pulse-amplitude level with unit spacing centred on 0 (present: +-1/2;
    colour ``c - (n_colors - 1) / 2``; shape likewise; ``x``, ``y`` as they are, in ``[-r, r]``; fields
    of an empty slot as 0), so a message of ``5 n_slots`` numbers is as cheap in energy as unit-spaced
    numbers can be. It is tiled to ``length`` real symbols (default: no repetition), so that it can be
    sent at the same length, hence the same energy at one SNR, as the other formats; the receiver
    combines the copies of each number (``combine="mean"``: the average, optimal under Gaussian noise;
    ``"median"``: robust to sign flips) over the copies not erased (received as exactly 0; a number
    whose copies are all 0 reads 0), then rounds to the nearest level.
    """

    name = "numeric"

    def __init__(self, config: SceneConfig, *, length: int | None = None, combine: str = "mean") -> None:
        if not isinstance(config, SceneConfig):
            raise TypeError(f"config: expected a SceneConfig, got {type(config).__name__}")
        self.config = config
        self.width = 5 * config.n_slots
        self.length = self.width if length is None else int_in_range(length, "length", self.width)
        self.combine = one_of(combine, "combine", ("mean", "median"))

    def _levels(self) -> torch.Tensor:
        c = self.config
        return torch.tensor([0.5, (c.n_colors - 1) / 2, (c.n_shapes - 1) / 2, 0.0, 0.0])

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        c = self.config
        table = _check_table(table, c)
        present = (table[..., 0] >= 0)[..., None]
        xy = _pos_xy(table[..., 2].clamp(min=0), c.radius).to(torch.float32)
        feats = torch.cat([torch.ones_like(xy[..., :1]), table[..., :2].clamp(min=0).float(), xy], dim=-1)
        feats = feats - self._levels()
        feats = torch.where(present, feats, torch.zeros_like(feats))
        feats[..., 0] = torch.where(present[..., 0], 0.5, -0.5)
        base = feats.reshape(table.shape[0], -1)  # (B, width)
        reps = -(-self.length // self.width)
        return base.repeat(1, reps)[:, : self.length]

    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        c = self.config
        received = _check_received(received, self.length, False)
        offset = _check_offset(offset, received.shape[0]).to(received.device)
        b, w = received.shape[0], self.width
        reps = -(-self.length // w)
        padded = torch.full((b, reps * w), float("nan"), device=received.device)
        padded[:, : self.length] = received
        copies = padded.reshape(b, reps, w)
        copies = torch.where(copies == 0, float("nan"), copies)  # erased (or a 0 level: all copies read 0)
        combined = copies.nanmean(dim=1) if self.combine == "mean" else copies.nanmedian(dim=1).values
        f = torch.nan_to_num(combined, nan=0.0).reshape(b, c.n_slots, 5) + self._levels().to(received.device)
        present = f[..., 0] > 0.5
        color = f[..., 1].round().clamp(0, c.n_colors - 1).long()
        shape = f[..., 2].round().clamp(0, c.n_shapes - 1).long()
        xy = f[..., 3:5].round().clamp(-c.radius, c.radius).long() + offset[:, None, :]
        pos, ok = _pos_idx(xy, c.radius)
        pos = torch.where(ok, pos, -1)
        out = torch.stack([color, shape, pos], dim=-1)
        return torch.where(present[..., None], out, torch.full_like(out, -1))


_TRAIN_CHANNELS = "AWGN -12..10 dB, flips p <= 0.3, erasures p <= 0.6"


def _random_channel(generator: torch.Generator | None) -> Channel:
    u = torch.rand(3, generator=generator)
    kind = int(torch.randint(0, 3, (1,), generator=generator))
    return [
        Channel("awgn", snr_db=float(-12 + 22 * u[0])),
        Channel("flip", p=float(0.3 * u[1])),
        Channel("erase", p=float(0.6 * u[2])),
    ][kind]


class NeuralMessenger(nn.Module):
    """A learned encoder/decoder (MLPs) trained end to end through randomised noisy channels.

    Input: per slot one-hot [empty, colour, shape, x, y]; message: ``n_symbols`` real symbols
    normalised to unit mean power; receiver: automatic gain control (the received vector scaled to
    unit mean power: the channel's noise level then does not move the decoder's input scale), an MLP,
    per-slot logits. Trained with Adam on the summed cross-entropies, channels drawn per batch
    (AWGN -12..10 dB, flips p <= 0.3, erasures p <= 0.6), until the validation loss stops improving
    (:meth:`fit`). Runs on the device of its parameters (``.to(device)``).
    """

    name = "neural"

    def __init__(self, config: SceneConfig, n_symbols: int, hidden: int = 256) -> None:
        super().__init__()
        if not isinstance(config, SceneConfig):
            raise TypeError(f"config: expected a SceneConfig, got {type(config).__name__}")
        self.config = config
        self.n_symbols = positive_int(n_symbols, "n_symbols")
        hidden = positive_int(hidden, "hidden")
        side = 2 * config.radius + 1
        self.sizes = (2, config.n_colors, config.n_shapes, side, side)
        width = config.n_slots * sum(self.sizes)
        self.encoder = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, self.n_symbols))
        self.decoder = nn.Sequential(nn.Linear(self.n_symbols, hidden), nn.ReLU(), nn.Linear(hidden, width))
        self.history_: list[tuple[int, float, float]] = []
        self.converged_: bool | None = None
        self.steps_: int = 0

    @property
    def device(self) -> torch.device:
        return self.encoder[0].weight.device

    def _onehot(self, table: torch.Tensor) -> torch.Tensor:
        r = self.config.radius
        present = (table[..., 0] >= 0).long()
        xy = _pos_xy(table[..., 2].clamp(min=0), r) + r
        parts = [present, table[..., 0].clamp(min=0), table[..., 1].clamp(min=0), xy[..., 0], xy[..., 1]]
        oh = [nn.functional.one_hot(p, s).float() for p, s in zip(parts, self.sizes, strict=True)]
        return torch.cat(oh, dim=-1).reshape(table.shape[0], -1)

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        """(B, n_slots, 3) slot table -> (B, n_symbols) real message of unit mean power."""
        table = _check_table(table, self.config).to(self.device)
        z = self.encoder(self._onehot(table))
        return z / z.pow(2).mean(dim=1, keepdim=True).sqrt().clamp(min=1e-6)

    def _logits(self, received: torch.Tensor) -> list[torch.Tensor]:
        agc = received / received.pow(2).mean(dim=1, keepdim=True).sqrt().clamp(min=1e-6)
        out = self.decoder(agc).reshape(received.shape[0], self.config.n_slots, -1)
        return list(out.split(self.sizes, dim=-1))

    def _loss(self, table: torch.Tensor, channel: Channel, generator: torch.Generator | None) -> torch.Tensor:
        r = self.config.radius
        logits = self._logits(transmit(self.encode(table), channel, generator))
        present = (table[..., 0] >= 0).long()
        xy = _pos_xy(table[..., 2].clamp(min=0), r) + r
        targets = [present, table[..., 0], table[..., 1], xy[..., 0], xy[..., 1]]
        loss = nn.functional.cross_entropy(logits[0].reshape(-1, 2), present.reshape(-1))
        mask = present.reshape(-1).bool()
        for lg, t in zip(logits[1:], targets[1:], strict=True):
            loss = loss + nn.functional.cross_entropy(lg.reshape(-1, lg.shape[-1])[mask], t.reshape(-1)[mask])
        return loss

    def validation_loss(self, table: torch.Tensor, generator_seed: int = 0) -> float:
        """Mean loss of ``table`` (B, n_slots, 3) through three fixed channels (AWGN -6 dB, flips 15 %,
        erasures 40 %), with noise drawn from ``generator_seed``: the same draw at every call."""
        g = torch.Generator().manual_seed(generator_seed)
        chans = (Channel("awgn", snr_db=-6.0), Channel("flip", p=0.15), Channel("erase", p=0.4))
        with torch.no_grad():
            return sum(float(self._loss(table, c, g)) for c in chans) / len(chans)

    def fit(
        self,
        max_steps: int,
        *,
        batch: int = 256,
        generator: torch.Generator | None = None,
        lr: float = 2e-3,
        eval_every: int = 100,
        patience: int = 3,
        factor: float = 0.3,
        reductions: int = 3,
        tol: float = 0.01,
        n_validation: int = 512,
    ) -> NeuralMessenger:
        """Train encoder and decoder end to end with Adam on fresh episodes, to convergence.

        Every ``eval_every`` steps the loss on ``n_validation`` held-out episodes (drawn once, through
        the fixed channels of :meth:`validation_loss`) is measured; when it has not improved by a
        relative ``tol`` for ``patience`` evaluations the learning rate is multiplied by ``factor``;
        training stops at the evaluation after the ``reductions``-th cut finds no improvement
        (``converged_ = True``), or after ``max_steps`` (``converged_ = False``). The parameters of the
        best validation loss are kept. ``history_``: (step, validation loss, learning rate).
        """
        max_steps = positive_int(max_steps, "max_steps")
        batch = positive_int(batch, "batch")
        generator = check_generator(generator)
        lr = positive_float(lr, "lr")
        eval_every = positive_int(eval_every, "eval_every")
        patience = positive_int(patience, "patience")
        factor = fraction(factor, "factor", open_low=True, open_high=True)
        reductions = positive_int(reductions, "reductions")
        tol = fraction(tol, "tol", open_high=True)
        n_validation = positive_int(n_validation, "n_validation")
        val = sample_episodes(n_validation, self.config, generator).table.to(self.device)
        val_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        best, best_state, bad, cuts = float("inf"), None, 0, 0
        self.history_, self.converged_ = [], False
        step = 0
        self.train()
        for step in range(1, max_steps + 1):
            table = sample_episodes(batch, self.config, generator).table.to(self.device)
            loss = self._loss(table, _random_channel(generator), generator)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % eval_every:
                continue
            self.eval()
            v = self.validation_loss(val, val_seed)
            self.train()
            self.history_.append((step, v, opt.param_groups[0]["lr"]))
            if v < best * (1.0 - tol):
                best, bad = v, 0
                best_state = {k: t.detach().clone() for k, t in self.state_dict().items()}
                continue
            bad += 1
            if bad < patience:
                continue
            if cuts == reductions:
                self.converged_ = True
                break
            cuts, bad = cuts + 1, 0
            for group in opt.param_groups:
                group["lr"] *= factor
        if best_state is not None:
            self.load_state_dict(best_state)
        self.steps_ = step
        self.eval()
        return self

    @torch.no_grad()
    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        """(B, n_symbols) received, (B, 2) integer offsets -> (B, n_slots, 3) table in the receiver's
        frame."""
        received = _check_received(received, self.n_symbols, False).to(self.device)
        offset = _check_offset(offset, received.shape[0]).to(self.device)
        r = self.config.radius
        lg = self._logits(received)
        present = lg[0].argmax(-1) == 1
        xy = torch.stack([lg[3].argmax(-1), lg[4].argmax(-1)], dim=-1) - r + offset[:, None, :]
        pos, ok = _pos_idx(xy, r)
        out = torch.stack([lg[1].argmax(-1), lg[2].argmax(-1), torch.where(ok, pos, -1)], dim=-1)
        return torch.where(present[..., None], out, torch.full_like(out, -1))
