"""Generated multi-task demand with cross-task price confounding, and its exact identification target.

Generative model per task k (latent: ``U_k``, ``theta_k``; observed: ``X_k``, prices, demand):

    X_k ~ N(0, I_d),  U_k ~ N(0, I_2)
    alpha_k = a0 + a^T X_k + s_alpha U_k1,   beta_k = b0 + b^T X_k + s_beta U_k2
    p_kt = p0 + m^T X_k + rho (kappa^T U_k) + s_p eta_kt,    t = 1 .. T-2   (confounded: set with U_k)
    p_kt = p0 + m^T X_k + s_exo xi_kt,                      t = T-1, T   (locally exogenous, distinct a.s.)
    y_kt = alpha_k + beta_k p_kt + s_y eps_kt

``rho`` is the confounding strength: the firm prices with knowledge of the demand fundamentals. Given the
designed information set ``I_k = (X_k, p_k1..p_kT, y_k1..y_k,T-2)`` everything is Gaussian once the prices
are fixed, so ``E[theta_k | I_k]`` has a closed form (:func:`posterior_theta`): the target DCMOML identifies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_float,
    nonnegative_float,
    positive_float,
    positive_int,
)

__all__ = ["DemandConfig", "DemandPanel", "generate_panel", "posterior_theta"]


@dataclass(frozen=True)
class DemandConfig:
    """The generator's constants (module docstring). Defaults: 2,000 tasks of T = 6 periods, 5 covariates."""

    n_tasks: int = 2000
    periods: int = 6
    n_covariates: int = 5
    rho: float = 0.8
    a0: float = 10.0
    b0: float = -1.5
    s_alpha: float = 1.0
    s_beta: float = 0.3
    kappa: tuple[float, float] = (1.0, 1.0)
    p0: float = 5.0
    s_p: float = 0.3
    s_exo: float = 0.5
    s_y: float = 1.0

    def __post_init__(self) -> None:
        positive_int(self.n_tasks, "n_tasks")
        if positive_int(self.periods, "periods") < 3:
            raise ValueError(f"periods: expected >= 3 (two masked, one seen), got {self.periods}")
        positive_int(self.n_covariates, "n_covariates")
        nonnegative_float(self.rho, "rho")
        for name in ("a0", "b0", "p0"):
            finite_float(getattr(self, name), name)
        for name in ("s_alpha", "s_beta", "s_p", "s_exo", "s_y"):
            positive_float(getattr(self, name), name)
        if len(self.kappa) != 2:
            raise ValueError(f"kappa: expected 2 loadings, got {self.kappa!r}")

    def coefficients(self) -> dict[str, np.ndarray]:
        """The covariate effects ``a``, ``b`` and the price policy's ``m`` (fixed, not drawn)."""
        d = self.n_covariates
        base = np.array([0.8, -0.5, 0.3, 0.2, -0.1])
        slope = np.array([0.3, 0.0, -0.2, 0.1, 0.05])
        price = np.array([0.2, 0.1, -0.1, 0.0, 0.05])
        tile = lambda v: np.resize(v, d)  # noqa: E731
        return {"a": tile(base), "b": tile(slope), "m": tile(price)}


@dataclass(frozen=True, eq=False)
class DemandPanel:
    """Tasks as arrays: ``X`` (K, d), ``prices`` and ``demand`` (K, T); the generator also fills the truth
    ``alpha``/``beta`` (K,) (``None`` for real data)."""

    X: np.ndarray
    prices: np.ndarray
    demand: np.ndarray
    alpha: np.ndarray | None = None
    beta: np.ndarray | None = None

    def __post_init__(self) -> None:
        from .panel import check_panel_arrays

        X, p, y = check_panel_arrays(self.X, self.prices, self.demand)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "prices", p)
        object.__setattr__(self, "demand", y)

    @property
    def n_tasks(self) -> int:
        return int(self.X.shape[0])

    @property
    def periods(self) -> int:
        return int(self.prices.shape[1])

    def subset(self, idx: np.ndarray) -> DemandPanel:
        pick = lambda v: None if v is None else v[idx]  # noqa: E731
        return DemandPanel(self.X[idx], self.prices[idx], self.demand[idx], pick(self.alpha), pick(self.beta))


def generate_panel(config: DemandConfig, rng: object = None) -> tuple[DemandPanel, np.ndarray]:
    """Draw ``config.n_tasks`` tasks; returns the panel and the latent ``U`` (K, 2)."""
    gen = as_generator(rng)
    c, coef = config, config.coefficients()
    K, T, d = c.n_tasks, c.periods, c.n_covariates
    X = gen.normal(size=(K, d))
    U = gen.normal(size=(K, 2))
    alpha = c.a0 + X @ coef["a"] + c.s_alpha * U[:, 0]
    beta = c.b0 + X @ coef["b"] + c.s_beta * U[:, 1]
    level = c.p0 + X @ coef["m"]
    prices = np.empty((K, T))
    prices[:, : T - 2] = (level + c.rho * (U @ np.asarray(c.kappa)))[:, None] + c.s_p * gen.normal(
        size=(K, T - 2)
    )
    prices[:, T - 2 :] = level[:, None] + c.s_exo * gen.normal(size=(K, 2))
    demand = alpha[:, None] + beta[:, None] * prices + c.s_y * gen.normal(size=(K, T))
    return DemandPanel(X, prices, demand, alpha, beta), U


def posterior_theta(config: DemandConfig, panel: DemandPanel) -> np.ndarray:
    """(K, 2) ``E[(alpha_k, beta_k) | X_k, p_k1..p_kT, y_k1..y_k,T-2]`` in closed form.

    Step 1: ``U | X, p_1..p_{T-2}`` (jointly Gaussian; the exogenous prices carry nothing about U).
    Step 2: ``theta = mu(X) + S U`` is Gaussian given the prices; ``y_t = [1, p_t] theta + s_y eps_t`` for the
    seen periods is a linear-Gaussian observation: the posterior mean of a Bayesian linear regression.
    """
    c, coef = config, config.coefficients()
    X, p, y = panel.X, panel.prices, panel.demand
    K, T = p.shape
    n = T - 2
    kappa = np.asarray(c.kappa)
    z = p[:, :n] - (c.p0 + X @ coef["m"])[:, None]  # = rho kappa^T U 1 + s_p eta
    # U | z: Cov(U, z) = rho kappa 1^T, Var(z) = rho^2 |kappa|^2 1 1^T + s_p^2 I; z's mean is sufficient
    v = c.rho**2 * kappa @ kappa
    zbar = z.mean(axis=1)
    gain = c.rho * kappa / (c.s_p**2 / n + v)  # E[U | z] = gain * zbar (only the mean of z is informative)
    mean_U = zbar[:, None] * gain[None, :]
    cov_U = np.eye(2) - np.outer(gain, c.rho * kappa)  # Var(U | z)
    S = np.diag([c.s_alpha, c.s_beta])
    mu = np.stack([c.a0 + X @ coef["a"], c.b0 + X @ coef["b"]], axis=1) + mean_U @ S.T  # (K, 2)
    prior = S @ cov_U @ S.T  # (2, 2), the same for every task
    H = np.stack([np.ones((K, n)), p[:, :n]], axis=2)  # (K, n, 2)
    prec = np.linalg.inv(prior)[None] + np.einsum("kni,knj->kij", H, H) / c.s_y**2
    rhs = (np.linalg.inv(prior) @ mu.T).T + np.einsum("kni,kn->ki", H, y[:, :n]) / c.s_y**2
    return np.linalg.solve(prec, rhs[..., None])[..., 0]
