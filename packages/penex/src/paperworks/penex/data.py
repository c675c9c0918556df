"""Low-data splits of scikit-learn's bundled data sets and a templated text-classification task.

Tabular/image data: ``load_digits`` (8x8 images, 10 classes) and ``load_breast_cancer`` (30 features,
2 classes) are bundled with scikit-learn (no download). A split draws ``n_per_class`` training and
``n_val_per_class`` validation points per class; everything else is the test set. Features are
standardised with the training points' statistics.

Text data (:func:`make_text_task`): a documented generative model of short customer-support
messages. Latent: the intent ``k`` (uniform over :data:`INTENTS`) and a template; observed: the
sentence, made by filling the intent's template slots with words drawn uniformly from the intent's
slot vocabularies, and with probability ``p_shared`` replacing the object by a word from a pool
shared by all intents (so a bag of words is not enough), plus an optional polite prefix/suffix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["INTENTS", "Split", "few_shot_split", "load_tabular", "make_text_task"]

TABULAR = ("digits", "breast_cancer")


def load_tabular(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a bundled scikit-learn data set: ``"digits"`` or ``"breast_cancer"``."""
    from sklearn import datasets

    if name == "digits":
        d = datasets.load_digits()
    elif name == "breast_cancer":
        d = datasets.load_breast_cancer()
    else:
        raise ValueError(f"name: expected one of {TABULAR}, got {name!r}")
    return np.asarray(d.data, dtype=np.float32), np.asarray(d.target, dtype=np.int64)


@dataclass(frozen=True)
class Split:
    """Train / validation / test arrays of one low-data split (features standardised on train)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def few_shot_split(
    x: np.ndarray,
    y: np.ndarray,
    n_per_class: int,
    n_val_per_class: int,
    seed: int,
    max_test: int | None = None,
    standardize: bool = True,
) -> Split:
    """Draw ``n_per_class`` training and ``n_val_per_class`` validation points per class.

    ``standardize``: z-score every feature with the training points' mean and std (else: centre only).
    """
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"x, y: expected shapes (N, D) and (N,), got {x.shape} and {y.shape}")
    if n_per_class < 1 or n_val_per_class < 1:
        raise ValueError("n_per_class, n_val_per_class: expected positive counts")
    rng = np.random.default_rng(seed)
    tr, va, te = [], [], []
    for k in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == k))
        if idx.size < n_per_class + n_val_per_class + 1:
            raise ValueError(f"class {k} has {idx.size} points, fewer than the split needs")
        tr.append(idx[:n_per_class])
        va.append(idx[n_per_class : n_per_class + n_val_per_class])
        te.append(idx[n_per_class + n_val_per_class :])
    tr_i, va_i, te_i = (np.concatenate(a) for a in (tr, va, te))
    if max_test is not None and te_i.size > max_test:
        te_i = rng.choice(te_i, size=max_test, replace=False)
    mu = x[tr_i].mean(axis=0)
    sd = x[tr_i].std(axis=0) + 1e-6 if standardize else np.ones(x.shape[1], dtype=x.dtype)
    z = ((x - mu) / sd).astype(np.float32)
    return Split(z[tr_i], y[tr_i], z[va_i], y[va_i], z[te_i], y[te_i])


INTENTS: dict[str, dict[str, list[str]]] = {
    "refund": {
        "verb": ["get my money back for", "a refund on", "to return", "reimbursement for"],
        "obj": ["the shoes", "my order", "the jacket", "the headphones", "this purchase"],
        "tmpl": ["I want {verb} {obj}", "can I get {verb} {obj}", "please process {verb} {obj}"],
    },
    "delivery": {
        "verb": ["where is", "has anyone shipped", "when will I receive", "tracking for"],
        "obj": ["my package", "the parcel", "my order", "the shoes", "the delivery"],
        "tmpl": ["{verb} {obj}", "I am still waiting, {verb} {obj}", "tell me {verb} {obj}"],
    },
    "account": {
        "verb": ["reset the password of", "change the email on", "log into", "delete"],
        "obj": ["my account", "my profile", "the login", "this user", "my membership"],
        "tmpl": ["I cannot {verb} {obj}", "help me {verb} {obj}", "how do I {verb} {obj}"],
    },
    "billing": {
        "verb": [
            "was charged twice for",
            "see a wrong charge for",
            "need an invoice for",
            "dispute the fee on",
        ],
        "obj": ["my card", "this purchase", "my membership", "the subscription", "my order"],
        "tmpl": ["I {verb} {obj}", "it seems I {verb} {obj}", "why do I {verb} {obj}"],
    },
    "product": {
        "verb": ["does it come in", "what size is", "is there a warranty on", "how do I use"],
        "obj": ["the jacket", "the headphones", "this model", "the shoes", "the charger"],
        "tmpl": ["{verb} {obj}", "quick question, {verb} {obj}", "I would like to know {verb} {obj}"],
    },
    "cancel": {
        "verb": ["cancel", "stop", "terminate", "end"],
        "obj": ["my subscription", "my order", "the membership", "this purchase", "my account"],
        "tmpl": ["I want to {verb} {obj}", "please {verb} {obj}", "how can I {verb} {obj}"],
    },
}
_SHARED_OBJ = ["it", "the thing I bought", "my stuff", "the item", "that"]
_PREFIX = ["", "", "hi, ", "hello, ", "excuse me, "]
_SUFFIX = ["", "", " please", " thanks", " asap"]


def make_text_task(n_per_class: int, seed: int, p_shared: float = 0.3) -> tuple[list[str], np.ndarray]:
    """Sample ``n_per_class`` messages per intent; returns ``(texts, labels)`` (labels index INTENTS)."""
    if n_per_class < 1:
        raise ValueError(f"n_per_class: expected a positive count, got {n_per_class}")
    if not 0.0 <= p_shared <= 1.0:
        raise ValueError(f"p_shared: expected a probability in [0, 1], got {p_shared}")
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    labels: list[int] = []
    for k, spec in enumerate(INTENTS.values()):
        for _ in range(n_per_class):
            obj = (
                _SHARED_OBJ[rng.integers(len(_SHARED_OBJ))]
                if rng.random() < p_shared
                else (spec["obj"][rng.integers(len(spec["obj"]))])
            )
            body = spec["tmpl"][rng.integers(len(spec["tmpl"]))].format(
                verb=spec["verb"][rng.integers(len(spec["verb"]))], obj=obj
            )
            texts.append(_PREFIX[rng.integers(len(_PREFIX))] + body + _SUFFIX[rng.integers(len(_SUFFIX))])
            labels.append(k)
    return texts, np.asarray(labels, dtype=np.int64)
