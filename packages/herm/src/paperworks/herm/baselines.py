"""Message formats compared with HSM: numerical, neural (learned), unstructured superposition.

Every messenger maps the scout's slot table (B, n_slots, 3) [colour, shape, position index in the
scout's frame; -1 = empty] to a message, and a received message plus the sender offset (B, 2) back
to a table in the *receiver's* frame (same layout, -1 = not reported). Ego alignment is given to
every format (numerical and neural add the offset to decoded coordinates; superposition re-binds
the position clean-up), so the comparison isolates the message format.
"""

from __future__ import annotations

import torch
from torch import nn

from .channels import Channel, transmit
from .hsm import HSMCodec
from .scene import SceneConfig, sample_episodes

__all__ = ["HermMessenger", "NeuralMessenger", "NumericMessenger", "SuperpositionMessenger", "make_codec"]


def make_codec(config: SceneConfig, dim: int, seed: int = 0) -> HSMCodec:
    """The HSM vocabulary of a scene: slots x {colour, shape, position (fractional power)}."""
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


class HermMessenger:
    """HSM with receiver-centric ego-binding and iterative decoding (:mod:`paperworks.herm.hsm`)."""

    name = "herm"

    def __init__(
        self, codec: HSMCodec, threshold: float = 0.5, iterations: int = 3, false_alarm: float | None = 0.01
    ) -> None:
        self.codec, self.threshold, self.iterations, self.false_alarm = (
            codec,
            threshold,
            iterations,
            false_alarm,
        )

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        return self.codec.encode_indices(table)

    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        d = self.codec.decode(
            received,
            ego_offset=offset,
            threshold=self.threshold,
            iterations=self.iterations,
            false_alarm=self.false_alarm,
        )
        return d.values


class SuperpositionMessenger:
    """Unstructured superposition: ``m = sum (E_e + A_a + V_v)`` over triples, no binding.

    Decoding detects which entities and values are present but cannot tell which value belongs to
    which entity (semantic entanglement): the detected values of each attribute are dealt to the
    detected entities in score order.
    """

    name = "superposition"

    def __init__(self, codec: HSMCodec, threshold: float = 0.5) -> None:
        self.codec, self.threshold = codec, threshold

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        c = self.codec
        m = torch.zeros(table.shape[0], c.dim, dtype=torch.complex64)
        for a, cb in enumerate(c.codebooks):
            idx = table[:, :, a]
            present = (idx >= 0).to(torch.float32)[..., None]
            m = m + (present * (c.E[None] + c.A[a][None, None] + cb[idx.clamp(min=0)])).sum(dim=1)
        return m

    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        c = self.codec
        n_a = len(c.attributes)
        kept = (received != 0).to(torch.float32)
        d_eff = kept.sum(dim=1, keepdim=True).clamp(min=1.0)
        ent = (received @ c.E.conj().T).real / d_eff / n_a  # (B, n_e), ~1 for a present entity
        present = ent >= self.threshold
        n_present = present.sum(dim=1)
        out = torch.full((received.shape[0], len(c.entities), n_a), -1, dtype=torch.int64)
        # present entities in slot order; values in decreasing score order
        slot_rank = torch.where(present, torch.arange(len(c.entities))[None], len(c.entities)).argsort(dim=1)
        pos_a = c.attributes.index(c.position_name)
        for a, cb in enumerate(c.codebooks):
            r = received * c.shift(offset) if a == pos_a else received
            scores = (r @ cb.conj().T).real / d_eff
            order = scores.argsort(dim=1, descending=True)
            k = min(len(c.entities), cb.shape[0])
            for j in range(k):  # loop over slots (at most n_slots), vectorised over the batch
                take = j < n_present
                slot = slot_rank[:, j]
                cur = out[torch.arange(out.shape[0]), slot, a]
                out[torch.arange(out.shape[0]), slot, a] = torch.where(take, order[:, j], cur)
        return out


class NumericMessenger:
    """Raw feature vector: per slot ``[present, colour, shape, x, y]`` as numbers; decoding rounds."""

    name = "numeric"

    def __init__(self, config: SceneConfig) -> None:
        self.config = config

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        r = self.config.radius
        present = (table[..., 0] >= 0).to(torch.float32)
        xy = _pos_xy(table[..., 2].clamp(min=0), r).to(torch.float32)
        feats = torch.stack(
            [present, table[..., 0].clamp(min=0).float(), table[..., 1].clamp(min=0).float()], -1
        )
        feats = torch.cat([feats, xy], dim=-1) * present[..., None]
        return feats.reshape(table.shape[0], -1)

    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        c = self.config
        f = received.reshape(received.shape[0], c.n_slots, 5)
        present = f[..., 0] > 0.5
        color = f[..., 1].round().clamp(0, c.n_colors - 1).long()
        shape = f[..., 2].round().clamp(0, c.n_shapes - 1).long()
        xy = f[..., 3:5].round().long() + offset[:, None, :]
        pos, ok = _pos_idx(xy, c.radius)
        pos = torch.where(ok, pos, -1)
        out = torch.stack([color, shape, pos], dim=-1)
        return torch.where(present[..., None], out, torch.full_like(out, -1))


