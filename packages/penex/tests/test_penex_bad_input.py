"""A battery of invalid calls on every exported function: each raises the package's own one-line error
(TypeError for a wrong type, ValueError for a wrong value) whose message starts with the argument's name."""

import numpy as np
import pytest
import torch
from torch import nn

from paperworks.penex import (
    PENEXLoss,
    adaptive_penalty,
    confidence_penalty_loss,
    margin_distribution,
    multiclass_margins,
    normalized_margins,
    penex_log_probabilities,
    penex_loss,
    penex_minimiser,
    penex_probabilities,
    spectral_complexity,
)

F = torch.zeros(2, 3)
Y = torch.tensor([0, 1])
NAN = torch.tensor([[0.0, float("nan"), 1.0], [0.0, 0.0, 0.0]])
POSINF = torch.tensor([[0.0, float("inf"), 1.0], [0.0, 0.0, 0.0]])
NEGINF_TARGET = torch.tensor([[float("-inf"), 0.0, 1.0], [0.0, 0.0, 0.0]])
MLP = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))


def _loss_cases(fn, name):
    """Invalid calls shared by penex_loss, adaptive_penalty and PENEXLoss()(...)."""
    return [
        (f"{name}-logits-list", lambda: fn([[0.0, 1.0]], Y), "logits"),
        (f"{name}-logits-int", lambda: fn(torch.ones(2, 3, dtype=torch.long), Y), "logits"),
        (f"{name}-logits-1d", lambda: fn(torch.ones(3), Y), "logits"),
        (f"{name}-logits-empty", lambda: fn(torch.ones(0, 3), torch.zeros(0, dtype=torch.long)), "logits"),
        (f"{name}-logits-no-class", lambda: fn(torch.ones(2, 0), Y), "logits"),
        (f"{name}-logits-nan", lambda: fn(NAN, Y), "logits"),
        (f"{name}-logits-posinf", lambda: fn(POSINF, Y), "logits"),
        (f"{name}-logits-neginf-target", lambda: fn(NEGINF_TARGET, Y), "logits"),
        (f"{name}-logits-overflow", lambda: fn(torch.full((2, 3), 100.0), Y), "logits"),
        (f"{name}-target-list", lambda: fn(F, [0, 1]), "target"),
        (f"{name}-target-float", lambda: fn(F, torch.tensor([0.0, 1.0])), "target"),
        (f"{name}-target-bool", lambda: fn(F, torch.tensor([True, False])), "target"),
        (f"{name}-target-soft", lambda: fn(F, torch.eye(3)[:2]), "target"),
        (f"{name}-target-high", lambda: fn(F, torch.tensor([0, 3])), "target"),
        (f"{name}-target-5", lambda: fn(F, torch.tensor([5, 0])), "target"),
        (f"{name}-target-negative", lambda: fn(F, torch.tensor([0, -2])), "target"),
        (f"{name}-target-batch", lambda: fn(F, torch.tensor([0, 1, 2])), "target"),
        (f"{name}-target-2d", lambda: fn(F, torch.tensor([[0], [1]])), "target"),
    ]


