"""SLIENet: train-full, deploy-partial early-exit IC ensembles compiled as one static graph.

Multi-exit backbones (ResNet-56, VGG-16, MobileNetV1) trained with light self-distillation, a
calibration search that picks the IC subset to average, and a static deployment plan exported with
``torch.export`` / ONNX; plus the SDN and ZTW baselines and a CIFAR-100 loader.
"""

from .backbones import (
    MultiExitNet,
    check_images,
    count_flops,
    default_ic_positions,
    mobilenet_v1,
    resnet56,
    vgg16,
)
from .baselines import (
    THRESHOLD_GRID,
    CascadeHeads,
    DynamicExitRunner,
    GeometricEnsemble,
    ZTWModel,
    choose_threshold,
    dynamic_exit,
    exit_segments,
    train_ztw,
)
from .calibration import SlieCalibrator, SlieSelection, calibrate_subset, ensemble_accuracy, subset_masks
from .data import digits_images, load_cifar100, prototype_images, split_indices, standardize
from .deploy import (
    EXPORTERS,
    OnnxPlan,
    SliePlan,
    VanillaPlan,
    export_onnx,
    export_onnx_module,
    export_program,
    ort_session,
)
from .distill import SelfDistillationLoss, sdn_ic_weights, self_distillation_loss
from .heads import MixedPoolIC
from .latency import deadline_misses, latency_stats, measure_interleaved
from .training import NesterovSGD, TrainConfig, predict_all, train_multi_exit

__all__ = [
    "EXPORTERS",
    "THRESHOLD_GRID",
    "CascadeHeads",
    "DynamicExitRunner",
    "GeometricEnsemble",
    "MixedPoolIC",
    "MultiExitNet",
    "NesterovSGD",
    "OnnxPlan",
    "SelfDistillationLoss",
    "SlieCalibrator",
    "SliePlan",
    "SlieSelection",
    "TrainConfig",
    "VanillaPlan",
    "ZTWModel",
    "calibrate_subset",
    "check_images",
    "choose_threshold",
    "count_flops",
    "deadline_misses",
    "default_ic_positions",
    "digits_images",
    "dynamic_exit",
    "ensemble_accuracy",
    "exit_segments",
    "export_onnx",
    "export_onnx_module",
    "export_program",
    "latency_stats",
    "load_cifar100",
    "measure_interleaved",
    "mobilenet_v1",
    "ort_session",
    "predict_all",
    "prototype_images",
    "resnet56",
    "sdn_ic_weights",
    "self_distillation_loss",
    "split_indices",
    "standardize",
    "subset_masks",
    "train_multi_exit",
    "train_ztw",
    "vgg16",
]
