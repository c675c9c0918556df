"""MNE input from a FIF file the test writes; mne-connectivity and networkx output."""

from datetime import UTC

import numpy as np
import pytest

from paperworks.bace import concatenate_raws_checked, from_nwb, from_raw, to_connectivity, to_networkx

mne = pytest.importorskip("mne")


def _raw(sfreq=200.0, n=400):
    info = mne.create_info(["a1", "a2", "b1", "b2"], sfreq, "seeg")
    raw = mne.io.RawArray(np.random.default_rng(0).standard_normal((4, n)) * 1e-5, info, verbose=False)
    raw.set_annotations(mne.Annotations([0.0, 1.0], [1.0, n / sfreq - 1.0], ["rest", "reach"]))
    return raw


def test_from_raw_fif_roundtrip(tmp_path):
    path = tmp_path / "rec_raw.fif"
    _raw().save(path, verbose=False)
    raw = mne.io.read_raw_fif(path, preload=True, verbose=False)
    X, ph, reg, rnames, _pnames = from_raw(
        raw, {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}, ["rest", "reach"]
    )
    assert X.shape == (1, 4, 400) and rnames == ["A", "B"] and list(reg) == [0, 0, 1, 1]
    assert (ph[0, :200] == 0).all() and (ph[0, 200:] == 1).all()
    with pytest.raises(ValueError, match="without a region"):
        from_raw(raw, {"a1": "A"}, ["rest"])
    with pytest.raises(ValueError, match="fewer than 2"):
        from_raw(raw, {"a1": "A", "a2": "A", "b1": "B", "b2": "C"}, ["rest"], min_contacts=2)
    with pytest.raises(ValueError, match="no annotation"):
        from_raw(raw, {c: "A" for c in raw.ch_names}, ["hold"])
    with pytest.raises(ValueError, match="sampling rates differ"):
        concatenate_raws_checked([_raw(), _raw(sfreq=250.0)], {c: "A" for c in raw.ch_names}, ["rest"])


def test_connectivity_and_networkx():
    A = np.zeros((2, 3, 3))
    A[0, 1, 0] = 0.7  # 0 -> 1
    cons = to_connectivity(A, ["x", "y", "z"], ["rest", "cue"])
    dense = cons["rest"].get_data("dense")
    assert dense.shape[:2] == (3, 3) and dense[0, 1].squeeze() == pytest.approx(0.7)
    g = to_networkx(A, ["x", "y", "z"], phase=0)
    assert list(g.edges(data="weight")) == [("x", "y", 0.7)]


def test_from_nwb_file_the_test_writes(tmp_path):
    pynwb = pytest.importorskip("pynwb")
    from datetime import datetime

    nwb = pynwb.NWBFile("bace test", "id0", datetime(2026, 1, 1, tzinfo=UTC))
    dev = nwb.create_device("probe")
    grp = nwb.create_electrode_group("g", "g", location="brain", device=dev)
    for loc in ("GPi", "GPi", "STN"):
        nwb.add_electrode(group=grp, location=loc)
    region = nwb.create_electrode_table_region([0, 1, 2], "all")
    data = np.random.default_rng(0).standard_normal((300, 3))
    nwb.add_acquisition(pynwb.ecephys.ElectricalSeries(name="lfp", data=data, electrodes=region, rate=100.0))
    path = tmp_path / "rec.nwb"
    with pynwb.NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
    X, ph, reg, rnames, pnames = from_nwb(path, "lfp", {"rest": [(0.0, 1.0)], "reach": [(1.0, 3.0)]})
    assert X.shape == (1, 3, 300) and rnames == ["GPi", "STN"] and list(reg) == [0, 0, 1]
    np.testing.assert_allclose(X[0], data.T)
    assert (ph[0, :100] == 0).all() and (ph[0, 100:] == 1).all() and pnames == ["rest", "reach"]
