"""Side by side: per-instance predict + update over a stream, ours vs river vs scikit-learn.

One call = one pass over a stream of ``n`` instances from the generator (d = 10, 25% positives), each
instance predicted irrevocably, then learned:

* ``ours``: :class:`DinkelbachClassifier` (built-in online logistic regression, F1 tracker),
  ``predict_one(x)`` then ``learn_one(x, y)`` with ``x`` a dict (river's calling convention);
* ``ours (one partial_fit)``: the same learner and the same per-instance protocol, the whole stream
  given to one ``partial_fit(X, y)`` call on NumPy arrays (rows processed in order, one round each);
* ``river``: ``linear_model.LogisticRegression()`` with ``metrics.F1``, ``predict_one`` then
  ``learn_one`` (threshold 0.5, river's decision);
* ``sklearn``: ``SGDClassifier(loss="log_loss").partial_fit`` one row at a time, predicting with a
  threshold that ``TunedThresholdClassifierCV`` (scoring F1, 3 folds) re-tunes on all rows seen so far
  at doubling checkpoints (256, 512, ...): the practitioner's tuned plug-in, refitted online; and the
  per-row ``partial_fit`` / ``predict_proba`` alone (threshold 0.5), timed apart.

scikit-learn's per-row ``partial_fit`` is slow, so its side runs at 10^3 and 10^4 instances only; the
10^5 comparison is ours vs river. Quality table: each side's final online F1 on the same stream.

    uv run python packages/stochastic-dinkelbach/benchmarks/bench_stochastic_dinkelbach.py [--quick]
    uv run paperworks bench stochastic-dinkelbach [--quick]

``--quick``: 10^3 instances only, 3 rounds after 1 warm-up call, results written to a temporary
folder (the committed ``benchmarks/results.*`` are left alone) and printed.
"""

from __future__ import annotations

import argparse
import functools
import warnings
from types import SimpleNamespace

import numpy as np

from paperworks.core.bench import compare, publish
from paperworks.stochastic_dinkelbach import DinkelbachClassifier, GaussianStream, get_metric

TITLE = "stochastic-dinkelbach benchmarks"
SIZES_ALL = (1_000, 10_000)
SIZES_LARGE = (100_000,)
DIM = 10
OPT_F1 = GaussianStream(dim=DIM).pu_optimum(get_metric("f1")).value
SETUP = (
    f"Generated stream (GaussianStream, d = {DIM}, 25% positives, separation 1.5), the same for every "
    "side; one call = one pass over n instances, each predicted and then learned; seconds per call."
)

try:
    from river import linear_model as river_lm
    from river import metrics as river_metrics
except ImportError:  # the 'peer' extra is missing
    river_lm = None


@functools.cache
def make_input(n: int) -> SimpleNamespace:
    x, y, _ = GaussianStream(dim=DIM).sample(n, np.random.default_rng(n))
    names = [f"x{j}" for j in range(DIM)]
    dicts = [dict(zip(names, row)) for row in x.tolist()]
    return SimpleNamespace(x=x, y=y, dicts=dicts, labels=y.tolist(), n=n)


def ours(s: SimpleNamespace) -> float:
    clf = DinkelbachClassifier(metric="f1")
    for x, y in zip(s.dicts, s.labels):
        clf.predict_one(x)
        clf.learn_one(x, y)
    return clf.online_score_


def ours_stream(s: SimpleNamespace) -> float:
    return DinkelbachClassifier(metric="f1").partial_fit(s.x, s.y).online_score_


def river_side(s: SimpleNamespace) -> float:
    model = river_lm.LogisticRegression()
    f1 = river_metrics.F1()
    for x, y in zip(s.dicts, s.labels):
        f1.update(bool(y), bool(model.predict_one(x)))
        model.learn_one(x, bool(y))
    return f1.get()


