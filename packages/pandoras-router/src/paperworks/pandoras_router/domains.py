"""The three routing domains as documented generative models, and a RouterBench table loader.

Every generator returns a :class:`RoutingDataset`: query texts (observed; the cheap estimator
embeds them), the latent success probability ``quality`` (n, K) of each specialist on each query,
the answer ``price`` (n, K) in dollars, and per specialist the expensive estimator's noise std
``tau`` (K,) and the price of one expensive call ``inspect_price`` (K,). The value of routing query
``q`` to ``k`` at willingness-to-pay ``lam`` (value units per dollar) is
``V = quality - lam * price``; the expensive estimator reads ``V + N(0, tau^2)``.

Latent structure (what the text shows, what it hides):

1. ``multi_llm`` (RouterBench-shaped): 11 LLMs with general ability ``a_k`` rising with price and a
   skill ``b_{k,t}`` per topic ``t``; a query has topic ``t`` and difficulty level ``l`` (both
   visible in its text), a hidden difficulty ``d = 0.9 l - 1.3 + N(0, 0.5^2)`` and hidden
   model-query affinities ``eta ~ N(0, 0.9^2)``: ``quality = sigmoid(a_k + b_{k,t} - d + eta)``.
2. ``retrieval``: 6 retrieval-augmented specialists over different corpora; corpus ``k`` covers
   topic ``t`` with probability ``cov_{k,t}``; whether it retrieves a relevant passage for this
   query is a hidden Bernoulli ``h``; ``quality = sigmoid(base_k - d + 2.5 h + eta)``. The expensive
   estimator (a reranker reading the retrieved passages) sees ``h``; the cheap one only the topic.
3. ``reasoning``: one LLM at 6 reasoning budgets ``b`` (0 to 8k thinking tokens);
   ``quality = sigmoid(a - d + g_q * log2(1 + b / 256) + eta)`` with a hidden per-query gain from
   reasoning ``g_q``; price grows with ``b``; the expensive estimator reads a short partial trace.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paperworks.core.validate import int_in_range, nonnegative_float, one_of, positive_float

from ._validate import as_finite, as_nonneg

__all__ = ["DOMAINS", "RoutingDataset", "load_routerbench", "make_domain"]


@dataclass(frozen=True)
class RoutingDataset:
    """Queries x specialists. Shapes: ``texts`` n, ``topic`` (n,), ``quality``/``price`` (n, K),
    ``tau``/``inspect_price`` (K,), ``specialists`` K names."""

    name: str
    texts: tuple[str, ...]
    topic: np.ndarray
    quality: np.ndarray
    price: np.ndarray
    specialists: tuple[str, ...]
    tau: np.ndarray
    inspect_price: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name: expected a string, got {type(self.name).__name__}")
        quality = as_finite(self.quality, "quality", ndim=2)
        n, k = quality.shape
        price = as_nonneg(self.price, "price", ndim=2)
        if price.shape != (n, k):
            raise ValueError(f"price: expected shape {(n, k)} (the shape of quality), got {price.shape}")
        if (
            isinstance(self.texts, str)
            or len(self.texts) != n
            or not all(isinstance(t, str) for t in self.texts)
        ):
            raise ValueError(f"texts: expected {n} strings (one per row of quality)")
        topic = np.asarray(self.topic)
        if topic.shape != (n,) or topic.dtype.kind not in "iu":
            raise ValueError(
                f"topic: expected {n} integers (one per row of quality), got {topic.dtype} {topic.shape}"
            )
        if isinstance(self.specialists, str) or len(self.specialists) != k:
            raise ValueError(f"specialists: expected {k} names (one per column of quality)")
        for name in ("tau", "inspect_price"):
            arr = as_nonneg(getattr(self, name), name, ndim=1)
            if arr.shape != (k,):
                raise ValueError(f"{name}: expected shape ({k},) (one per specialist), got {arr.shape}")
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "quality", quality)
        object.__setattr__(self, "price", price)
        object.__setattr__(self, "texts", tuple(self.texts))
        object.__setattr__(self, "specialists", tuple(self.specialists))

    @property
    def n(self) -> int:
        return self.quality.shape[0]

    def value(self, lam: float) -> np.ndarray:
        """(n, K) value of routing each query to each specialist: quality - lam * price (``lam`` >= 0)."""
        lam = nonnegative_float(lam, "lam")
        return self.quality - lam * self.price


_TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "arithmetic": (
        (
            "What is {a} times {b} plus {c}?",
            "Compute {a} divided by {c}, rounded to two decimals.",
            "A shop sells {a} apples at {b} cents each; what is the total?",
        ),
        (),
    ),
    "algebra": (
        (
            "Solve for x: {a}x + {b} = {c}.",
            "Factor the polynomial x^2 + {a}x + {b}.",
            "Find all real roots of x^3 - {a}x + {b}.",
        ),
        (),
    ),
    "code": (
        (
            "Write a Python function that {task}.",
            "Fix the bug in this loop that {task}.",
            "What is the time complexity of a routine that {task}?",
        ),
        (
            "reverses a linked list",
            "merges two sorted arrays",
            "parses a CSV line with quotes",
            "finds the longest palindromic substring",
            "deduplicates a list while keeping order",
        ),
    ),
    "history": (
        (
            "Who ruled {place} around the year {year}?",
            "Why did the war in {place} begin in {year}?",
            "Summarise the economy of {place} in {year}.",
        ),
        ("Byzantium", "the Mughal empire", "Venice", "Prussia", "the Inca empire", "Edo Japan"),
    ),
    "biology": (
        (
            "Explain how {thing} works in the cell.",
            "What happens to {thing} during mitosis?",
            "Which enzyme regulates {thing}?",
        ),
        ("the sodium-potassium pump", "ribosome assembly", "the Krebs cycle", "DNA mismatch repair"),
    ),
    "law": (
        (
            "Is a verbal contract about {thing} enforceable?",
            "Who is liable when {thing} causes harm?",
            "Summarise the precedent on {thing}.",
        ),
        ("a land sale", "a defective drone", "an unpaid loan", "a leaked trade secret"),
    ),
    "chemistry": (
        (
            "Balance the reaction of {thing} with oxygen.",
            "What is the pH of {a} mM {thing}?",
            "Predict the product when {thing} is heated.",
        ),
        ("methane", "acetic acid", "sodium bicarbonate", "ethanol", "ammonia"),
    ),
    "trivia": (
        (
            "What is the capital of {place}?",
            "Which river flows through {place}?",
            "Name a famous dish from {place}.",
        ),
        ("Mongolia", "Peru", "Slovenia", "Ghana", "Laos", "Uruguay"),
    ),
}
_LEVELS = (
    "Quick question:",
    "Question:",
    "Think step by step about this harder problem:",
    "Very challenging, expert-level problem:",
)


def _query_pool(
    n: int, rng: np.random.Generator, topics: tuple[str, ...]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    texts, topic_ids, levels = [], np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    for i in range(n):
        t = int(rng.integers(len(topics)))
        level = int(rng.integers(len(_LEVELS)))
        templates, fillers = _TOPICS[topics[t]]
        tpl = templates[int(rng.integers(len(templates)))]
        fill = fillers[int(rng.integers(len(fillers)))] if fillers else ""
        body = tpl.format(
            a=int(rng.integers(2, 999)),
            b=int(rng.integers(2, 99)),
            c=int(rng.integers(2, 999)),
            task=fill,
            place=fill,
            thing=fill,
            year=int(rng.integers(600, 1900)),
        )
        texts.append(f"{_LEVELS[level]} {body}")
        topic_ids[i], levels[i] = t, level
    return texts, topic_ids, levels


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _multi_llm(n: int, rng: np.random.Generator, pool_rng: np.random.Generator) -> RoutingDataset:
    topics = tuple(_TOPICS)
    texts, t, level = _query_pool(n, pool_rng, topics)
    k = 11
    names = tuple(f"llm-{i:02d}" for i in range(k))
    price_per_1k = np.geomspace(0.0002, 0.03, k)  # dollars per 1k tokens, cheapest to frontier
    ability = np.linspace(-0.6, 2.2, k) + rng.normal(0, 0.25, k)
    skill = rng.normal(0, 0.7, (k, len(topics)))
    d = 0.9 * level - 1.3 + rng.normal(0, 0.5, n)
    eta = rng.normal(0, 0.9, (n, k))
    quality = _sigmoid(ability[None, :] + skill[:, t].T - d[:, None] + eta)
    tokens = rng.uniform(0.3, 1.5, n) * (1 + 0.5 * level)  # thousands of tokens per answer
    price = tokens[:, None] * price_per_1k[None, :]
    tau = np.full(k, 0.05)
    inspect_price = np.full(k, 0.0004)  # a small judge model reading the query + draft: dollars/call
    return RoutingDataset("multi_llm", tuple(texts), t, quality, price, names, tau, inspect_price)


def _retrieval(n: int, rng: np.random.Generator, pool_rng: np.random.Generator) -> RoutingDataset:
    topics = tuple(_TOPICS)
    texts, t, level = _query_pool(n, pool_rng, topics)
    k = 6
    names = ("rag-wiki", "rag-science", "rag-legal", "rag-code", "rag-news", "no-retrieval")
    coverage = rng.uniform(0.05, 0.5, (k, len(topics)))
    for j in range(k - 1):  # each corpus is strong on two topics
        coverage[j, rng.choice(len(topics), 2, replace=False)] = rng.uniform(0.7, 0.95, 2)
    coverage[-1] = 0.0
    base = np.array([0.0, 0.0, -0.2, 0.1, -0.1, 0.6]) + rng.normal(0, 0.2, k)
    d = 0.9 * level - 1.3 + rng.normal(0, 0.5, n)
    hit = rng.random((n, k)) < coverage[:, t].T
    eta = rng.normal(0, 0.5, (n, k))
    quality = _sigmoid(base[None, :] - d[:, None] + 2.5 * hit + eta)
    tokens = rng.uniform(0.5, 1.5, n) * (1 + 0.3 * level)
    price = tokens[:, None] * np.array([0.004, 0.006, 0.008, 0.005, 0.004, 0.002])[None, :]
    tau = np.full(k, 0.05)
    inspect_price = np.full(k, 0.0003)  # a reranker scoring the retrieved passages
    return RoutingDataset("retrieval", tuple(texts), t, quality, price, names, tau, inspect_price)


def _reasoning(n: int, rng: np.random.Generator, pool_rng: np.random.Generator) -> RoutingDataset:
    topics = tuple(_TOPICS)
    texts, t, level = _query_pool(n, pool_rng, topics)
    budgets = np.array([0, 512, 1024, 2048, 4096, 8192])
    k = budgets.size
    names = tuple(f"think-{b}" for b in budgets)
    topic_gain = rng.uniform(0.1, 0.6, len(topics))  # maths and code gain most on average, by draw
    gain = topic_gain[t] * (0.5 + 0.3 * level) * rng.lognormal(0, 0.6, n)
    d = 0.9 * level - 1.0 + rng.normal(0, 0.5, n)
    eta = rng.normal(0, 0.35, (n, k))
    quality = _sigmoid(0.3 - d[:, None] + gain[:, None] * np.log2(1 + budgets / 256)[None, :] + eta)
    prompt_tokens = rng.uniform(0.2, 1.0, n)
    price = (prompt_tokens[:, None] + budgets[None, :] / 1000 * rng.uniform(0.6, 1.2, (n, 1))) * 0.004
    tau = np.full(k, 0.07)
    inspect_price = np.full(k, 0.0005)  # a 256-token partial trace scored by a probe
    return RoutingDataset("reasoning", tuple(texts), t, quality, price, names, tau, inspect_price)


DOMAINS = {"multi_llm": _multi_llm, "retrieval": _retrieval, "reasoning": _reasoning}


def make_domain(name: str, n: int, seed: int) -> RoutingDataset:
    """Draw ``n`` queries of domain ``name`` (one of :data:`DOMAINS`).

    The query texts come from a pool fixed per domain (so embeddings can be cached across seeds);
    ``seed`` draws every latent quantity (abilities, skills, hidden difficulty, affinities).
    """
    name = one_of(name, "name", sorted(DOMAINS))
    n = int_in_range(n, "n", 2)
    seed = int_in_range(seed, "seed", 0)
    pool_rng = np.random.default_rng(1000 + sorted(DOMAINS).index(name))
    return DOMAINS[name](n, np.random.default_rng(seed), pool_rng)


PICKLE_SUFFIXES = (".pkl", ".pickle")
PARQUET_SUFFIXES = (".parquet", ".pq")


def load_routerbench(
    path: str | Path, *, inspect_price: float, tau: float = 0.1, trusted: bool = False
) -> RoutingDataset:
    """Read a RouterBench table: CSV, Parquet, or (only with ``trusted=True``) a pandas pickle.

    RouterBench's published format has one row per prompt with columns ``sample_id``, ``prompt``,
    ``eval_name`` and, for every model ``M``, a performance column ``M`` (0/1 or a score in [0, 1])
    and a cost column ``M|total_cost`` (dollars); ``M|model_response`` and other columns are
    ignored. ``prompt`` may hold a JSON/Python list of strings (joined with a space). ``quality``
    is the recorded performance, ``topic`` indexes ``eval_name``.

    The format follows the suffix: ``.parquet``/``.pq`` is read with pyarrow (or fastparquet), ``.pkl``/
    ``.pickle`` with ``pandas.read_pickle``, anything else as CSV. Unpickling runs whatever code the file
    names, so a pickle is refused unless the caller passes ``trusted=True`` for a file it trusts;
    converting it once (``pd.read_pickle(p).to_parquet(...)`` or ``.to_csv(...)``) avoids the question.

    ``inspect_price`` (required, > 0): the price of one expensive-estimator call in the table's money
    units (RouterBench records no such price; a free call would make every reservation value +inf
    and the Router exhaustive). ``tau`` (>= 0): the expensive estimator's noise std.
    """
    if not isinstance(trusted, bool):
        raise TypeError(f"trusted: expected True or False, got {trusted!r}")
    inspect_price = positive_float(inspect_price, "inspect_price")
    tau = nonnegative_float(tau, "tau")
    if not isinstance(path, str | os.PathLike) or (isinstance(path, str) and not path):
        raise TypeError(f"path: expected a file path (str or pathlib.Path), got {path!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no RouterBench table at {path}")
    suffix = path.suffix.lower()
    if suffix in PICKLE_SUFFIXES:
        header, rows = _read_pickle(path, trusted)
    elif suffix in PARQUET_SUFFIXES:
        header, rows = _read_parquet(path)
    else:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise ValueError(f"path: {path} is empty")
            rows = list(reader)
    for col in ("prompt", "eval_name"):
        if col not in header:
            raise ValueError(f"path: RouterBench table needs a {col!r} column; found {header}")
    models = [h for h in header if f"{h}|total_cost" in header]
    if not models:
        raise ValueError("path: no model columns found (expected 'M' and 'M|total_cost' pairs)")
    if not rows:
        raise ValueError(f"path: {path} has a header but no rows")
    pi, ei = header.index("prompt"), header.index("eval_name")
    qi = [header.index(m) for m in models]
    ci = [header.index(f"{m}|total_cost") for m in models]
    texts, evals = [], []
    quality = np.empty((len(rows), len(models)))
    price = np.empty((len(rows), len(models)))
    for r, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"path: row {r} has {len(row)} fields, expected {len(header)}")
        texts.append(_prompt_text(row[pi]))
        evals.append(row[ei])
        try:
            quality[r] = [float(row[i]) for i in qi]
            price[r] = [float(row[i]) for i in ci]
        except ValueError:
            raise ValueError(f"path: row {r} has a non-numeric performance or cost") from None
    if not (np.isfinite(quality).all() and np.isfinite(price).all()):
        raise ValueError("path: performance and cost must be finite numbers")
    names = sorted(set(evals))
    topic = np.array([names.index(e) for e in evals], dtype=np.int64)
    k = len(models)
    return RoutingDataset(
        "routerbench",
        tuple(texts),
        topic,
        quality,
        price,
        tuple(models),
        np.full(k, float(tau)),
        np.full(k, float(inspect_price)),
    )


def _pandas(what: str):
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            f"load_routerbench: reading a {what} table needs pandas (pip install "
            "'paperworks-pandoras-router[routerbench]'); or save it as CSV"
        ) from None
    return pd


def _frame_rows(frame) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a DataFrame as strings (array cells, e.g. a list-valued prompt, as lists)."""
    columns = [[_cell(v) for v in frame[c].tolist()] for c in frame.columns]
    return [str(c) for c in frame.columns], [list(r) for r in zip(*columns)]


