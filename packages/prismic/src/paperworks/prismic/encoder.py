"""User encoders (PRISMIC step 3) and the encoder baselines.

:class:`SequenceEncoder` is a SASRec-style transformer (Kang & McAuley 2018, arXiv 1808.09781): item +
learned position embeddings, pre-norm self-attention blocks, a **causal** mask so position ``t`` sees
items ``1..t`` only. With ``causal=False`` and a mask token it is the BERT4Rec-style bidirectional
encoder (Sun et al. 2019, arXiv 1904.06690), trained by the Cloze objective and read at an appended
mask token.

Items are represented by an id embedding plus a linear projection of their text embedding, so every
encoder here is text-aware. The encoder scores the ``N`` items as

    score_i(h) = h . e_i + s * cos(g(h), t_i)

with ``e_i`` the item representation, ``g`` a linear *query head* into the text space, ``t_i`` the item
text embedding and ``s`` a learned scale. Training minimises the full-softmax next-item cross entropy at
every position; **PRISMIC distillation** adds ``lambda * mean_t (1 - cos(g(h_t), q*_t))`` over the input
positions, where ``q*_t`` is the consolidated query of the prefix ``h_1..h_t`` (the consolidator's output). At
inference only the encoder runs. ``lambda = 0`` is the "SASRec (next-item only)" baseline.

Histories are left-padded with id 0; a history longer than ``max_len`` keeps its **last** ``max_len``
items (:func:`paperworks.prismic.data.pad_histories`), so the read-out position is always the latest item.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .data import pad_histories
from .optim import Adam
from .ranking import ndcg_from_ranks, target_ranks

__all__ = ["EncoderConfig", "SequenceEncoder", "SequentialRecommender"]


@dataclass(frozen=True)
class EncoderConfig:
    """Encoder and training hyper-parameters (SASRec's: d=50, 2 blocks, dropout 0.2, lr 1e-3; ours d=64)."""

    dim: int = 64
    n_layers: int = 2
    n_heads: int = 2
    max_len: int = 20
    dropout: float = 0.2
    epochs: int = 40  # the maximum; with validation data, early stopping usually ends sooner
    patience: int = 5  # epochs without a better validation NDCG@10 before stopping
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 0.0
    distill_weight: float = 1.0
    mask_prob: float = 0.3  # BERT4Rec Cloze masking rate
    text_scale: float = 20.0  # initial s of the text term (a cosine temperature of 0.05)

    def __post_init__(self) -> None:
        for k in ("dim", "n_layers", "n_heads", "max_len", "epochs", "patience", "batch_size"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k}: expected a positive int, got {v!r}")
        if self.dim % self.n_heads:
            raise ValueError(f"n_heads: expected a divisor of dim={self.dim}, got {self.n_heads}")
        if not 0.0 <= self.dropout < 1.0 or not 0.0 < self.mask_prob < 1.0:
            raise ValueError(
                f"dropout/mask_prob: expected [0, 1) and (0, 1), got {self.dropout}, {self.mask_prob}"
            )
        if not self.lr > 0 or self.distill_weight < 0 or self.weight_decay < 0:
            raise ValueError("lr: expected > 0; distill_weight, weight_decay: expected >= 0")


class _Block(nn.Module):
    def __init__(self, d: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Dropout(dropout), nn.Linear(2 * d, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        b, l, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, l, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        att = att.masked_fill(~allowed[:, None], float("-inf")).softmax(-1)
        y = (self.drop(att) @ v).transpose(1, 2).reshape(b, l, d)
        x = x + self.drop(self.out(y))
        return x + self.drop(self.ff(self.n2(x)))


class SequenceEncoder(nn.Module):
    """SASRec (``causal=True``) or BERT4Rec-style (``causal=False``) encoder over item ids ``1..N``.

    ``item_text``: ``(N, d_text)`` item text embeddings. ``forward(seq (B, L)) -> (B, L, dim)``;
    :meth:`scores` maps hidden states ``(..., dim)`` to item scores ``(..., N)`` (column ``i - 1``:
    item ``i``).
    Id ``0`` is padding; with ``causal=False`` id ``N + 1`` is the mask token.
    """

    def __init__(
        self, item_text: torch.Tensor, config: EncoderConfig, causal: bool = True, use_text: bool = True
    ) -> None:
        super().__init__()
        if item_text.ndim != 2 or not torch.isfinite(item_text).all():
            raise ValueError(
                f"item_text: expected a finite (n_items, d_text) matrix, got {tuple(item_text.shape)}"
            )
        n, dt = item_text.shape
        d = config.dim
        self.n_items, self.causal, self.config, self.use_text = n, causal, config, use_text
        self.register_buffer("item_text", item_text.float())
        self.register_buffer("item_text_padded", F.pad(item_text.float(), (0, 0, 1, 1)), persistent=False)
        self.id_emb = nn.Embedding(n + 2, d, padding_idx=0)
        nn.init.normal_(self.id_emb.weight, std=0.02)
        with torch.no_grad():
            self.id_emb.weight[0].zero_()
        self.text_proj = nn.Linear(dt, d, bias=False)
        self.pos_emb = nn.Embedding(config.max_len, d)
        self.blocks = nn.ModuleList(_Block(d, config.n_heads, config.dropout) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(config.dropout)
        self.query_head = nn.Linear(d, dt)
        self.scale = nn.Parameter(torch.tensor(float(config.text_scale)))

    def item_matrix(self) -> torch.Tensor:
        """``(N + 2, dim)``: padding, items 1..N (id + projected text), mask token."""
        if not self.use_text:
            return self.id_emb.weight
        text = F.pad(self.item_text, (0, 0, 1, 1))
        return self.id_emb.weight + self.text_proj(text)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        if seq.ndim != 2 or seq.dtype != torch.int64:
            raise ValueError(
                f"seq: expected an int64 (batch, length) tensor, got {seq.dtype} {tuple(seq.shape)}"
            )
        b, l = seq.shape
        if l > self.config.max_len:
            raise ValueError(
                f"seq: length {l} exceeds max_len={self.config.max_len}; truncate with pad_histories"
            )
        if seq.min() < 0 or seq.max() > self.n_items + 1:
            raise ValueError(f"seq: unknown item id (expected 0..{self.n_items + 1})")
        x = self.id_emb(seq)
        if self.use_text:  # project only the rows read (the pad / mask rows of item_text_padded are 0)
            x = x + self.text_proj(self.item_text_padded[seq])
        x = x * math.sqrt(self.config.dim)
        x = self.drop(x + self.pos_emb.weight[self.config.max_len - l :][None])
        real = seq > 0
        allowed = real[:, None, :].expand(b, l, l)
        if self.causal:
            allowed = allowed & torch.ones(l, l, dtype=torch.bool, device=seq.device).tril()[None]
        allowed = allowed | torch.eye(l, dtype=torch.bool, device=seq.device)[None]  # never an empty row
        for blk in self.blocks:
            x = blk(x, allowed)
        return self.norm(x)

    def scores(self, h: torch.Tensor) -> torch.Tensor:
        """Item scores ``(..., N)`` of hidden states ``h`` ``(..., dim)``.

        ``cos(g(h), t_i) = (h . (W^T t_i) + b . t_i) / ||g(h)||`` for unit ``t_i``: the text term is
        computed in the hidden space (``N x dim`` instead of ``N x d_text`` products per row).
        """
        if not self.use_text:
            return h @ self.id_emb.weight[1 : self.n_items + 1].T
        e = self.id_emb.weight[1 : self.n_items + 1] + self.text_proj(self.item_text)
        t = self.item_text / self.item_text.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        w, b = self.query_head.weight, self.query_head.bias  # (d_text, dim), (d_text,)
        items_in_h = t @ w  # (N, dim)
        g_norm = self.query_head(h).norm(dim=-1, keepdim=True).clamp_min(1e-12)
        text_term = (h @ items_in_h.T + t @ b) / g_norm
        return h @ e.T + self.scale * text_term


class SequentialRecommender:
    """Train and apply a :class:`SequenceEncoder` (scikit-learn-style ``fit`` / ``score``).

    ``kind``: ``"sasrec"`` (causal, next-item CE at every position) or ``"bert4rec"`` (bidirectional,
    Cloze). ``use_text=False`` gives the original id-only models. ``fit(histories, item_text,
    distill_targets=None)``: each history ends with its training target; ``distill_targets``
    ``(U, max_len, d_text)`` are PRISMIC's consolidated queries of every prefix, aligned with the
    encoder's input positions (``history[:-1]`` left-padded to ``max_len``; padded rows are ignored),
    weight ``config.distill_weight``, SASRec only. ``valid_targets`` ``(U,)``: the item that follows each
    *whole* history (the validation item); when given, NDCG@10 of predicting it from the history is
    measured after every epoch, training stops after ``config.patience`` epochs without improvement (at
    most ``config.epochs``) and the best epoch's parameters are restored (early stopping as in
    SASRec / RecBole). Fitted: ``model_``, ``loss_curve_``, ``valid_curve_`` (empty without validation),
    ``best_epoch_``.
    """

    def __init__(
        self,
        kind: str = "sasrec",
        config: EncoderConfig | None = None,
        *,
        use_text: bool = True,
        seed: int = 0,
    ) -> None:
        if kind not in ("sasrec", "bert4rec"):
            raise ValueError(f"kind: expected 'sasrec' or 'bert4rec', got {kind!r}")
        self.kind, self.config, self.seed, self.use_text = kind, config or EncoderConfig(), seed, use_text

    def fit(
        self,
        histories: Sequence[np.ndarray],
        item_text: np.ndarray | torch.Tensor,
        distill_targets: np.ndarray | torch.Tensor | None = None,
        *,
        valid_targets: np.ndarray | None = None,
    ) -> SequentialRecommender:
        cfg = self.config
        text = torch.as_tensor(np.asarray(item_text, dtype=np.float32))
        if text.ndim != 2 or not torch.isfinite(text).all():
            raise ValueError(
                f"item_text: expected a finite (n_items, d_text) matrix, got shape {tuple(text.shape)}"
            )
        n = text.shape[0]
        torch.manual_seed(self.seed)
        gen = torch.Generator().manual_seed(self.seed)
        seqs = torch.as_tensor(pad_histories(histories, cfg.max_len + 1, n))
        if (seqs[:, -2] == 0).any():
            raise ValueError("histories: expected >= 2 items per training history (inputs plus a target)")
        distill = None
        if distill_targets is not None:
            if self.kind != "sasrec":
                raise ValueError("distill_targets: distillation is defined for kind='sasrec' only")
            if not self.use_text:
                raise ValueError("distill_targets: distillation needs use_text=True (the query head)")
            distill = torch.as_tensor(np.asarray(distill_targets, dtype=np.float32))
            want = (len(histories), cfg.max_len, text.shape[1])
            if distill.shape != want:
                raise ValueError(f"distill_targets: expected shape {want}, got {tuple(distill.shape)}")
            if not torch.isfinite(distill).all():
                raise ValueError("distill_targets: expected finite values (found NaN or inf)")
        valid = None
        if valid_targets is not None:
            vt = np.asarray(valid_targets)
            if vt.shape != (len(histories),) or not np.issubdtype(vt.dtype, np.integer):
                raise ValueError(
                    f"valid_targets: expected {len(histories)} integer item ids (one per history), "
                    f"got shape {vt.shape} dtype {vt.dtype}"
                )
            if vt.min() < 1 or vt.max() > n:
                raise ValueError(f"valid_targets: unknown item id (expected ids in 1..{n})")
            valid = torch.as_tensor(vt - 1)
            valid_seq = self._inputs(histories, n)
        model = SequenceEncoder(text, cfg, causal=self.kind == "sasrec", use_text=self.use_text)
        self.model_ = model
        opt = Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        curve, vcurve = [], []
        best, best_state, since = -1.0, None, 0
        for _ in range(cfg.epochs):
            model.train()
            perm = torch.randperm(seqs.shape[0], generator=gen)
            total = 0.0
            for start in range(0, len(perm), cfg.batch_size):
                idx = perm[start : start + cfg.batch_size]
                loss = self._loss(model, seqs[idx], None if distill is None else distill[idx], gen)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(idx)
            curve.append(total / len(perm))
            if valid is None:
                continue
            model.eval()
            with torch.inference_mode():
                ranks = target_ranks(model.scores(model(valid_seq)[:, -1]), valid)
            vcurve.append(float(ndcg_from_ranks(ranks, 10).mean()))
            if vcurve[-1] > best:
                best, since = vcurve[-1], 0
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:
                since += 1
                if since >= cfg.patience:
                    break
        if best_state is not None:
            model.load_state_dict(best_state)
        self.model_, self.loss_curve_, self.valid_curve_ = model.eval(), curve, vcurve
        self.best_epoch_ = int(np.argmax(vcurve)) + 1 if vcurve else len(curve)
        return self

    def _loss(self, model: SequenceEncoder, seq: torch.Tensor, distill, gen) -> torch.Tensor:
        cfg = self.config
        if self.kind == "sasrec":
            inp, tgt = seq[:, :-1], seq[:, 1:]
            h = model(inp)
            real = (tgt > 0) & (inp > 0)
            loss = F.cross_entropy(model.scores(h[real]), tgt[real] - 1)
            if distill is not None and cfg.distill_weight > 0:
                keep = inp > 0
                g = F.normalize(model.query_head(h[keep]), dim=-1)
                cos = (g * F.normalize(distill[keep], dim=-1)).sum(-1)
                loss = loss + cfg.distill_weight * (1.0 - cos).mean()
            return loss
        # BERT4Rec Cloze: mask random real positions (always the last one for half of the rows)
        inp = seq[:, 1:].clone()
        real = inp > 0
        masked = (torch.rand(inp.shape, generator=gen) < cfg.mask_prob) & real
        masked[:, -1] |= torch.rand(inp.shape[0], generator=gen) < 0.5
        masked[real.sum(1) == 0] = False
        tgt = inp[masked] - 1
        inp[masked] = model.n_items + 1
        h = model(inp)
        return F.cross_entropy(model.scores(h[masked]), tgt)

    def encode(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """User states ``(U, dim)`` read at the latest position (BERT4Rec: at an appended mask token)."""
        if not hasattr(self, "model_"):
            raise RuntimeError("SequentialRecommender: call fit() before encode() / score()")
        seq = self._inputs(histories, self.model_.n_items)
        with torch.inference_mode():
            return self.model_(seq)[:, -1]

    def _inputs(self, histories: Sequence[np.ndarray], n_items: int) -> torch.Tensor:
        """Padded read-out inputs ``(U, max_len)``: the latest items (BERT4Rec: plus a mask token)."""
        cfg = self.config
        if self.kind == "sasrec":
            return torch.as_tensor(pad_histories(histories, cfg.max_len, n_items))
        seq = torch.as_tensor(pad_histories(histories, cfg.max_len - 1, n_items))
        return torch.cat([seq, torch.full((seq.shape[0], 1), n_items + 1)], 1)

    def score(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """Scores ``(U, N)`` of every item (column ``i - 1`` = item ``i``) as the next item."""
        h = self.encode(histories)
        with torch.inference_mode():
            return self.model_.scores(h)

    def query_embedding(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """The distilled query ``g(h)`` ``(U, d_text)``, unit rows (PRISMIC's consolidated-query estimate)."""
        if not self.use_text:
            raise RuntimeError("query_embedding: the encoder was built with use_text=False (no query head)")
        h = self.encode(histories)
        with torch.inference_mode():
            return F.normalize(self.model_.query_head(h), dim=-1)
