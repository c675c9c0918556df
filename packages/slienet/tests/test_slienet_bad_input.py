"""A battery of invalid calls on every exported function: each must fail with a clear, one-line error
raised by the package's own checks (``paperworks.slienet`` or the core's shared validators), naming the
argument, before anything is computed (issue 36)."""

from __future__ import annotations

import math
import pickle
import traceback

import numpy as np
import pytest
import torch

import paperworks.slienet as sl
from paperworks.core import torch_threads

NAN = float("nan")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with torch_threads(1):
        yield


def _model(**kw):
    torch.manual_seed(0)
    return sl.resnet56(4, width=4, blocks_per_stage=1, image_size=8, in_channels=1, num_ics=2, **kw).eval()


M = _model()
X = torch.randn(6, 1, 8, 8)
Y = torch.arange(6) % 4
P = torch.softmax(torch.randn(3, 6, 4, generator=torch.Generator().manual_seed(0)), -1)
LOGITS = 5 * torch.randn(3, 6, 4)
XNAN = X.clone()
XNAN[0, 0, 0, 0] = NAN
XINF = X.clone()
XINF[1, 0, 2, 2] = float("inf")
PNAN = P.clone()
PNAN[0, 0, 0] = NAN
PLAN = sl.SliePlan(M, (0, 1), 2).eval()
SEGS = [s.eval() for s in sl.exit_segments(M)]
RUNNER = sl.DynamicExitRunner(SEGS, 0.5)
HEADS = sl.CascadeHeads(M)
ENS = sl.GeometricEnsemble(3, 4)
FEATS = M.features(X)[1]
LOGP = torch.log_softmax(torch.randn(3, 6, 4), -1)


def _f(*a, **k):
    return None


