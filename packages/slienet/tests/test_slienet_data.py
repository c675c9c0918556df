import pickle

import numpy as np
import pytest

from paperworks.slienet import digits_images, load_cifar100, prototype_images, split_indices


def _write_cifar(folder, n=7):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
    batch = {
        b"data": data,
        b"fine_labels": list(rng.integers(0, 100, n)),
        b"coarse_labels": list(rng.integers(0, 20, n)),
    }
    (folder / "cifar-100-python").mkdir()
    with open(folder / "cifar-100-python" / "train", "wb") as fh:
        pickle.dump(batch, fh)
    return data, batch


def test_cifar100_loader_reads_python_pickle(tmp_path):
    data, batch = _write_cifar(tmp_path)
    x, y = load_cifar100(tmp_path, "train")
    assert x.shape == (7, 3, 32, 32) and x.dtype == np.float32
    assert np.array_equal(y, np.asarray(batch[b"fine_labels"]))
    # channel-major layout: the first 1024 bytes of a row are the red plane
    assert np.allclose(x[2, 0].ravel(), data[2, :1024] / 255.0)
    assert np.allclose(x[2, 2].ravel(), data[2, 2048:] / 255.0)
    _, yc = load_cifar100(tmp_path / "cifar-100-python", "train", label="coarse")
    assert np.array_equal(yc, np.asarray(batch[b"coarse_labels"]))


def test_cifar100_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no CIFAR-100 'test' pickle"):
        load_cifar100(tmp_path, "test")
    with pytest.raises(ValueError, match="split"):
        load_cifar100(tmp_path, "val")
    (tmp_path / "train").write_bytes(
        pickle.dumps({b"data": np.zeros((2, 10), np.uint8), b"fine_labels": [0, 1]})
    )
    with pytest.raises(ValueError, match="3072"):
        load_cifar100(tmp_path)


def test_generated_images_deterministic_and_shaped():
    x1, y1 = prototype_images(10, 4, size=8, seed=3)
    x2, y2 = prototype_images(10, 4, size=8, seed=3)
    x3, _ = prototype_images(10, 4, size=8, seed=4)
    assert x1.shape == (40, 3, 8, 8) and np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert not np.array_equal(x1, x3)
    assert np.bincount(y1).tolist() == [4] * 10
    # without noise or shifts, images of one class are affine copies of one prototype
    x0, _ = prototype_images(3, 5, size=8, noise=0.0, max_shift=0, seed=0)
    a, b = x0[0, 0].ravel(), x0[1, 0].ravel()
    assert abs(np.corrcoef(a, b)[0, 1]) > 0.999


def test_digits_and_split():
    x, y = digits_images(16)
    assert x.shape == (1797, 1, 16, 16) and 0 <= x.min() and x.max() <= 1.0 + 1e-6
    tr, ca, te = split_indices(y, (0.6, 0.2, 0.2), 0)
    assert len(set(tr) | set(ca) | set(te)) == len(y) == len(tr) + len(ca) + len(te)
    with pytest.raises(ValueError, match="fractions"):
        split_indices(y, (0.5, 0.5, 0.5), 0)


def test_digits_fast_path_matches_published_digits():
    # the fast path reads scikit-learn's bundled CSV without importing scikit-learn; check it against
    # the data set's published facts (class counts, first image) instead of paying that import here
    from paperworks.slienet.data import _digits_raw

    pixels, labels = _digits_raw()
    assert pixels.shape == (1797, 64) and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert pixels[0].reshape(8, 8)[0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]
    assert pixels.min() == 0 and pixels.max() == 16 and pixels.sum() == 561718
