"""Talos stands under a whole-body controller, is pushed sideways, and recovers.

1. the bundled Talos (``talos_reduced``: a free-flyer and 32 joints, 90 kg) with one change: each
   foot's collision box, 21 x 13 x 2 cm (example-robot-data's ``talos_reduced_box.urdf``, as bundled,
   its bottom 3 mm below the sole frame), is moved up so that its bottom face is the sole. (The hull
   of example-robot-data's ``ankle_X_collision.stl`` is no sole: its bottom is a dome, 3 mm higher at
   the rim, on which a foot rocks from vertex to vertex.) It starts in its home pose ("half sitting") with
   the ankles' 0.1 deg of roll zeroed, at rest, the soles flat on the ground;
2. the controller, evaluated once a step (1 kHz), is inverse dynamics under the two feet's contacts:

   * the desired acceleration is a PD toward the start on every degree of freedom,
     ``qdd = Kp (q_ref (-) q) - Kd qd`` (``screwdyn.difference``: the base's error is its pose
     error, a twist in its own frame); soft on the base's position (3.5 rad/s: to stop the body
     the ground must shift weight to one foot, and only so much), stiffer on the base's
     orientation (8 rad/s) and on the joints of the torso, head and arms (15 rad/s);
   * the legs get no PD of their own: their accelerations are those that keep both soles where
     they stood, ``J qdd + gamma = -Kd_f J qd - Kp_f e`` (two ``FrameContact`` anchored at the
     soles' start, 30 rad/s; ``screwdyn.constraint_jacobian``, ``constraint_drift``,
     ``constraint_error``), solved for the 12 leg columns of ``J`` (two 6 x 6 blocks);
   * ``screwdyn.constrained_inverse_dynamics`` turns that ``qdd`` into joint torques and the two
     soles' wrenches ``lam``: ``M qdd + h = tau + J^T lam`` with zero torque on the free-flyer's
     rows. The soles' 12 wrench components are redundant for the base's six equations; the
     weights make a sole's moment cost as much as its force at 5 cm, so that the controller
     shifts weight from foot to foot rather than asking for moments near a sole's edge;
   * plus the joints' friction (the model's, Coulomb smoothed): without it the torso and arms
     stick, and the base stays 1.8 deg yawed and a centimetre off after the push;
3. ``screwdyn.simulate`` with ``environment=Ground(friction=1)``: rigid unilateral contacts with
   Coulomb friction (the controller's soles are its assumption; nothing holds the feet down), the
   joints' friction and limits, and the push: 120 N sideways (+y) on the base for 0.1 s at
   t = 1 s, a callable ``f_ext`` (the base's wrench in its own frame). The base gives way by a few
   centimetres and comes back; the printout checks that it returned, that the soles stayed flat
   where they were, and that their contacts carry the weight.

This controller knows nothing of the contacts' limits (no QP): a harder push (150 N with these
gains) unloads the right foot until it tips on its edge, and the controller, which still assumes
it flat, then diverges.

Run::

    python examples/talos_push.py --plot talos_push.png --animate talos_push.gif
"""
from __future__ import annotations

import argparse

import numpy as np

import screwdyn

PUSH = (120.0, 1.0, 0.1)                            # force [N] along +y, at t [s], for [s]
SOLES = ("left_sole_link", "right_sole_link")
SOLE_BOX = (0.21, 0.13, 0.02)                       # the feet's collision boxes [m]
GAINS = {"base position": (3.5, 1.0), "base orientation": (8.0, 1.0), "joints": (15.0, 1.0)}   # (rad/s, damping ratio)
FEET = (30.0, 1.0)                                  # the soles' correction back to their start (rad/s, damping ratio)


def pd_gains(model):
    """``Kp, Kd (nv,)``: each degree of freedom a critically damped second-order system."""
    w = np.full(model.nv, GAINS["joints"][0])
    z = np.full(model.nv, GAINS["joints"][1])
    w[:3], z[:3] = GAINS["base orientation"]       # the free-flyer's twist (omega, v): orientation first
    w[3:6], z[3:6] = GAINS["base position"]
    return w * w, 2 * z * w


