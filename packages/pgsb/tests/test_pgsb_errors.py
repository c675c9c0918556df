"""A battery of invalid calls on every exported function: each a one-line error from paperworks' own code
(the package or the core's shared validators) that names the argument."""

import traceback

import pytest
import torch

from paperworks.pgsb import (
    LoRAAdapter,
    MergedLoRA,
    PGSBConfig,
    adapters_from_peft_state_dict,
    adapters_to_peft_state_dict,
    dare_merge,
    joint_svd,
    knots_merge,
    merge,
    merge_layer,
    null_membership_threshold,
    null_overlap_threshold,
    pgsb_merge,
    shared_basis,
    task_arithmetic_merge,
    ties_merge,
    truncate_factors,
)

NAN, INF = float("nan"), float("inf")


def ad(d_out=6, d_in=5, r=2, seed=0, alpha=4.0):
    g = torch.Generator().manual_seed(seed)
    return LoRAAdapter(torch.randn(r, d_in, generator=g), torch.randn(d_out, r, generator=g), alpha=alpha)


def W(d_out=6, d_in=5, dtype=torch.float32):
    return torch.zeros(d_out, d_in, dtype=dtype)


def D(K=2):
    return torch.randn(K, 3, 4, generator=torch.Generator().manual_seed(0))


def with_nan(t):
    t = t.clone()
    t.view(-1)[0] = NAN
    return t


A_OK, B_OK = torch.randn(2, 5), torch.randn(6, 2)
SD = {"base_model.model.l.lora_A.weight": A_OK, "base_model.model.l.lora_B.weight": B_OK}
BASE = {"l": W()}
TASKS = [{"l": ad(seed=0)}, {"l": ad(seed=1)}]

