"""Multi-exit backbones: ResNet-56 (CIFAR style), VGG-16 and MobileNetV1, with width/depth knobs.

Every backbone is a :class:`MultiExitNet`: a stem, a list of blocks, internal classifiers (ICs,
:class:`~paperworks.slienet.heads.MixedPoolIC`) after selected blocks and a final classifier (global
average pool + linear). ``forward(x)`` with ``x`` of shape ``(B, in_channels, image_size,
image_size)`` returns ``(final_logits (B, C), ic_logits (K, B, C))``. ICs sit after evenly spaced
blocks (Shallow-Deep Networks, arXiv 1810.07052, place them at about 15/30/45/60/75/90 % of the
FLOPs; the SLIENet code uses 6 ICs after blocks 5, 9, ..., 25 of ResNet-56's 27).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from paperworks.core import validate

from ._checks import as_images, check_module, int_sequence
from .heads import MixedPoolIC

__all__ = [
    "MultiExitNet",
    "check_images",
    "count_flops",
    "default_ic_positions",
    "mobilenet_v1",
    "resnet56",
    "vgg16",
]


def check_images(x: torch.Tensor, in_channels: int, image_size: int, name: str = "x") -> None:
    """Raise a clear error unless ``x`` is a finite float tensor of shape ``(B>=1, in_channels, S, S)``.

    The NaN/inf check reads the values (one host sync); it runs in eager calls only, not while torch
    traces, compiles or exports, so a captured graph stays free of data-dependent branches.
    """
    validate.positive_int(in_channels, "in_channels")
    validate.positive_int(image_size, "image_size")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    as_images(x, name, in_channels=in_channels, image_size=image_size)


def default_ic_positions(num_blocks: int, num_ics: int = 6) -> tuple[int, ...]:
    """Evenly spaced IC positions (0-based block indices): ``floor((i + 1) * (L - 1) / (K + 1))``."""
    num_blocks = validate.int_in_range(num_blocks, "num_blocks", 2)
    num_ics = validate.int_in_range(num_ics, "num_ics", 1)
    if num_ics >= num_blocks:
        raise ValueError(f"num_ics: expected 1 <= num_ics < num_blocks={num_blocks}, got {num_ics}")
    pos = sorted({(i + 1) * (num_blocks - 1) // (num_ics + 1) for i in range(num_ics)})
    if len(pos) != num_ics:
        raise ValueError(f"num_ics: {num_ics} ICs do not fit between {num_blocks} blocks")
    return tuple(pos)


class MultiExitNet(nn.Module):
    """A backbone with internal classifiers.

    Attributes: ``stem`` (module), ``blocks`` (ModuleList), ``ic_after`` (block index of each IC,
    increasing), ``ics`` (ModuleList of heads), ``head`` (final classifier), ``block_channels`` and
    ``block_sizes`` (output channels / spatial side of every block), ``in_channels``, ``image_size``,
    ``num_classes``. :attr:`ic_costs` is each IC's cumulative backbone FLOPs fraction.
    """

    def __init__(
        self,
        stem: nn.Module,
        blocks: Sequence[nn.Module],
        block_channels: Sequence[int],
        block_sizes: Sequence[int],
        *,
        num_classes: int,
        in_channels: int,
        image_size: int,
        ic_after: Sequence[int] | None = None,
        num_ics: int = 6,
    ) -> None:
        super().__init__()
        check_module(stem, "stem")
        if isinstance(blocks, nn.Module) and not isinstance(blocks, nn.ModuleList | nn.Sequential):
            raise TypeError("blocks: expected a sequence of modules, got a single module")
        blocks = list(blocks)
        if len(blocks) < 2:
            raise ValueError(
                f"blocks: expected at least 2 blocks (ICs sit between blocks), got {len(blocks)}"
            )
        for i, b in enumerate(blocks):
            check_module(b, f"blocks[{i}]")
        num_classes = validate.int_in_range(num_classes, "num_classes", 2)
        in_channels = validate.positive_int(in_channels, "in_channels")
        image_size = validate.positive_int(image_size, "image_size")
        block_channels = int_sequence(block_channels, "block_channels", lo=1)
        block_sizes = int_sequence(block_sizes, "block_sizes", lo=1)
        if len(block_channels) != len(blocks) or len(block_sizes) != len(blocks):
            raise ValueError(
                f"block_channels, block_sizes: expected one entry per block ({len(blocks)}), got "
                f"{len(block_channels)} and {len(block_sizes)}"
            )
        self.stem = stem
        self.blocks = nn.ModuleList(blocks)
        self.block_channels = tuple(int(c) for c in block_channels)
        self.block_sizes = tuple(int(s) for s in block_sizes)
        self.num_classes = int(num_classes)
        self.in_channels = int(in_channels)
        self.image_size = int(image_size)
        n = len(self.blocks)
        pos = default_ic_positions(n, num_ics) if ic_after is None else int_sequence(ic_after, "ic_after")
        if not pos or list(pos) != sorted(set(pos)) or pos[0] < 0 or pos[-1] >= n - 1:
            raise ValueError(
                f"ic_after: expected distinct increasing block indices in [0, {n - 2}] (an IC after the "
                f"last block would duplicate the final classifier), got {pos}"
            )
        self.ic_after = pos
        self.ics = nn.ModuleList(
            MixedPoolIC(self.block_channels[i], self.block_sizes[i], num_classes) for i in pos
        )
        self.head = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(self.block_channels[-1], num_classes)
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        self._costs: tuple[float, ...] | None = None

    @property
    def num_ics(self) -> int:
        return len(self.ic_after)

    @property
    def ic_costs(self) -> tuple[float, ...]:
        """Cumulative multiply-adds of the blocks up to each IC, as a fraction of all blocks' (the stem
        and the heads not counted, as in the authors' ``_compute_ic_costs``)."""
        if self._costs is None:
            per_block = block_flops(self)
            total = sum(per_block)
            cum, acc = [], 0
            for f in per_block:
                acc += f
                cum.append(acc)
            self._costs = tuple(cum[i] / total for i in self.ic_after)
        return self._costs

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, in_channels, S, S) -> (final logits (B, C), IC logits (K, B, C))``.

        ``x`` is checked (shape, dtype, and in eager calls NaN/inf: one host sync)."""
        as_images(x, "x", in_channels=self.in_channels, image_size=self.image_size)
        h = self.stem(x)
        outs = []
        k = 0
        for i, block in enumerate(self.blocks):
            h = block(h)
            if k < len(self.ic_after) and i == self.ic_after[k]:
                outs.append(self.ics[k](h))
                k += 1
        return self.head(h), torch.stack(outs)

    def features(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Final feature map and the feature maps at every IC position (for heads on a frozen body)."""
        as_images(x, "x", in_channels=self.in_channels, image_size=self.image_size)
        h = self.stem(x)
        feats = []
        for i, block in enumerate(self.blocks):
            h = block(h)
            if i in self.ic_after:
                feats.append(h)
        return h, feats


