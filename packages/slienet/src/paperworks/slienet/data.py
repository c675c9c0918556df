"""Image data: a CIFAR-100 loader for its real python-pickle format, and two offline image sets.

- :func:`load_cifar100` reads the ``cifar-100-python`` folder users hold (``train``/``test`` pickles
  with ``b"data"`` (N, 3072) uint8 rows and ``b"fine_labels"``), returning ``(N, 3, 32, 32)`` float32 in
  [0, 1] and int64 labels. The pickle is read by a restricted unpickler that resolves only the globals
  such a file needs (NumPy's array reconstruction and a few builtins), so a crafted file cannot run code.
- :func:`digits_images`: scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes),
  bilinearly upsampled to ``size x size``, one channel, scaled to [0, 1].
- :func:`prototype_images`: a generated ``n_classes``-way image set. Generative model: each class
  ``c`` has a latent smooth colour prototype ``P_c`` (3 x size x size; white noise blurred by a
  Gaussian of width ``size/8``, standardised); an observed image is ``P_c`` circularly shifted by a
  random offset in ``{-max_shift..max_shift}^2``, scaled by a contrast ``~ U(0.7, 1.3)``, plus a
  brightness offset ``~ N(0, 0.2)`` per channel and pixel noise ``~ N(0, noise^2)``.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

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
    if split not in ("train", "test"):
        raise ValueError(f"split: expected 'train' or 'test', got {split!r}")
    if label not in ("fine", "coarse"):
        raise ValueError(f"label: expected 'fine' or 'coarse', got {label!r}")
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
    data = np.asarray(batch[b"data"], dtype=np.uint8)
    labels = np.asarray(batch[key], dtype=np.int64)
    if data.ndim != 2 or data.shape[1] != 3072:
        raise ValueError(f"{path}: expected data rows of 3072 bytes (3 x 32 x 32), got shape {data.shape}")
    if labels.shape != (data.shape[0],):
        raise ValueError(f"{path}: {data.shape[0]} images but {labels.shape} labels")
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
    if not isinstance(size, int) or size < 8:
        raise ValueError(f"size: expected an int >= 8, got {size!r}")
    pixels, labels = _digits_raw()
    x = torch.from_numpy(pixels.reshape(-1, 8, 8).astype(np.float32) / 16.0)[:, None]
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x.numpy(), labels


def prototype_images(
    n_classes: int = 100,
    per_class: int = 30,
    *,
    size: int = 16,
    noise: float = 0.6,
    max_shift: int = 2,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Generated images ``(n_classes * per_class, 3, size, size)`` float32 and labels (see module doc)."""
    if n_classes < 2 or per_class < 1 or size < 4:
        raise ValueError(
            f"expected n_classes >= 2, per_class >= 1, size >= 4; got {n_classes}, {per_class}, {size}"
        )
    if noise < 0 or max_shift < 0:
        raise ValueError(f"noise and max_shift must be >= 0, got {noise}, {max_shift}")
    g = torch.Generator().manual_seed(int(seed))
    white = torch.randn(n_classes, 3, size, size, generator=g)
    sigma = max(size / 8.0, 0.5)
    r = torch.arange(-size // 2, size // 2 + 1, dtype=torch.float32)
    k1 = torch.exp(-0.5 * (r / sigma) ** 2)
    k1 = k1 / k1.sum()
    pad = len(r) // 2
    blur = F.conv2d(
        F.pad(white.reshape(-1, 1, size, size), (pad, pad, 0, 0), mode="circular"), k1.view(1, 1, 1, -1)
    )
    blur = F.conv2d(F.pad(blur, (0, 0, pad, pad), mode="circular"), k1.view(1, 1, -1, 1))
    proto = blur.reshape(n_classes, 3, size, size)
    proto = (proto - proto.mean(dim=(1, 2, 3), keepdim=True)) / proto.std(dim=(1, 2, 3), keepdim=True)
    n = n_classes * per_class
    labels = torch.arange(n_classes).repeat_interleave(per_class)
    imgs = proto[labels]
    shifts = torch.randint(-max_shift, max_shift + 1, (n, 2), generator=g)
    rows = (torch.arange(size)[None, :] - shifts[:, :1]) % size  # (n, size)
    cols = (torch.arange(size)[None, :] - shifts[:, 1:]) % size
    imgs = imgs[
        torch.arange(n)[:, None, None, None],
        torch.arange(3)[None, :, None, None],
        rows[:, None, :, None],
        cols[:, None, None, :],
    ]
    contrast = 0.7 + 0.6 * torch.rand(n, 1, 1, 1, generator=g)
    bright = 0.2 * torch.randn(n, 3, 1, 1, generator=g)
    imgs = contrast * imgs + bright + noise * torch.randn(imgs.shape, generator=g)
    return imgs.numpy().astype(np.float32), labels.numpy().astype(np.int64)


def standardize(train: np.ndarray, *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-channel standardisation with the training set's mean and std (applied to all arrays)."""
    mean = train.mean(axis=(0, 2, 3), keepdims=True)
    std = train.std(axis=(0, 2, 3), keepdims=True) + 1e-6
    return tuple(((a - mean) / std).astype(np.float32) for a in (train, *others))


def split_indices(
    labels: np.ndarray, fractions: tuple[float, float, float], seed: int
) -> tuple[np.ndarray, ...]:
    """Stratified train / calibration / test indices with the given fractions (summing to 1)."""
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) <= 0:
        raise ValueError(f"fractions: expected three positive numbers summing to 1, got {fractions}")
    rng = np.random.default_rng(seed)
    parts: list[list[np.ndarray]] = [[], [], []]
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        n1 = round(fractions[0] * len(idx))
        n2 = round((fractions[0] + fractions[1]) * len(idx))
        for p, sl in zip(parts, (idx[:n1], idx[n1:n2], idx[n2:]), strict=True):
            p.append(sl)
    return tuple(rng.permutation(np.concatenate(p)) for p in parts)
