"""Speed-up of a thread pool of one-state calls: ``inverse_dynamics`` on 2 Python threads against 1.

    python bench/threads.py --robots ur5 talos_full_v2 --threads 2 --runs 9
    python bench/threads.py --robots talos_full_v2 --function mass_matrix_inverse --calls 4000

A one-state call releases the GIL while its kernel runs when the kernel is long (about 4 us
or more: each algorithm's ``GIL_FROM``, ``screwdyn.algorithms.internals.release_gil``), so threads
overlap in the compiled code; a short one keeps it. The Python part of each call (the dispatch,
about 0.4 us) holds it, which bounds the speed-up. Each run makes ``--calls`` one-state calls on
distinct random states, split into one contiguous chunk per worker of a ``ThreadPoolExecutor``
(each worker loops over its chunk, so the pool's own overhead is one task per worker), and times
the wall clock from submit to the last result; the figure is the median over ``--runs`` runs of
each pool size, run alternately. Every answer is checked against the same call made serially.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import screwdyn


CALLS = {   # function -> how one state is passed
    "inverse_dynamics": lambda model, Q, QD, QDD, k: screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k]),
    "mass_matrix_inverse": lambda model, Q, QD, QDD, k: screwdyn.mass_matrix_inverse(model, Q[k]),
    "inverse_dynamics_derivatives":
        lambda model, Q, QD, QDD, k: np.stack(screwdyn.inverse_dynamics_derivatives(model, Q[k], QD[k], QDD[k])),
    "forward_dynamics_derivatives":
        lambda model, Q, QD, QDD, k: np.stack(screwdyn.forward_dynamics_derivatives(model, Q[k], QD[k], QDD[k])),
}


def _chunk(f, model, Q, QD, QDD, out, lo, hi):
    for k in range(lo, hi):
        out[k] = f(model, Q, QD, QDD, k)


def pool_seconds(f, model, states, out, workers):
    """Wall time of the calls on ``workers`` threads (a fresh pool, its threads started before timing)."""
    Q, QD, QDD = states
    B = Q.shape[0]
    bounds = np.linspace(0, B, workers + 1).astype(int)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda _: None, range(workers)))      # start the threads
        t0 = time.perf_counter()
        futures = [pool.submit(_chunk, f, model, Q, QD, QDD, out, bounds[w], bounds[w + 1]) for w in range(workers)]
        for f in futures:
            f.result()
        return time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["ur5", "talos_full_v2"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calls", type=int, default=40_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--function", choices=sorted(CALLS), default="inverse_dynamics")
    args = parser.parse_args(argv)
    f = CALLS[args.function]
    from screwdyn.io.urdf import example_robot_data_path
    print(f"{sys.version.split()[0]}, numpy {np.__version__}, {args.calls} one-state {args.function} calls per run, "
          f"median of {args.runs} runs")
    for name in args.robots:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = screwdyn.load_urdf(example_robot_data_path(name))
        rng = np.random.default_rng(0)
        states = tuple(rng.uniform(-3, 3, (args.calls, model.n)) for _ in range(3))
        serial = np.array([f(model, *states, k) for k in range(args.calls)])
        times = {1: [], args.threads: []}
        for _ in range(args.runs):
            for workers, runs in times.items():
                out = np.full_like(serial, np.nan)
                runs.append(pool_seconds(f, model, states, out, workers))
                assert np.array_equal(out, serial), "threaded answers differ from the serial ones"
        t1, tk = statistics.median(times[1]), statistics.median(times[args.threads])
        print(f"{name:14s} n={model.n:3d}  1 thread {t1 / args.calls * 1e6:6.3f} us/call   {args.threads} threads "
              f"{tk / args.calls * 1e6:6.3f} us/call   speed-up {t1 / tk:4.2f}x  "
              f"(runs: 1 thread {min(times[1]) * 1e3:.1f}-{max(times[1]) * 1e3:.1f} ms, "
              f"{args.threads} threads {min(times[args.threads]) * 1e3:.1f}-{max(times[args.threads]) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