def _cases(tmp):
    """(id, thunk, what the message must name)."""
    onnx_path = tmp / "plan.onnx"
    cfg = sl.TrainConfig(mode="slie", epochs=1, batch_size=4)
    ztw_args = (X, Y, X, Y)
    return [
        # backbones
        ("resnet56 num_classes=1", lambda: sl.resnet56(1), "num_classes"),
        ("resnet56 num_classes str", lambda: sl.resnet56("a"), "num_classes"),
        ("resnet56 width=0", lambda: sl.resnet56(10, width=0), "width"),
        ("resnet56 width float", lambda: sl.resnet56(10, width=2.5), "width"),
        ("resnet56 blocks_per_stage=0", lambda: sl.resnet56(10, blocks_per_stage=0), "blocks_per_stage"),
        ("resnet56 image_size=2", lambda: sl.resnet56(10, image_size=2), "image_size"),
        ("resnet56 in_channels=0", lambda: sl.resnet56(10, in_channels=0), "in_channels"),
        (
            "resnet56 ic_after out of range",
            lambda: sl.resnet56(10, blocks_per_stage=1, ic_after=(5,)),
            "ic_after",
        ),
        ("resnet56 ic_after str", lambda: sl.resnet56(10, blocks_per_stage=1, ic_after="ab"), "ic_after"),
        ("resnet56 ic_after float", lambda: sl.resnet56(10, blocks_per_stage=1, ic_after=(0.5,)), "ic_after"),
        ("resnet56 num_ics=0", lambda: sl.resnet56(10, blocks_per_stage=1, num_ics=0), "num_ics"),
        ("resnet56 num_ics too many", lambda: sl.resnet56(10, blocks_per_stage=1, num_ics=9), "num_ics"),
        ("vgg16 width<0", lambda: sl.vgg16(10, width=-1), "width"),
        ("vgg16 num_classes bool", lambda: sl.vgg16(True), "num_classes"),
        ("vgg16 image_size float", lambda: sl.vgg16(10, image_size=3.5), "image_size"),
        ("mobilenet width nan", lambda: sl.mobilenet_v1(10, width=NAN), "width"),
        ("mobilenet in_channels str", lambda: sl.mobilenet_v1(10, in_channels="3"), "in_channels"),
        (
            "MultiExitNet stem",
            lambda: sl.MultiExitNet(
                "x", list(M.blocks), [4, 8, 16], [8, 4, 2], num_classes=4, in_channels=1, image_size=8
            ),
            "stem",
        ),
        (
            "MultiExitNet one block",
            lambda: sl.MultiExitNet(
                M.stem, [M.blocks[0]], [4], [8], num_classes=4, in_channels=1, image_size=8
            ),
            "blocks",
        ),
        (
            "MultiExitNet block_channels",
            lambda: sl.MultiExitNet(
                M.stem, list(M.blocks), [4], [8, 4, 2], num_classes=4, in_channels=1, image_size=8
            ),
            "block_channels",
        ),
        (
            "MultiExitNet block not a module",
            lambda: sl.MultiExitNet(
                M.stem, [M.blocks[0], "b"], [4, 8], [8, 4], num_classes=4, in_channels=1, image_size=8
            ),
            "blocks[1]",
        ),
        ("default_ic_positions num_blocks=1", lambda: sl.default_ic_positions(1), "num_blocks"),
        ("default_ic_positions num_ics=0", lambda: sl.default_ic_positions(10, 0), "num_ics"),
        ("default_ic_positions num_ics>=blocks", lambda: sl.default_ic_positions(10, 10), "num_ics"),
        ("default_ic_positions str", lambda: sl.default_ic_positions("10", 2), "num_blocks"),
        ("check_images list", lambda: sl.check_images([1.0], 1, 8), "x"),
        ("check_images in_channels=0", lambda: sl.check_images(X, 0, 8), "in_channels"),
        ("check_images NaN", lambda: sl.check_images(XNAN, 1, 8), "x"),
        ("check_images inf", lambda: sl.check_images(XINF, 1, 8), "x"),
        ("check_images shape", lambda: sl.check_images(X, 3, 8), "x"),
        ("check_images int dtype", lambda: sl.check_images(X.long(), 1, 8), "x"),
        ("check_images empty", lambda: sl.check_images(X[:0], 1, 8), "x"),
        ("count_flops module", lambda: sl.count_flops("m", X), "module"),
        ("count_flops x", lambda: sl.count_flops(M, "x"), "x"),
        ("count_flops empty", lambda: sl.count_flops(M, X[:0]), "x"),
        ("forward NaN", lambda: M(XNAN), "x"),
        ("forward inf", lambda: M(XINF), "x"),
        ("forward shape", lambda: M(torch.randn(2, 3, 8, 8)), "x"),
        ("forward numpy int", lambda: M(np.zeros((1, 1, 8, 8), np.int64)), "x"),
        ("features NaN", lambda: M.features(XNAN), "x"),
        # heads
        ("MixedPoolIC in_channels=0", lambda: sl.MixedPoolIC(0, 4, 3), "in_channels"),
        ("MixedPoolIC feature_size=0", lambda: sl.MixedPoolIC(4, 0, 3), "feature_size"),
        ("MixedPoolIC num_classes=1", lambda: sl.MixedPoolIC(4, 4, 1), "num_classes"),
        ("MixedPoolIC float", lambda: sl.MixedPoolIC(4.0, 4, 3), "in_channels"),
        ("MixedPoolIC forward channels", lambda: sl.MixedPoolIC(4, 4, 3)(torch.randn(2, 5, 4, 4)), "x"),
        ("MixedPoolIC forward list", lambda: sl.MixedPoolIC(4, 4, 3)([1.0]), "x"),
        # distill
        ("sdn_ic_weights progress>1", lambda: sl.sdn_ic_weights([0.5], 1.5), "progress"),
        ("sdn_ic_weights progress nan", lambda: sl.sdn_ic_weights([0.5], NAN), "progress"),
        ("sdn_ic_weights empty", lambda: sl.sdn_ic_weights([], 0.5), "ic_costs"),
        ("sdn_ic_weights zero cost", lambda: sl.sdn_ic_weights([0.0, 1.0], 0.5), "ic_costs"),
        ("sdn_ic_weights str", lambda: sl.sdn_ic_weights("ab", 0.5), "ic_costs"),
        ("sdn_ic_weights nan cost", lambda: sl.sdn_ic_weights([NAN], 0.5), "ic_costs"),
        (
            "loss final 1-d",
            lambda: sl.self_distillation_loss(torch.randn(4), LOGITS, Y, torch.ones(3)),
            "final_logits",
        ),
        (
            "loss ic shape",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS[:, :3], Y, torch.ones(3)),
            "ic_logits",
        ),
        (
            "loss target float",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS, Y.float(), torch.ones(3)),
            "target",
        ),
        (
            "loss target range",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS, Y + 4, torch.ones(3)),
            "target",
        ),
        (
            "loss weights shape",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS, Y, torch.ones(2)),
            "ic_weights",
        ),
        (
            "loss negative weights",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS, Y, -torch.ones(3)),
            "ic_weights",
        ),
        (
            "loss alpha",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS, Y, torch.ones(3), alpha=2.0),
            "alpha",
        ),
        (
            "loss temperature",
            lambda: sl.self_distillation_loss(LOGITS[0], LOGITS, Y, torch.ones(3), temperature=0),
            "temperature",
        ),
        (
            "loss NaN logits",
            lambda: sl.self_distillation_loss(PNAN[0], LOGITS, Y, torch.ones(3)),
            "final_logits",
        ),
        (
            "loss not a tensor",
            lambda: sl.self_distillation_loss([1.0], LOGITS, Y, torch.ones(3)),
            "final_logits",
        ),
        (
            "loss int logits",
            lambda: sl.self_distillation_loss(Y.view(6, 1).repeat(1, 4), LOGITS, Y, torch.ones(3)),
            "final_logits",
        ),
        ("SelfDistillationLoss alpha", lambda: sl.SelfDistillationLoss(alpha=-1), "alpha"),
        ("SelfDistillationLoss temperature", lambda: sl.SelfDistillationLoss(temperature=0), "temperature"),
        # training
        ("TrainConfig mode", lambda: sl.TrainConfig(mode="ztw"), "mode"),
        ("TrainConfig epochs=0", lambda: sl.TrainConfig(epochs=0), "epochs"),
        ("TrainConfig epochs float", lambda: sl.TrainConfig(epochs=1.5), "epochs"),
        ("TrainConfig batch_size=0", lambda: sl.TrainConfig(batch_size=0), "batch_size"),
        ("TrainConfig lr=0", lambda: sl.TrainConfig(lr=0), "lr"),
        ("TrainConfig lr nan", lambda: sl.TrainConfig(lr=NAN), "lr"),
        ("TrainConfig momentum=1", lambda: sl.TrainConfig(momentum=1.0), "momentum"),
        ("TrainConfig weight_decay<0", lambda: sl.TrainConfig(weight_decay=-1e-4), "weight_decay"),
        ("TrainConfig alpha>1", lambda: sl.TrainConfig(alpha=2), "alpha"),
        ("TrainConfig temperature=0", lambda: sl.TrainConfig(temperature=0), "temperature"),
        ("TrainConfig shift<0", lambda: sl.TrainConfig(shift=-1), "shift"),
        ("TrainConfig threads=0", lambda: sl.TrainConfig(threads=0), "threads"),
        ("train model", lambda: sl.train_multi_exit("m", X, Y, cfg), "model"),
        ("train NaN x", lambda: sl.train_multi_exit(_model(), XNAN, Y, cfg), "x"),
        ("train labels out of range", lambda: sl.train_multi_exit(_model(), X, Y + 4, cfg), "y"),
        ("train negative label", lambda: sl.train_multi_exit(_model(), X, Y - 1, cfg), "y"),
        ("train labels float", lambda: sl.train_multi_exit(_model(), X, Y.float(), cfg), "y"),
        ("train labels length", lambda: sl.train_multi_exit(_model(), X, Y[:3], cfg), "y"),
        ("train config", lambda: sl.train_multi_exit(_model(), X, Y, "slie"), "config"),
        ("train seed", lambda: sl.train_multi_exit(_model(), X, Y, cfg, seed=-1), "seed"),
        ("train x channels", lambda: sl.train_multi_exit(_model(), torch.randn(6, 3, 8, 8), Y, cfg), "x"),
        ("predict_all batch_size=0", lambda: sl.predict_all(M, X, batch_size=0), "batch_size"),
        ("predict_all NaN", lambda: sl.predict_all(M, XNAN), "x"),
        ("predict_all model", lambda: sl.predict_all("m", X), "model"),
        ("predict_all list", lambda: sl.predict_all(M, [[1.0]]), "x"),
        ("NesterovSGD generator", lambda: sl.NesterovSGD(M.parameters()), "params"),
        ("NesterovSGD not tensors", lambda: sl.NesterovSGD([1.0]), "params[0]"),
        ("NesterovSGD momentum", lambda: sl.NesterovSGD(list(M.parameters()), momentum=1.5), "momentum"),
        (
            "NesterovSGD weight_decay",
            lambda: sl.NesterovSGD(list(M.parameters()), weight_decay=-1),
            "weight_decay",
        ),
        ("NesterovSGD step lr<0", lambda: sl.NesterovSGD(list(M.parameters())).step(-1.0), "lr"),
        ("NesterovSGD step lr nan", lambda: sl.NesterovSGD(list(M.parameters())).step(NAN), "lr"),
        # calibration
        ("subset_masks 0", lambda: sl.subset_masks(0), "k"),
        ("subset_masks 17", lambda: sl.subset_masks(17), "k"),
        ("subset_masks float", lambda: sl.subset_masks(2.0), "k"),
        ("subset_masks bool", lambda: sl.subset_masks(True), "k"),
        ("calibrate labels None", lambda: sl.calibrate_subset(P, None, 2), "labels"),
        ("calibrate depth 0", lambda: sl.calibrate_subset(P, Y, 0), "depth"),
        ("calibrate depth > K", lambda: sl.calibrate_subset(P, Y, 9), "depth"),
        ("calibrate depth str", lambda: sl.calibrate_subset(P, Y, "2"), "depth"),
        ("calibrate not normalised", lambda: sl.calibrate_subset(P * 2, Y, 2), "ic_probs"),
        ("calibrate logits", lambda: sl.calibrate_subset(LOGITS, Y, 2), "ic_probs"),
        ("calibrate labels range", lambda: sl.calibrate_subset(P, Y + 10, 2), "labels"),
        ("calibrate labels float", lambda: sl.calibrate_subset(P, Y.float(), 2), "labels"),
        ("calibrate labels length", lambda: sl.calibrate_subset(P, Y[:3], 2), "labels"),
        ("calibrate 2-d probs", lambda: sl.calibrate_subset(P[0], Y, 1), "ic_probs"),
        ("calibrate NaN", lambda: sl.calibrate_subset(PNAN, Y, 2), "ic_probs"),
        ("calibrate list", lambda: sl.calibrate_subset([[0.5, 0.5]], Y, 1), "ic_probs"),
        ("calibrate int probs", lambda: sl.calibrate_subset(P.long(), Y, 1), "ic_probs"),
        ("ensemble_accuracy empty subset", lambda: sl.ensemble_accuracy(P, Y, torch.zeros(1, 3)), "masks"),
        ("ensemble_accuracy masks shape", lambda: sl.ensemble_accuracy(P, Y, torch.ones(2, 2)), "masks"),
        ("ensemble_accuracy masks values", lambda: sl.ensemble_accuracy(P, Y, 2 * torch.ones(1, 3)), "masks"),
        ("ensemble_accuracy labels None", lambda: sl.ensemble_accuracy(P, None, torch.ones(1, 3)), "labels"),
        ("SlieCalibrator depth 0", lambda: sl.SlieCalibrator(0), "depth"),
        ("SlieCalibrator depth str", lambda: sl.SlieCalibrator("5"), "depth"),
        ("SlieCalibrator predict before fit", lambda: sl.SlieCalibrator(2).predict(P), "fit"),
        (
            "SlieCalibrator too few ICs",
            lambda: sl.SlieCalibrator(2).fit(P, Y).predict_proba(P[:1]),
            "ic_probs",
        ),
        ("SlieCalibrator fit logits", lambda: sl.SlieCalibrator(2).fit(LOGITS, Y), "ic_probs"),
        ("SlieSelection empty", lambda: sl.SlieSelection((), 2, 0.5, ()), "subset"),
        ("SlieSelection index >= depth", lambda: sl.SlieSelection((0, 3), 2, 0.5, ()), "subset"),
        ("SlieSelection depth 0", lambda: sl.SlieSelection((0,), 0, 0.5, ()), "depth"),
        ("SlieSelection accuracy", lambda: sl.SlieSelection((0,), 2, 1.5, ()), "accuracy"),
        # baselines
        ("dynamic_exit logits", lambda: sl.dynamic_exit(LOGITS, 0.5), "member_probs"),
        ("dynamic_exit threshold<0", lambda: sl.dynamic_exit(P, -0.5), "threshold"),
        ("dynamic_exit threshold nan", lambda: sl.dynamic_exit(P, NAN), "threshold"),
        ("dynamic_exit threshold str", lambda: sl.dynamic_exit(P, "a"), "threshold"),
        ("dynamic_exit 2-d", lambda: sl.dynamic_exit(P[0], 0.5), "member_probs"),
        ("dynamic_exit NaN", lambda: sl.dynamic_exit(PNAN, 0.5), "member_probs"),
        ("choose_threshold nan cost", lambda: sl.choose_threshold(P, Y, [NAN, 1, 2]), "member_costs"),
        ("choose_threshold negative cost", lambda: sl.choose_threshold(P, Y, [-1, 1, 2]), "member_costs"),
        ("choose_threshold cost count", lambda: sl.choose_threshold(P, Y, [1]), "member_costs"),
        ("choose_threshold decreasing costs", lambda: sl.choose_threshold(P, Y, [3, 2, 1]), "member_costs"),
        ("choose_threshold costs str", lambda: sl.choose_threshold(P, Y, "abc"), "member_costs"),
        ("choose_threshold labels range", lambda: sl.choose_threshold(P, Y + 10, [1, 2, 3]), "labels"),
        ("choose_threshold labels None", lambda: sl.choose_threshold(P, None, [1, 2, 3]), "y"),
        ("choose_threshold logits", lambda: sl.choose_threshold(LOGITS, Y, [1, 2, 3]), "member_probs"),
        (
            "choose_threshold tolerance",
            lambda: sl.choose_threshold(P, Y, [1, 2, 3], tolerance=-1),
            "tolerance",
        ),
        ("choose_threshold grid value", lambda: sl.choose_threshold(P, Y, [1, 2, 3], grid=[-0.5]), "grid"),
        ("choose_threshold grid empty", lambda: sl.choose_threshold(P, Y, [1, 2, 3], grid=[]), "grid"),
        ("choose_threshold grid str", lambda: sl.choose_threshold(P, Y, [1, 2, 3], grid="ab"), "grid"),
        ("exit_segments model", lambda: sl.exit_segments("m"), "model"),
        ("runner no segments", lambda: sl.DynamicExitRunner([], 0.5), "segments"),
        ("runner segment not callable", lambda: sl.DynamicExitRunner(["a"], 0.5), "segments[0]"),
        ("runner segments str", lambda: sl.DynamicExitRunner("ab", 0.5), "segments"),
        ("runner threshold", lambda: sl.DynamicExitRunner(SEGS, -1.0), "threshold"),
        ("runner combine", lambda: sl.DynamicExitRunner(SEGS, 0.5, combine=3), "combine"),
        ("runner batch of 2", lambda: RUNNER(X[:2]), "x"),
        ("runner not an array", lambda: RUNNER(3.0), "x"),
        ("runner replay exit index", lambda: RUNNER.replay(X[:1], 9), "exit_index"),
        ("runner from_onnx empty", lambda: sl.DynamicExitRunner.from_onnx([], 0.5), "paths"),
        (
            "runner from_onnx missing file",
            lambda: sl.DynamicExitRunner.from_onnx([tmp / "no.onnx"], 0.5),
            "path",
        ),
        (
            "runner from_onnx threshold",
            lambda: sl.DynamicExitRunner.from_onnx([tmp / "no.onnx"], -7),
            "threshold",
        ),
        ("CascadeHeads model", lambda: sl.CascadeHeads("m"), "model"),
        ("CascadeHeads tensor", lambda: HEADS(FEATS[0]), "features"),
        ("CascadeHeads count", lambda: HEADS(FEATS[:1]), "features"),
        ("GeometricEnsemble num_members", lambda: sl.GeometricEnsemble(0, 3), "num_members"),
        ("GeometricEnsemble num_classes", lambda: sl.GeometricEnsemble(3, 1), "num_classes"),
        ("GeometricEnsemble probabilities", lambda: ENS(torch.rand(3, 6, 4) + 0.5), "log_probs"),
        ("GeometricEnsemble shape", lambda: ENS(LOGP[:2]), "log_probs"),
        ("GeometricEnsemble NaN", lambda: ENS(torch.full((3, 6, 4), NAN)), "log_probs"),
        ("GeometricEnsemble fit labels", lambda: sl.GeometricEnsemble(3, 4).fit(LOGP, Y + 10), "labels"),
        ("GeometricEnsemble fit steps", lambda: sl.GeometricEnsemble(3, 4).fit(LOGP, Y, steps=0), "steps"),
        ("GeometricEnsemble fit lr", lambda: sl.GeometricEnsemble(3, 4).fit(LOGP, Y, lr=0), "lr"),
        ("ZTWModel backbone", lambda: sl.ZTWModel("a", HEADS, ENS), "backbone"),
        ("ZTWModel heads", lambda: sl.ZTWModel(M, "h", ENS), "heads"),
        ("ZTWModel mismatch", lambda: sl.ZTWModel(M, HEADS, sl.GeometricEnsemble(2, 4)), "ensemble"),
        ("train_ztw backbone", lambda: sl.train_ztw("m", *ztw_args), "backbone"),
        ("train_ztw NaN x_train", lambda: sl.train_ztw(_model(), XNAN, Y, X, Y), "x_train"),
        ("train_ztw y_train range", lambda: sl.train_ztw(_model(), X, Y + 4, X, Y), "y_train"),
        ("train_ztw x_cal shape", lambda: sl.train_ztw(_model(), X, Y, torch.randn(6, 2, 8, 8), Y), "x_cal"),
        ("train_ztw y_cal length", lambda: sl.train_ztw(_model(), X, Y, X, Y[:2]), "y_cal"),
        ("train_ztw epochs", lambda: sl.train_ztw(_model(), *ztw_args, epochs=0), "epochs"),
        ("train_ztw batch_size", lambda: sl.train_ztw(_model(), *ztw_args, batch_size=0), "batch_size"),
        ("train_ztw lr", lambda: sl.train_ztw(_model(), *ztw_args, lr=-1.0), "lr"),
        ("train_ztw seed", lambda: sl.train_ztw(_model(), *ztw_args, seed=-1), "seed"),
        ("train_ztw threads", lambda: sl.train_ztw(_model(), *ztw_args, threads=0), "threads"),
        # data
        ("load_cifar100 split", lambda: sl.load_cifar100(tmp, "val"), "split"),
        ("load_cifar100 label", lambda: sl.load_cifar100(tmp, "train", label="x"), "label"),
        ("load_cifar100 root type", lambda: sl.load_cifar100(3), "root"),
        ("load_cifar100 missing", lambda: sl.load_cifar100(tmp / "none"), "root"),
        ("digits size", lambda: sl.digits_images(4), "size"),
        ("digits size str", lambda: sl.digits_images("16"), "size"),
        ("prototype n_classes", lambda: sl.prototype_images(1), "n_classes"),
        ("prototype per_class", lambda: sl.prototype_images(3, 0), "per_class"),
        ("prototype size", lambda: sl.prototype_images(3, 2, size=2), "size"),
        ("prototype noise<0", lambda: sl.prototype_images(3, 2, noise=-1), "noise"),
        ("prototype noise nan", lambda: sl.prototype_images(3, 2, noise=NAN), "noise"),
        ("prototype max_shift", lambda: sl.prototype_images(3, 2, max_shift=-1), "max_shift"),
        ("prototype coarse_share=1", lambda: sl.prototype_images(3, 2, coarse_share=1.0), "coarse_share"),
        ("prototype n_coarse=0", lambda: sl.prototype_images(3, 2, n_coarse=0), "n_coarse"),
        ("prototype seed", lambda: sl.prototype_images(3, 2, seed=-1), "seed"),
        ("split labels float", lambda: sl.split_indices(np.ones(10), (0.6, 0.2, 0.2), 0), "labels"),
        ("split labels 2-d", lambda: sl.split_indices(np.ones((2, 5), int), (0.6, 0.2, 0.2), 0), "labels"),
        ("split two fractions", lambda: sl.split_indices(np.arange(10), (0.5, 0.5), 0), "fractions"),
        ("split fractions sum", lambda: sl.split_indices(np.arange(10), (0.5, 0.5, 0.5), 0), "fractions"),
        ("split fractions nan", lambda: sl.split_indices(np.arange(10), (NAN, 0.5, 0.5), 0), "fractions"),
        ("split seed", lambda: sl.split_indices(np.arange(10), (0.6, 0.2, 0.2), -1), "seed"),
        ("standardize 3-d", lambda: sl.standardize(np.zeros((2, 3, 4))), "train"),
        ("standardize NaN", lambda: sl.standardize(np.full((2, 1, 4, 4), NAN)), "train"),
        (
            "standardize others shape",
            lambda: sl.standardize(np.zeros((2, 1, 4, 4)), np.zeros((2, 3, 4, 4))),
            "others[0]",
        ),
        # deploy
        ("SliePlan model", lambda: sl.SliePlan("m", (0,), 1), "model"),
        ("SliePlan empty subset", lambda: sl.SliePlan(M, (), 1), "subset"),
        ("SliePlan subset >= depth", lambda: sl.SliePlan(M, (0, 3), 2), "subset"),
        ("SliePlan depth 0", lambda: sl.SliePlan(M, (0,), 0), "depth"),
        ("SliePlan subset float", lambda: sl.SliePlan(M, (0.5,), 1), "subset[0]"),
        ("SliePlan subset str", lambda: sl.SliePlan(M, "0", 1), "subset"),
        ("SliePlan predict NaN", lambda: PLAN.predict_proba(XNAN), "x"),
        ("SliePlan predict shape", lambda: PLAN.predict_proba(torch.randn(1, 1, 4, 4)), "x"),
        ("VanillaPlan model", lambda: sl.VanillaPlan("m"), "model"),
        ("VanillaPlan predict NaN", lambda: sl.VanillaPlan(M).predict_proba(XNAN), "x"),
        ("export_program batch_size", lambda: sl.export_program(PLAN, 0), "batch_size"),
        (
            "export_program dynamic_batch",
            lambda: sl.export_program(PLAN, dynamic_batch="yes"),
            "dynamic_batch",
        ),
        ("export_program plan", lambda: sl.export_program("plan"), "plan"),
        ("export_onnx batch_size", lambda: sl.export_onnx(PLAN, onnx_path, batch_size=0), "batch_size"),
        ("export_onnx path type", lambda: sl.export_onnx(PLAN, 3), "path"),
        ("export_onnx missing folder", lambda: sl.export_onnx(PLAN, tmp / "none" / "a.onnx"), "path"),
        ("export_onnx exporter", lambda: sl.export_onnx(PLAN, onnx_path, exporter="tensorrt"), "exporter"),
        ("export_onnx opset", lambda: sl.export_onnx(PLAN, onnx_path, opset=5), "opset"),
        (
            "export_onnx dynamic_batch",
            lambda: sl.export_onnx(PLAN, onnx_path, dynamic_batch=1),
            "dynamic_batch",
        ),
        ("export_onnx plan", lambda: sl.export_onnx(torch.nn.ReLU(), onnx_path), "plan"),
        ("export_onnx_module example", lambda: sl.export_onnx_module(PLAN, "x", onnx_path), "example"),
        (
            "export_onnx_module no inputs",
            lambda: sl.export_onnx_module(PLAN, X, onnx_path, input_names=[]),
            "input_names",
        ),
        (
            "export_onnx_module two inputs",
            lambda: sl.export_onnx_module(PLAN, X, onnx_path, input_names=["a", "b"]),
            "input_names",
        ),
        (
            "export_onnx_module duplicate outputs",
            lambda: sl.export_onnx_module(PLAN, X, onnx_path, output_names=["a", "a"]),
            "output_names",
        ),
        ("export_onnx_module module", lambda: sl.export_onnx_module(lambda x: x, X, onnx_path), "module"),
        ("OnnxPlan missing", lambda: sl.OnnxPlan(tmp / "none.onnx"), "path"),
        ("ort_session path type", lambda: sl.ort_session(3), "path"),
        # latency
        ("latency_stats empty", lambda: sl.latency_stats([]), "times_s"),
        ("latency_stats nan", lambda: sl.latency_stats([NAN]), "times_s"),
        ("latency_stats negative", lambda: sl.latency_stats([-1.0]), "times_s"),
        ("latency_stats 2-d", lambda: sl.latency_stats(np.ones((2, 2))), "times_s"),
        ("deadline_misses deadline 0", lambda: sl.deadline_misses([1.0], 0), "deadline_s"),
        ("deadline_misses deadline nan", lambda: sl.deadline_misses([1.0], NAN), "deadline_s"),
        ("deadline_misses times str", lambda: sl.deadline_misses("a", 1.0), "times_s"),
        ("measure_interleaved no variants", lambda: sl.measure_interleaved({}, 3), "variants"),
        (
            "measure_interleaved empty inputs",
            lambda: sl.measure_interleaved({"a": (_f, [])}, 3),
            "variants['a']",
        ),
        ("measure_interleaved rounds", lambda: sl.measure_interleaved({"a": (_f, [1])}, 0), "rounds"),
        (
            "measure_interleaved every",
            lambda: sl.measure_interleaved({"a": (_f, [1])}, 3, every={"b": 2}),
            "every",
        ),
        (
            "measure_interleaved warmup",
            lambda: sl.measure_interleaved({"a": (_f, [1])}, 3, warmup=-1),
            "warmup",
        ),
    ]


