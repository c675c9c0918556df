"""Candidate queries from several historical signals (PRISMIC step 1).

The paper prompts an LLM to write one candidate query per historical signal. Here a deterministic
:class:`TemplateQueryWriter` stands in for it, behind the :class:`QueryWriter` interface that an LLM
client can implement (``write(histories) -> CandidateQueries``).

Items are described by *facets* (fields of their text: for generated data ``attribute``, ``category``,
``variant``; for RecBole data the ``.item`` columns). The template writer's signals, for a history
``h_1..h_T``:

* ``recent``: the text of the last item ``h_T`` ("recently <text>");
* ``session_<facet>``: the most frequent value of the facet among the last ``session_len`` items
  ("now looking for <value>");
* ``long_<facet>``: the most frequent value of the facet over the whole history ("usually likes <value>");
* ``first``: the text of the first item ``h_1`` ("earlier <text>").

Ties in "most frequent" go to the value seen most recently. Each query carries a *support*: the share of
the window's items that agree with it (1 for ``recent``/``first``). All of it is vectorised over users.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from paperworks.core.validate import positive_int

from .embedding import TextEmbedder, check_embeddings

__all__ = ["CandidateQueries", "QueryWriter", "TemplateQueryWriter"]


@dataclass(frozen=True)
class CandidateQueries:
    """Candidate queries of ``n_users`` users for ``n_signals`` signals.

    ``signals``: signal names ``(S,)``; ``texts``: the distinct query texts; ``index``: ``(U, S)`` int
    array into ``texts``; ``support``: ``(U, S)`` float in [0, 1].
    """

    signals: tuple[str, ...]
    texts: tuple[str, ...]
    index: np.ndarray
    support: np.ndarray

    def __post_init__(self) -> None:
        u_s = (self.index.shape[0], len(self.signals)) if self.index.ndim == 2 else None
        if self.index.ndim != 2 or self.index.shape[1] != len(self.signals):
            raise ValueError(f"index: expected shape (n_users, {len(self.signals)}), got {self.index.shape}")
        if self.support.shape != u_s:
            raise ValueError(f"support: expected shape {u_s}, got {self.support.shape}")
        if self.index.size and (self.index.min() < 0 or self.index.max() >= len(self.texts)):
            raise ValueError(f"index: expected entries in 0..{len(self.texts) - 1}")

    @property
    def n_users(self) -> int:
        return self.index.shape[0]

    def query(self, user: int, signal: str) -> str:
        """The text of one user's query for one signal."""
        if isinstance(user, bool) or not isinstance(user, int | np.integer) or not 0 <= user < self.n_users:
            raise ValueError(f"user: expected an int in 0..{self.n_users - 1}, got {user!r}")
        if signal not in self.signals:
            raise KeyError(f"signal: unknown {signal!r}; expected one of {self.signals}")
        return self.texts[self.index[user, self.signals.index(signal)]]

    def select(self, signals: Sequence[str]) -> CandidateQueries:
        """The same queries restricted to ``signals`` (in that order)."""
        if isinstance(signals, str):
            raise TypeError("signals: expected a sequence of signal names, got one string")
        unknown = [s for s in signals if s not in self.signals]
        if unknown or not signals:
            raise ValueError(f"signals: expected a non-empty subset of {self.signals}, got {list(signals)}")
        cols = [self.signals.index(s) for s in signals]
        return CandidateQueries(tuple(signals), self.texts, self.index[:, cols], self.support[:, cols])

    def embed(self, embedder: TextEmbedder) -> np.ndarray:
        """Query embeddings ``(U, S, d)`` float32 (each distinct text embedded once)."""
        if not isinstance(embedder, TextEmbedder):
            raise TypeError(f"embedder: expected a TextEmbedder (dim, encode), got {type(embedder).__name__}")
        table = check_embeddings(embedder.encode(list(self.texts)), "query embeddings")
        return table[self.index]


@runtime_checkable
class QueryWriter(Protocol):
    """Writes one candidate query per signal for each history (an LLM client can implement this)."""

    def write(self, histories: np.ndarray) -> CandidateQueries:
        """``histories``: ``(U, L)`` left-padded item ids (0 = padding), at least one item per row."""
        ...


