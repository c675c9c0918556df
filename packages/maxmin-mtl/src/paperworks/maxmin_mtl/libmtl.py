"""A LibMTL weighting strategy: max-min normalized improvement behind LibMTL's ``AbsWeighting`` interface.

LibMTL (Lin & Zhang) combines a weighting class with an architecture class by multiple inheritance;
the weighting reads ``self.task_num``, ``self.device``, ``self.rep_grad``, ``self.get_share_params()``
and ``self.zero_grad_share_params()`` from the combined model, and its ``backward(losses, **kwargs)``
leaves the shared parameters' ``.grad`` holding the combined update, the task-specific parameters their
own losses' gradients, and returns the task weights as a NumPy array. This module does not import
LibMTL (its 1.1.5 release does not import on torch 2): :class:`LibMTLMaxMin` is a mixin that relies
only on that interface, and :func:`libmtl_weighting` builds the concrete class for a given
``AbsWeighting``::

    from LibMTL.weighting.abstract_weighting import AbsWeighting
    from paperworks.maxmin_mtl.libmtl import libmtl_weighting
    MaxMin = libmtl_weighting(AbsWeighting)   # then pass MaxMin as LibMTL's weighting class

Options come through LibMTL's ``weight_args`` (keyword arguments of ``backward``): ``curvature``,
``loss_floor``, ``below_floor``, ``tol`` (see :class:`~paperworks.maxmin_mtl.MaxMinWeighting`).
Representation gradients (``rep_grad=True``, MGDA-UB's variant) are not supported: the max-min rates
are defined on the shared parameters' gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .weighting import MaxMinWeighting

__all__ = ["LibMTLMaxMin", "libmtl_weighting"]

_OPTIONS = ("curvature", "loss_floor", "below_floor", "tol")


class LibMTLMaxMin:
    """Mixin implementing LibMTL's weighting protocol (``init_param`` and ``backward``) with max-min."""

    def init_param(self) -> None:
        """LibMTL calls this once after building the model; the solver state is created lazily."""
        self._maxmin: MaxMinWeighting | None = None
        self._maxmin_options: dict[str, Any] | None = None

    def backward(self, losses: Any, **kwargs: Any) -> np.ndarray:
        """Per-task gradients of the shared parameters -> max-min weights -> ``.grad`` set; returns the
        ``(task_num,)`` weights. Heads get their own losses' gradients (LibMTL's convention)."""
        if getattr(self, "rep_grad", False):
            raise ValueError("rep_grad: max-min weighting needs parameter gradients; set rep_grad=False")
        options = {key: kwargs[key] for key in _OPTIONS if key in kwargs}
        if getattr(self, "_maxmin", None) is None or options != self._maxmin_options:
            self._maxmin = MaxMinWeighting(int(self.task_num), **options)
            self._maxmin_options = options
        shared = [p for p in self.get_share_params() if p.requires_grad]
        if isinstance(losses, torch.Tensor):
            loss_list = list(losses.reshape(-1))
        else:
            loss_list = list(losses)
        if len(loss_list) != self._maxmin.n_tasks:
            raise ValueError(f"losses: expected {self._maxmin.n_tasks} task losses, got {len(loss_list)}")
        L = torch.stack([torch.as_tensor(x).reshape(()) for x in loss_list])
        # every parameter other than the shared ones gets its own loss's gradient from one backward
        # pass of the unweighted sum, then the shared gradient is replaced by the max-min update
        rows = []
        for i in range(L.shape[0]):
            gs = torch.autograd.grad(L[i], shared, retain_graph=True, allow_unused=True)
            rows.append(
                torch.cat(
                    [(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(gs, shared)]
                )
            )
        G = torch.stack(rows)
        update, beta = self._maxmin.combine(G, L.detach().to(torch.float64).cpu().numpy())
        finite = [L[i] for i in range(L.shape[0]) if torch.isfinite(L[i])]
        if finite:
            torch.stack(finite).sum().backward()
        offset = 0
        for p in shared:
            part = update[offset : offset + p.numel()].reshape(p.shape).to(p.dtype)
            offset += p.numel()
            p.grad = part.clone()
        return np.asarray(beta, dtype=np.float64)


def libmtl_weighting(abs_weighting: type, name: str = "MaxMin") -> type:
    """The LibMTL weighting class ``name`` built on ``abs_weighting`` (LibMTL's ``AbsWeighting``)."""
    if not isinstance(abs_weighting, type):
        raise TypeError(f"abs_weighting: expected a class (LibMTL's AbsWeighting), got {abs_weighting!r}")
    missing = [m for m in ("__init__",) if not hasattr(abs_weighting, m)]
    if missing:
        raise TypeError(f"abs_weighting: expected LibMTL's AbsWeighting, missing {missing}")
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name: expected a Python identifier, got {name!r}")
    return type(
        name, (LibMTLMaxMin, abs_weighting), {"__doc__": "Max-min normalized improvement (paperworks)."}
    )
