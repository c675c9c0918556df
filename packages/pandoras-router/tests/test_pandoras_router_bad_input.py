"""A battery of invalid calls on every exported function: each gets a clear one-line error.

Clear means: a ``TypeError`` or ``ValueError`` (a missing file: ``FileNotFoundError``; an unfitted
estimator: scikit-learn's ``NotFittedError``), raised by the package's own checks (or the core's
shared validators, or scikit-learn's ``validate_data`` for the estimators' ``X``/``y``), never from
inside NumPy, with a one-line message that names the argument. No NaN results, no silent fixes.
"""

import traceback
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import paperworks.pandoras_router as pr
from paperworks.pandoras_router.experiments import PandorasRouterConfig, PandorasRouterExperiment, run_domain

M = np.array([[0.1, 0.2, 0.3], [0.3, 0.1, 0.0], [0.2, 0.2, 0.5], [0.0, 0.4, 0.1]])
S = np.array([0.2, 0.2, 0.2])
TAU = np.array([0.05, 0.05, 0.05])
COST = np.array([0.01, 0.01, 0.01])
Y = M + 0.1
V = M + 0.05
PRICE = np.full((4, 3), 0.001)
NAN_M = np.where(np.eye(4, 3, dtype=bool), np.nan, M)
X = np.random.default_rng(0).normal(size=(40, 5))
XV = X @ np.random.default_rng(1).normal(size=(5, 3))
LABELS = (X[:, 0] > 0).astype(int)


def _result():
    return pr.pandoras_route(M, S, TAU, COST, Y)


def _fitted_reg():
    return pr.CheapValueEstimator().fit(X, XV)


def _fitted_clf():
    return pr.RouteLLMRouter().fit(X, LABELS)


def _bid():
    return pr.PandorasBidder(0.05, 0.01).decide(M[:, 0], S[:3].repeat(2)[:4], M[:, 1], Y[:, 0])


def _dataset(**kw):
    base = dict(
        name="t",
        texts=("a", "b"),
        topic=np.array([0, 1]),
        quality=np.full((2, 2), 0.5),
        price=np.full((2, 2), 0.001),
        specialists=("x", "y"),
        tau=np.full(2, 0.05),
        inspect_price=np.full(2, 0.001),
    )
    base.update(kw)
    return pr.RoutingDataset(**base)


class _Tmp:
    path: Path


TMP = _Tmp()