class TemplateQueryWriter:
    """Deterministic template writer over item facets (module docstring).

    ``item_texts``: ``(n_items,)`` texts (item ``i`` is ``item_texts[i - 1]``); ``item_facets``: per item a
    tuple of facet values (same length for every item), ``facet_names`` their names.
    """

    def __init__(
        self,
        item_texts: Sequence[str],
        item_facets: Sequence[Sequence[str]],
        facet_names: Sequence[str],
        session_len: int = 4,
    ) -> None:
        for arg, v in (
            ("item_texts", item_texts),
            ("item_facets", item_facets),
            ("facet_names", facet_names),
        ):
            if isinstance(v, str) or not isinstance(v, Sequence | np.ndarray):
                raise TypeError(f"{arg}: expected a sequence, got {type(v).__name__}")
        if any(not isinstance(t, str) for t in item_texts):
            raise TypeError("item_texts: expected a sequence of strings")
        if any(not isinstance(f, str) for f in facet_names):
            raise TypeError("facet_names: expected a sequence of strings")
        if len(item_texts) == 0 or len(item_facets) != len(item_texts):
            raise ValueError(
                f"item_facets: expected one facet tuple per item ({len(item_texts)}), got {len(item_facets)}"
            )
        n_f = len(facet_names)
        if n_f == 0 or any(isinstance(f, str) or np.ndim(f) != 1 or len(f) != n_f for f in item_facets):
            raise ValueError(f"item_facets: expected {n_f} values per item (facet_names={list(facet_names)})")
        session_len = positive_int(session_len, "session_len")
        self.item_texts = tuple(item_texts)
        self.facet_names = tuple(facet_names)
        self.session_len = session_len
        # facet value codes, row 0 = padding (-1)
        self._values: list[tuple[str, ...]] = []
        codes = np.full((len(item_texts) + 1, n_f), -1, dtype=np.int64)
        for f in range(n_f):
            vals = tuple(dict.fromkeys(str(x[f]) for x in item_facets))
            lookup = {v: i for i, v in enumerate(vals)}
            codes[1:, f] = [lookup[str(x[f])] for x in item_facets]
            self._values.append(vals)
        self._codes = codes

    @classmethod
    def for_generated(cls, item_texts: Sequence[str], session_len: int = 4) -> TemplateQueryWriter:
        """Writer for :func:`generate_intent_data` texts ``"<attribute> <category> <variant>"``."""
        facets = [tuple(t.split()) for t in item_texts]
        return cls(item_texts, facets, ("attribute", "category", "variant"), session_len)

    @property
    def signals(self) -> tuple[str, ...]:
        f = self.facet_names
        return ("recent", *(f"session_{x}" for x in f), *(f"long_{x}" for x in f), "first")

    def write(self, histories: np.ndarray) -> CandidateQueries:
        try:
            h = np.asarray(histories)
        except ValueError:
            raise ValueError(
                "histories: expected a rectangular (n_users, max_len) id array (use pad_histories)"
            ) from None
        if h.ndim != 2 or h.shape[0] == 0:
            raise ValueError(
                f"histories: expected a non-empty (n_users, max_len) id array, got shape {h.shape}"
            )
        if not np.issubdtype(h.dtype, np.integer):
            raise TypeError(f"histories: expected integer item ids, got dtype {h.dtype}")
        if h.min() < 0 or h.max() > len(self.item_texts):
            raise ValueError(
                f"histories: unknown item id (expected 0 = padding or 1..{len(self.item_texts)})"
            )
        valid = h > 0
        lengths = valid.sum(1)
        if (lengths == 0).any():
            raise ValueError(
                f"histories: empty history for users {np.flatnonzero(lengths == 0)[:5].tolist()}"
            )
        u, l_max = h.shape
        pos = np.arange(l_max)
        first_pos = l_max - lengths  # left padding
        last_items = h[:, -1]
        first_items = h[np.arange(u), first_pos]
        if (last_items == 0).any():
            raise ValueError(
                "histories: expected left-padded rows (the last column must hold the latest item)"
            )
        session_window = valid & (pos[None, :] >= l_max - self.session_len)

        texts: list[str] = []
        lookup: dict[str, int] = {}

        def intern(strings: list[str]) -> np.ndarray:
            return np.array([lookup.setdefault(s, len(lookup)) for s in strings], dtype=np.int64)

        cols, supp = [], []
        cols.append(intern([f"recently {self.item_texts[i - 1]}" for i in last_items]))
        supp.append(np.ones(u))
        for prefix, window in (("now looking for", session_window), ("usually likes", valid)):
            for f, vals in enumerate(self._values):
                code, share = _mode(self._codes[h, f], window, len(vals))
                cols.append(intern([f"{prefix} {vals[c]}" for c in code]))
                supp.append(share)
        cols.append(intern([f"earlier {self.item_texts[i - 1]}" for i in first_items]))
        supp.append(np.ones(u))
        texts = list(lookup)
        return CandidateQueries(self.signals, tuple(texts), np.stack(cols, 1), np.stack(supp, 1))


def _mode(codes: np.ndarray, window: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """Most frequent code per row inside ``window`` (ties: most recent) and its share of the window."""
    u, l_max = codes.shape
    c = np.where(window, codes, 0)
    counts = np.zeros((u, n_values))
    rows = np.repeat(np.arange(u), l_max)
    np.add.at(counts, (rows, c.ravel()), window.ravel().astype(float))
    last_seen = np.full((u, n_values), -1.0)
    np.maximum.at(last_seen, (rows, c.ravel()), np.where(window, np.arange(l_max)[None, :], -1).ravel())
    score = counts + (last_seen + 1.0) / (l_max + 2.0)  # recency breaks ties only
    best = score.argmax(1)
    share = counts[np.arange(u), best] / np.maximum(window.sum(1), 1)
    return best, share