def sklearn_side(s: SimpleNamespace) -> float:
    from sklearn.linear_model import SGDClassifier
    from sklearn.model_selection import TunedThresholdClassifierCV

    est = SGDClassifier(loss="log_loss", random_state=0)
    thr, next_refit = 0.5, 256
    preds = np.zeros(s.n, dtype=np.int64)
    for i in range(s.n):
        if i:
            preds[i] = int(est.predict_proba(s.x[i : i + 1])[0, 1] > thr)
        est.partial_fit(s.x[i : i + 1], s.y[i : i + 1], classes=[0, 1])
        if i + 1 == next_refit:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tuned = TunedThresholdClassifierCV(
                    SGDClassifier(loss="log_loss", random_state=0), scoring="f1", cv=3
                )
                thr = float(tuned.fit(s.x[: i + 1], s.y[: i + 1]).best_threshold_)
            next_refit *= 2
    return get_metric("f1").score(s.y, preds)


def sklearn_plain(s: SimpleNamespace) -> float:
    """scikit-learn's per-row partial_fit and predict_proba alone (threshold 0.5, no re-tuning)."""
    from sklearn.linear_model import SGDClassifier

    est = SGDClassifier(loss="log_loss", random_state=0)
    preds = np.zeros(s.n, dtype=np.int64)
    for i in range(s.n):
        if i:
            preds[i] = int(est.predict_proba(s.x[i : i + 1])[0, 1] > 0.5)
        est.partial_fit(s.x[i : i + 1], s.y[i : i + 1], classes=[0, 1])
    return get_metric("f1").score(s.y, preds)


def quality_table(sizes, sides) -> str:
    head = ["n", *sides]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for n in sizes:
        s = make_input(n)
        cells = [f"{n:,}"] + [f"{fn(s):.4f}" if fn is not None else "–" for fn in sides.values()]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + (
        "\n\nFinal online F1 of each side's irrevocable predictions on the benchmark's stream; the "
        f"PU-optimal classifier's population F1 on this generator is {OPT_F1:.4f} (exact); sklearn runs at "
        "the two smaller sizes only."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="10^3 instances only, 3 rounds; temporary output"
    )
    args = parser.parse_args()
    repeats, warmup = (3, 1) if args.quick else (5, 1)
    sides = {"ours": ours, "ours (one partial_fit)": ours_stream}
    missing = ""
    if river_lm is not None:
        sides["river"] = river_side
    else:
        missing = " river not installed: its side was skipped."
    small = {
        **sides,
        "sklearn + TunedThresholdClassifierCV": sklearn_side,
        "sklearn partial_fit only": sklearn_plain,
    }
    results = [
        compare(
            small,
            ours="ours",
            make_input=make_input,
            sizes=SIZES_ALL[:1] if args.quick else SIZES_ALL,
            warmup=warmup,
            repeats=repeats,
            number=1,
            threads=1,
            size_label="instances n",
            name="Per-instance predict + update over a stream: ours vs river vs scikit-learn",
            note=f"{SETUP} sklearn re-tunes its threshold with TunedThresholdClassifierCV at 256, 512, ... "
            "rows seen (3 folds on all rows so far, its default scorer and 100 thresholds); "
            "`sklearn partial_fit only` times the per-row partial_fit and predict_proba alone (threshold "
            f"0.5), so the re-tuning's share is the difference.{missing}",
        )
    ]
    if not args.quick:
        results.append(
            compare(
                sides,
                ours="ours",
                make_input=make_input,
                sizes=SIZES_LARGE,
                warmup=1,
                repeats=3,
                number=1,
                threads=1,
                size_label="instances n",
                name="At 10^5 instances: ours vs river",
                note=f"{SETUP} scikit-learn's per-row partial_fit is left out at this size (see its time per "
                f"call at 10^4 in the table above).{missing}",
            )
        )
    sizes = SIZES_ALL[:1] if args.quick else SIZES_ALL
    tables = {"Quality: final online F1 on the same stream": quality_table(sizes, small)}
    publish(
        results, __file__, quick=args.quick, title=TITLE + (" (quick)" if args.quick else ""), tables=tables
    )


if __name__ == "__main__":
    main()
