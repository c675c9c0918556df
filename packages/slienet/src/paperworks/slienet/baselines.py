"""Baselines: Shallow-Deep Networks' per-sample early exit and Zero Time Waste's cascaded ensembles.

- SDN (Kaya et al. 2019, arXiv 1810.07052): ICs trained with the SDN weight ramp (``TrainConfig(mode=
  "sdn")``); at inference a sample leaves at the first IC whose top softmax probability reaches a
  threshold ``q``, else at the final classifier. :func:`dynamic_exit` evaluates this for a whole set
  at once; :class:`DynamicExitRunner` runs it the way a deployment must, one sample at a time with a
  data-dependent branch after each IC (eagerly, or as a chain of ONNX Runtime sessions, one per
  segment, the CPU analogue of a multi-engine TensorRT deployment).
- ZTW (Wołczyk et al. 2021, arXiv 2106.05409): ICs trained on a frozen, conventionally trained
  backbone; IC ``i`` also receives the (detached) logits of IC ``i-1`` (cascading); member ``i`` of the
  ensemble predicts ``softmax(sum_{j<=i} w_ij log p_j + b_i)`` with ``w_ij >= 0`` and ``b_i`` fitted
  on held-out data (geometric ensembling); exits use the same confidence threshold rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paperworks.core import torch_threads, validate

from ._checks import as_images, as_labels, as_probabilities, check_module, in_graph_capture
from .backbones import MultiExitNet
from .training import NesterovSGD, cosine_lr

__all__ = [
    "CascadeHeads",
    "DynamicExitRunner",
    "GeometricEnsemble",
    "THRESHOLD_GRID",
    "ZTWModel",
    "choose_threshold",
    "dynamic_exit",
    "exit_segments",
    "train_ztw",
]


def _check_members(member_probs: torch.Tensor) -> torch.Tensor:
    return as_probabilities(member_probs, "member_probs", ndim=3)


def dynamic_exit(member_probs: torch.Tensor, threshold: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample early exit over exits ``(M, N, C)`` (ICs then final): returns ``(probs (N, C), exit (N,))``.

    ``member_probs`` are softmax outputs (not logits). Sample ``n`` leaves at the first exit ``m`` with
    ``max_c p[m, n, c] >= threshold``; the last exit always answers. ``threshold``: a number >= 0 (0:
    every sample leaves at the first exit; 1: only certain predictions leave early; above 1: none do).
    """
    p = _check_members(member_probs)
    threshold = validate.nonnegative_float(threshold, "threshold")
    return _dynamic_exit(p, threshold)


def _dynamic_exit(p: torch.Tensor, threshold: float) -> tuple[torch.Tensor, torch.Tensor]:
    conf = p.amax(-1)  # (M, N)
    ok = conf >= threshold
    ok[-1] = True
    exit_idx = ok.float().argmax(0)  # first True
    probs = p[exit_idx, torch.arange(p.shape[1])]
    return probs, exit_idx


#: the default threshold grid of :func:`choose_threshold`: 0.00, 0.01, ..., 1.00 (0: every sample leaves
#: at the first exit; 1: only certain predictions leave early). With 100 classes the top softmax
#: probability often sits below 0.5, so a grid starting at 0.5 had its floor chosen every time.
THRESHOLD_GRID = tuple(round(0.01 * i, 2) for i in range(101))


