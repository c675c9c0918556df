"""The regularisers PENEX is compared with (arXiv 2510.02107, experiments): all on cross-entropy.

- label smoothing (Szegedy et al. 2016): ``torch.nn.functional.cross_entropy(label_smoothing=eps)``;
- confidence penalty (Pereyra et al. 2017): ``CE - beta * H(softmax(f))``;
- dropout and weight decay act on the network / the parameters (see :mod:`.training`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from paperworks.core.validate import nonnegative_float

from ._checks import check_scores_and_targets, check_values_now, class_scores, class_targets, validate_flag

__all__ = ["confidence_penalty_loss"]


def confidence_penalty_loss(
    logits: Tensor, target: Tensor, beta: float = 0.1, *, validate: bool | None = None
) -> Tensor:
    """Mean of ``CE(f, y) - beta * H(softmax(f))`` (Pereyra et al. 2017); logits ``(N, C)``, target ``(N,)``.

    ``validate``: as in :func:`paperworks.penex.penex_loss` (value checks on CPU tensors by default).
    """
    beta = nonnegative_float(beta, "beta")
    validate = validate_flag(validate)
    class_scores(logits)
    if logits.dim() != 2:
        raise ValueError(f"logits: expected shape (N, C), got {tuple(logits.shape)}")
    class_targets(target, logits)
    if check_values_now(validate, logits, target):
        check_scores_and_targets(logits, target, logits.shape[1], None)
    logp = torch.log_softmax(logits, dim=1)
    entropy = -(logp.exp() * logp).sum(dim=1)
    return F.nll_loss(logp, target.long()) - beta * entropy.mean()
