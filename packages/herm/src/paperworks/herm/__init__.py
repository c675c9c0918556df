"""Herm: Hyperdimensional Symbolic Messages over noisy multi-agent channels (FHRR reading).

Entity-attribute-value triples are bound and bundled into one complex hypervector
(:class:`HSMCodec`), sent through a noisy :class:`Channel`, re-bound to the receiver's frame
(ego-binding) and decoded by iterated algebraic inverse with clean-up memory and MAP decisions.
The FHRR operations follow torch-hd's names and shapes (``bind``, ``bundle``, ``multiset``,
``inverse``, ``dot_similarity``, ``cosine_similarity``); :func:`to_torchhd` / :func:`from_torchhd`
convert hypervectors for torch-hd (the ``peer`` extra).
"""

from .algebra import (
    bind,
    bundle,
    cosine_similarity,
    dot_similarity,
    fractional_power,
    inverse,
    multiset,
    random_atoms,
    recall_probability,
    similarity,
    similarity_std,
    unbind,
)
from .baselines import HermMessenger, NeuralMessenger, NumericMessenger, SuperpositionMessenger, make_codec
from .channels import Channel, transmit
from .fusion import SimilarityAwareFusion, similarity_fusion
from .hsm import DecodedMessage, HSMCodec
from .interop import from_torchhd, to_torchhd
from .scene import Episodes, SceneConfig, sample_episodes

__all__ = [
    "Channel",
    "DecodedMessage",
    "Episodes",
    "HSMCodec",
    "HermMessenger",
    "NeuralMessenger",
    "NumericMessenger",
    "SceneConfig",
    "SimilarityAwareFusion",
    "SuperpositionMessenger",
    "bind",
    "bundle",
    "cosine_similarity",
    "dot_similarity",
    "fractional_power",
    "from_torchhd",
    "inverse",
    "make_codec",
    "multiset",
    "random_atoms",
    "recall_probability",
    "sample_episodes",
    "similarity",
    "similarity_fusion",
    "similarity_std",
    "to_torchhd",
    "transmit",
    "unbind",
]
