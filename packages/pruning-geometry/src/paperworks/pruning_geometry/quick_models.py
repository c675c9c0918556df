"""The shipped seed-0 models of the quick run, and the deterministic script that regenerates them.

The quick run (``paperworks reproduce pruning-geometry --quick``) analyses seed 0's six models
(two families x depths 2 / 3 / 4) without training them: their weights ship in ``_models/`` (float32
state dicts, under 1 MB in all), trained by :func:`train_model` with the quick run's settings. Regenerate
them with::

    python -m paperworks.pruning_geometry.quick_models            # rewrites _models/
    python -m paperworks.pruning_geometry.quick_models --check    # retrains and compares

Training is deterministic on the CPU with one thread (fixed seeds, fresh samples from a seeded
generator); a test retrains one shipped model and compares it with the file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from paperworks.core import torch_threads

from .models import InContextRegressor, tiny_llama, tiny_llama_config, train_lm, train_regressor

__all__ = ["MODEL_DIR", "load_quick_model", "shipped_settings", "train_model", "write_quick_models"]

MODEL_DIR = Path(__file__).parent / "_models"


def shipped_settings(cfg) -> dict:
    """The settings a shipped model depends on (compared before a shipped model is used)."""
    return {
        "hidden": cfg.hidden,
        "heads": cfg.heads,
        "poly": repr(cfg.poly),
        "lm": repr(cfg.lm),
        "poly_steps": cfg.poly_steps,
        "lm_steps": cfg.lm_steps,
        "batch": cfg.batch,
        "lr": cfg.lr,
    }


def _train_seed(fam: str, depth: int, seed: int) -> int:
    return 1000 * seed + 10 * depth + (1 if fam == "lm" else 2)


def _fresh(fam: str, depth: int, cfg):
    if fam == "poly":
        return InContextRegressor(tiny_llama_config(1, hidden=cfg.hidden, layers=depth, heads=cfg.heads))
    return tiny_llama(cfg.lm.vocab_size, hidden=cfg.hidden, layers=depth, heads=cfg.heads)


def load_quick_model(fam: str, depth: int, cfg):
    """The shipped seed-0 model of ``fam`` at ``depth`` layers, or None when none matches ``cfg``."""
    meta_path = MODEL_DIR / "settings.json"
    path = MODEL_DIR / f"{fam}_L{depth}.pt"
    if not meta_path.is_file() or not path.is_file():
        return None
    if json.loads(meta_path.read_text()) != shipped_settings(cfg):
        return None
    model = _fresh(fam, depth, cfg)
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval()


def train_model(fam: str, depth: int, seed: int, cfg, *, use_shipped: bool = False):
    """Seed ``seed``'s model of family ``fam`` (``"poly"`` or ``"lm"``) at ``depth`` layers.

    ``use_shipped``: return the shipped model when ``seed == 0`` and one matches ``cfg``.
    """
    if use_shipped and seed == 0:
        model = load_quick_model(fam, depth, cfg)
        if model is not None:
            return model
    kw = dict(
        layers=depth,
        hidden=cfg.hidden,
        heads=cfg.heads,
        batch=cfg.batch,
        lr=cfg.lr,
        seed=_train_seed(fam, depth, seed),
    )
    with torch_threads(1):
        if fam == "poly":
            return train_regressor(cfg.poly, steps=cfg.poly_steps, **kw)
        if fam == "lm":
            return train_lm(cfg.lm, steps=cfg.lm_steps, **kw)
    raise ValueError(f"fam: expected 'poly' or 'lm', got {fam!r}")


def write_quick_models(folder: Path = MODEL_DIR, *, only: tuple[str, int] | None = None) -> list[Path]:
    """Train seed 0's quick-run models and write them (and ``settings.json``) into ``folder``."""
    from .experiments import FAMILIES, QUICK

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for fam in FAMILIES:
        for depth in QUICK.depths:
            if only is not None and (fam, depth) != only:
                continue
            model = train_model(fam, depth, 0, QUICK)
            path = folder / f"{fam}_L{depth}.pt"
            torch.save({k: v.detach().clone() for k, v in model.state_dict().items()}, path)
            written.append(path)
    (folder / "settings.json").write_text(json.dumps(shipped_settings(QUICK), indent=1) + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=MODEL_DIR)
    parser.add_argument("--check", action="store_true", help="retrain into a temp folder and compare")
    args = parser.parse_args(argv)
    if not args.check:
        for p in write_quick_models(args.out):
            print(p)
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        bad = 0
        for p in write_quick_models(Path(tmp)):
            new = torch.load(p, weights_only=True)
            old = torch.load(MODEL_DIR / p.name, weights_only=True)
            same = new.keys() == old.keys() and all(torch.allclose(new[k], old[k], atol=1e-5) for k in new)
            print(p.name, "same" if same else "DIFFERENT")
            bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
