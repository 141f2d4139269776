"""Dask on a local cluster of worker processes: inverse dynamics over 10^8 UR5 states, and an
identification from 10^8 samples, against the in-process batch call.

    python bench/dask_cluster.py                                 # 10^8 states, 10^8 samples, 2 workers
    python bench/dask_cluster.py --states 1e7 --samples 1e7      # quicker

**Inverse dynamics.** The states are drawn in the workers (``dask.array.random``, chunks of
``--chunk`` states) and the torques summed per chunk, so that nothing of size 10^8 is ever held;
the same graph without inverse dynamics (drawing and summing the states only) is timed too, and
inverse dynamics' own time is the difference. Throughput per worker = states / time / workers,
against the in-process batch call ``inverse_dynamics(model, Q, QD, QDD)`` on states in memory
(``--chunk`` of them) with numba on one thread, i.e. per core: each worker has one thread, and a
chunk that a worker's thread runs uses one core (screwdyn._dask.chunk_threads). Both in wall time
and in CPU time (the workers' processes, all their threads: Dask's own work included): on a
machine whose cores other processes share, wall times measured minutes apart are not comparable,
states per CPU second are. Medians of ``--repeats``. Peak memory per worker: the worker process's peak resident set (``ru_maxrss``), for
two chunk sizes, each on a fresh cluster.

**Identification.** ``--samples`` samples of a UR5 with friction at 1 kHz, in runs of
``--run-seconds``, generated in the workers chunk by chunk (a smooth motion, inverse dynamics,
torque and encoder noise): positions and torques only, so velocities and accelerations are
filtered across the chunks (``map_overlap``) within each run. Reported: time, samples per second
per worker, peak memory per worker, and the estimate's error against the true base parameters in
units of its standard deviations.

The machine is shared: take the medians as indications, and rerun on a quiet machine.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import screwdyn

N_JOINTS = 6
W = np.array([0.31, 0.47, 0.53, 0.71, 0.83, 0.97]) * 2 * np.pi / 8   # rad/s: a slow excitation
HARMONICS = ((1, 0.9), (2, 0.4), (3, 0.2))


def peak_rss_mb(reset=False):
    """This process's peak resident set since it started, or since the last reset [MB] (Linux:
    ``VmHWM``; ``ru_maxrss`` would carry a spawned worker's parent's peak over ``execve``)."""
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024.0
    if reset:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    return peak


def model_with_friction():
    model = screwdyn.models.load("ur5")
    return model.replace(damping=np.linspace(0.8, 0.1, N_JOINTS), friction=np.linspace(2.0, 0.3, N_JOINTS))


def in_process(model, chunk, repeats):
    """States per second of the in-process batch call on one core (numba on one thread), on ``chunk``
    states in memory: of wall time and of this process's CPU time (medians)."""
    import numba
    rng = np.random.default_rng(0)
    Q, QD, QDD = (rng.uniform(-1, 1, (chunk, N_JOINTS)) for _ in range(3))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        screwdyn.inverse_dynamics(model, Q[:100], QD[:100], QDD[:100])
        wall, cpu = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            screwdyn.inverse_dynamics(model, Q, QD, QDD)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    finally:
        numba.set_num_threads(threads)
    return chunk / statistics.median(wall), chunk / statistics.median(cpu)


def cluster(workers):
    from distributed import Client, LocalCluster
    c = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    return c, Client(c)


def worker_peaks(client, reset=False):
    """Each worker's peak resident set [MB] (then reset, if asked)."""
    return sorted(client.run(peak_rss_mb, reset).values())


def worker_cpu(client):
    """The CPU time of all the worker processes together [s] (each process's threads included)."""
    return sum(client.run(time.process_time).values())


def bench_inverse_dynamics(model, states, chunk, workers, repeats):
    """Wall and worker CPU time of drawing ``states`` states and summing them, and of drawing them
    and summing their inverse dynamics (medians of ``repeats``); peak memory per worker."""
    import dask.array as da

    c, client = cluster(workers)
    try:
        client.run(lambda: screwdyn.inverse_dynamics(model, np.zeros((10, 6)), np.zeros(6), np.zeros(6)))  # load kernels
        base = worker_peaks(client, reset=True)

        def draws():
            rng = da.random.default_rng(0)
            return [rng.uniform(-1, 1, (states, N_JOINTS), chunks=(chunk, N_JOINTS)) for _ in range(3)]

        def timed(graph):
            t0, c0 = time.perf_counter(), worker_cpu(client)
            graph.compute()
            return time.perf_counter() - t0, worker_cpu(client) - c0

        q, qd, qdd = draws()
        timed(screwdyn.inverse_dynamics(model, q[:2 * chunk], qd[:2 * chunk], qdd[:2 * chunk]).sum(axis=0))  # warm up
        gen = [timed((q + qd + qdd).sum(axis=0)) for _ in range(repeats)]
        full = [timed(screwdyn.inverse_dynamics(model, q, qd, qdd).sum(axis=0)) for _ in range(repeats)]
        med = lambda runs, k: statistics.median(r[k] for r in runs)
        return dict(gen=med(gen, 0), full=med(full, 0), gen_cpu=med(gen, 1), full_cpu=med(full, 1), base=base,
                    peak=worker_peaks(client))
    finally:
        client.close()
        c.close()


