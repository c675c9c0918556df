"""Headline reproduction of SLIENet (no public text): accuracy vs vanilla/SDN/ZTW on three backbones, and
full-size ResNet-56 latency at batch 1.

Task (issue 36: hard enough that an ensemble or an overthinking effect can show). Per seed, a generated
40-class 3 x 16 x 16 image set (:func:`paperworks.slienet.data.prototype_images`: 8 groups of 5
classes sharing half their prototype, pixel noise, contrasts from 0.2 to 1.2 so that some images are
nearly signal-free, shifts of up to 3 pixels), with 15 training images per class and large calibration
and test sets; the task and the budget were fixed from a pilot of vanilla ResNet alone (see
:class:`SlieConfig`).

Models. Per backbone (laptop widths of the paper's three: the CIFAR ResNet at depth 20, VGG-16-BN at
1/8 width, MobileNetV1 at 1/4 width; 6 ICs each) three copies start from the same initialisation, see
the same batches and get the same budget: vanilla (final CE only), SDN (IC CE with the SDN weight
ramp) and SLIE (SDN ramp + light self-distillation). On the calibration set: SLIE5's exhaustive subset
search over the first 5 of 6 ICs, SDN's exit threshold, and ZTW (cascading heads trained on the frozen
vanilla backbone, its geometric ensemble fitted, its threshold). Test accuracy of each deployment.

Latency (issue 36: the laptop nets are too small for latency to mean much). A full-size ResNet-56
(width 16, 32 x 32 inputs, 100 classes) with seeded random weights (latency does not depend on the
weights; batch-norm statistics set from random inputs so activations have a trained net's scale)
deploys this seed's structure: SLIE5 truncated after the deepest IC of the subset the search chose on
the laptop ResNet, and SDN's per-sample exit replaying the exits the laptop SDN took on the test
images (:meth:`DynamicExitRunner.replay`: the same segments and confidence read-back, the decision
taken from the recording). Vanilla and SLIE5 run as ONNX Runtime graphs (all graph optimisations,
FP32, one thread), SDN as a chain of per-segment ONNX Runtime sessions with a branch after each exit;
batch size 1, timed with the core bench harness (:func:`paperworks.core.bench.compare`, one call per
timing): a vanilla pilot sets the deadline to 1.5 x its p99, then rounds in which every variant runs
once on the same (upsampled test) image, in a seeded random order. The ratios are the harness's
paired ratios (median over rounds of the per-round time ratio). The quick run times the eager torch
modules instead. The other two backbones at full size, eager torch and ``torch.compile`` /
AOTInductor are in the benchmark (``benchmarks/bench_slienet.py``).
"""

from __future__ import annotations

import copy
import itertools
import math
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from torch.nn import functional as F

from paperworks.core import (
    Claim,
    Experiment,
    MetricSummary,
    Paper,
    Progress,
    Report,
    choose_device,
    optional_pyplot,
    t_interval,
    torch_threads,
    validate,
)
from paperworks.core.bench import bootstrap_ratio_interval, compare

from .backbones import MultiExitNet, count_flops, mobilenet_v1, resnet56, vgg16
from .baselines import DynamicExitRunner, choose_threshold, dynamic_exit, exit_segments, train_ztw
from .calibration import calibrate_subset
from .data import prototype_images, split_indices, standardize
from .deploy import OnnxPlan, SliePlan, VanillaPlan, export_onnx, export_onnx_module
from .latency import deadline_misses, latency_stats
from .training import TrainConfig, predict_all, train_multi_exit

__all__ = ["QUICK", "SlieConfig", "SlieExperiment", "full_size_model", "run_backbone"]

BACKBONES = ("resnet", "vgg", "mobilenet")
BACKBONE_LABELS = {
    "resnet": "ResNet-20 (w 8)",
    "vgg": "VGG-16-BN (w 1/8)",
    "mobilenet": "MobileNetV1 (w 1/4)",
}
METHODS = ("vanilla", "slie5", "sdn_dynamic", "sdn_slie5", "ztw_dynamic", "slie_final")
LATENCY_ENGINES = ("onnx", "eager")
NUM_ICS = 6


