"""Per-task gradient combiners on shared parameters, and an optimiser wrapper that applies them.

Every combiner maps a per-task gradient matrix ``G (K, P)`` (row ``k`` = gradient of task ``k``'s loss
on the shared parameters) to one update direction ``d (P,)``:

- :func:`mean_combiner`: ``d = mean_k g_k`` (vanilla multi-task training);
- :func:`pcgrad` (Yu et al. 2020, arXiv 2001.06782): each ``g_i`` is projected, against the other tasks
  in a random order, onto the normal plane of every ``g_j`` it conflicts with (``g_i . g_j < 0``):
  ``g_i <- g_i - (g_i . g_j / |g_j|^2) g_j``; ``d`` = mean of the projected rows (the paper sums; the
  mean keeps the vanilla scale). Aligned gradients are left unchanged;
- :func:`cagrad` (Liu et al. 2021, arXiv 2110.14048): ``g_0 = mean_k g_k``; ``w`` minimises
  ``w^T G g_0 + c |g_0| |G^T w|`` over the simplex; ``d = (g_0 + c |g_0| / |g_w| g_w) / (1 + c^2)``
  with ``g_w = G^T w`` (the authors' rescale 1), ``c = 0.4`` by default;
- :func:`fairgrad` (Ban & Ji 2024, arXiv 2402.15638): alpha-fair weights solving
  ``(G G^T) w = w^(-1/alpha)``, ``w > 0`` (least squares), ``d = G^T w``; alpha = 1 is proportional
  fairness.

The small ``K``-dimensional problems are solved on the ``K x K`` Gram matrix on the host (CAGrad with
SciPy's SLSQP as the authors' code does, FairGrad by Newton's method); the ``P``-dimensional work stays
in torch. :func:`per_task_gradients` computes ``G`` with one
batched (vmapped) backward pass; :class:`GradientCombiner` wraps any ``torch.optim`` optimiser
(``backward(task_losses)`` then ``step()``), like the familiar ``pc_backward`` API.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import torch

from paperworks.core.validate import nonnegative_float, one_of, positive_float

__all__ = [
    "COMBINERS",
    "GradientCombiner",
    "cagrad",
    "combine",
    "fairgrad",
    "mean_combiner",
    "pcgrad",
    "per_task_gradients",
]

COMBINERS = ("mean", "pcgrad", "cagrad", "fairgrad")


def _check_G(G: torch.Tensor) -> torch.Tensor:
    if not isinstance(G, torch.Tensor):
        raise TypeError(f"G: expected a torch.Tensor, got {type(G).__name__}")
    if G.ndim != 2 or G.shape[0] < 1:
        raise ValueError(f"G: expected shape (K, P) with K >= 1, got {tuple(G.shape)}")
    if not torch.isfinite(G).all():
        raise ValueError("G: expected finite gradients")
    return G


def mean_combiner(G: torch.Tensor) -> torch.Tensor:
    """``mean_k g_k``: ``G (K, P) -> (P,)``."""
    return _check_G(G).mean(0)


def pcgrad(G: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """PCGrad: project conflicting components away (random order per task); ``(K, P) -> (P,)``.

    Vectorised over tasks: at stage ``t`` every row ``i`` is projected against its ``t``-th partner.
    """
    G = _check_G(G)
    k = G.shape[0]
    if k == 1:
        return G[0].clone()
    sq = (G * G).sum(1).clamp(min=1e-20)
    # random order of the K-1 partners of each task
    keys = torch.rand(k, k, generator=generator, device="cpu")
    keys.fill_diagonal_(2.0)
    order = keys.argsort(1)[:, : k - 1].to(G.device)
    Gp = G.clone()
    for t in range(k - 1):
        j = order[:, t]
        gj = G[j]
        dot = (Gp * gj).sum(1)
        Gp = Gp - (torch.clamp(dot, max=0.0) / sq[j])[:, None] * gj
    return Gp.mean(0)


def _simplex_min(fun, k: int) -> np.ndarray:
    from scipy.optimize import minimize

    x0 = np.full(k, 1.0 / k)
    res = minimize(
        fun,
        x0,
        bounds=[(0.0, 1.0)] * k,
        constraints=({"type": "eq", "fun": lambda x: 1.0 - x.sum()},),
        method="SLSQP",
        options={"maxiter": 200, "ftol": 1e-12},
    )
    w = np.clip(res.x, 0.0, None)
    return w / w.sum()


def cagrad(G: torch.Tensor, c: float = 0.4) -> torch.Tensor:
    """CAGrad with conflict radius ``c`` (``c = 0`` is the mean); ``(K, P) -> (P,)``."""
    G = _check_G(G)
    c = nonnegative_float(c, "c")
    k = G.shape[0]
    g0 = G.mean(0)
    if c == 0.0 or k == 1:
        return g0.clone() if k > 1 else G[0].clone()
    GG = (G @ G.T).double().cpu().numpy()
    b = GG.mean(1)  # G g0
    g0_norm = float(np.sqrt(max(b.mean(), 0.0)))
    if g0_norm == 0.0:
        return g0
    coef = c * g0_norm
    w = _simplex_min(lambda x: float(x @ b + coef * np.sqrt(max(x @ GG @ x, 0.0) + 1e-18)), k)
    wt = torch.as_tensor(w, dtype=G.dtype, device=G.device)
    gw = wt @ G
    lam = coef / (gw.norm() + 1e-12)
    return (g0 + lam * gw) / (1.0 + c**2)


def _fair_weights(A: np.ndarray, alpha: float, iters: int = 100) -> np.ndarray:
    """Solve ``A w = w^(-1/alpha)``, ``w > 0``: the minimiser of the convex
    ``0.5 w^T A w - sum_i h(w_i)`` with ``h' (w) = w^(-1/alpha)``, by damped Newton steps kept inside
    ``w > 0``."""
    k = A.shape[0]
    A = A + 1e-10 * np.trace(A) / k * np.eye(k)
    p = -1.0 / alpha
    w = np.ones(k)
    for _ in range(iters):
        r = A @ w - w**p
        if np.max(np.abs(r)) < 1e-12 * max(1.0, np.max(np.abs(w**p))):
            break
        J = A + np.diag(-p * w ** (p - 1.0))
        step = np.linalg.solve(J, r)
        t = 1.0
        while np.any(w - t * step <= 0):
            t *= 0.5
        w = w - t * step
    return w


def fairgrad(G: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """FairGrad: ``d = G^T w`` with ``(G G^T) w = w^(-1/alpha)``, ``w > 0``; ``(K, P) -> (P,)``.

    The authors solve the ``K`` equations by least squares; here by Newton's method on the convex
    problem they are the optimality conditions of (same solution; tested against SciPy's
    ``least_squares`` and the closed form for orthogonal gradients).
    """
    G = _check_G(G)
    alpha = positive_float(alpha, "alpha")
    k = G.shape[0]
    GG = (G @ G.T).double().cpu().numpy()
    scale = float(np.trace(GG) / k)
    if scale == 0.0:
        return G.mean(0)
    # solve on a unit-scale Gram; (s A) w = w^(-1/a) gives w = s^(-a/(1+a)) w_A
    w = _fair_weights(GG / scale, alpha) * scale ** (-alpha / (1.0 + alpha))
    return torch.as_tensor(w, dtype=G.dtype, device=G.device) @ G


def combine(
    G: torch.Tensor, method: str = "mean", *, c: float = 0.4, alpha: float = 1.0, generator=None
) -> torch.Tensor:
    """Dispatch on ``method`` in :data:`COMBINERS`."""
    method = one_of(method, "method", COMBINERS)
    if method == "mean":
        return mean_combiner(G)
    if method == "pcgrad":
        return pcgrad(G, generator)
    if method == "cagrad":
        return cagrad(G, c)
    return fairgrad(G, alpha)


def per_task_gradients(
    task_losses: torch.Tensor, params: Sequence[torch.nn.Parameter], retain_graph: bool = False
) -> torch.Tensor:
    """``G (K, P)``: the gradient of each of ``task_losses (K,)`` on ``params``, flattened and concatenated.

    One batched backward (``is_grads_batched``, vmap over the ``K`` cotangents); a parameter a task's
    loss does not reach gets zeros.
    """
    if task_losses.ndim != 1 or task_losses.numel() < 1:
        raise ValueError(f"task_losses: expected shape (K,) with K >= 1, got {tuple(task_losses.shape)}")
    params = list(params)
    k = task_losses.shape[0]
    eye = torch.eye(k, dtype=task_losses.dtype, device=task_losses.device)
    grads = torch.autograd.grad(
        task_losses,
        params,
        grad_outputs=eye,
        is_grads_batched=True,
        retain_graph=retain_graph,
        allow_unused=True,
    )
    rows = [
        (g if g is not None else torch.zeros((k, *p.shape), dtype=p.dtype, device=p.device)).reshape(k, -1)
        for g, p in zip(grads, params, strict=True)
    ]
    return torch.cat(rows, 1)


class GradientCombiner:
    """Wrap a ``torch.optim`` optimiser: ``backward(task_losses)`` writes the combined gradient.

    ``shared_params``: the parameters every task reaches (combined by ``method``); every other parameter
    of the optimiser gets the gradient of ``task_losses.mean()`` (task-specific heads: each head then
    sees only its own task). ``task_losses (K,)``: one loss per task present in the batch (pass only the
    present tasks; a single task gives its own gradient). ``backward`` returns ``G`` (the per-task
    gradients on the shared parameters) for diagnostics.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        method: str = "pcgrad",
        shared_params: Iterable[torch.nn.Parameter] | None = None,
        *,
        c: float = 0.4,
        alpha: float = 1.0,
        max_grad_norm: float | None = None,
        seed: int | None = None,
    ):
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"optimizer: expected a torch.optim.Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.method = one_of(method, "method", COMBINERS)
        self.c = nonnegative_float(c, "c")
        self.alpha = positive_float(alpha, "alpha")
        self.max_grad_norm = None if max_grad_norm is None else positive_float(max_grad_norm, "max_grad_norm")
        all_params = [p for g in optimizer.param_groups for p in g["params"]]
        self.shared = list(all_params if shared_params is None else shared_params)
        ids = {id(p) for p in self.shared}
        if not ids <= {id(p) for p in all_params}:
            raise ValueError("shared_params: expected parameters managed by the optimizer")
        self.others = [p for p in all_params if id(p) not in ids]
        self.generator = torch.Generator().manual_seed(0 if seed is None else int(seed))

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    def backward(self, task_losses: torch.Tensor) -> torch.Tensor:
        if not isinstance(task_losses, torch.Tensor) or task_losses.ndim != 1 or task_losses.numel() < 1:
            raise ValueError("task_losses: expected a 1-d tensor with one loss per present task")
        if not torch.isfinite(task_losses).all():
            raise ValueError("task_losses: expected finite losses")
        G = per_task_gradients(task_losses, self.shared, retain_graph=bool(self.others))
        other_grads = None
        if self.others:
            other_grads = list(torch.autograd.grad(task_losses.mean(), self.others, allow_unused=True))
        return self.apply(G, other_grads)

    def apply(
        self, G: torch.Tensor, other_grads: Sequence[torch.Tensor | None] | None = None
    ) -> torch.Tensor:
        """Write ``combine(G)`` into the shared parameters' ``.grad`` (``G (K, P)`` precomputed, e.g. one
        backward per task on that task's samples) and ``other_grads`` into the other parameters'."""
        G = _check_G(G)
        n_shared = sum(p.numel() for p in self.shared)
        if G.shape[1] != n_shared:
            raise ValueError(f"G: expected {n_shared} columns (the shared parameters), got {G.shape[1]}")
        d = combine(G, self.method, c=self.c, alpha=self.alpha, generator=self.generator)
        offset = 0
        for p in self.shared:
            n = p.numel()
            p.grad = d[offset : offset + n].view_as(p).clone()
            offset += n
        if self.others and other_grads is not None:
            for p, g in zip(self.others, other_grads, strict=True):
                p.grad = None if g is None else g
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.shared + self.others, self.max_grad_norm)
        return G.detach()

    def step(self) -> None:
        self.optimizer.step()

    def state_dict(self) -> dict:
        return {
            "optimizer": self.optimizer.state_dict(),
            "method": self.method,
            "c": self.c,
            "alpha": self.alpha,
        }

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.method = one_of(state["method"], "method", COMBINERS)
        self.c, self.alpha = float(state["c"]), float(state["alpha"])
