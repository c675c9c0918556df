"""A cooperative referential gridworld: a scout describes objects, a receiver must reach a target.

Generative model (per episode, seeded): a ``grid x grid`` world holds ``n_min..n_slots`` objects in
distinct cells, each with a colour and a shape (distinct (colour, shape) pairs), listed in random
entity slots; the remaining slots are empty. The scout stands at a uniform cell ``s`` and observes
every object at its position *relative to itself* (``p - s``); the receiver stands at ``r`` and
observes nothing. The scout sends one message; the receiver gets the sender's offset ``s - r``
(e.g. from a shared map) and a target (colour, shape), and succeeds when it names the target's
position in its own frame, ``p - r``.

Latent: object positions and identities, poses. Observed by the scout: the slot table in its frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from paperworks.core.validate import int_in_range, positive_int

from ._checks import check_generator

__all__ = ["Episodes", "SceneConfig", "sample_episodes"]


@dataclass(frozen=True)
class SceneConfig:
    """Sizes of the referential gridworld (defaults used by the headline experiment)."""

    grid: int = 8
    n_slots: int = 5
    n_min: int = 3
    n_colors: int = 8
    n_shapes: int = 8

    def __post_init__(self) -> None:
        int_in_range(self.grid, "SceneConfig.grid", 2)
        positive_int(self.n_slots, "SceneConfig.n_slots")
        int_in_range(self.n_min, "SceneConfig.n_min", 1, self.n_slots)
        positive_int(self.n_colors, "SceneConfig.n_colors")
        positive_int(self.n_shapes, "SceneConfig.n_shapes")
        if self.n_slots > min(self.grid**2, self.n_colors * self.n_shapes):
            raise ValueError("SceneConfig.n_slots: more objects than cells or (colour, shape) pairs")

    @property
    def radius(self) -> int:
        return self.grid - 1


@dataclass(frozen=True)
class Episodes:
    """A batch of episodes. ``table`` (B, n_slots, 3) int64 [colour, shape, position index] in the
    scout's frame with -1 for empty slots; ``rel`` (B, n_slots, 2) positions relative to the scout;
    ``offset`` (B, 2) = s - r; ``target`` (B,) the slot of the target object."""

    table: torch.Tensor
    rel: torch.Tensor
    offset: torch.Tensor
    target: torch.Tensor
    present: torch.Tensor
    config: SceneConfig

    @property
    def target_pos_receiver(self) -> torch.Tensor:
        """(B, 2) the target's position in the receiver's frame."""
        b = torch.arange(self.rel.shape[0])
        return self.rel[b, self.target] + self.offset


def sample_episodes(
    n: int, config: SceneConfig = SceneConfig(), generator: torch.Generator | None = None
) -> Episodes:
    """Draw ``n`` episodes from the generative model (module docstring), vectorised over episodes."""
    n = positive_int(n, "n")
    if not isinstance(config, SceneConfig):
        raise TypeError(f"config: expected a SceneConfig, got {type(config).__name__}")
    generator = check_generator(generator)
    c = config
    k = c.n_slots
    cells = torch.rand(n, c.grid**2, generator=generator).argsort(dim=1)[:, :k]
    pos = torch.stack([cells // c.grid, cells % c.grid], dim=-1)  # world coordinates (n, k, 2)
    kinds = torch.rand(n, c.n_colors * c.n_shapes, generator=generator).argsort(dim=1)[:, :k]
    color, shape = kinds // c.n_shapes, kinds % c.n_shapes
    n_obj = torch.randint(c.n_min, k + 1, (n,), generator=generator)
    slot_order = torch.rand(n, k, generator=generator).argsort(dim=1)
    present = torch.zeros(n, k, dtype=torch.bool)
    present.scatter_(1, slot_order, torch.arange(k)[None, :].expand(n, k) < n_obj[:, None])
    scout = torch.randint(0, c.grid, (n, 2), generator=generator)
    recv = torch.randint(0, c.grid, (n, 2), generator=generator)
    rel = pos - scout[:, None, :]
    side = 2 * c.radius + 1
    pos_idx = (rel[..., 0] + c.radius) * side + (rel[..., 1] + c.radius)
    table = torch.stack([color, shape, pos_idx], dim=-1)
    table = torch.where(present[..., None], table, torch.full_like(table, -1))
    # target: a uniformly chosen present slot
    w = present.to(torch.float32)
    target = torch.multinomial(w, 1, generator=generator)[:, 0]
    return Episodes(table, rel, scout - recv, target, present, c)
