"""The derivatives of the dynamics against Pinocchio in CPU time, on one thread: for a shared machine.

    python bench/derivatives_cpu.py --robots ur5 panda talos_full_v2 --batch 1000 --rounds 15

``screwdyn bench`` times the wall clock, which on a machine other sessions keep busy measures the
waits for a core as much as the work (a batch on two threads waits for both). This script times
the CPU time of the process (``time.process_time``) on one thread (``numba.set_num_threads(1)``):
``inverse_dynamics_derivatives`` against ``computeRNEADerivatives`` and
``forward_dynamics_derivatives`` against ``computeABADerivatives``, one state from Python (both
write into outputs made once), and a batch of ``--batch`` states against a Python loop of
Pinocchio's calls. Rounds of each are interleaved; each figure is the median over ``--rounds``
rounds, in microseconds per state. Every answer is checked against Pinocchio's.
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import screwdyn
from screwdyn.bench import machine


def run(robots, batch, rounds, out=print):
    import numba
    import pinocchio as pin

    from screwdyn import models

    numba.set_num_threads(1)
    clock = time.process_time
    rng = np.random.default_rng(0)
    rows = []
    for name in robots:
        path = str(models.resolve(name, kinds=("example-robot-data", "urdf")).path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = screwdyn.load_urdf(path)
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        n = model.n
        perm = screwdyn.from_pinocchio(model, v=np.arange(n, dtype=float), pin_model=pm)[1].astype(int)

        def to_pin(x):
            return screwdyn.to_pinocchio(model, None, x, pin_model=pm)[1]

        Q, V, A = rng.uniform(-1, 1, (batch, n)), rng.normal(size=(batch, n)), rng.normal(size=(batch, n))
        QP, VP, AP = (np.ascontiguousarray(to_pin(X)) for X in (Q, V, A))
        one, many = np.empty((3, n, n)), np.empty((batch, 3, n, n))
        for sd_f, pin_f in ((screwdyn.inverse_dynamics_derivatives, pin.computeRNEADerivatives),
                            (screwdyn.forward_dynamics_derivatives, pin.computeABADerivatives)):
            ours = np.array(sd_f(model, Q[0], V[0], A[0]))
            theirs = np.array(pin_f(pm, pd, QP[0], VP[0], AP[0]))
            if pin_f is pin.computeRNEADerivatives:
                theirs[2] = np.triu(theirs[2]) + np.triu(theirs[2], 1).T
            err = float(np.abs(ours - theirs[:, perm][:, :, perm]).max() / np.abs(theirs).max())
            q, v, a, qp, vp, ap = Q[0], V[0], A[0], QP[0], VP[0], AP[0]
            number = max(200, 20000 // n)
            calls = {"one": (lambda: sd_f(model, q, v, a, out=one), number, 1),
                     "pin one": (lambda: pin_f(pm, pd, qp, vp, ap), number, 1),
                     "batch": (lambda: sd_f(model, Q, V, A, out=many), 1, batch),
                     "pin loop": (lambda: [pin_f(pm, pd, QP[k], VP[k], AP[k]) for k in range(batch)], 1, batch)}
            times = {key: [] for key in calls}
            for f, _, _ in calls.values():
                f()
            for _ in range(rounds):
                for key, (f, reps, per) in calls.items():
                    t0 = clock()
                    for _ in range(reps):
                        f()
                    times[key].append((clock() - t0) / (reps * per) * 1e6)
            m = {key: statistics.median(t) for key, t in times.items()}
            rows.append((name, sd_f.__name__, m["one"], m["pin one"], m["batch"], m["pin loop"], err))
            out(f"{name:14s} {sd_f.__name__:29s} one {m['one']:8.3f} us  pin {m['pin one']:8.3f} us  "
                f"ratio {m['pin one'] / m['one']:5.2f}x | batch {m['batch']:8.3f} us/state  "
                f"pin loop {m['pin loop']:8.3f}  ratio {m['pin loop'] / m['batch']:5.2f}x  maxrel {err:.1e}")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="+", default=["ur5", "panda", "talos_full_v2"])
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(machine(), f"load average {' '.join(load)}")
    run(args.robots, args.batch, args.rounds)


if __name__ == "__main__":
    main()
