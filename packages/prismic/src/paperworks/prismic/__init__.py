"""PRISMIC: multi-signal intent consolidation for sequential recommendation, LLM-free at inference.

Candidate queries from several historical signals (:mod:`.signals`), a consolidator policy trained with
GRPO on an NDCG retrieval reward (:mod:`.grpo`, :mod:`.consolidator`), distilled into a SASRec-style
user encoder (:mod:`.encoder`, :mod:`.pipeline`). Data: a multi-intent generator and a RecBole atomic
file reader (:mod:`.data`).
"""

from .consolidator import (
    GRPOConsolidator,
    SignalPolicy,
    consolidate,
    fragment_scores,
    reward_from_fragment_scores,
    selection_reward,
)
from .data import (
    IntentDataConfig,
    SequenceData,
    Split,
    generate_intent_data,
    leave_one_out,
    pad_histories,
    read_recbole_atomic,
    train_valid_test,
)
from .embedding import HashedBowEmbedder, MiniLMEmbedder, TextEmbedder, check_embeddings, make_embedder
from .encoder import EncoderConfig, SequenceEncoder, SequentialRecommender, teacher_temperature
from .grpo import GRPOConfig, GRPOLoss, group_advantages, grpo_loss, k3_kl
from .optim import Adam
from .pipeline import Prismic, signal_inputs
from .ranking import RankingMetrics, history_mask, ndcg_from_ranks, recall_from_ranks, target_ranks
from .signals import CandidateQueries, QueryWriter, TemplateQueryWriter

__all__ = [
    "Adam",
    "CandidateQueries",
    "EncoderConfig",
    "GRPOConfig",
    "GRPOConsolidator",
    "GRPOLoss",
    "HashedBowEmbedder",
    "IntentDataConfig",
    "MiniLMEmbedder",
    "Prismic",
    "QueryWriter",
    "RankingMetrics",
    "SequenceData",
    "SequenceEncoder",
    "SequentialRecommender",
    "SignalPolicy",
    "Split",
    "TemplateQueryWriter",
    "TextEmbedder",
    "check_embeddings",
    "consolidate",
    "fragment_scores",
    "generate_intent_data",
    "group_advantages",
    "history_mask",
    "grpo_loss",
    "k3_kl",
    "leave_one_out",
    "make_embedder",
    "ndcg_from_ranks",
    "pad_histories",
    "read_recbole_atomic",
    "recall_from_ranks",
    "reward_from_fragment_scores",
    "selection_reward",
    "signal_inputs",
    "target_ranks",
    "teacher_temperature",
    "train_valid_test",
]
