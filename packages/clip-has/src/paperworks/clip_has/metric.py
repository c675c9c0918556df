"""``HierarchicalAngularSeparation``: the HAS metric as a torchmetrics ``Metric`` (extra ``metric``).

States are per-concept sums of (normalised) sample embeddings and per-concept counts, both reduced with
``dist_reduce_fx="sum"``, so ``update`` on any number of batches and processes followed by ``compute``
gives exactly the prototypes (and margins) of all samples together.
"""

from __future__ import annotations

from typing import Any

import torch
from torchmetrics import Metric

from paperworks.core.validate import one_of, positive_int

from .has import OFF_BRANCH, _has_samples, _prototypes_from_sums, _used_rows, has_margins
from .hierarchy import as_hierarchy

__all__ = ["HierarchicalAngularSeparation"]


class HierarchicalAngularSeparation(Metric):
    """HAS of concept prototypes accumulated from labelled embeddings.

    Parameters
    ----------
    tree:
        a :class:`~paperworks.clip_has.Hierarchy`, a parent array or a networkx DiGraph.
    embedding_dim:
        dimension of the embeddings given to ``update`` (fixes the state shapes for syncing).
    mode:
        ``"subtree"`` (image prototypes: a concept averages every sample of its subtree, so leaf labels
        suffice) or ``"node"`` (one or more caption embeddings per concept).
    centre:
        ``None`` or ``"root"`` (subtract the mean of all samples before comparing: root-centred).
    gamma:
        margin threshold of the rate (``margin > gamma``).

    ``update(embeddings, labels)``: (B, embedding_dim) float, (B,) concept ids. ``compute()`` returns a
    dict of scalar tensors: ``rate`` (share of evaluated concepts with margin > gamma), ``margin`` (the
    HAS margin: the smallest) and ``mean_margin``.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(
        self,
        tree: Any,
        embedding_dim: int,
        *,
        mode: str = "subtree",
        centre: str | None = None,
        gamma: float = 0.0,
        off_branch: str = "disjoint",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tree = as_hierarchy(tree)
        self.embedding_dim = positive_int(embedding_dim, "embedding_dim")
        self.mode = one_of(mode, "mode", ("subtree", "node"))
        if centre not in (None, "root"):
            raise ValueError(f"centre: expected None or 'root', got {centre!r}")
        self.centre = centre
        self.gamma = float(gamma)
        self.off_branch = one_of(off_branch, "off_branch", OFF_BRANCH)
        n = self.tree.n_nodes
        self.add_state(
            "sums", default=torch.zeros(n, embedding_dim, dtype=torch.float64), dist_reduce_fx="sum"
        )
        self.add_state("counts", default=torch.zeros(n, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, embeddings: torch.Tensor, labels: torch.Tensor) -> None:
        """Add a batch: (B, embedding_dim) embeddings, (B,) integer concept ids."""
        if not isinstance(embeddings, torch.Tensor) or embeddings.ndim != 2:
            raise ValueError(
                f"embeddings: expected a (B, {self.embedding_dim}) tensor, "
                f"got {getattr(embeddings, 'shape', type(embeddings))}"
            )
        if embeddings.shape[1] != self.embedding_dim:
            raise ValueError(
                f"embeddings: expected dimension {self.embedding_dim}, got {embeddings.shape[1]}"
            )
        labels = torch.as_tensor(labels, device=embeddings.device)
        if labels.shape != (embeddings.shape[0],) or labels.is_floating_point():
            raise ValueError(
                f"labels: expected ({embeddings.shape[0]},) integer concept ids, "
                f"got {tuple(labels.shape)} {labels.dtype}"
            )
        if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= self.tree.n_nodes):
            raise ValueError(f"labels: expected concept ids in 0..{self.tree.n_nodes - 1}")
        e = embeddings.detach().to(torch.float64)
        if not bool(torch.isfinite(e).all()):
            raise ValueError("embeddings: expected finite values (NaN or inf found)")
        norms = e.norm(dim=1, keepdim=True)
        if bool((norms == 0).any()):
            raise ValueError("embeddings: a sample is a zero vector")
        e = e / norms
        self.sums.index_add_(0, labels.long(), e)
        self.counts += torch.bincount(labels.long(), minlength=self.tree.n_nodes).to(self.counts)

    def prototypes(self) -> torch.Tensor:
        """(n_nodes, embedding_dim) prototypes of the samples seen so far (root-centred if asked)."""
        protos = _prototypes_from_sums(self.sums, self.counts, self.tree, self.mode)
        if self.centre == "root":
            total = self.counts.sum().clamp_min(1)
            seen = _has_samples(self.tree, self.counts, self.mode)
            protos = torch.where(seen[:, None], protos - self.sums.sum(0) / total, protos)
        return protos

    def compute(self) -> dict[str, torch.Tensor]:
        if float(self.counts.sum()) == 0:
            raise ValueError("HierarchicalAngularSeparation: compute() before any update()")
        seen = _has_samples(self.tree, self.counts, self.mode).cpu().numpy()
        used = _used_rows(self.tree, self.off_branch)
        missing = used[~seen[used]]
        if missing.size:
            c = int(missing[0])
            raise ValueError(
                f"HierarchicalAngularSeparation: concept {c} ({self.tree.names[c]!r}) has no embeddings"
            )
        m = has_margins(self.prototypes(), self.tree, off_branch=self.off_branch)
        return {
            "rate": (m > self.gamma).double().mean(),
            "margin": m.min(),
            "mean_margin": m.mean(),
        }
