"""Baselines: per-phase edge scores ``(n_phases, R, R)`` (``[b, target, source]``) and forecasters.

Edge scores (all on region signals ``Z`` ``(n_trials, R, T)``, e.g. :func:`~.windows.region_average`,
with integer ``phases`` ``(n_trials, T)`` labelled ``0..P-1``; a sample is a target of phase ``b`` when
its phase is ``b``, its lags may reach into the previous phase):

- :func:`granger_f_scores`: VAR(p) per phase by OLS, conditional Granger F statistic of every ordered
  pair (restricted vs full equation); equal to statsmodels' ``VARResults.test_causality(kind="f")`` on
  one contiguous series (tested). ``p`` chosen per phase by BIC over ``1..max_order``.
- :func:`statsmodels_granger_scores`: the same test by statsmodels itself on each phase's concatenated
  segments (the benchmark's peer).
- :func:`lagged_correlation_scores`: ``max_l |corr(x_j(t-l), x_r(t))|``.
- :func:`pcmci_scores`: tigramite PCMCI with ParCorr, each phase segment a dataset; ``max_tau |val|``.
- :func:`spectral_granger_scores`: mne-connectivity state-space spectral Granger (``method="gc"``) over
  the phase segments as epochs, averaged over frequencies.
- :func:`cmlp_scores`: neural Granger causality (component-wise MLP, Tank et al. 2018, arXiv
  1802.05842): one MLP per target on the lagged inputs, group lasso on each source's first-layer
  weights by proximal gradient; the score is the group norm.

Forecasters on standardised contacts (``past (N, C, L) -> future (N, C, H)``): :class:`ChannelAR`
(direct per-channel ridge AR), :class:`GlobalVAR` (direct ridge VAR on all contacts, order chosen on a
validation split) and :class:`GRUForecaster` (a GRU over all contacts, no graph).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats
from torch import nn

from paperworks.core import torch_threads
from paperworks.core.validate import positive_int

__all__ = [
    "ChannelAR",
    "GRUForecaster",
    "GlobalVAR",
    "cmlp_scores",
    "granger_f_scores",
    "lagged_correlation_scores",
    "lagged_design",
    "pcmci_scores",
    "spectral_granger_scores",
    "statsmodels_granger_scores",
]


def _n_phases(phases: np.ndarray) -> int:
    return int(phases.max()) + 1


def lagged_design(Z: np.ndarray, phases: np.ndarray, phase: int, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Targets ``y (n, R)`` and lagged regressors ``X (n, R*order)`` (lag-major: lag 1's R columns first)
    for every sample of ``phase`` with ``order`` samples of history."""
    tr, t = np.nonzero(phases == phase)
    keep = t >= order
    tr, t = tr[keep], t[keep]
    y = Z[tr, :, t]
    X = np.concatenate([Z[tr, :, t - lag] for lag in range(1, order + 1)], axis=1)
    return y, X


def _bic_order(Z: np.ndarray, phases: np.ndarray, b: int, max_order: int) -> int:
    best, best_p = np.inf, 1
    y_all, X_all = lagged_design(Z, phases, b, max_order)  # a common sample for every order
    n, R = y_all.shape
    for p in range(1, max_order + 1):
        X1 = np.column_stack([np.ones(n), X_all[:, : R * p]])
        beta = np.linalg.solve(X1.T @ X1, X1.T @ y_all)
        res = y_all - X1 @ beta
        _, logdet = np.linalg.slogdet(res.T @ res / n)
        bic = logdet + np.log(n) * p * R * R / n
        if bic < best:
            best, best_p = bic, p
    return best_p


