"""The torchmetrics integration: real Metric subclasses, MetricCollection, .to(), DDP on 2 CPU processes."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paperworks.truthful_calibration as tc

torch = pytest.importorskip("torch")
torchmetrics = pytest.importorskip("torchmetrics")

RNG = np.random.default_rng(1)
P = RNG.dirichlet(np.ones(5), size=403)
Y = RNG.integers(0, 5, size=403)

# (metric class kwargs, the function and its kwargs that the metric must equal on all the data)
CASES = {
    "TruthfulClasswiseError": ({"n_bins": 10}, tc.truthful_classwise_error, {"n_bins": 10}),
    "TruthfulMulticlassError": ({"n_bins": 8}, tc.truthful_multiclass_error, {"n_bins": 8}),
    "TruthfulConfidenceError": ({"n_bins": 10}, tc.truthful_confidence_error, {"n_bins": 10}),
    "TruthfulPropertyError": (
        {"property_matrix": np.eye(5)[:2], "n_bins": 4},
        tc.truthful_property_error,
        {"property_matrix": np.eye(5)[:2], "n_bins": 4},
    ),
    "ClasswiseATB": ({}, tc.classwise_atb, {}),
    "MulticlassATB": ({}, tc.multiclass_atb, {}),
    "ConfidenceATB": ({}, tc.confidence_atb, {}),
    "TopLabelECE": ({"n_bins": 15}, tc.top_label_ece, {"n_bins": 15}),
    "TopLabelECE_l2_mass": (
        {"n_bins": 7, "binning": "mass", "norm": "l2"},
        tc.top_label_ece,
        {"n_bins": 7, "binning": "mass", "norm": "l2"},
    ),
    "ClasswiseECE": ({"n_bins": 15}, tc.classwise_ece, {"n_bins": 15}),
    "SmoothECE": ({"grid": 64}, tc.smooth_ece, {"grid": 64}),
}


def _make(name):
    kwargs, fn, fkw = CASES[name]
    return getattr(tc, name.split("_")[0])(**kwargs), fn, fkw


@pytest.mark.filterwarnings("ignore:The ``compute`` method")
@pytest.mark.parametrize("name", list(CASES))
def test_metric_accumulates_like_the_function(name):
    metric, fn, fkw = _make(name)
    assert isinstance(metric, torchmetrics.Metric) and isinstance(metric, torch.nn.Module)
    batch = metric(torch.from_numpy(P[:150]), torch.from_numpy(Y[:150]))  # forward: batch value, accumulated
    assert float(batch) == pytest.approx(fn(P[:150], Y[:150], **fkw), rel=1e-6)
    metric.update(P[150:], Y[150:])  # NumPy arrays are accepted too
    assert float(metric.compute()) == pytest.approx(fn(P, Y, **fkw), rel=1e-6)
    metric.reset()
    with pytest.raises(ValueError, match="no samples"):
        metric.compute()


def test_metric_collection_to_and_child_module():
    coll = torchmetrics.MetricCollection(
        {"tce": tc.TruthfulClasswiseError(5), "atb": tc.ClasswiseATB(5), "ece": tc.TopLabelECE(5)}
    )

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.metrics = coll

    head = Head().to("cpu").to(torch.float64)  # (torchmetrics resets the dtype on a device-only .to)
    assert "metrics" in dict(head.named_children())
    p, y = torch.from_numpy(P), torch.from_numpy(Y)
    head.metrics.update(p, y)
    out = head.metrics.compute()
    assert float(out["tce"]) == pytest.approx(tc.truthful_classwise_error(P, Y), rel=1e-9)
    assert float(out["atb"]) == pytest.approx(tc.classwise_atb(P, Y), rel=1e-9)
    assert float(out["ece"]) == pytest.approx(tc.top_label_ece(P, Y), rel=1e-9)
    assert out["tce"].dtype == torch.float64  # .to(float64) reached the metrics
    assert coll["ece"].count.sum() == len(Y)  # the equal-width ECE keeps fixed-size sums, not the data


def test_metric_checks_its_inputs_and_arguments():
    m = tc.TopLabelECE(num_classes=2)
    with pytest.raises(ValueError, match="probs: expected 2 classes"):
        m.update(np.full((2, 3), 1 / 3), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"^num_classes: expected an int >= 2"):
        tc.TruthfulClasswiseError(num_classes=1)
    with pytest.raises(ValueError, match=r"^n_bins: the k-d partition needs a power of two"):
        tc.TruthfulMulticlassError(n_bins=6)
    with pytest.raises(ValueError, match=r"^binning: expected one of"):
        tc.ClasswiseECE(binning="quantile")
    with pytest.raises(ValueError, match=r"^property_matrix: expected shape"):
        tc.TruthfulPropertyError(np.zeros((2, 2, 2)))
    k = tc.TruthfulClasswiseError()  # classes fixed by the first batch
    k.update(P[:10], Y[:10])
    with pytest.raises(ValueError, match="probs: expected 5 classes"):
        k.update(np.full((3, 3), 1 / 3), np.array([0, 1, 2]))


WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import torch
    import torch.distributed as dist
    import paperworks.truthful_calibration as tc

    rank, store, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=2)
    cases = json.loads(sys.argv[4])
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(5), size=403)
    y = rng.integers(0, 5, size=403)
    part = slice(0, 250) if rank == 0 else slice(250, 403)  # uneven shards
    values = {}
    for name, kwargs in cases.items():
        if "property_matrix" in kwargs:
            kwargs["property_matrix"] = np.asarray(kwargs["property_matrix"])
        metric = getattr(tc, name.split("_")[0])(**kwargs)
        pp, yy = torch.from_numpy(p[part]), torch.from_numpy(y[part])
        metric.update(pp[:60], yy[:60])
        metric.update(pp[60:], yy[60:])
        values[name] = float(metric.compute())
    json.dump(values, open(out, "w"))
    dist.destroy_process_group()
    """
)


def test_ddp_two_gloo_processes_every_rank_gets_the_global_value(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    cases = {
        name: {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        for name, (kw, _, _) in CASES.items()
    }
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": ""}
    args = json.dumps(cases)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(r),
                str(tmp_path / "store"),
                str(tmp_path / f"out{r}.json"),
                args,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-3000:]
    ranks = [json.loads((tmp_path / f"out{r}.json").read_text()) for r in range(2)]
    for name, (_, fn, fkw) in CASES.items():
        expected = fn(P, Y, **fkw)
        local = fn(P[:250], Y[:250], **fkw)
        assert local != pytest.approx(expected, rel=1e-6), name  # a rank's own value would be caught
        for values in ranks:
            assert values[name] == pytest.approx(expected, rel=1e-6), name
