"""Side by side: the coherent projection by tree DP against an ILP of the same problem (highspy) and
brute-force enumeration; hiclass's per-node classifier as the hierarchical base model.

    uv run python packages/coherent-l2d/benchmarks/bench_coherent_l2d.py [--quick]
    uv run paperworks bench coherent-l2d [--quick]

1. **Projection of one case** at |V| = 15, 40, 120, 400 (random trees, branching 2-4, random utilities,
   seed 0): our DP (:func:`coherent_projection`) and the ILP (binary ``x[v, a]``, one action per node,
   ``x[u, a] + x[v, b] <= 1`` for every forbidden parent/child pair, solved by highspy); brute force over
   every coherent joint action at |V| = 7 only. The optima are checked equal before timing.
2. **Projection of a batch** of 1,000 cases at the same sizes: the DP batched against the DP case by case.
3. A table: hiclass ``LocalClassifierPerNode`` (logistic regression per node, one label path per case:
   the path to the deepest positive finding) on generated chest X-ray-like labels, its node accuracy
   beside our binary-relevance logistic regressions', and the contract violations of its raw outputs and
   of nodewise Bayes L2D on the binary-relevance probabilities (hiclass predicts label paths, so its raw
   outputs are coherent by construction; deferral is ours).

highspy and hiclass are optional (extra ``bench``). Full mode writes ``benchmarks/results.json`` and
``results.md``; ``--quick`` (smallest size only, 3 rounds) writes them to a temporary folder.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from paperworks.coherent_l2d import (
    COMPATIBLE,
    ControlledExpert,
    HierarchicalLabelModel,
    Taxonomy,
    chest_xray_taxonomy,
    coherent_projection,
    expected_utilities,
    is_coherent,
    joint_utility,
    nodewise_actions,
    violations,
)
from paperworks.core.bench import compare, publish

try:
    import highspy
except ImportError:  # optional peer
    highspy = None

SIZES = (15, 40, 120, 400)
BATCH = 1000


def tree_of_size(n: int, rng: np.random.Generator) -> Taxonomy:
    """A random tree of exactly ``n`` nodes: each new node's parent drawn among nodes with < 4 children."""
    parent = [-1]
    kids = [0]
    for v in range(1, n):
        open_nodes = [u for u in range(v) if kids[u] < 4]
        p = int(rng.choice(open_nodes[-8:]))  # prefer recent nodes: depth grows like a real taxonomy
        parent.append(p)
        kids[p] += 1
        kids.append(0)
    return Taxonomy.from_parents(np.array(parent))


class Case:
    def __init__(self, n: int, batch: int = 1) -> None:
        rng = np.random.default_rng(n)
        self.tax = tree_of_size(n, rng)
        self.U = rng.normal(size=(batch, n, 3))


def dp(case: Case) -> np.ndarray:
    return coherent_projection(case.tax, case.U)


def dp_loop(case: Case) -> list[np.ndarray]:
    return [coherent_projection(case.tax, case.U[i : i + 1]) for i in range(case.U.shape[0])]


def ilp(case: Case) -> np.ndarray:
    tax, U = case.tax, case.U[0]
    h = highspy.Highs()
    h.silent()
    x = [[h.addBinary() for _ in range(3)] for _ in range(tax.n)]
    for v in range(tax.n):
        h.addConstr(x[v][0] + x[v][1] + x[v][2] == 1)
        u = tax.parent[v]
        if u >= 0:
            for a, b in itertools.product(range(3), repeat=2):
                if not COMPATIBLE[a, b]:
                    h.addConstr(x[u][a] + x[v][b] <= 1)
    h.maximize(sum(float(U[v, a]) * x[v][a] for v in range(tax.n) for a in range(3)))
    return np.array([[round(h.val(x[v][a])) for a in range(3)] for v in range(tax.n)]).argmax(1)[None]


def brute(case: Case) -> np.ndarray:
    tax, U = case.tax, case.U[0]
    A = np.array(list(itertools.product(range(3), repeat=tax.n)))
    A = A[is_coherent(tax, A)]
    return A[np.argmax(U[np.arange(tax.n), A].sum(1))][None]


