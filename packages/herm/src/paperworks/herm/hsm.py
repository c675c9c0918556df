"""Hyperdimensional Symbolic Messages: entity-attribute-value encoding, ego-binding, MAP decoding.

Encoding (the paper's "entity-attribute-value structured encoding pipeline", our FHRR reading)::

    m = sum_{(e, a, v) in message} E_e * A_a * V_{a, v}                       (B, D)

Every triple is bound into its own quasi-orthogonal slot, so triples do not entangle (an unbound
superposition ``E_e + A_a + V_v`` loses which value belongs to which entity).

Receiver-centric ego-binding: one attribute may hold a 2-d grid position encoded by fractional powers
``V_pos(x, y) = X ** x * Y ** y``. A sender writes positions in its own frame; the receiver, knowing the
sender's pose relative to its own (offset ``d``), re-binds the unbound position by ``X ** dx * Y ** dy``,
which is the same position in the receiver's frame (a binding, no decoding needed).

Decoding by algebraic inverse, iterated (the paper's "iterative decoding scheme via algebraic inverse
operation"), with maximum a posteriori (MAP) decisions. Channel model of the receiver:
``r = g * kept * m + n`` with an unknown gain ``g`` (1 for AWGN, ``1 - 2 p`` for sign flips), known
erasures (``kept``: the components not received as exactly 0) and complex Gaussian noise of variance
``N0`` per kept component. For one (entity, attribute) key ``K_ea`` with every other triple's current
estimate removed (explaining away), ``u = (r - g * kept * sum_other) * conj(K_ea)`` and the
log-likelihood ratio of "value v" against "absent" is exactly::

    LLR_v = g * D_kept * (2 s_v - g) / N0,       s_v = Re <u, V_{a, v}> / D_kept

With prior ``q`` that a key is present (values uniform), the MAP decision per key is
``argmax(log(1 - q), log(q / M_a) + LLR_v)``; with ``presence="entity"`` (every attribute of an entity
present or none, as in a slot table) an entity is present when
``log q + sum_a (max_v LLR_{a,v} - log M_a) > log(1 - q)``. This is the joint MAP of the message when
the cross-talk between different keys is negligible; explaining away (``iterations``) is parallel
coordinate ascent on the full posterior, which removes that cross-talk. ``g`` and ``N0`` are
re-estimated after each pass from the current decisions (least squares; residual power), unless given.

Readable triples: a MAP-present triple is also *listed* (:meth:`DecodedMessage.triples`) only when its
similarity clears ``z_min(M_a) * sigma`` (``sigma = sqrt(N0 / (2 D_kept))``, the noise std of one
similarity), with ``z_min(M_a) = Phi^-1(1 - false_alarm / M_a)``: by the union bound over the
attribute's own ``M_a`` values, an absent key is listed with probability <= ``false_alarm``. The
gate only shortens the list a reader sees; the values (MAP decisions) are not gated.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import torch

from paperworks.core.validate import (
    fraction,
    int_in_range,
    nonnegative_int,
    one_of,
    positive_float,
    positive_int,
)

from ._checks import check_int_tensor, shape_of
from .algebra import fractional_power, random_atoms

__all__ = ["DecodedMessage", "HSMCodec"]

PRESENCE = ("key", "entity")


@dataclass(frozen=True)
class DecodedMessage:
    """Decoding result; every tensor is (B, n_entities, n_attributes) unless said otherwise.

    ``values`` int64 MAP value indices, -1 = absent (the decision a task should act on);
    ``readable`` bool, the MAP-present triples that also clear the false-alarm gate (the listed ones);
    ``confidence`` the clean-up similarity of the best value (about the gain ``g`` for a right triple);
    ``zscore`` the same in units of the similarity's noise std; ``posterior`` the posterior probability
    of the decision in ``values``; ``gain``, ``noise_var`` (B,) the channel estimates of the last pass.
    """

    values: torch.Tensor
    readable: torch.Tensor
    confidence: torch.Tensor
    zscore: torch.Tensor
    posterior: torch.Tensor
    gain: torch.Tensor
    noise_var: torch.Tensor
    codec: HSMCodec

    @property
    def listed(self) -> torch.Tensor:
        """``values`` where ``readable``, -1 elsewhere: the table of the listed triples."""
        return torch.where(self.readable, self.values, torch.full_like(self.values, -1))

    def triples(
        self, index: int = 0, *, readable_only: bool = True
    ) -> list[tuple[Hashable, str, Hashable, float]]:
        """Triples of message ``index``: (entity, attribute, value, confidence); by default only the
        readable (gated) ones, with ``readable_only=False`` every MAP-present one."""
        index = int_in_range(index, "index", 0, self.values.shape[0] - 1)
        if not isinstance(readable_only, bool):
            raise TypeError(f"readable_only: expected a bool, got {type(readable_only).__name__}")
        out = []
        c = self.codec
        for e in range(self.values.shape[1]):
            for a in range(self.values.shape[2]):
                v = int(self.values[index, e, a])
                if v >= 0 and (bool(self.readable[index, e, a]) or not readable_only):
                    attr = c.attributes[a]
                    out.append(
                        (c.entities[e], attr, c.value_name(attr, v), float(self.confidence[index, e, a]))
                    )
        return out


class HSMCodec:
    """Encoder/decoder of HSM messages over a fixed symbol inventory.

    Parameters
    ----------
    entities: names of the entity slots (distinct, hashable).
    attributes: attribute name -> its symbolic values (a non-empty sequence of distinct names).
    position: optional ``(name, radius)``: an attribute whose values are integer 2-d positions
        ``(x, y)`` with ``|x|, |y| <= radius``, fractional-power encoded (used by ego-binding).
    dim: hypervector dimension D (complex components), >= 8.
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
        self.dim = int_in_range(dim, "dim", 8)
        self.seed = nonnegative_int(seed, "seed")
        if isinstance(entities, str | bytes) or not isinstance(entities, Sequence):
            raise TypeError(f"entities: expected a sequence of names, got {type(entities).__name__}")
        self.entities = tuple(entities)
        if not self.entities or len(set(self.entities)) != len(self.entities):
            raise ValueError(
                f"entities: expected a non-empty sequence of distinct names, got {list(self.entities)}"
            )
        if not isinstance(attributes, Mapping):
            raise TypeError(f"attributes: expected a mapping name -> values, got {type(attributes).__name__}")
        names = list(attributes)
        self._values: dict[str, tuple] = {}
        for k in names:
            if not isinstance(k, str):
                raise TypeError(f"attributes: expected attribute names as strings, got {k!r}")
            vals = attributes[k]
            if isinstance(vals, str | bytes) or not isinstance(vals, Sequence | range):
                raise TypeError(
                    f"attributes[{k!r}]: expected a sequence of values, got {type(vals).__name__}"
                )
            vals = tuple(vals)
            if not vals or len(set(vals)) != len(vals):
                raise ValueError(f"attributes[{k!r}]: expected a non-empty sequence of distinct values")
            self._values[k] = vals
        self.position_name: str | None = None
        self.radius = 0
        if position is not None:
            if not isinstance(position, tuple | list) or len(position) != 2:
                raise TypeError(f"position: expected a (name, radius) pair, got {position!r}")
            pname, radius = position
            if not isinstance(pname, str):
                raise TypeError(f"position: expected the attribute name as a string, got {pname!r}")
            if pname in self._values:
                raise ValueError(f"position: name {pname!r} is already a symbolic attribute")
            self.position_name, self.radius = pname, positive_int(radius, "position radius")
            names.append(pname)
        if not names:
            raise ValueError("attributes: expected at least one attribute (or a position)")
        self.attributes = tuple(names)
        g = torch.Generator().manual_seed(self.seed)
        self.E = random_atoms(len(self.entities), self.dim, g)
        self.A = random_atoms(len(self.attributes), self.dim, g)
        self.keys = self.E[:, None, :] * self.A[None, :, :]  # (n_e, n_a, D)
        self.codebooks: list[torch.Tensor] = [
            random_atoms(len(self._values[k]), self.dim, g) for k in self._values
        ]
        if self.position_name is not None:
            self.X, self.Y = random_atoms(2, self.dim, g)
            r = torch.arange(-self.radius, self.radius + 1, dtype=torch.float32)
            xs, ys = torch.meshgrid(r, r, indexing="ij")
            self.grid = torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1).to(torch.int64)  # (m, 2)
            self.codebooks.append(self.shift(self.grid))

    @property
    def device(self) -> torch.device:
        return self.keys.device

    def to(self, device: torch.device | str) -> HSMCodec:
        """Move the codebooks to ``device`` (in place; returns ``self``)."""
        device = torch.device(device)
        for name in ("E", "A", "keys", "X", "Y", "grid"):
            if hasattr(self, name):
                setattr(self, name, getattr(self, name).to(device))
        self.codebooks = [cb.to(device) for cb in self.codebooks]
        return self

    # ----- symbols ---------------------------------------------------------------------------
    @property
    def n_values(self) -> tuple[int, ...]:
        return tuple(cb.shape[0] for cb in self.codebooks)

    def _attribute(self, attribute: object) -> int:
        if not isinstance(attribute, str) or attribute not in self.attributes:
            raise KeyError(f"attribute: unknown attribute {attribute!r}; known: {list(self.attributes)}")
        return self.attributes.index(attribute)

    def value_index(self, attribute: str, value: Hashable) -> int:
        """The codebook index of ``value`` of ``attribute`` (positions: integer ``(x, y)`` pairs)."""
        self._attribute(attribute)
        if attribute == self.position_name:
            ok = isinstance(value, Sequence | torch.Tensor) and not isinstance(value, str) and len(value) == 2
            xy = []
            for t in value if ok else ():
                t = t.item() if isinstance(t, torch.Tensor) and t.numel() == 1 else t
                if isinstance(t, bool) or not isinstance(t, numbers.Real) or not float(t).is_integer():
                    ok = False
                    break
                xy.append(int(t))
            if not ok:
                raise ValueError(f"value: expected an integer (x, y) pair for {attribute!r}, got {value!r}")
            x, y = xy
            if max(abs(x), abs(y)) > self.radius:
                raise ValueError(f"value: position {value!r} outside the radius {self.radius}")
            return (x + self.radius) * (2 * self.radius + 1) + (y + self.radius)
        try:
            return self._values[attribute].index(value)
        except ValueError:
            raise KeyError(f"value: unknown value {value!r} of attribute {attribute!r}") from None

    def value_name(self, attribute: str, index: int) -> Hashable:
        """The value of ``attribute`` at codebook ``index``."""
        a = self._attribute(attribute)
        index = int_in_range(index, "index", 0, self.n_values[a] - 1)
        if attribute == self.position_name:
            return tuple(int(t) for t in self.grid[index])
        return self._values[attribute][index]

    def shift(self, offset: torch.Tensor) -> torch.Tensor:
        """Translation hypervector ``X ** dx * Y ** dy`` for integer offsets (..., 2) -> (..., D)."""
        if self.position_name is None:
            raise ValueError("shift: this codec has no position attribute")
        offset = check_int_tensor(offset, "offset").to(self.X.device)
        if offset.ndim == 0 or offset.shape[-1] != 2:
            raise ValueError(f"offset: expected shape (..., 2), got {tuple(offset.shape)}")
        offset = offset.to(torch.float32)
        return fractional_power(self.X, offset[..., 0]) * fractional_power(self.Y, offset[..., 1])

    # ----- encoding --------------------------------------------------------------------------
    def encode_indices(self, values: torch.Tensor) -> torch.Tensor:
        """Vectorised encoding: ``values`` (B, n_entities, n_attributes) int, -1 = absent -> (B, D)."""
        n_e, n_a = len(self.entities), len(self.attributes)
        if isinstance(values, torch.Tensor) and (values.dtype.is_floating_point or values.is_complex()):
            raise TypeError(f"values: expected integer indices, got {values.dtype}")
        values = check_int_tensor(values, "values").to(self.device)
        if values.ndim != 3 or values.shape[1:] != (n_e, n_a) or values.shape[0] == 0:
            raise ValueError(f"values: expected shape (B >= 1, {n_e}, {n_a}), got {tuple(values.shape)}")
        m = torch.zeros(values.shape[0], self.dim, dtype=torch.complex64, device=self.device)
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
        if isinstance(triples, str | bytes) or not isinstance(triples, Sequence):
            raise TypeError(
                f"triples: expected a sequence of (entity, attribute, value), got {type(triples).__name__}"
            )
        idx = torch.full((1, len(self.entities), len(self.attributes)), -1, dtype=torch.int64)
        for t in triples:
            if not isinstance(t, tuple | list) or len(t) != 3:
                raise ValueError(f"triples: expected (entity, attribute, value) triples, got {t!r}")
            e, a, v = t
            if e not in self.entities:
                raise KeyError(f"entity: unknown entity {e!r}; known: {list(self.entities)}")
            ai = self._attribute(a)
            ei = self.entities.index(e)
            if idx[0, ei, ai] >= 0:
                raise ValueError(f"triples: entity {e!r} has attribute {a!r} twice")
            idx[0, ei, ai] = self.value_index(a, v)
        return self.encode_indices(idx)[0]

    # ----- decoding --------------------------------------------------------------------------
    def _message(self, message: object) -> torch.Tensor:
        if not isinstance(message, torch.Tensor) or not message.is_complex():
            what = message.dtype if isinstance(message, torch.Tensor) else type(message).__name__
            raise TypeError(f"message: expected a complex FHRR tensor of shape (B, D) or (D,), got {what}")
        m = message[None] if message.ndim == 1 else message
        if m.ndim != 2 or m.shape[0] == 0:
            raise ValueError(
                f"message: expected shape (B, D) or (D,) with B >= 1, got {tuple(message.shape)}"
            )
        if m.shape[1] != self.dim:
            raise ValueError(
                f"message: dimension mismatch, got D={m.shape[1]} but the codec has D={self.dim}"
            )
        if not torch.isfinite(torch.view_as_real(m.resolve_conj())).all():
            raise ValueError("message: expected finite values (NaN/inf found)")
        return m.resolve_conj().to(device=self.device, dtype=torch.complex64)

    def _offset(self, ego_offset: object, b: int) -> torch.Tensor:
        if self.position_name is None:
            raise ValueError("ego_offset: this codec has no position attribute to re-bind")
        off = check_int_tensor(ego_offset, "ego_offset")
        if off.shape == (2,):
            off = off[None].expand(b, 2)
        if off.shape != (b, 2):
            raise ValueError(f"ego_offset: expected shape ({b}, 2) or (2,), got {shape_of(off)}")
        return self.shift(off)

    def decode(
        self,
        message: torch.Tensor,
        *,
        ego_offset: torch.Tensor | Sequence[int] | None = None,
        iterations: int = 3,
        prior_present: float = 0.5,
        presence: str = "key",
        false_alarm: float = 0.01,
        noise_var: float | None = None,
        gain: float | None = None,
    ) -> DecodedMessage:
        """MAP decoding by iterated algebraic inverse with clean-up memory (module docstring).

        ``message`` (B, D) or (D,) complex. ``ego_offset`` (B, 2) or (2,) integers: the sender's frame
        origin in the receiver's frame; positions are then returned in the receiver's frame
        (ego-binding). ``iterations``: passes of explaining away (>= 1). ``prior_present``: prior
        probability that a key (``presence="key"``) or an entity (``presence="entity"``) is present,
        in (0, 1]. ``false_alarm``: per-key false-alarm bound of the readable list, in (0, 1).
        ``noise_var`` (N0, per complex component) and ``gain`` (g): the channel, when known; by default
        estimated from the message after each pass.
        """
        m = self._message(message)
        iterations = positive_int(iterations, "iterations")
        q = fraction(prior_present, "prior_present", open_low=True)
        one_of(presence, "presence", PRESENCE)
        alpha = fraction(false_alarm, "false_alarm", open_low=True, open_high=True)
        n0_fixed = None if noise_var is None else positive_float(noise_var, "noise_var")
        g_fixed = None if gain is None else positive_float(gain, "gain")
        b = m.shape[0]
        shift = None if ego_offset is None else self._offset(ego_offset, b)
        n_e, n_a = len(self.entities), len(self.attributes)
        pos_a = self.attributes.index(self.position_name) if self.position_name is not None else -1
        dev = self.device
        log_q = math.log(q)
        log_not_q = math.log1p(-q) if q < 1.0 else -math.inf
        log_m = [math.log(cb.shape[0]) for cb in self.codebooks]
        # listed only above z_min(M_a) noise stds: a wrong value passes w.p. <= alpha (union bound over M_a)
        z_min = [
            float(torch.special.ndtri(torch.tensor(1.0 - alpha / cb.shape[0], dtype=torch.float64)))
            for cb in self.codebooks
        ]
        conj_keys = self.keys.conj()[None]
        # erasures are known to the receiver (received exactly 0): score on the kept components only
        kept = (m != 0).to(torch.float32)  # (B, D)
        d_eff = kept.sum(dim=1).clamp(min=1.0)  # (B,)
        power = torch.view_as_real(m).pow(2).sum(dim=(1, 2)) / d_eff  # E|r_i|^2 over kept components
        g = torch.full((b,), g_fixed if g_fixed is not None else 1.0, device=dev)
        n0 = torch.full((b,), n0_fixed, device=dev) if n0_fixed is not None else power.clamp(min=1e-12)
        est = torch.zeros(b, n_e, n_a, self.dim, dtype=torch.complex64, device=dev)
        values = torch.full((b, n_e, n_a), -1, dtype=torch.int64, device=dev)
        conf = torch.zeros(b, n_e, n_a, device=dev)
        post = torch.zeros(b, n_e, n_a, device=dev)
        zs = torch.zeros(b, n_e, n_a, device=dev)
        readable = torch.zeros(b, n_e, n_a, dtype=torch.bool, device=dev)
        for _ in range(iterations):
            gk = (g[:, None] * kept).to(torch.complex64)
            total = est.sum(dim=(1, 2))
            u = (m - gk * total)[:, None, None, :] + gk[:, None, None, :] * est
            u = u * conj_keys  # (B, n_e, n_a, D): value estimates in the sender's frame
            scale = (g * d_eff / n0)[:, None, None]  # LLR_v = scale * (2 s_v - g)
            llrs, bests, idxs = [], [], []
            for a, cb in enumerate(self.codebooks):
                ua = u[:, :, a]
                if a == pos_a and shift is not None:
                    ua = ua * shift[:, None, :]  # ego-binding: re-bind into the receiver's frame
                s = (ua @ cb.conj().T).real / d_eff[:, None, None]  # (B, n_e, M_a)
                llr = scale * (2.0 * s - g[:, None, None])
                best, idx = s.max(dim=-1)
                llrs.append(llr)
                bests.append(best)
                idxs.append(idx)
            # MAP presence: per key, or per entity (all of its attributes at once)
            best_llr = torch.stack(
                [ll.max(dim=-1).values - lm for ll, lm in zip(llrs, log_m, strict=True)], -1
            )
            lse_llr = torch.stack([ll.logsumexp(dim=-1) - lm for ll, lm in zip(llrs, log_m, strict=True)], -1)
            if presence == "key":
                present = best_llr + log_q > log_not_q  # (B, n_e, n_a)
                p_present = torch.sigmoid(lse_llr + log_q - log_not_q)
            else:
                present = (best_llr.sum(-1) + log_q > log_not_q)[..., None].expand(b, n_e, n_a)
                p_present = torch.sigmoid(lse_llr.sum(-1) + log_q - log_not_q)[..., None].expand(b, n_e, n_a)
            sigma = (n0 / (2.0 * d_eff)).sqrt()[:, None]  # (B, 1): noise std of one similarity
            new_est = torch.zeros_like(est)
            for a, cb in enumerate(self.codebooks):
                best, idx = bests[a], idxs[a]
                ok = present[:, :, a]
                p_value = torch.softmax(llrs[a], dim=-1).gather(-1, idx[..., None])[..., 0]
                values[:, :, a] = torch.where(ok, idx, -1)
                conf[:, :, a] = best
                zs[:, :, a] = best / sigma.clamp(min=1e-12)
                post[:, :, a] = torch.where(ok, p_present[:, :, a] * p_value, 1.0 - p_present[:, :, a])
                readable[:, :, a] = ok & (best >= z_min[a] * sigma)
                v = cb[idx]
                if a == pos_a and shift is not None:
                    v = v * shift[:, None, :].conj()
                new_est[:, :, a] = ok[..., None].to(torch.complex64) * self.keys[None, :, a] * v
            est = new_est
            # channel estimates from the decisions: least-squares gain, residual noise power
            enc = kept * est.sum(dim=(1, 2))
            enc_pow = torch.view_as_real(enc).pow(2).sum(dim=(1, 2))
            if g_fixed is None:
                g_ls = (m.conj() * enc).real.sum(dim=1) / enc_pow.clamp(min=1e-12)
                g = torch.where(enc_pow > 0, g_ls.clamp(min=1e-3), g)
            if n0_fixed is None:
                resid = m - g[:, None].to(torch.complex64) * enc
                n0 = (torch.view_as_real(resid).pow(2).sum(dim=(1, 2)) / d_eff).clamp(
                    min=1e-6 * power.clamp(min=1e-12)
                )
        return DecodedMessage(values, readable, conf, zs, post, g, n0, self)