def choose_threshold(
    member_probs: torch.Tensor,
    labels: torch.Tensor,
    member_costs: Sequence[float],
    *,
    tolerance: float = 0.01,
    grid: Sequence[float] | None = None,
) -> float:
    """Calibrate the exit threshold: the cheapest threshold whose held-out accuracy is within
    ``tolerance`` of the best threshold's (default grid :data:`THRESHOLD_GRID`, 0.00..1.00 by 0.01).

    ``member_probs`` (M, N, C) softmax outputs of the exits on held-out data, ``labels`` (N,),
    ``member_costs`` (M,) the cumulative cost of reaching each exit (finite, >= 0, non-decreasing).
    """
    p = _check_members(member_probs)
    y = as_labels(labels, "labels", n=p.shape[1], num_classes=p.shape[2])
    if isinstance(member_costs, str | bytes) or not isinstance(
        member_costs, Sequence | np.ndarray | torch.Tensor
    ):
        raise TypeError(f"member_costs: expected a sequence of numbers, got {type(member_costs).__name__}")
    costs_list = [
        validate.nonnegative_float(
            float(c) if isinstance(c, torch.Tensor | np.generic) else c, "member_costs"
        )
        for c in member_costs
    ]
    if len(costs_list) != p.shape[0]:
        raise ValueError(f"member_costs: expected {p.shape[0]} costs (one per exit), got {len(costs_list)}")
    if any(b < a for a, b in itertools.pairwise(costs_list)):
        raise ValueError(f"member_costs: expected non-decreasing cumulative costs, got {costs_list}")
    costs = torch.tensor(costs_list, dtype=torch.float64)
    tolerance = validate.nonnegative_float(tolerance, "tolerance")
    if grid is None:
        grid = list(THRESHOLD_GRID)
    else:
        if isinstance(grid, str | bytes) or not isinstance(grid, Sequence | np.ndarray):
            raise TypeError(f"grid: expected a sequence of thresholds, got {type(grid).__name__}")
        grid = [validate.nonnegative_float(q, "grid") for q in grid]
        if not grid:
            raise ValueError("grid: expected at least one threshold")
    accs, cost = [], []
    for q in grid:
        probs, ex = _dynamic_exit(p, q)
        accs.append(float((probs.argmax(-1) == y).double().mean()))
        cost.append(float(costs[ex].mean()))
    best = max(accs)
    ok = [i for i, a in enumerate(accs) if a >= best - tolerance]
    return float(grid[min(ok, key=lambda i: (cost[i], -accs[i]))])


# ----------------------------------------------------------------------------------------------
# The segments of a multi-exit network, for sample-wise exits at deployment


class _Segment(nn.Module):
    """Blocks ``[start, stop]`` then an exit: ``h -> (h_out, probs)``; the last segment ends in the head."""

    def __init__(
        self, stem: nn.Module | None, blocks: Sequence[nn.Module], exit_head: nn.Module, last: bool
    ) -> None:
        super().__init__()
        self.stem = stem if stem is not None else nn.Identity()
        self.blocks = nn.Sequential(*blocks)
        self.exit_head = exit_head
        self.last = last

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.blocks(self.stem(h))
        return h, F.softmax(self.exit_head(h), dim=-1)


def exit_segments(model: MultiExitNet) -> list[nn.Module]:
    """Split ``model`` into K + 1 segments, one per exit (each ends at an IC, the last at the head)."""
    check_module(model, "model", MultiExitNet)
    segs: list[nn.Module] = []
    start = 0
    for j, pos in enumerate(model.ic_after):
        segs.append(
            _Segment(model.stem if j == 0 else None, model.blocks[start : pos + 1], model.ics[j], False)
        )
        start = pos + 1
    segs.append(_Segment(None, model.blocks[start:], model.head, True))
    return segs


