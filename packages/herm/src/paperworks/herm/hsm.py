"""Hyperdimensional Symbolic Messages: entity-attribute-value encoding, ego-binding, iterative decoding.

Encoding (the paper's "entity-attribute-value structured encoding pipeline", our FHRR reading)::

    m = sum_{(e, a, v) in message} E_e * A_a * V_{a, v}                       (B, D)

Every triple is bound into its own quasi-orthogonal slot, so triples do not entangle (an unbound
superposition ``E_e + A_a + V_v`` loses which value belongs to which entity).

Receiver-centric ego-binding: one attribute may hold a 2-d grid position encoded by fractional powers
``V_pos(x, y) = X ** x * Y ** y``. A sender writes positions in its own frame; the receiver, knowing the
sender's pose relative to its own (offset ``d``), re-binds the unbound position by ``X ** dx * Y ** dy``,
which is the same position in the receiver's frame (a binding, no decoding needed).

Decoding by algebraic inverse, iterated (parallel explaining away): for every (entity, attribute) key
``K_ea = E_e * A_a``, unbind ``(m - sum of the other current triple estimates) * conj(K_ea)``, clean up
against the attribute's value codebook, accept the best value when its similarity (the confidence,
1 for a clean lone triple) reaches ``threshold`` and stands out of the message's estimated noise
(a false-alarm bound), and repeat ``iterations`` times. Keys below the
threshold are reported as absent (value -1) with their confidence: the decoder never invents a triple
silently.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import torch

from .algebra import fractional_power, random_atoms

__all__ = ["DecodedMessage", "HSMCodec"]


@dataclass(frozen=True)
class DecodedMessage:
    """Decoding result. ``values`` (B, n_entities, n_attributes) int64 value indices, -1 = not reported;
    ``confidence`` (B, n_entities, n_attributes) the clean-up similarity of the best value (reported or not);
    ``zscore`` the same in units of the message's estimated noise std."""

    values: torch.Tensor
    confidence: torch.Tensor
    zscore: torch.Tensor
    codec: HSMCodec

    def triples(self, index: int = 0) -> list[tuple[Hashable, str, Hashable, float]]:
        """Readable triples of message ``index``: (entity, attribute, value, confidence), reported only."""
        if not 0 <= index < self.values.shape[0]:
            raise IndexError(f"index: expected 0 <= index < {self.values.shape[0]}, got {index}")
        out = []
        c = self.codec
        for e in range(self.values.shape[1]):
            for a in range(self.values.shape[2]):
                v = int(self.values[index, e, a])
                if v >= 0:
                    attr = c.attributes[a]
                    out.append(
                        (c.entities[e], attr, c.value_name(attr, v), float(self.confidence[index, e, a]))
                    )
        return out