@dataclass(frozen=True)
class SlieConfig:
    """Settings of one reproduction run; the defaults are the full run's, :data:`QUICK` the quick one's.

    Data (:func:`~paperworks.slienet.data.prototype_images`): ``n_classes`` classes in groups of 5
    sharing ``coarse_share`` of their prototype, ``image_size`` pixels, pixel ``noise``, contrast
    uniform on ``contrast``, shifts up to ``max_shift``; per class ``train_per_class`` /
    ``cal_per_class`` / ``test_per_class`` images. The task and the budget were fixed before any SLIE,
    SDN or ZTW number was computed on it, from a pilot of vanilla ResNet alone (seed 0, calibration
    accuracy, each budget a full cosine run; target 60-75 %, issue 36):

    ==================================================  =========  =========  =========
    task (vanilla ResNet-20, batch 32)                  12 epochs  24 epochs  36 epochs
    ==================================================  =========  =========  =========
    100 classes x 10, noise 1.2, contrast 0.7-1.3       60.8 (8)   88.1 (16)  91.6 (24)
    100 classes x 8, noise 1.6, contrast 0.7-1.3        41.9 (10)  72.0 (20)  79.4 (30)
    100 classes x 8, noise 2.0, contrast 0.7-1.3        22.3 (10)  48.9 (20)  63.2 (30)
    40 classes x 15, noise 1.8, contrast 0.7-1.3        50.2 (10)  84.2 (20)  91.2 (30)
    20 classes x 30, noise 2.2, contrast 0.7-1.3        87.0       93.5       95.0
    20 classes x 30, noise 2.8, contrast 0.7-1.3        77.5       85.5       92.0
    20 classes x 30, noise 1.5, contrast 0.0-1.0        46.0       55.5       65.0
    40 classes x 15, noise 1.2, contrast 0.0-1.0        37.0       56.2       60.8
    **40 classes x 15, noise 1.2, contrast 0.2-1.2**    57.2       **75.8**   83.5
    ==================================================  =========  =========  =========

    (epochs in brackets where they differ). No configuration of this generator that sits at 60-75 %
    had flattened by the 24 epochs the 10-minute budget affords (3 backbones x 3 variants x 5 seeds on
    2 CPU cores); the chosen one is the hardest near the target band, and its vanilla curve is still
    rising at 24 epochs: every variant is trained to the same budget below its plateau.

    Models: ``backbones`` among ResNet (``resnet_blocks_per_stage`` 3: ResNet-20, ``resnet_width``),
    VGG-16-BN (``vgg_width``) and MobileNetV1 (``mobilenet_width``), 6 ICs each; SLIE at ``depth`` 5.
    Training: one budget for every variant (``epochs`` at ``batch_size``), fixed from vanilla
    ResNet's held-out learning curve; ZTW's heads train ``ztw_epochs``.

    Latency (full-size ResNet-56, width 16, at ``latency_image_size`` 32): ``latency_engine``
    ``"onnx"`` (ONNX Runtime, FP32, 1 thread) or ``"eager"`` (torch; the quick run); a ``pilot_calls``
    vanilla pilot (after ``pilot_warmup`` untimed calls) sets the deadline to ``deadline_factor`` times
    its p99; then, after ``latency_warmup`` untimed calls per variant, ``latency_rounds`` harness rounds
    of one single-sample call per variant, cycling over the first ``latency_samples`` test images.
    """

    n_classes: int = 40
    image_size: int = 16
    noise: float = 1.2
    contrast: tuple[float, float] = (0.2, 1.2)
    max_shift: int = 3
    coarse_share: float = 0.5
    train_per_class: int = 15
    cal_per_class: int = 10
    test_per_class: int = 30
    backbones: tuple[str, ...] = BACKBONES
    resnet_blocks_per_stage: int = 3
    resnet_width: int = 8
    vgg_width: float = 0.125
    mobilenet_width: float = 0.25
    depth: int = 5
    epochs: int = 24
    batch_size: int = 32
    ztw_epochs: int = 20
    latency_engine: str = "onnx"
    latency_image_size: int = 32
    deadline_factor: float = 1.5
    pilot_calls: int = 500
    pilot_warmup: int = 50
    latency_rounds: int = 2000
    latency_warmup: int = 20
    latency_samples: int = 256

    def __post_init__(self) -> None:
        validate.int_in_range(self.n_classes, "n_classes", 2)
        validate.int_in_range(self.image_size, "image_size", 8)
        validate.nonnegative_float(self.noise, "noise")
        validate.nonnegative_int(self.max_shift, "max_shift")
        validate.fraction(self.coarse_share, "coarse_share", open_high=True)
        if (
            isinstance(self.contrast, str)
            or not isinstance(self.contrast, tuple | list)
            or len(self.contrast) != 2
        ):
            raise ValueError(f"contrast: expected a pair (lo, hi), got {self.contrast!r}")
        lo, hi = (validate.nonnegative_float(c, "contrast") for c in self.contrast)
        if hi < lo:
            raise ValueError(f"contrast: expected lo <= hi, got {self.contrast!r}")
        object.__setattr__(self, "contrast", (lo, hi))
        for k in (
            "train_per_class",
            "cal_per_class",
            "test_per_class",
            "resnet_blocks_per_stage",
            "resnet_width",
            "epochs",
            "batch_size",
            "ztw_epochs",
            "latency_samples",
        ):
            validate.positive_int(getattr(self, k), k)
        if self.cal_per_class * self.n_classes < self.n_classes:
            raise ValueError("cal_per_class: expected at least one calibration image per class")
        validate.positive_float(self.vgg_width, "vgg_width")
        validate.positive_float(self.mobilenet_width, "mobilenet_width")
        validate.int_in_range(self.depth, "depth", 1, NUM_ICS)
        validate.int_in_range(self.latency_image_size, "latency_image_size", 8)
        if (
            isinstance(self.backbones, str)
            or not isinstance(self.backbones, tuple | list)
            or not self.backbones
        ):
            raise ValueError(
                f"backbones: expected a non-empty tuple drawn from {BACKBONES}, got {self.backbones!r}"
            )
        bbs = tuple(validate.one_of(b, "backbones", BACKBONES) for b in self.backbones)
        if "resnet" not in bbs or len(set(bbs)) != len(bbs):
            raise ValueError(f"backbones: expected distinct names including 'resnet', got {bbs}")
        object.__setattr__(self, "backbones", tuple(b for b in BACKBONES if b in bbs))
        validate.one_of(self.latency_engine, "latency_engine", LATENCY_ENGINES)
        validate.positive_float(self.deadline_factor, "deadline_factor")
        for k in ("pilot_calls", "latency_rounds"):  # the harness needs >= 2 rounds
            validate.int_in_range(getattr(self, k), k, 2)
        for k in ("pilot_warmup", "latency_warmup"):
            validate.nonnegative_int(getattr(self, k), k)


#: The quick run (a smoke test, not a result): 20 classes, few images, 2 epochs, eager timing with a
#: 50-call pilot and 100 rounds.
QUICK = SlieConfig(
    n_classes=20,
    train_per_class=8,
    cal_per_class=5,
    test_per_class=5,
    epochs=2,
    ztw_epochs=2,
    latency_engine="eager",
    pilot_calls=50,
    pilot_warmup=5,
    latency_rounds=100,
    latency_warmup=5,
    latency_samples=32,
)
_FULL = SlieConfig()


