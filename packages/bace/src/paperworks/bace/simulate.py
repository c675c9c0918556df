"""LFP-like multi-region recordings with known, behaviour-dependent directed connectivity.

Generative model (what is latent, what is observed), per trial:

- **Latent region activity** ``x_r(t)``, ``r = 1..R``: a damped AR(2) oscillator per region (peak
  frequency ``f_r`` drawn in the beta/low-gamma range 13-40 Hz, pole radius ``rho``), driven by unit
  Gaussian innovations, plus directed lagged coupling from other regions::

      x_r(t) = 2 rho cos(w_r) x_r(t-1) - rho^2 x_r(t-2) + sum_j W_b(t)[r, j] x_j(t - d_rj) + e_r(t)

  ``W_b = coupling * A_b`` with ``A_b`` the true binary adjacency of behavioural phase ``b`` (row =
  target, column = source, zero diagonal) and one lag ``d_rj`` in ``1..max_lag`` per ordered pair.
  Couplings are excitatory (positive), as long-range glutamatergic projections are.
- **Phases**: each trial runs ``rest, cue, reach, hold`` (``n_phases`` phases of ``phase_len`` samples
  after a burn-in in phase 0). By default the last phase reuses the first phase's graph
  (``repeat_first=True``), so the truth has phases that differ and phases that agree.
- **Graphs**: a backbone of ``n_backbone`` edges present in every phase plus ``n_specific`` edges drawn
  per distinct phase graph.
- **Observed contacts**: region ``r`` has ``C_r`` contacts (drawn in ``contacts``); contact ``c`` records
  ``g_c x_r(t) / sd(x_r) + sigma * n_c(t)``, gains ``g_c ~ U(0.5, 1.5)``, ``n_c`` unit-variance
  ``1/f^noise_exponent`` noise (FFT-shaped Gaussian noise), ``sigma = 1/sqrt(snr)``, plus an optional
  line-noise sinusoid of amplitude ``line_noise``.

Each phase's coupled system is stable: the companion matrix of the phase's VAR(max(2, max_lag)) has
spectral radius < 1 (:func:`phase_spectral_radius`); couplings are scaled down until it is below
``max_radius``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from paperworks.core.validate import as_generator, fraction, nonnegative_float, positive_float, positive_int

__all__ = [
    "PHASE_NAMES",
    "LFPConfig",
    "LFPData",
    "companion_matrix",
    "phase_spectral_radius",
    "pink_noise",
    "random_phase_graphs",
    "simulate_lfp",
]

PHASE_NAMES = ("rest", "cue", "reach", "hold")


@dataclass(frozen=True)
class LFPConfig:
    """Settings of :func:`simulate_lfp` (defaults: 8 regions x 4-16 contacts, 4 phases, SNR 1).

    ``adjacency``: an explicit truth ``(n_phases, R, R)`` (0/1, zero diagonal) instead of random graphs.
    """

    n_regions: int = 8
    contacts: tuple[int, int] = (4, 16)
    n_phases: int = 4
    phase_len: int = 100
    n_trials: int = 40
    burn_in: int = 200
    sfreq: float = 250.0
    snr: float = 1.0
    coupling: float = 0.4
    rho: float = 0.95
    freq_range: tuple[float, float] = (13.0, 40.0)
    max_lag: int = 3
    n_backbone: int = 3
    n_specific: int = 5
    repeat_first: bool = True
    noise_exponent: float = 1.0
    line_noise: float = 0.0
    line_freq: float = 50.0
    max_radius: float = 0.98
    adjacency: tuple | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        positive_int(self.n_regions, "n_regions")
        positive_int(self.n_phases, "n_phases")
        positive_int(self.phase_len, "phase_len")
        positive_int(self.n_trials, "n_trials")
        positive_int(self.max_lag, "max_lag")
        lo, hi = self.contacts
        positive_int(lo, "contacts[0]")
        if positive_int(hi, "contacts[1]") < lo:
            raise ValueError(f"contacts: expected (lo, hi) with lo <= hi, got {self.contacts}")
        positive_float(self.sfreq, "sfreq")
        positive_float(self.snr, "snr")
        nonnegative_float(self.coupling, "coupling")
        fraction(self.rho, "rho", open_high=True)
        fraction(self.max_radius, "max_radius", open_low=True, open_high=True)
        nonnegative_float(self.noise_exponent, "noise_exponent")
        nonnegative_float(self.line_noise, "line_noise")
        if self.burn_in < 0:
            raise ValueError(f"burn_in: expected >= 0, got {self.burn_in}")
        f0, f1 = self.freq_range
        if not 0 < f0 <= f1 < self.sfreq / 2:
            raise ValueError(f"freq_range: expected 0 < lo <= hi < sfreq/2, got {self.freq_range}")
        n_off = self.n_regions * (self.n_regions - 1)
        if self.adjacency is None and self.n_backbone + self.n_specific > n_off:
            raise ValueError(f"n_backbone + n_specific: expected <= {n_off} off-diagonal pairs")


@dataclass(frozen=True)
class LFPData:
    """A generated recording.

    ``X``: ``(n_trials, n_channels, n_times)`` contacts; ``phases``: ``(n_trials, n_times)`` phase labels;
    ``regions``: ``(n_channels,)`` region of each contact; ``adjacency``: ``(n_phases, R, R)`` true 0/1
    graph (``[b, target, source]``); ``weights``: the coupling actually used (same shape);
    ``lags``: ``(R, R)`` coupling lag per pair; ``latent``: ``(n_trials, R, n_times)``; ``sfreq``.
    """

    X: np.ndarray
    phases: np.ndarray
    regions: np.ndarray
    adjacency: np.ndarray
    weights: np.ndarray
    lags: np.ndarray
    latent: np.ndarray
    sfreq: float
    ar: np.ndarray  # (R, 2) own AR(2) coefficients


def random_phase_graphs(
    n_regions: int, n_phases: int, n_backbone: int, n_specific: int, repeat_first: bool, rng: object
) -> np.ndarray:
    """Random truth ``(n_phases, R, R)``: ``n_backbone`` shared edges plus ``n_specific`` per distinct graph.

    With ``repeat_first`` (and >= 3 phases) the last phase gets the first phase's graph.
    """
    rng = as_generator(rng)
    R = n_regions
    off = [(r, j) for r in range(R) for j in range(R) if r != j]
    order = rng.permutation(len(off))
    backbone = [off[i] for i in order[:n_backbone]]
    rest = [off[i] for i in order[n_backbone:]]
    A = np.zeros((n_phases, R, R))
    for r, j in backbone:
        A[:, r, j] = 1.0
    distinct = n_phases - 1 if (repeat_first and n_phases >= 3) else n_phases
    for b in range(distinct):
        pick = rng.choice(len(rest), size=min(n_specific, len(rest)), replace=False)
        for i in pick:
            A[b, rest[i][0], rest[i][1]] = 1.0
    if distinct < n_phases:
        A[-1] = A[0]
    return A


def companion_matrix(ar: np.ndarray, W: np.ndarray, lags: np.ndarray, order: int) -> np.ndarray:
    """Companion matrix ``(R*order, R*order)`` of the VAR(order) with own AR(2) ``ar`` ``(R, 2)`` and
    couplings ``W`` ``(R, R)`` at lags ``lags`` ``(R, R)``."""
    R = ar.shape[0]
    coef = np.zeros((order, R, R))
    coef[0][np.diag_indices(R)] = ar[:, 0]
    coef[1][np.diag_indices(R)] = ar[:, 1]
    for r in range(R):
        for j in range(R):
            if r != j and W[r, j] != 0:
                coef[lags[r, j] - 1, r, j] += W[r, j]
    M = np.zeros((R * order, R * order))
    M[:R] = np.concatenate(list(coef), axis=1)
    M[R:, :-R] = np.eye(R * (order - 1))
    return M


def phase_spectral_radius(data: LFPData) -> np.ndarray:
    """Spectral radius of each phase's latent VAR companion matrix, ``(n_phases,)``."""
    order = max(2, int(data.lags.max()))
    return np.array(
        [
            np.abs(np.linalg.eigvals(companion_matrix(data.ar, data.weights[b], data.lags, order))).max()
            for b in range(data.weights.shape[0])
        ]
    )


