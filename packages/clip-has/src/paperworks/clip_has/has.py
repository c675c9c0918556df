"""Hierarchical Angular Separation: the margin, the rate, concept prototypes and the permutation null.

For a concept tree and concept embeddings ``e_c`` (compared by cosine), the HAS margin of a non-leaf
concept ``c`` is (our reading of the abstract's definition, README Fidelity)::

    margin(c) = min_{d in desc(c)} cos(e_c, e_d) - max_{o in off(c)} cos(e_c, e_o)

``HAS(gamma)`` holds when ``min_c margin(c) >= gamma``; "HAS with a positive margin" when that minimum
is > 0. Weak HAS is read through the HAS rate, the share of evaluated concepts with ``margin > 0``,
against a label-permutation null (:func:`has_permutation_null`).

Everything is computed in torch, vectorised over blocks of concepts (``(block, n)`` cosine slices and
pre-order interval masks: no Python loop over concepts); NumPy inputs give NumPy outputs. Margins are
differentiable (sub-gradients of min/max) and invariant to positive rescaling of each embedding and to
any rotation of the embedding space.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperworks.core.validate import as_generator, positive_int

from .hierarchy import Hierarchy, as_hierarchy

__all__ = [
    "OFF_BRANCH",
    "concept_prototypes",
    "has_margin",
    "has_margins",
    "has_permutation_null",
    "has_rate",
    "satisfies_has",
]

OFF_BRANCH = ("disjoint", "complement")
_BLOCK = 1024


def _as_tensor(x: Any, name: str) -> tuple[torch.Tensor, bool]:
    """(a floating tensor, whether the input was NumPy-like)."""
    if isinstance(x, torch.Tensor):
        t = x
        was_numpy = False
    else:
        try:
            arr = np.asarray(x)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise ValueError(f"{name}: expected an array, got {type(x).__name__}") from exc
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name}: expected a numeric array, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float64))
        was_numpy = True
    if not t.is_floating_point():
        t = t.to(torch.float64 if was_numpy else torch.get_default_dtype())
    return t, was_numpy


def _check_embeddings(e: torch.Tensor, tree: Hierarchy, name: str) -> None:
    if e.ndim != 2:
        raise ValueError(f"{name}: expected shape (n_nodes, dim), got {tuple(e.shape)}")
    if e.shape[0] != tree.n_nodes:
        raise ValueError(f"{name}: expected one row per concept ({tree.n_nodes}), got {e.shape[0]} rows")
    if e.shape[1] == 0:
        raise ValueError(f"{name}: expected a positive embedding dimension, got 0")


def _used_rows(tree: Hierarchy, off_branch: str) -> np.ndarray:
    """Concepts whose embedding enters some margin (the root only when ancestors are off-branch)."""
    if off_branch == "complement":
        return np.arange(tree.n_nodes)
    return np.flatnonzero(np.arange(tree.n_nodes) != tree.root)


def _normalised(e: torch.Tensor, tree: Hierarchy, off_branch: str, name: str) -> torch.Tensor:
    used = torch.as_tensor(_used_rows(tree, off_branch), device=e.device)
    sub = e.detach().index_select(0, used)
    if not bool(torch.isfinite(sub).all()):
        bad = int(used[(~torch.isfinite(sub)).any(1)][0])
        raise ValueError(f"{name}: row {bad} (concept {tree.names[bad]!r}) is not finite (NaN or inf)")
    norms = sub.norm(dim=1)
    scale = norms.max().clamp_min(torch.finfo(e.dtype).tiny)
    zero = norms <= scale * 1e-12
    if bool(zero.any()):
        bad = int(used[zero][0])
        raise ValueError(f"{name}: row {bad} (concept {tree.names[bad]!r}) is a zero vector (no direction)")
    out = torch.zeros_like(e)
    out = out.index_copy(0, used, e.index_select(0, used) / e.index_select(0, used).norm(dim=1, keepdim=True))
    return out


def has_margins(
    embeddings: Any,
    tree: Any,
    *,
    off_branch: str = "disjoint",
    nodes: Any = None,
) -> Any:
    """Per-concept HAS margins.

    ``embeddings``: (n_nodes, dim) tensor or array, one row per concept (row ``c`` for concept ``c``;
    the root's row is not read under ``off_branch="disjoint"``). ``tree``: a :class:`Hierarchy`, a
    parent array or a networkx DiGraph. ``nodes``: which concepts (default :meth:`Hierarchy.evaluated`).
    Returns (len(nodes),) margins, a tensor for tensor input (differentiable), an array otherwise.
    """
    tree = as_hierarchy(tree)
    if off_branch not in OFF_BRANCH:
        raise ValueError(f"off_branch: expected one of {OFF_BRANCH}, got {off_branch!r}")
    e, was_numpy = _as_tensor(embeddings, "embeddings")
    _check_embeddings(e, tree, "embeddings")
    if nodes is None:
        nodes_np = tree.evaluated(off_branch)
        if nodes_np.size == 0:
            raise ValueError(
                "tree: has no non-leaf concept with an off-branch concept (a root with leaves only?): "
                "the HAS margin is undefined"
            )
    else:
        nodes_np = np.asarray(nodes, dtype=np.int64).reshape(-1)
        valid = tree.evaluated(off_branch)
        bad = np.setdiff1d(nodes_np, valid)
        if bad.size:
            raise ValueError(f"nodes: concept {int(bad[0])} is a leaf or has no off-branch concept")
    en = _normalised(e, tree, off_branch, "embeddings")
    dev = e.device
    tin = torch.from_numpy(tree.tin.copy()).to(dev)
    tout = torch.from_numpy(tree.tout.copy()).to(dev)
    idx = torch.arange(tree.n_nodes, device=dev)
    out = []
    for start in range(0, nodes_np.size, _BLOCK):
        b = torch.as_tensor(nodes_np[start : start + _BLOCK], device=dev)
        cos = en.index_select(0, b) @ en.T  # (block, n)
        tb, ob = tin[b][:, None], tout[b][:, None]
        desc = (tin[None, :] > tb) & (tin[None, :] <= ob)
        off = ~desc & (idx[None, :] != b[:, None])
        if off_branch == "disjoint":
            anc = (tin[None, :] < tb) & (tout[None, :] >= tb)
            off &= ~anc
        near = cos.masked_fill(~desc, float("inf")).amin(dim=1)
        far = cos.masked_fill(~off, float("-inf")).amax(dim=1)
        out.append(near - far)
    margins = torch.cat(out)
    return margins.detach().cpu().numpy() if was_numpy else margins


def has_margin(embeddings: Any, tree: Any, *, off_branch: str = "disjoint") -> float:
    """The HAS margin: the smallest per-concept margin (``HAS(gamma)`` iff this is ``>= gamma``)."""
    m = has_margins(embeddings, tree, off_branch=off_branch)
    return float(m.min())


def has_rate(embeddings: Any, tree: Any, *, gamma: float = 0.0, off_branch: str = "disjoint") -> float:
    """Share of evaluated concepts whose margin exceeds ``gamma`` (weak HAS; default ``gamma = 0``)."""
    m = has_margins(embeddings, tree, off_branch=off_branch)
    return float((m > gamma).sum()) / len(m)


def satisfies_has(
    embeddings: Any, tree: Any, gamma: float | None = None, *, off_branch: str = "disjoint"
) -> bool:
    """``gamma=None``: HAS with a positive margin (min margin > 0); else ``HAS(gamma)``: min >= gamma."""
    m = has_margin(embeddings, tree, off_branch=off_branch)
    return m > 0.0 if gamma is None else m >= float(gamma)


def _labels(labels: Any, n_samples: int, tree: Hierarchy) -> torch.Tensor:
    lab = np.asarray(labels.detach().cpu() if isinstance(labels, torch.Tensor) else labels)
    if lab.ndim != 1 or lab.size != n_samples:
        raise ValueError(f"labels: expected shape ({n_samples},), got {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer):
        raise ValueError(f"labels: expected integer concept ids, got dtype {lab.dtype}")
    if lab.size and (lab.min() < 0 or lab.max() >= tree.n_nodes):
        raise ValueError(
            f"labels: expected concept ids in 0..{tree.n_nodes - 1}, got {lab.min()}..{lab.max()}"
        )
    return torch.from_numpy(lab.astype(np.int64))


def concept_prototypes(
    embeddings: Any,
    labels: Any,
    tree: Any,
    *,
    mode: str = "subtree",
    centre: Any = None,
    normalize_inputs: bool = True,
) -> Any:
    """Concept embeddings from sample embeddings: the (normalised) mean of the samples of each concept.

    ``embeddings``: (N, dim) sample embeddings (images or captions); ``labels``: (N,) concept ids.
    ``mode="subtree"``: the prototype of ``c`` averages the samples labelled with any concept in the
    subtree of ``c`` (image prototypes from leaf-labelled images); ``mode="node"``: only those labelled
    ``c`` (one caption embedding per concept). ``centre``: ``None``, ``"root"`` (subtract the mean of
    all samples, the root prototype) or a (dim,) vector subtracted from every prototype. Samples are
    L2-normalised first when ``normalize_inputs`` (CLIP compares unit vectors). Concepts without any
    sample get a zero row (rejected later by the margin if it is read). Returns (n_nodes, dim).
    """
    tree = as_hierarchy(tree)
    e, was_numpy = _as_tensor(embeddings, "embeddings")
    if e.ndim != 2 or e.shape[0] == 0:
        raise ValueError(f"embeddings: expected a non-empty (n_samples, dim) array, got {tuple(e.shape)}")
    if not bool(torch.isfinite(e).all()):
        raise ValueError("embeddings: expected finite values (NaN or inf found)")
    lab = _labels(labels, e.shape[0], tree).to(e.device)
    if mode not in ("subtree", "node"):
        raise ValueError(f"mode: expected 'subtree' or 'node', got {mode!r}")
    if normalize_inputs:
        norms = e.norm(dim=1, keepdim=True)
        if bool((norms == 0).any()):
            raise ValueError(f"embeddings: sample {int(torch.nonzero(norms[:, 0] == 0)[0])} is a zero vector")
        e = e / norms
    sums = torch.zeros(tree.n_nodes, e.shape[1], dtype=e.dtype, device=e.device).index_add(0, lab, e)
    counts = torch.bincount(lab, minlength=tree.n_nodes).to(e.dtype)
    protos = _prototypes_from_sums(sums, counts, tree, mode)
    if centre is not None:
        if isinstance(centre, str):
            if centre != "root":
                raise ValueError(f"centre: expected None, 'root' or a (dim,) vector, got {centre!r}")
            vec = e.mean(dim=0)
        else:
            vec, _ = _as_tensor(centre, "centre")
            vec = vec.to(e.dtype).to(e.device)
            if vec.shape != (e.shape[1],):
                raise ValueError(f"centre: expected shape ({e.shape[1]},), got {tuple(vec.shape)}")
        protos = torch.where(_has_samples(tree, counts, mode)[:, None], protos - vec, protos)
    return protos.detach().cpu().numpy() if was_numpy else protos


def _has_samples(tree: Hierarchy, counts: torch.Tensor, mode: str) -> torch.Tensor:
    """(n,) bool: concepts with at least one sample (subtree counts in ``subtree`` mode)."""
    if mode == "subtree":
        m = torch.as_tensor(tree.subtree_matrix(), dtype=counts.dtype, device=counts.device)
        counts = m @ counts
    return counts > 0


def _prototypes_from_sums(
    sums: torch.Tensor, counts: torch.Tensor, tree: Hierarchy, mode: str
) -> torch.Tensor:
    if mode == "subtree":
        m = torch.as_tensor(tree.subtree_matrix(), dtype=sums.dtype, device=sums.device)
        sums, counts = m @ sums, m @ counts
    return sums / counts.clamp_min(1)[:, None]


def has_permutation_null(
    embeddings: Any,
    labels: Any,
    tree: Any,
    *,
    mode: str = "subtree",
    n_permutations: int = 200,
    rng: object = None,
    centre: Any = None,
    off_branch: str = "disjoint",
) -> np.ndarray:
    """HAS rates of :func:`concept_prototypes` after shuffling ``labels`` among samples.

    The null keeps the averaging structure (a parent's subtree prototype contains its children's
    samples, which inflates ``cos(parent, child)`` under any labelling) and removes what the labels
    mean. Returns (n_permutations,) rates; compare the observed rate with ``np.quantile(null, 0.95)``.
    """
    positive_int(n_permutations, "n_permutations")
    gen = as_generator(rng)
    tree = as_hierarchy(tree)
    e, _ = _as_tensor(embeddings, "embeddings")
    lab = np.asarray(_labels(labels, e.shape[0], tree))
    rates = np.empty(n_permutations)
    for k in range(n_permutations):
        perm = gen.permutation(lab)
        protos = concept_prototypes(e, perm, tree, mode=mode, centre=centre)
        m = has_margins(protos, tree, off_branch=off_branch)
        rates[k] = float((m > 0).double().mean())
    return rates