CASES = {
    # LoRAAdapter
    "adapter A not a tensor": (lambda: LoRAAdapter([[1.0]], B_OK), TypeError, "A: expected a torch.Tensor"),
    "adapter A 1-d": (lambda: LoRAAdapter(torch.randn(5), B_OK), ValueError, "A: expected a 2-D"),
    "adapter A int": (
        lambda: LoRAAdapter(torch.ones(2, 5, dtype=torch.int64), B_OK),
        TypeError,
        "A: .*floating",
    ),
    "adapter A NaN": (lambda: LoRAAdapter(with_nan(A_OK), B_OK), ValueError, "A: contains NaN"),
    "adapter B inf": (lambda: LoRAAdapter(A_OK, B_OK * INF), ValueError, "B: contains NaN or inf"),
    "adapter rank 0": (
        lambda: LoRAAdapter(torch.randn(0, 5), torch.randn(6, 0)),
        ValueError,
        "A: expected a non-empty",
    ),
    "adapter rank mismatch": (
        lambda: LoRAAdapter(A_OK, torch.randn(6, 3)),
        ValueError,
        "A, B: rank mismatch",
    ),
    "adapter dtypes differ": (
        lambda: LoRAAdapter(A_OK.double(), B_OK),
        TypeError,
        "A, B: expected one dtype",
    ),
    "adapter alpha 0": (
        lambda: LoRAAdapter(A_OK, B_OK, alpha=0.0),
        ValueError,
        "alpha: expected a number > 0",
    ),
    "adapter alpha NaN": (lambda: LoRAAdapter(A_OK, B_OK, alpha=NAN), ValueError, "alpha: expected a finite"),
    "adapter alpha str": (lambda: LoRAAdapter(A_OK, B_OK, alpha="4"), TypeError, "alpha: expected a real"),
    "adapter rslora str": (
        lambda: LoRAAdapter(A_OK, B_OK, use_rslora="yes"),
        TypeError,
        "use_rslora: expected",
    ),
    # peft state dicts
    "sd empty": (
        lambda: adapters_from_peft_state_dict({}, alpha=4.0),
        ValueError,
        "state_dict: expected a non-empty",
    ),
    "sd alpha None": (
        lambda: adapters_from_peft_state_dict(SD, alpha=None),
        TypeError,
        "alpha: expected a real",
    ),
    "sd alpha -1": (
        lambda: adapters_from_peft_state_dict(SD, alpha=-1.0),
        ValueError,
        "alpha: expected a number > 0",
    ),
    "sd foreign key": (
        lambda: adapters_from_peft_state_dict({**SD, "base_model.model.l.bias": torch.zeros(6)}, alpha=4.0),
        ValueError,
        "not a LoRA lora_A/lora_B weight",
    ),
    "sd DoRA": (
        lambda: adapters_from_peft_state_dict(
            {**SD, "base_model.model.l.lora_magnitude_vector": B_OK}, alpha=4.0
        ),
        ValueError,
        "DoRA",
    ),
    "sd embedding": (
        lambda: adapters_from_peft_state_dict({"base_model.model.e.lora_embedding_A": A_OK}, alpha=4.0),
        ValueError,
        "embedding",
    ),
    "sd only A": (
        lambda: adapters_from_peft_state_dict({"base_model.model.l.lora_A.weight": A_OK}, alpha=4.0),
        ValueError,
        "only one of lora_A / lora_B",
    ),
    "sd conv A": (
        lambda: adapters_from_peft_state_dict(
            {
                "base_model.model.l.lora_A.weight": torch.randn(2, 5, 1, 1),
                "base_model.model.l.lora_B.weight": B_OK,
            },
            alpha=4.0,
        ),
        ValueError,
        r"state_dict\['l' lora_A\]: expected a 2-D",
    ),
    "to sd empty": (lambda: adapters_to_peft_state_dict({}), ValueError, "adapters: expected a non-empty"),
    "to sd not adapter": (
        lambda: adapters_to_peft_state_dict({"l": (A_OK, B_OK)}),
        TypeError,
        r"adapters\['l'\]",
    ),
    "save not a path": (
        lambda: MergedLoRA({"l": ad()}, 2).save_pretrained(3),
        TypeError,
        "folder: expected a path",
    ),
    # stage 1
    "basis empty": (lambda: shared_basis([]), ValueError, "K = 0"),
    "basis not a sequence": (lambda: shared_basis(ad()), TypeError, "adapters: expected a sequence"),
    "basis not adapters": (lambda: shared_basis([A_OK]), TypeError, r"adapters\[0\]: expected a LoRAAdapter"),
    "basis shapes differ": (
        lambda: shared_basis([ad(), ad(d_in=4)]),
        ValueError,
        r"adapters\[1\]: expected layer",
    ),
    "basis significance 0": (
        lambda: shared_basis(TASKS[0].values().__iter__().__next__() and [ad()], significance=0.0),
        ValueError,
        "significance",
    ),
    "basis significance 1": (lambda: shared_basis([ad()], significance=1.0), ValueError, "significance"),
    "basis significance NaN": (lambda: shared_basis([ad()], significance=NAN), ValueError, "significance"),
    "basis support 1.5": (
        lambda: shared_basis([ad()], support_threshold=1.5),
        ValueError,
        "support_threshold",
    ),
    "basis support 0": (lambda: shared_basis([ad()], support_threshold=0.0), ValueError, "support_threshold"),
    "basis n_null 5": (lambda: shared_basis([ad()], n_null=5), ValueError, "n_null"),
    "basis n_null float": (lambda: shared_basis([ad()], n_null=100.0), TypeError, "n_null"),
    "basis seed -1": (lambda: shared_basis([ad()], seed=-1), ValueError, "seed"),
    "reconstruct -1": (
        lambda: shared_basis([ad(), ad(seed=1)]).reconstruct(-1),
        ValueError,
        "k: expected an int >= 0",
    ),
    "reconstruct K": (
        lambda: shared_basis([ad(), ad(seed=1)]).reconstruct(2),
        ValueError,
        "k: expected an int",
    ),
    "reconstruct float": (lambda: shared_basis([ad()]).reconstruct(0.0), TypeError, "k: expected an int"),
    "reconstruct bool": (lambda: shared_basis([ad()]).reconstruct(True), TypeError, "k: expected an int"),
    "null d_out 0": (lambda: null_overlap_threshold(0, [1]), ValueError, "d_out"),
    "null ranks empty": (lambda: null_overlap_threshold(8, []), ValueError, "ranks"),
    "null rank > d": (lambda: null_overlap_threshold(8, [9]), ValueError, r"ranks\[0\]"),
    "null rank -1": (lambda: null_overlap_threshold(8, [-1]), ValueError, r"ranks\[0\]"),
    "null significance 2": (
        lambda: null_overlap_threshold(8, [1, 1], significance=2.0),
        ValueError,
        "significance",
    ),
    "membership rank 0": (lambda: null_membership_threshold(8, 0), ValueError, "rank"),
    "membership rank > d": (lambda: null_membership_threshold(8, 9), ValueError, "rank"),
    # PGSB
    "config significance 0": (lambda: PGSBConfig(significance=0.0), ValueError, "significance"),
    "config support 2.0": (lambda: PGSBConfig(support_threshold=2.0), ValueError, "support_threshold"),
    "config support 1.5": (lambda: PGSBConfig(support_threshold=1.5), ValueError, "support_threshold"),
    "config min_support 1": (
        lambda: PGSBConfig(min_support=1),
        ValueError,
        "min_support: expected an int >= 2",
    ),
    "config min_support 1.5": (
        lambda: PGSBConfig(min_support=1.5),
        TypeError,
        "min_support: expected an int",
    ),
    "config lam 0": (lambda: PGSBConfig(lam=0.0), ValueError, "lam: expected a number > 0"),
    "config lam NaN": (lambda: PGSBConfig(lam=NAN), ValueError, "lam: expected a finite"),
    "config lam inf": (lambda: PGSBConfig(lam=INF), ValueError, "lam: expected a finite"),
    "config n_null 0": (lambda: PGSBConfig(n_null=0), ValueError, "n_null"),
    "config null_seed -1": (lambda: PGSBConfig(null_seed=-1), ValueError, "null_seed"),
    "config flag str": (lambda: PGSBConfig(use_pretrained="no"), TypeError, "use_pretrained"),
    "pgsb W0 int64": (lambda: pgsb_merge(W(dtype=torch.int64), [ad()]), TypeError, "W0: .*floating"),
    "pgsb W0 1-d": (lambda: pgsb_merge(torch.zeros(6), [ad()]), ValueError, "W0: expected a 2-D"),
    "pgsb W0 NaN": (lambda: pgsb_merge(with_nan(W()), [ad()]), ValueError, "W0: contains NaN"),
    "pgsb W0 shape": (lambda: pgsb_merge(W(6, 4), [ad()]), ValueError, r"W0: expected shape \(6, 5\)"),
    "pgsb config type": (
        lambda: pgsb_merge(W(), [ad()], {"lam": 1.0}),
        TypeError,
        "config: expected a PGSBConfig",
    ),
    "pgsb no adapters": (lambda: pgsb_merge(W(), []), ValueError, "K = 0"),
    # baselines
    "ta lam NaN": (lambda: task_arithmetic_merge(D(), lam=NAN), ValueError, "lam: expected a finite"),
    "ta lam inf": (lambda: task_arithmetic_merge(D(), lam=INF), ValueError, "lam: expected a finite"),
    "ta lam -1": (lambda: task_arithmetic_merge(D(), lam=-1.0), ValueError, "lam: expected a number > 0"),
    "ta lam str": (lambda: task_arithmetic_merge(D(), lam="1"), TypeError, "lam: expected a real"),
    "ta deltas 2-d": (
        lambda: task_arithmetic_merge(torch.zeros(3, 4)),
        ValueError,
        r"deltas: expected .*\(K, d_out",
    ),
    "ta deltas int": (
        lambda: task_arithmetic_merge(torch.zeros(2, 3, 4, dtype=torch.int64)),
        TypeError,
        "deltas",
    ),
    "ta deltas NaN": (lambda: task_arithmetic_merge(with_nan(D())), ValueError, "deltas: contains NaN"),
    "ta deltas K=0": (lambda: task_arithmetic_merge(torch.zeros(0, 3, 4)), ValueError, "K = 0"),
    "ta deltas list": (
        lambda: task_arithmetic_merge([[[1.0]]]),
        TypeError,
        "deltas: expected a torch.Tensor",
    ),
    "ties lam NaN": (lambda: ties_merge(D(), lam=NAN), ValueError, "lam"),
    "ties lam inf": (lambda: ties_merge(D(), lam=INF), ValueError, "lam"),
    "ties density 0": (lambda: ties_merge(D(), density=0.0), ValueError, "density"),
    "ties density 1.5": (lambda: ties_merge(D(), density=1.5), ValueError, "density"),
    "ties density NaN": (lambda: ties_merge(D(), density=NAN), ValueError, "density"),
    "dare combine": (lambda: dare_merge(D(), combine="mean"), ValueError, "combine: expected one of"),
    "dare density 0": (lambda: dare_merge(D(), density=0.0), ValueError, "density"),
    "dare generator": (lambda: dare_merge(D(), generator=3), TypeError, "generator"),
    "dare lam inf": (lambda: dare_merge(D(), lam=INF), ValueError, "lam"),
    "knots combine": (lambda: knots_merge([ad()], combine="linear"), ValueError, "combine"),
    "knots density": (lambda: knots_merge([ad()], density=2.0), ValueError, "density"),
    "knots lam": (lambda: knots_merge([ad()], lam=-1.0), ValueError, "lam"),
    "knots empty": (lambda: knots_merge([]), ValueError, "K = 0"),
    "joint svd not adapters": (lambda: joint_svd([A_OK]), TypeError, r"adapters\[0\]"),
    # merge / merge_layer / truncate_factors
    "merge method": (lambda: merge(BASE, TASKS, "magic"), ValueError, "method: expected one of"),
    "merge output": (lambda: merge(BASE, TASKS, output="peft"), ValueError, "output: expected one of"),
    "merge rank 0": (
        lambda: merge(BASE, TASKS, output="lora", rank=0),
        ValueError,
        "rank: expected an int >= 1",
    ),
    "merge rank float": (
        lambda: merge(BASE, TASKS, output="lora", rank=1.5),
        TypeError,
        "rank: expected an int",
    ),
    "merge rank w/o lora": (lambda: merge(BASE, TASKS, rank=2), ValueError, "rank: only used"),
    "merge dense w/o rank": (lambda: merge(BASE, TASKS, "ties", output="lora"), ValueError, "rank: required"),
    "merge adapters mapping": (
        lambda: merge(BASE, TASKS[0]),
        ValueError,
        "adapters: expected a non-empty sequence",
    ),
    "merge adapters empty": (lambda: merge(BASE, []), ValueError, "K >= 1"),
    "merge adapter empty": (
        lambda: merge(BASE, [{}]),
        ValueError,
        r"adapters\[0\]: expected a non-empty mapping",
    ),
    "merge base int": (lambda: merge(3, TASKS), TypeError, "base: expected an nn.Module or a mapping"),
    "merge base int64": (
        lambda: merge({"l": W(dtype=torch.int64)}, TASKS),
        TypeError,
        r"base\['l'\]: .*floating",
    ),
    "merge base NaN": (lambda: merge({"l": with_nan(W())}, TASKS), ValueError, r"base\['l'\]: contains NaN"),
    "merge base empty": (lambda: merge({}, TASKS), ValueError, "base: expected a non-empty mapping"),
    "merge unknown option": (
        lambda: merge(BASE, TASKS, temperature=1.0),
        ValueError,
        "not understood by method",
    ),
    "merge option of other": (
        lambda: merge(BASE, TASKS, "task_arithmetic", density=0.5),
        ValueError,
        "not understood",
    ),
    "merge support 1.5": (lambda: merge(BASE, TASKS, support_threshold=1.5), ValueError, "support_threshold"),
    "merge min_support 1": (lambda: merge(BASE, TASKS, min_support=1), ValueError, "min_support"),
    "merge lam NaN": (lambda: merge(BASE, TASKS, "task_arithmetic", lam=NAN), ValueError, "lam"),
    "merge lam -1": (lambda: merge(BASE, TASKS, "ties", lam=-1.0), ValueError, "lam"),
    "merge tuple w/o alpha": (
        lambda: merge(BASE, [{"l": (A_OK, B_OK)}]),
        ValueError,
        "lora_alpha= and use_rslora=",
    ),
    "merge sd w/o alpha": (lambda: merge(BASE, [SD]), ValueError, "lora_alpha= and use_rslora="),
    "merge alpha length": (
        lambda: merge(BASE, [SD, SD], lora_alpha=[4.0], use_rslora=False),
        ValueError,
        "lora_alpha: expected one value or 2",
    ),
    "merge alpha -1": (
        lambda: merge(BASE, [SD], lora_alpha=-1.0, use_rslora=False),
        ValueError,
        r"lora_alpha\[0\]",
    ),
    "merge rslora str": (
        lambda: merge(BASE, [SD], lora_alpha=4.0, use_rslora="no"),
        TypeError,
        r"use_rslora\[0\]",
    ),
    "merge alpha unused": (lambda: merge(BASE, TASKS, lora_alpha=4.0), ValueError, "lora_alpha: given, but"),
    "merge bad entry": (lambda: merge(BASE, [{"l": A_OK}]), TypeError, r"adapters\[0\]\['l'\]"),
    "merge layer absent": (
        lambda: merge(BASE, [{"m": ad()}]),
        KeyError,
        "'m' is not a linear or Conv1D layer",
    ),
    "merge shape": (
        lambda: merge(BASE, [{"l": ad(d_in=4)}]),
        ValueError,
        r"adapters\[0\]\['l'\]: expected shape",
    ),
    "layer W0 int64": (lambda: merge_layer(W(dtype=torch.int64), [ad()]), TypeError, "W0: .*floating"),
    "layer W0 shape": (lambda: merge_layer(W(5, 5), [ad()]), ValueError, "W0: expected shape"),
    "layer method": (lambda: merge_layer(W(), [ad()], "mean"), ValueError, "method: expected one of"),
    "layer option": (lambda: merge_layer(W(), [ad()], "ties", lam=1.0, k=3), ValueError, "not understood"),
    "layer empty": (lambda: merge_layer(W(), []), ValueError, "K = 0"),
    "truncate rank 0": (lambda: truncate_factors(B_OK, A_OK, 0), ValueError, "rank"),
    "truncate rank float": (lambda: truncate_factors(B_OK, A_OK, 2.0), TypeError, "rank"),
}