class NeuralMessenger(nn.Module):
    """A learned encoder/decoder (MLPs) trained end to end through randomised noisy channels.

    Input: per slot one-hot [empty, colour, shape, x, y]; message: ``n_symbols`` real symbols
    normalised to unit mean power; output: per-slot logits. Trained with Adam on cross-entropy,
    channels drawn per batch (AWGN -12..10 dB, flips p <= 0.3, erasures p <= 0.6).
    """

    name = "neural"

    def __init__(self, config: SceneConfig, n_symbols: int, hidden: int = 256) -> None:
        super().__init__()
        self.config = config
        side = 2 * config.radius + 1
        self.sizes = (2, config.n_colors, config.n_shapes, side, side)
        width = config.n_slots * sum(self.sizes)
        self.encoder = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, n_symbols))
        self.decoder = nn.Sequential(nn.Linear(n_symbols, hidden), nn.ReLU(), nn.Linear(hidden, width))

    def _onehot(self, table: torch.Tensor) -> torch.Tensor:
        r = self.config.radius
        present = (table[..., 0] >= 0).long()
        xy = _pos_xy(table[..., 2].clamp(min=0), r) + r
        parts = [present, table[..., 0].clamp(min=0), table[..., 1].clamp(min=0), xy[..., 0], xy[..., 1]]
        oh = [nn.functional.one_hot(p, s).float() for p, s in zip(parts, self.sizes, strict=True)]
        return torch.cat(oh, dim=-1).reshape(table.shape[0], -1)

    def encode(self, table: torch.Tensor) -> torch.Tensor:
        z = self.encoder(self._onehot(table))
        return z / z.pow(2).mean(dim=1, keepdim=True).sqrt().clamp(min=1e-6)

    def _logits(self, received: torch.Tensor) -> list[torch.Tensor]:
        out = self.decoder(received).reshape(received.shape[0], self.config.n_slots, -1)
        return list(out.split(self.sizes, dim=-1))

    def fit(
        self, steps: int, batch: int = 256, generator: torch.Generator | None = None, lr: float = 2e-3
    ) -> NeuralMessenger:
        """Train encoder and decoder end to end for ``steps`` Adam steps on fresh episodes."""
        if not isinstance(steps, int) or steps < 1 or batch < 1 or lr <= 0:
            raise ValueError(f"fit: expected steps >= 1, batch >= 1, lr > 0, got {steps}, {batch}, {lr}")
        # plain Adam written out: importing torch.optim costs seconds (dynamo) on this machine class
        params = [p for p in self.parameters() if p.requires_grad]
        m1 = [torch.zeros_like(p) for p in params]
        m2 = [torch.zeros_like(p) for p in params]
        b1, b2, eps = 0.9, 0.999, 1e-8
        r = self.config.radius
        for step in range(1, steps + 1):
            ep = sample_episodes(batch, self.config, generator)
            u = torch.rand(3, generator=generator)
            kind = int(torch.randint(0, 3, (1,), generator=generator))
            ch = [
                Channel("awgn", snr_db=float(-12 + 22 * u[0])),
                Channel("flip", p=float(0.3 * u[1])),
                Channel("erase", p=float(0.6 * u[2])),
            ][kind]
            logits = self._logits(transmit(self.encode(ep.table), ch, generator))
            present = (ep.table[..., 0] >= 0).long()
            xy = _pos_xy(ep.table[..., 2].clamp(min=0), r) + r
            targets = [present, ep.table[..., 0], ep.table[..., 1], xy[..., 0], xy[..., 1]]
            loss = nn.functional.cross_entropy(logits[0].reshape(-1, 2), present.reshape(-1))
            mask = present.reshape(-1).bool()
            for lg, t in zip(logits[1:], targets[1:], strict=True):
                loss = loss + nn.functional.cross_entropy(
                    lg.reshape(-1, lg.shape[-1])[mask], t.reshape(-1)[mask]
                )
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g, a, v in zip(params, grads, m1, m2, strict=True):
                    a.mul_(b1).add_(g, alpha=1 - b1)
                    v.mul_(b2).addcmul_(g, g, value=1 - b2)
                    denom = (v / (1 - b2**step)).sqrt_().add_(eps)
                    p.addcdiv_(a, denom, value=-lr / (1 - b1**step))
        return self

    @torch.no_grad()
    def decode(self, received: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
        r = self.config.radius
        lg = self._logits(received)
        present = lg[0].argmax(-1) == 1
        xy = torch.stack([lg[3].argmax(-1), lg[4].argmax(-1)], dim=-1) - r + offset[:, None, :]
        pos, ok = _pos_idx(xy, r)
        out = torch.stack([lg[1].argmax(-1), lg[2].argmax(-1), torch.where(ok, pos, -1)], dim=-1)
        return torch.where(present[..., None], out, torch.full_like(out, -1))
