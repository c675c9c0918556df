import pytest
import torch

from paperworks.omnisteer import ablate, decoder_layers, record_activations, steer


def _block0(model, ids):
    """Block 0's output as the next block sees it (a recorder registered after the steering hooks)."""
    with record_activations(model, [0], position=None) as rec:
        model(ids)
    return rec[0][0]


def _n_hooks(model):
    return sum(len(layer._forward_hooks) for layer in decoder_layers(model))


def test_zero_strength_leaves_outputs_unchanged_and_hooks_are_removed(tiny_lm):
    ids = torch.randint(0, 32, (2, 6))
    u = {1: torch.randn(16), 2: torch.randn(16)}
    base = _n_hooks(tiny_lm)  # transformers' own output recorders, if any
    with torch.no_grad():
        ref = tiny_lm(ids).logits
        with steer(tiny_lm, u, 0.0) as handles:
            assert len(handles) == 2 and _n_hooks(tiny_lm) == base + 2
            out = tiny_lm(ids).logits
        assert _n_hooks(tiny_lm) == base
        torch.testing.assert_close(out, ref, rtol=0, atol=0)
        with steer(tiny_lm, u, lambda h, layer: torch.zeros(h.shape[:2])):
            torch.testing.assert_close(tiny_lm(ids).logits, ref, rtol=0, atol=0)
        with steer(tiny_lm, u, 3.0):
            assert not torch.allclose(tiny_lm(ids).logits, ref)
        torch.testing.assert_close(tiny_lm(ids).logits, ref, rtol=0, atol=0)


def test_hooks_removed_when_the_block_raises(tiny_lm):
    base = _n_hooks(tiny_lm)
    with pytest.raises(RuntimeError, match="boom"):
        with steer(tiny_lm, {0: torch.ones(16)}, 1.0):
            raise RuntimeError("boom")
    assert _n_hooks(tiny_lm) == base


def test_addition_adds_exactly_strength_times_u_at_the_block(tiny_lm):
    ids = torch.randint(0, 32, (2, 5))
    u = torch.randn(16)
    with torch.no_grad():
        h0 = _block0(tiny_lm, ids)
        with steer(tiny_lm, {0: u}, 2.5):
            h1 = _block0(tiny_lm, ids)
        with steer(tiny_lm, {0: u}, 2.5, positions=slice(-1, None)):
            h2 = _block0(tiny_lm, ids)
    torch.testing.assert_close(h1 - h0, (2.5 * u).expand_as(h0), atol=1e-5, rtol=0)
    torch.testing.assert_close(h2[:, :-1], h0[:, :-1])
    torch.testing.assert_close(h2[:, -1] - h0[:, -1], (2.5 * u).expand(2, 16), atol=1e-5, rtol=0)


def test_ablation_removes_the_direction(tiny_lm):
    ids = torch.randint(0, 32, (2, 5))
    u = torch.randn(16)
    with (
        torch.no_grad(),
        ablate(tiny_lm, {0: u, 1: u}),
        record_activations(tiny_lm, [0, 1], position=None) as rec,
    ):
        tiny_lm(ids)
    unit = u / u.norm()
    assert (rec[0][0] @ unit).abs().max() < 1e-5 and (rec[1][0] @ unit).abs().max() < 1e-5
    assert (_block0(tiny_lm, ids) @ unit).abs().max() > 1e-3  # and only inside the block


def test_bad_inputs(tiny_lm):
    base = _n_hooks(tiny_lm)
    with pytest.raises(ValueError, match="out of range"):
        with steer(tiny_lm, {3: torch.ones(16)}):
            pass
    with pytest.raises(ValueError, match="width 8 != model hidden size 16"):
        with steer(tiny_lm, {0: torch.ones(8)}):
            pass
    with pytest.raises(ValueError, match="zero direction"):
        with steer(tiny_lm, {0: torch.zeros(16)}):
            pass
    with pytest.raises(ValueError, match="strength"):
        with steer(tiny_lm, {0: torch.ones(16)}, float("nan")):
            pass
    with pytest.raises(TypeError, match="model"):
        with steer(torch.nn.Linear(2, 2), {0: torch.ones(2)}):
            pass
    tiny_lm.train()
    try:
        with pytest.raises(RuntimeError, match="training mode"):
            with steer(tiny_lm, {0: torch.ones(16)}):
                pass
    finally:
        tiny_lm.eval()
    assert _n_hooks(tiny_lm) == base