class DynamicExitRunner:
    """Sample-wise early exit at deployment: run segment after segment, stop once confident.

    ``segments``: callables ``h -> (h_out, probs)`` (torch modules, or ONNX Runtime sessions wrapped
    by :meth:`from_onnx`); ``combine`` optionally maps the list of exit outputs so far to the current
    member's probabilities (ZTW's geometric ensemble). The branch after each exit depends on the
    data: this is what a single static graph cannot express.
    """

    def __init__(
        self,
        segments: Sequence[Callable],
        threshold: float,
        combine: Callable[[list], object] | None = None,
    ) -> None:
        if isinstance(segments, str | bytes) or not isinstance(segments, Sequence):
            raise TypeError(f"segments: expected a sequence of callables, got {type(segments).__name__}")
        if not segments:
            raise ValueError("segments: expected at least one segment")
        for i, seg in enumerate(segments):
            if not callable(seg):
                raise TypeError(
                    f"segments[{i}]: expected a callable h -> (h_out, probs), got {type(seg).__name__}"
                )
        if combine is not None and not callable(combine):
            raise TypeError(f"combine: expected a callable or None, got {type(combine).__name__}")
        self.segments = list(segments)
        self.threshold = validate.nonnegative_float(threshold, "threshold")
        self.combine = combine

    def __call__(self, x):
        """One sample ``x (1, ...)`` (a tensor or a NumPy array) -> its exit's probabilities ``(1, C)``."""
        shape = getattr(x, "shape", None)
        if shape is None or len(shape) < 2 or shape[0] != 1:
            raise ValueError(
                f"x: expected one sample of shape (1, ...) (the exit decision is per sample), got "
                f"{tuple(shape) if shape is not None else type(x).__name__}"
            )
        h = x
        outs = []
        probs = None
        last = len(self.segments) - 1
        for j, seg in enumerate(self.segments):
            h, p = seg(h)
            outs.append(p)
            probs = self.combine(outs) if self.combine is not None else p
            if j < last and float(probs.max()) >= self.threshold:
                break
        return probs

    def replay(self, x, exit_index: int):
        """Run ``x (1, ...)`` to exit ``exit_index`` (0-based) as :meth:`__call__` would if the confidence
        first reached the threshold there: the same segments, the same confidence read-back and branch
        after each exit, only the decision taken from a recorded exit.

        For timing an exit profile recorded on one network on another of the same exits (e.g. the
        exits of a trained laptop-size model replayed on a full-size one with random weights, whose
        latency does not depend on its weights).
        """
        last = len(self.segments) - 1
        exit_index = validate.int_in_range(exit_index, "exit_index", 0, last)
        h = x
        outs = []
        probs = None
        for j, seg in enumerate(self.segments):
            h, p = seg(h)
            outs.append(p)
            probs = self.combine(outs) if self.combine is not None else p
            reached = float(probs.max()) >= self.threshold  # the read-back a real exit decision needs
            if j == exit_index:
                # whether this network's own confidence would have exited here too (a diagnostic)
                self.last_replay_agreed = reached or j == last
                break
        return probs

    @classmethod
    def from_onnx(
        cls,
        paths: Sequence[str | Path],
        threshold: float,
        threads: int = 1,
        *,
        providers: Sequence[str] | None = None,
    ) -> DynamicExitRunner:
        """The runner over ONNX Runtime sessions, one per segment file (``h -> (h_out, probs)``).

        ``providers``: ONNX Runtime execution providers (default: the CPU provider); see
        :class:`~paperworks.slienet.deploy.OnnxPlan`.
        """
        from .deploy import ort_session

        if isinstance(paths, str | bytes | Path) or not isinstance(paths, Sequence) or not paths:
            raise TypeError("paths: expected a non-empty list of segment ONNX files")
        threshold = validate.nonnegative_float(threshold, "threshold")
        sessions = []
        for path in paths:
            s = ort_session(path, threads=threads, providers=providers)
            name = s.get_inputs()[0].name

            def run(h: np.ndarray, s=s, name=name) -> tuple[np.ndarray, np.ndarray]:
                a, b = s.run(None, {name: h})
                return a, b

            sessions.append(run)
        return cls(sessions, threshold)


# ----------------------------------------------------------------------------------------------
# Zero Time Waste


class CascadeHeads(nn.Module):
    """ZTW's cascading ICs on a frozen backbone: head ``i`` maps ``[pool(feature_i), logits_{i-1}]``
    to logits. ``forward(features: list of (B, C_i, S_i, S_i)) -> (K, B, num_classes)``."""

    def __init__(self, model: MultiExitNet) -> None:
        super().__init__()
        check_module(model, "model", MultiExitNet)
        self.num_classes = model.num_classes
        self.pools = nn.ModuleList()
        self.fcs = nn.ModuleList()
        for j, pos in enumerate(model.ic_after):
            side = min(model.block_sizes[pos], 4)
            self.pools.append(nn.AdaptiveAvgPool2d(side))
            extra = model.num_classes if j > 0 else 0
            self.fcs.append(nn.Linear(model.block_channels[pos] * side * side + extra, model.num_classes))

    def forward(self, features: Sequence[torch.Tensor]) -> torch.Tensor:
        if isinstance(features, torch.Tensor) or not isinstance(features, Sequence):
            raise TypeError(f"features: expected a list of feature maps, got {type(features).__name__}")
        if len(features) != len(self.fcs):
            raise ValueError(f"features: expected {len(self.fcs)} feature maps, got {len(features)}")
        outs = []
        prev = None
        for pool, fc, f in zip(self.pools, self.fcs, features, strict=True):
            z = pool(f).flatten(1)
            if prev is not None:
                z = torch.cat([z, prev.detach()], dim=1)
            prev = fc(z)
            outs.append(prev)
        return torch.stack(outs)


