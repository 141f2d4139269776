"""Forward kinematics, Jacobians, ``Jdot qd`` and ``J^T F`` against Pinocchio (frame placements,
``computeFrameJacobian``, ``getFrameJacobianTimeVariation``, ``getFrameClassicalAcceleration``),
the modern_robotics package (``FKinSpace``, ``JacobianSpace``, ``JacobianBody``), finite
differences of the poses, and statics (``J^T F`` equals the RNEA torque of the wrench)."""
import numpy as np
import pytest

import screwdyn
from helpers import random_body, random_model, random_state, to_pin, to_pinocchio, urdf_robot
from screwdyn.spatial import Ad, exp_so3, inverse_transform, transform

pin = pytest.importorskip("pinocchio")

PIN_REF = {"space": pin.WORLD, "body": pin.LOCAL, "world_aligned": pin.LOCAL_WORLD_ALIGNED}


def random_tree_with_frames(rng, **kw):
    """A random tree and its Pinocchio twin, every one of our frames added to it by name."""
    model = random_model(rng, **kw)
    pm = to_pinocchio(model)
    for name, b, T in zip(model.frame_names, model.frame_body, model.frame_pose):
        pm.addFrame(pin.Frame("f_" + name, int(b) + 1, 0, pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()),
                              pin.FrameType.OP_FRAME))
    return model, pm


def swap(x):
    """Pinocchio's (linear, angular) rows <-> our (angular, linear)."""
    return np.concatenate([x[3:], x[:3]])


@pytest.mark.parametrize("name", ["panda", "ur5", "talos_full_v2"])
def test_forward_kinematics_matches_pinocchio_on_real_robots(name, rng):
    model, pm, idx = urdf_robot(name)
    pd = pm.createData()
    q = rng.uniform(-np.pi, np.pi, model.n)
    pin.framesForwardKinematics(pm, pd, to_pin(q, idx))
    poses = screwdyn.forward_kinematics(model, q)
    assert poses.shape == (len(model.frame_names), 4, 4)
    for k, f in enumerate(model.frame_names):
        assert pm.existFrame(f), f
        assert np.allclose(poses[k], pd.oMf[pm.getFrameId(f)].homogeneous, atol=1e-12), f
        if k % 7 == 0:
            assert np.array_equal(screwdyn.frame_pose(model, q, f), poses[k])


@pytest.mark.parametrize("name, frames", [("panda", ["panda_hand", "panda_link4", "panda_leftfinger"]),
                                          ("ur5", ["tool0", "ee_link", "shoulder_link"]),
                                          ("talos_full_v2", ["gripper_left_base_link", "left_sole_link", "rgbd_link"])])
def test_jacobians_and_bias_match_pinocchio_on_real_robots(name, frames, rng):
    model, pm, idx = urdf_robot(name)
    pd = pm.createData()
    q, qd, _ = random_state(rng, model.n)
    qp, qdp = to_pin(q, idx), to_pin(qd, idx)
    pin.computeJointJacobians(pm, pd, qp)
    pin.computeJointJacobiansTimeVariation(pm, pd, qp, qdp)
    pin.updateFramePlacements(pm, pd)
    for f in frames:
        fid = pm.getFrameId(f)
        for ref, pref in PIN_REF.items():
            J = screwdyn.jacobian(model, q, f, ref)
            Jp = pin.computeFrameJacobian(pm, pm.createData(), qp, fid, pref)[:, idx]
            assert np.allclose(J, swap(Jp), atol=1e-12), (f, ref)
            dJp = pin.getFrameJacobianTimeVariation(pm, pd, fid, pref)[:, idx]
            assert np.allclose(screwdyn.jdot_qd(model, q, qd, f, ref), swap(dJp @ qd), atol=1e-11), (f, ref)