def _cell(v: object) -> str:
    return str(v.tolist()) if isinstance(v, np.ndarray) else str(v)


def _read_pickle(path: Path, trusted: bool) -> tuple[list[str], list[list[str]]]:
    if not trusted:
        raise ValueError(
            f"path: {path.name} is a pickle, and unpickling runs code from the file; pass trusted=True "
            "only for a file you trust, or convert it to CSV or Parquet"
        )
    pd = _pandas(".pkl")
    frame = pd.read_pickle(path)
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"path: {path.name} holds a {type(frame).__name__}, expected a pandas DataFrame")
    return _frame_rows(frame)


def _read_parquet(path: Path) -> tuple[list[str], list[list[str]]]:
    import importlib.util

    engines = [e for e in ("pyarrow", "fastparquet") if importlib.util.find_spec(e) is not None]
    if not engines:
        raise ImportError(
            "load_routerbench: reading a .parquet table needs pyarrow or fastparquet "
            "(pip install pyarrow); or save it as CSV"
        )
    pd = _pandas(".parquet")
    return _frame_rows(pd.read_parquet(path, engine=engines[0]))


def _prompt_text(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith("["):
        try:
            parts = json.loads(raw)
        except json.JSONDecodeError:
            try:
                import ast

                parts = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                return raw
        if isinstance(parts, list):
            return " ".join(str(p) for p in parts)
    return raw