def pink_noise(shape: tuple[int, ...], exponent: float, rng: object) -> np.ndarray:
    """Gaussian noise with power spectrum ``~ 1/f^exponent`` along the last axis, unit variance per row."""
    rng = as_generator(rng)
    n = shape[-1]
    white = rng.standard_normal(shape)
    if exponent == 0:
        return white
    spec = np.fft.rfft(white, axis=-1)
    f = np.fft.rfftfreq(n)
    f[0] = f[1] if n > 1 else 1.0
    spec *= f ** (-exponent / 2.0)
    out = np.fft.irfft(spec, n=n, axis=-1)
    out -= out.mean(axis=-1, keepdims=True)
    return out / out.std(axis=-1, keepdims=True)


def simulate_lfp(config: LFPConfig | None = None, seed: int | np.random.Generator | None = 0) -> LFPData:
    """Draw one recording from the generative model in the module docstring."""
    cfg = config or LFPConfig()
    rng = as_generator(seed, "seed")
    R, P = cfg.n_regions, cfg.n_phases
    if cfg.adjacency is not None:
        A = np.asarray(cfg.adjacency, dtype=float)
        if A.shape != (P, R, R) or not np.isin(A, (0.0, 1.0)).all():
            raise ValueError(f"adjacency: expected a 0/1 array of shape {(P, R, R)}, got {A.shape}")
        if np.any(A[:, np.arange(R), np.arange(R)] != 0):
            raise ValueError("adjacency: expected a zero diagonal (self-dynamics are the AR(2) term)")
    else:
        A = random_phase_graphs(R, P, cfg.n_backbone, cfg.n_specific, cfg.repeat_first, rng)
    freqs = rng.uniform(*cfg.freq_range, size=R)
    w = 2 * np.pi * freqs / cfg.sfreq
    ar = np.stack([2 * cfg.rho * np.cos(w), np.full(R, -(cfg.rho**2))], axis=1)
    lags = rng.integers(1, cfg.max_lag + 1, size=(R, R))
    order = max(2, cfg.max_lag)
    weights = cfg.coupling * A.copy()
    for b in range(P):  # scale a phase's couplings down until its VAR is stable
        for _ in range(200):
            rad = np.abs(np.linalg.eigvals(companion_matrix(ar, weights[b], lags, order))).max()
            if rad < cfg.max_radius:
                break
            weights[b] *= 0.9
    n_trials = cfg.n_trials
    T = cfg.burn_in + P * cfg.phase_len
    phase_t = np.concatenate([np.zeros(cfg.burn_in, int), np.repeat(np.arange(P), cfg.phase_len)])
    x = np.zeros((n_trials, R, T))
    e = rng.standard_normal((n_trials, R, T))
    src = np.arange(R)[None, :].repeat(R, 0)
    for t in range(T):
        Wt = weights[phase_t[t]]
        xt = e[:, :, t].copy()
        if t >= 1:
            xt += ar[:, 0] * x[:, :, t - 1]
        if t >= 2:
            xt += ar[:, 1] * x[:, :, t - 2]
        past = t - lags  # (R, R) time index of the source for each (target, source)
        ok = past >= 0
        if ok.any():
            vals = np.where(ok, x[:, src, np.clip(past, 0, None)], 0.0)  # (trials, R, R)
            xt += np.einsum("rj,nrj->nr", Wt, vals)
        x[:, :, t] = xt
    x = x[:, :, cfg.burn_in :]
    phases = np.broadcast_to(phase_t[cfg.burn_in :], (n_trials, T - cfg.burn_in)).copy()
    n_contacts = rng.integers(cfg.contacts[0], cfg.contacts[1] + 1, size=R)
    regions = np.repeat(np.arange(R), n_contacts)
    C = regions.size
    gains = rng.uniform(0.5, 1.5, size=C)
    sd = x.std(axis=(0, 2))
    sigma = 1.0 / np.sqrt(cfg.snr)
    noise = pink_noise((n_trials, C, x.shape[-1]), cfg.noise_exponent, rng)
    X = gains[None, :, None] * x[:, regions] / sd[regions][None, :, None] + sigma * noise
    if cfg.line_noise > 0:
        tt = np.arange(x.shape[-1]) / cfg.sfreq
        ph = rng.uniform(0, 2 * np.pi, size=(n_trials, 1, 1))
        X = X + cfg.line_noise * np.sin(2 * np.pi * cfg.line_freq * tt + ph)
    return LFPData(X, phases, regions, A, weights, lags, x, float(cfg.sfreq), ar)
