"""The scikit-learn estimator on long tables, the panel checks, the Online Retail loader, the baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from paperworks.masked_demand_meta import (
    DemandConfig,
    DemandPanel,
    MaskedOutcomeMetaLearner,
    MetaConfig,
    generate_panel,
    linear_dml,
    load_online_retail,
    mixed_model,
    panel_from_long,
    panel_to_long,
)


@pytest.fixture(scope="module")
def long_table():
    panel, _ = generate_panel(DemandConfig(n_tasks=300), 0)
    return panel, panel_to_long(panel)


def test_estimator_clone_fit_predict_on_a_long_table(long_table):
    panel, df = long_table
    est = MaskedOutcomeMetaLearner(kind="linear", epochs=40)
    params = est.get_params()
    twin = clone(est)
    assert twin.get_params() == params
    twin.fit(df)
    out = twin.predict_theta(df)
    assert list(out.columns) == ["task_id", "alpha", "beta"] and len(out) == 300
    np.testing.assert_allclose(out["beta"].to_numpy(), twin.predict_theta(panel)[:, 1])
    assert twin.covariates_ == [f"x{j}" for j in range(5)] and twin.n_features_in_ == 5
    assert twin.score(df) < 0
    with pytest.raises(AttributeError, match="fit"):
        MaskedOutcomeMetaLearner().predict_theta(df)
    with pytest.raises(ValueError, match="kind"):
        MaskedOutcomeMetaLearner(kind="tree").fit(df)


def test_round_trip_long_table(long_table):
    panel, df = long_table
    back, ids = panel_from_long(df.sample(frac=1.0, random_state=0))  # row order does not matter
    np.testing.assert_allclose(back.prices, panel.prices)
    np.testing.assert_allclose(back.X, panel.X)
    assert list(ids) == list(range(300))


def test_long_table_errors(long_table):
    _, df = long_table
    small = df[df["task_id"] < 3].copy()
    with pytest.raises(ValueError, match="duplicate"):
        panel_from_long(pd.concat([small, small.iloc[:1]]))
    bad = small.copy()
    bad.loc[bad.index[0], "x0"] += 1.0
    with pytest.raises(ValueError, match="constant within a task"):
        panel_from_long(bad)
    bad = small.copy()
    bad.loc[bad.index[0], "price"] = -1.0
    with pytest.raises(ValueError, match="negative"):
        panel_from_long(bad)
    bad = small.copy()
    bad.loc[bad.index[0], "price"] = np.nan
    with pytest.raises(ValueError, match="price"):
        panel_from_long(bad)
    with pytest.raises(ValueError, match=">= 3 periods"):
        panel_from_long(small[small["t"] < 2])
    with pytest.raises(ValueError, match="same number of periods"):
        panel_from_long(small[~((small["task_id"] == 0) & (small["t"] == 0))])
    bad = small.copy()
    last = bad["t"] == 5
    bad.loc[last, "price"] = bad.loc[bad["t"] == 4, "price"].to_numpy()
    with pytest.raises(ValueError, match="masked prices must differ"):
        panel_from_long(bad)
    with pytest.raises(ValueError, match="missing columns"):
        panel_from_long(small.drop(columns="demand"))


def test_panel_arrays_errors():
    X, p, y = np.zeros((2, 1)), np.array([[1.0, 2, 3], [1, 2, 3]]), np.zeros((2, 3))
    with pytest.raises(ValueError, match="demand"):
        DemandPanel(X, p, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="X"):
        DemandPanel(np.zeros((3, 1)), p, y)
    with pytest.raises(ValueError, match=">= 3 periods"):
        DemandPanel(X, p[:, :2], y[:, :2])
    with pytest.raises(ValueError, match="rho"):
        DemandConfig(rho=-0.1)
    with pytest.raises(ValueError, match="reveal"):
        MetaConfig(reveal=3)


def test_online_retail_loader_on_a_written_extract(tmp_path):
    rows = []
    rng = np.random.default_rng(0)
    for code in ("A1", "B2", "C3"):
        for week in range(8):
            for k in range(3):
                rows.append(
                    {
                        "InvoiceNo": f"5{week}{k}{code}",
                        "StockCode": code,
                        "Description": "item",
                        "Quantity": int(rng.integers(1, 20)),
                        "InvoiceDate": (
                            pd.Timestamp("2011-01-03") + pd.Timedelta(days=7 * week + k)
                        ).isoformat(),
                        "UnitPrice": round(float(rng.uniform(1, 3)), 2),
                        "CustomerID": int(rng.integers(1, 5)),
                        "Country": "United Kingdom" if k else "France",
                    }
                )
    rows.append({**rows[0], "InvoiceNo": "C999", "Quantity": -5})  # a cancellation, dropped
    path = tmp_path / "retail.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    panel, ids = load_online_retail(path, periods=6)
    assert panel.prices.shape == (3, 6) and panel.X.shape == (3, 3) and sorted(ids) == ["A1", "B2", "C3"]
    assert (panel.X[:, 2] > 0).all() and (panel.X[:, 2] < 1).all()  # UK share
    with pytest.raises(ValueError, match="periods"):
        load_online_retail(path, periods=20)
    pd.DataFrame(rows).drop(columns="UnitPrice").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="UnitPrice"):
        load_online_retail(tmp_path / "bad.csv")


def test_peer_baselines_run_and_are_biased_under_confounding():
    panel, _ = generate_panel(DemandConfig(n_tasks=200, rho=0.8), 1)
    b = linear_dml(panel)
    assert b.shape == (200,) and (b - panel.beta).mean() > 0.5
    pytest.importorskip("statsmodels")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mixed_model(panel)
    assert m.shape == (200, 2) and np.isfinite(m).all()