def make_case(n: int) -> Case:
    case = Case(n)
    best = joint_utility(case.U, dp(case))[0]
    if highspy is not None:
        assert abs(joint_utility(case.U, ilp(case))[0] - best) < 1e-7, "DP and ILP optima differ"
    if n <= 8:
        assert abs(joint_utility(case.U, brute(case))[0] - best) < 1e-9, "DP and brute force differ"
    return case


def hiclass_table() -> str:
    try:
        from hiclass import LocalClassifierPerNode
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        return "hiclass is not installed (extra `bench`): table skipped."
    tax = chest_xray_taxonomy()
    rng = np.random.default_rng(0)
    model = HierarchicalLabelModel(tax, 10, rng=rng)
    expert = ControlledExpert.specialist(tax, rng)
    X, Y = model.sample(1500, rng)
    Xt, Yt = model.sample(1500, rng)

    depth = len(tax.levels)

    def path(y: np.ndarray) -> list[str]:
        """The path to the deepest positive node (hiclass predicts one path per case), padded with ""."""
        pos = np.flatnonzero(y)
        if pos.size == 0:
            return ["none"] + [""] * (depth - 1)
        u = int(pos[np.argmax(tax.depth[pos])])
        out = []
        while u >= 0:
            out.append(tax.names[u])
            u = int(tax.parent[u])
        return out[::-1] + [""] * (depth - len(out))

    clf = LocalClassifierPerNode(local_classifier=LogisticRegression(max_iter=500))
    clf.fit(X, np.array([path(y) for y in Y]))
    pred = clf.predict(Xt)
    Yh = np.zeros_like(Yt)
    idx = {name: i for i, name in enumerate(tax.names)}
    for i, labels in enumerate(pred):
        for name in labels:
            if name in idx:
                Yh[i, idx[name]] = 1
    from sklearn.linear_model import LogisticRegression as LR

    P = np.column_stack([LR(max_iter=500).fit(X, Y[:, v]).predict_proba(Xt)[:, 1] for v in range(tax.n)])
    ours = (P > 0.5).astype(int)
    raw = np.where(Yh == 1, 0, 1)  # present / absent as actions
    U = expected_utilities(P, expert.accuracy, expert.cost)
    nodewise = nodewise_actions(U)
    rows = [
        "| model | node accuracy | cases with a violation |",
        "| --- | --- | --- |",
        f"| hiclass LocalClassifierPerNode (one path per case) | {(Yh == Yt).mean():.4f} | "
        f"{1 - is_coherent(tax, raw).mean():.4f} |",
        f"| binary-relevance logistic regression (threshold 0.5) | {(ours == Yt).mean():.4f} | "
        f"{1 - is_coherent(tax, np.where(ours == 1, 0, 1)).mean():.4f} |",
        f"| nodewise Bayes L2D on those probabilities | – | {1 - is_coherent(tax, nodewise).mean():.4f} |",
        f"| ... after the coherent projection | – | "
        f"{1 - is_coherent(tax, coherent_projection(tax, U)).mean():.4f} |",
    ]
    kinds = violations(tax, nodewise)
    rows.append(
        "\nNodewise Bayes violations by type (share of cases): "
        + ", ".join(f"{k} {(c > 0).mean():.3f}" for k, c in kinds.items())
    )
    return "\n".join(rows)


def run(quick: bool):
    kw = {"warmup": 1, "repeats": 3} if quick else {"warmup": 2, "repeats": 15}
    sizes = SIZES[:1] if quick else SIZES
    sides = {"dp": dp}
    if highspy is not None:
        sides["highspy_ilp"] = ilp
    results = [
        compare(sides, make_case, sizes, ours="dp", name="projection of one case", size_label="|V|", **kw),
        compare(
            {"dp": dp, "brute_force": brute}, make_case, (7,), ours="dp", name="projection, |V| = 7", **kw
        ),
        compare(
            {"dp_batched": dp, "dp_case_by_case": dp_loop},
            lambda n: Case(n, BATCH),
            sizes,
            ours="dp_batched",
            name=f"projection of {BATCH} cases",
            size_label="|V|",
            **kw,
        ),
    ]
    return results, {"hiclass as the base classifier (chest X-ray-like labels)": hiclass_table()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="smallest size only, 3 rounds, results to a temp folder"
    )
    args = ap.parse_args()
    results, tables = run(args.quick)
    publish(results, __file__, quick=args.quick, title="coherent-l2d benchmarks", tables=tables)


if __name__ == "__main__":
    main()
