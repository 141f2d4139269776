"""Solo12 trotting forward on the ground with a gait controller of a dozen lines.

The gait, in joint space (no model of the robot, no optimisation):

* a **trot**: the diagonal legs move together, front-left with hind-right, front-right with
  hind-left, half a period apart; each leg has a phase ``phi = 2 pi (t / T + offset)``;
* each hip's flexion (HFE) sweeps about the home pose, ``q_HFE = home + A_hip sin(phi)``: on all
  four legs a larger HFE swings the foot backward (the hips turn about the body's y axis);
* each knee (KFE) bends further while its hip swings the foot forward (``cos(phi) < 0``),
  ``q_KFE = home -+ A_knee max(0, -cos(phi))`` (front knees bend to negative angles, hind ones to
  positive): the foot lifts on the way forward and pushes on the ground on the way back, and the
  friction of the pushing feet drives the body forward;
* a PD on the twelve joints tracks these references (6 N m/rad, 0.2 N m s/rad), once a step.

With T = 0.3 s, A_hip = 0.2 rad and A_knee = 0.5 rad Solo12 trots at about 0.24 m/s; the
printout measures the speed after the first second.

Run::

    python examples/quadruped_trot.py --plot quadruped_trot.png --animate quadruped_trot.gif
"""
from __future__ import annotations

import argparse

import numpy as np

import screwdyn

HOME = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])   # FL, FR, HL, HR: HAA HFE KFE
OFFSET = np.array([0.0, 0.5, 0.5, 0.0])      # FL and HR together, FR and HL half a period later
KNEE = np.array([-1.0, -1.0, 1.0, 1.0])      # the sense in which each knee bends further
PERIOD, HIP, LIFT = 0.3, 0.2, 0.5
KP, KD = 6.0, 0.2


def references(t):
    """The joints' references at time ``t``: ``(12,)``, in the order of ``HOME``."""
    phi = 2 * np.pi * (t / PERIOD + OFFSET)
    ref = HOME.reshape(4, 3).copy()
    ref[:, 1] += HIP * np.sin(phi)
    ref[:, 2] += LIFT * KNEE * np.maximum(0.0, -np.cos(phi))
    return ref.reshape(-1)


def trot(t, q, qd):
    """The gait controller: a PD to the references; the free-flyer's rows unactuated."""
    tau = np.zeros(18)
    tau[6:] = KP * (references(t) - q[7:]) - KD * qd[6:]
    return tau


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="quadruped_trot.png", help="PNG of the base, the speed and the gait (none: '')")
    p.add_argument("--animate", default="quadruped_trot.gif", help="GIF of the trot (none: '')")
    p.add_argument("--duration", type=float, default=4.0)
    args = p.parse_args(argv)

    solo = screwdyn.models.load("solo12")
    ground = screwdyn.Environment(screwdyn.Ground(friction=1.0))
    q0 = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, HOME]
    feet = min(screwdyn.frame_pose(solo, q0, f"{leg}_FOOT")[2, 3] for leg in ("FL", "FR", "HL", "HR"))
    q0[2] = 0.0175 - feet + 0.002                  # standing, 2 mm up
    traj = screwdyn.simulate(solo, q0, None, args.duration, 1e-3, tau=trot, hold=True, environment=ground)

    after = traj.t >= 1.0
    t1, x = traj.t[after], traj.q[after, :2]
    v = (x[-1] - x[0]) / (t1[-1] - t1[0])
    print(f"Solo12 trotting (period {PERIOD} s): {v[0]:.3f} m/s forward, {v[1]:+.3f} m/s sideways from t = 1 s to "
          f"{traj.t[-1]:g} s; base height {traj.q[after, 2].min():.3f}..{traj.q[after, 2].max():.3f} m; "
          f"{traj.solver['iterations'].mean():.2f} solver iterations a step, {traj.info['wall_time']:.2f} s for "
          f"{len(traj.t) - 1} steps")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
        ax[0].plot(traj.t, traj.q[:, 0], label="x (forward)")
        ax[0].plot(traj.t, traj.q[:, 1], label="y")
        ax[0].plot(traj.t, traj.q[:, 2], label="z")
        ax[0].set_ylabel("base position [m]")
        w = int(round(PERIOD / 1e-3))
        speed = np.convolve(np.gradient(traj.q[:, 0], traj.t), np.ones(w) / w, mode="same")
        ax[1].plot(traj.t, speed, label="forward speed, averaged over a period")
        ax[1].axhline(0.2, color="k", ls="--", lw=0.8, label="0.2 m/s")
        ax[1].set_ylabel("[m/s]")
        F = traj.contacts
        for leg, name in enumerate(("FL", "FR", "HL", "HR")):
            body = solo.link_names.index(f"{name}_LOWER_LEG")
            touching = ((F.body == body) & F.active & (F.local_force[..., 0] > 1e-6)).any(axis=-1)
            ax[2].fill_between(traj.t, leg + 0.1, leg + 0.9, where=touching, step="mid", color=f"C{leg}", label=name)
        ax[2].set_yticks([0.5, 1.5, 2.5, 3.5], ["FL", "FR", "HL", "HR"])
        ax[2].set_ylabel("feet on the ground")
        ax[2].set_xlabel("t [s]")
        for a in ax[:2]:
            a.legend(fontsize=8, loc="upper left")
        for a in ax:
            a.grid(alpha=0.3)
        fig.suptitle("Solo12 trotting under a sinusoidal gait and joint PD")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.animate:
        screwdyn.viz.animate(solo, traj, args.animate, fps=25, environment=ground)
        print(f"wrote {args.animate}")
    return traj


if __name__ == "__main__":
    main()
