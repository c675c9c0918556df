"""A battery of invalid calls on every exported function: each a one-line error from this package
that names the argument (never a raw re.error, slicing TypeError or torch's own shape message)."""

import math

import numpy as np
import pytest
import torch

import paperworks.pm_lora as pl
from paperworks.pm_lora import (
    MLP,
    ContinualLoRALinear,
    InfLoRA,
    OLoRA,
    PerTaskLoRA,
    PMLoRA,
    PMLoRAConfig,
    SeqLoRA,
    TrainConfig,
)

torch.set_num_threads(1)
TM = ("fc1", "fc2")


def _pm():
    return PMLoRA(MLP(8, 16, 3), PMLoRAConfig(rank=4, task_rank=2, target_modules=TM))


def _closed_pm():
    pm = _pm()
    pm.begin_task()
    pm.end_task()
    return pm


def _sd():
    return pl.to_peft_state_dict(_closed_pm())


B, A = torch.randn(5, 2), torch.randn(2, 4)
x8, y8 = torch.randn(6, 8), torch.randint(0, 3, (6,))
R_ok = np.array([[0.9, np.nan], [0.7, 0.8]])
stream = pl.make_stream(2, seed=0)

CASES = [
    # configs
    ("PMLoRAConfig rank=0", lambda: PMLoRAConfig(rank=0), ValueError, "rank"),
    ("PMLoRAConfig rank=2.0", lambda: PMLoRAConfig(rank=2.0), TypeError, "rank"),
    ("PMLoRAConfig rank=True", lambda: PMLoRAConfig(rank=True), TypeError, "rank"),
    ("PMLoRAConfig task_rank>rank", lambda: PMLoRAConfig(rank=4, task_rank=8), ValueError, "task_rank"),
    ("PMLoRAConfig energy=0", lambda: PMLoRAConfig(energy=0.0), ValueError, "energy"),
    ("PMLoRAConfig energy=1.5", lambda: PMLoRAConfig(energy=1.5), ValueError, "energy"),
    ("PMLoRAConfig energy=nan", lambda: PMLoRAConfig(energy=math.nan), ValueError, "energy"),
    ("PMLoRAConfig energy='a'", lambda: PMLoRAConfig(energy="a"), TypeError, "energy"),
    ("PMLoRAConfig targets=()", lambda: PMLoRAConfig(target_modules=()), ValueError, "target_modules"),
    ("PMLoRAConfig targets=''", lambda: PMLoRAConfig(target_modules=""), ValueError, "target_modules"),
    ("PMLoRAConfig targets=3", lambda: PMLoRAConfig(target_modules=3), TypeError, "target_modules"),
    ("PMLoRAConfig orthogonal=1", lambda: PMLoRAConfig(orthogonal=1), TypeError, "orthogonal"),
    ("TrainConfig steps=0", lambda: TrainConfig(steps=0), ValueError, "steps"),
    ("TrainConfig steps=1.5", lambda: TrainConfig(steps=1.5), TypeError, "steps"),
    ("TrainConfig lr=0", lambda: TrainConfig(lr=0.0), ValueError, "lr"),
    ("TrainConfig lr=nan", lambda: TrainConfig(lr=math.nan), ValueError, "lr"),
    ("TrainConfig pretrain_lr=-1", lambda: TrainConfig(pretrain_lr=-1.0), ValueError, "pretrain_lr"),
    # adapters
    ("PMLoRA config=dict", lambda: PMLoRA(MLP(), {"rank": 4}), TypeError, "config"),
    ("PMLoRA model=None", lambda: PMLoRA(None, PMLoRAConfig(target_modules=TM)), TypeError, "model"),
    (
        "PMLoRA bad regex",
        lambda: PMLoRA(MLP(), PMLoRAConfig(target_modules="fc[")),
        ValueError,
        "target_modules",
    ),
    (
        "PMLoRA no match",
        lambda: PMLoRA(MLP(), PMLoRAConfig(target_modules=("q",))),
        ValueError,
        "target_modules",
    ),
    (
        "PMLoRA rank too big",
        lambda: PMLoRA(MLP(8, 16, 3), PMLoRAConfig(rank=4, task_rank=2)),
        ValueError,
        "rank",
    ),
    ("SeqLoRA rank=0", lambda: SeqLoRA(MLP(), TM, rank=0), ValueError, "rank"),
    ("SeqLoRA rank=1.0", lambda: SeqLoRA(MLP(), TM, rank=1.0), TypeError, "rank"),
    ("SeqLoRA rank too big", lambda: SeqLoRA(MLP(8, 4, 3), TM, rank=6), ValueError, "rank"),
    ("OLoRA task_rank=0", lambda: OLoRA(MLP(), TM, task_rank=0), ValueError, "task_rank"),
    ("OLoRA lam=-1", lambda: OLoRA(MLP(), TM, lam=-1.0), ValueError, "lam"),
    ("OLoRA lam=nan", lambda: OLoRA(MLP(), TM, lam=math.nan), ValueError, "lam"),
    ("OLoRA targets=5", lambda: OLoRA(MLP(), 5), TypeError, "target_modules"),
    ("PerTaskLoRA select(0) before tasks", lambda: PerTaskLoRA(MLP(), TM).select(0), ValueError, "task"),
    ("PerTaskLoRA select(True)", lambda: PerTaskLoRA(MLP(), TM).select(True), ValueError, "task"),
    ("InfLoRA energy=0", lambda: InfLoRA(MLP(), TM, energy=0.0), ValueError, "energy"),
    ("InfLoRA task_rank=-1", lambda: InfLoRA(MLP(), TM, task_rank=-1), ValueError, "task_rank"),
    ("InfLoRA begin_task no inputs", lambda: InfLoRA(MLP(), TM).begin_task(), ValueError, "inputs"),
    (
        "ContinualLoRALinear base=Conv2d",
        lambda: ContinualLoRALinear(torch.nn.Conv2d(1, 1, 1), 1),
        TypeError,
        "base",
    ),
    (
        "ContinualLoRALinear rank=-1",
        lambda: ContinualLoRALinear(torch.nn.Linear(4, 4), -1),
        ValueError,
        "rank",
    ),
    ("ContinualLoRALinear rank=9", lambda: ContinualLoRALinear(torch.nn.Linear(4, 4), 9), ValueError, "rank"),
    (
        "open_task k=0",
        lambda: ContinualLoRALinear(torch.nn.Linear(4, 4), 1).open_task(0),
        ValueError,
        "task_rank",
    ),
    (
        "open_task k=2.0",
        lambda: ContinualLoRALinear(torch.nn.Linear(4, 4), 1).open_task(2.0),
        ValueError,
        "task_rank",
    ),
    ("forward float64", lambda: _pm()(torch.randn(2, 8, dtype=torch.float64)), ValueError, "x"),
    ("forward wrong width", lambda: _pm()(torch.randn(2, 7)), ValueError, "x"),
    ("forward list", lambda: _pm().layers["fc1"](x8.tolist()), TypeError, "x"),
    ("end_task first", lambda: _pm().end_task(), RuntimeError, "end_task"),
    ("find_target_modules model=1", lambda: pl.find_target_modules(1, "all-linear"), TypeError, "model"),
    (
        "find_target_modules list of ''",
        lambda: pl.find_target_modules(MLP(), [""]),
        ValueError,
        "target_modules",
    ),
    # merge
    ("merge rank=2.0", lambda: pl.merge_lowrank(B, A, B, A, 2.0), TypeError, "rank"),
    ("merge rank=0", lambda: pl.merge_lowrank(B, A, B, A, 0), ValueError, "rank"),
    ("merge rank=5", lambda: pl.merge_lowrank(B, A, B, A, 5), ValueError, "rank"),
    ("merge numpy", lambda: pl.merge_lowrank(B.numpy(), A, B, A, 2), TypeError, "B1, A1"),
    ("merge NaN", lambda: pl.merge_lowrank(B, A * math.nan, B, A, 2), ValueError, "B1, A1"),
    ("merge 1-d", lambda: pl.merge_lowrank(B[:, 0], A, B, A, 2), ValueError, "B1, A1"),
    ("merge shapes", lambda: pl.merge_lowrank(B, A, torch.randn(6, 2), A, 2), ValueError, "merge_lowrank"),
    ("lowrank_svd inner", lambda: pl.lowrank_svd(B, torch.randn(3, 4)), ValueError, "B, A"),
    ("spectral_basis energy=2", lambda: pl.spectral_basis(B, A, 2.0), ValueError, "energy"),
    ("spectral_basis energy=0", lambda: pl.spectral_basis(B, A, 0.0), ValueError, "energy"),
    ("spectral_basis tol=nan", lambda: pl.spectral_basis(B, A, tol=math.nan), ValueError, "tol"),
    ("project_out rows", lambda: pl.project_out(A, torch.randn(5, 1)), ValueError, "V"),
    ("project_out 1-d", lambda: pl.project_out(A[0], torch.randn(4, 1)), ValueError, "A, V"),
    ("project_out numpy", lambda: pl.project_out(A.numpy(), torch.randn(4, 1)), TypeError, "A, V"),
    # peft interop
    ("to_peft_state_dict open task", lambda: pl.to_peft_state_dict(_pm_open()), RuntimeError, "pm"),
    ("to_peft_state_dict not pm", lambda: pl.to_peft_state_dict(MLP()), TypeError, "pm"),
    (
        "load scaling=nan",
        lambda: pl.load_peft_state_dict(_closed_pm(), _sd(), scaling=math.nan),
        ValueError,
        "scaling",
    ),
    (
        "load scaling=0",
        lambda: pl.load_peft_state_dict(_closed_pm(), _sd(), scaling=0.0),
        ValueError,
        "scaling",
    ),
    (
        "load scaling=-1",
        lambda: pl.load_peft_state_dict(_closed_pm(), _sd(), scaling=-1.0),
        ValueError,
        "scaling",
    ),
    (
        "load scaling='1'",
        lambda: pl.load_peft_state_dict(_closed_pm(), _sd(), scaling="1"),
        TypeError,
        "scaling",
    ),
    ("load list", lambda: pl.load_peft_state_dict(_closed_pm(), [1]), TypeError, "state_dict"),
    ("load missing", lambda: pl.load_peft_state_dict(_closed_pm(), {}), KeyError, "state_dict"),
    (
        "load NaN",
        lambda: pl.load_peft_state_dict(_closed_pm(), {k: v * math.nan for k, v in _sd().items()}),
        ValueError,
        "state_dict",
    ),
    (
        "load non-tensor",
        lambda: pl.load_peft_state_dict(_closed_pm(), dict.fromkeys(_sd(), 1.0)),
        TypeError,
        "state_dict",
    ),
    ("base_model_copy not pm", lambda: pl.base_model_copy(MLP()), TypeError, "pm"),
    ("save_peft_dir path=3", lambda: pl.save_peft_dir(_closed_pm(), 3), TypeError, "path"),
    ("from_peft_dir path=None", lambda: pl.from_peft_dir(None, MLP()), TypeError, "path"),
    # data and training
    ("make_stream n_tasks=0", lambda: pl.make_stream(0, seed=0), ValueError, "n_tasks"),
    ("make_stream n_tasks=2.0", lambda: pl.make_stream(2.0, seed=0), TypeError, "n_tasks"),
    ("make_stream seed=-1", lambda: pl.make_stream(2, seed=-1), ValueError, "seed"),
    ("make_stream frac=0", lambda: pl.make_stream(2, seed=0, frac_permuted=0.0), ValueError, "frac_permuted"),
    (
        "make_stream frac=nan",
        lambda: pl.make_stream(2, seed=0, frac_permuted=math.nan),
        ValueError,
        "frac_permuted",
    ),
    ("stream_to not stream", lambda: pl.stream_to([1], "cpu"), TypeError, "stream"),
    ("MLP d_in=0", lambda: MLP(0), ValueError, "d_in"),
    ("MLP hidden=1.5", lambda: MLP(8, 1.5), TypeError, "hidden"),
    ("pretrain labels length", lambda: pl.pretrain_backbone(x8, y8[:4]), ValueError, "y"),
    ("pretrain labels float", lambda: pl.pretrain_backbone(x8, y8.float()), ValueError, "y"),
    ("pretrain labels negative", lambda: pl.pretrain_backbone(x8, y8 - 5), ValueError, "y"),
    ("pretrain x int", lambda: pl.pretrain_backbone(x8.long(), y8), ValueError, "x"),
    ("pretrain x 1-d", lambda: pl.pretrain_backbone(x8[:, 0], y8), ValueError, "x"),
    ("pretrain x NaN", lambda: pl.pretrain_backbone(x8 * math.nan, y8), ValueError, "x"),
    ("pretrain x empty", lambda: pl.pretrain_backbone(x8[:0], y8[:0]), ValueError, "x"),
    ("pretrain cfg dict", lambda: pl.pretrain_backbone(x8, y8, {"steps": 1}), TypeError, "cfg"),
    ("pretrain hidden=0", lambda: pl.pretrain_backbone(x8, y8, hidden=0), ValueError, "hidden"),
    ("average_accuracy > 1", lambda: pl.average_accuracy(np.array([[1.2]])), ValueError, "R"),
    ("average_accuracy < 0", lambda: pl.average_accuracy(np.array([[-0.1]])), ValueError, "R"),
    ("average_accuracy NaN seen", lambda: pl.average_accuracy(np.array([[np.nan]])), ValueError, "R"),
    ("average_accuracy inf", lambda: pl.average_accuracy(np.array([[np.inf]])), ValueError, "R"),
    ("average_accuracy 1-d", lambda: pl.average_accuracy(np.array([0.5])), ValueError, "R"),
    ("average_accuracy empty", lambda: pl.average_accuracy(np.zeros((0, 0))), ValueError, "R"),
    ("average_accuracy strings", lambda: pl.average_accuracy([["a"]]), TypeError, "R"),
    ("backward_transfer > 1", lambda: pl.backward_transfer(R_ok * 2), ValueError, "R"),
    ("backward_transfer not square", lambda: pl.backward_transfer(np.zeros((2, 3))), ValueError, "R"),
    (
        "run_stream backbone",
        lambda: pl.run_stream(1, stream, lambda m: _pm(), TrainConfig()),
        TypeError,
        "backbone",
    ),
    (
        "run_stream stream",
        lambda: pl.run_stream(MLP(), [1], lambda m: _pm(), TrainConfig()),
        TypeError,
        "stream",
    ),
    ("run_stream make", lambda: pl.run_stream(MLP(), stream, 3, TrainConfig()), TypeError, "make"),
    ("run_stream cfg", lambda: pl.run_stream(MLP(), stream, lambda m: _pm(), None), TypeError, "cfg"),
    (
        "run_stream make returns",
        lambda: pl.run_stream(MLP(), stream, lambda m: m, TrainConfig(steps=1)),
        TypeError,
        "make",
    ),
]