def controller(model, q_ref, log=None):
    """The whole-body controller ``tau(t, q, qd)`` of the module docstring; ``log`` (a list) gets
    ``(t, lam)``, the sole wrenches it expects (each 6: moment, force, in the sole's axes)."""
    Kp_f, Kd_f = FEET[0] ** 2, 2 * FEET[1] * FEET[0]
    feet = [screwdyn.FrameContact(model, s, baumgarte=(Kp_f, Kd_f), anchor=screwdyn.frame_pose(model, q_ref, s))
            for s in SOLES]
    Kp, Kd = pd_gains(model)
    legs = np.array([model.idx_vs[model.joint_names.index(j)] for j in model.joint_names if j.startswith("leg_")])
    rest = np.setdiff1d(np.arange(model.nv), legs)
    weights = np.tile([400.0] * 3 + [1.0] * 3, 2)   # a moment [N m] costs as a force [N] 5 cm off: (1 / 0.05)^2

    def friction(qd):
        """The joints' friction as the model has it (viscous, and Coulomb smoothed over 0.01 rad/s)."""
        return model.damping * qd + model.friction * np.tanh(qd / 0.01)

    def tau(t, q, qd):
        qdd = Kp * screwdyn.difference(model, q, q_ref) - Kd * qd
        J = screwdyn.constraint_jacobian(model, q, feet)            # (12, 38): the soles' twists
        gamma = screwdyn.constraint_drift(model, q, qd, feet)       # their acceleration at qdd = 0
        e = screwdyn.constraint_error(model, q, feet)               # their pose error from where they stood
        want = -gamma - Kd_f * (J @ qd) - Kp_f * e                  # the soles' acceleration: back to rest
        qdd[legs] = np.linalg.solve(J[:, legs], want - J[:, rest] @ qdd[rest])
        out, lam = screwdyn.constrained_inverse_dynamics(model, q, qd, qdd, feet, weights=weights)
        if log is not None:
            log.append((t, lam))
        out[:6] = 0.0                                # (zero already, to rounding: the base has no motor)
        return out + friction(qd)

    return tau


def push_wrench(model, push=PUSH):
    """``f_ext(t, q, qd)``: the push on the base, a horizontal world force, as a wrench ``(n, f)``
    in the base's frame."""
    force, start, length = push

    def f_ext(t, q, qd):
        f = np.zeros(3)
        if start <= t < start + length:
            R = screwdyn.frame_pose(model, q, "base_link")[:3, :3]
            f = R.T @ [0.0, force, 0.0]
        return {"base_link": np.r_[0.0, 0.0, 0.0, f]}

    return f_ext


def box_feet(model):
    """The bundled model with each foot's collision box (example-robot-data's ``talos_reduced_box.urdf``,
    21 x 13 x 2 cm, its bottom 3 mm below the sole frame) moved up so that its bottom face is the sole."""
    from screwdyn.geometry import Collision

    q = screwdyn.neutral(model)
    keep = tuple(c for c in model.collisions if c.link not in ("leg_left_6_link", "leg_right_6_link"))
    boxes = []
    for side in ("left", "right"):
        ankle, sole = (screwdyn.frame_pose(model, q, f) for f in (f"leg_{side}_6_link", f"{side}_sole_link"))
        T = np.linalg.inv(ankle) @ sole             # the sole in the foot link's frame
        T[:3, 3] += T[:3, 2] * 0.01                 # half the box's height above the sole
        boxes.append(Collision(f"leg_{side}_6_link", "box", T, SOLE_BOX))
    return model.replace(collisions=keep + tuple(boxes))