def _build(name: str, n_classes: int, rc: SlieConfig) -> MultiExitNet:
    if name == "resnet":
        return resnet56(
            n_classes,
            width=rc.resnet_width,
            blocks_per_stage=rc.resnet_blocks_per_stage,
            image_size=rc.image_size,
            num_ics=NUM_ICS,
        )
    if name == "vgg":
        return vgg16(n_classes, width=rc.vgg_width, image_size=rc.image_size, num_ics=NUM_ICS)
    return mobilenet_v1(n_classes, width=rc.mobilenet_width, image_size=rc.image_size, num_ics=NUM_ICS)


def full_size_model(
    name: str = "resnet", num_classes: int = 100, *, image_size: int = 32, seed: int = 0
) -> MultiExitNet:
    """A full-size backbone of the paper with seeded random weights, for latency: ``"resnet"``
    (ResNet-56: 27 blocks of width 16/32/64, ICs after blocks 5, 9, ..., 25), ``"vgg"`` (VGG-16-BN at
    full width) or ``"mobilenet"`` (MobileNetV1, width 1), 6 ICs each. Batch-norm statistics are set
    from random inputs (train-mode passes over 4 batches of 64 N(0, 1) images), so that activations
    have a trained net's scale; returned in eval mode on the CPU."""
    validate.one_of(name, "name", BACKBONES)
    g = torch.Generator().manual_seed(int(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        if name == "resnet":
            net = resnet56(num_classes, width=16, image_size=image_size)
        elif name == "vgg":
            net = vgg16(num_classes, width=1.0, image_size=image_size)
        else:
            net = mobilenet_v1(num_classes, width=1.0, image_size=image_size)
    with torch.no_grad(), torch_threads(1):
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.reset_running_stats()
                m.momentum = None  # a cumulative average over the passes
        net.train()
        for _ in range(4):
            net(torch.randn(64, 3, image_size, image_size, generator=g))
    return net.eval()


def _load(seed: int, rc: SlieConfig) -> tuple[np.ndarray, ...]:
    per = rc.train_per_class + rc.cal_per_class + rc.test_per_class
    x, y = prototype_images(
        rc.n_classes,
        per,
        size=rc.image_size,
        noise=rc.noise,
        max_shift=rc.max_shift,
        coarse_share=rc.coarse_share,
        contrast=rc.contrast,
        seed=1000 + seed,
    )
    fractions = (rc.train_per_class / per, rc.cal_per_class / per, rc.test_per_class / per)
    tr, ca, te = split_indices(y, fractions, seed)
    xtr, xca, xte = standardize(x[tr], x[ca], x[te])
    return xtr, y[tr], xca, y[ca], xte, y[te]


def _cycling(fn: Callable, inputs: Sequence) -> Callable[[], object]:
    """``fn`` on ``inputs[0], inputs[1], ...`` (and round again), one per call: a harness side.

    Every side gets its own cycle over the same inputs and the harness calls each side once per round
    (after the same number of warm-up calls), so in every round all variants see the same image.
    """
    it = itertools.cycle(inputs)
    return lambda: fn(next(it))


def _acc(probs: torch.Tensor, y: np.ndarray) -> float:
    return float((probs.argmax(-1).numpy() == y).mean())


def _segment_costs(model: MultiExitNet) -> list[float]:
    """Cumulative multiply-adds (per sample) of reaching each exit of ``model`` (its segments)."""
    model = copy.deepcopy(model).cpu().eval()
    x = torch.zeros(1, model.in_channels, model.image_size, model.image_size)
    costs, h = [], x
    with torch.no_grad():
        for seg in exit_segments(model):
            seg.eval()
            costs.append(count_flops(seg, h))
            h = seg(h)[0]
    return list(np.cumsum(costs).astype(float))


def _ci(values: Sequence[float]) -> tuple[float, float, float]:
    v = [float(x) for x in values]
    if len(v) < 2:
        return v[0], math.nan, math.nan
    return t_interval(v)


def run_backbone(
    name: str,
    data: tuple[np.ndarray, ...],
    rc: SlieConfig,
    *,
    seed: int,
    device: str = "cpu",
    progress: Progress | None = None,
) -> tuple[dict[str, float], dict[str, object]]:
    """One backbone of one seed: train vanilla / SDN / SLIE from one initialisation, calibrate SLIE5, SDN
    and ZTW on the calibration set, score every deployment on the test set.

    ``data``: ``(x_train, y_train, x_cal, y_cal, x_test, y_test)``. Returns the metrics (unprefixed)
    and the artefacts a latency run needs: ``models`` (CPU copies, eval mode), ``subset``,
    ``sdn_threshold``, ``sdn_exits`` (test images' exits), ``ztw`` and ``ztw_threshold``, ``x``
    (the test images).
    """
    progress = progress or Progress(enabled=False)
    xtr, ytr, xca, yca, xte, yte = data
    yca_t = torch.as_tensor(yca)
    out: dict[str, float] = {}
    torch.manual_seed(seed)
    init = _build(name, rc.n_classes, rc).to(memory_format=torch.channels_last)  # faster on the CPU
    models = {}
    for mode in ("vanilla", "sdn", "slie"):
        progress.log(f"  {name}: training {mode} ({len(xtr)} images, {rc.epochs} epochs)")
        cfg = TrainConfig(mode=mode, epochs=rc.epochs, batch_size=rc.batch_size)
        models[mode] = train_multi_exit(copy.deepcopy(init).to(device), xtr, ytr, cfg, seed=seed)
    # SLIE: calibration search on held-out data, then the static plan
    _, ic_cal = predict_all(models["slie"], xca)
    t0 = time.perf_counter()
    sel = calibrate_subset(ic_cal, yca_t, rc.depth)
    out["calib_search_ms"] = (time.perf_counter() - t0) * 1e3
    fin_te, ic_te = predict_all(models["slie"], xte)
    cpu = {k: copy.deepcopy(m).cpu().eval() for k, m in models.items()}
    slie_plan = SliePlan(cpu["slie"], sel.subset, rc.depth).eval()
    with torch.no_grad():
        plan_probs = slie_plan(torch.as_tensor(xte[:64]))
    if not torch.allclose(plan_probs, ic_te[list(sel.subset), :64].mean(0), atol=1e-5):
        raise RuntimeError(f"{name}: the SLIE5 plan's output differs from the average of its ICs")
    acc = {"slie5": _acc(ic_te[list(sel.subset)].mean(0), yte), "slie_final": _acc(fin_te, yte)}
    for j in range(ic_te.shape[0]):
        out[f"ic{j + 1}_acc"] = _acc(ic_te[j], yte)
        out[f"ic{j + 1}_cost"] = float(models["slie"].ic_costs[j])
    van_final, _ = predict_all(models["vanilla"], xte)
    acc["vanilla"] = _acc(van_final, yte)
    # SDN: threshold calibrated on held-out data; SLIE's search applied to SDN's ICs (ablation)
    seg_cost = _segment_costs(cpu["sdn"])
    fin_ca_s, ic_ca_s = predict_all(models["sdn"], xca)
    thr = choose_threshold(torch.cat([ic_ca_s, fin_ca_s[None]]), yca_t, seg_cost)
    fin_te_s, ic_te_s = predict_all(models["sdn"], xte)
    sdn_probs, sdn_exit = dynamic_exit(torch.cat([ic_te_s, fin_te_s[None]]), thr)
    acc["sdn_dynamic"] = _acc(sdn_probs, yte)
    sel_sdn = calibrate_subset(ic_ca_s, yca_t, rc.depth)
    acc["sdn_slie5"] = _acc(ic_te_s[list(sel_sdn.subset)].mean(0), yte)
    # ZTW on the frozen vanilla backbone
    progress.log(f"  {name}: ZTW heads on the frozen vanilla backbone")
    ztw = train_ztw(copy.deepcopy(models["vanilla"]), xtr, ytr, xca, yca, epochs=rc.ztw_epochs, seed=seed)
    with torch.no_grad():
        m_ca = _batched(ztw, xca, device)
        m_te = _batched(ztw, xte, device)
    thr_z = choose_threshold(m_ca, yca_t, seg_cost)
    z_probs, z_exit = dynamic_exit(m_te, thr_z)
    acc["ztw_dynamic"] = _acc(z_probs, yte)
    for m in METHODS:
        out[f"acc_{m}"] = acc[m]
    x1 = torch.as_tensor(xte[:1])
    van_flops = count_flops(VanillaPlan(cpu["vanilla"]).eval(), x1)
    out["flops_slie5_rel"] = count_flops(slie_plan, x1) / van_flops
    costs = torch.tensor(seg_cost)
    out["flops_sdn_rel"] = float(costs[sdn_exit].mean()) / van_flops
    out["flops_ztw_rel"] = float(costs[z_exit].mean()) / van_flops
    out["slie_subset_size"] = float(len(sel.subset))
    out["slie_deepest_ic"] = float(sel.subset[-1] + 1)
    out["sdn_threshold"] = thr
    out["sdn_mean_exit"] = float(sdn_exit.double().mean()) + 1
    out["ztw_threshold"] = thr_z
    art = {
        "models": cpu,
        "subset": sel.subset,
        "sdn_threshold": thr,
        "sdn_exits": sdn_exit,
        "ztw": copy.deepcopy(ztw).cpu().eval(),
        "ztw_threshold": thr_z,
        "ztw_exits": z_exit,
        "x": xte,
    }
    return out, art


class SlieExperiment(Experiment):
    slug = "slienet"
    paper = Paper(
        "SLIENet: Selective Lightweight IC Ensembles, train-full deploy-partial early exits "
        "compiled as one static graph",
        arxiv=None,
        note="NeurIPS 2026 submission; abstract and the authors' public code only",
    )
    default_seeds = 5
    quick_seeds: ClassVar[int | None] = 1
    claims: ClassVar[tuple[Claim, ...]] = (
        Claim(
            "acc_vs_vanilla",
            "SLIE5 is more accurate than the vanilla backbone (paper: +2.46 pp, ResNet-56 on CIFAR-100)",
            "slie_minus_vanilla_acc_pp",
            ">=",
            0.0,
            note="paired: per seed, test accuracy SLIE5 - vanilla of the laptop ResNet (same initialisation, "
            "batches and data), in percentage points, on the hard generated 40-class set (issue 36); the "
            "other two backbones are in the accuracy table and the figure",
            paper_value=2.46,
            paired=True,
        ),
        Claim(
            "acc_vs_sdn",
            "SLIE outperforms SDN-based early exit across ResNet, VGG-16 and MobileNetV1",
            "slie_minus_sdn_acc_pp",
            ">",
            0.0,
            note="paired: per seed, SLIE5 - SDN sample-wise exit (threshold calibrated on held-out data on "
            "the grid 0.00..1.00), pp, mean over the three backbones; the paper gives no number",
            paired=True,
        ),
        Claim(
            "acc_vs_ztw",
            "SLIE remains competitive with ZTW (within 1 pp)",
            "slie_minus_ztw_acc_pp",
            ">",
            -1.0,
            note="paired: per seed, SLIE5 - ZTW sample-wise exit (cascade + geometric ensemble on the frozen "
            "vanilla backbone) of the laptop ResNet, pp; 'competitive' read as at most 1 pp below, fixed "
            "before the first run. ResNet only: ZTW rides on the vanilla backbone, and the vanilla VGG and "
            "MobileNet are far below their plateau at this budget (their SLIE-trained final classifiers are "
            "10-20 pp better, see the diagnostics table), so there it would be a weakened baseline; the "
            "first run's three seeds, judged on the mean over the three backbones, were the reason for "
            "the change (which makes the claim harder to meet, not easier)",
            paired=True,
        ),
        Claim(
            "subsecond_search",
            "the calibration search over the 2^5 - 1 IC subsets takes under a second",
            "calib_search_ms_max",
            "<",
            1000.0,
            note="per seed, the slowest of the three backbones' SLIE5 searches (31 subsets, the full "
            "calibration set), wall time in ms on one CPU thread",
            machine_dependent=True,
        ),
        Claim(
            "latency_vs_vanilla",
            "SLIE5's compiled static plan has lower p50 latency than vanilla ResNet-56 at batch 1 "
            "(paper: -14%)",
            "slie_over_vanilla_p50",
            "<",
            1.0,
            note="paired: per seed, the bench harness's paired ratio SLIE5 / vanilla (median over rounds of "
            "the per-round time ratio; each round one call of every variant on the same image in a random "
            "order, after warm-up) on a full-size ResNet-56 (random weights, 32 x 32) with this seed's "
            "SLIE5 structure; ONNX Runtime FP32, 1 thread (quick: eager torch); the paper: TensorRT FP16 on "
            "a Jetson Orin Nano, -14% = ratio 0.86",
            paper_value=0.86,
            paired=True,
            machine_dependent=True,
        ),
        Claim(
            "sdn_slower",
            "SDN's per-sample exit runs slower than vanilla ResNet-56 despite fewer FLOPs (paper: about 2x)",
            "sdn_over_vanilla_p50",
            ">",
            1.0,
            note="paired: per seed, the harness's paired ratio SDN / vanilla over the same rounds; SDN as "
            "chained per-segment ONNX Runtime sessions with a branch per exit, replaying the exits the "
            "laptop SDN took on the test images, vs vanilla's one graph (quick: eager torch)",
            paper_value=2.0,
            paired=True,
            machine_dependent=True,
        ),
        Claim(
            "zero_deadline_misses",
            "zero deadline misses of SLIE5 over 10,000 single-sample inferences",
            "slie_deadline_misses",
            "<=",
            0.0,
            note=f"full-size ResNet-56, ONNX Runtime; deadline = {_FULL.deadline_factor} x vanilla p99 of a "
            f"{_FULL.pilot_calls}-call pilot; {_FULL.latency_rounds:,} calls per seed, so 5 seeds make the "
            f"paper's 10,000 (quick: {QUICK.latency_rounds} calls, eager); a count per seed, judged on the "
            "t interval of its mean over seeds like every other claim",
            paper_value=0.0,
            machine_dependent=True,
        ),
    )

    def config(self, quick: bool) -> SlieConfig:
        return QUICK if quick else _FULL

    def device(self) -> str:
        """Where the models train: :func:`paperworks.core.choose_device` (``paperworks reproduce --device``,
        ``PAPERWORKS_DEVICE``; CUDA when available, else the CPU). Latency is always measured on the CPU."""
        return choose_device()

    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> dict[str, float]:
        device = self.device()
        with torch_threads(1):
            return self._run(seed, self.config(quick), progress, device)

    # -- one seed ------------------------------------------------------------------------------------
    def _run(self, seed: int, rc: SlieConfig, progress: Progress, device: str) -> dict[str, float]:
        out: dict[str, float] = {}
        data = _load(seed, rc)
        out["test_images"] = float(len(data[5]))
        recorded: dict[str, object] = {}
        for name in rc.backbones:
            metrics, art = run_backbone(name, data, rc, seed=seed, device=device, progress=progress)
            out.update({f"{name}_{k}": v for k, v in metrics.items()})
            if name == "resnet":
                recorded = art
        bbs = rc.backbones
        out["slie_minus_vanilla_acc_pp"] = 100 * (out["resnet_acc_slie5"] - out["resnet_acc_vanilla"])
        out["slie_minus_ztw_acc_pp"] = 100 * (out["resnet_acc_slie5"] - out["resnet_acc_ztw_dynamic"])
        out["slie_minus_sdn_acc_pp"] = 100 * float(
            np.mean([out[f"{b}_acc_slie5"] - out[f"{b}_acc_sdn_dynamic"] for b in bbs])
        )
        for peer, key in (("vanilla", "vanilla"), ("ztw", "ztw_dynamic")):
            diffs = [out[f"{b}_acc_slie5"] - out[f"{b}_acc_{key}"] for b in bbs]
            out[f"slie_minus_{peer}_acc_pp_mean"] = 100 * float(np.mean(diffs))
        out["calib_search_ms_max"] = max(out[f"{b}_calib_search_ms"] for b in bbs)
        out.update(self._latency(recorded, rc, seed, progress))
        return out

    # -- full-size latency ---------------------------------------------------------------------------
    def _latency(self, rec: dict, rc: SlieConfig, seed: int, progress: Progress) -> dict[str, float]:
        full = full_size_model("resnet", rc.n_classes, image_size=rc.latency_image_size, seed=seed)
        size = rc.latency_image_size
        x = torch.as_tensor(rec["x"][: rc.latency_samples])
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
        samples = [np.ascontiguousarray(x[i : i + 1].numpy()) for i in range(len(x))]
        tsamples = [torch.from_numpy(s) for s in samples]
        exits = [int(e) for e in rec["sdn_exits"][: len(samples)]]
        vanilla = VanillaPlan(full).eval()
        slie = SliePlan(full, rec["subset"], rc.depth).eval()
        segs = [s.eval() for s in exit_segments(full)]
        seg_cost = _segment_costs(full)
        van_flops = count_flops(vanilla, tsamples[0])
        res: dict[str, float] = {
            "full_flops_slie5_rel": count_flops(slie, tsamples[0]) / van_flops,
            "full_flops_sdn_rel": float(np.mean([seg_cost[e] for e in exits])) / van_flops,
        }
        with tempfile.TemporaryDirectory() as tmp, torch.inference_mode():
            if rc.latency_engine == "eager":
                runner = DynamicExitRunner(segs, rec["sdn_threshold"])
                sides = {"vanilla": (vanilla, tsamples), "slie": (slie, tsamples)}
            else:
                progress.log("  exporting full-size vanilla, SLIE5 and SDN's 7 segments to ONNX")
                v = OnnxPlan(export_onnx(vanilla, Path(tmp) / "vanilla.onnx"))
                s = OnnxPlan(export_onnx(slie, Path(tmp) / "slie.onnx"))
                paths, h = [], tsamples[0]
                for j, seg in enumerate(segs):
                    paths.append(
                        export_onnx_module(
                            seg,
                            h,
                            Path(tmp) / f"seg{j}.onnx",
                            input_names=["h"],
                            output_names=["h_out", "probs"],
                        )
                    )
                    h = seg(h)[0]
                runner = DynamicExitRunner.from_onnx(paths, rec["sdn_threshold"])
                for i in range(3):
                    if not np.allclose(s(samples[i]), slie(tsamples[i]).numpy(), atol=1e-4):
                        raise RuntimeError("the exported SLIE5 ONNX plan differs from the eager plan")
                    if not np.allclose(
                        runner.replay(samples[i], exits[i]),
                        _segs_output(segs, tsamples[i], exits[i]),
                        atol=1e-4,
                    ):
                        raise RuntimeError("the SDN segment sessions differ from the eager segments")
                sides = {"vanilla": (v, samples), "slie": (s, samples)}
            pairs = list(zip(samples if rc.latency_engine == "onnx" else tsamples, exits, strict=True))
            sides["sdn"] = (lambda pair: runner.replay(*pair), pairs)
            pilot = compare(
                {"vanilla": _cycling(*sides["vanilla"])},
                ours="vanilla",
                name="deadline pilot",
                warmup=rc.pilot_warmup,
                repeats=rc.pilot_calls,
                number=1,
            )
            deadline = rc.deadline_factor * float(np.percentile(pilot.row().side("vanilla").times_s, 99))
            progress.log(
                f"  timing {rc.latency_rounds:,} interleaved rounds of full-size vanilla, SLIE5 and SDN "
                f"({rc.latency_engine}, batch 1)"
            )
            bench = compare(
                {k: _cycling(*sides[k]) for k in ("slie", "vanilla", "sdn")},
                ours="slie",
                name="latency at batch 1",
                warmup=rc.latency_warmup,
                repeats=rc.latency_rounds,
                number=1,
            )
        row = bench.row()
        t = {k: np.asarray(row.side(k).times_s) for k in ("slie", "vanilla", "sdn")}
        st = {k: latency_stats(v) for k, v in t.items()}
        res.update({f"{k}_{m}": st[k][m] for k in ("vanilla", "slie", "sdn") for m in ("p50_ms", "p99_ms")})
        ratios = {"slie_over_vanilla_p50": row.ratio("vanilla"), "slie_over_sdn_p50": row.ratio("sdn")}
        for key, r in ratios.items():
            res[key], res[f"{key}_lo"], res[f"{key}_hi"] = r.estimate, r.low, r.high
        sdn = bootstrap_ratio_interval(t["sdn"], t["vanilla"], seed=bench.settings["seed"])
        for suffix, v in zip(("", "_lo", "_hi"), sdn, strict=True):
            res[f"sdn_over_vanilla_p50{suffix}"] = v
        res["deadline_ms"] = deadline * 1e3
        for k in ("slie", "vanilla", "sdn"):
            res[f"{k}_deadline_misses"] = float(deadline_misses(t[k], deadline))
        res["latency_calls_per_variant"] = float(len(t["slie"]))
        return res

    # -- report --------------------------------------------------------------------------------------
    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        rc = self.config(quick)

        def fmt(key: str, scale: float = 1.0, digits: int = 2) -> str:
            s = MetricSummary.of([scale * r[key] for r in per_seed])
            return f"{s.mean:.{digits}f} ± {s.std:.{digits}f}" if s.n > 1 else f"{s.mean:.{digits}f}"

        labels = {
            "vanilla": "vanilla (final classifier)",
            "slie5": "**SLIE5** (calibrated IC subset, depth 5)",
            "sdn_dynamic": "SDN sample-wise exit",
            "sdn_slie5": "SDN ICs + SLIE5 search (no distillation)",
            "ztw_dynamic": "ZTW sample-wise exit (cascade + geometric ensemble)",
            "slie_final": "SLIE-trained net, final classifier",
        }
        bbs = rc.backbones
        head = " | ".join(f"{BACKBONE_LABELS[b]} acc (%) | FLOPs / vanilla" for b in bbs)
        acc = [f"| method | {head} |", "|" + " --- |" * (1 + 2 * len(bbs))]
        for m in METHODS:
            cells = []
            for b in bbs:
                fl = {
                    "vanilla": "1.00",
                    "slie_final": "1.00",
                    "sdn_slie5": "-",
                    "slie5": fmt(f"{b}_flops_slie5_rel"),
                    "sdn_dynamic": fmt(f"{b}_flops_sdn_rel"),
                    "ztw_dynamic": fmt(f"{b}_flops_ztw_rel"),
                }[m]
                cells += [fmt(f"{b}_acc_{m}", 100), fl]
            acc.append(f"| {labels[m]} | " + " | ".join(cells) + " |")
        n_test = int(per_seed[0]["test_images"])
        acc_note = (
            f"{n_test:,} test images per seed ({rc.n_classes} classes); FLOPs of the exits are the expected "
            "multiply-adds over the test images."
        )
        ics = ["| backbone | " + " | ".join(f"IC{j}" for j in range(1, NUM_ICS + 1)) + " | final |"]
        ics.append("|" + " --- |" * (NUM_ICS + 2))
        for b in bbs:
            cells = [
                f"{fmt(f'{b}_ic{j}_acc', 100, 1)} ({per_seed[0][f'{b}_ic{j}_cost']:.2f})" for j in range(1, 7)
            ]
            ics.append(
                f"| {BACKBONE_LABELS[b]} | "
                + " | ".join(cells)
                + f" | {fmt(f'{b}_acc_slie_final', 100, 1)} |"
            )
        cal = [
            "| backbone | SLIE5 subset size | deepest IC | SDN threshold | SDN mean exit (of 7) "
            "| ZTW threshold |"
        ]
        cal.append("| --- | --- | --- | --- | --- | --- |")
        for b in bbs:
            cal.append(
                f"| {BACKBONE_LABELS[b]} | {fmt(f'{b}_slie_subset_size', digits=1)} | "
                f"{fmt(f'{b}_slie_deepest_ic', digits=1)} | {fmt(f'{b}_sdn_threshold')} | "
                f"{fmt(f'{b}_sdn_mean_exit')} | {fmt(f'{b}_ztw_threshold')} |"
            )
        engine = "eager torch (quick)" if rc.latency_engine == "eager" else "ONNX Runtime FP32, 1 thread"
        lat = [
            f"| variant (full-size ResNet-56, {engine}) | FLOPs / vanilla | p50 (ms) | p99 (ms) "
            "| time / vanilla (median of per-round ratios) | deadline misses |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| vanilla (one graph) | 1.00 | {fmt('vanilla_p50_ms', digits=3)} "
            f"| {fmt('vanilla_p99_ms', digits=3)} | 1.00 | {fmt('vanilla_deadline_misses', digits=1)} |",
        ]
        for key, label, fl in (
            ("slie", "**SLIE5** (one graph)", "full_flops_slie5_rel"),
            ("sdn", "SDN sample-wise exit (segments + branches, replayed exits)", "full_flops_sdn_rel"),
        ):
            lat.append(
                f"| {label} | {fmt(fl)} | {fmt(f'{key}_p50_ms', digits=3)} "
                f"| {fmt(f'{key}_p99_ms', digits=3)} | {fmt(f'{key}_over_vanilla_p50')} "
                f"| {fmt(f'{key}_deadline_misses', digits=1)} |"
            )
        lat_note = (
            f"Deadline {fmt('deadline_ms', digits=3)} ms (= {rc.deadline_factor} x vanilla p99 of the "
            f"pilot), {int(per_seed[0]['latency_calls_per_variant']):,} calls per variant per seed."
        )

        def pp(values: list[float]) -> str:
            mean, lo, hi = _ci(values)
            return f"{mean:+.2f} [{lo:+.2f}, {hi:+.2f}]" if math.isfinite(lo) else f"{mean:+.2f}"

        diag = [
            "| backbone | SLIE-trained final - vanilla | SLIE5 - SLIE-trained final | SLIE5 - vanilla "
            "| SLIE5 - SDN exit | SLIE5 - ZTW exit |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        pairs = (
            ("acc_slie_final", "acc_vanilla"),
            ("acc_slie5", "acc_slie_final"),
            ("acc_slie5", "acc_vanilla"),
            ("acc_slie5", "acc_sdn_dynamic"),
            ("acc_slie5", "acc_ztw_dynamic"),
        )
        for b in bbs:
            cells = [pp([100 * (r[f"{b}_{x}"] - r[f"{b}_{z}"]) for r in per_seed]) for x, z in pairs]
            diag.append(f"| {BACKBONE_LABELS[b]} | " + " | ".join(cells) + " |")
        diag_note = (
            "Paired differences of test accuracy (pp), mean [95% t interval over seeds]. The first column "
            "is how much the IC losses help the network's own final classifier at this budget: a large "
            "value means the vanilla net is far from its plateau (a weakened baseline). The second compares "
            "SLIE5 with the final classifier of the same network (the overthinking / ensemble effect, free "
            "of the vanilla net's training)."
        )
        exits_title = (
            "Test accuracy of each exit of the SLIE-trained nets (%, its FLOPs fraction in brackets)"
        )
        return {
            "Test accuracy by deployment (mean ± std over seeds)": acc_note + "\n\n" + "\n".join(acc),
            exits_title: "\n".join(ics),
            "Diagnostics: paired differences per backbone": diag_note + "\n\n" + "\n".join(diag),
            "Calibrated deployments": "\n".join(cal),
            "Latency at batch size 1 (full-size ResNet-56, 32 x 32)": lat_note + "\n\n" + "\n".join(lat),
        }

    def figures(self, report: Report, folder: Path) -> list[str]:
        plt = optional_pyplot()
        if plt is None:
            return []
        per_seed = report.per_seed
        bbs = [b for b in BACKBONES if f"{b}_acc_slie5" in per_seed[0]]
        fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
        # (a) the headline: paired accuracy differences per backbone, per seed, with the mean and its CI
        ax = axes[0, 0]
        peers = (("vanilla", "o", "C0"), ("sdn_dynamic", "s", "C1"), ("ztw_dynamic", "^", "C2"))
        names = {
            "vanilla": "SLIE5 - vanilla",
            "sdn_dynamic": "SLIE5 - SDN exit",
            "ztw_dynamic": "SLIE5 - ZTW exit",
        }
        for j, (peer, marker, color) in enumerate(peers):
            for i, b in enumerate(bbs):
                d = [100 * (r[f"{b}_acc_slie5"] - r[f"{b}_acc_{peer}"]) for r in per_seed]
                x0 = i + (j - 1) * 0.25
                jitter = np.linspace(-0.06, 0.06, len(d)) if len(d) > 1 else np.zeros(1)
                ax.plot(
                    x0 + jitter,
                    d,
                    marker,
                    color=color,
                    ms=4,
                    alpha=0.55,
                    mfc="none",
                    label=f"{names[peer]}, per seed" if i == 0 else None,
                )
                mean, lo, hi = _ci(d)
                if math.isfinite(lo):
                    ax.errorbar(
                        x0,
                        mean,
                        yerr=[[mean - lo], [hi - mean]],
                        fmt=marker,
                        color=color,
                        ms=7,
                        capsize=4,
                        label="mean, 95% t interval" if (i == 0 and j == 0) else None,
                    )
                else:
                    ax.plot(x0, mean, marker, color=color, ms=7)
        ax.axhline(0, color="k", lw=0.8)
        ax.axhline(2.46, color="0.4", ls="--", lw=0.8, label="paper: +2.46 pp (vs vanilla)")
        ax.set_xticks(range(len(bbs)), [BACKBONE_LABELS[b] for b in bbs], fontsize=8)
        ax.set_ylabel("test accuracy difference (pp)")
        ax.set_title(
            "(a) SLIE5 against each baseline, paired per seed\n(vanilla VGG / MobileNet: far below "
            "plateau at this budget)",
            fontsize=9,
        )
        ax.legend(fontsize=7, loc="best")
        # (b) accuracy of each exit of the SLIE-trained nets (overthinking: late exits below earlier ones)
        ax = axes[0, 1]
        for i, b in enumerate(bbs):
            color = f"C{i}"
            costs = [per_seed[0][f"{b}_ic{j}_cost"] for j in range(1, NUM_ICS + 1)] + [1.0]
            for r in per_seed:
                accs = [100 * r[f"{b}_ic{j}_acc"] for j in range(1, NUM_ICS + 1)]
                ax.plot(costs, [*accs, 100 * r[f"{b}_acc_slie_final"]], "-", color=color, lw=0.6, alpha=0.35)
            mean = [np.mean([100 * r[f"{b}_ic{j}_acc"] for r in per_seed]) for j in range(1, NUM_ICS + 1)]
            mean.append(np.mean([100 * r[f"{b}_acc_slie_final"] for r in per_seed]))
            ax.plot(
                costs,
                mean,
                "o-",
                color=color,
                ms=4,
                lw=1.6,
                label=f"{BACKBONE_LABELS[b]}: mean (thin: seeds)",
            )
            van = [100 * r[f"{b}_acc_vanilla"] for r in per_seed]
            ax.plot(np.full(len(van), 1.03 + 0.03 * i), van, "x", color=color, ms=6)
        ax.plot([], [], "x", color="0.3", label="vanilla net's accuracy, per seed")
        ax.set_xlim(0, 1.15)
        ax.set_xlabel("cumulative fraction of the backbone's FLOPs at the exit (final = 1)")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title("(b) each exit of the SLIE-trained nets, and vanilla", fontsize=10)
        ax.legend(fontsize=7, loc="best")
        # (c) full-size ResNet-56 latency ratios per seed with their bootstrap intervals
        ax = axes[1, 0]
        for j, (key, label, paper, marker, color) in enumerate(
            (
                ("slie_over_vanilla_p50", "SLIE5 / vanilla", 0.86, "o", "C0"),
                ("sdn_over_vanilla_p50", "SDN exit / vanilla", 2.0, "s", "C1"),
            )
        ):
            vals = np.array([r[key] for r in per_seed])
            lo = np.array([r[f"{key}_lo"] for r in per_seed])
            hi = np.array([r[f"{key}_hi"] for r in per_seed])
            xs = np.arange(len(vals)) + (j - 0.5) * 0.2
            ax.errorbar(
                xs,
                vals,
                yerr=[np.maximum(vals - lo, 0), np.maximum(hi - vals, 0)],
                fmt=marker,
                color=color,
                ms=5,
                capsize=3,
                label=f"{label} (per seed, bootstrap 95%)",
            )
            ax.axhline(paper, color=color, ls=":", lw=1, label=f"paper: {paper:g}")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(per_seed)), [f"seed {s}" for s in report.seeds], fontsize=8)
        ax.set_ylabel("p50 time ratio (median of per-round ratios)")
        ax.set_title("(c) full-size ResNet-56 at batch 1: time relative to vanilla", fontsize=10)
        ax.legend(fontsize=7, loc="best")
        # (d) per-call p50 / p99 and deadline misses per seed
        ax = axes[1, 1]
        width = 0.25
        for j, (k, label, color) in enumerate(
            (("vanilla", "vanilla", "0.5"), ("slie", "SLIE5", "C0"), ("sdn", "SDN exit", "C1"))
        ):
            misses = [r[f"{k}_deadline_misses"] for r in per_seed]
            ax.bar(np.arange(len(per_seed)) + (j - 1) * width, misses, width, color=color, label=label)
        ax.set_xticks(range(len(per_seed)), [f"seed {s}" for s in report.seeds], fontsize=8)
        calls = int(per_seed[0]["latency_calls_per_variant"])
        top = max(r[f"{k}_deadline_misses"] for r in per_seed for k in ("vanilla", "slie", "sdn"))
        ax.set_ylim(0, max(1.0, 1.15 * top))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel(f"deadline misses (of {calls:,} calls per seed)")
        dl = np.mean([r["deadline_ms"] for r in per_seed])
        ax.set_title(f"(d) calls over the deadline ({dl:.2f} ms = 1.5 x vanilla p99)", fontsize=10)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        fig.savefig(folder / "slienet.png", dpi=110)
        plt.close(fig)
        return ["slienet.png"]


def _segs_output(segs: Sequence, x: torch.Tensor, exit_index: int) -> np.ndarray:
    """The eager segments' probabilities at ``exit_index`` for ``x`` (a check of the exported ones)."""
    h = x
    for j, seg in enumerate(segs):
        h, p = seg(h)
        if j == exit_index:
            break
    return p.numpy()


def _batched(model: torch.nn.Module, x: np.ndarray, device: str, batch: int = 512) -> torch.Tensor:
    xt = torch.as_tensor(x)
    outs = [model(xt[s : s + batch].to(device)).cpu() for s in range(0, len(xt), batch)]
    return torch.cat(outs, dim=1)
