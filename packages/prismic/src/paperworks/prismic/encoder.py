"""User encoders (PRISMIC step 3) and the encoder baselines.

:class:`SequenceEncoder` is a SASRec-style transformer (Kang & McAuley 2018, arXiv 1808.09781): item +
learned position embeddings, pre-norm self-attention blocks, a **causal** mask so position ``t`` sees
items ``1..t`` only. With ``causal=False`` and a mask token it is the BERT4Rec-style bidirectional
encoder (Sun et al. 2019, arXiv 1904.06690), trained by the Cloze objective and read at an appended
mask token.

Items are represented by an id embedding plus a linear projection of their text embedding (or the
projection alone: ``EncoderConfig.item_ids=False``), so every encoder here is text-aware. The encoder
scores the ``N`` items as

    score_i(h) = h . e_i + s * cos(g(h), t_i)

with ``e_i`` the item representation, ``g`` a linear *query head* into the text space, ``t_i`` the item
text embedding and ``s`` a learned scale. Training minimises the full-softmax next-item cross entropy at
every position; **PRISMIC distillation** adds ``lambda * mean_t L(q*_t, h_t)`` over the input positions,
where ``q*_t`` is the consolidated query of the prefix ``h_1..h_t`` (the consolidator's output, the
teacher). The default ``L`` is listwise: the KL divergence from the teacher's retrieval distribution to
the query head's,

    L = KL( softmax_i(cos(q*_t, t_i) / tau) || softmax_i(cos(g(h_t), t_i) / tau) ),

so the query head learns the teacher's *ranking* of the items, not only its direction; ``tau`` is set
from the teacher's scale (:func:`teacher_temperature`). ``L = 1 - cos(g(h_t), q*_t)`` (version 0.2) is
kept as ``distill_loss="cosine"``. At inference only the encoder runs. ``lambda = 0`` is the "SASRec
(next-item only)" baseline.

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

from paperworks.core.validate import (
    finite_float,
    fraction,
    nonnegative_float,
    one_of,
    positive_float,
    positive_int,
)

from ._checks import float_tensor, seed_int
from .data import pad_histories
from .optim import Adam
from .ranking import _ndcg, _ranks

__all__ = [
    "DISTILL_LOSSES",
    "EncoderConfig",
    "SequenceEncoder",
    "SequentialRecommender",
    "teacher_temperature",
]


DISTILL_LOSSES = ("listwise", "cosine")


@dataclass(frozen=True)
class EncoderConfig:
    """Encoder and training hyper-parameters (SASRec's: d=50, 2 blocks, dropout 0.2, lr 1e-3; ours d=64).

    Distillation (PRISMIC, SASRec only): ``distill_weight`` times ``distill_loss``, ``"listwise"`` (the
    default: KL from the teacher's retrieval distribution ``softmax(cos(q*, t_i) / tau)`` over the items
    to the query head's ``softmax(cos(g(h), t_i) / tau)``) or ``"cosine"`` (``1 - cos(g(h), q*)``, the
    0.2 loss). ``distill_temperature``: ``tau``; ``None`` sets it from the teacher's scale at fit time,
    as the ``tau`` at which the teacher's distributions have a mean perplexity (``exp`` of the mean
    entropy) of ``distill_perplexity`` items (10: the NDCG cut-off).

    Item tower: ``item_ids=False`` drops the item id embeddings (a text-only tower: item ``i`` is the
    projection of its text); ``id_weight_decay``: decoupled weight decay on the id embeddings only.
    ``max_steps``: stop after that many optimiser steps (``None``: only ``epochs`` / early stopping).
    """

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
    distill_loss: str = "listwise"
    distill_temperature: float | None = None
    distill_perplexity: float = 10.0
    mask_prob: float = 0.3  # BERT4Rec Cloze masking rate
    text_scale: float = 20.0  # initial s of the text term (a cosine temperature of 0.05)
    item_ids: bool = True
    id_weight_decay: float = 0.0
    max_steps: int | None = None

    def __post_init__(self) -> None:
        for k in ("dim", "n_layers", "n_heads", "max_len", "epochs", "patience", "batch_size"):
            positive_int(getattr(self, k), k)
        if self.dim % self.n_heads:
            raise ValueError(f"n_heads: expected a divisor of dim={self.dim}, got {self.n_heads}")
        fraction(self.dropout, "dropout", open_high=True)
        fraction(self.mask_prob, "mask_prob", open_low=True, open_high=True)
        positive_float(self.lr, "lr")
        for k in ("weight_decay", "distill_weight", "id_weight_decay"):
            nonnegative_float(getattr(self, k), k)
        finite_float(self.text_scale, "text_scale")
        one_of(self.distill_loss, "distill_loss", DISTILL_LOSSES)
        if self.distill_temperature is not None:
            positive_float(self.distill_temperature, "distill_temperature")
        if positive_float(self.distill_perplexity, "distill_perplexity") <= 1.0:
            raise ValueError(f"distill_perplexity: expected a number > 1, got {self.distill_perplexity}")
        if not isinstance(self.item_ids, bool):
            raise TypeError(f"item_ids: expected a bool, got {self.item_ids!r}")
        if self.max_steps is not None:
            positive_int(self.max_steps, "max_steps")


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
    item ``i``); :meth:`text_scores` gives the query head's part alone, ``cos(g(h), t_i)``.
    Id ``0`` is padding; with ``causal=False`` id ``N + 1`` is the mask token. With
    ``config.item_ids=False`` items have no id embedding (text-only tower; the mask token keeps one).
    """

    def __init__(
        self, item_text: torch.Tensor, config: EncoderConfig, causal: bool = True, use_text: bool = True
    ) -> None:
        super().__init__()
        if not isinstance(config, EncoderConfig):
            raise TypeError(f"config: expected an EncoderConfig, got {type(config).__name__}")
        item_text = float_tensor(item_text, "item_text", ndim=2, allow_empty=False)
        if not use_text and not config.item_ids:
            raise ValueError("config.item_ids: an encoder without text (use_text=False) needs item ids")
        n, dt = item_text.shape
        d = config.dim
        self.n_items, self.causal, self.config, self.use_text = n, bool(causal), config, bool(use_text)
        self.item_ids = config.item_ids
        self.register_buffer("item_text", item_text.float())
        unit = item_text.float() / item_text.float().norm(dim=-1, keepdim=True).clamp_min(1e-12)
        self.register_buffer("item_unit", unit, persistent=False)
        self.register_buffer("item_text_padded", F.pad(unit, (0, 0, 1, 1)), persistent=False)
        rows = n + 2 if config.item_ids else 2  # without item ids: padding and the mask token only
        self.id_emb = nn.Embedding(rows, d, padding_idx=0)
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

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        if not isinstance(seq, torch.Tensor) or seq.ndim != 2 or seq.dtype != torch.int64:
            what = f"{seq.dtype} {tuple(seq.shape)}" if isinstance(seq, torch.Tensor) else type(seq).__name__
            raise ValueError(f"seq: expected an int64 (batch, length) tensor, got {what}")
        b, l = seq.shape
        if l > self.config.max_len or l == 0 or b == 0:
            raise ValueError(
                f"seq: expected shape (batch >= 1, 1..max_len={self.config.max_len}), "
                f"got {tuple(seq.shape)}; truncate with pad_histories"
            )
        if seq.min() < 0 or seq.max() > self.n_items + 1:
            raise ValueError(f"seq: unknown item id (expected 0..{self.n_items + 1})")
        if self.item_ids:
            x = self.id_emb(seq)
        else:  # only the mask token (row 1) has an id embedding
            x = self.id_emb((seq == self.n_items + 1).long())
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

    def item_side(self) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """What scoring needs of the items, computed once per step: ``e`` ``(N, dim)`` (the item
        representations), ``W^T t`` ``(N, dim)`` and ``b . t`` ``(N,)`` of the query head (None
        without text). The two text projections of the unit item texts are one matrix product."""
        if not self.use_text:
            return self.id_emb.weight[1 : self.n_items + 1], None, None
        d = self.config.dim
        w = torch.cat([self.text_proj.weight, self.query_head.weight.T], 0)  # (2 dim, d_text)
        m = self.item_unit @ w.T  # (N, 2 dim)
        e = m[:, :d] + self.id_emb.weight[1 : self.n_items + 1] if self.item_ids else m[:, :d]
        return e, m[:, d:], self.item_unit @ self.query_head.bias

    def item_embeddings(self) -> torch.Tensor:
        """``(N, dim)``: the item representations ``e_i`` (id embedding plus projected unit text)."""
        return self.item_side()[0]

    def text_scores(self, h: torch.Tensor, side=None) -> torch.Tensor:
        """``cos(g(h), t_i)`` ``(..., N)``, the query head's retrieval scores.

        ``cos(g(h), t_i) = (h . (W^T t_i) + b . t_i) / ||g(h)||`` for unit ``t_i``: computed in the
        hidden space (``N x dim`` instead of ``N x d_text`` products per row). ``side``: a precomputed
        :meth:`item_side`.
        """
        if not self.use_text:
            raise RuntimeError("text_scores: the encoder was built with use_text=False (no query head)")
        _, tw, tb = side if side is not None else self.item_side()
        g_norm = self.query_head(h).norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return (h @ tw.T + tb) / g_norm

    def scores(self, h: torch.Tensor, side=None, text: torch.Tensor | None = None) -> torch.Tensor:
        """Item scores ``(..., N)`` of hidden states ``h`` ``(..., dim)``: ``h . e_i + s cos(g(h), t_i)``.

        ``side``: a precomputed :meth:`item_side`; ``text``: precomputed :meth:`text_scores` of ``h``.
        """
        side = side if side is not None else self.item_side()
        base = h @ side[0].T
        if not self.use_text:
            return base
        return base + self.scale * (text if text is not None else self.text_scores(h, side))


