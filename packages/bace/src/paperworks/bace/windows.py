"""Input checks and (past, future, phase) windows cut from trials.

Shapes: recordings ``X`` are ``(n_trials, n_channels, n_times)`` (a single ``(n_channels, n_times)``
recording is one trial); ``phases`` are ``(n_trials, n_times)`` integer labels (``-1``: no phase, never
forecast). A window at origin ``t`` has past ``X[:, :, t-lag+1 .. t]`` and future ``X[:, :, t+1 .. t+H]``
and is labelled with the phase of its future, kept only when the future lies in one phase.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import finite_array, positive_int

__all__ = ["check_recording", "check_regions", "make_windows", "region_average"]


def check_recording(X: object, phases: object, name: str = "X") -> tuple[np.ndarray, np.ndarray]:
    """``X`` as float ``(n_trials, C, T)`` and ``phases`` as int ``(n_trials, T)``; one-line errors."""
    arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if arr.ndim == 2:
        arr = arr[None]
    arr = finite_array(arr, name, ndim=3)
    ph = np.asarray(phases)
    if ph.ndim == 1:
        ph = ph[None]
    if ph.dtype.kind == "f" and np.all(np.isfinite(ph)) and np.all(ph == np.round(ph)):
        ph = ph.astype(np.int64)
    ph = finite_array(ph, "phases", ndim=2, dtype_kind="i")
    if ph.shape != (arr.shape[0], arr.shape[2]):
        raise ValueError(
            f"phases: expected shape (n_trials, n_times) = {(arr.shape[0], arr.shape[2])}, got {ph.shape}"
        )
    if np.any(ph < -1):
        raise ValueError("phases: expected labels >= 0 (or -1 for samples outside every phase)")
    return arr, ph.astype(np.int64)


def check_regions(regions: object, n_channels: int | None = None) -> tuple[np.ndarray, int]:
    """Region index of each channel, ``(C,)`` ints ``0..R-1`` with every region used; returns it and R."""
    reg = finite_array(regions, "regions", ndim=1, dtype_kind="i").astype(np.int64)
    if np.any(reg < 0):
        raise ValueError(f"regions: every channel needs a region (got {int((reg < 0).sum())} without one)")
    if n_channels is not None and reg.size != n_channels:
        raise ValueError(f"regions: expected one region per channel ({n_channels}), got {reg.size}")
    R = int(reg.max()) + 1
    missing = sorted(set(range(R)) - set(reg.tolist()))
    if missing:
        raise ValueError(f"regions: expected labels 0..{R - 1} each with a channel, missing {missing}")
    return reg, R


def make_windows(
    X: np.ndarray, phases: np.ndarray, lag: int, horizon: int, stride: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every window of a checked recording: past ``(N, C, lag)``, future ``(N, C, horizon)``, phase ``(N,)``.

    Windows whose future spans two phases, or lies outside every phase, are dropped.
    """
    lag, horizon, stride = (
        positive_int(lag, "lag"),
        positive_int(horizon, "horizon"),
        positive_int(stride, "stride"),
    )
    _n, _C, T = X.shape
    if T < lag + horizon:
        raise ValueError(f"X: windows need n_times >= lag + horizon = {lag + horizon}, got {T}")
    origins = np.arange(lag - 1, T - horizon, stride)
    fut_idx = origins[:, None] + np.arange(1, horizon + 1)
    past_idx = origins[:, None] - np.arange(lag - 1, -1, -1)
    fut_ph = phases[:, fut_idx]  # (n, N0, H)
    ok = (fut_ph == fut_ph[..., :1]).all(-1) & (fut_ph[..., 0] >= 0)
    tr, k = np.nonzero(ok)
    past = X[tr[:, None], :, past_idx[k]].transpose(0, 2, 1)
    fut = X[tr[:, None], :, fut_idx[k]].transpose(0, 2, 1)
    return np.ascontiguousarray(past), np.ascontiguousarray(fut), fut_ph[tr, k, 0]


def region_average(X: np.ndarray, regions: np.ndarray, n_regions: int | None = None) -> np.ndarray:
    """Mean of each region's (per-channel standardised) contacts: ``(..., C, T) -> (..., R, T)``."""
    R = int(regions.max()) + 1 if n_regions is None else n_regions
    mu = X.mean(axis=(0, -1), keepdims=True) if X.ndim == 3 else X.mean(-1, keepdims=True)
    sd = X.std(axis=(0, -1), keepdims=True) if X.ndim == 3 else X.std(-1, keepdims=True)
    Z = (X - mu) / np.where(sd > 0, sd, 1.0)
    M = np.zeros((R, regions.size))
    M[regions, np.arange(regions.size)] = 1.0
    M /= M.sum(1, keepdims=True)
    return np.einsum("rc,...ct->...rt", M, Z)
