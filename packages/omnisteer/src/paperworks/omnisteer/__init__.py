"""OmniSteer (arXiv 2602.10161): per-modality refusal vectors, the golden refusal vector (SVD), and
steering whose strength a small adapter sets per input, as forward hooks on any transformers decoder.

The experiment (:mod:`paperworks.omnisteer.experiments`) and :mod:`paperworks.omnisteer.omni_model`
need the ``hf`` extra (transformers); everything exported here needs torch only.
"""

from .adapter import OmniSteer, StrengthAdapter, load_steering, omnisteer_loss, save_steering, train_adapter
from .data import MODALITIES, OmniTaskConfig, OmniWorld, Vocab
from .directions import (
    GoldenDirection,
    golden_direction,
    record_activations,
    refusal_vector,
    refusal_vectors_by_layer,
)
from .hooks import ablate, check_directions, decoder_layers, steer

__all__ = [
    "MODALITIES",
    "GoldenDirection",
    "OmniSteer",
    "OmniTaskConfig",
    "OmniWorld",
    "StrengthAdapter",
    "Vocab",
    "ablate",
    "check_directions",
    "decoder_layers",
    "golden_direction",
    "load_steering",
    "omnisteer_loss",
    "record_activations",
    "refusal_vector",
    "refusal_vectors_by_layer",
    "save_steering",
    "steer",
    "train_adapter",
]
