"""Structure separation: effective adjacency from a bounded signed magnitude and a structural gate.

    A = (W_f(M) o G(Z)) o (1 - I),     W_f(M) = beta * tanh(M)          (paper, abstract)

``G`` is the structural gate in ``(0, 1)``; the factorisations offered (our reading of "the
factorisation options the paper ablates"):

- ``"full"``: ``G = sigmoid(Z)`` with a free ``(d, d)`` logit matrix ``Z``;
- ``"lowrank"``: ``G = sigmoid(U V^T + b)`` with ``U, V`` of shape ``(d, r)``;
- ``"none"``: the unseparated single-matrix baseline, ``A = W o (1 - I)`` with a free ``W`` and a
  support proxy ``G = 1 - exp(-(W / w0)^2)`` on which the closure losses then act.

The nonlinear variant (an MLP per node, as in DAGMA's ``DagmaMLP``) separates the first-layer weight
``theta[j, h, i]`` (input ``i`` to hidden unit ``h`` of node ``j``) as
``beta * tanh(M[j, h, i]) * G[i, j]``; its effective adjacency is ``A_ij = ||theta[j, :, i]||_2``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["SeparatedLinearSEM", "SeparatedMLPSEM", "logdet_acyclicity"]

FACTORIZATIONS = ("full", "lowrank", "none")


def logdet_acyclicity(A: torch.Tensor, s: float = 1.0) -> torch.Tensor:
    """DAGMA's log-det acyclicity ``h_s(A) = -log det(s I - A o A) + d log s`` (Bello et al. 2022, eq. 4).

    ``A``: ``(d, d)``. Zero iff ``A`` is a DAG, on the domain where ``s I - A o A`` is an M-matrix.
    Returns ``+inf`` when the determinant is not positive (outside the domain).
    """
    d = A.shape[0]
    eye = torch.eye(d, dtype=A.dtype, device=A.device)
    sign, logabsdet = torch.linalg.slogdet(s * eye - A * A)
    h = -logabsdet + d * math.log(s)
    return torch.where(sign > 0, h, torch.full_like(h, math.inf))


class _Gate(nn.Module):
    def __init__(
        self, d: int, factorization: str, rank: int, gate_init: float, w0: float, gen: torch.Generator
    ):
        super().__init__()
        if factorization not in FACTORIZATIONS:
            raise ValueError(f"factorization: expected one of {FACTORIZATIONS}, got {factorization!r}")
        self.d, self.factorization, self.w0 = d, factorization, w0
        z0 = math.log(gate_init / (1 - gate_init))
        if factorization == "full":
            self.Z = nn.Parameter(torch.full((d, d), z0, dtype=torch.float64))
        elif factorization == "lowrank":
            scale = 0.1
            self.U = nn.Parameter(scale * torch.randn(d, rank, generator=gen, dtype=torch.float64))
            self.V = nn.Parameter(scale * torch.randn(d, rank, generator=gen, dtype=torch.float64))
            self.b = nn.Parameter(torch.tensor(z0, dtype=torch.float64))

    def forward(self, W: torch.Tensor | None = None) -> torch.Tensor:
        if self.factorization == "full":
            return torch.sigmoid(self.Z)
        if self.factorization == "lowrank":
            return torch.sigmoid(self.U @ self.V.T + self.b)
        return -torch.expm1(-((W / self.w0) ** 2))


class SeparatedLinearSEM(nn.Module):
    """Linear SEM ``X ~ X A`` with the structure-separated adjacency ``A`` (shape ``(d, d)``).

    Args:
        d: number of variables.
        factorization: ``"full"``, ``"lowrank"`` or ``"none"`` (single matrix, unseparated).
        beta: bound of the signed magnitude ``beta * tanh(M)``.
        rank: rank of the low-rank gate.
        gate_init: initial gate value in ``(0, 1)``.
        w0: scale of the unseparated support proxy.
    """

    def __init__(
        self,
        d: int,
        factorization: str = "full",
        *,
        beta: float = 2.5,
        rank: int = 4,
        gate_init: float = 0.5,
        w0: float = 0.3,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        gen = generator or torch.Generator().manual_seed(0)
        self.d, self.beta = d, beta
        self.M = nn.Parameter(torch.zeros(d, d, dtype=torch.float64))
        self.gate = _Gate(d, factorization, rank, gate_init, w0, gen)
        self.register_buffer("offdiag", 1 - torch.eye(d, dtype=torch.float64))

    def adjacency(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(A, G)``: effective adjacency and structural gate, both ``(d, d)`` with zero diagonal."""
        if self.gate.factorization == "none":
            A = self.M * self.offdiag
            return A, self.gate(A) * self.offdiag
        G = self.gate() * self.offdiag
        return self.beta * torch.tanh(self.M) * G, G

    def score(self, cov: torch.Tensor) -> torch.Tensor:
        """Least squares ``1/(2n) ||X - X A||_F^2`` from the centred covariance ``cov = X^T X / n``."""
        A, _ = self.adjacency()
        R = torch.eye(self.d, dtype=A.dtype) - A
        return 0.5 * (R * (cov @ R)).sum()

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """``(n, d) -> (n, d)``: each column predicted from its parents, ``X A``."""
        return X @ self.adjacency()[0]


class SeparatedMLPSEM(nn.Module):
    """Nonlinear SEM: one MLP (one hidden sigmoid layer of ``hidden`` units) per node.

    First-layer weights ``theta[j, h, i] = beta * tanh(M[j, h, i]) * G[i, j] * (i != j)``;
    effective adjacency ``A_ij = ||theta[j, :, i]||_2``. ``forward``: ``(n, d) -> (n, d)``.
    """

    def __init__(
        self,
        d: int,
        factorization: str = "full",
        *,
        hidden: int = 10,
        beta: float = 2.5,
        rank: int = 4,
        gate_init: float = 0.5,
        w0: float = 0.3,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        gen = generator or torch.Generator().manual_seed(0)
        self.d, self.beta, self.hidden = d, beta, hidden
        # DAGMA initialises the first layer at zero; a tiny random init breaks hidden-unit symmetry.
        self.M = nn.Parameter(1e-2 * torch.randn(d, hidden, d, generator=gen, dtype=torch.float64))
        self.b1 = nn.Parameter(torch.zeros(d, hidden, dtype=torch.float64))
        self.w2 = nn.Parameter(torch.randn(d, hidden, generator=gen, dtype=torch.float64) / math.sqrt(hidden))
        self.b2 = nn.Parameter(torch.zeros(d, dtype=torch.float64))
        self.gate = _Gate(d, factorization, rank, gate_init, w0, gen)
        self.register_buffer("offdiag", 1 - torch.eye(d, dtype=torch.float64))

    def first_layer(self) -> tuple[torch.Tensor, torch.Tensor]:
        mask = self.offdiag.T[:, None, :]  # [j, 1, i]
        if self.gate.factorization == "none":
            theta = self.M * mask
            A = torch.sqrt((theta**2).sum(1).T + 1e-18) * self.offdiag
            return theta, self.gate(A) * self.offdiag
        G = self.gate() * self.offdiag  # [i, j]
        theta = self.beta * torch.tanh(self.M) * G.T[:, None, :] * mask
        return theta, G

    def adjacency(self) -> tuple[torch.Tensor, torch.Tensor]:
        theta, G = self.first_layer()
        A = torch.sqrt((theta**2).sum(1).T + 1e-18) * self.offdiag
        return A, G

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        theta, _ = self.first_layer()
        hid = torch.sigmoid(torch.einsum("ni,jhi->njh", X, theta) + self.b1)
        return (hid * self.w2).sum(-1) + self.b2
