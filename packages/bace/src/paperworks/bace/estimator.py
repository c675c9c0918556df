"""``BACE``: a scikit-learn estimator that fits :class:`~.model.BACENet` by forecasting and reads out
the per-phase directed adjacency.

``BACE(regions=...).fit(X, phases)`` with ``X`` ``(n_trials, n_channels, n_times)`` and integer
``phases`` ``(n_trials, n_times)``; fitted attributes: ``adjacency_`` ``(n_phases, R, R)`` (``[b, target,
source]``, zero diagonal, entries in ``[0, 1)``), ``phases_`` (the phase labels, in the order of
``adjacency_``), ``model_``, ``loss_curve_``. ``forecast(past, phases, horizon)`` predicts ahead (in the
units of ``X``), iterating the decoder when ``horizon`` exceeds the trained one.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator

from paperworks.core import torch_threads
from paperworks.core.validate import finite_array, nonnegative_float, one_of, positive_float, positive_int

from .model import BACENet, bace_loss
from .windows import check_recording, check_regions, make_windows

__all__ = ["BACE"]


class BACE(BaseEstimator):
    """Behaviour-adaptive connectivity estimation (see the package README for the fidelity notes).

    Parameters: ``regions`` (region index of each channel, ``(C,)``; None: each channel its own region),
    ``lag`` (past samples per window), ``horizon`` (forecast steps trained), ``hidden`` (state size d),
    ``channels``/``kernel`` (conv encoder), ``encoder`` (``"conv"`` or ``"gru"``), ``sparsity`` (L1 weight on
    the adjacency), ``shared_adjacency`` (one matrix for all phases: the no-adaptation ablation),
    ``n_steps``/``batch_size``/``lr`` (Adam), ``stride`` (window stride), ``device``, ``n_threads``,
    ``random_state``.
    """

    def __init__(
        self,
        regions=None,
        *,
        lag: int = 12,
        horizon: int = 4,
        hidden: int = 16,
        channels: int = 4,
        kernel: int = 5,
        encoder: str = "conv",
        sparsity: float = 1e-3,
        shared_adjacency: bool = False,
        n_steps: int = 400,
        batch_size: int = 128,
        lr: float = 1e-2,
        stride: int = 1,
        device: str = "cpu",
        n_threads: int = 1,
        random_state: int = 0,
    ) -> None:
        self.regions = regions
        self.lag = lag
        self.horizon = horizon
        self.hidden = hidden
        self.channels = channels
        self.kernel = kernel
        self.encoder = encoder
        self.sparsity = sparsity
        self.shared_adjacency = shared_adjacency
        self.n_steps = n_steps
        self.batch_size = batch_size
        self.lr = lr
        self.stride = stride
        self.device = device
        self.n_threads = n_threads
        self.random_state = random_state

    # -- helpers -------------------------------------------------------------------------------------
    def _check_params(self) -> None:
        for name in ("lag", "horizon", "hidden", "channels", "kernel", "n_steps", "batch_size", "stride"):
            positive_int(getattr(self, name), name)
        positive_int(self.n_threads, "n_threads")
        one_of(self.encoder, "encoder", ("conv", "gru"))
        nonnegative_float(self.sparsity, "sparsity")
        positive_float(self.lr, "lr")

    def _phase_index(self, phases: np.ndarray, name: str = "phases") -> np.ndarray:
        lookup = {p: i for i, p in enumerate(self.phases_.tolist())}
        unknown = sorted(set(np.unique(phases).tolist()) - set(lookup) - {-1})
        if unknown:
            raise ValueError(
                f"{name}: labels {unknown} were not seen in fit (known: {self.phases_.tolist()})"
            )
        return np.vectorize(lambda p: lookup.get(p, -1), otypes=[np.int64])(phases)

    # -- fitting -------------------------------------------------------------------------------------
    def fit(self, X, phases, y=None):
        """Fit by forecasting. ``X`` ``(n_trials, C, T)`` or ``(C, T)``; ``phases`` ``(n_trials, T)``."""
        self._check_params()
        X, phases = check_recording(X, phases)
        C = X.shape[1]
        regions = np.arange(C) if self.regions is None else self.regions
        self.regions_, self.n_regions_ = check_regions(regions, C)
        if self.encoder == "conv" and np.bincount(self.regions_).min() < 1:
            raise ValueError("regions: every region needs at least one contact")
        labels = np.unique(phases[phases >= 0])
        if labels.size == 0:
            raise ValueError("phases: expected at least one labelled sample (all are -1)")
        self.phases_ = labels
        self.mean_ = X.mean(axis=(0, 2))
        sd = X.std(axis=(0, 2))
        if np.any(sd == 0):
            raise ValueError(f"X: channels {np.flatnonzero(sd == 0).tolist()} are constant")
        self.scale_ = sd
        Z = (X - self.mean_[None, :, None]) / sd[None, :, None]
        past, fut, ph = make_windows(Z, self._phase_index(phases), self.lag, self.horizon, self.stride)
        if past.shape[0] == 0:
            raise ValueError(
                f"phases: no window of lag {self.lag} + horizon {self.horizon} has its future in one phase"
            )
        dev = torch.device(self.device)
        gen = torch.Generator().manual_seed(int(self.random_state))
        with torch_threads(self.n_threads):
            torch.manual_seed(int(self.random_state))
            model = BACENet(
                torch.as_tensor(self.regions_),
                len(labels),
                self.lag,
                self.horizon,
                self.hidden,
                self.channels,
                self.kernel,
                self.encoder,
                self.shared_adjacency,
            ).to(dev)
            P = torch.as_tensor(past, dtype=torch.float32, device=dev)
            F_ = torch.as_tensor(fut, dtype=torch.float32, device=dev)
            Ph = torch.as_tensor(ph, dtype=torch.long, device=dev)
            opt = torch.optim.Adam(model.parameters(), lr=self.lr)
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.n_steps)
            n = P.shape[0]
            curve = []
            for _ in range(self.n_steps):
                idx = torch.randint(0, n, (min(self.batch_size, n),), generator=gen).to(dev)
                loss, mse = bace_loss(model, P[idx], F_[idx], Ph[idx], self.sparsity)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                curve.append(mse.detach())
            self.loss_curve_ = torch.stack(curve).cpu().numpy()
            model.eval()
            with torch.no_grad():
                self.adjacency_ = model.adjacency.matrices().cpu().double().numpy().copy()
        self.model_ = model
        self.n_windows_ = int(n)
        return self

    # -- prediction ----------------------------------------------------------------------------------
    def forecast(self, past, phases, horizon: int | None = None) -> np.ndarray:
        """Forecast ``horizon`` steps (default: the trained one) after each window.

        ``past``: ``(n, C, >= lag)`` windows (the last ``lag`` samples are used); ``phases``: ``(n,)`` the
        phase of each forecast. Returns ``(n, C, horizon)`` in the units of ``X``; beyond the trained
        horizon the decoder is iterated on its own forecasts (the phase held fixed).
        """
        if not hasattr(self, "model_"):
            raise RuntimeError("BACE: call fit before forecast")
        H = self.horizon if horizon is None else positive_int(horizon, "horizon")
        past = finite_array(past, "past", ndim=3)
        C = self.regions_.size
        if past.shape[1] != C or past.shape[2] < self.lag:
            raise ValueError(f"past: expected shape (n, {C}, >= {self.lag}), got {past.shape}")
        ph = finite_array(np.asarray(phases).reshape(-1), "phases", dtype_kind="i")
        if ph.size != past.shape[0]:
            raise ValueError(f"phases: expected one label per window ({past.shape[0]}), got {ph.size}")
        idx = self._phase_index(ph)
        if np.any(idx < 0):
            raise ValueError("phases: every forecast needs a phase label (got -1)")
        Z = (past[:, :, -self.lag :] - self.mean_[None, :, None]) / self.scale_[None, :, None]
        dev = next(self.model_.parameters()).device
        with torch_threads(self.n_threads), torch.inference_mode():
            z = torch.as_tensor(Z, dtype=torch.float32, device=dev)
            p = torch.as_tensor(idx, dtype=torch.long, device=dev)
            outs, done = [], 0
            while done < H:
                y = self.model_(z[:, :, -self.lag :], p)
                outs.append(y)
                z = torch.cat([z, y], dim=-1)
                done += y.shape[-1]
            out = torch.cat(outs, dim=-1)[:, :, :H].double().cpu().numpy()
        return out * self.scale_[None, :, None] + self.mean_[None, :, None]

    def forecast_mse(self, X, phases) -> float:
        """Mean squared error (per-channel standardised units) of the trained-horizon forecast of every
        window of a recording (the test-set metric of the experiment)."""
        X, phases = check_recording(X, phases)
        idx = self._phase_index(phases)
        past, fut, ph = make_windows(X, idx, self.lag, self.horizon)
        pred = self.forecast(past, self.phases_[ph])
        err = (pred - fut) / self.scale_[None, :, None]
        return float(np.mean(err**2))