def granger_f_scores(
    Z: np.ndarray,
    phases: np.ndarray,
    order: int | None = None,
    max_order: int = 8,
    return_pvalues: bool = False,
):
    """Conditional Granger F statistic per phase, ``(P, R, R)`` (``[b, target, source]``, zero diagonal).

    ``order``: the VAR order (None: BIC per phase over ``1..max_order``). With ``return_pvalues`` also
    returns the F-test p-values (diagonal 1; the single equation's residual df ``n - k``, where statsmodels
    uses the system's ``R (n - k)``) and the orders used. Uses the OLS identity
    ``RSS_restricted - RSS_full = beta_j' [(X'X)^-1_jj]^-1 beta_j`` (no refit per restriction).
    """
    P, R = _n_phases(phases), Z.shape[1]
    Fs, ps, orders = np.zeros((P, R, R)), np.ones((P, R, R)), []
    for b in range(P):
        p = order if order is not None else _bic_order(Z, phases, b, max_order)
        orders.append(p)
        y, X = lagged_design(Z, phases, b, p)
        n, k = len(y), R * p + 1
        X1 = np.column_stack([np.ones(n), X])
        G_inv = np.linalg.inv(X1.T @ X1)
        beta = G_inv @ (X1.T @ y)  # (k, R)
        rss_full = ((y - X1 @ beta) ** 2).sum(0)
        cols = 1 + np.arange(R * p).reshape(p, R)  # column of (lag, source) in X1
        for j in range(R):
            c = cols[:, j]
            Bj = beta[c]  # (p, R targets)
            extra = np.einsum("pr,pq,qr->r", Bj, np.linalg.inv(G_inv[np.ix_(c, c)]), Bj)
            F = (extra / p) / (rss_full / (n - k))
            F[j] = 0.0
            Fs[b, :, j] = F
            pv = stats.f.sf(F, p, n - k)
            pv[j] = 1.0
            ps[b, :, j] = pv
    return (Fs, ps, orders) if return_pvalues else Fs


def _phase_segments(Z: np.ndarray, phases: np.ndarray, b: int) -> list[np.ndarray]:
    """Contiguous runs of phase ``b`` as ``(T_seg, R)`` arrays."""
    segs = []
    for i in range(Z.shape[0]):
        on = np.concatenate([[0], (phases[i] == b).astype(int), [0]])
        starts, stops = np.flatnonzero(np.diff(on) == 1), np.flatnonzero(np.diff(on) == -1)
        segs += [Z[i, :, s:e].T for s, e in zip(starts, stops)]
    return segs


def statsmodels_granger_scores(Z: np.ndarray, phases: np.ndarray, order: int = 3) -> np.ndarray:
    """statsmodels ``VAR(order)`` per phase on the phase's segments concatenated in time, F statistic of
    ``test_causality(caused=r, causing=j, kind="f")`` for every ordered pair."""
    from statsmodels.tsa.api import VAR

    P, R = _n_phases(phases), Z.shape[1]
    out = np.zeros((P, R, R))
    for b in range(P):
        data = np.concatenate(_phase_segments(Z, phases, b), axis=0)
        res = VAR(data).fit(order, trend="c")
        for r in range(R):
            for j in range(R):
                if r != j:
                    out[b, r, j] = res.test_causality(r, [j], kind="f").test_statistic
    return out


def lagged_correlation_scores(Z: np.ndarray, phases: np.ndarray, max_lag: int = 5) -> np.ndarray:
    """``max_{l=1..max_lag} |corr(x_j(t-l), x_r(t))|`` per phase, zero diagonal."""
    P, R = _n_phases(phases), Z.shape[1]
    out = np.zeros((P, R, R))
    for b in range(P):
        y, X = lagged_design(Z, phases, b, max_lag)
        y = (y - y.mean(0)) / y.std(0)
        X = (X - X.mean(0)) / X.std(0)
        C = np.abs(y.T @ X / len(y)).reshape(R, max_lag, R)  # (target, lag, source)
        out[b] = C.max(1)
        np.fill_diagonal(out[b], 0.0)
    return out


def pcmci_scores(
    Z: np.ndarray, phases: np.ndarray, tau_max: int = 3, pc_alpha: float = 0.05, max_conds_dim: int | None = 2
) -> np.ndarray:
    """tigramite PCMCI (ParCorr) per phase on the phase's segments joined by ``tau_max`` missing samples
    (tigramite drops every sample whose lags reach a missing one, so no link spans two segments);
    score ``max_{tau=1..tau_max} |val_matrix[source, target, tau]|``, zero diagonal."""
    from tigramite import data_processing as pp
    from tigramite.independence_tests.parcorr import ParCorr
    from tigramite.pcmci import PCMCI

    P, R = _n_phases(phases), Z.shape[1]
    flag = 9.99e30
    out = np.zeros((P, R, R))
    for b in range(P):
        gap = np.full((tau_max, R), flag)
        parts = []
        for seg in _phase_segments(Z, phases, b):
            parts += [seg, gap]
        df = pp.DataFrame(np.concatenate(parts[:-1]), missing_flag=flag)
        pcmci = PCMCI(dataframe=df, cond_ind_test=ParCorr(significance="analytic"), verbosity=0)
        res = pcmci.run_pcmci(tau_min=1, tau_max=tau_max, pc_alpha=pc_alpha, max_conds_dim=max_conds_dim)
        val = np.abs(res["val_matrix"][:, :, 1:]).max(-1)  # (source, target)
        out[b] = val.T
        np.fill_diagonal(out[b], 0.0)
    return out


