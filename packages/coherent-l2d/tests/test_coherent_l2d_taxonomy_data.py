import numpy as np
import pytest

from paperworks.coherent_l2d import (
    ControlledExpert,
    HierarchicalLabelModel,
    Taxonomy,
    chest_xray_taxonomy,
    expected_utilities,
    load_chexpert_labels,
    random_taxonomy,
)


def test_constructors_agree_and_order_parents_first():
    edges = [("lung", "opacity"), ("opacity", "edema"), ("lung", "nodule"), ("heart", "cardiomegaly")]
    a = Taxonomy.from_edges(edges)
    nx = pytest.importorskip("networkx")
    b = Taxonomy.from_networkx(nx.DiGraph(edges))
    c = Taxonomy.from_paths(["lung::opacity::edema", ["lung", "nodule"], "heart::cardiomegaly"])
    assert a.n == b.n == c.n == 6
    for t in (a, b, c):
        assert all(t.parent[v] < v for v in range(t.n))  # topological
        assert t.roots.size == 2
    assert set(a.names) == set(b.names)
    assert "lung::opacity::edema" in c.names


def test_not_a_tree_and_unknown_names_raise():
    with pytest.raises(ValueError, match="two parents"):
        Taxonomy.from_edges([("a", "c"), ("b", "c")])
    with pytest.raises(ValueError, match="cycle"):
        Taxonomy.from_parents(np.array([1, 2, 0]))
    with pytest.raises(ValueError, match="its own parent"):
        Taxonomy.from_parents(np.array([0]))
    with pytest.raises(ValueError, match="not in the taxonomy"):
        chest_xray_taxonomy().index("brain bleed")


def test_inconsistent_labels_are_reported_not_fixed():
    tax = Taxonomy.from_edges([("a", "b")])
    with pytest.raises(
        ValueError, match=r"1 rows contradict the taxonomy \(first: row 1, 'b' = 1 but its parent 'a' = 0\)"
    ):
        tax.check_labels(np.array([[1, 1], [0, 1]]))


def test_label_model_is_coherent_and_its_marginals_are_right():
    tax = chest_xray_taxonomy()
    model = HierarchicalLabelModel(tax, 6, rng=0)
    X, Y = model.sample(40000, np.random.default_rng(1))
    tax.check_labels(Y)  # every sample is coherent
    P = model.marginals(X)
    np.testing.assert_allclose(Y.mean(0), P.mean(0), atol=0.01)
    assert (0.01 < Y.mean(0)).all() and (Y.mean(0) < 0.99).all()  # no label vanishes or saturates


def test_expert_and_utilities_bad_input():
    tax = random_taxonomy(3, (2, 3), rng=0)
    ex = ControlledExpert.specialist(tax, rng=0)
    assert ex.accuracy.shape == (tax.n,) and (ex.cost > 0).all()
    assert abs(ex.sample_correct(20000, rng=0).mean(0) - ex.accuracy).max() < 0.02
    with pytest.raises(ValueError, match=r"accuracy: expert accuracies expected in \[0, 1\]"):
        ControlledExpert(np.full(3, 1.2), np.zeros(3))
    with pytest.raises(ValueError, match="cost: deferral costs expected >= 0"):
        expected_utilities(np.full((1, 3), 0.5), np.full(3, 0.9), np.full(3, -0.1))
    with pytest.raises(ValueError, match=r"p: probabilities expected in \[0, 1\]"):
        expected_utilities(np.full((1, 3), 1.5), np.full(3, 0.9), np.zeros(3))
    with pytest.raises(ValueError, match="accuracy: expected shape"):
        expected_utilities(np.full((1, 3), 0.5), np.full(4, 0.9), np.zeros(3))


def test_chexpert_loader(tmp_path):
    tax = chest_xray_taxonomy()
    csv = tmp_path / "train.csv"
    csv.write_text(
        "Path,Lung Opacity,Consolidation,Pneumonia,Pleural Effusion,Cardiomegaly,Enlarged Cardiomediastinum\n"
        "p1,1,1,1,,,\n"
        "p2,0,,,-1,1,1\n"
        "p3,,,,1,,\n"
    )
    Y, mask = load_chexpert_labels(csv, tax)
    names = tax.names
    row = dict(zip(names, Y[0]))
    assert row["lung opacity"] == row["consolidation"] == row["pneumonia"] == 1
    assert row["finding"] == 1  # no column: the OR of its children
    assert Y[1, names.index("pleural effusion")] == 0 and mask[1].all()  # uncertain -> 0 ("zeros")
    assert Y[2, names.index("pleural")] == 1  # grouping node filled from its child
    _, mask = load_chexpert_labels(csv, tax, uncertain="mask")
    assert not mask[1, names.index("pleural effusion")]
    bad = tmp_path / "bad.csv"
    bad.write_text("Path,Lung Opacity,Consolidation\np1,0,1\n")
    with pytest.raises(ValueError, match="contradict the taxonomy"):
        load_chexpert_labels(bad, tax)
    Y, mask = load_chexpert_labels(bad, tax, on_inconsistent="mask")
    assert not mask[0].any() and Y[0, names.index("consolidation")] == 1  # reported, not fixed
    worse = tmp_path / "worse.csv"
    worse.write_text("Path,Edema\np1,yes\n")
    with pytest.raises(ValueError, match="expected 1, 0, -1 or blank"):
        load_chexpert_labels(worse, tax)
