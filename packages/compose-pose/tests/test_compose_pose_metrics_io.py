import json

import numpy as np
import pytest

from paperworks.compose_pose import (
    FrameResult,
    average_precision,
    camera_from_dict,
    evaluate,
    load_coco_keypoints,
    load_panoptic_calibration,
    make_rig,
    mpjpe_matrix,
)


def _gt(rng, n=3):
    return rng.uniform(-1000, 1000, size=(n, 15, 3))


def test_ap_is_one_for_perfect_predictions_and_drops_with_a_confident_false_positive():
    rng = np.random.default_rng(0)
    gt = _gt(rng)
    perfect = FrameResult(gt + 1.0, np.ones(3), gt)
    assert average_precision([perfect], 25) == pytest.approx(1.0)
    ghost = FrameResult(np.concatenate([gt[:1] + 5000, gt]), np.r_[2.0, np.ones(3)], gt)
    # the false positive ranks first: precision 1/2, 2/3, 3/4 at recall 1/3, 2/3, 1; made monotone
    # (the best precision at any higher recall) it is 3/4 everywhere
    assert average_precision([ghost], 25) == pytest.approx(3 / 4)
    late = FrameResult(np.concatenate([gt, gt[:1] + 5000]), np.r_[np.ones(3), 0.5], gt)
    assert average_precision([late], 25) == pytest.approx(1.0)  # a false positive after full recall is free
    duplicate = FrameResult(np.concatenate([gt, gt[:1]]), np.r_[np.ones(3), 0.5], gt)
    assert average_precision([duplicate], 25) == pytest.approx(1.0)  # the duplicate ranks last
    assert average_precision([FrameResult(gt + 40.0, np.ones(3), gt)], 25) == 0.0
    with pytest.raises(ValueError, match="no ground-truth"):
        average_precision([FrameResult(gt, np.ones(3), gt[:0])], 25)


def test_pair_f1_counts_pairs_of_detections():
    from paperworks.compose_pose.metrics import pair_f1

    labels = np.array([0, 0, 0, 1, 1, -1])
    assert pair_f1([[0, 1, 2], [3, 4]], labels) == (4, 4, 4)  # perfect
    assert pair_f1([[0, 1], [2, 3, 4]], labels) == (2, 4, 4)  # (0,1) and (3,4) right; (2,3), (2,4) wrong
    assert pair_f1([[0, 5]], labels) == (0, 1, 4)  # a false positive pairs with nobody


def test_mpjpe_ignores_joints_that_were_not_triangulated():
    rng = np.random.default_rng(1)
    gt = _gt(rng, 1)
    pred = gt + np.array([3.0, 4.0, 0.0])
    pred[0, :5] = np.nan
    assert mpjpe_matrix(pred, gt)[0, 0] == pytest.approx(5.0)
    assert evaluate([FrameResult(pred, np.ones(1), gt)])["mpjpe"] == pytest.approx(5.0)


def test_coco_results_and_annotations(tmp_path):
    kp = np.random.default_rng(2).uniform(0, 500, size=(2, 17, 3))
    kp[..., 2] = 0.9
    results = [{"image_id": 7, "category_id": 1, "keypoints": k.ravel().tolist(), "score": 0.8} for k in kp]
    results.append({"image_id": 8, "category_id": 1, "keypoints": kp[0].ravel().tolist(), "score": 0.1})
    path = tmp_path / "view0.json"
    path.write_text(json.dumps(results))
    det = load_coco_keypoints(path, image_id=7)
    np.testing.assert_allclose(det, kp)
    assert load_coco_keypoints(path, min_score=0.5).shape == (2, 17, 3)
    ann = kp.copy()
    ann[..., 2] = 2
    ann[0, 3, 2] = 1
    ann[0, 4, 2] = 0
    gt_path = tmp_path / "gt.json"
    gt_path.write_text(
        json.dumps({"annotations": [{"image_id": 1, "keypoints": a.ravel().tolist()} for a in ann]})
    )
    gt = load_coco_keypoints(gt_path)
    assert gt[0, 3, 2] == 0.5 and gt[0, 4, 2] == 0.0 and gt[1, 0, 2] == 1.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"image_id": 1, "keypoints": [1, 2]}]))
    with pytest.raises(ValueError, match="flat list of"):
        load_coco_keypoints(bad)
    bad.write_text(json.dumps([{"image_id": 1, "keypoints": [1, 2, 1.7]}]))
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        load_coco_keypoints(bad)
    with pytest.raises(FileNotFoundError, match="path: no file"):
        load_coco_keypoints(tmp_path / "missing.json")


def test_panoptic_calibration_round_trip(tmp_path):
    cams = make_rig(3, rng=0)
    entries = [
        {
            "name": f"00_{i:02d}",
            "type": "hd",
            "resolution": list(c.size),
            "K": c.K.tolist(),
            "distCoef": [-0.2, 0.05, 0.0, 0.0, 0.0],
            "R": c.R.tolist(),
            "t": (c.t[:, None] / 10.0).tolist(),  # centimetres, as Panoptic writes them
        }
        for i, c in enumerate(cams)
    ]
    entries.append(
        {
            "name": "50_01",
            "type": "kinect-color",
            "K": cams[0].K.tolist(),
            "R": cams[0].R.tolist(),
            "t": [0, 0, 0],
        }
    )
    path = tmp_path / "calibration_test.json"
    path.write_text(json.dumps({"calibDataSource": "test", "cameras": entries}))
    loaded = load_panoptic_calibration(path)
    assert [c.name for c in loaded] == ["00_00", "00_01", "00_02"]
    for a, b in zip(loaded, cams):
        np.testing.assert_allclose(a.P, b.P, rtol=1e-9, atol=1e-6)
        assert a.distorted
    assert len(load_panoptic_calibration(path, names=["00_02"])) == 1
    with pytest.raises(ValueError, match="names: unknown cameras"):
        load_panoptic_calibration(path, names=["99_99"])
    with pytest.raises(ValueError, match="missing"):
        camera_from_dict({"K": np.eye(3).tolist()})
