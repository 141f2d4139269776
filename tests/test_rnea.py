"""Inverse dynamics by RNEA against independent oracles: Pinocchio on real robots and random
trees, the modern_robotics package, and the closed forms of docs/theory.md §7.5 and of a
particle on a vertical line."""
import numpy as np
import pytest

import screwdyn
import screwdyn.algorithms.layout
from helpers import random_chain, random_model, random_state, to_pinocchio
from screwdyn.inertia import point_mass
from screwdyn.io.urdf import example_robot_data_path

pin = pytest.importorskip("pinocchio")

ROBOTS = ["panda", "ur5", "talos_full_v2", "baxter"]


def pin_rnea_by_name(model, path, q, qd, qdd, fext=None):
    """Pinocchio's RNEA on the URDF itself, permuted into screwdyn's joint order (by name)."""
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    idx = [pm.joints[pm.getJointId(name)].idx_v for name in model.joint_names]
    perm = np.empty(model.n, dtype=int)
    perm[idx] = np.arange(model.n)
    args = [x[perm] for x in (q, qd, qdd)]
    if fext is None:
        tau = pin.rnea(pm, pd, *args)
    else:
        forces = [pin.Force.Zero() for _ in range(pm.njoints)]
        for i, name in enumerate(model.joint_names):
            forces[pm.getJointId(name)] = pin.Force(np.concatenate([fext[i, 3:], fext[i, :3]]))
        tau = pin.rnea(pm, pd, *args, forces)
    return tau[idx]


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    path = example_robot_data_path(request.param)
    model = screwdyn.load_urdf(path)   # (the mimic joints of panda's and talos' grippers: couplings, no warning)
    return model, path


def test_rnea_matches_pinocchio_on_real_robots(robot, rng):
    model, path = robot
    for _ in range(5):
        q, qd, qdd = random_state(rng, model.n)
        tau = screwdyn.inverse_dynamics(model, q, qd, qdd)
        ref = pin_rnea_by_name(model, path, q, qd, qdd)
        assert np.allclose(tau, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_rnea_with_external_wrenches_matches_pinocchio(robot, rng):
    model, path = robot
    q, qd, qdd = random_state(rng, model.n)
    F = rng.normal(size=(model.n, 6)) * 10
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, F)
    ref = pin_rnea_by_name(model, path, q, qd, qdd, F)
    assert np.allclose(tau, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_robot_with_prismatic_joints_is_covered(robot):
    model, _ = robot
    if model.name == "panda":
        assert (model.joint_type == screwdyn.PRISMATIC).sum() == 2


def test_batch_of_states_matches_single_calls(robot, rng):
    model, _ = robot
    Q, QD, QDD = random_state(rng, model.n, (3, 4))
    tau = screwdyn.inverse_dynamics(model, Q, QD, QDD)
    assert tau.shape == (3, 4, model.n)
    for a in range(3):
        for b in range(4):
            assert np.array_equal(tau[a, b], screwdyn.inverse_dynamics(model, Q[a, b], QD[a, b], QDD[a, b]))


@pytest.mark.parametrize("groups, extra", [(0, 1), (1, -1), (1, 1), (17, 3)])
def test_batch_in_lanes_equals_single_states_exactly(rng, groups, extra):
    """The batch kernel runs LANES states side by side (vectorised): every state, in full and
    partial groups (B = 1, LANES - 1, LANES + 1, 17 LANES + 3: numba's threads claim whole
    lane groups at a time, in any order), with and without wrenches, joint angles beyond the polynomial sine's
    range included, equals the single-state kernel bit for bit, and a NaN in one state is
    reported at its index without touching the others."""
    from screwdyn.algorithms.rnea import LANES
    B = groups * LANES + extra
    model = random_model(rng, n=9, fixed=2, branching=0.5)
    Q, QD, QDD = random_state(rng, model.n, (B,))
    Q[0, 0] = 3e8       # beyond joints.SINCOS_LIMIT: the library's sin and cos, in lanes as alone
    Q[-1, -1] = -2e8
    FE = rng.normal(size=(B, model.n, 6))
    tau = screwdyn.inverse_dynamics(model, Q, QD, QDD)
    tau_f = screwdyn.inverse_dynamics(model, Q, QD, QDD, FE)
    for k in range(B):
        assert np.array_equal(tau[k], screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k]))
        assert np.array_equal(tau_f[k], screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k], FE[k]))
    QD[B // 2, 1] = np.nan
    with pytest.raises(ValueError, match=rf"qd contains NaN or inf \(batch index \({B // 2},\)\)"):
        screwdyn.inverse_dynamics(model, Q, QD, QDD)


def test_batch_of_a_model_too_large_for_lanes_runs_fewer_lanes(rng):
    """A model whose LANES lanes of work do not fit the stack (here 100 bodies) runs its batch with
    the most of LANES / 2, LANES / 4, ... that fit; the numbers are the one-state kernel's."""
    from screwdyn.dynamics import _RNEA
    model = random_model(rng, n=100, fixed=0, branching=0.3)
    assert _RNEA.lanes(model.n) == _RNEA.entry.lanes // 2 and _RNEA.lanes(50) == _RNEA.entry.lanes
    Q, QD, QDD = random_state(rng, model.n, (3,))
    FE = rng.normal(size=(3, model.n, 6))
    tau = screwdyn.inverse_dynamics(model, Q, QD, QDD)
    tau_f = screwdyn.inverse_dynamics(model, Q, QD, QDD, FE)
    for k in range(3):
        assert np.array_equal(tau[k], screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k]))
        assert np.array_equal(tau_f[k], screwdyn.inverse_dynamics(model, Q[k], QD[k], QDD[k], FE[k]))


