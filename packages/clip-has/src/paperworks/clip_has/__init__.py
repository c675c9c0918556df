"""Hierarchical Angular Separation (HAS) of contrastive embeddings.

The HAS margin and rate of concept embeddings on a tree (:mod:`.has`, with a torchmetrics metric in
:mod:`.metric` under the ``metric`` extra), concept trees from parent arrays or networkx
(:mod:`.hierarchy`), the unconstrained features model with the closed-form minimiser of the linear
contrastive loss and population InfoNCE (:mod:`.ufm`), the CLIP loss (:mod:`.losses`), a tiny CLIP
(:mod:`.model`) and generated hierarchical data (:mod:`.data`).
"""

from .data import (
    TEMPLATES,
    Captions,
    caption_tokens,
    hierarchical_gaussian_embeddings,
    hierarchical_images,
)
from .has import (
    concept_prototypes,
    has_margin,
    has_margins,
    has_permutation_null,
    has_rate,
    satisfies_has,
)
from .hierarchy import Hierarchy, as_hierarchy, balanced_tree, random_tree
from .losses import InfoNCELoss, clip_loss, clip_loss_from_logits
from .model import ClipLite, ImageEncoder, TextEncoder, TrainConfig, train_clip
from .ufm import (
    PairStatistics,
    fit_infonce,
    hierarchical_pairs,
    infonce_population_loss,
    linear_contrastive_loss,
    linear_loss_minimiser,
    linear_loss_minimum,
    minimise_linear_loss_lbfgs,
    pair_matrix,
    pair_statistics,
)


def __getattr__(name: str):  # the metric needs the `metric` extra (torchmetrics): import it on use
    if name == "HierarchicalAngularSeparation":
        from .metric import HierarchicalAngularSeparation

        return HierarchicalAngularSeparation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TEMPLATES",
    "Captions",
    "ClipLite",
    "Hierarchy",
    "HierarchicalAngularSeparation",
    "ImageEncoder",
    "InfoNCELoss",
    "PairStatistics",
    "TextEncoder",
    "TrainConfig",
    "as_hierarchy",
    "balanced_tree",
    "caption_tokens",
    "clip_loss",
    "clip_loss_from_logits",
    "concept_prototypes",
    "fit_infonce",
    "has_margin",
    "has_margins",
    "has_permutation_null",
    "has_rate",
    "hierarchical_gaussian_embeddings",
    "hierarchical_images",
    "hierarchical_pairs",
    "infonce_population_loss",
    "linear_contrastive_loss",
    "linear_loss_minimiser",
    "linear_loss_minimum",
    "minimise_linear_loss_lbfgs",
    "pair_matrix",
    "pair_statistics",
    "random_tree",
    "satisfies_has",
    "train_clip",
]