def _raised_in_paperworks(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return "paperworks" in frames[-1].filename and "tests" not in frames[-1].filename.split("paperworks")[-1]


@pytest.mark.parametrize("case", sorted(CASES))
def test_invalid_call_gets_a_clear_error(case):
    call, exc, match = CASES[case]
    with pytest.raises(exc, match=match) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    assert _raised_in_paperworks(info.value), traceback.format_tb(info.value.__traceback__)[-1]


def test_peft_interop_bad_input():
    pytest.importorskip("peft")
    from torch import nn

    from paperworks.pgsb.peft_interop import (
        from_peft_model,
        peft_merge,
        peft_weighted_merge,
        save_merged,
        to_peft_model,
    )

    base = nn.Sequential(nn.Linear(5, 6))
    tasks = [{"0": ad()}, {"0": ad(seed=1)}]
    pm = to_peft_model(base, tasks)
    cases = [
        (lambda: to_peft_model({"0": W()}, tasks), TypeError, "base: expected an nn.Module"),
        (lambda: to_peft_model(base, []), ValueError, "adapters: expected a non-empty"),
        (lambda: to_peft_model(base, [{"0": (A_OK, B_OK)}]), TypeError, r"adapters\[0\]\['0'\]"),
        (lambda: from_peft_model(base), TypeError, "model: expected a peft PeftModel"),
        (lambda: from_peft_model(pm, "task9"), ValueError, "adapter_name: expected one of"),
        (lambda: peft_weighted_merge(pm, ["task0"], "mean"), ValueError, "combination_type"),
        (lambda: peft_weighted_merge(pm, ["task7"]), ValueError, "adapter_names"),
        (
            lambda: peft_weighted_merge(pm, ["task0", "task1"], weights=[1.0]),
            ValueError,
            "weights: expected 2",
        ),
        (
            lambda: peft_weighted_merge(pm, ["task0", "task1"], weights=[1.0, NAN]),
            ValueError,
            "weights: expected finite",
        ),
        (lambda: peft_weighted_merge(pm, ["task0", "task1"], density=0.0), ValueError, "density"),
        (lambda: peft_merge(base, tasks, "magic"), ValueError, "combination_type"),
        (lambda: save_merged({"0": ad()}, "x"), TypeError, "merged: expected a MergedLoRA"),
    ]
    for call, exc, match in cases:
        with pytest.raises(exc, match=match) as info:
            call()
        assert _raised_in_paperworks(info.value), traceback.format_tb(info.value.__traceback__)[-1]
