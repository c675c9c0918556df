"""Herm: Hyperdimensional Symbolic Messages over noisy multi-agent channels (FHRR reading).

Entity-attribute-value triples are bound and bundled into one complex hypervector
(:class:`HSMCodec`), sent through a noisy :class:`Channel`, re-bound to the receiver's frame
(ego-binding) and decoded by iterated algebraic inverse with clean-up memory.
"""

from .algebra import (
    bind,
    bundle,
    fractional_power,
    inverse,
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
    "fractional_power",
    "inverse",
    "make_codec",
    "random_atoms",
    "recall_probability",
    "sample_episodes",
    "similarity",
    "similarity_fusion",
    "similarity_std",
    "transmit",
    "unbind",
]
