"""``GoalAccessibilityRatio``: a torchmetrics ``Metric`` accumulating GAR over batches and processes.

States (all ``dist_reduce_fx="sum"``, so DDP ranks combine exactly): ``mass_sum`` (L, n_turns) the sum
over generated rows of the head-mean goal mass, and ``count`` (n_turns,) the number of rows. ``compute``
returns (L, n_turns) GAR per layer and turn (``n_turns=1``: one column; a turn without rows gives 0).
Requires the ``metrics`` extra (torchmetrics).
"""

from __future__ import annotations

import torch
from torchmetrics import Metric

from paperworks.core.validate import positive_int

from .gar import _stack, gar_by_turn, goal_mass

__all__ = ["GoalAccessibilityRatio"]


class GoalAccessibilityRatio(Metric):
    """Streaming GAR: ``update(attentions, goal_mask, turn_rows)``, ``compute() -> (L, n_turns)``.

    ``attentions``: (L, B, H, Tq, Tk) or a list of (B, H, Tq, Tk); ``goal_mask``: (B, Tk) bool;
    ``turn_rows``: (B, Tq) int turn index of each generated row (-1 elsewhere) or a (B, Tq) bool row mask
    (all turn 0). ``normalize``: the length-normalised variant (mass / uniform share).
    """

    is_differentiable = False
    higher_is_better = None
    full_state_update = False

    def __init__(self, num_layers: int, num_turns: int = 1, *, normalize: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.num_layers = positive_int(num_layers, "num_layers")
        self.num_turns = positive_int(num_turns, "num_turns")
        self.normalize = bool(normalize)
        self.add_state(
            "mass_sum",
            default=torch.zeros(self.num_layers, self.num_turns, dtype=torch.float64),
            dist_reduce_fx="sum",
        )
        self.add_state(
            "count", default=torch.zeros(self.num_turns, dtype=torch.float64), dist_reduce_fx="sum"
        )

    def update(self, attentions, goal_mask, turn_rows) -> None:
        a = _stack(attentions)
        if a.shape[0] != self.num_layers:
            raise ValueError(f"attentions: expected {self.num_layers} layers, got {a.shape[0]}")
        tr = torch.as_tensor(turn_rows, device=a.device)
        if tr.dtype == torch.bool:
            tr = torch.where(tr, 0, -1)
        m = goal_mass(a, goal_mask, normalize=self.normalize).to(torch.float64)
        means, count = gar_by_turn(m, tr, self.num_turns)
        if self.normalize and torch.isnan(means).any():
            raise ValueError(
                "turn_rows: selected rows with no goal position at or before them (normalize=True)"
            )
        self.mass_sum += means * count
        self.count += count

    def compute(self) -> torch.Tensor:
        return self.mass_sum / self.count.clamp(min=1)
