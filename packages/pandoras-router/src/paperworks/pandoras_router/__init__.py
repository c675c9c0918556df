"""Pandora's Router and Pandora's Bidder: routing to specialists when value estimation costs.

Gaussian value-of-information and Weitzman reservation values (:mod:`.gaussian`), their extension
to cheap-estimator errors correlated across specialists (:mod:`.correlated`), the centralised index
policy (:mod:`.router`), the decentralised bidder and its market models (:mod:`.bidder`), baselines
(:mod:`.baselines`), the cheap embedding estimator with an input-dependent std (:mod:`.estimators`)
and the three documented generative domains plus a RouterBench loader (:mod:`.domains`).
"""

from .baselines import (
    RouteLLMRouter,
    cheap_only,
    evaluate,
    exhaustive,
    oracle,
    random_subset,
    uncertainty_threshold,
    uncertainty_z_for_budget,
)
from .bidder import MARKETS, BidResult, PandorasBidder, competing_claims, market_outcome
from .correlated import (
    correlated_value_of_information,
    factor_covariance,
    factor_posterior,
    pairwise_preposterior_std,
)
from .domains import DOMAINS, RoutingDataset, load_routerbench, make_domain
from .estimators import CheapValueEstimator, embed_texts, hashing_embed, minilm_available, one_factor_loadings
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
    "MARKETS",
    "BidResult",
    "CheapValueEstimator",
    "PandorasBidder",
    "PandorasRouter",
    "RouteLLMRouter",
    "RoutingDataset",
    "RoutingResult",
    "cheap_only",
    "competing_claims",
    "correlated_value_of_information",
    "embed_texts",
    "evaluate",
    "exhaustive",
    "expected_excess",
    "expected_excess_inv",
    "factor_covariance",
    "factor_posterior",
    "hashing_embed",
    "index_policy",
    "load_routerbench",
    "lower_reservation_value",
    "make_domain",
    "market_outcome",
    "minilm_available",
    "one_factor_loadings",
    "oracle",
    "pairwise_preposterior_std",
    "pandoras_route",
    "per_specialist",
    "posterior_mean",
    "preposterior_std",
    "random_subset",
    "reservation_value",
    "uncertainty_threshold",
    "uncertainty_z_for_budget",
    "value_of_information",
]