class GeometricEnsemble(nn.Module):
    """ZTW's geometric ensemble: member ``i`` = ``softmax(sum_{j<=i} w_ij log p_j + b_i)``.

    ``forward(log_probs (M, N, C)) -> probs (M, N, C)``; ``w = softplus(raw)`` masked to ``j <= i``.
    """

    def __init__(self, num_members: int, num_classes: int) -> None:
        super().__init__()
        num_members = validate.positive_int(num_members, "num_members")
        num_classes = validate.int_in_range(num_classes, "num_classes", 2)
        self.raw = nn.Parameter(torch.full((num_members, num_members), 0.5413))  # softplus -> 1.0
        self.bias = nn.Parameter(torch.zeros(num_members, num_classes))
        self.register_buffer("mask", torch.tril(torch.ones(num_members, num_members)))

    def _check_log_probs(self, log_probs: torch.Tensor) -> torch.Tensor:
        m, c = self.bias.shape
        if not isinstance(log_probs, torch.Tensor):
            raise TypeError(f"log_probs: expected a torch.Tensor, got {type(log_probs).__name__}")
        if (
            log_probs.dim() != 3
            or log_probs.shape[0] != m
            or log_probs.shape[2] != c
            or log_probs.shape[1] == 0
        ):
            raise ValueError(
                f"log_probs: expected shape ({m}, N, {c}) with N >= 1, got {tuple(log_probs.shape)}"
            )
        if not log_probs.is_floating_point():
            raise TypeError(f"log_probs: expected floating-point log-probabilities, got {log_probs.dtype}")
        if not in_graph_capture() and bool((log_probs > 1e-5).any()):
            raise ValueError("log_probs: expected log-probabilities (<= 0, log_softmax outputs)")
        if not in_graph_capture() and bool(torch.isnan(log_probs).any()):
            raise ValueError("log_probs: expected no NaN values")
        return log_probs

    def weights(self) -> torch.Tensor:
        return F.softplus(self.raw) * self.mask

    def forward(self, log_probs: torch.Tensor) -> torch.Tensor:
        self._check_log_probs(log_probs)
        z = torch.einsum("ij,jnc->inc", self.weights(), log_probs) + self.bias[:, None, :]
        return F.softmax(z, dim=-1)

    def fit(
        self, log_probs: torch.Tensor, labels: torch.Tensor, steps: int = 200, lr: float = 0.05
    ) -> GeometricEnsemble:
        """Fit ``w, b`` by minimising the members' summed NLL on held-out ``log_probs`` (M, N, C)."""
        lp = self._check_log_probs(log_probs)
        y = as_labels(labels, "labels", n=lp.shape[1], num_classes=lp.shape[2])
        steps = validate.positive_int(steps, "steps")
        lr = validate.positive_float(lr, "lr")
        log_probs = lp
        opt = NesterovSGD(list(self.parameters()), momentum=0.9, weight_decay=0.0)
        for step in range(steps):
            opt.zero_grad()
            z = torch.einsum("ij,jnc->inc", self.weights(), log_probs) + self.bias[:, None, :]
            loss = sum(F.cross_entropy(z[i], y) for i in range(z.shape[0]))
            loss.backward()
            opt.step(cosine_lr(lr, step, steps))
        return self


