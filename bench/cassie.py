"""Cassie's closed loops: constrained forward dynamics against Pinocchio 4.1's ``constraintDynamics``
and ``lcaba`` (loop-constrained ABA), side by side.

    python bench/cassie.py [--batch 1000] [--rounds 15] [--threads 2]

example-robot-data's ``cassie_v2.sdf`` with a free-flyer (28 DoF) and its four ball loops (the
achilles and plantar rods: 12 rows, rank 10) from :func:`screwdyn.load_sdf`, and the same robot in
Pinocchio built by Pinocchio's SDF rules (``tests/test_sdf.py``: the pip build of Pinocchio has no
SDFormat reader), at assembled configurations with velocities along the loops. Both libraries damp
the redundant rows proximally: screwdyn with its defaults (``mu`` 1e-6 of the Delassus matrix's
largest diagonal entry, until the residual is below 1e-10), Pinocchio with ``ProximalSettings(1e-10,
1e-8, 20)``. One state from Python into outputs made once; a batch of ``--batch`` states on
``--threads`` of numba's threads against a Python loop of Pinocchio's calls. Minimum over
``--rounds`` interleaved rounds, microseconds per state; ``qdd`` checked against both.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

import screwdyn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def run(batch=1000, rounds=15, threads=2, out=print):
    import numba
    import pinocchio as pin
    from constrained import interleaved   # (bench/, the script's folder, is on sys.path)
    from test_sdf import CASSIE, assembled, layouts, load_quietly, pinocchio_from_sdf16, pinocchio_loops

    rng = np.random.default_rng(0)
    path = CASSIE / "cassie_v2.sdf"
    model = load_quietly(path, floating_base=True)
    pm = pinocchio_from_sdf16(path, "pelvis")
    iq, iv = layouts(model, pm)
    cms = pin.StdVec_RigidConstraintModel()
    for c in pinocchio_loops(path, pm, model):
        cms.append(c)
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pd, pl = pm.createData(), pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    cds_l = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pin.computeJointMinimalOrdering(pm, pl, cms)
    settings = pin.ProximalSettings(1e-10, 1e-8, 20)

    q0 = assembled(model, rng, spread=0.0)
    Q = np.tile(q0, (batch, 1))
    Q[:, :3] = rng.normal(size=(batch, 3))
    Q[:, 3:7] = rng.normal(size=(batch, 4))
    Q = screwdyn.normalize(model, Q)
    J = screwdyn.constraint_jacobian(model, q0)
    _, S, Vt = np.linalg.svd(J)
    rank = int(np.sum(S > 1e-6 * S[0]))
    V = rng.normal(size=(batch, model.nv - rank)) @ Vt[rank:]
    T = rng.normal(size=(batch, model.nv)) * 5
    QP, VP, TP = np.empty((batch, pm.nq)), np.empty((batch, pm.nv)), np.empty((batch, pm.nv))
    QP[:, iq], VP[:, iv], TP[:, iv] = Q, V, T

    qdd, _ = screwdyn.constrained_forward_dynamics(model, Q[0], V[0], T[0])
    a_cd = pin.constraintDynamics(pm, pd, QP[0], VP[0], TP[0], cms, cds, settings)
    a_lc = pin.lcaba(pm, pl, QP[0], VP[0], TP[0], cms, cds_l, settings)
    scale = np.abs(qdd).max()
    err_cd = np.abs(qdd - a_cd[iv]).max() / scale
    err_lc = np.abs(qdd - a_lc[iv]).max() / scale
    screwdyn.constrained_forward_dynamics(model, Q, V, T)   # compiled before the clock
    q, v, t, qp, vp, tp = Q[0], V[0], T[0], QP[0], VP[0], TP[0]

    def batch_on(nthreads):
        def f():
            numba.set_num_threads(nthreads)
            screwdyn.constrained_forward_dynamics(model, Q, V, T)
            numba.set_num_threads(threads)
        return f

    def pin_loop(f, data, datas):
        def g():
            for k in range(batch):
                f(pm, data, QP[k], VP[k], TP[k], cms, datas, settings)
        return g

    number = 2000
    calls = {
        "screwdyn one": (lambda: screwdyn.constrained_forward_dynamics(model, q, v, t), number, 1),
        "pin constraintDynamics one": (lambda: pin.constraintDynamics(pm, pd, qp, vp, tp, cms, cds, settings),
                                       number, 1),
        "pin lcaba one": (lambda: pin.lcaba(pm, pl, qp, vp, tp, cms, cds_l, settings), number, 1),
        f"screwdyn batch {threads} threads": (batch_on(threads), 1, batch),
        "screwdyn batch 1 thread": (batch_on(1), 1, batch),
        "pin constraintDynamics loop": (pin_loop(pin.constraintDynamics, pd, cds), 1, batch),
        "pin lcaba loop": (pin_loop(pin.lcaba, pl, cds_l), 1, batch),
    }
    best = interleaved(calls, rounds)[0]
    out(f"load average {os.getloadavg()[0]:.2f}; cassie_v2 ({model.nv} DoF, {len(model.constraints)} ball loops, "
        f"12 rows of rank {rank}); qdd max rel diff: constraintDynamics {err_cd:.1e}, lcaba {err_lc:.1e}")
    out("| call | us/state | lcaba / it | constraintDynamics / it |\n|---|---:|---:|---:|")
    for key in calls:
        one = "one" in key
        lc = best["pin lcaba one" if one else "pin lcaba loop"]
        cd = best["pin constraintDynamics one" if one else "pin constraintDynamics loop"]
        out(f"| {key} | {best[key]:.3f} | {lc / best[key]:.2f} | {cd / best[key]:.2f} |")
    return best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    run(args.batch, args.rounds, args.threads)


if __name__ == "__main__":
    main()
