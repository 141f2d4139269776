"""Contact simulation against MuJoCo, side by side (issue 40's speed targets).

    python bench/contacts.py [--steps 1000] [--batch 1000] [--batch-steps 300] [--threads 2] [--rounds 3]

* One step of gymnasium's humanoid on its floor: dropped standing from 1.4 m, each engine's steps
  over ``--steps`` steps from 0.5 s (landed; its contacts counted), screwdyn's compiled rollout
  against MuJoCo's ``mj_step`` on one thread: MuJoCo with the model's own settings at the same
  ``dt`` (1 ms) and with the settings screwdyn's tests match it with (elliptic cones, Euler,
  solref (2 dt, 1)).
* Solo12 standing (constant torques that hold its home pose) likewise; MuJoCo reads Solo12's URDF
  (meshes as convex hulls, as screwdyn's), given a free joint and a floor by ``mujoco.MjSpec``.
* ``--batch`` Solo12 dropped from 0.3 m (random yaw and joint offsets), ``--batch-steps`` steps:
  screwdyn's batch (no contact records) against MuJoCo's ``rollout`` (contacts on), both on
  ``--threads`` threads, per robot-step.

Each figure is the minimum over ``--rounds`` rounds, in microseconds, of the wall clock; the load
average is printed (on a shared machine the wall clock counts the waits for a core).
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

import screwdyn

HOME = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])


def best(f, rounds):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return min(out)


def erd_solo():
    """example-robot-data's Solo12 with its 17 collision meshes as hulls, the geometry MuJoCo reads
    (the bundled model's feet are balls)."""
    from screwdyn.io.urdf import example_robot_data_path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return screwdyn.load_urdf(example_robot_data_path("solo12"), floating_base=True)


def mujoco_solo(dt):
    """Solo12 in MuJoCo: its URDF (meshes by absolute path), a free joint, a floor; the robot's
    geoms touch the floor only (as screwdyn's, without self-collision)."""
    import mujoco

    from screwdyn.io.urdf import example_robot_data_path
    path = example_robot_data_path("solo12")
    text = open(path).read().replace("package://example-robot-data/robots/", str(path.parents[2]) + "/")
    spec = mujoco.MjSpec.from_string(text)
    spec.worldbody.first_body().add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1])
    spec.option.timestep = dt
    m = spec.compile()
    m.geom_conaffinity[1:] = 0
    m.geom_contype[0] = 0
    return m


def matched(m, dt):
    """MuJoCo with the settings screwdyn's tests compare it with: elliptic cones, Euler, the
    stiffest stable contacts and limits at ``dt``."""
    import mujoco
    m.opt.timestep, m.opt.cone, m.opt.integrator = dt, mujoco.mjtCone.mjCONE_ELLIPTIC, mujoco.mjtIntegrator.mjINT_EULER
    m.geom_solref[:] = m.jnt_solref[:] = [2 * dt, 1.0]
    m.geom_solimp[:] = m.jnt_solimp[:] = [0.99, 0.99, 0.001, 0.5, 2.0]
    return m


def mujoco_steps(m, qpos, qvel, ctrl, skip, steps, rounds):
    """Microseconds a ``mj_step`` over ``steps`` steps after ``skip`` untimed ones from ``(qpos,
    qvel)``, and the mean contact count of the timed ones."""
    import mujoco
    d = mujoco.MjData(m)
    counts = []

    def run():
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = qpos, qvel
        d.ctrl[:] = ctrl
        for _ in range(skip):
            mujoco.mj_step(m, d)
        counts.clear()
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(m, d)
            counts.append(d.ncon)
        return time.perf_counter() - t0
    return min(run() for _ in range(rounds)) / steps * 1e6, float(np.mean(counts))


def ours_steps(model, q, qd, tau, steps, rounds, env=None):
    """Microseconds a step of screwdyn's compiled rollout from ``(q, qd)`` over ``steps`` steps,
    the mean contact count and the mean solver iterations."""
    kw = {} if env is None else {"environment": env}
    traj = screwdyn.simulate(model, q, qd, steps * 1e-3, 1e-3, tau=tau, **kw)     # (compiled, warm)
    t = best(lambda: screwdyn.simulate(model, q, qd, steps * 1e-3, 1e-3, tau=tau, record_contacts=False, **kw),
             rounds)
    return t / steps * 1e6, float(traj.contacts.count.mean()), float(traj.solver["iterations"].mean())


