"""Solo12 dropped from 0.3 m onto the ground lands and stands under PD at its home pose.

1. the bundled Solo12 (its feet balls of 1.6 cm; its other collision meshes, as convex hulls, where
   example-robot-data and trimesh are installed) starts 0.3 m above its standing
   height, at rest, its joints at the home pose;
2. a PD on the twelve joints holds the home pose, ``tau = Kp (q_home - q) - Kd qd`` (6 N m/rad,
   0.2 N m s/rad; the base has no actuator), evaluated once a step (a controller at 1 kHz);
3. ``screwdyn.simulate`` with ``environment=Ground()``: rigid contacts with Coulomb friction, the
   joint limits, the motors' friction. It falls, lands on its four feet, sags, and comes to rest:
   the printout checks that its base has stopped and that its feet carry its weight.

Run::

    python examples/solo_drop.py --plot solo_drop.png --animate solo_drop.gif
"""
from __future__ import annotations

import argparse

import numpy as np

import screwdyn

HOME = np.array([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6])
KP, KD = 6.0, 0.2


def pd(t, q, qd):
    """The joints' PD to the home pose; the free-flyer's six rows unactuated."""
    tau = np.zeros(np.shape(qd))
    tau[..., 6:] = KP * (HOME - q[..., 7:]) - KD * qd[..., 6:]
    return tau


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="solo_drop.png", help="PNG of the base height, contact forces and joints")
    p.add_argument("--animate", default="solo_drop.gif", help="GIF of the drop (none: '')")
    p.add_argument("--duration", type=float, default=2.0)
    args = p.parse_args(argv)

    solo = screwdyn.models.load("solo12")
    ground = screwdyn.Environment(screwdyn.Ground(friction=1.0))
    q0 = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, HOME]
    feet = min(screwdyn.frame_pose(solo, q0, f"{leg}_FOOT")[2, 3] for leg in ("FL", "FR", "HL", "HR"))
    q0[2] = 0.016 - feet + 0.3                       # (the feet are balls of 1.6 cm) 0.3 m up
    traj = screwdyn.simulate(solo, q0, None, args.duration, 1e-3, tau=pd, hold=True, environment=ground)

    weight = solo.mass.sum() * 9.81
    F = traj.contacts.total_force()
    landed = int(np.argmax(traj.contacts.count > 0))
    print(f"Solo12 dropped from {q0[2]:.3f} m: lands at t = {traj.t[landed]:.3f} s; at t = {traj.t[-1]:g} s its "
          f"base is at {traj.q[-1, 2]:.4f} m, moving at {np.abs(traj.qd[-1, :6]).max():.1e} (m/s, rad/s)")
    print(f"  {int(traj.contacts.count[-1])} contacts carry {F[-1, 2]:.4f} N of its {weight:.4f} N weight; "
          f"joints {np.abs(traj.q[-1, 7:] - HOME).max():.3f} rad from home at most; deepest penetration "
          f"{max(0.0, float(traj.contacts.penetration[traj.contacts.active].max())) * 1e3:.2f} mm; the solver took "
          f"{traj.solver['iterations'].mean():.2f} iterations a step on average (largest residual "
          f"{traj.solver['residual'].max():.1e} m/s)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
        ax[0].plot(traj.t, traj.q[:, 2], label="base height")
        ax[0].set_ylabel("z [m]")
        ax[1].plot(traj.t, F[:, 2], label="total normal force")
        ax[1].axhline(weight, color="k", ls="--", lw=0.8, label="weight")
        ax[1].set_ylabel("force [N]")
        ax[1].set_ylim(0, 4 * weight)
        for i, name in enumerate(solo.joint_names[1:]):
            ax[2].plot(traj.t, traj.q[:, 7 + i], label=name, color=plt.cm.tab20(i))
        ax[2].set_ylabel("joint angle [rad]")
        ax[2].set_xlabel("t [s]")
        for a in ax:
            a.legend(fontsize=7, ncol=4 if a is ax[2] else 1, loc="upper right")
            a.grid(alpha=0.3)
        fig.suptitle("Solo12 dropped from 0.3 m, standing under PD")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.animate:
        screwdyn.viz.animate(solo, traj, args.animate, fps=25, environment=ground)
        print(f"wrote {args.animate}")
    return traj


if __name__ == "__main__":
    main()
