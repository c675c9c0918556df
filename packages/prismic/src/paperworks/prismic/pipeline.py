"""The PRISMIC pipeline: candidate queries -> GRPO consolidator -> distilled encoder (LLM-free inference).

``Prismic(writer, embedder).fit(histories, item_texts)`` with each training history ending in its
training target ``h_T``:

1. the writer writes one candidate query per signal from ``h_1..h_{T-1}`` (no truncation: the writer
   sees the whole history); the embedder embeds them and the item texts;
2. a :class:`~paperworks.prismic.consolidator.GRPOConsolidator` learns which fragments to merge, with the
   NDCG@10 of ``h_T`` as reward, and yields the consolidated query ``q*`` of every training history;
3. a SASRec-style :class:`~paperworks.prismic.encoder.SequentialRecommender` is trained on the histories
   with the next-item loss plus the distillation loss to the consolidated query of every prefix (the
   consolidator is a function of the history only, so it labels every prefix without a target).

``score(histories)`` runs only the encoder; ``score_query_head(histories)`` retrieves with the encoder's
distilled query alone (``cos(g(h), t_i)``, what distillation trains). ``score_consolidated(histories)``
runs writer + consolidator and retrieves with ``q*`` (the "consolidation without distillation"
ablation, the teacher, and what PRISMIC avoids at inference).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ._checks import seed_int
from .consolidator import GRPOConsolidator, consolidate
from .data import pad_histories
from .embedding import TextEmbedder, check_embeddings
from .encoder import EncoderConfig, SequentialRecommender
from .grpo import GRPOConfig
from .signals import CandidateQueries, QueryWriter

__all__ = ["Prismic", "signal_inputs"]


def signal_inputs(
    writer: QueryWriter,
    embedder: TextEmbedder,
    histories: Sequence[np.ndarray],
    item_emb: np.ndarray,
    signals: Sequence[str] | None = None,
) -> tuple[CandidateQueries, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Candidate queries of ``histories`` and the consolidator's inputs.

    Returns ``(candidates, queries (U, S, d), support (U, S), context (U, d))`` where ``context`` is the
    mean text embedding of each history's items.
    """
    if not isinstance(writer, QueryWriter):
        raise TypeError(
            f"writer: expected a QueryWriter (with write(histories)), got {type(writer).__name__}"
        )
    if not isinstance(embedder, TextEmbedder):
        raise TypeError(f"embedder: expected a TextEmbedder (dim, encode), got {type(embedder).__name__}")
    item_emb = check_embeddings(item_emb, "item_emb")
    if len(histories) == 0:
        raise ValueError("histories: expected at least one history (empty batch)")
    n = item_emb.shape[0]
    width = max(len(h) for h in histories)
    padded = pad_histories(histories, max(width, 1), n)
    cands = writer.write(padded)
    if signals is not None:
        cands = cands.select(signals)
    queries = torch.as_tensor(cands.embed(embedder))
    if queries.shape[2] != item_emb.shape[1]:
        raise ValueError(
            f"item_emb: expected width {queries.shape[2]} (the embedder's), got {item_emb.shape[1]}"
        )
    table = torch.as_tensor(np.vstack([np.zeros((1, item_emb.shape[1]), np.float32), item_emb]))
    p = torch.as_tensor(padded)
    context = table[p].sum(1) / (p > 0).sum(1, keepdim=True)
    return cands, queries, torch.as_tensor(cands.support, dtype=torch.float32), context