def teacher_temperature(
    teacher_logits: torch.Tensor, perplexity: float = 10.0, *, max_rows: int = 512
) -> float:
    """The temperature ``tau`` at which ``softmax(teacher_logits / tau)`` has a mean perplexity of
    ``perplexity`` items (``exp`` of the mean entropy over rows), by bisection on ``log tau``.

    ``teacher_logits``: ``(P, N)`` cosines of teacher queries with the items (rows evenly subsampled to
    ``max_rows``). Entropy grows with ``tau`` (from that of the arg-max ties to ``log N``), so the
    root is unique; a target outside the reachable range raises ``ValueError``.
    """
    x = float_tensor(teacher_logits, "teacher_logits", ndim=2, allow_empty=False).float()
    perplexity = positive_float(perplexity, "perplexity")
    max_rows = positive_int(max_rows, "max_rows")
    if x.shape[0] > max_rows:
        x = x[torch.linspace(0, x.shape[0] - 1, max_rows, device=x.device).long()]
    goal = math.log(perplexity)

    def entropy(log_tau: float) -> float:
        logp = torch.log_softmax(x / math.exp(log_tau), -1)
        return float(-(logp.exp() * logp).sum(-1).mean())

    lo, hi = math.log(1e-5), math.log(1e3)
    h_lo, h_hi = entropy(lo), entropy(hi)
    if not h_lo <= goal <= h_hi:
        raise ValueError(
            f"perplexity: expected a target between {math.exp(h_lo):.3g} and {math.exp(h_hi):.3g} items "
            f"for these teacher scores, got {perplexity}"
        )
    for _ in range(30):  # the bracket shrinks to 2**-30 of its 18.4 log-units
        mid = (lo + hi) / 2
        if entropy(mid) < goal:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


