import numpy as np
import pytest
import torch

from paperworks.omnisteer import (
    golden_direction,
    record_activations,
    refusal_vector,
    refusal_vectors_by_layer,
)


def test_refusal_vector_is_the_naive_mean_difference():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, (37, 5)), rng.normal(0.0, 2.0, (11, 5))
    naive = np.array(
        [sum(a[i, j] for i in range(37)) / 37 - sum(b[i, j] for i in range(11)) / 11 for j in range(5)]
    )
    r = refusal_vector(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(r.numpy(), naive, rtol=1e-12)
    by = refusal_vectors_by_layer(
        {0: torch.tensor(a), 3: torch.tensor(a)}, {0: torch.tensor(b), 3: torch.tensor(b)}
    )
    assert sorted(by) == [0, 3] and torch.allclose(by[3], r)


def test_golden_direction_matches_numpy_svd_on_stacked_unit_vectors():
    rng = np.random.default_rng(1)
    base = rng.normal(size=8)
    vecs = {
        "text": 3 * base + rng.normal(size=8) * 0.3,
        "image": base + rng.normal(size=8) * 0.5,
        "audio": 0.2 * base + rng.normal(size=8) * 0.1,
    }
    g = golden_direction({k: torch.tensor(v) for k, v in vecs.items()})
    stacked = np.stack([v / np.linalg.norm(v) for v in vecs.values()], 1)
    u, s, _ = np.linalg.svd(stacked, full_matrices=False)
    ref = u[:, 0] * np.sign(u[:, 0] @ stacked[:, 0])
    np.testing.assert_allclose(g.direction.double().numpy(), ref, atol=1e-6)
    np.testing.assert_allclose(g.singular_values.numpy(), s, atol=1e-10)
    assert g.energy_share == pytest.approx(s[0] ** 2 / (s**2).sum())
    np.testing.assert_allclose(g.cosines.numpy(), stacked.T @ stacked, atol=1e-10)
    assert g.alignment["text"] > 0 and g.modalities == ("text", "image", "audio")


def test_golden_direction_sign_follows_text_and_energy_bounds():
    e = torch.eye(4, dtype=torch.float64)
    g = golden_direction({"text": -e[0], "image": -e[0] * 5})
    assert torch.allclose(g.direction.double(), -e[0]) and g.energy_share == pytest.approx(1.0)
    g2 = golden_direction({"text": e[0], "image": e[1], "audio": e[2]})
    assert g2.energy_share == pytest.approx(1 / 3)


def test_bad_inputs_have_one_line_errors():
    x = torch.randn(4, 3)
    with pytest.raises(ValueError, match="harmful: empty"):
        refusal_vector(torch.empty(0, 3), x)
    with pytest.raises(ValueError, match="widths differ"):
        refusal_vector(x, torch.randn(4, 2))
    with pytest.raises(ValueError, match="zero refusal vector"):
        refusal_vector(x, x.clone())
    with pytest.raises(ValueError, match="at least two modalities"):
        golden_direction({"text": torch.ones(3)})
    with pytest.raises(ValueError, match="zero refusal vector"):
        golden_direction({"text": torch.ones(3), "image": torch.zeros(3)})
    with pytest.raises(ValueError, match="width"):
        golden_direction({"text": torch.ones(3), "image": torch.ones(4)})
    with pytest.raises(ValueError, match="reference"):
        golden_direction({"image": torch.ones(3), "audio": torch.ones(3)})


def test_record_activations_reads_block_outputs(tiny_lm):
    ids = torch.randint(0, 32, (3, 7))
    tiny_lm(ids, output_hidden_states=True)  # transformers may register its own recorders on first use
    before = [len(layer._forward_hooks) for layer in tiny_lm.model.layers]
    with torch.no_grad(), record_activations(tiny_lm, [0, -1]) as rec:
        out = tiny_lm(ids, output_hidden_states=True)
    # hidden_states[l + 1] is block l's output (the last one after the final norm, so compare block 0)
    torch.testing.assert_close(rec[0][0], out.hidden_states[1][:, -1])
    assert sorted(rec) == [0, 2] and rec[2][0].shape == (3, 16)
    assert [len(layer._forward_hooks) for layer in tiny_lm.model.layers] == before
    with pytest.raises(ValueError, match="out of range"):
        with record_activations(tiny_lm, [3]):
            pass