def measure_chunk(t, model, noise, block_info=None):
    """One chunk of measurements at the times ``t``: ``[q_measured | tau_measured]``."""
    w = W[None, :]
    tt = t[:, None]
    q = sum(a * np.sin(k * w * tt + k) for k, a in HARMONICS)
    qd = sum(a * k * w * np.cos(k * w * tt + k) for k, a in HARMONICS)
    qdd = sum(-a * (k * w) ** 2 * np.sin(k * w * tt + k) for k, a in HARMONICS)
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True)
    rng = np.random.default_rng(block_info[0]["chunk-location"][0] if block_info else 0)
    return np.concatenate([q + 1e-5 * rng.normal(size=q.shape), tau + noise * rng.normal(size=q.shape)], axis=1)


def bench_identify(model, samples, chunk, workers, run_seconds, dt=1e-3):
    from functools import partial

    import dask.array as da

    from screwdyn.ident import base_parameters, identify

    base = base_parameters(model, viscous=True, coulomb=True)
    noise = 0.2
    run_samples = int(round(run_seconds / dt))
    c, client = cluster(workers)
    try:
        client.run(lambda: screwdyn.inverse_dynamics(model, np.zeros((10, 6)), np.zeros(6), np.zeros(6)))
        before = worker_peaks(client, reset=True)
        c0 = worker_cpu(client)
        k = da.arange(samples, chunks=chunk)
        t = (k % run_samples) * dt    # each run's clock starts at 0
        data = t.map_blocks(partial(measure_chunk, model=model, noise=noise), new_axis=1,
                            chunks=(t.chunks[0], (2 * N_JOINTS,)), dtype=float, meta=np.empty((0, 0)))
        t0 = time.perf_counter()
        est = identify(model, data[:, :N_JOINTS], None, None, data[:, N_JOINTS:2 * N_JOINTS], t=t,
                       runs=k // run_samples, base=base)
        elapsed = time.perf_counter() - t0
        err = np.abs(est.beta - base.of_model(model)) / est.std
        return dict(time=elapsed, cpu=worker_cpu(client) - c0, base=before, peak=worker_peaks(client), err=err,
                    sigma=est.sigma, rank=base.rank, used=int(est._Nj.max()))
    finally:
        client.close()
        c.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--states", type=float, default=1e8, help="states of the inverse dynamics run")
    p.add_argument("--chunk", type=int, default=1 << 20, help="states per chunk")
    p.add_argument("--small-chunk", type=int, default=1 << 17, help="a second chunk size, for the peak memory")
    p.add_argument("--samples", type=float, default=1e8, help="samples of the identification (0: skip it)")
    p.add_argument("--id-chunk", type=int, default=1 << 18, help="samples per chunk of the identification")
    p.add_argument("--run-seconds", type=float, default=3600.0, help="length of each run of the identification data")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    model = model_with_friction()
    states, samples = int(args.states), int(args.samples)
    print(f"{model!r}; {args.workers} worker processes, 1 thread each")

    per_core, per_cpu = in_process(model, args.chunk, 2 * args.repeats + 1)
    print(f"in-process batch call, one thread, {args.chunk} states in memory: {per_core / 1e6:.3f} M states/s of wall "
          f"time, {per_cpu / 1e6:.3f} M states per CPU second")
    if states:
        for chunk in (args.chunk, args.small_chunk):
            r = bench_inverse_dynamics(model, states, chunk, args.workers, args.repeats)
            wall = states / (r["full"] - r["gen"]) / args.workers
            cpu = states / (r["full_cpu"] - r["gen_cpu"])
            print(f"inverse_dynamics on the cluster, {states:.0e} states in chunks of {chunk}: {r['full']:.1f} s wall, "
                  f"{r['full_cpu']:.1f} s of worker CPU (drawing the states alone: {r['gen']:.1f} s, "
                  f"{r['gen_cpu']:.1f} s CPU; the workers had {r['full_cpu'] / r['full'] / args.workers:.0%} of a core "
                  f"each). Inverse dynamics alone, per worker: {wall / 1e6:.3f} M states/s of wall time "
                  f"= {wall / per_core:.0%} of the in-process call, {cpu / 1e6:.3f} M states per CPU second "
                  f"= {cpu / per_cpu:.0%}; with the drawing {states / r['full_cpu'] / 1e6:.3f} M per CPU second. "
                  f"Peak memory per worker {max(r['peak']):.0f} MB (after loading the kernels {max(r['base']):.0f} MB)")
    if samples:
        r = bench_identify(model, samples, args.id_chunk, args.workers, args.run_seconds)
        print(f"identify on the cluster, {samples:.0e} samples ({r['used']} equations per joint used, {r['rank']} base "
              f"parameters) in chunks of {args.id_chunk}: {r['time']:.0f} s, {samples / r['time'] / args.workers / 1e3:.1f}"
              f" k samples/s per worker ({samples / r['cpu'] / 1e3:.1f} k per worker CPU second); peak memory per worker {max(r['peak']):.0f} MB (after loading the kernels "
              f"{max(r['base']):.0f} MB); |beta - true| / std: median {np.median(r['err']):.2f}, max "
              f"{r['err'].max():.2f}; sigma {np.round(r['sigma'], 3).tolist()} (noise 0.2)")
    print(f"client peak memory {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
