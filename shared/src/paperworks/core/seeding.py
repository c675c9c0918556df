"""Seeding and device choice shared by every experiment."""

from __future__ import annotations

import os
import random
import sys

import numpy as np

__all__ = ["choose_device", "seed_everything"]


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python's ``random``, NumPy's legacy global state and torch (when already imported).

    torch is seeded only if some module has imported it (importing it here would cost seconds in
    experiments that never use it); an experiment using torch imports it at module level, which
    happens before its seeds run. Returns a fresh ``numpy.random.Generator`` seeded with ``seed``.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - legacy global state, for third-party code
    os.environ["PYTHONHASHSEED"] = str(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)


def choose_device(prefer: str | None = None) -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``; ``prefer`` (or ``PAPERWORKS_DEVICE``) overrides.

    Returns a device string usable by ``torch.device``. Without torch installed it is ``"cpu"``.
    """
    prefer = prefer or os.environ.get("PAPERWORKS_DEVICE")
    try:
        import torch
    except ImportError:
        if prefer not in (None, "cpu"):
            raise ValueError(f"device: {prefer!r} requested but torch is not installed") from None
        return "cpu"
    if prefer is not None:
        if prefer.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(f"device: {prefer!r} requested but torch sees no CUDA device")
        return prefer
    return "cuda" if torch.cuda.is_available() else "cpu"
