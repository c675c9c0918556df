"""Generated tasks with a controlled distribution shift (documented generative models).

:class:`PolynomialTask` - in-context polynomial regression (after Garg et al. 2022, arXiv 2208.01066).
Latent: coefficients ``c_j ~ N(base_j + shift, coef_std^2)``, ``j = 0..degree`` (``base``: the
task's prior polynomial); observed: ``k + 1`` points
``x_i ~ U[-r, r]`` and ``y_i = sum_j c_j x_i^j`` for the first ``k`` (the context). The model reads the
interleaved sequence ``x_1, y_1, ..., x_k, y_k, x_q`` (token features ``(value, is_x)``) and predicts
``y`` at every ``x`` token; the task's answer is ``y_q``, correct when ``|y_hat - y_q| <= tol``.
ID: ``r = 1``, ``shift = 0``; OOD: ``r = ood_range > 1`` and coefficients shifted by ``ood_shift``.

:class:`SuccessorTask` - a small language task. Latent: ``n_digits`` digits ``a_1..a_k ~ U{0..9}``
(independent, odd ``k``) and a template (filler words around them, the digits at distinct random
positions in their order of drawing); observed: the token sequence ``<bos> f.. a_i f.. a_j .. = y`` with
``y = (median(a_1..a_k) + 1) mod 10``, the successor of the digits' median (``n_digits = 1``: the
successor of the one digit). ID templates have ``id_fillers`` filler words drawn from the first
``n_fillers`` words; OOD templates are longer (``ood_fillers`` words, positions never seen in training),
a controlled shift in the template only: the rule stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from paperworks.core.validate import as_generator, one_of, positive_float, positive_int

__all__ = ["PolynomialTask", "SuccessorTask"]


@dataclass(frozen=True)
class PolynomialTask:
    """In-context polynomial regression; see the module docstring for the generative model."""

    n_context: int = 8
    degree: int = 2
    base: tuple[float, ...] = (0.0, 1.0, -1.0)
    coef_std: float = 0.3
    ood_range: float = 1.5
    ood_shift: float = 0.25
    tol: float = 0.2

    def __post_init__(self) -> None:
        positive_int(self.n_context, "n_context")
        positive_int(self.degree, "degree")
        if len(self.base) != self.degree + 1:
            raise ValueError(
                f"base: expected {self.degree + 1} coefficients (degree + 1), got {len(self.base)}"
            )
        positive_float(self.coef_std, "coef_std")
        positive_float(self.tol, "tol")
        if positive_float(self.ood_range, "ood_range") < 1.0:
            raise ValueError(f"ood_range: expected >= 1 (ID x lies in [-1, 1]), got {self.ood_range}")

    @property
    def seq_len(self) -> int:
        return 2 * self.n_context + 1

    def sample(self, n: int, split: str = "id", rng=None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(tokens, targets)``: tokens ``(n, 2k+1, 2)`` float32, targets ``(n, k+1)`` (y at each x).

        ``split``: ``"id"`` or ``"ood"``.
        """
        n = positive_int(n, "n")
        one_of(split, "split", ("id", "ood"))
        rng = as_generator(rng)
        r, shift = (1.0, 0.0) if split == "id" else (self.ood_range, self.ood_shift)
        k = self.n_context
        c = rng.normal(np.asarray(self.base) + shift, self.coef_std, size=(n, self.degree + 1))
        x = rng.uniform(-r, r, size=(n, k + 1))
        y = np.polynomial.polynomial.polyval(x.T, c.T, tensor=False).T  # (n, k+1)
        tok = np.zeros((n, 2 * k + 1, 2))
        tok[:, 0::2, 0] = x
        tok[:, 0::2, 1] = 1.0
        tok[:, 1::2, 0] = y[:, :k]
        return torch.from_numpy(tok).float(), torch.from_numpy(y).float()


@dataclass(frozen=True)
class SuccessorTask:
    """``(median + 1) mod 10`` of the ``n_digits`` digits inside a filler template (module docstring)."""

    n_fillers: int = 12
    id_fillers: int = 3
    ood_fillers: int = 8
    n_digits: int = 1

    def __post_init__(self) -> None:
        positive_int(self.n_fillers, "n_fillers")
        positive_int(self.id_fillers, "id_fillers")
        if positive_int(self.ood_fillers, "ood_fillers") <= self.id_fillers:
            raise ValueError(
                f"ood_fillers: expected more filler words than ID ({self.id_fillers}), got {self.ood_fillers}"
            )
        if positive_int(self.n_digits, "n_digits") % 2 == 0:
            raise ValueError(f"n_digits: expected an odd count (a unique median), got {self.n_digits}")

    @property
    def eq(self) -> int:
        return 10 + self.n_fillers

    @property
    def bos(self) -> int:
        return 11 + self.n_fillers

    @property
    def vocab_size(self) -> int:
        return 12 + self.n_fillers

    def sample(self, n: int, split: str = "id", rng=None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(input_ids, answers)``: ``(n, T)`` int64 ending in ``=`` and the answer digits ``(n,)``.

        Append ``answers`` to get the full training sequence; ``T = fillers + n_digits + 2`` with
        ``fillers = id_fillers`` (ID) or ``ood_fillers`` (OOD). Digits are tokens ``0..9``.
        """
        n = positive_int(n, "n")
        one_of(split, "split", ("id", "ood"))
        rng = as_generator(rng)
        f = self.id_fillers if split == "id" else self.ood_fillers
        k = self.n_digits
        slots = f + k  # positions between <bos> and "="
        ids = 10 + rng.integers(0, self.n_fillers, size=(n, slots + 2))
        ids[:, 0] = self.bos
        ids[:, -1] = self.eq
        digits = rng.integers(0, 10, size=(n, k))
        pos = 1 + np.sort(np.argsort(rng.random((n, slots)), axis=1)[:, :k], axis=1)
        ids[np.arange(n)[:, None], pos] = digits
        answers = (np.sort(digits, axis=1)[:, k // 2] + 1) % 10
        return torch.from_numpy(ids).long(), torch.from_numpy(answers).long()
