"""paperworks.core: the thin core shared by every paperworks method package.

The experiment protocol (:class:`Paper`, :class:`Claim`, :class:`Experiment`, :class:`Report`),
discovery of installed experiments, seeding, device choice, atomic result writing, a progress
display, and small metrics used across fields.
"""

from .experiment import Claim, ClaimResult, Experiment, MetricSummary, Paper, Report, claims_table
from .io import atomic_write_bytes, atomic_write_json, atomic_write_text, check_writable, write_report
from .metrics import dcg_at_k, effective_rank, ndcg_at_k, recall_at_k
from .plots import optional_pyplot
from .progress import Progress
from .registry import GROUP, UnknownSlugError, find_experiments, load_experiment
from .seeding import choose_device, seed_everything, torch_threads

__all__ = [
    "GROUP",
    "Claim",
    "ClaimResult",
    "Experiment",
    "MetricSummary",
    "Paper",
    "Progress",
    "Report",
    "UnknownSlugError",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "check_writable",
    "claims_table",
    "choose_device",
    "dcg_at_k",
    "effective_rank",
    "find_experiments",
    "load_experiment",
    "ndcg_at_k",
    "optional_pyplot",
    "recall_at_k",
    "seed_everything",
    "torch_threads",
    "write_report",
]