# (label, call, the argument the message must name)
CASES = [
    # gaussian
    ("excess nan", lambda: pr.expected_excess(np.nan), "z"),
    ("excess str", lambda: pr.expected_excess("a"), "z"),
    ("excess empty", lambda: pr.expected_excess([]), "z"),
    ("excess bool", lambda: pr.expected_excess(np.array([True])), "z"),
    ("excess_inv zero", lambda: pr.expected_excess_inv(0.0), "ratio"),
    ("excess_inv neg", lambda: pr.expected_excess_inv(-1.0), "ratio"),
    ("excess_inv inf", lambda: pr.expected_excess_inv(np.inf), "ratio"),
    ("excess_inv steps neg", lambda: pr.expected_excess_inv(0.1, newton_steps=-1), "newton_steps"),
    ("excess_inv steps float", lambda: pr.expected_excess_inv(0.1, newton_steps=1.5), "newton_steps"),
    ("prepost s zero", lambda: pr.preposterior_std(np.array(0.0), np.array(0.1)), "s"),
    ("prepost tau neg", lambda: pr.preposterior_std(np.array(0.1), np.array(-1.0)), "tau"),
    ("prepost shape", lambda: pr.preposterior_std(np.array([0.1, 0.2]), np.array([0.1])), "tau"),
    ("prepost nan", lambda: pr.preposterior_std(np.array(np.nan), np.array(0.1)), "s"),
    ("postmean y nan", lambda: pr.posterior_mean(0.0, 0.1, 0.1, np.nan), "y"),
    ("postmean s neg", lambda: pr.posterior_mean(0.0, -0.1, 0.1, 0.0), "s"),
    ("postmean shape", lambda: pr.posterior_mean(np.zeros(2), np.ones(2), np.ones(2), np.zeros(3)), "y"),
    ("resval sigma zero", lambda: pr.reservation_value(0.0, 0.0, 0.1), "sigma"),
    ("resval cost neg", lambda: pr.reservation_value(0.0, 0.1, -0.1), "cost"),
    ("resval m nan", lambda: pr.reservation_value(np.nan, 0.1, 0.1), "m"),
    ("resval shape", lambda: pr.reservation_value(np.zeros(2), np.ones(2), np.ones(3)), "cost"),
    ("lower m inf", lambda: pr.lower_reservation_value(np.inf, 0.1, 0.1), "m"),
    ("voi outside nan", lambda: pr.value_of_information(0.0, 0.1, 0.1, np.nan), "outside"),
    ("voi outside +inf", lambda: pr.value_of_information(0.0, 0.1, 0.1, np.inf), "outside"),
    ("voi outside str", lambda: pr.value_of_information(0.0, 0.1, 0.1, "x"), "outside"),
    (
        "voi shape",
        lambda: pr.value_of_information(np.zeros(2), np.ones(2), np.ones(2), np.zeros(1)),
        "outside",
    ),
    # correlated
    ("factcov s neg", lambda: pr.factor_covariance(np.array([0.1, -0.1]), np.zeros(2)), "s"),
    (
        "factcov loading 1",
        lambda: pr.factor_covariance(np.array([0.1, 0.1]), np.array([1.0, 0.0])),
        "loading",
    ),
    ("factcov loading shape", lambda: pr.factor_covariance(np.array([0.1, 0.1]), np.zeros(1)), "loading"),
    ("factcov s 3d", lambda: pr.factor_covariance(np.ones((2, 2, 2)), np.zeros(2)), "s"),
    ("factpost loading", lambda: pr.factor_posterior(M, S, np.full(3, 1.2), TAU, Y, M > 0.1), "loading"),
    ("factpost mask dtype", lambda: pr.factor_posterior(M, S, np.zeros(3), TAU, Y, M), "inspected"),
    ("factpost readings", lambda: pr.factor_posterior(M, S, np.zeros(3), TAU, Y[:2], M > 0.1), "readings"),
    ("factpost tau", lambda: pr.factor_posterior(M, S, np.zeros(3), -TAU, Y, M > 0.1), "tau"),
    (
        "pairwise var zero",
        lambda: pr.pairwise_preposterior_std(np.array(0.0), np.array(0.0), np.array(0.1)),
        "var_k",
    ),
    (
        "pairwise cov nan",
        lambda: pr.pairwise_preposterior_std(np.array(1.0), np.array(np.nan), np.array(0.0)),
        "cov_kj",
    ),
    (
        "pairwise tau neg",
        lambda: pr.pairwise_preposterior_std(np.array(1.0), np.array(0.0), np.array(-1.0)),
        "tau_k",
    ),
    ("cvoi cov shape", lambda: pr.correlated_value_of_information(S, np.eye(2), TAU, 0, 0.01), "cov"),
    (
        "cvoi cov asym",
        lambda: pr.correlated_value_of_information(S, np.triu(np.ones((3, 3))), TAU, 0, 0.0),
        "cov",
    ),
    ("cvoi k range", lambda: pr.correlated_value_of_information(S, np.eye(3), TAU, 5, 0.01), "k"),
    ("cvoi k bool", lambda: pr.correlated_value_of_information(S, np.eye(3), TAU, True, 0.01), "k"),
    ("cvoi cost neg", lambda: pr.correlated_value_of_information(S, np.eye(3), TAU, 0, -0.01), "cost"),
    (
        "cvoi outside nan",
        lambda: pr.correlated_value_of_information(S, np.eye(3), TAU, 0, 0.0, np.nan),
        "outside",
    ),
    ("cvoi tau shape", lambda: pr.correlated_value_of_information(S, np.eye(3), TAU[:2], 0, 0.0), "tau"),
    # router
    ("route m nan", lambda: pr.pandoras_route(NAN_M, S, TAU, COST, Y), "m"),
    ("route m 1d", lambda: pr.pandoras_route(M[0], S, TAU, COST, Y), "m"),
    ("route m str", lambda: pr.pandoras_route([["a"]], S, TAU, COST, Y), "m"),
    ("route s zero", lambda: pr.pandoras_route(M, np.zeros(3), TAU, COST, Y), "s"),
    ("route s shape", lambda: pr.pandoras_route(M, S[:2], TAU, COST, Y), "s"),
    ("route s column", lambda: pr.pandoras_route(M, np.full((4, 1), 0.2), TAU, COST, Y), "s"),
    ("route tau neg", lambda: pr.pandoras_route(M, S, -TAU, COST, Y), "tau"),
    ("route cost nan", lambda: pr.pandoras_route(M, S, TAU, COST * np.nan, Y), "cost"),
    ("route readings shape", lambda: pr.pandoras_route(M, S, TAU, COST, Y[:2]), "readings"),
    (
        "route readings nan cb",
        lambda: pr.pandoras_route(M, S, TAU, COST, lambda r, c: r * np.nan),
        "readings",
    ),
    (
        "route readings shape cb",
        lambda: pr.pandoras_route(M, S, TAU, COST, lambda r, c: np.zeros(1)),
        "readings",
    ),
    (
        "route readings str cb",
        lambda: pr.pandoras_route(M, S, TAU, COST, lambda r, c: ["x"] * r.size),
        "readings",
    ),
    (
        "route corr nan cb",
        lambda: pr.pandoras_route(M, S, TAU, COST, lambda r, c: r * np.nan, loading=S),
        "readings",
    ),
    ("route outside nan", lambda: pr.pandoras_route(M, S, TAU, COST, Y, outside=np.nan), "outside"),
    ("route outside +inf", lambda: pr.pandoras_route(M, S, TAU, COST, Y, outside=np.inf), "outside"),
    ("route outside shape", lambda: pr.pandoras_route(M, S, TAU, COST, Y, outside=np.zeros(3)), "outside"),
    ("route inspection", lambda: pr.pandoras_route(M, S, TAU, COST, Y, inspection="maybe"), "inspection"),
    ("route inspection int", lambda: pr.pandoras_route(M, S, TAU, COST, Y, inspection=3), "inspection"),
    ("route loading 1", lambda: pr.pandoras_route(M, S, TAU, COST, Y, loading=np.ones(3)), "loading"),
    ("route loading shape", lambda: pr.pandoras_route(M, S, TAU, COST, Y, loading=np.zeros(2)), "loading"),
    (
        "route loading oblig",
        lambda: pr.pandoras_route(M, S, TAU, COST, Y, loading=S, inspection="obligatory"),
        "inspection",
    ),
    ("route specialists n", lambda: pr.pandoras_route(M, S, TAU, COST, Y, specialists=("a",)), "specialists"),
    (
        "route specialists str",
        lambda: pr.pandoras_route(M, S, TAU, COST, Y, specialists="abc"),
        "specialists",
    ),
    ("policy blind nan", lambda: pr.index_policy(NAN_M, M, M, np.zeros((4, 3)), Y), "blind"),
    ("policy upper nan", lambda: pr.index_policy(M, NAN_M, M, np.zeros((4, 3)), Y), "upper"),
    ("policy upper<lower", lambda: pr.index_policy(M, M - 1, M, np.zeros((4, 3)), Y), "upper"),
    ("policy upper shape", lambda: pr.index_policy(M, M[:2], M, np.zeros((4, 3)), Y), "upper"),
    ("policy upper str", lambda: pr.index_policy(M, [["x"]], M, np.zeros((4, 3)), Y), "upper"),
    ("policy cost neg", lambda: pr.index_policy(M, M + 1, M, -np.ones((4, 3)), Y), "cost"),
    ("policy reveal shape", lambda: pr.index_policy(M, M + 1, M, np.zeros((4, 3)), Y[:2]), "reveal"),
    (
        "policy inspection",
        lambda: pr.index_policy(M, M + 1, M, np.zeros((4, 3)), Y, inspection="x"),
        "inspection",
    ),
    (
        "router specialists str",
        lambda: pr.PandorasRouter("abc", tau=TAU, inspection_cost=COST),
        "specialists",
    ),
    ("router specialists empty", lambda: pr.PandorasRouter([], tau=[], inspection_cost=[]), "specialists"),
    (
        "router specialists dup",
        lambda: pr.PandorasRouter(["a", "a", "b"], tau=TAU, inspection_cost=COST),
        "specialists",
    ),
    (
        "router specialists int",
        lambda: pr.PandorasRouter([1, 2, 3], tau=TAU, inspection_cost=COST),
        "specialists",
    ),
    ("router tau len", lambda: pr.PandorasRouter(list("abc"), tau=TAU[:2], inspection_cost=COST), "tau"),
    (
        "router cost neg",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=-COST),
        "inspection_cost",
    ),
    (
        "router outside nan",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, outside_value=np.nan),
        "outside_value",
    ),
    (
        "router outside str",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, outside_value="x"),
        "outside_value",
    ),
    (
        "router inspection",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, inspection="x"),
        "inspection",
    ),
    ("router cheap", lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, cheap=3), "cheap"),
    (
        "router expensive",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, expensive=3),
        "expensive",
    ),
    (
        "router loading",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, loading=[2, 0, 0]),
        "loading",
    ),
    ("route no m", lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST).route(), "m"),
    ("route no s", lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST).route(m=M), "s"),
    (
        "route m cols",
        lambda: pr.PandorasRouter(list("ab"), tau=TAU[:2], inspection_cost=COST[:2]).route(
            m=M, s=S, readings=Y
        ),
        "m",
    ),
    (
        "route no readings",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST).route(m=M, s=S),
        "readings",
    ),
    (
        "route cheap bad",
        lambda: pr.PandorasRouter(list("abc"), tau=TAU, inspection_cost=COST, cheap=lambda q: M).route(
            readings=Y
        ),
        "cheap",
    ),
    ("audit bool", lambda: _result().audit(True), "i"),
    ("audit range", lambda: _result().audit(10**6), "i"),
    ("audit str", lambda: _result().audit("0"), "i"),
    ("audit float", lambda: _result().audit(1.5), "i"),
    ("per_specialist shape", lambda: pr.per_specialist(np.zeros(2), "x", (4, 3)), "x"),
    ("per_specialist kind", lambda: pr.per_specialist(np.zeros(3), "x", (4, 3), kind="big"), "kind"),
    # baselines
    ("cheap nan", lambda: pr.cheap_only(NAN_M), "m"),
    ("cheap cost", lambda: pr.cheap_only(M, cost=-COST), "cost"),
    ("exhaustive readings", lambda: pr.exhaustive(M, S, TAU, COST, Y[:, :2]), "readings"),
    ("exhaustive loading", lambda: pr.exhaustive(M, S, TAU, COST, Y, loading=np.full(3, -1.0)), "loading"),
    ("oracle nan", lambda: pr.oracle(NAN_M), "true_value"),
    ("oracle 1d", lambda: pr.oracle([1.0, 2.0]), "true_value"),
    ("random counts float", lambda: pr.random_subset(M, S, TAU, COST, Y, np.full(4, 0.5), 0), "counts"),
    ("random counts neg", lambda: pr.random_subset(M, S, TAU, COST, Y, np.full(4, -1), 0), "counts"),
    ("random counts big", lambda: pr.random_subset(M, S, TAU, COST, Y, np.full(4, 4), 0), "counts"),
    ("random counts shape", lambda: pr.random_subset(M, S, TAU, COST, Y, np.ones(3, int), 0), "counts"),
    ("random rng", lambda: pr.random_subset(M, S, TAU, COST, Y, np.ones(4, int), "x"), "rng"),
    ("uncertainty z neg", lambda: pr.uncertainty_threshold(M, S, TAU, COST, Y, z=-1.0), "z"),
    ("uncertainty z nan", lambda: pr.uncertainty_threshold(M, S, TAU, COST, Y, z=np.nan), "z"),
    ("uncertainty z str", lambda: pr.uncertainty_threshold(M, S, TAU, COST, Y, z="1"), "z"),
    ("budget calls neg", lambda: pr.uncertainty_z_for_budget(M, S, -1.0), "calls"),
    ("budget calls big", lambda: pr.uncertainty_z_for_budget(M, S, 4.0), "calls"),
    ("budget z_max", lambda: pr.uncertainty_z_for_budget(M, S, 1.0, z_max=0.0), "z_max"),
    ("evaluate ppv nan", lambda: pr.evaluate(_result(), V, PRICE, np.nan), "price_per_value"),
    ("evaluate ppv zero", lambda: pr.evaluate(_result(), V, PRICE, 0.0), "price_per_value"),
    ("evaluate price shape", lambda: pr.evaluate(_result(), V, PRICE[:, :2], 0.1), "answer_price"),
    ("evaluate price neg", lambda: pr.evaluate(_result(), V, -PRICE, 0.1), "answer_price"),
    ("evaluate truth shape", lambda: pr.evaluate(_result(), V[:2], PRICE, 0.1), "true_value"),
    ("evaluate result", lambda: pr.evaluate(None, V, PRICE, 0.1), "result"),
    ("routellm alpha", lambda: pr.RouteLLMRouter(alpha=-1.0).fit(X, LABELS), "alpha"),
    ("routellm max_iter", lambda: pr.RouteLLMRouter(max_iter=0).fit(X, LABELS), "max_iter"),
    ("routellm X nan", lambda: pr.RouteLLMRouter().fit(np.full((4, 2), np.nan), [0, 1, 0, 1]), "X"),
    ("routellm y classes", lambda: pr.RouteLLMRouter().fit(X, np.arange(40) % 3), "y"),
    ("routellm y continuous", lambda: pr.RouteLLMRouter().fit(X, X[:, 0]), "y"),
    ("routellm threshold", lambda: _fitted_clf().route(X, 2.0), "threshold"),
    ("routellm features", lambda: _fitted_clf().predict_proba(X[:, :2]), "X"),
    ("cheapest alpha", lambda: pr.CheapValueEstimator(alpha=0.0).fit(X, XV), "alpha"),
    ("cheapest folds", lambda: pr.CheapValueEstimator(n_folds=1).fit(X, XV), "n_folds"),
    ("cheapest rows", lambda: pr.CheapValueEstimator().fit(X[:6], XV[:6]), "X"),
    ("cheapest var_alphas empty", lambda: pr.CheapValueEstimator(var_alphas=()).fit(X, XV), "var_alphas"),
    ("cheapest var_alphas zero", lambda: pr.CheapValueEstimator(var_alphas=(0.0,)).fit(X, XV), "var_alphas"),
    ("cheapest max_loading", lambda: pr.CheapValueEstimator(max_loading=1.0).fit(X, XV), "max_loading"),
    ("cheapest seed", lambda: pr.CheapValueEstimator(random_state=-1).fit(X, XV), "random_state"),
    ("cheapest correlated", lambda: pr.CheapValueEstimator(correlated="no").fit(X, XV), "correlated"),
    ("cheapest y nan", lambda: pr.CheapValueEstimator().fit(X, XV * np.nan), "y"),
    ("cheapest features", lambda: _fitted_reg().predict_belief(X[:, :2]), "X"),
    ("loadings corr", lambda: pr.one_factor_loadings(np.ones((2, 3))), "corr"),
    ("loadings max", lambda: pr.one_factor_loadings(np.eye(3), max_loading=1.5), "max_loading"),
    # estimators
    ("hash ints", lambda: pr.hashing_embed([1, 2]), "texts"),
    ("hash str", lambda: pr.hashing_embed("abc"), "texts"),
    ("hash empty", lambda: pr.hashing_embed([]), "texts"),
    ("hash dim zero", lambda: pr.hashing_embed(["a b"], dim=0), "dim"),
    ("hash dim float", lambda: pr.hashing_embed(["a b"], dim=1.5), "dim"),
    ("hash dim bool", lambda: pr.hashing_embed(["a b"], dim=True), "dim"),
    ("embed model", lambda: pr.embed_texts(["a"], model="bert"), "model"),
    ("embed texts", lambda: pr.embed_texts([1], model="hashing"), "texts"),
    ("embed batch", lambda: pr.embed_texts(["a"], batch_size=0), "batch_size"),
    ("embed device", lambda: pr.embed_texts(["a"], device=3), "device"),
    # domains
    ("domain name", lambda: pr.make_domain("vision", 10, 0), "name"),
    ("domain name int", lambda: pr.make_domain(3, 10, 0), "name"),
    ("domain n", lambda: pr.make_domain("retrieval", 1, 0), "n"),
    ("domain n float", lambda: pr.make_domain("retrieval", 2.5, 0), "n"),
    ("domain seed", lambda: pr.make_domain("retrieval", 10, -1), "seed"),
    ("dataset value lam", lambda: pr.make_domain("retrieval", 10, 0).value(-1.0), "lam"),
    ("dataset quality nan", lambda: _dataset(quality=np.full((2, 2), np.nan)), "quality"),
    ("dataset price neg", lambda: _dataset(price=-np.ones((2, 2))), "price"),
    ("dataset texts", lambda: _dataset(texts=("a",)), "texts"),
    ("dataset topic", lambda: _dataset(topic=np.array([0.5, 1.0])), "topic"),
    ("dataset tau", lambda: _dataset(tau=np.full(3, 0.1)), "tau"),
    ("dataset specialists", lambda: _dataset(specialists=("x",)), "specialists"),
    ("routerbench no price", lambda: pr.load_routerbench(TMP.path), "inspect_price"),
    ("routerbench price zero", lambda: pr.load_routerbench(TMP.path, inspect_price=0.0), "inspect_price"),
    ("routerbench price nan", lambda: pr.load_routerbench(TMP.path, inspect_price=np.nan), "inspect_price"),
    ("routerbench tau", lambda: pr.load_routerbench(TMP.path, inspect_price=0.001, tau=-1.0), "tau"),
    ("routerbench path int", lambda: pr.load_routerbench(3, inspect_price=0.001), "path"),
    (
        "routerbench missing",
        lambda: pr.load_routerbench(TMP.path.parent / "none.csv", inspect_price=0.001),
        "path",
    ),
    (
        "routerbench trusted",
        lambda: pr.load_routerbench(TMP.path, inspect_price=0.001, trusted="yes"),
        "trusted",
    ),
    # bidder
    ("bidder tau", lambda: pr.PandorasBidder(-1.0, 0.01), "tau"),
    ("bidder tau str", lambda: pr.PandorasBidder("a", 0.01), "tau"),
    ("bidder cost", lambda: pr.PandorasBidder(0.05, np.nan), "inspection_cost"),
    ("bidder strategy", lambda: pr.PandorasBidder(0.05, 0.01, "greedy"), "strategy"),
    ("decide m nan", lambda: pr.PandorasBidder(0.05, 0.01).decide(NAN_M[:, 0], S, S, S), "m"),
    ("decide s zero", lambda: pr.PandorasBidder(0.05, 0.01).decide(S, S * 0, S, S), "s"),
    ("decide price shape", lambda: pr.PandorasBidder(0.05, 0.01).decide(S, S, S[:2], S), "price"),
    ("decide readings nan", lambda: pr.PandorasBidder(0.05, 0.01).decide(S, S, S, S * np.nan), "readings"),
    ("outcome bid", lambda: pr.market_outcome(None, S, S, S), "bid"),
    ("outcome own nan", lambda: pr.market_outcome(_bid(), M[:, 0] * np.nan, M[:, 0], M[:, 0]), "own_value"),
    ("outcome price shape", lambda: pr.market_outcome(_bid(), M[:, 0], M[:2, 0], M[:, 0]), "price"),
    (
        "outcome comp cost",
        lambda: pr.market_outcome(_bid(), M[:, 0], M[:, 0], M[:, 0], -1.0),
        "competitor_cost",
    ),
    ("claims values nan", lambda: pr.competing_claims(NAN_M, "noisy", rng=0), "values"),
    ("claims market", lambda: pr.competing_claims(M, "auction"), "market"),
    ("claims noise", lambda: pr.competing_claims(M, "noisy", rng=0, noise=-1.0), "noise"),
    ("claims shade", lambda: pr.competing_claims(M, "noisy", rng=0, shade=np.nan), "shade"),
    ("claims rng", lambda: pr.competing_claims(M, "noisy", rng="x"), "rng"),
    ("claims bayes missing", lambda: pr.competing_claims(M, "bayesian"), "m"),
    (
        "claims bayes strategy",
        lambda: pr.competing_claims(
            M, "bayesian", m=M, s=M + 1, tau=M, readings=M, cost=M, strategy="always"
        ),
        "strategy",
    ),
    (
        "claims bayes s",
        lambda: pr.competing_claims(M, "bayesian", m=M, s=M * 0, tau=M, readings=M, cost=M),
        "s",
    ),
    # the experiment
    ("config n_queries", lambda: PandorasRouterConfig(n_queries=5), "n_queries"),
    ("config embedding", lambda: PandorasRouterConfig(embedding="bert"), "embedding"),
    ("config train_fraction", lambda: PandorasRouterConfig(train_fraction=1.0), "train_fraction"),
    ("config lam", lambda: PandorasRouterConfig(lam=-1.0), "lam"),
    ("config var_alphas", lambda: PandorasRouterConfig(var_alphas=()), "var_alphas"),
    ("config market_noises", lambda: PandorasRouterConfig(market_noises=(0.0,)), "market_noises"),
    ("config heteroscedastic", lambda: PandorasRouterConfig(heteroscedastic="yes"), "heteroscedastic"),
    ("experiment embed", lambda: PandorasRouterExperiment(embed="bert"), "embed"),
    ("run_domain name", lambda: run_domain("vision", 20, 0, embed="hashing"), "name"),
]