def humanoid(args):
    """The humanoid dropped standing from 1.4 m: each engine times its own steps from 0.5 s (it has
    landed) over ``--steps`` steps, from the same start."""
    import mujoco
    xml = Path(__import__("gymnasium").__file__).parent / "envs/mujoco/assets/humanoid.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_mjcf(xml)
    m = mujoco.MjModel.from_xml_path(str(xml))
    qpos = m.qpos0.copy()
    qpos[2] = 1.4
    q0 = screwdyn.from_mujoco(model, qpos)[0]
    fall = screwdyn.simulate(model, q0, None, 0.5, 1e-3)
    ours = ours_steps(model, fall.q[-1], fall.qd[-1], None, args.steps, args.rounds)
    m.opt.timestep = 1e-3
    own = mujoco_steps(m, qpos, np.zeros(m.nv), np.zeros(m.nu), 500, args.steps, args.rounds)
    stiff = mujoco_steps(matched(m, 1e-3), qpos, np.zeros(m.nv), np.zeros(m.nu), 500, args.steps, args.rounds)
    return ours, own, stiff


def solo_standing(args):
    solo = erd_solo()
    env = screwdyn.Environment(screwdyn.Ground())

    def pd(t, q, qd):
        return np.r_[np.zeros(6), 5.0 * (HOME - q[7:]) - 0.2 * qd[6:]]
    settle = screwdyn.simulate(solo, np.r_[0, 0, 0.24, 0, 0, 0, 1, HOME], None, 2.0, 1e-3, environment=env, tau=pd,
                               hold=True)
    q, qd, tau = settle.q[-1], settle.qd[-1], settle.tau[-1]
    ours = ours_steps(solo, q, qd, tau, args.steps, args.rounds, env)
    m = mujoco_solo(1e-3)
    qpos, qvel, _ = screwdyn.to_mujoco(solo, q, qd)
    # MuJoCo's URDF import has no actuators: the standing torques as applied forces
    import mujoco
    d = mujoco.MjData(m)

    def run():
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = qpos, qvel
        d.qfrc_applied[6:] = tau[6:]
        for _ in range(args.steps):
            mujoco.mj_step(m, d)
    own = best(run, args.rounds) / args.steps * 1e6
    matched(m, 1e-3)
    stiff = best(run, args.rounds) / args.steps * 1e6
    return ours, own, stiff, d.qpos[2], q[2]


def solo_batch(args):
    import mujoco
    from mujoco import rollout

    import numba
    solo = erd_solo()
    env = screwdyn.Environment(screwdyn.Ground())
    rng = np.random.default_rng(0)
    B = args.batch
    Q0 = np.tile(np.r_[0, 0, 0.55, 0, 0, 0, 1, HOME], (B, 1))
    yaw = rng.uniform(-np.pi, np.pi, B)
    Q0[:, 5], Q0[:, 6] = np.sin(yaw / 2), np.cos(yaw / 2)
    Q0[:, 7:] += rng.uniform(-0.2, 0.2, (B, 12))
    numba.set_num_threads(args.threads)
    T = args.batch_steps * 1e-3
    screwdyn.simulate(solo, Q0[:2], None, 0.01, 1e-3, environment=env, record_contacts=False)
    ours = best(lambda: screwdyn.simulate(solo, Q0, None, T, 1e-3, environment=env, record_contacts=False),
                args.rounds) / (B * args.batch_steps) * 1e6
    m = mujoco_solo(1e-3)
    datas = [mujoco.MjData(m) for _ in range(args.threads)]
    qpos = np.array([screwdyn.to_mujoco(solo, q)[0] for q in Q0])
    nstate = mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    state0 = np.zeros((B, nstate))
    d = mujoco.MjData(m)
    for b in range(B):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = qpos[b]
        mujoco.mj_getState(m, d, state0[b], mujoco.mjtState.mjSTATE_FULLPHYSICS)
    control = np.zeros((B, args.batch_steps, m.nu))
    theirs = best(lambda: rollout.rollout(m, datas, state0, control, nstep=args.batch_steps), args.rounds) \
        / (B * args.batch_steps) * 1e6
    return ours, theirs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--batch-steps", type=int, default=300)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    import numba
    numba.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.2f}; dt = 1 ms; us per step (best of {args.rounds})")
    (ours, contacts, its), (own, mc), (stiff, sc) = humanoid(args)
    print(f"humanoid landing, {args.steps} steps: screwdyn {ours:.1f} us ({contacts:.1f} contacts, {its:.2f} "
          f"iterations a step); MuJoCo mj_step {own:.1f} us with its settings ({mc:.1f} contacts), {stiff:.1f} us "
          f"matched ({sc:.1f} contacts)")
    (ours, contacts, its), own, stiff, their_z, our_z = solo_standing(args)
    print(f"Solo12 standing, {args.steps} steps: screwdyn {ours:.1f} us ({contacts:.1f} contacts, {its:.2f} "
          f"iterations); MuJoCo mj_step {own:.1f} us with its settings, {stiff:.1f} us matched (base at "
          f"{their_z:.4f} m; screwdyn {our_z:.4f} m)")
    ours, theirs = solo_batch(args)
    print(f"{args.batch} Solo12 dropped, {args.batch_steps} steps, {args.threads} threads: screwdyn {ours:.2f} us a "
          f"robot-step, MuJoCo rollout {theirs:.2f} us ({theirs / ours:.1f}x)")


if __name__ == "__main__":
    main()