def _pm_open():
    pm = _pm()
    pm.begin_task()
    return pm


@pytest.mark.parametrize(("label", "call", "exc", "name"), CASES, ids=[c[0] for c in CASES])
def test_invalid_call_is_a_clear_error(label, call, exc, name):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value).strip("'\"")
    assert "\n" not in msg, msg
    assert msg.startswith(name), f"{label}: message {msg!r} does not start with the argument {name!r}"
    # raised from this package (or the core's shared validators), not deep inside torch or re
    tb = info.traceback
    assert any("paperworks" in str(entry.path) for entry in tb[-2:]), f"{label}: raised at {tb[-1].path}"


def test_every_export_is_covered_by_the_battery():
    covered = " ".join(c[0] for c in CASES)
    skip = {"ALL_LINEAR", "ContinualAdapter", "ContinualStream", "Task", "StreamResult", "to_peft_model"}
    missing = [n for n in pl.__all__ if n not in skip and n not in covered]
    # names are covered through their labels (e.g. "merge" covers merge_lowrank)
    aliases = {
        "merge_lowrank": "merge",
        "load_peft_state_dict": "load scaling",
        "pretrain_backbone": "pretrain",
    }
    missing = [n for n in missing if aliases.get(n, n) not in covered]
    assert not missing, missing
