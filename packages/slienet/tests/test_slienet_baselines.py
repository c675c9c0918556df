import pytest
import torch

from paperworks.core import torch_threads
from paperworks.slienet import (
    DynamicExitRunner,
    GeometricEnsemble,
    choose_threshold,
    dynamic_exit,
    exit_segments,
    resnet56,
    train_ztw,
)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # tiny models: one intra-op thread is much faster on a shared machine
    with torch_threads(1):
        yield


def test_dynamic_exit_matches_per_sample_loop():
    g = torch.Generator().manual_seed(0)
    p = torch.softmax(3 * torch.randn(4, 50, 5, generator=g), -1)
    probs, ex = dynamic_exit(p, 0.7)
    for n in range(50):
        m = next((j for j in range(3) if p[j, n].max() >= 0.7), 3)
        assert ex[n] == m and torch.equal(probs[n], p[m, n])
    _, ex1 = dynamic_exit(p, 1.0 + 1e-12)
    assert bool((ex1 == 3).all())  # threshold above 1: everything reaches the final exit
    with pytest.raises(ValueError, match="threshold"):
        dynamic_exit(p, -0.5)


def test_runner_equals_vectorised_exit():
    torch.manual_seed(0)
    m = resnet56(6, width=4, blocks_per_stage=2, image_size=8, in_channels=1, num_ics=3).eval()
    x = torch.randn(12, 1, 8, 8)
    with torch.no_grad():
        final, ics = m(x)
        members = torch.softmax(torch.cat([ics, final[None]]), -1)
        thr = float(members.amax(-1)[:-1].median())  # some samples exit early, some do not
        probs, _ = dynamic_exit(members, thr)
        runner = DynamicExitRunner([s.eval() for s in exit_segments(m)], thr)
        for n in range(12):
            assert torch.allclose(runner(x[n : n + 1])[0], probs[n], atol=1e-6)


def test_threshold_and_geometric_ensemble():
    g = torch.Generator().manual_seed(1)
    p = torch.softmax(2 * torch.randn(3, 80, 4, generator=g), -1)
    y = torch.randint(0, 4, (80,), generator=g)
    q = choose_threshold(p, y, [0.3, 0.6, 1.0])
    assert 0.5 <= q <= 1.0
    ens = GeometricEnsemble(3, 4)
    with torch.no_grad():
        out = ens(torch.log(p))
    prod = p[0] * p[1]
    assert torch.allclose(out[1], prod / prod.sum(-1, keepdim=True), atol=1e-5)  # w = 1, b = 0 at init
    with pytest.raises(ValueError, match="member_costs"):
        choose_threshold(p, y, [1.0])


def test_ztw_trains_on_frozen_backbone():
    torch.manual_seed(0)
    m = resnet56(3, width=4, blocks_per_stage=2, image_size=8, in_channels=1, num_ics=2).eval()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    x = torch.randn(60, 1, 8, 8)
    y = torch.randint(0, 3, (60,))
    ztw = train_ztw(m, x, y, x[:20], y[:20], epochs=2, seed=0)
    after = ztw.backbone.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    with torch.no_grad():
        members = ztw(x[:5])
        assert members.shape == (3, 5, 3)
        runner = ztw.runner(threshold=2.0)  # never confident: the last member answers
        assert torch.allclose(runner(x[:1])[0], members[-1, 0], atol=1e-5)


def test_replay_of_the_runners_own_exits_equals_the_runner():
    torch.manual_seed(1)
    m = resnet56(5, width=4, blocks_per_stage=2, image_size=8, in_channels=1, num_ics=3).eval()
    x = torch.randn(10, 1, 8, 8)
    with torch.no_grad():
        final, ics = m(x)
        members = torch.softmax(torch.cat([ics, final[None]]), -1)
        thr = float(members.amax(-1)[:-1].median())
        _, exits = dynamic_exit(members, thr)
        runner = DynamicExitRunner([s.eval() for s in exit_segments(m)], thr)
        for n in range(10):
            got = runner.replay(x[n : n + 1], int(exits[n]))
            assert torch.allclose(got, runner(x[n : n + 1]), atol=1e-7)
            assert runner.last_replay_agreed
        other = (int(exits[0]) + 1) % 4  # a recorded exit this network's confidence would not take
        runner.replay(x[:1], other)
        assert torch.allclose(runner.replay(x[:1], other)[0], members[other, 0], atol=1e-6)


def test_threshold_grid_reaches_below_one_half():
    """With many classes the top probability sits well below 0.5; the grid covers 0..1 (issue 36: the
    old grid's floor 0.50 was chosen in every seed)."""
    from paperworks.slienet import THRESHOLD_GRID

    assert THRESHOLD_GRID[0] == 0.0 and THRESHOLD_GRID[-1] == 1.0 and len(THRESHOLD_GRID) == 101
    g = torch.Generator().manual_seed(0)
    p = torch.softmax(0.3 * torch.randn(3, 200, 100, generator=g), -1)  # confidences around 0.02
    y = torch.randint(0, 100, (200,), generator=g)
    q = choose_threshold(p, y, [1.0, 2.0, 3.0])
    assert q < 0.5
