import pytest
import torch

from paperworks.herm import SimilarityAwareFusion, similarity_fusion


def test_confident_symbolic_branch_is_not_diluted():
    sym = torch.tensor([[0.95, 0.02, 0.01], [0.10, 0.12, 0.05]])
    neu = torch.tensor([[0.0, 5.0, 0.0], [0.0, 5.0, 0.0]])
    p = similarity_fusion(sym, neu)
    assert torch.allclose(p.sum(-1), torch.ones(2))
    assert int(p[0].argmax()) == 0  # symbolic wins where its similarity is high
    assert int(p[1].argmax()) == 1  # neural wins where the symbolic branch is unsure
    assert float(p[0, 0]) > 0.99


def test_fusion_module_matches_function_and_has_gradients():
    sym = torch.rand(4, 6)
    neu = torch.randn(4, 6)
    mod = SimilarityAwareFusion(tau=0.4, kappa=10.0)
    out = mod(sym, neu)
    assert torch.allclose(out, similarity_fusion(sym, neu, tau=0.4, kappa=10.0), atol=1e-6)
    out[:, 0].sum().backward()
    assert mod.tau.grad is not None and torch.isfinite(mod.tau.grad)


def test_fusion_errors():
    with pytest.raises(ValueError, match="shape mismatch"):
        similarity_fusion(torch.rand(2, 3), torch.rand(2, 4))
    with pytest.raises(ValueError, match="neural_logits"):
        similarity_fusion(torch.rand(2, 3), torch.tensor([[0.0, float("nan"), 0.0]] * 2))