def _functional_kwarg_cases(fn, name):
    return [
        (f"{name}-sensitivity-0", lambda: fn(F, Y, sensitivity=0.0), "sensitivity"),
        (f"{name}-sensitivity-neg", lambda: fn(F, Y, sensitivity=-1.0), "sensitivity"),
        (f"{name}-sensitivity-nan", lambda: fn(F, Y, sensitivity=float("nan")), "sensitivity"),
        (f"{name}-sensitivity-inf", lambda: fn(F, Y, sensitivity=float("inf")), "sensitivity"),
        (f"{name}-sensitivity-str", lambda: fn(F, Y, sensitivity="0.1"), "sensitivity"),
        (f"{name}-sensitivity-bool", lambda: fn(F, Y, sensitivity=True), "sensitivity"),
        (f"{name}-sensitivity-none", lambda: fn(F, Y, sensitivity=None), "sensitivity"),
        (f"{name}-clip-neg", lambda: fn(F, Y, clip=-1.0), "clip"),
        (f"{name}-clip-0", lambda: fn(F, Y, clip=0), "clip"),
        (f"{name}-clip-str", lambda: fn(F, Y, clip="10"), "clip"),
        (f"{name}-clip-inf", lambda: fn(F, Y, clip=float("inf")), "clip"),
        (f"{name}-clip-bool", lambda: fn(F, Y, clip=True), "clip"),
        (f"{name}-weight-list", lambda: fn(F, Y, weight=[1.0, 1.0, 1.0]), "weight"),
        (f"{name}-weight-int", lambda: fn(F, Y, weight=torch.ones(3, dtype=torch.long)), "weight"),
        (f"{name}-weight-shape", lambda: fn(F, Y, weight=torch.ones(4)), "weight"),
        (f"{name}-weight-2d", lambda: fn(F, Y, weight=torch.ones(1, 3)), "weight"),
        (f"{name}-weight-neg", lambda: fn(F, Y, weight=torch.tensor([1.0, -1.0, 1.0])), "weight"),
        (f"{name}-weight-nan", lambda: fn(F, Y, weight=torch.tensor([1.0, float("nan"), 1.0])), "weight"),
        (f"{name}-ignore-float", lambda: fn(F, Y, ignore_index=-1.5), "ignore_index"),
        (f"{name}-ignore-str", lambda: fn(F, Y, ignore_index="x"), "ignore_index"),
        (f"{name}-ignore-bool", lambda: fn(F, Y, ignore_index=True), "ignore_index"),
        (f"{name}-pmin-0", lambda: fn(F, Y, penalty_min=0.0), "penalty_min"),
        (f"{name}-pmax-nan", lambda: fn(F, Y, penalty_max=float("nan")), "penalty_max"),
        (f"{name}-pmin-above-pmax", lambda: fn(F, Y, penalty_min=2.0, penalty_max=1.0), "penalty_min"),
        (f"{name}-validate-str", lambda: fn(F, Y, validate="yes"), "validate"),
    ]


