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

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paperworks.core import torch_threads

from .backbones import MultiExitNet
from .training import NesterovSGD, cosine_lr

__all__ = [
    "CascadeHeads",
    "DynamicExitRunner",
    "GeometricEnsemble",
    "ZTWModel",
    "choose_threshold",
    "dynamic_exit",
    "exit_segments",
    "train_ztw",
]


def _check_members(member_probs: torch.Tensor) -> torch.Tensor:
    p = torch.as_tensor(member_probs)
    if p.dim() != 3 or 0 in p.shape:
        raise ValueError(
            f"member_probs: expected a non-empty (M, N, C) tensor of exit softmaxes, got {tuple(p.shape)}"
        )
    if not bool(torch.isfinite(p).all()):
        raise ValueError("member_probs: contains NaN or inf")
    return p


def dynamic_exit(member_probs: torch.Tensor, threshold: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample early exit over exits ``(M, N, C)`` (ICs then final): returns ``(probs (N, C), exit (N,))``.

    Sample ``n`` leaves at the first exit ``m`` with ``max_c p[m, n, c] >= threshold``; the last exit
    always answers.
    """
    p = _check_members(member_probs)
    if not 0.0 <= threshold <= 1.0 + 1e-9:
        raise ValueError(f"threshold: expected a confidence in [0, 1], got {threshold}")
    conf = p.amax(-1)  # (M, N)
    ok = conf >= threshold
    ok[-1] = True
    exit_idx = ok.float().argmax(0)  # first True
    probs = p[exit_idx, torch.arange(p.shape[1])]
    return probs, exit_idx


def choose_threshold(
    member_probs: torch.Tensor,
    labels: torch.Tensor,
    member_costs: Sequence[float],
    *,
    tolerance: float = 0.01,
    grid: Sequence[float] | None = None,
) -> float:
    """Calibrate the exit threshold: the cheapest threshold whose held-out accuracy is within
    ``tolerance`` of the best threshold's (grid 0.50, 0.51, ..., 0.99 and 1.0 = no early exit)."""
    p = _check_members(member_probs)
    costs = torch.as_tensor(list(member_costs), dtype=torch.float64)
    if costs.shape != (p.shape[0],):
        raise ValueError(f"member_costs: expected {p.shape[0]} costs (one per exit), got {costs.numel()}")
    y = torch.as_tensor(labels).long()
    grid = [round(0.5 + 0.01 * i, 2) for i in range(50)] + [1.0] if grid is None else list(grid)
    accs, cost = [], []
    for q in grid:
        probs, ex = dynamic_exit(p, q)
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
        if not segments:
            raise ValueError("segments: expected at least one segment")
        self.segments = list(segments)
        self.threshold = float(threshold)
        self.combine = combine

    def __call__(self, x):
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

    @classmethod
    def from_onnx(cls, paths: Sequence[str], threshold: float, threads: int = 1) -> DynamicExitRunner:
        import onnxruntime as ort

        sessions = []
        for path in paths:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.log_severity_level = 3
            s = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
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
        self.num_classes = model.num_classes
        self.pools = nn.ModuleList()
        self.fcs = nn.ModuleList()
        for j, pos in enumerate(model.ic_after):
            side = min(model.block_sizes[pos], 4)
            self.pools.append(nn.AdaptiveAvgPool2d(side))
            extra = model.num_classes if j > 0 else 0
            self.fcs.append(nn.Linear(model.block_channels[pos] * side * side + extra, model.num_classes))

    def forward(self, features: Sequence[torch.Tensor]) -> torch.Tensor:
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
        self.raw = nn.Parameter(torch.full((num_members, num_members), 0.5413))  # softplus -> 1.0
        self.bias = nn.Parameter(torch.zeros(num_members, num_classes))
        self.register_buffer("mask", torch.tril(torch.ones(num_members, num_members)))

    def weights(self) -> torch.Tensor:
        return F.softplus(self.raw) * self.mask

    def forward(self, log_probs: torch.Tensor) -> torch.Tensor:
        z = torch.einsum("ij,jnc->inc", self.weights(), log_probs) + self.bias[:, None, :]
        return F.softmax(z, dim=-1)

    def fit(
        self, log_probs: torch.Tensor, labels: torch.Tensor, steps: int = 200, lr: float = 0.05
    ) -> GeometricEnsemble:
        """Fit ``w, b`` by minimising the members' summed NLL on held-out ``log_probs`` (M, N, C)."""
        y = torch.as_tensor(labels).long()
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
        self.backbone, self.heads, self.ensemble = backbone, heads, ensemble

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, feats = self.backbone.features(x)
        logits = torch.cat([self.heads(feats), self.backbone.head(h)[None]], 0)
        return self.ensemble(F.log_softmax(logits, -1))

    def runner(self, threshold: float) -> DynamicExitRunner:
        """Sample-wise ZTW exit, eager: cascaded heads and the running geometric ensemble."""
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
    if threads is None:
        return _train_ztw(backbone, x_train, y_train, x_cal, y_cal, epochs, batch_size, lr, seed)
    with torch_threads(threads):
        return _train_ztw(backbone, x_train, y_train, x_cal, y_cal, epochs, batch_size, lr, seed)


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
    xt = torch.as_tensor(x_train, dtype=torch.float32)
    yt = torch.as_tensor(y_train).long()
    with torch.no_grad():
        feats = [
            torch.cat(f)
            for f in zip(
                *(backbone.features(xt[s : s + 512])[1] for s in range(0, len(xt), 512)), strict=True
            )
        ]
    heads = CascadeHeads(backbone)
    opt = NesterovSGD(list(heads.parameters()), momentum=0.9, weight_decay=5e-4)
    gen = torch.Generator().manual_seed(int(seed))
    steps = epochs * max(1, len(xt) // batch_size)
    step = 0
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        for s in range(0, max(1, len(xt) - batch_size + 1), batch_size):
            idx = perm[s : s + batch_size]
            logits = heads([f[idx] for f in feats])
            loss = F.cross_entropy(logits.flatten(0, 1), yt[idx].repeat(logits.shape[0]))
            opt.zero_grad()
            loss.backward()
            opt.step(cosine_lr(lr, step, steps))
            step += 1
    heads.eval()
    ens = GeometricEnsemble(len(backbone.ic_after) + 1, backbone.num_classes)
    model = ZTWModel(backbone, heads, ens).eval()
    with torch.no_grad():
        xc = torch.as_tensor(x_cal, dtype=torch.float32)
        h, fc = backbone.features(xc)
        logits = torch.cat([heads(fc), backbone.head(h)[None]], 0)
    ens.fit(F.log_softmax(logits, -1), torch.as_tensor(y_cal))
    for p in model.parameters():
        p.requires_grad_(False)
    return model
