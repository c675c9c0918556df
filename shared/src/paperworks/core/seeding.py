"""Seeding and device choice shared by every experiment."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["DEVICES", "choose_device", "seed_everything", "torch_threads"]


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


DEVICES = ("auto", "cpu", "cuda")


def choose_device(prefer: str | None = None) -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``; ``prefer`` (or ``PAPERWORKS_DEVICE``) overrides.

    ``prefer``/``PAPERWORKS_DEVICE``: ``"auto"`` (the default choice), ``"cpu"``, ``"cuda"`` or
    ``"cuda:N"``; ``paperworks reproduce --device`` sets the variable for the run. Returns a device
    string usable by ``torch.device``. Without torch installed it is ``"cpu"``.
    """
    prefer = prefer or os.environ.get("PAPERWORKS_DEVICE") or None
    if prefer is not None:
        prefer = prefer.strip().lower()
        if prefer == "auto":
            prefer = None
        elif prefer != "cpu" and not prefer.startswith("cuda"):
            raise ValueError(f"device: expected one of {DEVICES} (or cuda:N), got {prefer!r}")
    if prefer == "cpu":
        return "cpu"  # no torch import needed to know that
    try:
        import torch
    except ImportError:
        if prefer is not None:
            raise ValueError(f"device: {prefer!r} requested but torch is not installed") from None
        return "cpu"
    if prefer is not None:
        if not torch.cuda.is_available():
            raise ValueError(f"device: {prefer!r} requested but torch sees no CUDA device")
        return prefer
    return "cuda" if torch.cuda.is_available() else "cpu"


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Limit torch to ``n`` intra-op threads inside the block and restore the previous count after.

    Small models run several times faster on one thread on a busy 2-core machine. Does nothing when
    torch has not been imported (it is never imported here).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected a positive int, got {n!r}")
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
