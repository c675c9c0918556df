"""A battery of invalid calls on every exported function: each must fail with a one-line error raised
by the package's own code (or the core's shared validators), naming the argument, never deep inside
torch and never by returning a silent result."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

import paperworks.herm as H
from paperworks.herm import (
    Channel,
    HermMessenger,
    HSMCodec,
    NeuralMessenger,
    NumericMessenger,
    SceneConfig,
    SimilarityAwareFusion,
    SuperpositionMessenger,
)

SC = SceneConfig()
CODEC = H.make_codec(SC, dim=64, seed=0)
PLAIN = HSMCodec(["a", "b"], {"x": ["p", "q"]}, dim=16)
ATOMS = H.random_atoms(3, 64)
MSG = CODEC.encode_indices(torch.full((2, 5, 3), -1))
TABLE = H.sample_episodes(2, SC, torch.Generator().manual_seed(0)).table
OFF = torch.zeros(2, 2, dtype=torch.int64)
NUM = NumericMessenger(SC, length=50)
NEURAL = NeuralMessenger(SC, n_symbols=16, hidden=8)
HERM = HermMessenger(CODEC)
SUP = SuperpositionMessenger(CODEC)
DEC = CODEC.decode(MSG)
NAN_C = torch.full((2, 64), complex(float("nan"), 0.0))
R = torch.ones(2, 50)

CASES = {
    # algebra
    "random_atoms n=0": (lambda: H.random_atoms(0, 8), "n"),
    "random_atoms n float": (lambda: H.random_atoms(1.5, 8), "n"),
    "random_atoms dim bool": (lambda: H.random_atoms(2, True), "dim"),
    "random_atoms generator int": (lambda: H.random_atoms(2, 8, 3), "generator"),
    "bind real": (lambda: H.bind(ATOMS.real, ATOMS.real), "complex"),
    "bind numpy": (lambda: H.bind(np.ones(4), ATOMS), "a"),
    "bind D mismatch": (lambda: H.bind(ATOMS, H.random_atoms(1, 32)), "dimension mismatch"),
    "bind no broadcast": (lambda: H.bind(ATOMS, H.random_atoms(2, 64)), "do not broadcast"),
    "bind 0-d": (lambda: H.bind(torch.tensor(1j), ATOMS), "shape"),
    "unbind real key": (lambda: H.unbind(ATOMS, ATOMS.real), "key"),
    "bundle D mismatch": (lambda: H.bundle(ATOMS, H.random_atoms(1, 8)), "dimension mismatch"),
    "multiset 1-d": (lambda: H.multiset(ATOMS[0]), "stack"),
    "multiset empty": (lambda: H.multiset(ATOMS[:0]), "stack"),
    "inverse list": (lambda: H.inverse([1j, 2j]), "a"),
    "dot_similarity 3-d b": (lambda: H.dot_similarity(ATOMS, ATOMS[None]), "b"),
    "dot_similarity D mismatch": (lambda: H.dot_similarity(ATOMS, H.random_atoms(2, 8)), "dimension"),
    "cosine eps negative": (lambda: H.cosine_similarity(ATOMS, ATOMS, eps=-1.0), "eps"),
    "similarity 1-d b": (lambda: H.similarity(ATOMS, ATOMS[0]), "codebook"),
    "fractional_power 2-d base": (lambda: H.fractional_power(ATOMS, 1.0), "base"),
    "fractional_power NaN x": (lambda: H.fractional_power(ATOMS[0], float("nan")), "finite"),
    "fractional_power complex x": (lambda: H.fractional_power(ATOMS[0], torch.tensor(1j)), "real"),
    "fractional_power str x": (lambda: H.fractional_power(ATOMS[0], "1"), "x"),
    "similarity_std dim 0": (lambda: H.similarity_std(0), "dim"),
    "recall dim 0": (lambda: H.recall_probability(0, 2, 8), "dim"),
    "recall NaN noise": (lambda: H.recall_probability(64, 2, 8, float("nan")), "noise_var"),
    "recall n_items 0": (lambda: H.recall_probability(64, 0, 8), "n_items"),
    "recall candidates float": (lambda: H.recall_probability(64, 2, 8.5), "n_candidates"),
    # channels
    "Channel awgn without snr": (lambda: Channel("awgn"), "snr_db"),
    "Channel erase with snr": (lambda: Channel("erase", p=0.1, snr_db=0.0), "snr_db"),
    "Channel kind int": (lambda: Channel(3), "kind"),
    "transmit 1-d": (lambda: H.transmit(torch.ones(4), Channel()), "message"),
    "transmit int": (lambda: H.transmit(torch.ones(2, 4, dtype=torch.int32), Channel()), "dtype"),
    "transmit NaN": (lambda: H.transmit(NAN_C, Channel("awgn", snr_db=0.0)), "finite"),
    "transmit channel str": (lambda: H.transmit(R, "flip"), "channel"),
    # codec construction
    "codec no entities": (lambda: HSMCodec([], {"x": [1]}), "entities"),
    "codec duplicate entities": (lambda: HSMCodec(["a", "a"], {"x": [1]}), "entities"),
    "codec entities str": (lambda: HSMCodec("ab", {"x": [1]}), "entities"),
    "codec attributes list": (lambda: HSMCodec(["a"], [("x", [1])]), "attributes"),
    "codec empty values": (lambda: HSMCodec(["a"], {"x": []}), "attributes"),
    "codec duplicate values": (lambda: HSMCodec(["a"], {"x": [1, 1]}), "attributes"),
    "codec values str": (lambda: HSMCodec(["a"], {"x": "pq"}), "attributes"),
    "codec radius 0": (lambda: HSMCodec(["a"], {"x": [1]}, position=("pos", 0)), "radius"),
    "codec radius float": (lambda: HSMCodec(["a"], {"x": [1]}, position=("pos", 1.5)), "radius"),
    "codec position clash": (lambda: HSMCodec(["a"], {"x": [1]}, position=("x", 2)), "position"),
    "codec position not pair": (lambda: HSMCodec(["a"], {"x": [1]}, position="pos"), "position"),
    "codec dim 4": (lambda: HSMCodec(["a"], {"x": [1]}, dim=4), "dim"),
    "codec dim float": (lambda: HSMCodec(["a"], {"x": [1]}, dim=64.0), "dim"),
    "codec seed negative": (lambda: HSMCodec(["a"], {"x": [1]}, seed=-1), "seed"),
    "codec no attributes": (lambda: HSMCodec(["a"], {}), "attributes"),
    # encode
    "encode unknown entity": (lambda: CODEC.encode([("slot9", "color", "c0")]), "entity"),
    "encode unknown attribute": (lambda: CODEC.encode([("slot0", "smell", "c0")]), "attribute"),
    "encode unknown value": (lambda: CODEC.encode([("slot0", "color", "ultraviolet")]), "value"),
    "encode position outside": (lambda: CODEC.encode([("slot0", "pos", (99, 0))]), "radius"),
    "encode position fractional": (lambda: CODEC.encode([("slot0", "pos", (1.5, 0))]), "integer"),
    "encode position bool": (lambda: CODEC.encode([("slot0", "pos", (True, 0))]), "integer"),
    "encode position triple": (lambda: CODEC.encode([("slot0", "pos", (1, 0, 0))]), "pair"),
    "encode position str": (lambda: CODEC.encode([("slot0", "pos", "10")]), "pair"),
    "encode short triple": (lambda: CODEC.encode([("slot0", "color")]), "triples"),
    "encode twice": (lambda: CODEC.encode([("slot0", "color", "c0"), ("slot0", "color", "c1")]), "twice"),
    "encode not a sequence": (lambda: CODEC.encode(5), "triples"),
    "encode_indices float": (lambda: CODEC.encode_indices(torch.zeros(1, 5, 3)), "integer"),
    "encode_indices shape": (lambda: CODEC.encode_indices(torch.zeros(1, 4, 3, dtype=torch.int64)), "values"),
    "encode_indices range": (lambda: CODEC.encode_indices(torch.full((1, 5, 3), 300)), "unknown symbol"),
    "encode_indices empty": (lambda: CODEC.encode_indices(torch.zeros(0, 5, 3, dtype=torch.int64)), "values"),
    "encode_indices list of floats": (lambda: CODEC.encode_indices([[[0.5, 0, 0]] * 5]), "whole numbers"),
    # decode
    "decode real": (lambda: CODEC.decode(torch.ones(64)), "complex"),
    "decode wrong D": (lambda: CODEC.decode(torch.ones(2, 32, dtype=torch.complex64)), "dimension mismatch"),
    "decode NaN": (lambda: CODEC.decode(NAN_C), "finite"),
    "decode 3-d": (lambda: CODEC.decode(MSG[None]), "message"),
    "decode empty batch": (lambda: CODEC.decode(MSG[:0]), "message"),
    "decode offset fractional": (lambda: CODEC.decode(MSG, ego_offset=torch.tensor([0.5, 0.5])), "whole"),
    "decode offset (1,1,1)": (lambda: CODEC.decode(MSG, ego_offset=(1, 1, 1)), "ego_offset"),
    "decode offset batch": (lambda: CODEC.decode(MSG, ego_offset=torch.zeros(3, 2)), "ego_offset"),
    "decode offset NaN": (lambda: CODEC.decode(MSG, ego_offset=torch.tensor([math.nan, 0.0])), "finite"),
    "decode offset str": (lambda: CODEC.decode(MSG, ego_offset="up"), "ego_offset"),
    "decode offset without position": (
        lambda: PLAIN.decode(torch.ones(16, dtype=torch.complex64), ego_offset=(1, 1)),
        "position",
    ),
    "decode iterations 0": (lambda: CODEC.decode(MSG, iterations=0), "iterations"),
    "decode prior 0": (lambda: CODEC.decode(MSG, prior_present=0.0), "prior_present"),
    "decode prior 1.5": (lambda: CODEC.decode(MSG, prior_present=1.5), "prior_present"),
    "decode prior NaN": (lambda: CODEC.decode(MSG, prior_present=math.nan), "prior_present"),
    "decode presence": (lambda: CODEC.decode(MSG, presence="slot"), "presence"),
    "decode false_alarm 0": (lambda: CODEC.decode(MSG, false_alarm=0.0), "false_alarm"),
    "decode false_alarm 1": (lambda: CODEC.decode(MSG, false_alarm=1.0), "false_alarm"),
    "decode noise_var negative": (lambda: CODEC.decode(MSG, noise_var=-1.0), "noise_var"),
    "decode gain 0": (lambda: CODEC.decode(MSG, gain=0.0), "gain"),
    "shift (3,)": (lambda: CODEC.shift(torch.zeros(3, dtype=torch.int64)), "offset"),
    "shift fractional": (lambda: CODEC.shift(torch.tensor([0.5, 0.0])), "whole"),
    "shift without position": (lambda: PLAIN.shift((1, 1)), "position"),
    "value_index unknown attribute": (lambda: CODEC.value_index("smell", "c0"), "attribute"),
    "value_name out of range": (lambda: CODEC.value_name("color", 99), "index"),
    "triples index out of range": (lambda: DEC.triples(5), "index"),
    "triples index float": (lambda: DEC.triples(0.5), "index"),
    "triples readable_only str": (lambda: DEC.triples(0, readable_only="yes"), "readable_only"),
    # scene
    "SceneConfig grid 1": (lambda: SceneConfig(grid=1), "grid"),
    "SceneConfig grid float": (lambda: SceneConfig(grid=2.5), "grid"),
    "SceneConfig n_min 0": (lambda: SceneConfig(n_min=0), "n_min"),
    "SceneConfig n_slots too many": (lambda: SceneConfig(grid=2, n_slots=5), "n_slots"),
    "SceneConfig n_colors 0": (lambda: SceneConfig(n_colors=0), "n_colors"),
    "sample_episodes n 0": (lambda: H.sample_episodes(0, SC), "n"),
    "sample_episodes n float": (lambda: H.sample_episodes(2.0, SC), "n"),
    "sample_episodes config": (lambda: H.sample_episodes(2, {"grid": 8}), "config"),
    "sample_episodes generator": (lambda: H.sample_episodes(2, SC, 5), "generator"),
    # messengers
    "make_codec config": (lambda: H.make_codec({"grid": 8}, 64), "config"),
    "make_codec dim": (lambda: H.make_codec(SC, 2), "dim"),
    "Herm codec type": (lambda: HermMessenger("codec"), "codec"),
    "Herm codec plain": (lambda: HermMessenger(PLAIN), "codec"),
    "Herm prior 0": (lambda: HermMessenger(CODEC, prior_present=0.0), "prior_present"),
    "Herm presence": (lambda: HermMessenger(CODEC, presence="slot"), "presence"),
    "Herm decode real": (lambda: HERM.decode(torch.ones(2, 64), OFF), "received"),
    "Herm decode width": (lambda: HERM.decode(torch.ones(2, 32, dtype=torch.complex64), OFF), "received"),
    "Herm decode offset float": (lambda: HERM.decode(MSG, torch.full((2, 2), 0.5)), "offset"),
    "Herm decode offset shape": (lambda: HERM.decode(MSG, torch.zeros(2, 3, dtype=torch.int64)), "offset"),
    "Herm encode float table": (lambda: HERM.encode(TABLE.float()), "integer"),
    "Numeric config": (lambda: NumericMessenger("scene"), "config"),
    "Numeric length short": (lambda: NumericMessenger(SC, length=10), "length"),
    "Numeric combine": (lambda: NumericMessenger(SC, combine="max"), "combine"),
    "Numeric decode NaN": (lambda: NUM.decode(torch.full((2, 50), math.nan), OFF), "finite"),
    "Numeric decode inf": (lambda: NUM.decode(torch.full((2, 50), math.inf), OFF), "finite"),
    "Numeric decode width": (lambda: NUM.decode(torch.ones(2, 192), OFF), "received"),
    "Numeric decode complex": (lambda: NUM.decode(torch.ones(2, 50, dtype=torch.complex64), OFF), "real"),
    "Numeric decode offset float": (lambda: NUM.decode(R, torch.full((2, 2), 0.5)), "whole"),
    "Numeric decode offset (1,1,1)": (lambda: NUM.decode(R, torch.ones(1, 1, 1)), "offset"),
    "Numeric decode offset batch": (lambda: NUM.decode(R, torch.zeros(3, 2, dtype=torch.int64)), "offset"),
    "Numeric encode float table": (lambda: NUM.encode(TABLE.float()), "integer"),
    "Numeric encode shape": (lambda: NUM.encode(TABLE[:, :4]), "table"),
    "Numeric encode index": (lambda: NUM.encode(torch.full((1, 5, 3), 99)), "colour"),
    "Numeric encode half slot": (lambda: NUM.encode(torch.tensor([[[0, -1, 3]] * 5])), "empty"),
    "Neural n_symbols 0": (lambda: NeuralMessenger(SC, n_symbols=0), "n_symbols"),
    "Neural hidden float": (lambda: NeuralMessenger(SC, n_symbols=8, hidden=2.5), "hidden"),
    "Neural config": (lambda: NeuralMessenger("scene", n_symbols=8), "config"),
    "Neural decode width": (lambda: NEURAL.decode(torch.ones(2, 15), OFF), "received"),
    "Neural decode NaN": (lambda: NEURAL.decode(torch.full((2, 16), math.nan), OFF), "finite"),
    "Neural decode offset float": (
        lambda: NEURAL.decode(torch.ones(2, 16), torch.full((2, 2), 0.5)),
        "whole",
    ),
    "Neural encode bad table": (lambda: NEURAL.encode(torch.full((1, 5, 3), 99)), "colour"),
    "Neural fit steps 0": (lambda: NEURAL.fit(0), "max_steps"),
    "Neural fit lr negative": (lambda: NEURAL.fit(1, lr=-1.0), "lr"),
    "Neural fit factor 1.5": (lambda: NEURAL.fit(1, factor=1.5), "factor"),
    "Neural fit generator": (lambda: NEURAL.fit(1, generator=0), "generator"),
    "Superposition threshold 0": (lambda: SuperpositionMessenger(CODEC, threshold=0.0), "threshold"),
    "Superposition codec": (lambda: SuperpositionMessenger(None), "codec"),
    "Superposition decode real": (lambda: SUP.decode(torch.ones(2, 64), OFF), "received"),
    "Superposition decode offset float": (lambda: SUP.decode(MSG, torch.full((2, 2), 0.5)), "whole"),
    "Superposition encode shape": (lambda: SUP.encode(TABLE[:, :, :2]), "table"),
    # fusion
    "fusion shape mismatch": (
        lambda: H.similarity_fusion(torch.rand(2, 3), torch.rand(2, 4)),
        "shape mismatch",
    ),
    "fusion NaN logits": (
        lambda: H.similarity_fusion(torch.rand(2, 3), torch.tensor([[0.0, math.nan, 0.0]] * 2)),
        "neural_logits",
    ),
    "fusion tau NaN": (lambda: H.similarity_fusion(torch.rand(2, 3), torch.rand(2, 3), tau=math.nan), "tau"),
    "fusion kappa 0": (lambda: H.similarity_fusion(torch.rand(2, 3), torch.rand(2, 3), kappa=0.0), "kappa"),
    "fusion temperature": (
        lambda: H.similarity_fusion(torch.rand(2, 3), torch.rand(2, 3), temperature=-1.0),
        "temperature",
    ),
    "fusion list": (lambda: H.similarity_fusion([0.1, 0.2], torch.rand(2)), "symbolic_scores"),
    "fusion int scores": (
        lambda: H.similarity_fusion(torch.ones(2, 3, dtype=torch.int64), torch.rand(2, 3)),
        "dtype",
    ),
    "fusion module tau NaN": (lambda: SimilarityAwareFusion(tau=math.nan), "tau"),
    "fusion module kappa": (lambda: SimilarityAwareFusion(kappa=-2.0), "kappa"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_invalid_call_fails_clearly(case):
    call, match = CASES[case]
    with pytest.raises((TypeError, ValueError, KeyError, IndexError, ImportError)) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    assert match.lower() in message.lower(), message
    # raised by the package (or the core's validators), not deep inside torch or numpy
    origin = Path(info.traceback[-1].path).as_posix()
    assert "/paperworks/herm/" in origin or "/paperworks/core/" in origin, origin


def test_battery_covers_every_export():
    names = " ".join(CASES).lower()
    exported = {n.lower() for n in H.__all__}
    uncovered = {
        "bind": "bind",
        "unbind": "unbind",
        "bundle": "bundle",
        "multiset": "multiset",
        "inverse": "inverse",
        "dot_similarity": "dot_similarity",
        "cosine_similarity": "cosine",
        "similarity": "similarity",
        "fractional_power": "fractional_power",
        "similarity_std": "similarity_std",
        "recall_probability": "recall",
        "random_atoms": "random_atoms",
        "channel": "channel",
        "transmit": "transmit",
        "hsmcodec": "codec",
        "decodedmessage": "triples",
        "sceneconfig": "sceneconfig",
        "sample_episodes": "sample_episodes",
        "make_codec": "make_codec",
        "hermmessenger": "herm",
        "numericmessenger": "numeric",
        "neuralmessenger": "neural",
        "superpositionmessenger": "superposition",
        "similarity_fusion": "fusion",
        "similarityawarefusion": "fusion module",
        "to_torchhd": None,  # tested in test_herm_interop.py with torch-hd installed
        "from_torchhd": None,
        "episodes": None,  # a plain record returned by sample_episodes
    }
    assert set(uncovered) == exported
    missing = [n for n, key in uncovered.items() if key is not None and key not in names]
    assert not missing
