"""The derivatives of constrained forward dynamics against Pinocchio 4.1's
``computeConstraintDynamicsDerivatives``, side by side.

    python bench/constrained_derivatives.py [--batch 1000] [--rounds 9] [--threads 2]

Talos (``talos_full_v2`` with a free-flyer) with both soles in 6D contact (LOCAL), and Solo12 with its
four feet in 3D point contact (LOCAL), as ``bench/constrained.py``. One state from Python:
screwdyn's ``constrained_forward_dynamics_derivatives`` (the forward solve included, ``mu = 0``: one
exact solve, as Pinocchio's ``ProximalSettings(1e-12, 0, 1)``) against Pinocchio's
``constraintDynamics`` followed by ``computeConstraintDynamicsDerivatives`` (which needs it), and the
latter alone; a batch of ``--batch`` states on ``--threads`` of numba's threads and on one, against a
Python loop of Pinocchio's two calls (it has no parallel call for them). Each figure is the minimum over
``--rounds`` interleaved rounds, in microseconds per state, of the wall clock and of the process's CPU
time (``time.process_time``: on a shared machine the wall clock also counts the waits for a core; with
two threads it sums both); the load average is printed. Every answer is checked against Pinocchio's.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from screwdyn.constrained_derivatives import constrained_forward_dynamics_derivatives as derivatives

try:
    from constrained import CASES, _setup, interleaved
except ImportError:                       # (run from the repository root as bench/constrained_derivatives.py)
    from bench.constrained import CASES, _setup, interleaved


def _agreement(model, pm, pd, cms, cds, ours, state, pstate, settings):
    """The largest difference from Pinocchio's six matrices, relative to each one's largest entry."""
    import pinocchio as pin

    import screwdyn

    sizes = [c.size for c in ours]
    pin.constraintDynamics(pm, pd, *pstate, cms, cds, settings)
    ref = pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings)
    P = np.array([screwdyn.from_pinocchio(model, None, e, pin_model=pm)[1] for e in np.eye(model.n)]).T
    perm = np.concatenate([np.r_[r + 3:r + 6, r:r + 3] if s == 6 else np.arange(r, r + s)
                           for r, s in zip(np.cumsum([0] + sizes[:-1]), sizes)])
    got = derivatives(model, *state, ours, mu=0.0, max_iter=1)
    theirs = [P @ ref[k] @ P.T for k in range(3)] + [ref[k][perm] @ P.T for k in range(3, 6)]
    return max(np.abs(a - b).max() / np.abs(b).max() for a, b in zip(got, theirs))


def run(batch=1000, rounds=9, threads=2, out=print):
    import numba
    import pinocchio as pin

    rng = np.random.default_rng(0)
    settings = pin.ProximalSettings(1e-12, 0.0, 1)
    rows = []
    out(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; screwdyn batch on {threads} threads")
    for name, (kind, frames) in CASES.items():
        model, pm, pd, cms, cds, ours, (Q, V, T), (QP, VP, TP) = _setup(name, kind, frames, batch, rng)
        m = sum(c.size for c in ours)
        err = _agreement(model, pm, pd, cms, cds, ours, (Q[0], V[0], T[0]), (QP[0], VP[0], TP[0]), settings)
        q, v, t, qp, vp, tp = Q[0], V[0], T[0], QP[0], VP[0], TP[0]
        derivatives(model, Q[:2], V[:2], T[:2], ours, mu=0.0, max_iter=1)     # (compiled before the clock)

        def pin_one():
            pin.constraintDynamics(pm, pd, qp, vp, tp, cms, cds, settings)
            pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings)

        def pin_loop():
            for k in range(batch):
                pin.constraintDynamics(pm, pd, QP[k], VP[k], TP[k], cms, cds, settings)
                pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings)

        def batch_on(nthreads):
            def f():
                numba.set_num_threads(nthreads)
                derivatives(model, Q, V, T, ours, mu=0.0, max_iter=1)
                numba.set_num_threads(threads)
            return f

        pin.constraintDynamics(pm, pd, qp, vp, tp, cms, cds, settings)
        number = 300
        calls = {
            "one": (lambda: derivatives(model, q, v, t, ours, mu=0.0, max_iter=1), number, 1),
            "pin one (both calls)": (pin_one, number, 1),
            "pin derivatives alone": (lambda: pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings),
                                      number, 1),
            f"batch {threads} threads": (batch_on(threads), 1, batch),
            "batch 1 thread": (batch_on(1), 1, batch),
            "pin loop": (pin_loop, 1, batch),
        }
        best, cpu = interleaved(calls, rounds)
        out(f"{name} ({model.nv} DoF, {len(ours)} {kind} contacts, m = {m}), max rel diff against Pinocchio {err:.1e}")
        out(f"    {'':28s} {'wall':>8s}            ratio {'CPU':>8s}            ratio")
        for key in calls:
            ref = "pin one (both calls)" if ("one" in key or "alone" in key) else "pin loop"
            out(f"    {key:28s} {best[key]:8.2f} us/state {best[ref] / best[key]:5.2f}x {cpu[key]:8.2f} us/state "
                f"{cpu[ref] / cpu[key]:5.2f}x")
        rows.append((name, best, cpu, err))
    out(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    run(args.batch, args.rounds, args.threads)


if __name__ == "__main__":
    main()
