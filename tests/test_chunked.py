"""screwdyn.ident.chunked and screwdyn.ident.logs: identification from Dask arrays, log files and data
frames, chunk by chunk.

The oracle is the in-memory :func:`~screwdyn.ident.identify` on the same data (and, for the
derivatives, :func:`~screwdyn.ident.estimate_derivatives` applied to each run alone): the same
estimate, standard deviations and residuals to 1e-9, whatever the chunks, with velocities filtered
across chunk boundaries and never across two runs.
"""
import json

import numpy as np
import pytest

import screwdyn
from screwdyn.cli import ident_cli
from screwdyn.errors import InputError
from screwdyn.ident import base_parameters, estimate_derivatives, identify

da = pytest.importorskip("dask.array", reason="Dask is an optional extra (pip install 'screwdyn[dask]'); the test extras include it")
dask = pytest.importorskip("dask")

DT = 0.01
FRICTION = {"viscous": True, "coulomb": True}


def motion(t, phase=0.0):
    """A smooth motion of the UR5's joints (three harmonics each), its velocities and accelerations."""
    w = np.array([0.31, 0.47, 0.53, 0.71, 0.83, 0.97])[None, :] * 2 * np.pi
    t = t[:, None]
    q = sum(a * np.sin(k * w * t + phase + k) for k, a in ((1, 0.9), (2, 0.4), (3, 0.2)))
    qd = sum(a * k * w * np.cos(k * w * t + phase + k) for k, a in ((1, 0.9), (2, 0.4), (3, 0.2)))
    qdd = sum(-a * (k * w) ** 2 * np.sin(k * w * t + phase + k) for k, a in ((1, 0.9), (2, 0.4), (3, 0.2)))
    return q, qd, qdd


@pytest.fixture(scope="module")
def data():
    """The UR5 with friction; three runs (10, 13 and 8 s at 100 Hz) of noisy torques and positions."""
    model = screwdyn.models.load("ur5").replace(damping=np.linspace(0.8, 0.1, 6), friction=np.linspace(2.0, 0.3, 6))
    rng = np.random.default_rng(11)
    runs = []
    for k, seconds in enumerate((10.0, 13.0, 8.0)):
        t = np.arange(0.0, seconds, DT)
        q, qd, qdd = motion(t, phase=k)
        tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True) + 0.2 * rng.normal(size=q.shape)
        runs.append(dict(t=t, q=q + 2e-5 * rng.normal(size=q.shape), qd=qd, qdd=qdd, tau=tau, run=np.full(len(t), k)))
    cat = {key: np.concatenate([r[key] for r in runs]) for key in runs[0]}
    return dict(model=model, base=base_parameters(model, **FRICTION), runs=runs, **cat)


def assert_same_estimate(est, ref):
    """The estimate and its statistics of ``est`` (chunked) are those of ``ref`` (in memory) to 1e-9."""
    np.testing.assert_array_less(np.abs(est.beta - ref.beta), 1e-9 * np.maximum(np.abs(ref.beta), ref.std))
    for name in ("std", "sigma", "rms"):
        np.testing.assert_allclose(getattr(est, name), getattr(ref, name), rtol=1e-9, err_msg=name)
    np.testing.assert_allclose([est.cond, est._s2], [ref.cond, ref._s2], rtol=1e-9)
    assert est.method == ref.method


def lazy(x, chunk=640):
    return da.from_array(x, chunks=(chunk,) + x.shape[1:])


@pytest.mark.parametrize("options", [{}, {"weights": "joint"}, {"min_speed": 0.3}, {"weights": np.arange(1.0, 7.0)},
                                     {"weights": "per sample"}], ids=["ols", "wls", "min_speed", "joint weights",
                                                                        "sample weights"])
def test_identify_from_dask_arrays_gives_the_in_memory_estimate(data, options):
    d = data
    if isinstance(options.get("weights"), str) and options["weights"] == "per sample":
        options = {"weights": np.random.default_rng(1).uniform(0.5, 2.0, d["tau"].shape)}
    ref = identify(d["model"], d["q"], d["qd"], d["qdd"], d["tau"], base=d["base"], **options)
    lazy_options = {k: (lazy(v) if isinstance(v, np.ndarray) and v.ndim == 2 else v) for k, v in options.items()}
    with dask.config.set(scheduler="threads"):
        est = identify(d["model"], lazy(d["q"]), lazy(d["qd"]), lazy(d["qdd"]), lazy(d["tau"]), base=d["base"],
                       **lazy_options)
    assert_same_estimate(est, ref)
    assert isinstance(est.tau_fit, da.Array) and est.tau_fit.shape == d["tau"].shape
    with dask.config.set(scheduler="sync"):
        np.testing.assert_allclose(est.tau_fit.compute(), ref.tau_fit, rtol=1e-9, atol=1e-9)
    phys, phys_ref = est.physical(), ref.physical()   # from the factors alone: the same problem
    np.testing.assert_allclose(phys.rms, phys_ref.rms, rtol=1e-6)


