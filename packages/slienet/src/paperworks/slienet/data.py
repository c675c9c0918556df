"""Image data: a CIFAR-100 loader for its real python-pickle format, and two offline image sets.

- :func:`load_cifar100` reads the ``cifar-100-python`` folder users hold (``train``/``test`` pickles
  with ``b"data"`` (N, 3072) uint8 rows and ``b"fine_labels"``), returning ``(N, 3, 32, 32)`` float32 in
  [0, 1] and int64 labels. The pickle is read by a restricted unpickler that resolves only the globals
  such a file needs (NumPy's array reconstruction and a few builtins), so a crafted file cannot run code.
- :func:`digits_images`: scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes),
  bilinearly upsampled to ``size x size``, one channel, scaled to [0, 1].
- :func:`prototype_images`: a generated ``n_classes``-way image set. Generative model: each class
  ``c`` has a latent smooth colour prototype ``P_c`` (3 x size x size; white noise blurred by a
  Gaussian of width ``size/8``, standardised). With ``coarse_share = rho > 0`` the classes come in
  ``n_coarse`` groups (class ``c`` in group ``c mod n_coarse``, as CIFAR-100's 100 fine classes sit in
  20 super-classes) and ``P_c = std(sqrt(rho) G_g + sqrt(1 - rho) U_c)``: a prototype ``G_g`` shared by
  the group plus the class's own ``U_c`` (both smoothed noise), so classes of one group look alike. An
  observed image is ``P_c`` circularly shifted by a random offset in ``{-max_shift..max_shift}^2``,
  scaled by a contrast ``~ U(lo, hi)`` (default ``U(0.7, 1.3)``), plus a brightness offset
  ``~ N(0, 0.2)`` per channel and pixel noise ``~ N(0, noise^2)``. Latent: the prototypes, shifts,
  contrasts, brightness, noise; observed: the image and its class.
"""

from __future__ import annotations

import math
import os
import pickle
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from paperworks.core import validate

__all__ = ["load_cifar100", "digits_images", "prototype_images", "standardize", "split_indices"]


try:  # NumPy >= 2 (1.26 ships numpy._core as a forward-compatible alias)
    from numpy._core.multiarray import _reconstruct as _np_reconstruct
except ImportError:  # pragma: no cover - older NumPy
    from numpy.core.multiarray import _reconstruct as _np_reconstruct