class HSMCodec:
    """Encoder/decoder of HSM messages over a fixed symbol inventory.

    Parameters
    ----------
    entities: names of the entity slots.
    attributes: attribute name -> its symbolic values (a sequence of names).
    position: optional ``(name, radius)``: an attribute whose values are integer 2-d positions
        ``(x, y)`` with ``|x|, |y| <= radius``, fractional-power encoded (used by ego-binding).
    dim: hypervector dimension D (complex components).
    seed: seed of the random codebooks (sender and receiver share it, as they share a vocabulary).
    """

    def __init__(
        self,
        entities: Sequence[Hashable],
        attributes: Mapping[str, Sequence[Hashable]],
        *,
        position: tuple[str, int] | None = None,
        dim: int = 1024,
        seed: int = 0,
    ) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise ValueError(f"dim: expected an int >= 8, got {dim!r}")
        self.entities = tuple(entities)
        if not self.entities or len(set(self.entities)) != len(self.entities):
            raise ValueError("entities: expected a non-empty sequence of distinct names")
        names = list(attributes)
        self._values: dict[str, tuple] = {}
        for k in names:
            vals = tuple(attributes[k])
            if not vals or len(set(vals)) != len(vals):
                raise ValueError(f"attributes[{k!r}]: expected a non-empty sequence of distinct values")
            self._values[k] = vals
        self.position_name: str | None = None
        self.radius = 0
        if position is not None:
            pname, radius = position
            if pname in self._values:
                raise ValueError(f"position: name {pname!r} is already a symbolic attribute")
            if not isinstance(radius, int) or radius < 1:
                raise ValueError(f"position: expected radius a positive int, got {radius!r}")
            self.position_name, self.radius = pname, radius
            names.append(pname)
        if not names:
            raise ValueError("attributes: expected at least one attribute")
        self.attributes = tuple(names)
        self.dim = dim
        self.seed = seed
        g = torch.Generator().manual_seed(seed)
        self.E = random_atoms(len(self.entities), dim, g)
        self.A = random_atoms(len(self.attributes), dim, g)
        self.keys = self.E[:, None, :] * self.A[None, :, :]  # (n_e, n_a, D)
        self.codebooks: list[torch.Tensor] = [
            random_atoms(len(self._values[k]), dim, g) for k in self._values
        ]
        if self.position_name is not None:
            self.X, self.Y = random_atoms(2, dim, g)
            r = torch.arange(-self.radius, self.radius + 1, dtype=torch.float32)
            xs, ys = torch.meshgrid(r, r, indexing="ij")
            self.grid = torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1).to(torch.int64)  # (m, 2)
            self.codebooks.append(self.shift(self.grid.to(torch.float32)))

    # ----- symbols ---------------------------------------------------------------------------
    @property
    def n_values(self) -> tuple[int, ...]:
        return tuple(cb.shape[0] for cb in self.codebooks)

    def value_index(self, attribute: str, value: Hashable) -> int:
        if attribute not in self.attributes:
            raise KeyError(f"attribute: unknown attribute {attribute!r}; known: {list(self.attributes)}")
        if attribute == self.position_name:
            try:
                x, y = (int(t) for t in value)  # type: ignore[union-attr]
            except (TypeError, ValueError):
                raise ValueError(f"value: expected an (x, y) pair for {attribute!r}, got {value!r}") from None
            if max(abs(x), abs(y)) > self.radius:
                raise ValueError(f"value: position {value!r} outside the radius {self.radius}")
            return (x + self.radius) * (2 * self.radius + 1) + (y + self.radius)
        try:
            return self._values[attribute].index(value)
        except ValueError:
            raise KeyError(f"value: unknown value {value!r} of attribute {attribute!r}") from None

    def value_name(self, attribute: str, index: int) -> Hashable:
        if attribute == self.position_name:
            return tuple(int(t) for t in self.grid[index])
        return self._values[attribute][index]

    def shift(self, offset: torch.Tensor) -> torch.Tensor:
        """Translation hypervector ``X ** dx * Y ** dy`` for offsets (..., 2) -> (..., D)."""
        if self.position_name is None:
            raise ValueError("shift: this codec has no position attribute")
        offset = torch.as_tensor(offset, dtype=torch.float32)
        if offset.shape[-1:] != (2,):
            raise ValueError(f"offset: expected shape (..., 2), got {tuple(offset.shape)}")
        return fractional_power(self.X, offset[..., 0]) * fractional_power(self.Y, offset[..., 1])

    # ----- encoding --------------------------------------------------------------------------
    def encode_indices(self, values: torch.Tensor) -> torch.Tensor:
        """Vectorised encoding: ``values`` (B, n_entities, n_attributes) int, -1 = absent -> (B, D)."""
        values = torch.as_tensor(values)
        n_e, n_a = len(self.entities), len(self.attributes)
        if values.ndim != 3 or values.shape[1:] != (n_e, n_a):
            raise ValueError(f"values: expected shape (B, {n_e}, {n_a}), got {tuple(values.shape)}")
        if values.dtype.is_floating_point or values.dtype.is_complex:
            raise TypeError(f"values: expected integer indices, got {values.dtype}")
        m = torch.zeros(values.shape[0], self.dim, dtype=torch.complex64)
        for a, cb in enumerate(self.codebooks):
            idx = values[:, :, a]
            if (idx < -1).any() or (idx >= cb.shape[0]).any():
                raise ValueError(
                    f"values[..., {a}]: unknown symbol index for attribute {self.attributes[a]!r}; "
                    f"expected -1 (absent) or 0..{cb.shape[0] - 1}"
                )
            present = (idx >= 0).to(torch.float32)[..., None]
            v = cb[idx.clamp(min=0)]  # (B, n_e, D)
            m = m + (present * self.keys[None, :, a] * v).sum(dim=1)
        return m

    def encode(self, triples: Sequence[tuple[Hashable, str, Hashable]]) -> torch.Tensor:
        """Encode one message given as (entity, attribute, value) triples -> (D,) complex."""
        idx = torch.full((1, len(self.entities), len(self.attributes)), -1, dtype=torch.int64)
        for t in triples:
            if len(t) != 3:
                raise ValueError(f"triples: expected (entity, attribute, value) triples, got {t!r}")
            e, a, v = t
            if e not in self.entities:
                raise KeyError(f"entity: unknown entity {e!r}; known: {list(self.entities)}")
            if a not in self.attributes:
                raise KeyError(f"attribute: unknown attribute {a!r}; known: {list(self.attributes)}")
            ei, ai = self.entities.index(e), self.attributes.index(a)
            if idx[0, ei, ai] >= 0:
                raise ValueError(f"triples: entity {e!r} has attribute {a!r} twice")
            idx[0, ei, ai] = self.value_index(a, v)
        return self.encode_indices(idx)[0]

    # ----- decoding --------------------------------------------------------------------------
    def decode(
        self,
        message: torch.Tensor,
        *,
        ego_offset: torch.Tensor | None = None,
        threshold: float = 0.5,
        iterations: int = 3,
        false_alarm: float | None = 0.01,
    ) -> DecodedMessage:
        """Iterative decoding by algebraic inverse with clean-up memory (module docstring).

        ``message`` (B, D) or (D,) complex. ``ego_offset`` (B, 2) or (2,): the sender's frame origin in
        the receiver's frame; positions are then returned in the receiver's frame (ego-binding).
        ``threshold``: minimum clean-up similarity for a triple to be reported (in (0, 1]).
        ``false_alarm``: a triple is also reported only when its similarity exceeds ``z_min`` times the
        message's estimated noise std (pooled wrong-value similarities), where ``z_min`` makes a wrong
        value pass with probability <= ``false_alarm`` per key (Gaussian tail, union bound over values);
        ``None`` switches this noise gate off (the similarity threshold alone decides).
        """
        if not isinstance(message, torch.Tensor) or not message.is_complex():
            raise TypeError("message: expected a complex FHRR tensor of shape (B, D) or (D,)")
        m = message[None] if message.ndim == 1 else message
        if m.ndim != 2 or m.shape[0] == 0:
            raise ValueError(f"message: expected shape (B, D) or (D,), got {tuple(message.shape)}")
        if m.shape[1] != self.dim:
            raise ValueError(
                f"message: dimension mismatch, got D={m.shape[1]} but the codec has D={self.dim}"
            )
        if not torch.isfinite(torch.view_as_real(m)).all():
            raise ValueError("message: expected finite values (NaN/inf found)")
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold: expected a similarity in (0, 1], got {threshold!r}")
        if false_alarm is not None and not 0.0 < false_alarm < 1.0:
            raise ValueError(f"false_alarm: expected a probability in (0, 1), got {false_alarm!r}")
        if not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations: expected a positive int, got {iterations!r}")
        b = m.shape[0]
        shift = None
        if ego_offset is not None:
            off = torch.as_tensor(ego_offset, dtype=torch.float32)
            if off.ndim == 1:
                off = off[None].expand(b, 2)
            if off.shape != (b, 2):
                raise ValueError(f"ego_offset: expected shape ({b}, 2) or (2,), got {tuple(off.shape)}")
            shift = self.shift(off)  # (B, D)
        n_e, n_a = len(self.entities), len(self.attributes)
        pos_a = self.attributes.index(self.position_name) if self.position_name is not None else -1
        est = torch.zeros(b, n_e, n_a, self.dim, dtype=torch.complex64)
        values = torch.full((b, n_e, n_a), -1, dtype=torch.int64)
        conf = torch.zeros(b, n_e, n_a)
        zs = torch.zeros(b, n_e, n_a)
        # a wrong value clears z_min noise stds with probability <= false_alarm (Gaussian tail, union bound)
        z_min = 0.0
        if false_alarm is not None:
            tail = torch.tensor(1.0 - false_alarm / max(self.n_values), dtype=torch.float64)
            z_min = float(torch.special.ndtri(tail))
        conj_keys = self.keys.conj()[None]
        # erasures are known to the receiver (received exactly 0): score on the kept components only
        kept = (m != 0).to(torch.float32)  # (B, D)
        d_eff = kept.sum(dim=1).clamp(min=1.0)[:, None, None]  # (B, 1, 1)
        kept4 = kept[:, None, None, :]
        for _ in range(iterations):
            total = est.sum(dim=(1, 2))
            u = (m - kept * total)[:, None, None, :] + kept4 * est
            u = u * conj_keys  # (B, n_e, n_a, D): value estimates in the sender's frame
            new_est = torch.zeros_like(est)
            scores, bests, idxs = [], [], []
            for a, cb in enumerate(self.codebooks):
                ua = u[:, :, a]
                if a == pos_a and shift is not None:
                    ua = ua * shift[:, None, :]  # ego-binding: re-bind into the receiver's frame
                sc = (ua @ cb.conj().T).real / d_eff  # (B, n_e, m_a)
                best, idx = sc.max(dim=-1)
                scores.append(sc)
                bests.append(best)
                idxs.append(idx)
            # noise level of a wrong value's similarity, pooled over every key and codebook of a message
            sq = sum(
                sc.pow(2).sum(dim=(1, 2)) - bst.pow(2).sum(dim=1)
                for sc, bst in zip(scores, bests, strict=True)
            )
            dof = sum(len(self.entities) * (cb.shape[0] - 1) for cb in self.codebooks)
            sigma = (sq / max(dof, 1)).sqrt()[:, None]  # (B, 1)
            for a, cb in enumerate(self.codebooks):
                best, idx = bests[a], idxs[a]
                ok = (best >= threshold) & (best >= z_min * sigma)
                values[:, :, a] = torch.where(ok, idx, -1)
                conf[:, :, a] = best
                zs[:, :, a] = best / sigma.clamp(min=1e-12)
                v = cb[idx]
                if a == pos_a and shift is not None:
                    v = v * shift[:, None, :].conj()
                new_est[:, :, a] = ok[..., None].to(torch.float32) * self.keys[None, :, a] * v
            est = new_est
        return DecodedMessage(values, conf, zs, self)