def spectral_granger_scores(
    Z: np.ndarray, phases: np.ndarray, sfreq: float, fmin: float = 13.0, fmax: float = 60.0, n_lags: int = 10
) -> np.ndarray:
    """mne-connectivity spectral Granger causality per phase (phase segments of equal length as epochs),
    mean over ``[fmin, fmax]``, for every ordered pair, zero diagonal."""
    from mne_connectivity import spectral_connectivity_epochs

    P, R = _n_phases(phases), Z.shape[1]
    pairs = [(j, r) for r in range(R) for j in range(R) if r != j]
    seeds = np.array([[j] for j, _ in pairs])
    targets = np.array([[r] for _, r in pairs])
    out = np.zeros((P, R, R))
    for b in range(P):
        segs = _phase_segments(Z, phases, b)
        n = min(len(s) for s in segs)
        epochs = np.stack([s[:n].T for s in segs])  # (n_epochs, R, n)
        con = spectral_connectivity_epochs(
            epochs,
            method="gc",
            indices=(seeds, targets),
            sfreq=sfreq,
            fmin=fmin,
            fmax=fmax,
            gc_n_lags=n_lags,
            verbose=False,
        )
        vals = np.asarray(con.get_data()).reshape(len(pairs), -1).mean(-1)
        for (j, r), v in zip(pairs, vals):
            out[b, r, j] = v
    return out


def cmlp_scores(
    Z: np.ndarray,
    phases: np.ndarray,
    lag: int = 5,
    hidden: int = 8,
    lam: float = 0.05,
    lr: float = 0.01,
    n_steps: int = 1000,
    seed: int = 0,
    n_threads: int = 1,
) -> np.ndarray:
    """Neural Granger causality (cMLP) per phase: group norm of each source's first-layer weights.

    Full-batch proximal gradient descent (GISTA without its line search): a gradient step on the summed
    per-target MSE, then group soft-thresholding of each (target, source) block of first-layer weights
    by ``lr * lam``. First-layer weights start small (0.01) so that an unused source's norm reflects
    the fit, not the initialisation. Plain gradient steps on purpose: Adam rescales the tiny gradients of
    unused inputs to full-size steps, which destroys the magnitudes the score reads.
    """
    lag, hidden, n_steps = (
        positive_int(lag, "lag"),
        positive_int(hidden, "hidden"),
        positive_int(n_steps, "n_steps"),
    )
    P, R = _n_phases(phases), Z.shape[1]
    out = np.zeros((P, R, R))
    with torch_threads(n_threads):
        torch.manual_seed(seed)
        for b in range(P):
            y, X = lagged_design(Z, phases, b, lag)
            Xt = torch.as_tensor(X, dtype=torch.float32).reshape(len(X), lag, R)  # (n, lag, source)
            yt = torch.as_tensor(y, dtype=torch.float32)  # (n, target)
            W1 = torch.randn(R, hidden, lag, R).mul_(0.01).requires_grad_()  # (target, hidden, lag, source)
            b1 = torch.full((R, hidden), 0.1).requires_grad_()
            w2 = torch.randn(R, hidden).mul_(0.5).requires_grad_()
            b2 = torch.zeros(R, requires_grad=True)
            params = (W1, b1, w2, b2)
            for _ in range(n_steps):
                h = torch.relu(torch.einsum("nls,rkls->nrk", Xt, W1) + b1)
                loss = (((h * w2).sum(-1) + b2 - yt) ** 2).mean(0).sum()  # one MLP per target
                grads = torch.autograd.grad(loss, params)
                with torch.no_grad():
                    for prm, g in zip(params, grads):
                        prm.sub_(lr * g)
                    norm = W1.pow(2).sum((1, 2), keepdim=True).sqrt()  # group lasso prox per (target, source)
                    W1.mul_(torch.clamp(1 - lr * lam / norm.clamp_min(1e-12), min=0.0))
            with torch.no_grad():
                out[b] = W1.pow(2).sum((1, 2)).sqrt().numpy()
            np.fill_diagonal(out[b], 0.0)
    return out


# --------------------------------------------------------------------------------------- forecasters


def _ridge(X: np.ndarray, Y: np.ndarray, alpha: float) -> np.ndarray:
    X1 = np.column_stack([X, np.ones(len(X))])
    G = X1.T @ X1
    G[np.diag_indices_from(G)[0][:-1], np.diag_indices_from(G)[1][:-1]] += alpha
    return np.linalg.solve(G, X1.T @ Y)


