"""The Panda pushes a box across the ground.

1. the scene is one model: the bundled Panda (7 joints, its base on the ground) with a ball of
   2 cm at its fingertip (its collision geometry), and a box of 10 cm and 0.5 kg on a free-flyer
   of its own (URDF's ``floating`` joint), 45 cm in front of it: the same URDF text with two links
   added; ``ContactSettings(self_collision=True)`` makes the ball and the box collide, the ground
   (friction 0.4) takes the box; the box's seven coordinates (its pose in the world) follow the
   arm's in ``q``;
2. the fingertip's path: a straight line at the height of the box's centre, from x = 0.30 m to
   0.75 m in 3 s (a quintic in time), the hand pointing down; its joint angles by inverse
   kinematics at 60 points of the line (SciPy's least squares on ``screwdyn.frame_pose``) and a
   cubic spline through them;
3. computed torque on the arm, ``tau = ID(q, qd, qdd_r + Kp e + Kd de)`` (the box's rows of the
   model unactuated), once a step, against the contacts: the ball meets the box, pushes it, and
   the box slides; the printout checks that it slid with the fingertip, and the friction it felt.

Run::

    python examples/panda_push.py --plot panda_push.png --animate panda_push.gif
"""
from __future__ import annotations

import argparse

import numpy as np

import screwdyn
from screwdyn import models

BOX, BALL, MASS = 0.10, 0.02, 0.5
PATH = (0.30, 0.75, 0.05, 3.0)       # fingertip x from, x to, height, seconds


def scene():
    """The Panda with a fingertip ball and a free box, from the bundled URDF."""
    text = open(models.path("panda")).read()
    I = MASS * BOX * BOX / 6
    box = f"""
  <link name="box">
    <inertial><mass value="{MASS}"/><inertia ixx="{I}" iyy="{I}" izz="{I}" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><box size="{BOX} {BOX} {BOX}"/></geometry></visual>
    <collision><geometry><box size="{BOX} {BOX} {BOX}"/></geometry></collision>
  </link>
  <joint name="box_joint" type="floating">
    <parent link="panda_link0"/><child link="box"/>
  </joint>
</robot>"""
    tip = f"""<link name="panda_hand_tcp">
    <visual><geometry><sphere radius="{BALL}"/></geometry></visual>
    <collision><geometry><sphere radius="{BALL}"/></geometry></collision>
  </link>"""
    text = text.replace('<link name="panda_hand_tcp"/>', tip).replace("</robot>", box)
    model = screwdyn.load_urdf(text)
    return model.replace(visuals=model.visuals + arm_capsules(model))


def arm_capsules(model):
    """Capsules from each arm link's origin to the next one's (the bundled Panda has no meshes), so
    that the video shows the arm with the box."""
    from screwdyn.geometry import Visual

    chain = [f"panda_link{i}" for i in range(9)] + ["panda_hand_tcp"]
    q = np.r_[np.zeros(7), 0, 0, 0, 0, 0, 0, 1]
    out = []
    for a, b in zip(chain[:-1], chain[1:]):
        Ta, Tb = screwdyn.frame_pose(model, q, a), screwdyn.frame_pose(model, q, b)
        d = (np.linalg.inv(Ta) @ Tb)[:3, 3]
        length = float(np.linalg.norm(d))
        if length < 1e-6:
            continue
        z = d / length
        x = np.cross(z, [1.0, 0, 0] if abs(z[0]) < 0.9 else [0, 1.0, 0])
        x /= np.linalg.norm(x)
        T = np.eye(4)
        T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
        T[:3, 3] = d / 2
        out.append(Visual(a, "capsule", T, (0.04, length), color=(0.9, 0.55, 0.15, 1.0)))
    return tuple(out)


