"""paperworks.core: the thin core shared by every paperworks method package.

The experiment protocol (:class:`Paper`, :class:`Claim`, :class:`SlopeClaim`, :class:`Experiment`,
:class:`Report`) with interval verdicts, executors that run seeds in process or on Ray and
:func:`assemble_report` for any other engine, discovery of installed experiments, seeding, device
choice, atomic result writing, a progress display (tqdm), and small metrics used across fields.
"""

from .claims import (
    HOLDS,
    INCONCLUSIVE,
    INCONCLUSIVE_1_SEED,
    NOT_REPRODUCED,
    Claim,
    ClaimResult,
    SlopeClaim,
    judge,
    loglog_slope,
    t_interval,
)
from .executors import LocalExecutor, RayExecutor
from .experiment import Experiment, IncompleteReport, RunInterrupted, SeedResult, assemble_report
from .io import atomic_write_bytes, atomic_write_json, atomic_write_text, check_writable, write_report
from .metrics import dcg_at_k, effective_rank, ndcg_at_k, recall_at_k
from .overrides import OverrideError
from .plots import optional_pyplot
from .progress import Progress
from .registry import GROUP, UnknownSlugError, find_experiments, load_experiment
from .report import MetricSummary, Paper, Report, claims_table, verdict_counts, verdict_line
from .seeding import choose_device, seed_everything, torch_threads
from .seeds import parse_seed_spec

__all__ = [
    "GROUP",
    "HOLDS",
    "INCONCLUSIVE",
    "INCONCLUSIVE_1_SEED",
    "NOT_REPRODUCED",
    "SlopeClaim",
    "judge",
    "loglog_slope",
    "t_interval",
    "verdict_counts",
    "verdict_line",
    "Claim",
    "ClaimResult",
    "Experiment",
    "IncompleteReport",
    "LocalExecutor",
    "OverrideError",
    "RayExecutor",
    "RunInterrupted",
    "SeedResult",
    "assemble_report",
    "parse_seed_spec",
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
