"""Field integration: windows from ``mne.io.Raw`` (or NWB), output as ``mne_connectivity.Connectivity``
or a ``networkx.DiGraph``.

- :func:`from_raw` ``(raw, region_of_channel, phase_annotations)`` -> ``(X (1, C, T), phases (1, T),
  regions (C,), region_names, phase_names)``: the phases come from the Raw's annotations whose
  description is in ``phase_annotations`` (a sample outside every such annotation gets ``-1``);
  ``region_of_channel`` maps channel name -> region name (a channel without a region is an error).
- :func:`concatenate_raws_checked`: several recordings as trials (equal sampling rates required).
- :func:`to_connectivity`: one ``mne_connectivity.Connectivity`` per phase, dense, in mne's
  ``(source, target)`` order (``get_data("dense")[j, r] = A[r, j]``).
- :func:`to_networkx`: a ``DiGraph`` of one phase, edge ``source -> target`` weighted ``A[target, source]``.
- :func:`from_nwb`: an ``ElectricalSeries`` of an NWB file and its electrodes table's ``location`` column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["concatenate_raws_checked", "from_nwb", "from_raw", "to_connectivity", "to_networkx"]


def from_raw(
    raw, region_of_channel: Mapping[str, str], phase_annotations: Sequence[str], min_contacts: int = 1
):
    """Build BACE input from an ``mne.io.Raw`` (see the module docstring)."""
    import mne

    if not isinstance(raw, mne.io.BaseRaw):
        raise TypeError(f"raw: expected an mne.io.Raw, got {type(raw).__name__}")
    names = list(raw.ch_names)
    missing = [c for c in names if c not in region_of_channel]
    if missing:
        raise ValueError(f"region_of_channel: channels without a region: {missing}")
    region_names = sorted(set(region_of_channel[c] for c in names))
    regions = np.array([region_names.index(region_of_channel[c]) for c in names])
    counts = np.bincount(regions, minlength=len(region_names))
    if counts.min() < min_contacts:
        few = [region_names[i] for i in np.flatnonzero(counts < min_contacts)]
        raise ValueError(f"region_of_channel: regions {few} have fewer than {min_contacts} contacts")
    X = raw.get_data()
    if not np.all(np.isfinite(X)):
        raise ValueError(f"raw: expected finite samples, found {int((~np.isfinite(X)).sum())} NaN or inf")
    phase_names = list(phase_annotations)
    if not phase_names:
        raise ValueError("phase_annotations: expected at least one annotation description")
    phases = np.full(X.shape[1], -1, dtype=np.int64)
    sf, first = raw.info["sfreq"], raw.first_samp
    found = set()
    for ann in raw.annotations:
        desc = ann["description"]
        if desc not in phase_names:
            continue
        found.add(desc)
        start = round(ann["onset"] * sf) - first
        stop = start + round(ann["duration"] * sf)
        phases[max(start, 0) : max(min(stop, X.shape[1]), 0)] = phase_names.index(desc)
    absent = [p for p in phase_names if p not in found]
    if absent:
        raise ValueError(f"phase_annotations: no annotation of {absent} in raw")
    return X[None], phases[None], regions, region_names, phase_names


def concatenate_raws_checked(raws: Sequence, region_of_channel, phase_annotations):
    """:func:`from_raw` of several recordings stacked as trials (same channels, same sampling rate, same
    length)."""
    if not raws:
        raise ValueError("raws: expected at least one recording")
    rates = sorted({float(r.info["sfreq"]) for r in raws})
    if len(rates) > 1:
        raise ValueError(f"raws: sampling rates differ across files ({rates}); resample first")
    parts = [from_raw(r, region_of_channel, phase_annotations) for r in raws]
    lengths = {p[0].shape[2] for p in parts}
    if len(lengths) > 1 or len({tuple(r.ch_names) for r in raws}) > 1:
        raise ValueError("raws: expected the same channels and length in every recording (crop first)")
    X = np.concatenate([p[0] for p in parts])
    ph = np.concatenate([p[1] for p in parts])
    return X, ph, parts[0][2], parts[0][3], parts[0][4]


def to_connectivity(adjacency: np.ndarray, region_names: Sequence[str] | None = None, phase_names=None):
    """One ``mne_connectivity.Connectivity`` per phase (``get_data("dense")[source, target]``); a dict
    phase name -> Connectivity."""
    from mne_connectivity import Connectivity

    A = np.asarray(adjacency, float)
    P, R, _ = A.shape
    names = list(region_names) if region_names is not None else [f"region{r}" for r in range(R)]
    phases = list(phase_names) if phase_names is not None else [f"phase{b}" for b in range(P)]
    return {
        phases[b]: Connectivity(
            data=A[b].T.reshape(-1), names=names, method="bace", indices="all", n_nodes=R, n_epochs_used=1
        )
        for b in range(P)
    }


def to_networkx(
    adjacency: np.ndarray, region_names: Sequence[str] | None = None, phase: int = 0, threshold=0.0
):
    """The adjacency of ``phase`` as a ``networkx.DiGraph``: edge ``source -> target`` with ``weight``."""
    import networkx as nx

    A = np.asarray(adjacency, float)[phase]
    R = A.shape[0]
    names = list(region_names) if region_names is not None else list(range(R))
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for r in range(R):
        for j in range(R):
            if r != j and A[r, j] > threshold:
                g.add_edge(names[j], names[r], weight=float(A[r, j]))
    return g


def from_nwb(path, series: str, phase_intervals: Mapping[str, Sequence[tuple[float, float]]]):
    """``X (1, C, T)``, phases, regions, region names and phase names from an NWB file's
    ``ElectricalSeries`` ``series`` (regions: the electrodes table's ``location``; phases: name ->
    list of ``(start_s, stop_s)``)."""
    from pynwb import NWBHDF5IO

    with NWBHDF5IO(str(path), "r") as io:
        nwb = io.read()
        es = nwb.acquisition[series]
        X = np.asarray(es.data[:]).T
        rate = float(es.rate)
        loc = [str(x) for x in es.electrodes.to_dataframe()["location"]]
    region_names = sorted(set(loc))
    regions = np.array([region_names.index(x) for x in loc])
    phases = np.full(X.shape[1], -1, dtype=np.int64)
    names = list(phase_intervals)
    for i, name in enumerate(names):
        for start, stop in phase_intervals[name]:
            phases[round(start * rate) : round(stop * rate)] = i
    return X[None], phases[None], regions, region_names, names
