"""BACE: behaviour-adaptive directed connectivity between brain regions, learned by forecasting
multi-region LFP (arXiv 2510.20831; our reconstruction, see the README's Fidelity section)."""

from .baselines import (
    ChannelAR,
    GlobalVAR,
    GRUForecaster,
    cmlp_scores,
    granger_f_scores,
    lagged_correlation_scores,
    pcmci_scores,
    spectral_granger_scores,
    statsmodels_granger_scores,
)
from .estimator import BACE
from .io import concatenate_raws_checked, from_nwb, from_raw, to_connectivity, to_networkx
from .metrics import auroc, edge_auroc, phase_distances, split_half_spearman
from .model import BACENet, PhaseAdjacency, RegionEncoder, bace_loss
from .simulate import PHASE_NAMES, LFPConfig, LFPData, phase_spectral_radius, pink_noise, simulate_lfp
from .windows import make_windows, region_average

__all__ = [
    "BACE",
    "PHASE_NAMES",
    "BACENet",
    "ChannelAR",
    "GRUForecaster",
    "GlobalVAR",
    "LFPConfig",
    "LFPData",
    "PhaseAdjacency",
    "RegionEncoder",
    "auroc",
    "bace_loss",
    "cmlp_scores",
    "concatenate_raws_checked",
    "edge_auroc",
    "from_nwb",
    "from_raw",
    "granger_f_scores",
    "lagged_correlation_scores",
    "make_windows",
    "pcmci_scores",
    "phase_distances",
    "phase_spectral_radius",
    "pink_noise",
    "region_average",
    "simulate_lfp",
    "spectral_granger_scores",
    "split_half_spearman",
    "statsmodels_granger_scores",
    "to_connectivity",
    "to_networkx",
]
