"""Side-by-side benchmark of batched rollouts: :func:`screwdyn.simulate` on a batch of initial
states against MuJoCo's ``mujoco.rollout.rollout``, in one run, on the same machine.

    screwdyn bench rollouts [--robot panda] [--batch 100 1000 10000] [--steps 2000 2000 200]
                            [--threads 1 2] [--rounds 3] [--markdown]

Both simulate the same URDF (MuJoCo's compiler reads it, its meshes dropped) with the classical
RK4 integrator at ``dt = 1 ms``, no actuation, MuJoCo's contacts and constraints off (so no joint
limits and no Coulomb friction loss: screwdyn runs with ``friction=False, joint_limits=False``),
from the same random states (positions within the limits, velocities of 0.5 rad/s spread). Each
cell is the median over ``--rounds`` interleaved rounds (one run of each library per round: this
kind of machine is shared and drifts), in microseconds per robot-step (wall time / (B x steps)),
at the same thread count for both: numba's threads for screwdyn, one ``MjData`` per thread (its
thread pool) for MuJoCo; beside it the process's CPU time per robot-step (all its threads), which
other users of the machine disturb less. screwdyn's time is the whole ``simulate`` call, which
also records ``qdd`` and ``tau`` and the limits report. The two libraries' states after the first
step are compared (their largest difference in ``q`` and ``qd``): they integrate the same equations.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import warnings

import numpy as np

__all__ = ["main", "markdown", "mujoco_model", "run"]


def mujoco_model(path, dt=1e-3):
    """MuJoCo's model of the URDF file ``path`` for the benchmark: its visual and collision
    geometry dropped (MuJoCo's compiler would look for the meshes), fixed links merged into their
    parents (as screwdyn merges them), inertias as written; RK4 at ``dt``, contacts and
    constraints off."""
    import mujoco

    with open(path) as f:
        xml = f.read()
    xml = re.sub(r"<(visual|collision)\b.*?</\1>", "", xml, flags=re.DOTALL)
    xml = re.sub(r"(<robot\b[^>]*>)", r'\1<mujoco><compiler fusestatic="true" discardvisual="true" '
                                      r'balanceinertia="false"/></mujoco>', xml, count=1)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = dt
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    return m


def _columns(mj, names):
    """MuJoCo's ``qpos`` and ``qvel`` addresses of the joints ``names`` (screwdyn's order)."""
    import mujoco

    ids = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, name) for name in names]
    if min(ids) < 0:
        raise ValueError(f"MuJoCo's model lacks joints {[nm for nm, i in zip(names, ids) if i < 0]}")
    return np.array([mj.jnt_qposadr[i] for i in ids]), np.array([mj.jnt_dofadr[i] for i in ids])


def run(robot="panda", batches=(100, 1000, 10000), steps=(2000, 2000, 200), threads=(1, 2), rounds=3, dt=1e-3,
        out=print, seed=0):
    """Rows ``(B, steps, threads, screwdyn us, MuJoCo us, max |state diff| after one step, screwdyn CPU us,
    MuJoCo CPU us)``, times per robot-step."""
    import mujoco
    import numba
    from mujoco import rollout

    import screwdyn
    from screwdyn import models
    from screwdyn.sim import LimitWarning

    source = models.resolve(robot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = models.load(source)
    mj = mujoco_model(str(source.path), dt)
    iq, iv = _columns(mj, model.joint_names)
    nstate = mujoco.mj_stateSize(mj, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    rows = []
    for B, T in zip(batches, steps):
        Q0 = rng.uniform(lo, hi, (B, model.n))
        QD0 = rng.normal(scale=0.5, size=(B, model.n))
        state = np.zeros((B, nstate))
        state[:, 1 + iq] = Q0                      # FULLPHYSICS: time, qpos, qvel, ...
        state[:, 1 + mj.nq + iv] = QD0

        def ours(steps=T, Q0=Q0, QD0=QD0):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LimitWarning)   # velocity limits: not the point here
                return screwdyn.simulate(model, Q0, QD0, steps * dt, dt, friction=False, joint_limits=False)

        for k in threads:
            numba.set_num_threads(k)
            datas = [mujoco.MjData(mj) for _ in range(k)]

            def theirs(steps=T, datas=datas, state=state, pool=k > 1):
                return rollout.rollout(mj, datas, state, nstep=steps, persistent_pool=pool)

            ours(2), theirs(2)                                  # compiled, pools started
            a, b = ours(1), theirs(1)[0]
            diff = max(np.abs(a.q[:, 1] - b[:, 0, 1 + iq]).max(), np.abs(a.qd[:, 1] - b[:, 0, 1 + mj.nq + iv]).max())
            a = b = None
            t_ours, t_theirs, c_ours, c_theirs = [], [], [], []
            for _ in range(rounds):
                for f, times, cpu in ((ours, t_ours, c_ours), (theirs, t_theirs, c_theirs)):
                    c0, t0 = time.process_time(), time.perf_counter()
                    f()
                    times.append((time.perf_counter() - t0) / (B * T) * 1e6)
                    cpu.append((time.process_time() - c0) / (B * T) * 1e6)
            row = (B, T, k, statistics.median(t_ours), statistics.median(t_theirs), float(diff),
                   statistics.median(c_ours), statistics.median(c_theirs))
            rows.append(row)
            out(_format_row(row))
            if k > 1:
                rollout.shutdown_persistent_pool()
    return rows


def _format_row(row):
    B, T, k, ours, theirs, diff, c_ours, c_theirs = row
    return (f"B {B:>6d} x {T:>5d} steps, {k} thread{'s' if k > 1 else ' '}  screwdyn {ours:7.3f} us  "
            f"MuJoCo {theirs:7.3f} us per robot-step  ratio {theirs / ours:5.2f}x  (CPU {c_ours:.3f} / {c_theirs:.3f} us, "
            f"{c_theirs / c_ours:.2f}x)  max diff {diff:.1e}")


def markdown(rows):
    lines = [("| rollouts B | steps | threads | screwdyn us/robot-step | MuJoCo us/robot-step | ratio (MuJoCo/screwdyn) "
              "| CPU us/robot-step, screwdyn / MuJoCo | CPU ratio | max diff after a step |"),
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for B, T, k, ours, theirs, diff, c_ours, c_theirs in rows:
        lines.append(f"| {B:,} | {T:,} | {k} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.2f} | "
                     f"{c_ours:.3f} / {c_theirs:.3f} | {c_theirs / c_ours:.2f} | {diff:.1e} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="screwdyn bench rollouts", description=__doc__.split("\n\n")[0])
    p.add_argument("--robot", default="panda", help="a bundled robot, URDF file or example-robot-data name")
    p.add_argument("--batch", nargs="+", type=int, default=[100, 1000, 10000], help="rollouts per batch")
    p.add_argument("--steps", nargs="+", type=int, default=[2000, 2000, 200],
                   help="steps of each batch (one number: all)")
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2], help="thread counts, both libraries")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median is shown")
    p.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    args = p.parse_args(argv)
    try:
        import mujoco
    except ImportError:
        print("screwdyn bench rollouts needs MuJoCo: pip install mujoco", file=sys.stderr)
        return 2
    steps = args.steps * len(args.batch) if len(args.steps) == 1 else args.steps
    if len(steps) != len(args.batch):
        p.error("give one --steps for all batches or one per batch")
    import os

    from .bench import machine
    print(machine() + f", MuJoCo {mujoco.__version__}")
    print(time.strftime("%Y-%m-%d %H:%M %Z") + f", load average {os.getloadavg()[0]:.2f}")
    rows = run(args.robot, args.batch, steps, args.threads, args.rounds)
    print(time.strftime("%Y-%m-%d %H:%M %Z") + f", load average {os.getloadavg()[0]:.2f}")
    if args.markdown:
        print()
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