#: (module, name) -> object: every global a CIFAR-100 python pickle may reference (its arrays are
#: pickled by NumPy's ``ndarray.__reduce__``: ``_reconstruct``, ``ndarray``, ``dtype``; files written
#: by NumPy 1 name ``numpy.core.multiarray``, by NumPy 2 ``numpy._core.multiarray``).
_CIFAR_GLOBALS = {
    ("builtins", "dict"): dict,
    ("builtins", "list"): list,
    ("builtins", "bytes"): bytes,
    ("builtins", "str"): str,
    ("builtins", "int"): int,
    ("numpy.core.multiarray", "_reconstruct"): _np_reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _np_reconstruct,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


class _CifarUnpickler(pickle.Unpickler):
    """Unpickler that resolves only :data:`_CIFAR_GLOBALS` and refuses every other global.

    ``pickle.load`` would import and call whatever a file names (``os.system``, ``eval``, ...); a
    CIFAR-100 batch is a dict of bytes, lists of ints and one uint8 array, which needs nothing else.
    """

    def find_class(self, module: str, name: str):
        key = (module, name)
        if key not in _CIFAR_GLOBALS:
            raise pickle.UnpicklingError(
                f"refusing to load global {module}.{name}: a CIFAR-100 python pickle needs only "
                "dicts, lists, bytes, ints and NumPy arrays"
            )
        return _CIFAR_GLOBALS[key]


def load_cifar100(
    root: str | Path, split: str = "train", label: str = "fine"
) -> tuple[np.ndarray, np.ndarray]:
    """Read CIFAR-100 from ``root`` (the extracted ``cifar-100-python`` folder, or its parent).

    Returns ``images (N, 3, 32, 32) float32 in [0, 1]`` and ``labels (N,) int64`` (``label="fine"``:
    100 classes, ``"coarse"``: 20 super-classes). The file is unpickled with a restricted unpickler:
    a pickle that names any global besides NumPy's array reconstruction and the builtins
    ``dict``/``list``/``bytes``/``str``/``int`` raises :class:`pickle.UnpicklingError` before anything
    of it runs.
    """
    validate.one_of(split, "split", ("train", "test"))
    validate.one_of(label, "label", ("fine", "coarse"))
    if not isinstance(root, str | os.PathLike):
        raise TypeError(f"root: expected a folder path, got {type(root).__name__}")
    root = Path(root)
    path = root / split
    if not path.is_file():
        path = root / "cifar-100-python" / split
    if not path.is_file():
        raise FileNotFoundError(
            f"root: no CIFAR-100 '{split}' pickle in {root} or {root / 'cifar-100-python'}"
        )
    with open(path, "rb") as fh:
        try:
            batch = _CifarUnpickler(fh, encoding="bytes").load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(f"{path}: {e}") from None
    key = f"{label}_labels".encode()
    if not isinstance(batch, dict) or b"data" not in batch or key not in batch:
        raise ValueError(f"{path}: expected a dict with b'data' and {key!r} (CIFAR-100 python format)")
    data = np.asarray(batch[b"data"])
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
        raise ValueError(
            f"{path}: expected uint8 data rows of 3072 bytes (3 x 32 x 32), got {data.dtype} of "
            f"shape {data.shape}"
        )
    try:
        labels = np.asarray(batch[key])
    except (TypeError, ValueError):
        raise ValueError(f"{path}: {key!r} is not a list of integers") from None
    if labels.dtype.kind not in "iu" or labels.shape != (data.shape[0],):
        raise ValueError(
            f"{path}: expected {data.shape[0]} integer {label} labels (one per image), got {labels.dtype} "
            f"of shape {labels.shape}"
        )
    n_classes = 100 if label == "fine" else 20
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(
            f"{path}: {label} labels expected in [0, {n_classes - 1}], got values in "
            f"[{labels.min()}, {labels.max()}]"
        )
    labels = labels.astype(np.int64)
    return data.reshape(-1, 3, 32, 32).astype(np.float32) / 255.0, labels


def _digits_raw() -> tuple[np.ndarray, np.ndarray]:
    """The bundled digits as ``(1797, 64)`` pixel values 0..16 and labels.

    Reads scikit-learn's own ``datasets/data/digits.csv.gz`` (what ``load_digits`` parses) without
    importing scikit-learn, which costs 5-9 s on a loaded machine; falls back to ``load_digits``.
    """
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    if spec is not None and spec.origin is not None:
        csv = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"
        if csv.is_file():
            table = np.loadtxt(csv, delimiter=",")
            if table.shape == (1797, 65):
                return table[:, :64], table[:, 64].astype(np.int64)
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data, d.target.astype(np.int64)


def digits_images(size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn digits upsampled to ``(1797, 1, size, size)`` float32 in [0, 1], labels 0..9."""
    size = validate.int_in_range(size, "size", 8)
    pixels, labels = _digits_raw()
    x = torch.from_numpy(pixels.reshape(-1, 8, 8).astype(np.float32) / 16.0)[:, None]
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x.numpy(), labels


def _smooth_noise(g: torch.Generator, n: int, size: int) -> torch.Tensor:
    """``n`` standardised smooth colour fields (3, size, size): white noise blurred by a Gaussian."""
    white = torch.randn(n, 3, size, size, generator=g)
    sigma = max(size / 8.0, 0.5)
    r = torch.arange(-size // 2, size // 2 + 1, dtype=torch.float32)
    k1 = torch.exp(-0.5 * (r / sigma) ** 2)
    k1 = k1 / k1.sum()
    pad = len(r) // 2
    blur = F.conv2d(
        F.pad(white.reshape(-1, 1, size, size), (pad, pad, 0, 0), mode="circular"), k1.view(1, 1, 1, -1)
    )
    blur = F.conv2d(F.pad(blur, (0, 0, pad, pad), mode="circular"), k1.view(1, 1, -1, 1))
    field = blur.reshape(n, 3, size, size)
    return (field - field.mean(dim=(1, 2, 3), keepdim=True)) / field.std(dim=(1, 2, 3), keepdim=True)


def prototype_images(
    n_classes: int = 100,
    per_class: int = 30,
    *,
    size: int = 16,
    noise: float = 0.6,
    max_shift: int = 2,
    n_coarse: int | None = None,
    coarse_share: float = 0.0,
    contrast: tuple[float, float] = (0.7, 1.3),
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Generated images ``(n_classes * per_class, 3, size, size)`` float32 and labels (see module doc).

    ``n_coarse`` groups (default ``max(1, n_classes // 5)``) share a ``coarse_share`` in [0, 1) of
    their classes' prototype variance; ``coarse_share = 0`` gives independent prototypes. Each image's
    contrast is uniform on ``contrast = (lo, hi)``; a range reaching down to 0 makes some images
    nearly signal-free (hard samples: an irreducible error, as blurry or occluded photos give).
    """
    n_classes = validate.int_in_range(n_classes, "n_classes", 2)
    per_class = validate.positive_int(per_class, "per_class")
    size = validate.int_in_range(size, "size", 4)
    noise = validate.nonnegative_float(noise, "noise")
    max_shift = validate.nonnegative_int(max_shift, "max_shift")
    coarse_share = validate.fraction(coarse_share, "coarse_share", open_high=True)
    n_coarse = (
        max(1, n_classes // 5)
        if n_coarse is None
        else validate.int_in_range(n_coarse, "n_coarse", 1, n_classes)
    )
    if isinstance(contrast, str | bytes) or not isinstance(contrast, tuple | list) or len(contrast) != 2:
        raise ValueError(f"contrast: expected a pair (lo, hi), got {contrast!r}")
    c_lo = validate.nonnegative_float(contrast[0], "contrast")
    c_hi = validate.nonnegative_float(contrast[1], "contrast")
    if c_hi < c_lo:
        raise ValueError(f"contrast: expected lo <= hi, got {contrast!r}")
    seed = validate.nonnegative_int(seed, "seed")
    g = torch.Generator().manual_seed(int(seed))
    proto = _smooth_noise(g, n_classes, size)
    n = n_classes * per_class
    labels = torch.arange(n_classes).repeat_interleave(per_class)
    shifts = torch.randint(-max_shift, max_shift + 1, (n, 2), generator=g)
    scale = c_lo + (c_hi - c_lo) * torch.rand(n, 1, 1, 1, generator=g)
    bright = 0.2 * torch.randn(n, 3, 1, 1, generator=g)
    pixel = torch.randn(n, 3, size, size, generator=g)
    if coarse_share > 0:
        shared = _smooth_noise(g, n_coarse, size)[torch.arange(n_classes) % n_coarse]
        proto = math.sqrt(coarse_share) * shared + math.sqrt(1 - coarse_share) * proto
        proto = (proto - proto.mean(dim=(1, 2, 3), keepdim=True)) / proto.std(dim=(1, 2, 3), keepdim=True)
    imgs = proto[labels]
    rows = (torch.arange(size)[None, :] - shifts[:, :1]) % size  # (n, size)
    cols = (torch.arange(size)[None, :] - shifts[:, 1:]) % size
    imgs = imgs[
        torch.arange(n)[:, None, None, None],
        torch.arange(3)[None, :, None, None],
        rows[:, None, :, None],
        cols[:, None, None, :],
    ]
    imgs = scale * imgs + bright + noise * pixel
    return imgs.numpy().astype(np.float32), labels.numpy().astype(np.int64)


def standardize(train: np.ndarray, *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-channel standardisation with the training set's mean and std (applied to all arrays)."""
    train = validate.finite_array(train, "train", ndim=4)
    others = tuple(
        validate.finite_array(a, f"others[{i}]", shape=(None, *train.shape[1:])) for i, a in enumerate(others)
    )
    mean = train.mean(axis=(0, 2, 3), keepdims=True)
    std = train.std(axis=(0, 2, 3), keepdims=True) + 1e-6
    return tuple(((a - mean) / std).astype(np.float32) for a in (train, *others))


def split_indices(
    labels: np.ndarray, fractions: tuple[float, float, float], seed: int
) -> tuple[np.ndarray, ...]:
    """Stratified train / calibration / test indices with the given fractions (summing to 1)."""
    labels = validate.finite_array(labels, "labels", ndim=1, dtype_kind="i")
    if isinstance(fractions, str | bytes) or not isinstance(fractions, tuple | list) or len(fractions) != 3:
        raise ValueError(f"fractions: expected three positive numbers summing to 1, got {fractions!r}")
    fr = [validate.finite_float(f, "fractions") for f in fractions]
    if abs(sum(fr) - 1) > 1e-9 or min(fr) <= 0:
        raise ValueError(f"fractions: expected three positive numbers summing to 1, got {fractions}")
    fractions = (fr[0], fr[1], fr[2])
    seed = validate.nonnegative_int(seed, "seed")
    rng = np.random.default_rng(seed)
    parts: list[list[np.ndarray]] = [[], [], []]
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        n1 = round(fractions[0] * len(idx))
        n2 = round((fractions[0] + fractions[1]) * len(idx))
        for p, sl in zip(parts, (idx[:n1], idx[n1:n2], idx[n2:]), strict=True):
            p.append(sl)
    return tuple(rng.permutation(np.concatenate(p)) for p in parts)
