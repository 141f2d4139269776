"""Constrained forward dynamics against Pinocchio 4.1's ``constraintDynamics``, side by side.

    python bench/constrained.py [--batch 1000] [--rounds 15] [--threads 2]

Talos (``talos_full_v2`` with a free-flyer) with both soles in 6D contact (LOCAL), and Solo12 with its
four feet in 3D point contact (LOCAL): one state from Python (both libraries write into outputs
made once; Pinocchio's data and constraint data made once, as a controller would), and a batch of
``--batch`` states: screwdyn's batch call on ``--threads`` of numba's threads and on one, against a
Python loop of ``constraintDynamics`` (Pinocchio has no parallel call for it). Pinocchio is called
with ``ProximalSettings(1e-12, 0, 1)`` (one exact solve, its default), screwdyn with ``mu = 0,
max_iter = 1`` (the same) and with its defaults (proximal damping, 3-6 iterations). Each figure is
the minimum over ``--rounds`` interleaved rounds, in microseconds per state, of the wall clock and
of the process's CPU time (``time.process_time``: on a shared machine the wall clock also counts
the waits for a core; with two threads it sums both); the load average is printed. Every answer is
checked against Pinocchio's.
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import screwdyn
from screwdyn import constrained as C

CASES = {"talos_full_v2": ("frame", ["left_sole_link", "right_sole_link"]),
         "solo12": ("point", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"])}


def _setup(name, kind, frames, batch, rng):
    import pinocchio as pin

    from screwdyn.io.urdf import example_robot_data_path

    path = str(example_robot_data_path(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_urdf(path, floating_base=True, mimic="independent")   # Pinocchio: no mimic
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    make = screwdyn.PointContact if kind == "point" else screwdyn.FrameContact
    ours = tuple(make(model, f) for f in frames)
    ctype = pin.ContactType.CONTACT_3D if kind == "point" else pin.ContactType.CONTACT_6D
    cms = pin.StdVec_RigidConstraintModel()
    for f in frames:
        fr = pm.frames[pm.getFrameId(f)]
        cms.append(pin.RigidConstraintModel(ctype, pm, fr.parentJoint, fr.placement, pin.LOCAL))
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    QP = np.array([pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) for _ in range(batch)])
    VP, TP = rng.normal(size=(batch, pm.nv)), rng.normal(size=(batch, pm.nv)) * 10
    Q, V = screwdyn.from_pinocchio(model, QP, VP, pin_model=pm)
    T = screwdyn.from_pinocchio(model, None, TP, pin_model=pm)[1]
    return model, pm, pd, cms, cds, ours, (Q, V, T), (QP, VP, TP)


def interleaved(calls, rounds):
    """``calls`` ``{name: (f, reps, states)}`` timed in ``rounds`` interleaved rounds, so that a
    loaded machine slows them alike: ``(wall, cpu)``, each ``{name: the minimum over the rounds of
    microseconds per state}`` (``reps`` calls of ``f``, each of ``states`` states)."""
    best = {key: np.inf for key in calls}
    cpu = {key: np.inf for key in calls}
    for _ in range(rounds):
        for key, (f, reps, per) in calls.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(reps):
                f()
            best[key] = min(best[key], (time.perf_counter() - t0) / (reps * per) * 1e6)
            cpu[key] = min(cpu[key], (time.process_time() - c0) / (reps * per) * 1e6)
    return best, cpu


def run(batch=1000, rounds=15, threads=2, out=print):
    import numba
    import pinocchio as pin

    rng = np.random.default_rng(0)
    settings = pin.ProximalSettings(1e-12, 0.0, 1)
    rows = []
    out(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; screwdyn batch on {threads} threads")
    for name, (kind, frames) in CASES.items():
        model, pm, pd, cms, cds, ours, (Q, V, T), (QP, VP, TP) = _setup(name, kind, frames, batch, rng)
        m = sum(c.size for c in ours)
        a = pin.constraintDynamics(pm, pd, QP[0], VP[0], TP[0], cms, cds, settings)
        qdd, lam = C.constrained_forward_dynamics(model, Q[0], V[0], T[0], ours, mu=0.0, max_iter=1)
        lam_p = pd.lambda_c.copy()
        if kind == "frame":    # Pinocchio's 6D forces are (linear, angular)
            lam_p = lam_p.reshape(-1, 2, 3)[:, ::-1].reshape(-1)
        err = max(np.abs(qdd - screwdyn.from_pinocchio(model, None, a, pin_model=pm)[1]).max() / np.abs(a).max(),
                  np.abs(lam - lam_p).max() / np.abs(lam_p).max())
        q, v, t, qp, vp, tp = Q[0], V[0], T[0], QP[0], VP[0], TP[0]
        C.constrained_forward_dynamics(model, Q, V, T, ours)       # (compiled before the clock)

        def pin_loop():
            for k in range(batch):
                pin.constraintDynamics(pm, pd, QP[k], VP[k], TP[k], cms, cds, settings)

        def batch_on(nthreads, **kw):
            def f():
                numba.set_num_threads(nthreads)
                C.constrained_forward_dynamics(model, Q, V, T, ours, **kw)
                numba.set_num_threads(threads)
            return f

        number = 2000
        calls = {
            "one (mu = 0)": (lambda: C.constrained_forward_dynamics(model, q, v, t, ours, mu=0.0, max_iter=1), number, 1),
            "one (defaults)": (lambda: C.constrained_forward_dynamics(model, q, v, t, ours), number, 1),
            "pin one": (lambda: pin.constraintDynamics(pm, pd, qp, vp, tp, cms, cds, settings), number, 1),
            f"batch {threads} threads (mu = 0)": (batch_on(threads, mu=0.0, max_iter=1), 1, batch),
            "batch 1 thread (mu = 0)": (batch_on(1, mu=0.0, max_iter=1), 1, batch),
            "pin loop": (pin_loop, 1, batch),
        }
        best, cpu = interleaved(calls, rounds)
        out(f"{name} ({model.nv} DoF, {len(ours)} {kind} contacts, m = {m}), max rel diff against Pinocchio {err:.1e}")
        out(f"    {'':28s} {'wall':>8s}            ratio {'CPU':>8s}            ratio")
        for key in calls:
            ref = "pin one" if "one" in key else "pin loop"
            out(f"    {key:28s} {best[key]:8.3f} us/state {best[ref] / best[key]:5.2f}x {cpu[key]:8.3f} us/state "
                f"{cpu[ref] / cpu[key]:5.2f}x")
        rows.append((name, best, cpu, err))
    out(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    run(args.batch, args.rounds, args.threads)


if __name__ == "__main__":
    main()
