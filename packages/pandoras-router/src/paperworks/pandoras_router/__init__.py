"""Pandora's Router and Pandora's Bidder: routing to specialists when value estimation costs.

Gaussian value-of-information and Weitzman reservation values (:mod:`.gaussian`), the centralised
index policy (:mod:`.router`), the decentralised bidder (:mod:`.bidder`), baselines
(:mod:`.baselines`), the cheap embedding estimator (:mod:`.estimators`) and the three documented
generative domains plus a RouterBench loader (:mod:`.domains`).
"""

from .baselines import (
    RouteLLMRouter,
    cheap_only,
    evaluate,
    exhaustive,
    oracle,
    random_subset,
    uncertainty_threshold,
)
from .bidder import BidResult, PandorasBidder, market_outcome
from .domains import DOMAINS, RoutingDataset, load_routerbench, make_domain
from .estimators import CheapValueEstimator, embed_texts, hashing_embed, minilm_available
from .gaussian import (
    expected_excess,
    expected_excess_inv,
    lower_reservation_value,
    posterior_mean,
    preposterior_std,
    reservation_value,
    value_of_information,
)
from .router import PandorasRouter, RoutingResult, index_policy, pandoras_route, per_specialist

__all__ = [
    "DOMAINS",
    "BidResult",
    "CheapValueEstimator",
    "PandorasBidder",
    "PandorasRouter",
    "RouteLLMRouter",
    "RoutingDataset",
    "RoutingResult",
    "cheap_only",
    "embed_texts",
    "evaluate",
    "exhaustive",
    "expected_excess",
    "expected_excess_inv",
    "hashing_embed",
    "index_policy",
    "load_routerbench",
    "lower_reservation_value",
    "make_domain",
    "market_outcome",
    "minilm_available",
    "oracle",
    "pandoras_route",
    "per_specialist",
    "posterior_mean",
    "preposterior_std",
    "random_subset",
    "reservation_value",
    "uncertainty_threshold",
    "value_of_information",
]