@pytest.mark.parametrize("seed", range(5))
def test_jacobians_velocities_and_bias_match_pinocchio_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model, pm = random_tree_with_frames(rng, n=int(rng.integers(1, 12)), fixed=int(rng.integers(1, 4)))
    pd = pm.createData()
    q, qd, _ = random_state(rng, model.n)
    pin.forwardKinematics(pm, pd, q, qd, np.zeros(model.n))
    pin.computeJointJacobians(pm, pd, q)
    pin.computeJointJacobiansTimeVariation(pm, pd, q, qd)
    pin.updateFramePlacements(pm, pd)
    poses = screwdyn.forward_kinematics(model, q)
    for k, f in enumerate(model.frame_names):
        fid = pm.getFrameId("f_" + f)
        assert np.allclose(poses[k], pd.oMf[fid].homogeneous, atol=1e-12)
        for ref, pref in PIN_REF.items():
            J = screwdyn.jacobian(model, q, f, ref)
            assert np.allclose(J, swap(pin.getFrameJacobian(pm, pd, fid, pref)), atol=1e-12)
            assert np.allclose(screwdyn.frame_velocity(model, q, qd, f, ref), J @ qd, atol=1e-12)
            assert np.allclose(screwdyn.frame_velocity(model, q, qd, f, ref),
                               swap(pin.getFrameVelocity(pm, pd, fid, pref).vector), atol=1e-12)
            dJp = pin.getFrameJacobianTimeVariation(pm, pd, fid, pref)
            assert np.allclose(screwdyn.jdot_qd(model, q, qd, f, ref), swap(dJp @ qd), atol=1e-11)
        # world aligned: the classical acceleration of the frame origin at qdd = 0
        acc = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
        assert np.allclose(screwdyn.jdot_qd(model, q, qd, f, "world_aligned"), swap(acc.vector), atol=1e-11)


def vee(X):
    """se(3) matrix -> twist (omega, v)."""
    return np.array([X[2, 1], X[0, 2], X[1, 0], X[0, 3], X[1, 3], X[2, 3]])


def test_jacobians_are_derivatives_of_the_pose(rng):
    """Column j: space [dT/dq_j T^-1]^v, body [T^-1 dT/dq_j]^v; world aligned: (omega_s, dp/dq_j)."""
    model = random_model(rng, n=7, fixed=3)
    q, _, _ = random_state(rng, model.n)
    h = 1e-6
    for f in model.frame_names[-4:]:
        T = screwdyn.frame_pose(model, q, f)
        dT = [(screwdyn.frame_pose(model, q + h * e, f) - screwdyn.frame_pose(model, q - h * e, f)) / (2 * h)
              for e in np.eye(model.n)]
        Js = np.array([vee(d @ inverse_transform(T)) for d in dT]).T
        Jb = np.array([vee(inverse_transform(T) @ d) for d in dT]).T
        Jw = np.vstack([Js[:3], np.array([d[:3, 3] for d in dT]).T])
        assert np.allclose(screwdyn.jacobian(model, q, f, "space"), Js, atol=1e-8)
        assert np.allclose(screwdyn.jacobian(model, q, f, "body"), Jb, atol=1e-8)
        assert np.allclose(screwdyn.jacobian(model, q, f, "world_aligned"), Jw, atol=1e-8)


def test_jdot_qd_is_the_rate_of_j_qd(rng):
    """d/dt (J qd) = J qdd + Jdot qd: at qdd = 0, (J(q + h qd) - J(q - h qd)) qd / 2h."""
    model = random_model(rng, n=8, fixed=2)
    q, qd, _ = random_state(rng, model.n)
    h = 1e-6
    f = model.frame_names[-1]
    for ref in ("space", "body", "world_aligned"):
        dJ = (screwdyn.jacobian(model, q + h * qd, f, ref) - screwdyn.jacobian(model, q - h * qd, f, ref)) / (2 * h)
        a = screwdyn.jdot_qd(model, q, qd, f, ref)
        assert np.allclose(a, dJ @ qd, rtol=1e-6, atol=1e-6 * np.abs(a).max())


def test_modern_robotics_space_and_body_jacobians_and_fk(rng):
    mr = pytest.importorskip("modern_robotics")
    n = 5
    Ms = [transform(exp_so3(rng.normal(size=3)), rng.normal(size=3)) for _ in range(n + 1)]
    Gs = [np.diag(np.concatenate([np.diag(b.inertia), [b.mass] * 3])) for b in (random_body(rng) for _ in range(n))]
    cols = []
    for _ in range(n):
        w = rng.normal(size=3)
        w /= np.linalg.norm(w)
        cols.append(np.concatenate([np.zeros(3), w]) if rng.random() < 0.3
                    else np.concatenate([w, -np.cross(w, rng.normal(size=3))]))
    S = np.array(cols).T
    model = screwdyn.Model.from_screws(Ms, Gs, S)
    M = np.linalg.multi_dot(Ms)
    B = Ad(inverse_transform(M)) @ S
    q = rng.uniform(-np.pi, np.pi, n)
    assert np.allclose(screwdyn.frame_pose(model, q, "ee"), mr.FKinSpace(M, S, q), atol=1e-12)
    assert np.allclose(screwdyn.jacobian(model, q, "ee", "space"), mr.JacobianSpace(S, q), atol=1e-12)
    assert np.allclose(screwdyn.jacobian(model, q, "ee", "body"), mr.JacobianBody(B, q), atol=1e-12)