def standing(model):
    """The home pose with the soles flat on the ground: the ankles' roll zeroed (home rolls them by
    0.1 deg) and the base lowered by the soles' height (the boxes' bottom faces)."""
    q0 = screwdyn.models.home("talos_reduced").copy()
    for side in ("left", "right"):
        q0[model.idx_qs[model.joint_names.index(f"leg_{side}_6_joint")]] = 0.0
    q0[2] -= min(screwdyn.frame_pose(model, q0, s)[2, 3] for s in SOLES)
    return q0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="talos_push.png", help="PNG of the base and the contact forces (none: '')")
    p.add_argument("--animate", default="talos_push.gif", help="GIF of the push (none: '')")
    p.add_argument("--duration", type=float, default=3.0)
    p.add_argument("--push", type=float, nargs=3, default=PUSH, metavar=("N", "AT", "FOR"),
                   help="the push: force [N] along +y, start and length [s]")
    args = p.parse_args(argv)
    push = tuple(args.push)

    talos = box_feet(screwdyn.models.load("talos_reduced"))
    ground = screwdyn.Environment(screwdyn.Ground(friction=1.0))
    q0 = standing(talos)
    soles0 = np.array([screwdyn.frame_pose(talos, q0, s) for s in SOLES])
    traj = screwdyn.simulate(talos, q0, None, args.duration, 1e-3, tau=controller(talos, q0),
                             f_ext=push_wrench(talos, push), hold=True, environment=ground)

    t, base = traj.t, traj.q[:, :3]
    weight = talos.mass.sum() * 9.81
    rec = traj.contacts
    F = rec.total_force()
    foot_body = [talos.frame_body[talos.frame_names.index(s)] for s in SOLES]
    per_foot = np.stack([np.where((rec.body == b)[..., None], rec.force, 0.0).sum(axis=1)[:, 2] for b in foot_body],
                        axis=1)
    away = np.linalg.norm(base[:, :2] - base[0, :2], axis=1)
    k = int(np.argmax(away))
    soles = np.array([[screwdyn.frame_pose(talos, q, s) for s in SOLES] for q in traj.q[:: max(1, len(t) // 300)]])
    slid = np.linalg.norm(soles[..., :2, 3] - soles0[:, :2, 3], axis=-1).max() * 1e3
    lift = np.abs(soles[..., 2, 3] - soles0[:, 2, 3]).max() * 1e3
    tilt = np.degrees(np.arccos(np.clip(soles[..., 2, 2], -1, 1)).max())
    others = ~np.isin(rec.body, foot_body) & rec.active
    settled = t >= t[-1] - 0.2
    print(f"Talos ({talos.nv} degrees of freedom, {weight:.1f} N) pushed with {push[0]:g} N sideways for {push[2]:g} s "
          f"at t = {push[1]:g} s; {t[-1]:g} s simulated in {traj.info['wall_time']:.1f} s")
    print(f"  the base gave way by {away[k] * 1e3:.1f} mm at most (t = {t[k]:.3f} s); at t = {t[-1]:g} s it is "
          f"{np.linalg.norm(base[-1] - base[0]) * 1e3:.2f} mm from where it started, moving at "
          f"{np.abs(traj.qd[-1, :6]).max():.1e} (m/s, rad/s)")
    print(f"  the soles slid {slid:.2f} mm, rose {lift:.2f} mm and tilted {tilt:.2f} deg at most; contacts other than "
          f"the feet: {int(others.sum())} (contact-steps)")
    print(f"  over the last 0.2 s the feet carry {F[settled, 2].mean():.2f} N of the {weight:.2f} N weight "
          f"(left {per_foot[settled, 0].mean():.1f} N, right {per_foot[settled, 1].mean():.1f} N); the least "
          f"normal force a foot carried: {per_foot.min(axis=0).round(1)} N (left, right)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
        for a in ax:
            a.axvspan(push[1], push[1] + push[2], color="C3", alpha=0.15, label=f"push, {push[0]:g} N along +y")
        for i, name in enumerate("xyz"):
            ax[0].plot(t, (base[:, i] - base[0, i]) * 1e3, label=f"base {name}", color=f"C{i}")
        ax[0].set_ylabel("base displacement [mm]")
        ax[1].plot(t, np.degrees(2 * traj.q[:, 3:6]), label=["roll (approx.)", "pitch (approx.)", "yaw (approx.)"])
        ax[1].set_ylabel("base orientation [deg]")
        ax[2].plot(t, F[:, 2], label="total normal force", color="k", lw=1.2)
        ax[2].plot(t, per_foot[:, 0], label="left foot", color="C0", lw=0.9)
        ax[2].plot(t, per_foot[:, 1], label="right foot", color="C1", lw=0.9)
        ax[2].axhline(weight, color="k", ls="--", lw=0.8, label="weight")
        ax[2].set_ylim(0, 1.6 * weight)
        ax[2].set_ylabel("force [N]")
        ax[2].set_xlabel("t [s]")
        for a in ax:
            a.legend(fontsize=7, loc="upper right", ncol=2)
            a.grid(alpha=0.3)
        fig.suptitle("Talos pushed sideways, standing under whole-body inverse dynamics (dt = 1 ms)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.animate:
        screwdyn.viz.animate(talos, traj, args.animate, fps=25, environment=ground)
        print(f"wrote {args.animate}")
    return traj


if __name__ == "__main__":
    main()
