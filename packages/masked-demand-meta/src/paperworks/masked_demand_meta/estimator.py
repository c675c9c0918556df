"""``MaskedOutcomeMetaLearner``: DCMOML as a scikit-learn estimator on a long table or a panel."""

from __future__ import annotations

from sklearn.base import BaseEstimator

from paperworks.core import torch_threads

from .generator import DemandPanel
from .metalearner import MetaConfig, fit_meta

__all__ = ["MaskedOutcomeMetaLearner", "select_meta"]


def select_meta(panel: DemandPanel, configs: list[MetaConfig], *, seed: int = 0):
    """Fit each config and keep the one with the lowest held-out masked loss (its own training objective on
    validation tasks; never the causal target, which is unobserved)."""
    fits = [fit_meta(panel, c, seed=seed) for c in configs]
    return min(fits, key=lambda f: min(f.history))


class MaskedOutcomeMetaLearner(BaseEstimator):
    """Decision-conditioned masked-outcome meta-learning (DCMOML).

    ``fit(X)`` takes a long pandas table (``task_id, t, price, demand`` and covariate columns; the last two
    periods of each task are the masked, locally exogenous ones) or a :class:`~.generator.DemandPanel`;
    ``predict_theta(X)`` returns each task's ``(alpha, beta)``: a DataFrame ``task_id, alpha, beta`` for a
    table, a (K, 2) array for a panel. ``kind="auto"`` fits the linear and the MLP version and keeps the
    lower held-out masked loss. Fitted: ``meta_``, ``config_``, ``covariates_``, ``n_features_in_``.
    """

    def __init__(
        self,
        kind: str = "auto",
        hidden: int = 64,
        lr: float = 3e-3,
        weight_decay: float = 1e-4,
        epochs: int = 300,
        batch_size: int = 256,
        patience: int = 30,
        reveal: int = 0,
        covariates: list[str] | None = None,
        random_state: int = 0,
    ) -> None:
        self.kind = kind
        self.hidden = hidden
        self.lr = lr
        self.weight_decay = weight_decay
        self.epochs = epochs
        self.batch_size = batch_size
        self.patience = patience
        self.reveal = reveal
        self.covariates = covariates
        self.random_state = random_state

    def _panel(self, X, fitting: bool):
        if isinstance(X, DemandPanel):
            return X, None
        from .panel import panel_from_long

        cov = self.covariates if fitting else self.covariates_
        panel, ids = panel_from_long(X, covariates=cov)
        return panel, ids

    def fit(self, X, y=None, **fit_params):
        if y is not None:
            raise ValueError("y: expected None (the demand column of X is the outcome)")
        if self.kind not in ("auto", "mlp", "linear"):
            raise ValueError(f"kind: expected 'auto', 'mlp' or 'linear', got {self.kind!r}")
        panel, _ = self._panel(X, fitting=True)
        kinds = ("linear", "mlp") if self.kind == "auto" else (self.kind,)
        configs = [
            MetaConfig(
                kind=k,
                hidden=self.hidden,
                lr=self.lr,
                weight_decay=self.weight_decay,
                epochs=self.epochs,
                batch_size=self.batch_size,
                patience=self.patience,
                reveal=self.reveal,
            )
            for k in kinds
        ]
        with torch_threads(1):
            self.meta_ = select_meta(panel, configs, seed=self.random_state)
        self.config_ = self.meta_.cfg
        self.covariates_ = (
            self.covariates
            if self.covariates is not None
            else (
                None
                if isinstance(X, DemandPanel)
                else [c for c in X.columns if c not in ("task_id", "t", "price", "demand")]
            )
        )
        self.n_features_in_ = panel.X.shape[1]
        self.periods_ = panel.periods
        return self

    def predict_theta(self, X):
        if not hasattr(self, "meta_"):
            raise AttributeError("predict_theta: call fit first")
        panel, ids = self._panel(X, fitting=False)
        if panel.X.shape[1] != self.n_features_in_ or panel.periods != self.periods_:
            raise ValueError(
                f"X: expected {self.n_features_in_} covariates and {self.periods_} periods, got "
                f"{panel.X.shape[1]} and {panel.periods}"
            )
        theta = self.meta_.predict(panel)
        if ids is None:
            return theta
        import pandas as pd

        return pd.DataFrame({"task_id": ids, "alpha": theta[:, 0], "beta": theta[:, 1]})

    def score(self, X, y=None) -> float:
        """Minus the masked loss (the two last periods' squared prediction error) on ``X``."""
        panel, _ = self._panel(X, fitting=False)
        theta = self.meta_.predict(panel)
        resid = panel.demand[:, -2:] - theta[:, :1] - theta[:, 1:] * panel.prices[:, -2:]
        return -float((resid**2).sum(1).mean())
