import os
import pickle
import struct

import numpy as np
import pytest

from paperworks.slienet import digits_images, load_cifar100, prototype_images, split_indices


def _write_cifar(folder, n=7):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
    batch = {  # as in the real files: labels are lists of Python ints
        b"data": data,
        b"fine_labels": [int(v) for v in rng.integers(0, 100, n)],
        b"coarse_labels": [int(v) for v in rng.integers(0, 20, n)],
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


def _py2_cifar_pickle(data: np.ndarray, labels: list[int]) -> bytes:
    """A batch pickled the way the published ``cifar-100-python`` files are (Python 2, protocol 2,
    NumPy 1): byte strings as BINSTRING opcodes, the array via ``numpy.core.multiarray._reconstruct``."""

    def s(b: bytes) -> bytes:  # SHORT_BINSTRING / BINSTRING
        return b"U" + bytes([len(b)]) + b if len(b) < 256 else b"T" + struct.pack("<i", len(b)) + b

    def i(v: int) -> bytes:  # BININT
        return b"J" + struct.pack("<i", v)

    arr = (
        b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
        + i(0)
        + b"\x85"
        + s(b"b")
        + b"\x87R"
        + b"("
        + i(1)
        + i(data.shape[0])
        + i(data.shape[1])
        + b"\x86"  # state: version, shape,
        + b"cnumpy\ndtype\n"
        + s(b"u1")
        + i(0)
        + i(1)
        + b"\x87R"  # dtype('u1'),
        + b"("
        + i(3)
        + s(b"|")
        + b"NNN"
        + i(-1)
        + i(-1)
        + i(0)
        + b"tb"  # its state,
        + b"\x89"
        + s(data.tobytes())
        + b"tb"  # not Fortran, raw bytes
    )
    lab = b"](" + b"".join(i(v) for v in labels) + b"e"
    return b"\x80\x02}(" + s(b"data") + arr + s(b"fine_labels") + lab + s(b"coarse_labels") + lab + b"u."


def test_cifar100_loader_reads_python2_numpy1_pickle(tmp_path):
    data = np.random.default_rng(1).integers(0, 256, (3, 3072), dtype=np.uint8)
    (tmp_path / "test").write_bytes(_py2_cifar_pickle(data, [5, 99, 0]))
    x, y = load_cifar100(tmp_path, "test")
    assert y.tolist() == [5, 99, 0] and x.shape == (3, 3, 32, 32)
    assert np.array_equal((x * 255).round().astype(np.uint8).reshape(3, -1), data)


class _RunsCode:
    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


@pytest.mark.parametrize("attack", ["os.system", "builtins.exec", "pathlib.write_text"])
def test_cifar100_loader_refuses_a_pickle_that_runs_code(tmp_path, attack):
    import pathlib

    marker = tmp_path / "pwned"
    payload = {
        "os.system": _RunsCode(os.system, f"echo pwned > {marker}"),
        "builtins.exec": _RunsCode(exec, f"open({str(marker)!r}, 'w').write('pwned')"),
        "pathlib.write_text": _RunsCode(pathlib.Path.write_text, marker, "pwned"),
    }[attack]
    batch = {b"data": np.zeros((1, 3072), np.uint8), b"fine_labels": [payload], b"coarse_labels": [0]}
    blob = pickle.dumps(batch)
    (tmp_path / "train").write_bytes(blob)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load global") as err:
        load_cifar100(tmp_path)
    assert "\n" not in str(err.value) and str(tmp_path / "train") in str(err.value)
    assert not marker.exists()  # nothing of the file ran
    pickle.loads(blob)  # the same file under plain pickle does run its payload (the test can fail)
    assert marker.exists()


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


def test_coarse_groups_share_their_prototypes():
    """Classes of one group (c mod n_coarse) are more alike than classes of different groups."""
    x, _ = prototype_images(8, 1, size=8, noise=0.0, max_shift=0, n_coarse=2, coarse_share=0.8, seed=0)
    flat = (x - x.mean(axis=(1, 2, 3), keepdims=True)).reshape(8, -1)
    corr = np.corrcoef(flat)
    same = [corr[i, j] for i in range(8) for j in range(i + 1, 8) if i % 2 == j % 2]
    diff = [corr[i, j] for i in range(8) for j in range(i + 1, 8) if i % 2 != j % 2]
    assert min(same) > 0.5 > max(diff)
    x0, _ = prototype_images(8, 1, size=8, noise=0.0, max_shift=0, seed=0)
    x1, _ = prototype_images(8, 1, size=8, noise=0.0, max_shift=0, coarse_share=0.0, seed=0)
    assert np.array_equal(x0, x1)  # share 0: the independent prototypes of before