def _onnx_cases(tmp):
    pytest.importorskip("onnxruntime")
    path = sl.export_onnx(PLAN, tmp / "ok.onnx")
    sess = sl.OnnxPlan(path)
    return [
        (
            "OnnxPlan unknown provider",
            lambda: sl.OnnxPlan(path, providers=["TensorrtExecutionProvider"]),
            "providers",
        ),
        ("OnnxPlan providers str", lambda: sl.OnnxPlan(path, providers="CPUExecutionProvider"), "providers"),
        ("OnnxPlan threads", lambda: sl.OnnxPlan(path, threads=0), "threads"),
        ("OnnxPlan optimize", lambda: sl.OnnxPlan(path, optimize="yes"), "optimize"),
        ("OnnxPlan call tensor", lambda: sess(X[:1]), "x"),
        ("OnnxPlan call shape", lambda: sess(np.zeros((1, 1, 8, 9), np.float32)), "x"),
        ("OnnxPlan call float64", lambda: sess(np.zeros((1, 1, 8, 8))), "x"),
        ("OnnxPlan fixed batch", lambda: sess(np.zeros((3, 1, 8, 8), np.float32)), "x"),
    ]


ALLOWED = (TypeError, ValueError, RuntimeError, FileNotFoundError, pickle.UnpicklingError)


