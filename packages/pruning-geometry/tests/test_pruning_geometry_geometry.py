import numpy as np
import pytest
import torch

from paperworks.pruning_geometry import Profile, distortion, mean_norm, mean_pairwise_distance, profiles

H = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 1.0], [1.0, 2.0, 2.0], [-1.0, 0.5, 0.0]])


def test_norm_and_distance_against_numpy():
    t = torch.tensor(H, dtype=torch.float32)
    assert mean_norm(t) == pytest.approx(np.mean(np.linalg.norm(H, axis=1)), rel=1e-6)
    pairs = [np.linalg.norm(H[i] - H[j]) for i in range(4) for j in range(i + 1, 4)]
    assert mean_pairwise_distance(t) == pytest.approx(np.mean(pairs), rel=1e-6)


def test_profiles_read_every_layer_output(tiny_lm, ids):
    prof = profiles(tiny_lm, {"input_ids": ids, "use_cache": False})
    assert prof.depths == 4
    states = []
    hooks = [
        layer.register_forward_hook(lambda m, a, o: states.append(o.detach().numpy()))
        for layer in tiny_lm.model.layers
    ]
    with torch.inference_mode():
        tiny_lm(input_ids=ids, use_cache=False)
    for h in hooks:
        h.remove()
    for layer, s in enumerate(states):
        last = s[:, -1, :].astype(float)
        n = last.shape[0]
        assert prof.norms[layer] == pytest.approx(np.linalg.norm(last, axis=1).mean(), rel=1e-5)
        d = [np.linalg.norm(last[i] - last[j]) for i in range(n) for j in range(i + 1, n)]
        assert prof.dists[layer] == pytest.approx(np.mean(d), rel=1e-5)
    mean_prof = profiles(tiny_lm, {"input_ids": ids, "use_cache": False}, pool="mean")
    assert mean_prof.norms[0] == pytest.approx(np.linalg.norm(states[0].mean(1), axis=1).mean(), rel=1e-5)


def test_distortion_against_numpy():
    a = Profile(norms=np.array([1.0, 2.0, 4.0]), dists=np.array([0.5, 1.0, 3.0]))
    b = Profile(norms=np.array([1.0, 1.0, 2.0]), dists=np.array([1.0, 1.0, 1.0]))
    d = distortion(a, b)
    assert d.norm == pytest.approx(np.mean(np.log([1, 2, 2]) ** 2))
    assert d.dist == pytest.approx(np.mean(np.log([0.5, 1, 3]) ** 2))
    assert d.total == pytest.approx(d.norm + d.dist)
    assert distortion(a, a).total == 0.0
    assert distortion(a, b, [2]).norm == pytest.approx(np.log(2) ** 2)


def test_bad_input(tiny_lm, ids):
    with pytest.raises(ValueError, match="inputs: expected a batch of at least 2"):
        profiles(tiny_lm, ids[:1])
    with pytest.raises(ValueError, match="at least 2"):
        profiles(tiny_lm, ids[:0])
    with pytest.raises(ValueError, match="h: expected at least 2"):
        mean_pairwise_distance(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="pool"):
        profiles(tiny_lm, ids, pool="max")
    a = Profile(norms=np.ones(3), dists=np.ones(3))
    with pytest.raises(ValueError, match="one depth"):
        distortion(a, Profile(norms=np.ones(2), dists=np.ones(2)))
    with pytest.raises(ValueError, match="depths"):
        distortion(a, a, [5])