class Prismic:
    """PRISMIC recommender (module docstring). ``device``: where the consolidator and the encoder train
    and score (a torch device string; default the CPU). Fitted: ``item_emb_``, ``consolidator_``,
    ``recommender_``, ``signals_`` (the signals offered to the consolidator)."""

    def __init__(
        self,
        writer: QueryWriter,
        embedder: TextEmbedder,
        *,
        grpo: GRPOConfig | None = None,
        encoder: EncoderConfig | None = None,
        signals: Sequence[str] | None = None,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        if not isinstance(writer, QueryWriter):
            raise TypeError(
                f"writer: expected a QueryWriter (with write(histories)), got {type(writer).__name__}"
            )
        if not isinstance(embedder, TextEmbedder):
            raise TypeError(f"embedder: expected a TextEmbedder (dim, encode), got {type(embedder).__name__}")
        if grpo is not None and not isinstance(grpo, GRPOConfig):
            raise TypeError(f"grpo: expected a GRPOConfig, got {type(grpo).__name__}")
        if encoder is not None and not isinstance(encoder, EncoderConfig):
            raise TypeError(f"encoder: expected an EncoderConfig, got {type(encoder).__name__}")
        if isinstance(signals, str):
            raise TypeError("signals: expected a sequence of signal names, got one string")
        if signals is not None and (len(signals) == 0 or not all(isinstance(x, str) for x in signals)):
            raise ValueError(f"signals: expected a non-empty sequence of signal names, got {signals!r}")
        self.writer, self.embedder = writer, embedder
        self.grpo, self.encoder = grpo or GRPOConfig(), encoder or EncoderConfig()
        self.signals = None if signals is None else tuple(signals)
        self.seed = seed_int(seed)
        self.device = str(torch.device(device))

    def fit(
        self,
        histories: Sequence[np.ndarray],
        item_texts: Sequence[str],
        *,
        valid_targets: np.ndarray | None = None,
    ) -> Prismic:
        """Fit on ``histories`` (each ending with its training target). ``valid_targets``: the item after
        each whole history, used only for the encoder's early stopping (see
        :meth:`SequentialRecommender.fit`); the consolidator never sees it."""
        if isinstance(item_texts, str):
            raise TypeError("item_texts: expected a sequence of strings, got one string")
        if len(histories) == 0:
            raise ValueError("histories: expected at least one training history (empty batch)")
        for u, h in enumerate(histories):
            if np.ndim(h) != 1:
                raise ValueError(f"histories[{u}]: expected a 1-d sequence of item ids, got {h!r}"[:200])
        short = [u for u, h in enumerate(histories) if len(h) < 2]
        if short:
            raise ValueError(
                f"histories: expected >= 2 items (inputs + target); users {short[:5]} have fewer"
            )
        item_emb = check_embeddings(self.embedder.encode(list(item_texts)), "item embeddings")
        inputs = [np.asarray(h[:-1]) for h in histories]
        targets = np.array([h[-1] for h in histories], dtype=np.int64)
        cands, q, s, c = signal_inputs(self.writer, self.embedder, inputs, item_emb, self.signals)
        self.signals_ = cands.signals
        self.consolidator_ = GRPOConsolidator(self.grpo, seed=self.seed, device=self.device).fit(
            q, s, c, item_emb, targets
        )
        self.item_emb_ = item_emb
        rec = SequentialRecommender("sasrec", self.encoder, seed=self.seed, device=self.device)
        self.recommender_ = rec.fit(
            histories, item_emb, self.prefix_targets(inputs), valid_targets=valid_targets
        )
        return self

    def prefix_targets(self, inputs: Sequence[np.ndarray]) -> torch.Tensor:
        """Consolidated queries of every prefix, aligned with the encoder's input positions.

        ``inputs``: histories without their training target. Returns ``(U, max_len, d)``: row ``u``,
        position ``j`` holds ``q*`` of the prefix ending at the item the encoder reads at ``j``
        (``inputs[u]`` left-padded to ``max_len``, keeping its last ``max_len`` items); padded
        positions hold zeros (the encoder's loss skips them).
        """
        max_len = self.encoder.max_len
        prefixes, rows, cols = [], [], []
        for u, h in enumerate(inputs):
            m = len(h)
            for j in range(max_len - min(m, max_len), max_len):
                prefixes.append(h[: m - (max_len - 1 - j)])
                rows.append(u)
                cols.append(j)
        _, q, s, c = signal_inputs(self.writer, self.embedder, prefixes, self.item_emb_, self.signals_)
        out = torch.zeros(len(inputs), max_len, q.shape[2])
        out[torch.as_tensor(rows), torch.as_tensor(cols)] = self.consolidator_.transform(q, s, c)
        return out

    def _fitted(self) -> None:
        if not hasattr(self, "recommender_"):
            raise RuntimeError("Prismic: call fit() first")

    def score(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """Encoder-only scores ``(U, N)`` (column ``i - 1`` = item ``i``): no writer, no consolidator."""
        self._fitted()
        return self.recommender_.score(histories)

    def score_query_head(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """Scores ``(U, N)`` of the encoder's distilled query alone, ``cos(g(h), t_i)``: the student's
        retrieval, to set beside the teacher's (:meth:`score_consolidated`)."""
        self._fitted()
        return self.recommender_.score_query_head(histories)

    def consolidated(
        self, histories: Sequence[np.ndarray]
    ) -> tuple[CandidateQueries, np.ndarray, torch.Tensor]:
        """Writer + consolidator on ``histories``: candidates, greedy selections (U, S), ``q*`` (U, d)."""
        self._fitted()
        cands, q, s, c = signal_inputs(self.writer, self.embedder, histories, self.item_emb_, self.signals_)
        sel = self.consolidator_.predict(q, s, c)
        return cands, sel, consolidate(q, torch.as_tensor(sel))

    def consolidated_text(self, histories: Sequence[np.ndarray]) -> list[str]:
        """The consolidated query of each history as text: its kept fragments joined by '; '."""
        cands, sel, _ = self.consolidated(histories)
        return [
            "; ".join(cands.texts[cands.index[u, j]] for j in np.flatnonzero(sel[u])) for u in range(len(sel))
        ]

    def score_consolidated(self, histories: Sequence[np.ndarray]) -> torch.Tensor:
        """Scores ``(U, N)`` from retrieving with the consolidated query (no distillation)."""
        _, _, q = self.consolidated(histories)
        return q @ torch.as_tensor(self.item_emb_).T