class SequentialRecommender:
    """Train and apply a :class:`SequenceEncoder` (scikit-learn-style ``fit`` / ``score``).

    ``kind``: ``"sasrec"`` (causal, next-item CE at every position) or ``"bert4rec"`` (bidirectional,
    Cloze). ``use_text=False`` gives the original id-only models. ``device``: where the model trains
    and scores (a torch device string, default the CPU; scores come back on it).

    ``fit(histories, item_text, distill_targets=None, valid_targets=None)``: each history ends with
    its training target. ``distill_targets`` ``(U, max_len, d_text)`` are PRISMIC's consolidated
    queries of every prefix, aligned with the encoder's input positions (``history[:-1]`` left-padded
    to ``max_len``; padded rows are ignored), SASRec only, loss ``config.distill_loss`` with weight
    ``config.distill_weight``. ``valid_targets`` ``(U,)``: the item that follows each *whole* history
    (the validation item); when given, NDCG@10 of predicting it from the history is measured after
    every epoch, training stops after ``config.patience`` epochs without improvement (at most
    ``config.epochs``) and the best epoch's parameters are restored (early stopping as in SASRec /
    RecBole). Fitted: ``model_``, ``loss_curve_``, ``valid_curve_`` (empty without validation),
    ``best_epoch_``, ``steps_`` (optimiser steps run), ``distill_temperature_`` (listwise only).
    """

    def __init__(
        self,
        kind: str = "sasrec",
        config: EncoderConfig | None = None,
        *,
        use_text: bool = True,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        self.kind = one_of(kind, "kind", ("sasrec", "bert4rec"))
        if config is not None and not isinstance(config, EncoderConfig):
            raise TypeError(f"config: expected an EncoderConfig, got {type(config).__name__}")
        if not isinstance(use_text, bool):
            raise TypeError(f"use_text: expected a bool, got {use_text!r}")
        self.config, self.seed, self.use_text = config or EncoderConfig(), seed_int(seed), use_text
        try:
            self.device = str(torch.device(device))
        except (RuntimeError, TypeError) as e:
            raise ValueError(f"device: expected a torch device string, got {device!r} ({e})") from None

    def fit(
        self,
        histories: Sequence[np.ndarray],
        item_text: np.ndarray | torch.Tensor,
        distill_targets: np.ndarray | torch.Tensor | None = None,
        *,
        valid_targets: np.ndarray | None = None,
    ) -> SequentialRecommender:
        cfg = self.config
        dev = torch.device(self.device)
        text = float_tensor(item_text, "item_text", ndim=2, allow_empty=False)
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
            want = (len(histories), cfg.max_len, text.shape[1])
            distill = float_tensor(distill_targets, "distill_targets")
            if tuple(distill.shape) != want:
                raise ValueError(f"distill_targets: expected shape {want}, got {tuple(distill.shape)}")
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
            valid = torch.as_tensor(vt - 1).to(dev)
            valid_seq = self._inputs(histories, n).to(dev)
        model = SequenceEncoder(text, cfg, causal=self.kind == "sasrec", use_text=self.use_text).to(dev)
        self.model_ = model
        seqs = seqs.to(dev)
        teacher = None
        self.distill_temperature_ = None
        if distill is not None and cfg.distill_weight > 0:
            teacher = self._teacher(model, seqs, distill.to(dev))
        ids = [model.id_emb.weight] if cfg.item_ids else []
        rest = [p for p in model.parameters() if all(p is not q for q in ids)]
        opts = [Adam(rest, lr=cfg.lr, weight_decay=cfg.weight_decay)]
        if ids:
            opts.append(Adam(ids, lr=cfg.lr, weight_decay=cfg.weight_decay + cfg.id_weight_decay))
        curve, vcurve = [], []
        best, best_state, since, steps = -1.0, None, 0, 0
        for _ in range(cfg.epochs):
            model.train()
            perm = torch.randperm(seqs.shape[0], generator=gen)
            total, seen = torch.zeros((), device=dev), 0
            for start in range(0, len(perm), cfg.batch_size):
                idx = perm[start : start + cfg.batch_size].to(dev)
                loss = self._loss(model, seqs[idx], None if teacher is None else (teacher, idx), gen)
                for opt in opts:
                    opt.zero_grad()
                loss.backward()
                for opt in opts:
                    opt.step()
                total, seen, steps = total + loss.detach() * len(idx), seen + len(idx), steps + 1
                if cfg.max_steps is not None and steps >= cfg.max_steps:
                    break
            curve.append(float(total) / seen)
            if valid is not None:
                model.eval()
                with torch.inference_mode():
                    ranks = _ranks(model.scores(model(valid_seq)[:, -1]), valid)
                vcurve.append(float(_ndcg(ranks, 10).mean()))
                if vcurve[-1] > best:
                    best, since = vcurve[-1], 0
                    best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                else:
                    since += 1
            if (cfg.max_steps is not None and steps >= cfg.max_steps) or since >= cfg.patience:
                break
        if best_state is not None:
            model.load_state_dict(best_state)
        self.model_, self.loss_curve_, self.valid_curve_ = model.eval(), curve, vcurve
        self.best_epoch_ = int(np.argmax(vcurve)) + 1 if vcurve else len(curve)
        self.steps_ = steps
        return self

    def _teacher(self, model: SequenceEncoder, seqs: torch.Tensor, distill: torch.Tensor):
        """What the distillation loss needs of the teacher, computed once per fit.

        ``"cosine"``: the unit targets ``(U, L, d_text)``. ``"listwise"``: the teacher's log-probabilities
        over the items at every real input position, ``(P, N)``, and the row of each ``(user, position)``
        in it (``(U, L)``, -1 at padding); sets ``distill_temperature_``.
        """
        cfg = self.config
        keep = seqs[:, :-1] > 0
        unit = F.normalize(distill, dim=-1)
        if cfg.distill_loss == "cosine":
            return unit
        with torch.no_grad():
            logits = unit[keep] @ model.item_unit.T  # (P, N) cosines of the teacher's queries
            tau = cfg.distill_temperature or teacher_temperature(logits, cfg.distill_perplexity)
            logp = torch.log_softmax(logits / tau, -1)
        row = torch.full(keep.shape, -1, dtype=torch.int64, device=seqs.device)
        row[keep] = torch.arange(int(keep.sum()), device=seqs.device)
        self.distill_temperature_ = float(tau)
        return logp, row, tau

    def _loss(self, model: SequenceEncoder, seq: torch.Tensor, teacher, gen) -> torch.Tensor:
        cfg = self.config
        if self.kind == "sasrec":
            inp, tgt = seq[:, :-1], seq[:, 1:]
            keep = inp > 0  # left padding: every real input position has a next item
            h = model(inp)[keep]
            side = model.item_side()
            text = model.text_scores(h, side) if model.use_text else None
            loss = F.cross_entropy(model.scores(h, side, text), tgt[keep] - 1)
            if teacher is not None:
                table, idx = teacher
                if cfg.distill_loss == "cosine":
                    g = F.normalize(model.query_head(h), dim=-1)
                    distill = (1.0 - (g * table[idx][keep]).sum(-1)).mean()
                else:
                    logp_t, row, tau = table
                    logq = torch.log_softmax(text / tau, -1)
                    distill = F.kl_div(logq, logp_t[row[idx][keep]], log_target=True, reduction="batchmean")
                loss = loss + cfg.distill_weight * distill
            return loss
        # BERT4Rec Cloze: mask random real positions (always the last one for half of the rows)
        inp = seq[:, 1:].clone()
        real = inp > 0
        masked = (torch.rand(inp.shape, generator=gen).to(inp.device) < cfg.mask_prob) & real
        masked[:, -1] |= torch.rand(inp.shape[0], generator=gen).to(inp.device) < 0.5
        masked[real.sum(1) == 0] = False
        tgt = inp[masked] - 1
        inp[masked] = model.n_items + 1
        h = model(inp)
        return F.cross_entropy(model.scores(h[masked]), tgt)

    def _fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError("SequentialRecommender: call fit() before encode() / score()")

    def encode(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """User states ``(U, dim)`` read at the latest position (BERT4Rec: at an appended mask token)."""
        self._fitted()
        seq = self._inputs(histories, self.model_.n_items).to(self.device)
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

    def score_query_head(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """Scores ``(U, N)`` of the query head alone, ``cos(g(h), t_i)``: retrieval with the distilled
        query (what distillation trains), without the id / next-item term."""
        if not self.use_text:
            raise RuntimeError("score_query_head: the encoder was built with use_text=False (no query head)")
        h = self.encode(histories)
        with torch.inference_mode():
            return self.model_.text_scores(h)

    def query_embedding(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """The distilled query ``g(h)`` ``(U, d_text)``, unit rows (PRISMIC's consolidated-query estimate)."""
        if not self.use_text:
            raise RuntimeError("query_embedding: the encoder was built with use_text=False (no query head)")
        h = self.encode(histories)
        with torch.inference_mode():
            return F.normalize(self.model_.query_head(h), dim=-1)