def _check_case(thunk, names):
    try:
        thunk()
    except Exception as e:  # the point is to see what comes out
        err = e
    else:
        raise AssertionError("no error was raised")
    msg = str(err)
    frames = traceback.extract_tb(err.__traceback__)
    where = frames[-1].filename.replace("\\", "/")
    assert "paperworks/slienet/" in where or "paperworks/core/validate" in where, (
        f"raised outside the package's own checks: {type(err).__name__} at {where}:{frames[-1].lineno}: {msg}"
    )
    assert isinstance(err, ALLOWED), f"an unexpected error type {type(err).__name__}: {msg}"
    assert "\n" not in msg, f"a multi-line message: {msg!r}"
    assert names in msg, f"the message does not name {names!r}: {msg!r}"


def test_every_invalid_call_gets_a_clear_error_from_the_package(tmp_path):
    cases = _cases(tmp_path)
    assert len(cases) >= 200
    failures = []
    for case_id, thunk, names in cases:
        try:
            _check_case(thunk, names)
        except AssertionError as e:
            failures.append(f"{case_id}: {str(e).splitlines()[0]}")
    assert not failures, f"{len(failures)} of {len(cases)} cases unclear:\n" + "\n".join(failures)


def test_onnx_invalid_calls(tmp_path):
    failures = []
    for case_id, thunk, names in _onnx_cases(tmp_path):
        try:
            _check_case(thunk, names)
        except AssertionError as e:
            failures.append(f"{case_id}: {str(e).splitlines()[0]}")
    assert not failures, "\n".join(failures)


