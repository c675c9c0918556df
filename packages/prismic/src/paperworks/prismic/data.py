"""Sequential-recommendation data: a multi-intent generative model, a RecBole atomic-file reader, splits.

Item ids inside this package are 1-based: ``0`` is the padding id of every padded history. A data set
is a :class:`SequenceData`: ``item_texts[i - 1]`` is the text of item ``i`` and ``sequences[u]`` the
chronological item ids of user ``u``.

The generative model (:func:`generate_intent_data`), fixed before any experiment was run:

* **Catalogue (observed).** ``n_categories`` categories x ``n_attributes`` attributes x ``n_variants``
  variants; item text ``"<attribute> <category> <variant>"`` from fixed word lists. Item popularity
  inside a (category, attribute) cell is Zipf(1) over its variants.
* **Users (latent).** Each user has ``n_intents`` intents (distinct categories drawn uniformly) and one
  *taste* attribute. The history is a run of sessions; a session picks one intent uniformly and lasts
  ``1 + Poisson(session_mean - 1)`` items of that category; each item carries the taste attribute with
  probability ``taste`` (else a uniform attribute); with probability ``noise`` an item is replaced by a
  uniform random catalogue item (a noise click).
* **Next item (held out).** The last session continues with probability ``stay`` (else a new session
  starts with a uniformly drawn intent), and the item is drawn like every other item. The history is the
  first ``length - 1`` items; lengths are uniform on ``[min_len, max_len]``.

So the next item is predicted by a *combination* of signals: the category of the last session and the
user's long-term attribute; no single signal (recent item, frequent category, ...) carries both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from paperworks.core.validate import finite_float, fraction, positive_int

from ._checks import seed_int

__all__ = [
    "IntentDataConfig",
    "SequenceData",
    "Split",
    "generate_intent_data",
    "leave_one_out",
    "pad_histories",
    "train_valid_test",
    "read_recbole_atomic",
]

CATEGORY_WORDS = (
    "guitar", "tent", "novel", "lamp", "sneaker", "blender", "camera", "backpack", "puzzle", "jacket",
    "teapot", "drone", "keyboard", "candle", "helmet", "scarf", "kettle", "drum", "telescope", "wallet",
    "bicycle", "pillow", "printer", "umbrella", "violin", "skillet", "headphone", "notebook", "sofa", "watch",
    "mirror", "kayak", "rug", "speaker", "easel", "sandal", "monitor", "vase", "microscope", "hammock",
)  # fmt: skip
ATTRIBUTE_WORDS = (
    "red", "vintage", "wooden", "organic", "leather", "neon", "minimalist", "waterproof", "silver",
    "bamboo", "velvet", "solar", "glass", "retro", "ceramic", "carbon",
)  # fmt: skip
VARIANT_WORDS = (
    "classic", "pro", "mini", "deluxe", "lite", "plus", "max", "basic", "studio", "travel", "ultra", "junior",
)  # fmt: skip


@dataclass(frozen=True)
class SequenceData:
    """A sequential-recommendation data set.

    ``item_texts``: tuple of ``n_items`` strings (item ``i`` is ``item_texts[i - 1]``);
    ``sequences``: tuple of int64 arrays of item ids in ``1..n_items``, chronological, one per user;
    ``item_category`` / ``item_attribute``: optional ``(n_items,)`` int arrays (generated data only).
    """

    item_texts: tuple[str, ...]
    sequences: tuple[np.ndarray, ...]
    name: str = "data"
    item_category: np.ndarray | None = field(default=None, compare=False)
    item_attribute: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if len(self.item_texts) == 0:
            raise ValueError("item_texts: expected at least one item")
        if len(self.sequences) == 0:
            raise ValueError("sequences: expected at least one user")
        n = len(self.item_texts)
        for u, s in enumerate(self.sequences):
            s = np.asarray(s)
            if s.ndim != 1 or s.size == 0:
                raise ValueError(f"sequences[{u}]: expected a non-empty 1-d array of item ids")
            if not np.issubdtype(s.dtype, np.integer):
                raise ValueError(f"sequences[{u}]: expected integer item ids, got dtype {s.dtype}")
            if s.min() < 1 or s.max() > n:
                raise ValueError(
                    f"sequences[{u}]: unknown item id (expected ids in 1..{n}), got {s.min()}..{s.max()}"
                )

    @property
    def n_items(self) -> int:
        return len(self.item_texts)

    @property
    def n_users(self) -> int:
        return len(self.sequences)


@dataclass(frozen=True)
class IntentDataConfig:
    """Parameters of the multi-intent generative model (see the module docstring)."""

    n_users: int = 1000
    n_categories: int = 20
    n_attributes: int = 8
    n_variants: int = 6
    n_intents: int = 3
    taste: float = 0.6
    noise: float = 0.1
    stay: float = 0.75
    session_mean: float = 4.0
    min_len: int = 8
    max_len: int = 20
    name: str = "intents"

    def __post_init__(self) -> None:
        for k in ("n_users", "n_categories", "n_attributes", "n_variants", "n_intents", "min_len", "max_len"):
            positive_int(getattr(self, k), k)
        if self.n_categories > len(CATEGORY_WORDS):
            raise ValueError(f"n_categories: expected at most {len(CATEGORY_WORDS)}, got {self.n_categories}")
        if self.n_attributes > len(ATTRIBUTE_WORDS):
            raise ValueError(
                f"n_attributes: expected at most {len(ATTRIBUTE_WORDS)}, got {self.n_attributes}"
            )
        if self.n_variants > len(VARIANT_WORDS):
            raise ValueError(f"n_variants: expected at most {len(VARIANT_WORDS)}, got {self.n_variants}")
        if self.n_intents > self.n_categories:
            raise ValueError(
                f"n_intents: expected at most n_categories={self.n_categories}, got {self.n_intents}"
            )
        for k in ("taste", "noise", "stay"):
            fraction(getattr(self, k), k)
        if finite_float(self.session_mean, "session_mean") < 1.0:
            raise ValueError(f"session_mean: expected >= 1, got {self.session_mean!r}")
        if self.max_len < self.min_len or self.min_len < 3:
            raise ValueError(
                f"min_len/max_len: expected 3 <= min_len <= max_len, got {self.min_len}, {self.max_len}"
            )
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: expected a non-empty string, got {self.name!r}")

    @property
    def n_items(self) -> int:
        return self.n_categories * self.n_attributes * self.n_variants


def generate_intent_data(config: IntentDataConfig, seed: int) -> SequenceData:
    """Draw a data set from the multi-intent generative model (module docstring). Vectorised over users.

    ``seed``: a non-negative int."""
    if not isinstance(config, IntentDataConfig):
        raise TypeError(f"config: expected an IntentDataConfig, got {type(config).__name__}")
    rng = np.random.default_rng(seed_int(seed))
    c, a, v = config.n_categories, config.n_attributes, config.n_variants
    cat = np.repeat(np.arange(c), a * v)
    att = np.tile(np.repeat(np.arange(a), v), c)
    var = np.tile(np.arange(v), c * a)
    texts = tuple(
        f"{ATTRIBUTE_WORDS[x]} {CATEGORY_WORDS[y]} {VARIANT_WORDS[z]}" for x, y, z in zip(att, cat, var)
    )
    zipf = 1.0 / np.arange(1, v + 1)
    zipf /= zipf.sum()

    n_u, t_max = config.n_users, config.max_len
    intents = np.argsort(rng.random((n_u, c)), axis=1)[:, : config.n_intents]  # distinct categories
    taste = rng.integers(0, a, n_u)
    lengths = rng.integers(config.min_len, config.max_len + 1, n_u)
    # session structure: a new session starts after each item with prob 1 / session_mean
    new_session = rng.random((n_u, t_max)) < 1.0 / config.session_mean
    new_session[:, 0] = True
    # the last (held-out) item continues its session with probability `stay`
    last = lengths - 1
    new_session[np.arange(n_u), last] = rng.random(n_u) >= config.stay
    session_id = np.cumsum(new_session, axis=1) - 1
    session_intent = rng.integers(0, config.n_intents, (n_u, t_max))  # intent of each session index
    item_intent = np.take_along_axis(session_intent, session_id, axis=1)
    item_cat = np.take_along_axis(intents, item_intent, axis=1)
    item_att = np.where(
        rng.random((n_u, t_max)) < config.taste, taste[:, None], rng.integers(0, a, (n_u, t_max))
    )
    item_var = rng.choice(v, size=(n_u, t_max), p=zipf)
    ids = item_cat * a * v + item_att * v + item_var + 1
    noisy = rng.random((n_u, t_max)) < config.noise
    ids = np.where(noisy, rng.integers(1, c * a * v + 1, (n_u, t_max)), ids).astype(np.int64)
    sequences = tuple(ids[u, : lengths[u]].copy() for u in range(n_u))
    return SequenceData(texts, sequences, config.name, cat, att)


def leave_one_out(data: SequenceData) -> tuple[list[np.ndarray], np.ndarray]:
    """Split every sequence into (history, held-out last item). Users with < 3 items raise.

    Returns ``histories`` (list of int64 arrays) and ``targets`` ``(n_users,)``.
    """
    _check_data(data)
    short = [u for u, s in enumerate(data.sequences) if len(s) < 3]
    if short:
        raise ValueError(f"sequences: leave-one-out needs >= 3 items per user; users {short[:5]} have fewer")
    return [np.asarray(s[:-1], dtype=np.int64) for s in data.sequences], np.array(
        [s[-1] for s in data.sequences], dtype=np.int64
    )


@dataclass(frozen=True)
class Split:
    """Leave-one-out split with a validation item per user (SASRec / RecBole protocol).

    For a sequence ``s_1..s_T``: ``train[u] = s_1..s_{T-2}`` (train on every next item inside it, its own
    last item being the final training target); validation predicts ``valid_targets[u] = s_{T-1}`` from
    ``train[u]``; test predicts ``test_targets[u] = s_T`` from ``test_inputs[u] = s_1..s_{T-1}``. The test
    item appears nowhere but in ``test_targets``.
    """

    train: list[np.ndarray]
    valid_targets: np.ndarray
    test_inputs: list[np.ndarray]
    test_targets: np.ndarray


def train_valid_test(data: SequenceData) -> Split:
    """:class:`Split` of every sequence (training history, validation item, test item). Users with
    fewer than 4 items (2 for training, 1 validation, 1 test) raise ``ValueError``."""
    _check_data(data)
    short = [u for u, s in enumerate(data.sequences) if len(s) < 4]
    if short:
        raise ValueError(
            "sequences: a train/validation/test split needs >= 4 items per user; "
            f"users {short[:5]} have fewer"
        )
    seqs = [np.asarray(s, dtype=np.int64) for s in data.sequences]
    return Split(
        train=[s[:-2].copy() for s in seqs],
        valid_targets=np.array([s[-2] for s in seqs], dtype=np.int64),
        test_inputs=[s[:-1].copy() for s in seqs],
        test_targets=np.array([s[-1] for s in seqs], dtype=np.int64),
    )


def _check_data(data: object) -> None:
    if not isinstance(data, SequenceData):
        raise TypeError(f"data: expected a SequenceData, got {type(data).__name__}")


def pad_histories(histories: Sequence[np.ndarray], max_len: int, n_items: int | None = None) -> np.ndarray:
    """Left-pad histories into ``(n_users, max_len)`` int64 with ``0``; keep the **last** ``max_len`` items.

    Truncation keeps the most recent items, so the last column is always the latest item (the encoder
    reads position ``max_len - 1``). Empty histories and ids outside ``1..n_items`` raise ``ValueError``.
    """
    max_len = positive_int(max_len, "max_len")
    if n_items is not None:
        n_items = positive_int(n_items, "n_items")
    if isinstance(histories, str | bytes) or not hasattr(histories, "__len__"):
        raise TypeError(
            f"histories: expected a sequence of item-id sequences, got {type(histories).__name__}"
        )
    if len(histories) == 0:
        raise ValueError("histories: expected at least one history (empty batch)")
    out = np.zeros((len(histories), max_len), dtype=np.int64)
    for u, h in enumerate(histories):
        h = np.asarray(h)
        if h.ndim != 1 or h.size == 0:
            raise ValueError(f"histories[{u}]: expected a non-empty 1-d sequence of item ids (empty history)")
        if not np.issubdtype(h.dtype, np.integer):
            raise TypeError(f"histories[{u}]: expected integer item ids, got dtype {h.dtype}")
        if h.min() < 1 or (n_items is not None and h.max() > n_items):
            raise ValueError(
                f"histories[{u}]: unknown item id {int(h.min()) if h.min() < 1 else int(h.max())} "
                f"(expected ids in 1..{n_items if n_items is not None else 'n_items'})"
            )
        h = h[-max_len:]
        out[u, max_len - h.size :] = h
    return out


def read_recbole_atomic(
    inter_path: str | Path,
    item_path: str | Path | None = None,
    *,
    text_fields: Sequence[str] | None = None,
    min_len: int = 3,
    name: str | None = None,
) -> SequenceData:
    """Read RecBole atomic files: ``.inter`` (``user_id``, ``item_id``, ``timestamp``) and ``.item``.

    Headers are ``name:type`` (``user_id:token``), tab-separated. Interactions are ordered by timestamp
    (stable, file order on ties) per user; users with fewer than ``min_len`` interactions are dropped.
    Item texts join the ``.item`` columns ``text_fields`` (default: every ``token``/``token_seq`` column
    except ``item_id``); items absent from ``.item`` (or without one) get their raw id as text.
    Raw item tokens are mapped to 1-based ids in order of first appearance.
    """
    min_len = positive_int(min_len, "min_len")
    for arg, value in (("inter_path", inter_path), ("item_path", item_path)):
        if not (isinstance(value, str | Path) or (value is None and arg == "item_path")):
            raise TypeError(f"{arg}: expected a path (str or pathlib.Path), got {type(value).__name__}")
    if isinstance(text_fields, str):
        raise TypeError("text_fields: expected a sequence of column names, got one string")
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"name: expected a non-empty string, got {name!r}")
    rows = _read_atomic(Path(inter_path), "inter_path")
    header = rows[0]
    names = [h.split(":")[0] for h in header]
    for need in ("user_id", "item_id"):
        if need not in names:
            raise ValueError(f"inter_path: expected a '{need}:token' column, got header {header}")
    iu, ii = names.index("user_id"), names.index("item_id")
    it = names.index("timestamp") if "timestamp" in names else None
    body = rows[1:]
    if not body:
        raise ValueError(f"inter_path: {inter_path} has no interactions")
    item_index: dict[str, int] = {}
    per_user: dict[str, list[tuple[float, int, int]]] = {}
    for n, r in enumerate(body):
        if len(r) != len(header):
            raise ValueError(f"inter_path: line {n + 2} has {len(r)} fields, expected {len(header)}")
        item = item_index.setdefault(r[ii], len(item_index) + 1)
        if it is None:
            t = float(n)
        else:
            try:
                t = float(r[it])
            except ValueError:
                raise ValueError(
                    f"inter_path: line {n + 2}: timestamp {r[it]!r} is not a number "
                    "(expected a 'timestamp:float' column)"
                ) from None
            if not np.isfinite(t):
                raise ValueError(f"inter_path: line {n + 2}: timestamp {r[it]!r} is not finite")
        per_user.setdefault(r[iu], []).append((t, n, item))
    texts = {raw: raw for raw in item_index}
    if item_path is not None:
        irows = _read_atomic(Path(item_path), "item_path")
        inames = [h.split(":")[0] for h in irows[0]]
        itypes = [h.split(":")[1] if ":" in h else "token" for h in irows[0]]
        if "item_id" not in inames:
            raise ValueError(f"item_path: expected an 'item_id:token' column, got header {irows[0]}")
        if text_fields is None:
            fields = [k for k, t in zip(inames, itypes) if k != "item_id" and t.startswith("token")]
        else:
            unknown = [f for f in text_fields if f not in inames]
            if unknown:
                raise ValueError(f"text_fields: unknown columns {unknown}; the .item file has {inames}")
            fields = list(text_fields)
        idx = [inames.index(f) for f in fields]
        key = inames.index("item_id")
        for r in irows[1:]:
            if r[key] in texts:
                texts[r[key]] = " ".join(r[j] for j in idx if j < len(r) and r[j]) or r[key]
    seqs = []
    for events in per_user.values():
        if len(events) >= min_len:
            events.sort(key=lambda e: (e[0], e[1]))
            seqs.append(np.array([e[2] for e in events], dtype=np.int64))
    if not seqs:
        raise ValueError(f"inter_path: no user has >= min_len={min_len} interactions")
    item_texts = tuple(texts[raw] for raw in item_index)  # dict order = id order
    return SequenceData(item_texts, tuple(seqs), name or Path(inter_path).stem)


def _read_atomic(path: Path, arg: str) -> list[list[str]]:
    if not path.is_file():
        raise FileNotFoundError(f"{arg}: {path}: no such RecBole atomic file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{arg}: {path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    lines = [ln.rstrip("\n").rstrip("\r") for ln in text.splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise ValueError(f"{arg}: {path}: empty atomic file (expected a header line)")
    header = lines[0]
    if "\t" not in header and (" " in header.strip() or "," in header):
        sep = "spaces" if " " in header.strip() else "commas"
        raise ValueError(
            f"{arg}: {path}: the header {header!r} is separated by {sep}; RecBole atomic files are "
            "tab-separated ('user_id:token<TAB>item_id:token<TAB>timestamp:float')"
        )
    return [ln.split("\t") for ln in lines]