def test_velocities_are_filtered_across_chunks_and_within_each_run(data):
    """Positions only, three runs, chunks of 256 samples cut anywhere: qd and qdd are those of
    estimate_derivatives on each run alone, the estimate that of the in-memory call with runs;
    filtered across the runs, the estimate would be far off."""
    d = data
    model, base = d["model"], d["base"]
    t = np.arange(len(d["t"])) * DT                        # one clock: t alone does not tell the runs apart
    ref = identify(model, d["q"], None, None, d["tau"], t=t, runs=d["run"], base=base)
    with dask.config.set(scheduler="sync"):
        est = identify(model, lazy(d["q"], 256), None, None, lazy(d["tau"], 256), t=lazy(t, 256),
                       runs=lazy(d["run"], 300), base=base)
        qd, qdd, keep = dask.compute(est.qd, est.qdd, est._keep)
    assert_same_estimate(est, ref)
    alone = [estimate_derivatives(r["q"], DT) for r in d["runs"]]
    np.testing.assert_allclose(qd, np.concatenate([a[1] for a in alone]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(qdd, np.concatenate([a[2] for a in alone]), rtol=0, atol=1e-7)
    half = 10                                                 # the default window is 0.2 s: 21 samples
    assert keep.sum(axis=0).tolist() == [len(d["t"]) - 3 * 2 * half] * 6
    across = identify(model, d["q"], None, None, d["tau"], t=t, base=base)
    assert np.max(np.abs(across.beta - ref.beta) / ref.std) > 10


def test_logs_and_data_frames(data, tmp_path):
    """Parquet files (row groups smaller than a chunk), CSV files, a pandas and a Dask data frame:
    one run per file (or per value of the run column), the in-memory estimate each time, and the
    same from ``screwdyn identify 'logs/*.parquet'``."""
    pa = pytest.importorskip("pyarrow", reason="pyarrow (Parquet) is in the 'dask' and 'test' extras")
    pd = pytest.importorskip("pandas", reason="pandas is in the 'dask' and 'test' extras")
    import pyarrow.parquet as pq

    from screwdyn.ident import write_csv
    from screwdyn.ident.logs import read_logs

    d = data
    model = screwdyn.models.load("ur5")            # the CLI's model: no friction
    frames = []
    for k, r in enumerate(d["runs"]):
        tau = screwdyn.inverse_dynamics(model, r["q"], r["qd"], r["qdd"]) + 0.2 * np.sin(7.0 * r["t"])[:, None]
        cols = {"t": r["t"], **{f"q_{j}": r["q"][:, i] for i, j in enumerate(model.joint_names)},
                **{f"tau_{i}": tau[:, i] for i in range(model.n)}}
        pq.write_table(pa.table(cols), tmp_path / f"run{k}.parquet", row_group_size=300)
        write_csv(tmp_path / f"run{k}.csv", model, r["t"], r["q"], tau)
        frames.append(pd.DataFrame(cols).assign(run=k))
    frame = pd.concat(frames, ignore_index=True)
    q, tau = frame[[f"q_{j}" for j in model.joint_names]].to_numpy(), frame[[f"tau_{i}" for i in range(6)]].to_numpy()
    ref = identify(model, q, None, None, tau, t=frame["t"].to_numpy(), runs=frame["run"].to_numpy())
    with dask.config.set(scheduler="threads"):
        for pattern in ("run*.parquet", "run*.csv"):
            logs = read_logs(str(tmp_path / pattern), model, chunk=700)
            assert logs["q"].shape == q.shape and logs["run"].numblocks[0] >= 3
            est = identify(model, logs["q"], None, None, logs["tau"], t=logs["t"], runs=logs["run"])
            assert_same_estimate(est, ref)
        assert_same_estimate(identify(model, frame), ref)
        import dask.dataframe as dd
        assert_same_estimate(identify(model, dd.from_pandas(frame, npartitions=4)), ref)
    out = tmp_path / "est.json"
    assert ident_cli([str(tmp_path / "*.parquet"), "--model", "ur5", "--scheduler", "threads", "--chunk", "700",
                      "--json", str(out)]) == 0
    saved = json.loads(out.read_text())
    np.testing.assert_array_less(np.abs(np.array(saved["beta"]) - ref.beta), 1e-9 * np.maximum(np.abs(ref.beta), ref.std))


def test_errors_of_chunked_data(data):
    d = data
    model, base, n = d["model"], d["base"], d["model"].n
    t = np.arange(len(d["t"])) * DT
    short = d["run"].copy()
    short[1500:1510] = 7                                      # a run of 10 samples, shorter than the window
    with dask.config.set(scheduler="sync"):
        with pytest.raises(InputError, match=r"window \(21 samples\) is longer than run 7 \(10\)"):
            identify(model, lazy(d["q"]), None, None, lazy(d["tau"]), t=lazy(t), runs=lazy(short), base=base)
        with pytest.raises(InputError, match="uniformly sampled"):
            identify(model, lazy(d["q"]), None, None, lazy(d["tau"]), t=lazy(t**1.01), base=base)
        tau = d["tau"].copy()
        tau[2000, 2] = np.nan
        with pytest.raises(InputError, match="tau contains NaN"):
            identify(model, lazy(d["q"]), lazy(d["qd"]), lazy(d["qdd"]), lazy(tau), base=base)
        q = d["q"].copy()
        q[2345, 1] = np.inf
        with pytest.raises(InputError, match=r"q contains NaN or inf \(batch index \(2345,\)\)"):
            identify(model, lazy(q), lazy(d["qd"]), lazy(d["qdd"]), lazy(d["tau"]), base=base)
        with pytest.raises(InputError, match=rf"tau must have shape \({len(t)}, {n}\)"):
            identify(model, lazy(d["q"]), lazy(d["qd"]), lazy(d["qdd"]), lazy(d["tau"][:-1]), base=base)
        with pytest.raises(InputError, match="too few"):
            identify(model, lazy(d["q"][:3]), lazy(d["qd"][:3]), lazy(d["qdd"][:3]), lazy(d["tau"][:3]), base=base)