def arm_path(model, q_arm0, times):
    """The arm's joint angles along the fingertip's line, by least squares from ``q_arm0``."""
    from scipy.optimize import least_squares

    x0, x1, z, T = PATH
    s = np.clip(times / T, 0.0, 1.0)
    x = x0 + (x1 - x0) * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)
    down = np.diag([1.0, -1.0, -1.0])        # the hand's z axis pointing down
    q = np.r_[q_arm0, 0.45, 0, BOX / 2, 0, 0, 0, 1]
    out = []
    for xk in x:
        def error(qa):
            q[:7] = qa
            T = screwdyn.frame_pose(model, q, "panda_hand_tcp")
            return np.r_[T[:3, 3] - (xk, 0.0, z), 0.3 * (T[:3, :3] - down).ravel()]
        qa = least_squares(error, out[-1] if out else q_arm0, xtol=1e-12, ftol=1e-12).x
        out.append(qa)
    return np.array(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="panda_push.png", help="PNG of the push (none: '')")
    p.add_argument("--animate", default="panda_push.gif", help="GIF of the push (none: '')")
    args = p.parse_args(argv)
    from scipy.interpolate import CubicSpline

    model = scene()
    home = models.home("panda")
    knots = np.linspace(0.0, PATH[3], 61)
    spline = CubicSpline(knots, arm_path(model, home, knots), bc_type="clamped")
    kp, kd = 400.0, 40.0

    def computed_torque(t, q, qd):
        tr = min(t, PATH[3])
        qr, vr, ar = spline(tr), spline(tr, 1), spline(tr, 2)
        a = np.zeros(model.nv)
        a[:7] = ar + kp * (qr - q[:7]) + kd * (vr - qd[:7])
        tau = screwdyn.inverse_dynamics(model, q, qd, a)
        tau[7:] = 0.0                          # the box has no motor
        return tau

    q0 = np.r_[spline(0.0), 0.45, 0.0, BOX / 2, 0.0, 0.0, 0.0, 1.0]
    ground = screwdyn.Environment(screwdyn.Ground(friction=0.4))
    traj = screwdyn.simulate(model, q0, None, PATH[3] + 0.5, 1e-3, tau=computed_torque, hold=True, environment=ground,
                             contact_settings=screwdyn.ContactSettings(self_collision=True))
    tip = screwdyn.frame_pose(model, traj.q, "panda_hand_tcp")[:, :3, 3]
    box_x = traj.q[:, 7]
    C = traj.contacts
    pushing = (C.other == model.link_names.index("box")) | (C.body == model.link_names.index("box")) & (C.other >= 0)
    push = np.linalg.norm(np.where(pushing[..., None], C.force, 0.0).sum(axis=1), axis=1)
    moving = np.abs(traj.qd[:, 10]) > 1e-3
    print(f"the box slid {box_x[-1] - box_x[0]:.3f} m (the fingertip went {tip[-1, 0] - tip[0, 0]:.3f} m); the push "
          f"while it slid: {np.median(push[moving]):.3f} N median (friction mu m g = {0.4 * MASS * 9.81:.3f} N); "
          f"the box "
          f"stayed on the ground (height {traj.q[:, 9].min():.4f}..{traj.q[:, 9].max():.4f} m) and did not turn more "
          f"than {np.degrees(2 * np.arccos(np.abs(traj.q[:, 13]).min())):.2f} degrees; "
          f"{traj.solver['iterations'].mean():.2f} solver iterations a step")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        ax[0].plot(traj.t, tip[:, 0], label="fingertip x")
        ax[0].plot(traj.t, box_x - BOX / 2 - BALL, label="box's back face x - ball radius")
        ax[0].set_ylabel("[m]")
        ax[1].plot(traj.t, push, label="force between the ball and the box")
        ax[1].axhline(0.4 * MASS * 9.81, color="k", ls="--", lw=0.8, label="sliding friction mu m g")
        ax[1].set_ylabel("[N]")
        ax[1].set_ylim(0, 6)
        ax[1].set_xlabel("t [s]")
        for a in ax:
            a.legend(fontsize=8, loc="upper left")
            a.grid(alpha=0.3)
        fig.suptitle("the Panda pushes a 0.5 kg box across the ground (mu = 0.4)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.animate:
        screwdyn.viz.animate(model, traj, args.animate, fps=25, environment=ground)
        print(f"wrote {args.animate}")
    return traj


if __name__ == "__main__":
    main()
