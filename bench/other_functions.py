"""One state of the functions that ``screwdyn bench`` does not time, side by side with Pinocchio.

    python bench/other_functions.py --robots ur5:tool0 panda:panda_hand talos_full_v2:gripper_left_base_link

Each row times a call as a user writes it (screwdyn's result returned; Pinocchio's call and, where
its result lands in ``Data``, nothing more), the best of 7 rounds of 20,000 calls, in one process.
The pairs are not always the same work: Pinocchio's ``forwardKinematics`` fills ``Data`` with the
joints' placements and returns nothing, where ``forward_kinematics`` returns every frame's pose
``(k, 4, 4)``; ``computePotentialEnergy`` runs positions only, where screwdyn's energy kernel also
forms the velocities and the momentum. Every pair's answer is compared (the last column; joint-space ones where the joint orders agree).
"""
from __future__ import annotations

import argparse
import timeit
import warnings

import numpy as np

import screwdyn as sd


def _best(f, number, rounds=7):
    f()
    return min(timeit.repeat(f, number=number, repeat=rounds)) / number * 1e6


def rows(model, pm, pd, frame):
    """``(name, screwdyn call, Pinocchio call, difference of their answers)`` for one robot."""
    import pinocchio as pin
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, model.n)
    v = rng.normal(size=model.n)
    qp, vp = sd.to_pinocchio(model, q, v, pin_model=pm)   # (the same state in Pinocchio's joint order)
    fid = pm.getFrameId(frame)

    def pin_pose():
        pin.forwardKinematics(pm, pd, qp)
        return pin.updateFramePlacement(pm, pd, fid)

    def pin_jdot():
        pin.forwardKinematics(pm, pd, qp, vp, 0 * vp)
        return pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)

    def err(a, b):
        return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))

    out = [
        ("center_of_mass", lambda: sd.center_of_mass(model, q), lambda: pin.centerOfMass(pm, pd, qp),
         lambda a, b: err(a, b)),
        ("kinetic_energy", lambda: sd.kinetic_energy(model, q, v), lambda: pin.computeKineticEnergy(pm, pd, qp, vp),
         lambda a, b: err(a, b)),
        ("potential_energy", lambda: sd.potential_energy(model, q), lambda: pin.computePotentialEnergy(pm, pd, qp),
         lambda a, b: err(a, b)),
        ("gravity_torques", lambda: sd.gravity_torques(model, q), lambda: pin.computeGeneralizedGravity(pm, pd, qp),
         lambda a, b: err(a, b)),
        ("bias_torques", lambda: sd.bias_torques(model, q, v), lambda: pin.nonLinearEffects(pm, pd, qp, vp),
         lambda a, b: err(a, b)),
        ("centroidal_momentum_matrix", lambda: sd.centroidal_momentum_matrix(model, q),
         lambda: pin.computeCentroidalMap(pm, pd, qp), lambda a, b: err(a, np.vstack([b[3:], b[:3]]))),
        ("frame_pose", lambda: sd.frame_pose(model, q, frame), pin_pose, lambda a, b: err(a, b.homogeneous)),
        ("jacobian (world_aligned)", lambda: sd.jacobian(model, q, frame, "world_aligned"),
         lambda: pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL_WORLD_ALIGNED),
         lambda a, b: err(a, np.vstack([b[3:], b[:3]]))),
        ("jdot_qd (world_aligned)", lambda: sd.jdot_qd(model, q, v, frame, "world_aligned"), pin_jdot,
         lambda a, b: err(a, np.concatenate([b.angular, b.linear]))),
        ("forward_kinematics", lambda: sd.forward_kinematics(model, q), lambda: pin.forwardKinematics(pm, pd, qp),
         None),
    ]
    return out


_ORDER_FREE = {"center_of_mass", "kinetic_energy", "potential_energy", "frame_pose", "jdot_qd (world_aligned)"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["ur5:tool0", "panda:panda_hand"],
                        help="example-robot-data robot:frame pairs")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    import pinocchio as pin
    from screwdyn.io.urdf import example_robot_data_path
    print("| robot | function | screwdyn us | Pinocchio us | ratio (pin/screwdyn) | max abs diff |")
    print("|---|---|---:|---:|---:|---:|")
    for spec in args.robots:
        name, frame = spec.split(":")
        path = example_robot_data_path(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = sd.load_urdf(path)
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        same_order = list(pm.names[1:]) == list(model.joint_names)
        for fname, ours, theirs, diff in rows(model, pm, pd, frame):
            # (joint-space answers are compared where both libraries order the joints alike)
            d = f"{diff(ours(), theirs()):.1e}" if diff is not None and (same_order or fname in _ORDER_FREE) else ""
            t_sd, t_pin = _best(ours, args.calls), _best(theirs, args.calls)
            print(f"| {name} | {fname} | {t_sd:.2f} | {t_pin:.2f} | {t_pin / t_sd:.2f} | {d} |", flush=True)


if __name__ == "__main__":
    main()