CASES = [
    *_loss_cases(penex_loss, "penex_loss"),
    *_functional_kwarg_cases(penex_loss, "penex_loss"),
    ("penex_loss-penalty-running", lambda: penex_loss(F, Y, penalty="running"), "penalty"),
    ("penex_loss-penalty-unknown", lambda: penex_loss(F, Y, penalty="fixed"), "penalty"),
    ("penex_loss-penalty-0", lambda: penex_loss(F, Y, penalty=0.0), "penalty"),
    ("penex_loss-penalty-neg", lambda: penex_loss(F, Y, penalty=-1.0), "penalty"),
    ("penex_loss-penalty-nan", lambda: penex_loss(F, Y, penalty=float("nan")), "penalty"),
    ("penex_loss-penalty-none", lambda: penex_loss(F, Y, penalty=None), "penalty"),
    ("penex_loss-penalty-bool", lambda: penex_loss(F, Y, penalty=True), "penalty"),
    ("penex_loss-penalty-vector", lambda: penex_loss(F, Y, penalty=torch.ones(2)), "penalty"),
    ("penex_loss-penalty-int-tensor", lambda: penex_loss(F, Y, penalty=torch.tensor(1)), "penalty"),
    ("penex_loss-penalty-neg-tensor", lambda: penex_loss(F, Y, penalty=torch.tensor(-1.0)), "penalty"),
    ("penex_loss-reduction", lambda: penex_loss(F, Y, reduction="avg"), "reduction"),
    ("penex_loss-reduction-none-obj", lambda: penex_loss(F, Y, reduction=None), "reduction"),
    *_loss_cases(adaptive_penalty, "adaptive_penalty"),
    *[c for c in _functional_kwarg_cases(adaptive_penalty, "adaptive_penalty")],
    *_loss_cases(PENEXLoss(), "PENEXLoss"),
    ("PENEXLoss-sensitivity", lambda: PENEXLoss(sensitivity=0.0), "sensitivity"),
    ("PENEXLoss-sensitivity-str", lambda: PENEXLoss(sensitivity="a"), "sensitivity"),
    ("PENEXLoss-penalty-unknown", lambda: PENEXLoss(penalty="fixed"), "penalty"),
    ("PENEXLoss-penalty-neg", lambda: PENEXLoss(penalty=-0.1), "penalty"),
    ("PENEXLoss-penalty-none", lambda: PENEXLoss(penalty=None), "penalty"),
    ("PENEXLoss-penalty-tensor", lambda: PENEXLoss(penalty=torch.tensor(0.5)), "penalty"),
    ("PENEXLoss-reduction", lambda: PENEXLoss(reduction="mean "), "reduction"),
    ("PENEXLoss-clip-0", lambda: PENEXLoss(clip=0.0), "clip"),
    ("PENEXLoss-clip-str", lambda: PENEXLoss(clip="10"), "clip"),
    ("PENEXLoss-ema-0", lambda: PENEXLoss(ema=0.0), "ema"),
    ("PENEXLoss-ema-above-1", lambda: PENEXLoss(ema=1.5), "ema"),
    ("PENEXLoss-ema-str", lambda: PENEXLoss(ema="0.1"), "ema"),
    ("PENEXLoss-pmin", lambda: PENEXLoss(penalty_min=-1.0), "penalty_min"),
    ("PENEXLoss-pmin-above-pmax", lambda: PENEXLoss(penalty_min=5.0, penalty_max=1.0), "penalty_min"),
    ("PENEXLoss-weight-2d", lambda: PENEXLoss(weight=torch.ones(2, 3)), "weight"),
    ("PENEXLoss-weight-neg", lambda: PENEXLoss(weight=torch.tensor([1.0, -1.0])), "weight"),
    ("PENEXLoss-weight-list", lambda: PENEXLoss(weight=[1.0, 2.0]), "weight"),
    ("PENEXLoss-weight-wrong-C", lambda: PENEXLoss(weight=torch.ones(4))(F, Y), "weight"),
    ("PENEXLoss-ignore-float", lambda: PENEXLoss(ignore_index=0.5), "ignore_index"),
    ("PENEXLoss-validate", lambda: PENEXLoss(validate=1), "validate"),
    # read-out
    ("probabilities-list", lambda: penex_probabilities([0.0, 1.0], 0.1), "logits"),
    ("probabilities-int", lambda: penex_probabilities(torch.ones(2, 2, dtype=torch.long), 0.1), "logits"),
    ("probabilities-scalar", lambda: penex_probabilities(torch.tensor(1.0), 0.1), "logits"),
    ("probabilities-empty", lambda: penex_probabilities(torch.ones(0, 3), 0.1), "logits"),
    ("probabilities-nan", lambda: penex_probabilities(NAN, 0.1), "logits"),
    ("probabilities-inf", lambda: penex_probabilities(POSINF, 0.1), "logits"),
    ("probabilities-alpha-neg", lambda: penex_probabilities(F, -1.0), "sensitivity"),
    ("probabilities-alpha-0", lambda: penex_probabilities(F, 0.0), "sensitivity"),
    ("probabilities-alpha-str", lambda: penex_probabilities(F, "1"), "sensitivity"),
    ("probabilities-alpha-none", lambda: penex_probabilities(F, None), "sensitivity"),
    (
        "log-probabilities-int",
        lambda: penex_log_probabilities(torch.ones(2, 2, dtype=torch.long), 1.0),
        "logits",
    ),
    ("log-probabilities-nan", lambda: penex_log_probabilities(NAN, 1.0), "logits"),
    ("log-probabilities-alpha", lambda: penex_log_probabilities(F, float("inf")), "sensitivity"),
    ("criterion-probabilities-nan", lambda: PENEXLoss().probabilities(NAN), "logits"),
    ("minimiser-sum", lambda: penex_minimiser(torch.tensor([[0.5, 0.6]]), 1.0, 1.0), "probabilities"),
    ("minimiser-zero", lambda: penex_minimiser(torch.tensor([[1.0, 0.0]]), 1.0, 1.0), "probabilities"),
    (
        "minimiser-nan",
        lambda: penex_minimiser(torch.tensor([[float("nan"), 1.0]]), 1.0, 1.0),
        "probabilities",
    ),
    ("minimiser-list", lambda: penex_minimiser([[0.5, 0.5]], 1.0, 1.0), "probabilities"),
    ("minimiser-int", lambda: penex_minimiser(torch.ones(1, 2, dtype=torch.long), 1.0, 1.0), "probabilities"),
    ("minimiser-empty", lambda: penex_minimiser(torch.ones(0), 1.0, 1.0), "probabilities"),
    ("minimiser-scalar", lambda: penex_minimiser(torch.tensor(1.0), 1.0, 1.0), "probabilities"),
    ("minimiser-alpha", lambda: penex_minimiser(torch.tensor([0.5, 0.5]), 0.0, 1.0), "sensitivity"),
    ("minimiser-penalty", lambda: penex_minimiser(torch.tensor([0.5, 0.5]), 1.0, -1.0), "penalty"),
    ("minimiser-penalty-str", lambda: penex_minimiser(torch.tensor([0.5, 0.5]), 1.0, "auto"), "penalty"),
    # baselines
    ("confidence-target-5", lambda: confidence_penalty_loss(F, torch.tensor([5, 0])), "target"),
    ("confidence-target-float", lambda: confidence_penalty_loss(F, torch.tensor([0.0, 1.0])), "target"),
    ("confidence-target-batch", lambda: confidence_penalty_loss(F, torch.tensor([0, 1, 2])), "target"),
    ("confidence-target-list", lambda: confidence_penalty_loss(F, [0, 1]), "target"),
    (
        "confidence-logits-int",
        lambda: confidence_penalty_loss(torch.ones(2, 3, dtype=torch.long), Y),
        "logits",
    ),
    (
        "confidence-logits-3d",
        lambda: confidence_penalty_loss(torch.ones(2, 3, 4), torch.zeros(2, 4, dtype=torch.long)),
        "logits",
    ),
    ("confidence-logits-nan", lambda: confidence_penalty_loss(NAN, Y), "logits"),
    (
        "confidence-logits-empty",
        lambda: confidence_penalty_loss(torch.ones(0, 3), torch.zeros(0, dtype=torch.long)),
        "logits",
    ),
    ("confidence-beta-neg", lambda: confidence_penalty_loss(F, Y, -0.1), "beta"),
    ("confidence-beta-str", lambda: confidence_penalty_loss(F, Y, "0.1"), "beta"),
    ("confidence-beta-nan", lambda: confidence_penalty_loss(F, Y, float("nan")), "beta"),
    # margins
    (
        "margins-one-class",
        lambda: multiclass_margins(torch.zeros(3, 1), torch.zeros(3, dtype=torch.long)),
        "logits",
    ),
    ("margins-target-high", lambda: multiclass_margins(F, torch.tensor([0, 3])), "target"),
    ("margins-target-batch", lambda: multiclass_margins(F, torch.tensor([0, 1, 2])), "target"),
    ("margins-target-float", lambda: multiclass_margins(F, torch.tensor([0.0, 1.0])), "target"),
    ("margins-logits-nan", lambda: multiclass_margins(NAN, Y), "logits"),
    (
        "margins-logits-3d",
        lambda: multiclass_margins(torch.ones(2, 3, 1), torch.zeros(2, 1, dtype=torch.long)),
        "logits",
    ),
    ("margins-logits-list", lambda: multiclass_margins([[0.0, 1.0]], Y), "logits"),
    (
        "margins-empty",
        lambda: multiclass_margins(torch.ones(0, 3), torch.zeros(0, dtype=torch.long)),
        "logits",
    ),
    ("spectral-no-linear", lambda: spectral_complexity(nn.ReLU()), "model"),
    ("spectral-not-module", lambda: spectral_complexity("mlp"), "model"),
    (
        "spectral-conv",
        lambda: spectral_complexity(nn.Sequential(nn.Conv1d(1, 1, 1), nn.Linear(1, 1))),
        "model",
    ),
    (
        "spectral-zero",
        lambda: spectral_complexity(nn.Linear(2, 2).requires_grad_(False).apply(lambda m: m.weight.zero_())),
        "model",
    ),
    ("normalized-inputs-list", lambda: normalized_margins(MLP, [[0.0] * 4], torch.tensor([0])), "inputs"),
    (
        "normalized-inputs-int",
        lambda: normalized_margins(MLP, torch.ones(2, 4, dtype=torch.long), Y),
        "inputs",
    ),
    ("normalized-model", lambda: normalized_margins(None, torch.ones(2, 4), Y), "model"),
    ("normalized-target", lambda: normalized_margins(MLP, torch.ones(2, 4), torch.tensor([0, 7])), "target"),
    ("distribution-nan", lambda: margin_distribution(np.array([1.0, np.nan])), "margins"),
    ("distribution-empty", lambda: margin_distribution(np.array([])), "margins"),
    ("distribution-2d", lambda: margin_distribution(np.ones((2, 2))), "margins"),
    ("distribution-str", lambda: margin_distribution(["a", "b"]), "margins"),
    ("distribution-levels-high", lambda: margin_distribution(np.ones(3), levels=(0.5, 1.5)), "levels"),
    ("distribution-levels-empty", lambda: margin_distribution(np.ones(3), levels=()), "levels"),
    ("distribution-levels-str", lambda: margin_distribution(np.ones(3), levels="0.5"), "levels"),
    ("distribution-levels-nan", lambda: margin_distribution(np.ones(3), levels=(float("nan"),)), "levels"),
]


@pytest.mark.parametrize(("call", "arg"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_call_raises_a_named_error(call, arg):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{arg}:"), message
    assert "\n" not in message


def test_battery_is_large_and_ids_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 129