@pytest.mark.parametrize("seed", range(10))
def test_rnea_matches_pinocchio_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=int(rng.integers(1, 15)), fixed=int(rng.integers(0, 4)), armature=True,
                         gravity=rng.normal(size=3) * 5)
    pm = to_pinocchio(model)
    pd = pm.createData()
    q, qd, qdd = random_state(rng, model.n)
    F = rng.normal(size=(model.n, 6))
    forces = [pin.Force.Zero()] + [pin.Force(np.concatenate([f[3:], f[:3]])) for f in F]
    ref = pin.rnea(pm, pd, q, qd, qdd, forces)
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, F)
    assert np.allclose(tau, ref, rtol=1e-10, atol=1e-10 * max(1, np.abs(ref).max()))


def test_wrench_dict_on_a_merged_fixed_link(rng):
    """A wrench given in a fixed child link's frame equals the same wrench moved to its body."""
    path = example_robot_data_path("ur5")
    model = screwdyn.load_urdf(path)
    q, qd, qdd = random_state(rng, model.n)
    w = rng.normal(size=6)
    k = model.frame_index("ee_link")
    body = model.frame_body[k]
    F = np.zeros((model.n, 6))
    F[body] = screwdyn.spatial.Ad(screwdyn.spatial.inverse_transform(model.frame_pose[k])).T @ w
    assert np.allclose(screwdyn.inverse_dynamics(model, q, qd, qdd, {"ee_link": w}),
                       screwdyn.inverse_dynamics(model, q, qd, qdd, F))


def test_tau_is_linear_in_qdd_and_f_ext_enters_through_the_jacobian(rng):
    model = random_model(rng, n=6)
    q, qd, qdd = random_state(rng, model.n)
    h = screwdyn.inverse_dynamics(model, q, qd, np.zeros(model.n))
    M = np.array([screwdyn.inverse_dynamics(model, q, qd, e) - h for e in np.eye(model.n)]).T
    assert np.allclose(screwdyn.inverse_dynamics(model, q, qd, qdd), M @ qdd + h)
    assert np.allclose(M, M.T, atol=1e-12)   # docs/theory.md eq. (6.12): M by n RNEA calls is symmetric
    assert np.all(np.linalg.eigvalsh(M) > 0)


def planar_2r(m1, m2, L1, L2, g):
    b = screwdyn.ModelBuilder("planar_2r", gravity=(0, -g, 0))
    b.add_body("link1", "base", "joint1", "revolute", inertial=point_mass(m1, [L1, 0, 0]))
    b.add_body("link2", "link1", "joint2", "revolute", origin=screwdyn.spatial.transform(None, [L1, 0, 0]),
               inertial=point_mass(m2, [L2, 0, 0]))
    return b.build()


