import numpy as np
import pytest
import torch

from paperworks.omnisteer import MODALITIES, OmniTaskConfig, OmniWorld


def test_generated_inputs_follow_the_generative_model():
    cfg = OmniTaskConfig()
    w = OmniWorld(cfg, 0)
    v = w.vocab
    b = w.sample(3000, np.random.default_rng(1))
    ids, mod = b["input_ids"], b["modality"]
    assert ids.shape == (3000, cfg.content_len + 3) and b["features"].shape == (3000, cfg.content_len, 16)
    assert (ids[:, 0] == v.BOS).all() and (ids[:, -1] == v.QUERY).all()
    text = mod == 0
    content = ids[text, 2:-1]
    # exactly one concept token per text input, and it is the sampled concept
    is_concept = (content >= v.first_concept) & (content < v.first_filler)
    assert (is_concept.sum(1) == 1).all()
    assert torch.equal(content[is_concept] - v.first_concept, b["concept"][text])
    assert (ids[mod == 1, 2:-1] == v.PATCH).all() and (ids[mod == 2, 2:-1] == v.FRAME).all()
    assert (b["features"][text] == 0).all()
    # harmful = forbidden concept; benign answers are the concept's answer token
    assert torch.equal(b["harmful"].bool(), torch.from_numpy(w.forbidden)[b["concept"]])
    assert torch.equal(b["answer"], v.first_answer + torch.from_numpy(w.answers)[b["concept"]])
    # labels: harmless always the answer; harmful text refused at about text_refusal_rate
    assert torch.equal(b["label"][b["harmful"] == 0], b["answer"][b["harmful"] == 0])
    ht = (b["harmful"] == 1) & text
    assert abs(float((b["label"][ht] == v.REFUSE).float().mean()) - cfg.text_refusal_rate) < 0.05
    # image patches scatter around the concept's prototype with the configured noise
    img = b["features"][mod == 1, :, : cfg.patch_dim].numpy() - w.image_protos[b["concept"][mod == 1].numpy()]
    assert abs(img.std() - cfg.image_noise) < 0.05


def test_balanced_sets_and_seeding():
    w = OmniWorld(OmniTaskConfig(), 3)
    b = w.balanced(5, np.random.default_rng(0))
    assert b["input_ids"].shape[0] == 30
    for i in range(len(MODALITIES)):
        assert int(((b["modality"] == i) & (b["harmful"] == 1)).sum()) == 5
    again = OmniWorld(OmniTaskConfig(), 3).balanced(5, np.random.default_rng(0))
    assert all(torch.equal(b[k], again[k]) for k in b)


def test_bad_config():
    with pytest.raises(ValueError, match="n_forbidden"):
        OmniTaskConfig(n_concepts=4, n_forbidden=4)
    with pytest.raises(ValueError, match="text_refusal_rate"):
        OmniTaskConfig(text_refusal_rate=1.5)
    with pytest.raises(ValueError, match="modality"):
        OmniWorld(OmniTaskConfig(), 0).sample(3, np.random.default_rng(0), modality="video")
