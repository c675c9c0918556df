import pytest
import torch

from paperworks.omnisteer import (
    OmniSteer,
    StrengthAdapter,
    load_steering,
    omnisteer_loss,
    save_steering,
    train_adapter,
)


def _logits_fn(model):
    return lambda b: model(b["input_ids"]).logits[:, -1]


def test_adapter_is_bounded_and_validates():
    a = StrengthAdapter(16, (0, 2), alpha_max=3.0)
    h = torch.randn(4, 5, 16) * 100
    out = a(h, 2)
    assert out.shape == (4, 5) and (out > 0).all() and (out < 3.0).all()
    with pytest.raises(ValueError, match="alpha_max"):
        StrengthAdapter(16, (0,), alpha_max=0.0)
    with pytest.raises(ValueError, match="not one of the adapter's layers"):
        a(h, 1)
    with pytest.raises(ValueError, match="width"):
        a(torch.randn(2, 3, 8), 0)


def test_training_reaches_only_the_adapter_and_raises_refusal(tiny_lm):
    torch.manual_seed(0)
    refuse = 7
    harmful = {"input_ids": torch.randint(0, 32, (24, 6))}
    harmless = {"input_ids": torch.randint(0, 32, (24, 6))}
    omni = OmniSteer({1: torch.randn(16)}, alpha_max=8.0)
    fn = _logits_fn(tiny_lm)
    flags = [p.requires_grad for p in tiny_lm.parameters()]
    before = {k: v.clone() for k, v in tiny_lm.state_dict().items()}
    with torch.no_grad(), omni.apply(tiny_lm):
        p0 = fn(harmful).softmax(-1)[:, refuse].mean()
    losses = train_adapter(
        omni,
        tiny_lm,
        fn,
        harmful,
        harmless,
        refuse,
        steps=30,
        batch_size=12,
        lr=5e-2,
        generator=torch.Generator().manual_seed(0),
    )
    with torch.no_grad(), omni.apply(tiny_lm):
        p1 = fn(harmful).softmax(-1)[:, refuse].mean()
    assert len(losses) == 30 and p1 > p0
    assert all(p.grad is None for p in tiny_lm.parameters())  # no gradient reached the base model
    assert [p.requires_grad for p in tiny_lm.parameters()] == flags
    for k, v in tiny_lm.state_dict().items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=0)
    assert any(p.grad is not None for p in omni.adapter.parameters())


def test_gradients_through_the_hook_reach_the_adapter_not_the_base(tiny_lm):
    omni = OmniSteer({0: torch.randn(16), 2: torch.randn(16)}, alpha_max=2.0)
    for p in tiny_lm.parameters():
        p.requires_grad_(False)
    try:
        with omni.apply(tiny_lm):
            loss = tiny_lm(torch.randint(0, 32, (2, 4))).logits.square().mean()
        loss.backward()
    finally:
        for p in tiny_lm.parameters():
            p.requires_grad_(True)
    assert all(p.grad is None for p in tiny_lm.parameters())
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in omni.adapter.parameters())


def test_loss_is_ce_plus_kl():
    torch.manual_seed(0)
    a, b, c = torch.randn(5, 9), torch.randn(4, 9), torch.randn(4, 9)
    ce = -a.log_softmax(-1)[:, 3].mean()
    p = c.softmax(-1)
    kl = (p * (p.log() - b.log_softmax(-1))).sum(-1).mean()
    torch.testing.assert_close(omnisteer_loss(a, 3, b, c, 0.5), ce + 0.5 * kl)
    torch.testing.assert_close(omnisteer_loss(a, 3, c, c, 1.0), ce)


def test_safetensors_round_trip(tmp_path, tiny_lm):
    omni = OmniSteer({0: torch.randn(16), 2: torch.randn(16)}, alpha_max=2.5, width=8)
    torch.nn.init.normal_(omni.adapter.nets["2"][2].weight)
    path = save_steering(tmp_path / "omni.safetensors", omni)
    back = load_steering(path)
    assert back.layers == (0, 2) and back.adapter.alpha_max == 2.5 and back.adapter.width == 8
    ids = torch.randint(0, 32, (2, 5))
    with torch.no_grad():
        with omni.apply(tiny_lm):
            x = tiny_lm(ids).logits
        with back.apply(tiny_lm):
            y = tiny_lm(ids).logits
    torch.testing.assert_close(x, y, rtol=0, atol=1e-6)  # directions are re-normalised on load (last bit)
    with pytest.raises(ValueError, match="width 8 != model hidden size 16"):
        with OmniSteer({0: torch.randn(8)}, 1.0).apply(tiny_lm):
            pass


def test_train_adapter_bad_sets(tiny_lm):
    omni = OmniSteer({1: torch.randn(16)}, alpha_max=1.0)
    fn = _logits_fn(tiny_lm)
    ok = {"input_ids": torch.randint(0, 32, (4, 5))}
    with pytest.raises(ValueError, match="harmful: empty"):
        train_adapter(omni, tiny_lm, fn, {"input_ids": torch.empty(0, 5, dtype=torch.long)}, ok, 3, steps=1)
    with pytest.raises(ValueError, match="harmless"):
        train_adapter(omni, tiny_lm, fn, ok, {}, 3, steps=1)


