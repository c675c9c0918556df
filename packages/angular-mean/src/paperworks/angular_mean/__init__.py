"""Angular mean: a linear ranking rule with long-run individual proportionality (arXiv 2605.12717).

Voters hold preferred scoring vectors theta_i with population fractions alpha_i; a collective
vector theta* ranks every batch of items by <theta*, x_j>. The angular mean (the Riemannian centre of
mass of the voters' directions on the sphere) gives every voter type at least its share alpha_i
of pairwise agreement in the long run; the arithmetic mean does not. Every rule is a function and a
scikit-learn estimator (:class:`AngularMean`, ...: voters are samples, fractions sample weights).
"""

from .agreement import PairwiseAgreement, batch_agreement, gaussian_agreement, long_run_agreement
from .data import (
    DATASETS,
    REGIMES,
    PreferenceData,
    gaussian_items,
    high_disagreement_instance,
    preference_dataset,
    random_instance,
)
from .estimators import AngularMean, ArithmeticMean, MaxMinSlack, NormalizedMean, SphericalMedian
from .maxmin import maxmin_slack, proportionality_slack
from .proportionality import IPResult, PerBatchIP, ip_violation, long_run_ip, per_batch_ip, per_batch_ip_many
from .rules import (
    RULES,
    AmbiguousRuleWarning,
    aggregate,
    angular_mean,
    arithmetic_mean,
    normalized_mean,
    spherical_median,
)
from .sphere import angles, exp_map, from_sphere, log_map, to_sphere

__all__ = [
    "DATASETS",
    "REGIMES",
    "RULES",
    "AmbiguousRuleWarning",
    "AngularMean",
    "ArithmeticMean",
    "IPResult",
    "MaxMinSlack",
    "NormalizedMean",
    "PairwiseAgreement",
    "PerBatchIP",
    "PreferenceData",
    "SphericalMedian",
    "aggregate",
    "angles",
    "angular_mean",
    "arithmetic_mean",
    "batch_agreement",
    "exp_map",
    "from_sphere",
    "gaussian_agreement",
    "gaussian_items",
    "high_disagreement_instance",
    "ip_violation",
    "log_map",
    "long_run_agreement",
    "long_run_ip",
    "maxmin_slack",
    "normalized_mean",
    "per_batch_ip",
    "per_batch_ip_many",
    "preference_dataset",
    "proportionality_slack",
    "random_instance",
    "spherical_median",
    "to_sphere",
]