def count_flops(module: nn.Module, x: torch.Tensor) -> int:
    """Multiply-adds of ``Conv2d`` and ``Linear`` layers for one forward pass of ``x``, per sample."""
    check_module(module, "module")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x: expected a torch.Tensor, got {type(x).__name__}")
    if x.dim() == 0 or x.shape[0] == 0:
        raise ValueError(f"x: expected a batch of at least one input, got shape {tuple(x.shape)}")
    total = 0

    def conv_hook(m: nn.Conv2d, _inp: tuple, out: torch.Tensor) -> None:
        nonlocal total
        k = m.kernel_size[0] * m.kernel_size[1] * (m.in_channels // m.groups)
        total += int(out[0].numel()) * k

    def lin_hook(m: nn.Linear, _inp: tuple, out: torch.Tensor) -> None:
        nonlocal total
        total += int(out[0].numel()) * m.in_features

    hooks = []
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(lin_hook))
    try:
        with torch.no_grad():
            module(x[:1])
    finally:
        for h in hooks:
            h.remove()
    return total


def block_flops(net: MultiExitNet) -> list[int]:
    """Multiply-adds of each backbone block (convolutions incl. the shortcut's; the stem not counted,
    as in the authors' code)."""
    was_training = net.training
    net.eval()
    x = torch.zeros(1, net.in_channels, net.image_size, net.image_size)
    out = []
    with torch.no_grad():
        h = net.stem(x)
        for block in net.blocks:
            out.append(count_flops(block, h))
            h = block(h)
    net.train(was_training)
    return out


# --------------------------------------------------------------------------------------------
# ResNet-56 (He et al. 2016, CIFAR variant: 3 stages of n basic blocks, 6n + 2 layers)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


def _check_knobs(num_classes: int, width: float, image_size: int, in_channels: int) -> None:
    validate.int_in_range(num_classes, "num_classes", 2)
    validate.positive_float(width, "width")
    validate.int_in_range(image_size, "image_size", 4)
    validate.positive_int(in_channels, "in_channels")