def test_planar_2r_closed_form_of_note_001(rng):
    m1, m2, L1, L2, g = 2.0, 1.5, 1.3, 0.7, 9.81
    model = planar_2r(m1, m2, L1, L2, g)
    for _ in range(10):
        (t1, t2), (d1, d2), qdd = [x for x in random_state(rng, 2)]
        c2, s2 = np.cos(t2), np.sin(t2)
        M = np.array([[m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * c2 + L2**2), m2 * (L1 * L2 * c2 + L2**2)],
                      [m2 * (L1 * L2 * c2 + L2**2), m2 * L2**2]])
        c = np.array([-m2 * L1 * L2 * s2 * (2 * d1 * d2 + d2**2), m2 * L1 * L2 * d1**2 * s2])
        gv = np.array([(m1 + m2) * L1 * g * np.cos(t1) + m2 * g * L2 * np.cos(t1 + t2), m2 * g * L2 * np.cos(t1 + t2)])
        tau = screwdyn.inverse_dynamics(model, [t1, t2], [d1, d2], qdd)
        assert np.allclose(tau, M @ qdd + c + gv, rtol=1e-12, atol=1e-12)


def test_particle_on_a_vertical_line_of_note_001():
    # f = m xdd + m g
    b = screwdyn.ModelBuilder("particle")
    b.add_body("mass", "base", "x", "prismatic", axis=(0, 0, 1), inertial=point_mass(3.0))
    model = b.build()
    assert np.allclose(screwdyn.inverse_dynamics(model, [0.4], [1.0], [2.0]), 3.0 * 2.0 + 3.0 * 9.81)


def test_pr_robot_of_note_004(rng):
    # M = [[m1 + m2, -m2 d sin q2], [-m2 d sin q2, I + m2 d^2]], c = [-m2 d cos q2 qd2^2, 0], horizontal plane
    # (docs/theory.md eq. (7.16))
    m1, m2, d, Izz = 3.0, 2.0, 0.4, 0.05
    b = screwdyn.ModelBuilder("pr", gravity=(0, 0, -9.81))
    b.add_body("slider", "base", "q1", "prismatic", axis=(1, 0, 0), inertial=point_mass(m1, [-0.2, 0, 0]))
    b.add_body("arm", "slider", "q2", "revolute", axis=(0, 0, 1),
               inertial=screwdyn.inertia.RigidBody(m2, [d, 0, 0], np.diag([0.01, 0.02, Izz])))
    model = b.build()
    for _ in range(5):
        q, qd, qdd = random_state(rng, 2)
        s, c = np.sin(q[1]), np.cos(q[1])
        M = np.array([[m1 + m2, -m2 * d * s], [-m2 * d * s, Izz + m2 * d**2]])
        cv = np.array([-m2 * d * c * qd[1] ** 2, 0.0])
        assert np.allclose(screwdyn.inverse_dynamics(model, q, qd, qdd), M @ qdd + cv, atol=1e-12)


def test_actuated_pendulum_of_note_004():
    # I thdd + m g d sin th = n_r tau_m - (b_l + b_m n_r^2) thd + l cos th F_x,  I = I_l + m d^2 + I_m n_r^2
    # (docs/theory.md eqs. (7.17), (7.18))
    m, d, l, I_l, I_m, n_r, b_l, b_m, g = 1.5, 0.3, 0.6, 0.02, 1e-4, 50.0, 0.1, 1e-4, 9.81
    b = screwdyn.ModelBuilder("pendulum", gravity=(0, -g, 0))
    # the link hangs along -y at theta = 0 and swings about z
    b.add_body("link", "base", "theta", "revolute", axis=(0, 0, 1),
               inertial=screwdyn.inertia.RigidBody(m, [0, -d, 0], np.diag([0.0, 0.0, I_l])),
               rotor_inertia=I_m, gear_ratio=n_r, damping=b_l + b_m * n_r**2)
    b.add_frame("tip", "link", screwdyn.spatial.transform(None, [0, -l, 0]))
    model = b.build()
    th, thd, thdd, Fx = 0.7, -1.3, 2.1, 4.0
    I = I_l + m * d**2 + I_m * n_r**2
    rhs_without_motor = I * thdd + m * g * d * np.sin(th) + (b_l + b_m * n_r**2) * thd - l * np.cos(th) * Fx
    # F_x pushes the tip along the base x axis; in the tip frame that is R^T (Fx, 0, 0)
    R = screwdyn.spatial.exp_so3([0, 0, th])
    f_tip = np.concatenate([np.zeros(3), R.T @ [Fx, 0, 0]])
    tau = screwdyn.inverse_dynamics(model, [th], [thd], [thdd], {"tip": f_tip}, friction=True)
    assert np.allclose(tau, rhs_without_motor)       # = n_r tau_m


