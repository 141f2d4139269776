"""Gymnasium's MuJoCo humanoid falling limp onto its own floor.

1. ``screwdyn.load_mjcf`` reads gymnasium's ``humanoid.xml``: the robot (23 degrees of freedom),
   its capsules and spheres as collision geometry, and the world's floor plane as
   ``model.environment``, which ``screwdyn.simulate`` then uses by default;
2. it starts standing in MuJoCo's reference pose, 1.4 m up, at rest, with no torque: its joints
   have their MJCF damping and limits, its geoms their MJCF friction and margins (1 mm each: it
   comes to rest 2 mm above the floor, as in MuJoCo);
3. it falls, hits the floor, bounces a little and comes to rest; the printout checks that its
   contacts then carry its weight.

Run::

    python examples/humanoid_fall.py --plot humanoid_fall.png --animate humanoid_fall.gif
"""
from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

import screwdyn
from screwdyn.sim import LimitWarning


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="humanoid_fall.png", help="PNG of the fall (none: '')")
    p.add_argument("--animate", default="humanoid_fall.gif", help="GIF of the fall (none: '')")
    p.add_argument("--duration", type=float, default=4.0)
    args = p.parse_args(argv)

    import gymnasium
    xml = Path(gymnasium.__file__).parent / "envs/mujoco/assets/humanoid.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # (its tendons and joint springs are not modelled: said once)
        model = screwdyn.load_mjcf(xml)
        import mujoco
        qpos = mujoco.MjModel.from_xml_path(str(xml)).qpos0.copy()
    qpos[2] = 1.4
    q0 = screwdyn.from_mujoco(model, qpos)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LimitWarning)   # (the knees start at their limit)
        traj = screwdyn.simulate(model, q0, None, args.duration, 1e-3)
    weight = model.mass.sum() * 9.81
    F = traj.contacts.total_force()
    print(f"{model.name}: {model.nv} degrees of freedom, its floor {model.environment}; {traj.t[-1]:g} s in "
          f"{traj.info['wall_time']:.2f} s ({traj.info['wall_time'] / (len(traj.t) - 1) * 1e6:.0f} us a step)")
    print(f"  at rest: base at {traj.q[-1, 2]:.4f} m, moving at {np.abs(traj.qd[-1]).max():.1e}; "
          f"{int(traj.contacts.count[-1])} contacts carry {F[-1, 2]:.3f} N of its {weight:.3f} N weight; the solver "
          f"took {traj.solver['iterations'].mean():.2f} iterations a step on average")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
        ax[0].plot(traj.t, traj.q[:, 2], label="base (torso) height")
        ax[0].set_ylabel("z [m]")
        ax[1].plot(traj.t, F[:, 2], label="total normal force")
        ax[1].axhline(weight, color="k", ls="--", lw=0.8, label="weight")
        ax[1].set_ylim(0, 3 * weight)
        ax[1].set_ylabel("force [N]")
        ax[2].plot(traj.t, traj.contacts.count, label="contacts", color="C2")
        ax[2].plot(traj.t, traj.total_energy - traj.total_energy[-1], label="energy above rest [J]", color="C3")
        ax[2].set_yscale("symlog")
        ax[2].set_xlabel("t [s]")
        for a in ax:
            a.legend(fontsize=8, loc="upper right")
            a.grid(alpha=0.3)
        fig.suptitle("gymnasium's humanoid falling limp (screwdyn, rigid contacts, dt = 1 ms)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.animate:
        screwdyn.viz.animate(model, traj, args.animate, fps=25, max_frames=100)
        print(f"wrote {args.animate}")
    return traj


if __name__ == "__main__":
    main()
