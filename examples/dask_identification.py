"""Identification from a data set larger than comfortable in memory, on a local Dask cluster.

1. a local cluster of worker processes (``dask.distributed.LocalCluster``);
2. a multi-gigabyte data set of one robot (the UR5 with friction): ``--runs`` log files of
   ``--minutes`` each at ``--rate`` Hz, one Parquet file per run (the default: 8 runs of 50 minutes
   at 1 kHz, 2.4e7 samples, 2.5 GB), written by the workers in parallel: each run an optimised
   excitation trajectory (another seed per run), torques by inverse dynamics with torque and
   encoder noise;
3. identification from positions and torques only, read lazily from the files
   (:func:`screwdyn.ident.read_logs`), velocities and accelerations filtered within each run and
   across chunk boundaries, the least squares reduced chunk by chunk on the workers (the
   regressor, 24 GB here, is never formed), with Dask's progress bar;
4. the estimate against the true base parameters, and the peak memory of each worker.

Run::

    python examples/dask_identification.py [--out ur5_logs] [--runs 8] [--minutes 50] [--workers 2]

``screwdyn identify 'ur5_logs/*.parquet' --model ur5 --friction --scheduler tcp://...`` does step 3
from a shell against a running cluster.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import screwdyn
from screwdyn.ident import base_parameters, excitation_trajectory, identify, read_logs

NOISE = 0.2        # torque noise [N m]
Q_NOISE = 2e-5     # encoder noise [rad]
BLOCK = 1 << 18    # samples generated and written at a time (a Parquet row group)


def robot():
    """The UR5 with friction (its URDF has none): the "real" robot of the experiment."""
    model = screwdyn.models.load("ur5")
    return model.replace(damping=np.linspace(0.8, 0.1, model.n), friction=np.linspace(2.0, 0.3, model.n))


def write_run(path, model, trajectory, samples, rate, seed):
    """One run: ``samples`` measurements at ``rate`` Hz along ``trajectory``, written block by block
    to a Parquet file with the columns of screwdyn.ident.CSV_FORMAT. Runs on a worker."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = ["t"] + [f"q_{j}" for j in model.joint_names] + [f"tau_{j}" for j in model.joint_names]
    with pq.ParquetWriter(path, pa.schema([(name, pa.float64()) for name in names])) as writer:
        for start in range(0, samples, BLOCK):
            t = np.arange(start, min(start + BLOCK, samples)) / rate
            q, qd, qdd = trajectory(t)
            tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True) + NOISE * rng.normal(size=q.shape)
            q = q + Q_NOISE * rng.normal(size=q.shape)
            columns = [t] + list(q.T) + list(tau.T)
            writer.write_table(pa.table(dict(zip(names, columns))))
    return os.path.getsize(path)


def peak_memory_mb():
    """This process's peak resident set [MB] (Linux)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024.0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="ur5_logs", help="folder of the log files (made; existing runs are rewritten)")
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--minutes", type=float, default=50.0, help="length of each run")
    p.add_argument("--rate", type=float, default=1000.0, help="sampling rate [Hz]")
    p.add_argument("--workers", type=int, default=2, help="worker processes (one thread each)")
    p.add_argument("--keep", action="store_true", help="keep the log files (default: deleted at the end)")
    args = p.parse_args(argv)
    import dask
    from distributed import Client, LocalCluster, progress

    model = robot()
    flags = {"viscous": True, "coulomb": True}
    base = base_parameters(model, **flags)
    samples = int(args.minutes * 60 * args.rate)
    os.makedirs(args.out, exist_ok=True)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True) as cluster, Client(cluster) as client:
        print(f"{model!r}, {base.rank} base parameters; cluster: {args.workers} worker processes "
              f"(dashboard {client.dashboard_link})")

        # 2. the data set, one file per run, written by the workers
        t0 = time.perf_counter()
        trajectories = [excitation_trajectory(model, base=base, harmonics=5, period=20.0, maxiter=10, seed=k)
                        for k in range(args.runs)]
        paths = [os.path.join(args.out, f"run{k:03d}.parquet") for k in range(args.runs)]
        futures = client.map(write_run, paths, [model] * args.runs, trajectories, [samples] * args.runs,
                             [args.rate] * args.runs, range(args.runs))
        print(f"writing {args.runs} runs of {samples} samples ({args.runs * samples:.3g} in all):")
        progress(futures)
        size = sum(client.gather(futures))
        print(f"\n{size / 1e9:.2f} GB of Parquet in {time.perf_counter() - t0:.0f} s")

        # 3. identification from the files: positions and torques only
        t0 = time.perf_counter()
        logs = read_logs(os.path.join(args.out, "run*.parquet"), model)
        print(f"identification from {logs['q'].shape[0]:.3g} samples in {logs['q'].numblocks[0]} chunks; the "
              f"regressor would be {logs['q'].shape[0] * model.n * len(base.parameter_names) * 8 / 1e9:.3g} GB:")
        with dask.config.set({"screwdyn.progress": True}):
            est = identify(model, logs["q"], None, None, logs["tau"], t=logs["t"], runs=logs["run"], base=base,
                           weights="joint", min_speed=0.02)
        elapsed = time.perf_counter() - t0
        peaks = client.run(peak_memory_mb)

    # 4. the estimate
    truth = base.of_model(model)
    z = (est.beta - truth) / est.std
    print(f"\n{est.method.upper()} in {elapsed:.0f} s ({logs['q'].shape[0] / elapsed / 1e3:.0f} k samples/s); "
          f"cond {est.cond:.1f}; residual sigma per joint [N m] " + ", ".join(f"{s:.4f}" for s in est.sigma)
          + f" (noise {NOISE})")
    print(est.table(reference=truth))
    print(f"|estimate - true| < 2 std for {np.mean(np.abs(z) < 2):.0%} of the base parameters, < 4 std for "
          f"{np.mean(np.abs(z) < 4):.0%} (relative error of beta {np.linalg.norm(est.beta - truth) / np.linalg.norm(truth):.1e})")
    print("peak memory per worker [MB]: " + ", ".join(f"{v:.0f}" for v in sorted(peaks.values())))
    if not args.keep:
        for path in paths:
            os.remove(path)
    return est, peaks


if __name__ == "__main__":
    main()
