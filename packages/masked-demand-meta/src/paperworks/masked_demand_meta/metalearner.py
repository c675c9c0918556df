"""The DCMOML meta-learner: ``f(X_k, all prices, outcomes but the two masked) -> (alpha_k, beta_k)``,
trained on the squared error of the two masked outcomes.

    L(f) = mean_k sum_{t in {T-1, T}} (y_kt - alpha_hat_k - beta_hat_k p_kt)^2                (masked loss)

With the masked prices exogenous given the information set and distinct, the population minimiser is
``E[theta_k | I_k]`` (two distinct query prices pin down both coordinates). ``reveal`` > 0 also feeds the
first ``reveal`` masked outcomes to ``f`` (the refinement the paper shows is not identified); ``inputs =
"covariates"`` feeds only ``X_k`` and trains on every outcome (standard covariate-only meta-learning).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperworks.core.validate import nonnegative_float, one_of, positive_float, positive_int

from .generator import DemandPanel

__all__ = ["FittedMeta", "MetaConfig", "MetaNet", "fit_meta", "masked_loss"]


@dataclass(frozen=True)
class MetaConfig:
    """``kind``: "mlp" (two hidden layers of ``hidden``) or "linear"; ``inputs``: "designed" (DCMOML's
    information set) or "covariates"; ``reveal``: masked outcomes revealed to f (0, 1 or 2); Adam with
    ``lr`` and ``weight_decay`` for ``epochs`` over minibatches of ``batch_size`` tasks; early stopping on
    the masked loss of a ``val_fraction`` of tasks (``patience`` epochs)."""

    kind: str = "mlp"
    inputs: str = "designed"
    reveal: int = 0
    hidden: int = 64
    lr: float = 3e-3
    weight_decay: float = 1e-4
    epochs: int = 300
    batch_size: int = 256
    val_fraction: float = 0.2
    patience: int = 30

    def __post_init__(self) -> None:
        one_of(self.kind, "kind", ("mlp", "linear"))
        one_of(self.inputs, "inputs", ("designed", "covariates"))
        if self.reveal not in (0, 1, 2):
            raise ValueError(f"reveal: expected 0, 1 or 2 masked outcomes revealed, got {self.reveal!r}")
        positive_int(self.hidden, "hidden")
        positive_float(self.lr, "lr")
        nonnegative_float(self.weight_decay, "weight_decay")
        positive_int(self.epochs, "epochs")
        positive_int(self.batch_size, "batch_size")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"val_fraction: expected a fraction in (0, 1), got {self.val_fraction!r}")
        positive_int(self.patience, "patience")


class MetaNet(nn.Module):
    """(K, n_in) features -> (K, 2) standardised ``(a, b)`` with ``y' = a + b p'`` (see :func:`fit_meta`)."""

    def __init__(self, n_in: int, kind: str = "mlp", hidden: int = 64) -> None:
        super().__init__()
        self.linear = nn.Linear(n_in, 2)
        self.mlp = None
        if kind == "mlp":  # a linear path plus an MLP residual: starts at the linear solution's family
            self.mlp = nn.Sequential(
                nn.Linear(n_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 2)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.linear(x)
        return out if self.mlp is None else out + self.mlp(x)


def masked_loss(ab: torch.Tensor, prices: torch.Tensor, demand: torch.Tensor) -> torch.Tensor:
    """(masked loss): ``ab`` (K, 2), ``prices``/``demand`` (K, m) of the supervising periods."""
    return ((demand - ab[:, :1] - ab[:, 1:] * prices) ** 2).sum(dim=1).mean()


@dataclass(frozen=True, eq=False)
class _Scaler:
    x_mean: np.ndarray
    x_sd: np.ndarray
    p_mean: float
    p_sd: float
    y_mean: float
    y_sd: float


def _features(panel: DemandPanel, cfg: MetaConfig, sc: _Scaler) -> np.ndarray:
    X = (panel.X - sc.x_mean) / sc.x_sd
    if cfg.inputs == "covariates":
        return X
    T = panel.periods
    p = (panel.prices - sc.p_mean) / sc.p_sd
    y = (panel.demand[:, : T - 2 + cfg.reveal] - sc.y_mean) / sc.y_sd
    return np.concatenate([X, p, y], axis=1)


class FittedMeta:
    """A trained meta-learner: ``predict(panel) -> (K, 2)`` ``(alpha_hat, beta_hat)`` in data units."""

    def __init__(self, net: MetaNet, cfg: MetaConfig, scaler: _Scaler, history: list[float]) -> None:
        self.net, self.cfg, self.scaler, self.history = net, cfg, scaler, history

    def predict(self, panel: DemandPanel) -> np.ndarray:
        sc = self.scaler
        with torch.inference_mode():
            ab = (
                self.net(torch.as_tensor(_features(panel, self.cfg, sc), dtype=torch.float32))
                .double()
                .numpy()
            )
        beta = ab[:, 1] * sc.y_sd / sc.p_sd
        alpha = sc.y_mean + sc.y_sd * ab[:, 0] - beta * sc.p_mean
        return np.stack([alpha, beta], axis=1)


def fit_meta(panel: DemandPanel, config: MetaConfig | None = None, *, seed: int = 0) -> FittedMeta:
    """Train the meta-learner of ``config`` on ``panel`` (module docstring); deterministic given ``seed``."""
    cfg = config or MetaConfig()
    K, T = panel.prices.shape
    sc = _Scaler(
        panel.X.mean(0),
        panel.X.std(0) + 1e-12,
        float(panel.prices.mean()),
        float(panel.prices.std() + 1e-12),
        float(panel.demand.mean()),
        float(panel.demand.std() + 1e-12),
    )
    feats = torch.as_tensor(_features(panel, cfg, sc), dtype=torch.float32)
    sup = slice(T - 2, T) if cfg.inputs == "designed" else slice(0, T)  # covariate-only: every outcome
    p = torch.as_tensor((panel.prices[:, sup] - sc.p_mean) / sc.p_sd, dtype=torch.float32)
    y = torch.as_tensor((panel.demand[:, sup] - sc.y_mean) / sc.y_sd, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    perm = torch.randperm(K, generator=gen)
    n_val = max(1, round(cfg.val_fraction * K))
    val, train = perm[:n_val], perm[n_val:]
    if train.numel() == 0:
        raise ValueError(f"panel: expected more tasks than the validation split takes, got {K}")
    net = MetaNet(feats.shape[1], cfg.kind, cfg.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    best, best_state, wait, history = float("inf"), None, 0, []
    for _ in range(cfg.epochs):
        order = train[torch.randperm(train.numel(), generator=gen)]
        for i in range(0, order.numel(), cfg.batch_size):
            b = order[i : i + cfg.batch_size]
            opt.zero_grad()
            masked_loss(net(feats[b]), p[b], y[b]).backward()
            opt.step()
        with torch.no_grad():
            v = float(masked_loss(net(feats[val]), p[val], y[val]))
        history.append(v)
        if v < best - 1e-6:
            best, wait = v, 0
            best_state = {k: t.clone() for k, t in net.state_dict().items()}
        else:
            wait += 1
            if wait >= cfg.patience:
                break
    net.load_state_dict(best_state)
    net.eval()
    return FittedMeta(net, cfg, sc, history)