@pytest.fixture(scope="module", autouse=True)
def _routerbench_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("rb") / "routerbench.csv"
    path.write_text("sample_id,prompt,eval_name,a,a|total_cost\n1,hi,mmlu,1.0,0.001\n2,yo,mmlu,0.0,0.002\n")
    TMP.path = path


def _innermost(exc: BaseException) -> str:
    return traceback.extract_tb(exc.__traceback__)[-1].filename.replace("\\", "/")


@pytest.mark.parametrize(("label", "call", "arg"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_gets_a_clear_error(label, call, arg):
    with pytest.raises((TypeError, ValueError, FileNotFoundError, NotFittedError)) as err:
        call()
    msg = str(err.value)
    assert "\n" not in msg.strip(), msg
    assert arg in msg, f"{label}: the message does not name {arg!r}: {msg}"
    where = _innermost(err.value)
    assert "/numpy/" not in where, f"{label}: raised inside NumPy ({where}): {msg}"
    missing_kwarg = "required keyword-only argument" in msg  # Python's own signature check names it
    assert missing_kwarg or "/paperworks/" in where or "/sklearn/" in where, f"{label}: raised at {where}"


def test_the_battery_is_large_and_touches_every_export():
    assert len(CASES) >= 150
    text = " ".join(c[0] for c in CASES)
    assert "evaluate ppv nan" in text and "random counts float" in text and "hash dim zero" in text


def test_unfitted_estimators_say_so():
    with pytest.raises(NotFittedError, match="not fitted"):
        pr.CheapValueEstimator().predict(X)
    with pytest.raises(NotFittedError, match="not fitted"):
        pr.RouteLLMRouter().predict_proba(X)