class ZTWModel(nn.Module):
    """Frozen backbone + cascading heads + geometric ensemble. ``forward(x) -> member probs (K+1, B, C)``."""

    def __init__(self, backbone: MultiExitNet, heads: CascadeHeads, ensemble: GeometricEnsemble) -> None:
        super().__init__()
        check_module(backbone, "backbone", MultiExitNet)
        check_module(heads, "heads", CascadeHeads)
        check_module(ensemble, "ensemble", GeometricEnsemble)
        if len(heads.fcs) != backbone.num_ics or ensemble.bias.shape != (
            backbone.num_ics + 1,
            backbone.num_classes,
        ):
            raise ValueError(
                f"heads, ensemble: expected {backbone.num_ics} heads and {backbone.num_ics + 1} members over "
                f"{backbone.num_classes} classes for this backbone"
            )
        self.backbone, self.heads, self.ensemble = backbone, heads, ensemble

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, feats = self.backbone.features(x)
        logits = torch.cat([self.heads(feats), self.backbone.head(h)[None]], 0)
        return self.ensemble(F.log_softmax(logits, -1))

    def runner(self, threshold: float) -> DynamicExitRunner:
        """Sample-wise ZTW exit, eager: cascaded heads and the running geometric ensemble."""
        threshold = validate.nonnegative_float(threshold, "threshold")
        bb, heads, ens = self.backbone, self.heads, self.ensemble
        k = len(bb.ic_after)
        w = ens.weights().detach()
        b = ens.bias.detach()
        state: dict = {}

        def make(j: int) -> Callable:
            start = 0 if j == 0 else bb.ic_after[j - 1] + 1
            stop = bb.ic_after[j] + 1 if j < k else len(bb.blocks)
            blocks = bb.blocks[start:stop]

            def seg(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                if j == 0:
                    h = bb.stem(h)
                    state.clear()
                for blk in blocks:
                    h = blk(h)
                if j < k:
                    z = heads.pools[j](h).flatten(1)
                    if j > 0:
                        z = torch.cat([z, state["prev"]], 1)
                    logit = heads.fcs[j](z)
                    state["prev"] = logit
                else:
                    logit = bb.head(h)
                return h, F.log_softmax(logit, -1)

            return seg

        def combine(outs: list) -> torch.Tensor:
            i = len(outs) - 1
            z = sum(w[i, j] * outs[j] for j in range(i + 1)) + b[i]
            return F.softmax(z, -1)

        return DynamicExitRunner([make(j) for j in range(k + 1)], threshold, combine)


def train_ztw(
    backbone: MultiExitNet,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_cal: np.ndarray,
    y_cal: np.ndarray,
    *,
    epochs: int = 20,
    batch_size: int = 64,
    lr: float = 0.05,
    seed: int = 0,
    threads: int | None = 1,
) -> ZTWModel:
    """Train ZTW heads on the frozen ``backbone`` (its features computed once) and fit the ensemble on
    the calibration set. Returns a :class:`ZTWModel` in eval mode.

    ``threads``: torch intra-op threads meanwhile (restored after; ``None`` leaves the setting alone).
    """
    check_module(backbone, "backbone", MultiExitNet)
    c, s, k = backbone.in_channels, backbone.image_size, backbone.num_classes
    xt = as_images(x_train, "x_train", in_channels=c, image_size=s).float()
    yt = as_labels(y_train, "y_train", n=xt.shape[0], num_classes=k)
    xc = as_images(x_cal, "x_cal", in_channels=c, image_size=s).float()
    yc = as_labels(y_cal, "y_cal", n=xc.shape[0], num_classes=k)
    epochs = validate.positive_int(epochs, "epochs")
    batch_size = validate.positive_int(batch_size, "batch_size")
    lr = validate.positive_float(lr, "lr")
    seed = validate.nonnegative_int(seed, "seed")
    if threads is None:
        return _train_ztw(backbone, xt, yt, xc, yc, epochs, batch_size, lr, seed)
    threads = validate.positive_int(threads, "threads")
    with torch_threads(threads):
        return _train_ztw(backbone, xt, yt, xc, yc, epochs, batch_size, lr, seed)


def _train_ztw(
    backbone: MultiExitNet,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_cal: np.ndarray,
    y_cal: np.ndarray,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> ZTWModel:
    backbone.eval()
    for p in backbone.parameters():
        p.requires_grad_(False)
    device = next(backbone.parameters()).device
    xt, yt = x_train.to(device), y_train.to(device)
    with torch.no_grad():
        feats = [
            torch.cat(f)
            for f in zip(
                *(backbone.features(xt[s : s + 512])[1] for s in range(0, len(xt), 512)), strict=True
            )
        ]
    heads = CascadeHeads(backbone).to(device)
    opt = NesterovSGD(list(heads.parameters()), momentum=0.9, weight_decay=1e-4)
    gen = torch.Generator().manual_seed(int(seed))
    steps = epochs * max(1, len(xt) // batch_size)
    step = 0
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=gen).to(device)
        for s in range(0, max(1, len(xt) - batch_size + 1), batch_size):
            idx = perm[s : s + batch_size]
            logits = heads([f[idx] for f in feats])
            loss = F.cross_entropy(logits.flatten(0, 1), yt[idx].repeat(logits.shape[0]))
            opt.zero_grad()
            loss.backward()
            opt.step(cosine_lr(lr, step, steps))
            step += 1
    heads.eval()
    ens = GeometricEnsemble(len(backbone.ic_after) + 1, backbone.num_classes).to(device)
    model = ZTWModel(backbone, heads, ens).eval()
    with torch.no_grad():
        h, fc = backbone.features(x_cal.to(device))
        logits = torch.cat([heads(fc), backbone.head(h)[None]], 0)
    ens.fit(F.log_softmax(logits, -1), y_cal.to(device))
    for p in model.parameters():
        p.requires_grad_(False)
    return model
