import itertools

import numpy as np
import pytest

from paperworks.compose_pose import (
    METHODS,
    MultiViewAssociator,
    PruningConfig,
    SceneConfig,
    build_hypergraph,
    full_candidate_count,
    make_frame,
)
from paperworks.compose_pose.experiments import true_hyperedges
from paperworks.compose_pose.metrics import mpjpe_matrix

CLEAN = SceneConfig(n_views=(3, 6), n_people=(2, 6), noise_px=0.0, occlusion=0.0, miss=0.0, false_rate=0.0)


def test_full_candidate_count_matches_enumeration():
    for sizes in ([1, 2], [2, 2, 3], [0, 3, 1, 2]):
        labelled = [(v, i) for v, n in enumerate(sizes) for i in range(n)]
        count = 0
        for k in range(2, len(sizes) + 1):
            for combo in itertools.combinations(labelled, k):
                count += len({v for v, _ in combo}) == k
        assert full_candidate_count(sizes) == count


@pytest.mark.parametrize("seed", range(6))
def test_pruning_keeps_every_true_hyperedge_and_its_subsets_on_noise_free_rigs(seed):
    frame = make_frame(CLEAN, np.random.default_rng(seed))
    hg = build_hypergraph(frame.cameras, frame.detections)
    present = set(hg.edges)
    truth = true_hyperedges(frame.labels)
    assert truth
    for edge in truth.values():
        for k in range(2, len(edge) + 1):
            for sub in itertools.combinations(edge, k):
                assert sub in present
    assert hg.n_edges - hg.n_vertices < hg.full_count


@pytest.mark.parametrize("method", METHODS)
def test_every_method_recovers_noise_free_people(method):
    pytest.importorskip("ortools") if method == "compose_cpsat" else None
    frame = make_frame(CLEAN, np.random.default_rng(11))
    result = MultiViewAssociator(frame.cameras, method)(frame.detections)
    M = mpjpe_matrix(result.poses, frame.poses)
    seen = [p for p, e in true_hyperedges(frame.labels).items()]
    assert result.poses.shape[0] == len(seen)
    assert M.min(axis=0)[seen].max() < 1.0  # mm


def test_compose_beats_a_wrong_pairwise_chain():
    """Two people whose pairwise matches chain: COMPOSE keeps them apart, its cover is exact."""
    frame = make_frame(SceneConfig(n_views=(4, 4), n_people=(5, 5), occlusion=0.3), np.random.default_rng(3))
    result = MultiViewAssociator(frame.cameras, "ilp")(frame.detections)
    hg = result.hypergraph
    assert hg is not None and hg.is_exact_cover(result.cover)
    for group in result.groups:
        assert len({v for v, _ in group}) == len(group)  # at most one detection per view


def test_associator_and_detections_bad_input():
    frame = make_frame(CLEAN, np.random.default_rng(0))
    with pytest.raises(ValueError, match="method: expected one of"):
        MultiViewAssociator(frame.cameras, "magic")
    with pytest.raises(TypeError, match="cameras: expected a list of at least 2 Camera"):
        MultiViewAssociator(frame.cameras[:1])
    assoc = MultiViewAssociator(frame.cameras)
    dets = [d.copy() for d in frame.detections]
    with pytest.raises(ValueError, match="expected one array per camera"):
        assoc(dets[:-1])
    bad = [d.copy() for d in dets]
    bad[0] = bad[0][:, :10]
    with pytest.raises(
        ValueError, match=r"detections\[0\]: expected 15 joints|detections\[1\]: expected 10 joints"
    ):
        assoc(bad)
    bad = [d.copy() for d in dets]
    bad[1][0, 0, 2] = 1.5
    with pytest.raises(ValueError, match=r"detections\[1\]: confidences expected in \[0, 1\]"):
        assoc(bad)
    bad = [d.copy() for d in dets]
    bad[2][0, 3, 0] = np.nan
    with pytest.raises(ValueError, match=r"detections\[2\]: NaN or inf keypoints"):
        assoc(bad)
    with pytest.raises(ValueError, match="every view is empty"):
        assoc([np.zeros((0, 15, 3)) for _ in frame.cameras])
    with pytest.raises(ValueError, match="tau_epi"):
        PruningConfig(tau_epi=0.0)
    # an empty view (nobody seen by one camera) is legitimate
    dets[0] = np.zeros((0, 15, 3))
    assert assoc(dets).poses.shape[1:] == (15, 3)


def test_same_seed_same_frame_and_result():
    a = make_frame(SceneConfig(), np.random.default_rng(5))
    b = make_frame(SceneConfig(), np.random.default_rng(5))
    for x, y in zip(a.detections, b.detections):
        np.testing.assert_array_equal(x, y)
    ra = MultiViewAssociator(a.cameras, "bp")(a.detections)
    rb = MultiViewAssociator(b.cameras, "bp")(b.detections)
    np.testing.assert_array_equal(ra.poses, rb.poses)