def test_cifar_labels_out_of_range_and_crafted_pickle(tmp_path):
    rng = np.random.default_rng(0)
    batch = {
        b"data": rng.integers(0, 256, (3, 3072), dtype=np.uint8),
        b"fine_labels": [1, 200, 3],
        b"coarse_labels": [1, 2, 3],
    }
    (tmp_path / "train").write_bytes(pickle.dumps(batch))
    with pytest.raises(ValueError, match=r"fine labels expected in \[0, 99\], got values in \[1, 200\]"):
        sl.load_cifar100(tmp_path)
    sl.load_cifar100(tmp_path, label="coarse")  # the coarse labels are fine
    batch[b"fine_labels"] = [0.5, 1, 2]
    (tmp_path / "train").write_bytes(pickle.dumps(batch))
    with pytest.raises(ValueError, match="integer fine labels"):
        sl.load_cifar100(tmp_path)


def test_training_that_diverges_raises_instead_of_returning_nan_weights():
    m = _model()
    cfg = sl.TrainConfig(mode="slie", epochs=2, batch_size=3, lr=1e9)
    with pytest.raises(FloatingPointError, match="stopped being finite"):
        sl.train_multi_exit(m, X * 1e3, Y, cfg)


def test_valid_calls_still_pass():
    """The checks reject what they should and nothing more (the happy paths of the battery)."""
    sel = sl.calibrate_subset(P, Y, 2)
    assert sel.depth == 2
    probs, ex = sl.dynamic_exit(P, 0.5)
    assert probs.shape == (6, 4) and ex.shape == (6,)
    assert 0.0 <= sl.choose_threshold(P, Y, [1, 2, 3]) <= 1.0
    assert sl.choose_threshold(P, Y.numpy(), np.array([1.0, 2.0, 3.0])) in sl.THRESHOLD_GRID
    assert math.isfinite(float(sl.self_distillation_loss(LOGITS[0], LOGITS, Y, torch.ones(3))))
    with torch.no_grad():
        assert torch.isfinite(PLAN.predict_proba(X)).all()
        assert RUNNER(X[:1]).shape == (1, 4)


def test_the_battery_check_can_fail():
    """A raw error from torch (not the package's own check) or an unnamed argument fails the check."""
    with pytest.raises(AssertionError, match="outside the package"):
        _check_case(lambda: torch.zeros(2)[torch.tensor(5)], "x")
    with pytest.raises(AssertionError, match="does not name"):
        _check_case(lambda: sl.subset_masks(0), "depth")