def resnet56(
    num_classes: int = 100,
    *,
    width: int = 16,
    blocks_per_stage: int = 9,
    image_size: int = 32,
    in_channels: int = 3,
    ic_after: Sequence[int] | None = None,
    num_ics: int = 6,
) -> MultiExitNet:
    """CIFAR ResNet with ``3 * blocks_per_stage`` basic blocks (9: ResNet-56) of ``width, 2w, 4w`` channels.

    Default ICs: after blocks 4, 8, ..., 24 (0-based) for ResNet-56, as in the SLIENet code; else
    evenly spaced.
    """
    _check_knobs(num_classes, 1.0, image_size, in_channels)
    validate.positive_int(width, "width")  # channels of the first stage
    validate.positive_int(blocks_per_stage, "blocks_per_stage")
    if ic_after is None and blocks_per_stage == 9 and num_ics == 6:
        ic_after = (4, 8, 12, 16, 20, 24)
    stem = nn.Sequential(nn.Conv2d(in_channels, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
    blocks, chans, sizes = [], [], []
    cin, size = width, image_size
    for stage, cout in enumerate((width, 2 * width, 4 * width)):
        for j in range(blocks_per_stage):
            stride = 2 if stage > 0 and j == 0 else 1
            size = (size + stride - 1) // stride
            blocks.append(BasicBlock(cin, cout, stride))
            chans.append(cout)
            sizes.append(size)
            cin = cout
    return MultiExitNet(
        stem,
        blocks,
        chans,
        sizes,
        num_classes=num_classes,
        in_channels=in_channels,
        image_size=image_size,
        ic_after=ic_after,
        num_ics=num_ics,
    )


# --------------------------------------------------------------------------------------------
# VGG-16 (Simonyan & Zisserman 2015, with batch norm; CIFAR variant)

_VGG16 = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


def vgg16(
    num_classes: int = 100,
    *,
    width: float = 1.0,
    image_size: int = 32,
    in_channels: int = 3,
    ic_after: Sequence[int] | None = None,
    num_ics: int = 6,
) -> MultiExitNet:
    """VGG-16-BN: 13 conv blocks (conv-BN-ReLU, a max-pool folded into the block before it), channels
    scaled by ``width``.

    A max-pool is skipped once the feature map is 1 x 1, so small inputs work.
    """
    _check_knobs(num_classes, width, image_size, in_channels)
    blocks, chans, sizes = [], [], []
    cin, size = in_channels, image_size
    cfg = list(_VGG16)
    for i, v in enumerate(cfg):
        if v == "M":
            continue
        cout = max(1, round(int(v) * width))
        layers: list[nn.Module] = [nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
        if i + 1 < len(cfg) and cfg[i + 1] == "M" and size >= 2:
            layers.append(nn.MaxPool2d(2))
            size //= 2
        blocks.append(nn.Sequential(*layers))
        chans.append(cout)
        sizes.append(size)
        cin = cout
    return MultiExitNet(
        nn.Identity(),
        blocks,
        chans,
        sizes,
        num_classes=num_classes,
        in_channels=in_channels,
        image_size=image_size,
        ic_after=ic_after,
        num_ics=num_ics,
    )


# --------------------------------------------------------------------------------------------
# MobileNetV1 (Howard et al. 2017, CIFAR variant: stride-1 stem)

_MOBILENET = (
    (64, 1),
    (128, 2),
    (128, 1),
    (256, 2),
    (256, 1),
    (512, 2),
    (512, 1),
    (512, 1),
    (512, 1),
    (512, 1),
    (512, 1),
    (1024, 2),
    (1024, 1),
)


class DepthwiseSeparable(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn2(self.pw(F.relu(self.bn1(self.dw(x))))))


def mobilenet_v1(
    num_classes: int = 100,
    *,
    width: float = 1.0,
    image_size: int = 32,
    in_channels: int = 3,
    ic_after: Sequence[int] | None = None,
    num_ics: int = 6,
) -> MultiExitNet:
    """MobileNetV1 with width multiplier ``width``: a 3x3 stem and 13 depthwise-separable blocks."""
    _check_knobs(num_classes, width, image_size, in_channels)
    c0 = max(1, round(32 * width))
    stem = nn.Sequential(nn.Conv2d(in_channels, c0, 3, 1, 1, bias=False), nn.BatchNorm2d(c0), nn.ReLU())
    blocks, chans, sizes = [], [], []
    cin, size = c0, image_size
    for c, stride in _MOBILENET:
        cout = max(1, round(c * width))
        blocks.append(DepthwiseSeparable(cin, cout, stride))
        size = (size + stride - 1) // stride
        chans.append(cout)
        sizes.append(size)
        cin = cout
    return MultiExitNet(
        stem,
        blocks,
        chans,
        sizes,
        num_classes=num_classes,
        in_channels=in_channels,
        image_size=image_size,
        ic_after=ic_after,
        num_ics=num_ics,
    )