def test_joint_torques_from_wrench_is_statics_in_every_reference(rng):
    """J^T F in the three references gives the same torques for the same physical wrench, and
    equals the torques RNEA needs to hold the robot still while the frame pushes with F."""
    model = random_model(rng, n=7, fixed=3)
    q, _, _ = random_state(rng, model.n)
    z = np.zeros(model.n)
    f = model.frame_names[-1]
    T = screwdyn.frame_pose(model, q, f)
    F_b = rng.normal(size=6)                                   # in the frame, about its origin
    F_s = Ad(inverse_transform(T)).T @ F_b                     # in base axes, about the base origin
    R = T[:3, :3]
    F_w = np.concatenate([R @ F_b[:3], R @ F_b[3:]])           # in base axes, about the frame origin
    tau = screwdyn.joint_torques_from_wrench(model, q, f, F_b)
    assert np.allclose(tau, screwdyn.jacobian(model, q, f, "body").T @ F_b)
    assert np.allclose(screwdyn.joint_torques_from_wrench(model, q, f, F_s, "space"), tau, atol=1e-12)
    assert np.allclose(screwdyn.joint_torques_from_wrench(model, q, f, F_w, "world_aligned"), tau, atol=1e-12)
    # the environment pushes back with -F: the motors must supply g + J^T F
    tau_id = screwdyn.inverse_dynamics(model, q, z, z, {f: -F_b}) - screwdyn.gravity_torques(model, q)
    assert np.allclose(tau_id, tau, rtol=1e-12, atol=1e-12)


def test_base_frame_and_body_poses(rng):
    model, pm = random_tree_with_frames(rng, n=6, fixed=2)
    q, qd, _ = random_state(rng, model.n)
    base = model.base_name
    assert np.array_equal(screwdyn.frame_pose(model, q, base), np.eye(4))
    assert np.array_equal(screwdyn.jacobian(model, q, base), np.zeros((6, model.n)))
    assert np.array_equal(screwdyn.jdot_qd(model, q, qd, base), np.zeros(6))
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q)
    P = screwdyn.body_poses(model, q)
    assert P.shape == (model.n, 4, 4)
    for i in range(model.n):
        assert np.allclose(P[i], pd.oMi[i + 1].homogeneous, atol=1e-12)
    # a joint off the frame's path has a zero column
    f = model.link_names[-1]
    path = set()
    j = model.n - 1
    while j >= 0:
        path.add(j)
        j = model.parent[j]
    J = screwdyn.jacobian(model, q, f)
    for j in range(model.n):
        assert np.any(J[:, j] != 0) == (j in path)


def test_batches_match_single_calls(rng):
    model = random_model(rng, n=6, fixed=2)
    Q, QD, _ = random_state(rng, model.n, (2, 3))
    f = model.frame_names[-1]
    fk = screwdyn.forward_kinematics(model, Q)
    bp = screwdyn.body_poses(model, Q)
    fp = screwdyn.frame_pose(model, Q, f)
    J = screwdyn.jacobian(model, Q, f, "world_aligned")
    V = screwdyn.frame_velocity(model, Q, QD, f, "body")
    A = screwdyn.jdot_qd(model, Q, QD, f, "space")
    W = rng.normal(size=(2, 3, 6))
    tau = screwdyn.joint_torques_from_wrench(model, Q, f, W)
    assert fk.shape == (2, 3, len(model.frame_names), 4, 4) and bp.shape == (2, 3, model.n, 4, 4)
    assert fp.shape == (2, 3, 4, 4) and J.shape == (2, 3, 6, model.n) and V.shape == A.shape == (2, 3, 6)
    assert tau.shape == (2, 3, model.n)
    for a in range(2):
        for b in range(3):
            q, qd = Q[a, b], QD[a, b]
            assert np.array_equal(fk[a, b], screwdyn.forward_kinematics(model, q))
            assert np.array_equal(bp[a, b], screwdyn.body_poses(model, q))
            assert np.array_equal(fp[a, b], screwdyn.frame_pose(model, q, f))
            assert np.array_equal(J[a, b], screwdyn.jacobian(model, q, f, "world_aligned"))
            assert np.array_equal(V[a, b], screwdyn.frame_velocity(model, q, qd, f, "body"))
            assert np.array_equal(A[a, b], screwdyn.jdot_qd(model, q, qd, f, "space"))
            assert np.allclose(tau[a, b], screwdyn.joint_torques_from_wrench(model, q, f, W[a, b]), rtol=1e-14)
