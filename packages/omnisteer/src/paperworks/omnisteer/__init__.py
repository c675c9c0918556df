"""OmniSteer (arXiv 2602.10161): per-modality refusal vectors, the golden refusal vector (SVD), and
steering whose strength a small adapter sets per input, as forward hooks on any transformers decoder.

The experiment (:mod:`paperworks.omnisteer.experiments`) and :mod:`paperworks.omnisteer.omni_model`
need the ``hf`` extra (transformers); everything exported here needs torch only.
"""

from .adapter import (
    OmniSteer,
    PrefixCache,
    StrengthAdapter,
    cache_prefix,
    from_layer,
    load_steering,
    omnisteer_loss,
    save_steering,
    suffix_logits,
    train_adapter,
)
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
    "PrefixCache",
    "OmniTaskConfig",
    "OmniWorld",
    "StrengthAdapter",
    "Vocab",
    "ablate",
    "cache_prefix",
    "check_directions",
    "decoder_layers",
    "from_layer",
    "golden_direction",
    "load_steering",
    "omnisteer_loss",
    "record_activations",
    "refusal_vector",
    "refusal_vectors_by_layer",
    "save_steering",
    "steer",
    "suffix_logits",
    "train_adapter",
]
