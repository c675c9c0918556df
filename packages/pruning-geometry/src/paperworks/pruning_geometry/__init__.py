"""Task-aware layer pruning and its geometry (TAPIOCA, arXiv 2605.14738; TALE, arXiv 2510.22767).

- :func:`tale_prune` / :func:`tale_search`: TALE's greedy layer elimination on a validation function;
- :func:`profiles` / :func:`distortion`: layerwise norm and pairwise-distance profiles, and D;
- :func:`residual_scaling`: ``h + alpha f(h)`` on chosen layers (a context manager; alpha 0 = removal);
- :func:`remove_layers` / :func:`without_layers`: layer removal on Hugging Face causal LMs
  (``model.model.layers``), config updated, ``save_pretrained``-able;
- baselines: :func:`sleb_search`, :func:`block_influence` / :func:`block_influence_removal`,
  :func:`random_removal`;
- tasks and tiny models: :class:`PolynomialTask`, :class:`SuccessorTask`, :class:`InContextRegressor`,
  :func:`tiny_llama`.
"""

from .baselines import block_influence, block_influence_removal, random_removal, sleb_search
from .geometry import Distortion, Profile, distortion, mean_norm, mean_pairwise_distance, profiles
from .layers import find_layers, keep_layers, n_layers, remove_layers, without_layers
from .models import (
    InContextRegressor,
    lm_accuracy,
    lm_loss,
    regression_accuracy,
    regression_loss,
    tiny_llama,
    tiny_llama_config,
    train_lm,
    train_regressor,
)
from .scaling import residual_scaling
from .tale import TaleResult, TaleStep, greedy_search, tale_prune, tale_search
from .tasks import PolynomialTask, SuccessorTask

__all__ = [
    "Distortion",
    "InContextRegressor",
    "PolynomialTask",
    "Profile",
    "SuccessorTask",
    "TaleResult",
    "TaleStep",
    "block_influence",
    "block_influence_removal",
    "distortion",
    "find_layers",
    "greedy_search",
    "keep_layers",
    "lm_accuracy",
    "lm_loss",
    "mean_norm",
    "mean_pairwise_distance",
    "n_layers",
    "profiles",
    "random_removal",
    "regression_accuracy",
    "regression_loss",
    "remove_layers",
    "residual_scaling",
    "sleb_search",
    "tale_prune",
    "tale_search",
    "tiny_llama",
    "tiny_llama_config",
    "train_lm",
    "train_regressor",
    "without_layers",
]