class ChannelAR:
    """Direct per-channel AR: each channel's next ``H`` samples by ridge on its own last ``order`` ones."""

    def __init__(self, order: int = 12, alpha: float = 1e-3) -> None:
        self.order, self.alpha = positive_int(order, "order"), alpha

    def fit(self, past: np.ndarray, future: np.ndarray) -> ChannelAR:
        N, C, _ = past.shape
        Xp = past[:, :, -self.order :]
        X1 = np.concatenate([Xp, np.ones((N, C, 1))], axis=2).transpose(1, 0, 2)  # (C, N, p+1)
        G = np.einsum("cnp,cnq->cpq", X1, X1) + self.alpha * N * np.eye(self.order + 1)
        rhs = np.einsum("cnp,cnh->cph", X1, future.transpose(1, 0, 2))
        self.coef_ = np.linalg.solve(G, rhs)  # (C, p+1, H)
        return self

    def predict(self, past: np.ndarray) -> np.ndarray:
        Xp = past[:, :, -self.order :]
        X1 = np.concatenate([Xp, np.ones((*Xp.shape[:2], 1))], axis=2)
        return np.einsum("ncp,cph->nch", X1, self.coef_)


class GlobalVAR:
    """Direct ridge VAR on every contact: the next ``H`` samples of all channels from the last ``p`` of all
    channels; ``p`` chosen from ``orders`` on the last ``val_frac`` of the training windows."""

    def __init__(
        self, orders: tuple[int, ...] = (1, 2, 4, 8), alpha: float = 1e-3, val_frac: float = 0.2
    ) -> None:
        self.orders, self.alpha, self.val_frac = tuple(orders), alpha, val_frac

    def _design(self, past: np.ndarray, p: int) -> np.ndarray:
        return past[:, :, -p:].reshape(len(past), -1)

    def fit(self, past: np.ndarray, future: np.ndarray) -> GlobalVAR:
        N, C, H = future.shape
        Y = future.reshape(N, -1)
        cut = int(N * (1 - self.val_frac))
        errs = {}
        for p in self.orders:
            if p > past.shape[2]:
                continue
            X = self._design(past, p)
            beta = _ridge(X[:cut], Y[:cut], self.alpha * cut)
            pred = np.column_stack([X[cut:], np.ones(N - cut)]) @ beta
            errs[p] = float(np.mean((pred - Y[cut:]) ** 2))
        self.order_ = min(errs, key=errs.get)
        self.val_errors_ = errs
        self.coef_ = _ridge(self._design(past, self.order_), Y, self.alpha * N)
        self.shape_ = (C, H)
        return self

    def predict(self, past: np.ndarray) -> np.ndarray:
        X = self._design(past, self.order_)
        return (np.column_stack([X, np.ones(len(X))]) @ self.coef_).reshape(len(X), *self.shape_)


class GRUForecaster:
    """A GRU over all contacts (no graph, no phases): final state -> next ``H`` samples of every channel."""

    def __init__(
        self, hidden: int = 32, n_steps: int = 400, batch_size: int = 128, lr: float = 1e-2, seed: int = 0
    ):
        self.hidden, self.n_steps, self.batch_size, self.lr, self.seed = hidden, n_steps, batch_size, lr, seed

    def fit(self, past: np.ndarray, future: np.ndarray) -> GRUForecaster:
        N, C, H = future.shape
        self.shape_ = (C, H)
        with torch_threads(1):
            torch.manual_seed(self.seed)
            gen = torch.Generator().manual_seed(self.seed)
            self.gru_ = nn.GRU(C, self.hidden, batch_first=True)
            self.head_ = nn.Linear(self.hidden + C, C * H)  # + the last sample (a linear skip)
            params = list(self.gru_.parameters()) + list(self.head_.parameters())
            opt = torch.optim.Adam(params, lr=self.lr)
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.n_steps)
            P = torch.as_tensor(past, dtype=torch.float32)
            F_ = torch.as_tensor(future, dtype=torch.float32)
            for _ in range(self.n_steps):
                idx = torch.randint(0, N, (min(self.batch_size, N),), generator=gen)
                loss = ((self._forward(P[idx]) - F_[idx]) ** 2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
        return self

    def _forward(self, past: torch.Tensor) -> torch.Tensor:
        _, h = self.gru_(past.transpose(1, 2))
        z = torch.cat([h[-1], past[:, :, -1]], dim=-1)
        return self.head_(z).reshape(len(past), *self.shape_)

    def predict(self, past: np.ndarray) -> np.ndarray:
        with torch_threads(1), torch.inference_mode():
            return self._forward(torch.as_tensor(past, dtype=torch.float32)).double().numpy()
