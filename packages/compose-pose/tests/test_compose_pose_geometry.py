import numpy as np
import pytest

from paperworks.compose_pose import Camera, fundamental_matrix, make_rig, robust_triangulate, triangulate
from paperworks.compose_pose.data import make_people
from paperworks.compose_pose.triangulate import reprojection_error, triangulate_batch


def _points(rng, n=15):
    return rng.uniform([-1500, -1500, 0], [1500, 1500, 1900], size=(n, 3))


def test_epipolar_constraint_holds_for_projections():
    rng = np.random.default_rng(0)
    cams = make_rig(4, rng=rng)
    X = _points(rng, 50)
    for a in cams:
        for b in cams:
            if a is b:
                continue
            F = fundamental_matrix(a, b)
            xa = np.c_[a.project(X), np.ones(len(X))]
            xb = np.c_[b.project(X), np.ones(len(X))]
            lines = xa @ F.T
            d = np.abs((lines * xb).sum(1)) / np.linalg.norm(lines[:, :2], axis=1)
            assert d.max() < 1e-6


def test_dlt_is_exact_on_noiseless_projections():
    rng = np.random.default_rng(1)
    cams = make_rig(5, rng=rng)
    X = _points(rng)
    uv = np.stack([c.project(X) for c in cams])
    P = np.stack([c.P for c in cams])
    Y = triangulate(P, uv)
    np.testing.assert_allclose(Y, X, atol=1e-6 * np.abs(X).max())
    # weights do not move an exact solution
    Yw = triangulate(P, uv, rng.uniform(0.2, 1.0, size=uv.shape[:2]))
    np.testing.assert_allclose(Yw, X, atol=1e-5 * np.abs(X).max())


def test_dlt_matches_opencv_triangulate_points():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(2)
    cams = make_rig(2, rng=rng)
    X = _points(rng)
    P = np.stack([c.P for c in cams])

    def opencv(uv):
        h = cv2.triangulatePoints(cams[0].P, cams[1].P, uv[0].T.copy(), uv[1].T.copy())
        return (h[:3] / h[3]).T

    exact = np.stack([c.project(X) for c in cams])
    np.testing.assert_allclose(triangulate(P, exact), opencv(exact), atol=1e-6 * np.abs(X).max())
    # with pixel noise the two weight the equations differently (ours normalises each row): both stay
    # as close to the truth
    noisy = exact + rng.normal(0, 1.0, size=exact.shape)
    ours = np.linalg.norm(triangulate(P, noisy) - X, axis=1).mean()
    theirs = np.linalg.norm(opencv(noisy) - X, axis=1).mean()
    assert ours < 1.5 * theirs


def test_distortion_round_trip():
    rng = np.random.default_rng(3)
    base = make_rig(2, rng=rng)[0]
    cam = Camera(K=base.K, R=base.R, t=base.t, dist=np.array([-0.25, 0.08, 0.001, -0.0005, -0.01]))
    X = _points(rng, 40)
    observed = cam.project(X)
    assert np.abs(observed - cam.project(X, distort=False)).max() > 1.0  # the distortion is not negligible
    np.testing.assert_allclose(cam.undistort(observed), cam.project(X, distort=False), atol=1e-6)


def test_robust_triangulation_discards_one_wrong_joint_view():
    rng = np.random.default_rng(4)
    cams = make_rig(5, rng=rng)
    X = make_people(1, rng, 2000.0, 0.0)[0]
    uv = np.stack([c.project(X) for c in cams])[None]
    uv[0, 2, 5] += 150.0  # one joint in one view latched onto something else
    P = np.stack([c.P for c in cams])[None]
    conf = np.ones(uv.shape[:3])
    plain = triangulate_batch(P, uv, conf)[0]
    robust, err = robust_triangulate(P, uv, conf, outlier_px=60.0)
    assert np.linalg.norm(plain[5] - X[5]) > 10.0
    assert np.linalg.norm(robust[0, 5] - X[5]) < 1e-3
    # the truncated error charges the outlier at most the cap
    assert err[0] <= 60.0 / (5 * 15) + 1e-6


def test_reprojection_error_counts_points_behind_the_camera_at_the_cap():
    rng = np.random.default_rng(5)
    cams = make_rig(2, rng=rng)
    X = _points(rng, 3)
    behind = 2 * cams[0].center - X  # mirrored through the first camera: negative depth there
    P = np.stack([c.P for c in cams])[None]
    uv = np.stack([c.project(X) for c in cams])[None]
    err = reprojection_error(P, uv, np.ones((1, 2, 3)), behind[None], cap=50.0)
    assert err[0] >= 25.0


def test_bad_cameras_raise_clear_errors():
    good = make_rig(2, rng=0)[0]
    with pytest.raises(ValueError, match="R: expected a rotation"):
        Camera(K=good.K, R=good.R * 2, t=good.t)
    with pytest.raises(ValueError, match="K: expected"):
        Camera(K=-good.K, R=good.R, t=good.t)
    with pytest.raises(ValueError, match="t: expected shape"):
        Camera(K=good.K, R=good.R, t=np.zeros(2))
    with pytest.raises(ValueError, match="dist: expected 4 or 5"):
        Camera(K=good.K, R=good.R, t=good.t, dist=np.zeros(3))
    with pytest.raises(ValueError, match="coincident centres"):
        fundamental_matrix(good, good)
    with pytest.raises(ValueError, match="K: expected finite"):
        Camera(K=np.full((3, 3), np.nan), R=good.R, t=good.t)