def test_modern_robotics_documented_example():
    mr = pytest.importorskip("modern_robotics")
    from screwdyn.compat import modern_robotics as smr
    M01 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]])
    M12 = np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]])
    M23 = np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]])
    M34 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]])
    G = [np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7]), np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393]),
         np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275])]
    Slist = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]).T
    args = ([0.1, 0.1, 0.1], [0.1, 0.2, 0.3], [2, 1.5, 1], [0, 0, -9.8], [1, 1, 1, 1, 1, 1],
            [M01, M12, M23, M34], G, Slist)
    tau = smr.InverseDynamics(*args)
    assert np.allclose(tau, [74.69616155, -33.06766016, -3.23057314], atol=1e-8)
    assert np.allclose(tau, mr.InverseDynamics(*args), rtol=1e-12)


def test_modern_robotics_random_chains_and_trajectory(rng):
    mr = pytest.importorskip("modern_robotics")
    from screwdyn.compat import modern_robotics as smr
    n = 5
    Ms, Gs, S = random_chain(rng, n)
    N = 6
    th, dth, ddth = (rng.normal(size=(N, n)) for _ in range(3))
    Ftip = rng.normal(size=(N, 6))
    g = np.array([0, 0, -9.8])
    ours = smr.InverseDynamicsTrajectory(th, dth, ddth, g, Ftip, Ms, Gs, S)
    ref = mr.InverseDynamicsTrajectory(th, dth, ddth, g, Ftip, Ms, Gs, S)
    assert np.allclose(ours, ref, rtol=1e-10, atol=1e-10)


def test_from_screws_keeps_the_com_frames(rng):
    """The tip and CoM frames of a screw-list chain keep their home poses."""
    from screwdyn.spatial import exp_so3, transform
    Ms = [transform(exp_so3(rng.normal(size=3)), rng.normal(size=3)) for _ in range(3)]
    Gs = [np.diag([0.1, 0.2, 0.3, 1, 1, 1.0])] * 2
    S = np.array([[0, 0, 1, 0, -0.5, 0], [1, 0, 0, 0, 0, 0.3]]).T
    model = screwdyn.Model.from_screws(Ms, Gs, S)
    assert model.frame_names[-1] == "ee"
    poses = {}
    for k, name in enumerate(model.frame_names):
        b, T = model.frame_body[k], model.frame_pose[k]
        chain = [b]
        while chain[-1] >= 0:
            chain.append(model.parent[chain[-1]])
        X = T
        for body in chain[:-1]:
            X = model.T_parent_body[body] @ X
        poses[name] = X
    assert np.allclose(poses["link1_com"], Ms[0])
    assert np.allclose(poses["link2_com"], Ms[0] @ Ms[1])
    assert np.allclose(poses["ee"], Ms[0] @ Ms[1] @ Ms[2])


@pytest.mark.parametrize("seed", range(4))
def test_coordinate_axis_joints_match_pinocchio(seed):
    """Joints about +-x, +-y, +-z (most URDF joints) take a specialised transform: same numbers."""
    rng = np.random.default_rng(100 + seed)
    model = random_model(rng, n=8, fixed=2, aligned=True, armature=True)
    assert (model._kd[:-1, screwdyn.algorithms.layout.AXISK] > 0).any()
    pm = to_pinocchio(model)
    pd = pm.createData()
    q, qd, qdd = random_state(rng, model.n)
    tol = dict(rtol=1e-10, atol=1e-10)
    assert np.allclose(screwdyn.inverse_dynamics(model, q, qd, qdd), pin.rnea(pm, pd, q, qd, qdd), **tol)
    M = pin.crba(pm, pd, q)
    assert np.allclose(screwdyn.mass_matrix(model, q), np.triu(M) + np.triu(M, 1).T, **tol)
    assert np.allclose(screwdyn.forward_dynamics(model, q, qd, qdd), pin.aba(pm, pd, q, qd, qdd), **tol)