def test_mean_pooling_sets_one_strength_per_input_from_the_whole_sequence():
    torch.manual_seed(0)
    a = StrengthAdapter(16, (1,), alpha_max=2.0, pooling="mean")
    torch.nn.init.normal_(a.nets["1"][2].weight)
    h = torch.randn(3, 5, 16)
    out = a(h, 1)
    assert out.shape == (3, 5) and torch.equal(out, out[:, :1].expand(3, 5))
    x = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
    ref = 2.0 * torch.sigmoid(a.nets["1"](x.mean(1)).squeeze(-1))
    torch.testing.assert_close(out[:, 0], ref)
    h2 = h.clone()
    h2[:, -1] += 3.0  # a later position changes the strength used at the first one
    assert not torch.allclose(a(h2, 1)[:, 0], out[:, 0])
    with pytest.raises(ValueError, match="pooling"):
        StrengthAdapter(16, (1,), alpha_max=1.0, pooling="max")


def test_pooling_survives_the_safetensors_round_trip(tmp_path):
    omni = OmniSteer({0: torch.randn(16)}, alpha_max=1.5, pooling="mean")
    back = load_steering(save_steering(tmp_path / "p.safetensors", omni))
    assert back.adapter.pooling == "mean"


@pytest.mark.parametrize("pooling", ["position", "mean"])
def test_cached_prefix_gives_the_full_pass_loss_and_gradients(tiny_lm, pooling):
    from paperworks.omnisteer import cache_prefix, suffix_logits

    torch.manual_seed(1)
    harmful = {"input_ids": torch.randint(0, 32, (10, 6))}
    harmless = {"input_ids": torch.randint(0, 32, (9, 6))}
    omni = OmniSteer({1: torch.randn(16), 2: torch.randn(16)}, alpha_max=4.0, pooling=pooling)
    for net in omni.adapter.nets.values():
        torch.nn.init.normal_(net[2].weight)
    fn = _logits_fn(tiny_lm)
    cache = cache_prefix(tiny_lm, fn, harmful, harmless, start=1)
    assert cache.harmful.shape == (10, 6, 16) and not cache.harmful.is_inference()
    for p in tiny_lm.parameters():
        p.requires_grad_(False)
    try:
        grads = []
        for cached in (False, True):
            omni.adapter.zero_grad(set_to_none=True)
            with omni.apply(tiny_lm):
                if cached:
                    h = torch.cat([cache.harmful, cache.harmless])
                    logits = suffix_logits(tiny_lm, h, 1)
                    l1, l0 = logits[:10], logits[10:]
                else:
                    l1, l0 = fn(harmful), fn(harmless)
            loss = omnisteer_loss(l1, 7, l0, cache.harmless_base_logits, 1.0)
            loss.backward()
            grads.append((loss.detach(), [p.grad.clone() for p in omni.adapter.parameters()]))
    finally:
        for p in tiny_lm.parameters():
            p.requires_grad_(True)
    (la, ga), (lb, gb) = grads
    torch.testing.assert_close(la, lb, rtol=1e-5, atol=1e-6)
    for a, b in zip(ga, gb, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    assert len(tiny_lm.model.layers) == 3  # the blocks are back after the suffix pass


def test_train_adapter_with_prefix_matches_the_full_pass_and_stops_on_tol(tiny_lm):
    from paperworks.omnisteer import cache_prefix

    torch.manual_seed(2)
    harmful = {"input_ids": torch.randint(0, 32, (16, 6))}
    harmless = {"input_ids": torch.randint(0, 32, (16, 6))}
    fn = _logits_fn(tiny_lm)
    cache = cache_prefix(tiny_lm, fn, harmful, harmless, start=2)
    runs = []
    for prefix in (None, cache):
        torch.manual_seed(3)
        omni = OmniSteer({2: torch.randn(16)}, alpha_max=4.0, pooling="mean")
        gen = torch.Generator().manual_seed(0)
        losses = train_adapter(
            omni,
            tiny_lm,
            fn,
            harmful,
            harmless,
            7,
            steps=8,
            batch_size=6,
            lr=5e-2,
            generator=gen,
            prefix=prefix,
        )
        runs.append((losses, [p.detach().clone() for p in omni.adapter.parameters()]))
    torch.testing.assert_close(torch.tensor(runs[0][0]), torch.tensor(runs[1][0]), rtol=1e-4, atol=1e-5)
    for a, b in zip(runs[0][1], runs[1][1], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    omni = OmniSteer({1: torch.randn(16)}, alpha_max=1.0)
    with pytest.raises(ValueError, match="after the first steered layer"):
        train_adapter(omni, tiny_lm, fn, harmful, harmless, 7, steps=1, prefix=cache)
    # tol: a constant loss (alpha ~ 0 cannot move it much) stops at the first check, 2 * window steps
    omni = OmniSteer({2: torch.randn(16)}, alpha_max=1e-6)
    losses = train_adapter(
        omni, tiny_lm, fn, harmful, harmless, 7, steps=100, window=5, tol=0.01, prefix=cache
    )
    assert len(losses) == 10
    with pytest.raises(ValueError, match="does not reproduce"):
        cache_prefix(tiny_lm, lambda b: fn(b) * 2.0, harmful, harmless, start=1)
