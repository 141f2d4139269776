"""Forward dynamics by the Articulated-Body Algorithm: Pinocchio's ``aba`` on real robots and
random trees (armature, external wrenches), ABA(RNEA(qdd)) = qdd, agreement with the CRBA route,
and the actuated pendulum of docs/theory.md §7.5 with a geared rotor, viscous friction and a tip
force."""
import warnings

import numpy as np
import pytest

import screwdyn
from helpers import random_model, random_state, to_pin, to_pinocchio, urdf_robot
from screwdyn.inertia import RigidBody, point_mass
from screwdyn.io.urdf import example_robot_data_path
from screwdyn.spatial import exp_so3, transform

pin = pytest.importorskip("pinocchio")


def pin_forces(F, joint_ids, njoints):
    """Our body wrenches (n, f) as Pinocchio forces (f, n) on the joints carrying the bodies."""
    forces = [pin.Force.Zero() for _ in range(njoints)]
    for f, j in zip(F, joint_ids):
        forces[j] = pin.Force(np.concatenate([f[3:], f[:3]]))
    return forces


@pytest.mark.parametrize("name", ["panda", "ur5", "talos_full_v2"])
def test_aba_matches_pinocchio_on_real_robots(name, rng):
    model, pm, idx = urdf_robot(name, armature=True)
    pd = pm.createData()
    joint_ids = [pm.getJointId(j) for j in model.joint_names]
    for _ in range(3):
        q, qd, _ = random_state(rng, model.n)
        tau = rng.normal(size=model.n) * 10
        F = rng.normal(size=(model.n, 6))
        qdd = screwdyn.forward_dynamics(model, q, qd, tau, F)
        ref = pin.aba(pm, pd, to_pin(q, idx), to_pin(qd, idx), to_pin(tau, idx), pin_forces(F, joint_ids, pm.njoints))
        assert np.allclose(qdd, ref[idx], rtol=1e-10, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("seed", range(8))
def test_aba_matches_pinocchio_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=int(rng.integers(1, 14)), fixed=int(rng.integers(0, 4)), armature=True,
                         gravity=rng.normal(size=3) * 5)
    pm = to_pinocchio(model)
    q, qd, _ = random_state(rng, model.n)
    tau = rng.normal(size=model.n) * 5
    F = rng.normal(size=(model.n, 6))
    ref = pin.aba(pm, pm.createData(), q, qd, tau, pin_forces(F, range(1, model.n + 1), pm.njoints))
    for method in ("aba", "crba"):
        qdd = screwdyn.forward_dynamics(model, q, qd, tau, F, method=method)
        assert np.allclose(qdd, ref, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(ref).max())), method


@pytest.mark.parametrize("method", ["aba", "crba"])
def test_forward_dynamics_inverts_inverse_dynamics(method, rng):
    """ABA(RNEA(qdd)) = qdd, with armature, external wrenches and friction."""
    for _ in range(5):
        model = random_model(rng, n=int(rng.integers(2, 12)), armature=True)
        q, qd, qdd = random_state(rng, model.n)
        F = rng.normal(size=(model.n, 6))
        tau = screwdyn.inverse_dynamics(model, q, qd, qdd, F, friction=True)
        back = screwdyn.forward_dynamics(model, q, qd, tau, F, method=method, friction=True)
        assert np.allclose(back, qdd, rtol=1e-9, atol=1e-9 * np.abs(qdd).max())


def test_forward_dynamics_solves_m_qdd_equals_tau_minus_h(rng):
    model = random_model(rng, n=8, armature=True)
    q, qd, _ = random_state(rng, model.n)
    tau = rng.normal(size=model.n)
    M = screwdyn.mass_matrix(model, q)
    h = screwdyn.bias_torques(model, q, qd)
    assert np.allclose(screwdyn.forward_dynamics(model, q, qd, tau), np.linalg.solve(M, tau - h), rtol=1e-10)


def test_friction_is_subtracted_only_when_asked(rng):
    model = random_model(rng, n=5)
    q, qd, _ = random_state(rng, model.n)
    tau = rng.normal(size=model.n)
    tf = screwdyn.friction_torques(model, qd)
    assert np.any(tf != 0)
    assert np.allclose(screwdyn.forward_dynamics(model, q, qd, tau, friction=True),
                       screwdyn.forward_dynamics(model, q, qd, tau - tf), rtol=1e-13, atol=1e-13)


def test_actuated_pendulum_with_rotor_friction_and_tip_force_of_note_004():
    # I thdd + m g0 d sin th = n_r tau_m - (b_l + b_m n_r^2) thd + l cos th F_x,  I = I_l + m d^2 + I_m n_r^2
    # (docs/theory.md eqs. (7.17), (7.18))
    m, d, l, I_l, I_m, n_r, b_l, b_m, g0 = 1.5, 0.3, 0.6, 0.02, 1e-4, 50.0, 0.1, 1e-4, 9.81
    b = screwdyn.ModelBuilder("pendulum", gravity=(0, -g0, 0))
    # the link hangs along -y at theta = 0 and swings about z
    b.add_body("link", "base", "theta", "revolute", inertial=RigidBody(m, [0, -d, 0], np.diag([I_l / 2, I_l / 2, I_l])),
               rotor_inertia=I_m, gear_ratio=n_r, damping=b_l + b_m * n_r**2)
    b.add_frame("tip", "link", transform(None, [0, -l, 0]))
    model = b.build()
    I = I_l + m * d**2 + I_m * n_r**2
    for th, thd, tau_m, Fx in [(0.7, -1.3, 0.02, 4.0), (-2.0, 0.4, -0.05, -1.0), (0.0, 0.0, 0.0, 0.0)]:
        R = exp_so3([0, 0, th])
        f_tip = np.concatenate([np.zeros(3), R.T @ [Fx, 0, 0]])   # F_x along the base x axis, in the tip frame
        thdd = screwdyn.forward_dynamics(model, [th], [thd], [n_r * tau_m], {"tip": f_tip}, friction=True)
        expected = (n_r * tau_m - (b_l + b_m * n_r**2) * thd + l * np.cos(th) * Fx - m * g0 * d * np.sin(th)) / I
        assert np.allclose(thdd, [expected], rtol=1e-12, atol=1e-12)


def test_pr_robot_of_note_004_accelerates_joint_2_under_a_force_on_joint_1():
    """The PR robot of docs/theory.md eq. (7.16): ``M_12 = -m2 d sin q2``, so a force u_1 alone
    accelerates joint 2 unless sin q2 = 0."""
    m1, m2, d, Izz = 3.0, 2.0, 0.4, 0.05
    b = screwdyn.ModelBuilder("pr", gravity=(0, 0, -9.81))
    b.add_body("slider", "base", "q1", "prismatic", axis=(1, 0, 0), inertial=point_mass(m1))
    b.add_body("arm", "slider", "q2", "revolute", axis=(0, 0, 1),
               inertial=RigidBody(m2, [d, 0, 0], np.diag([0.03, 0.02, Izz])))
    model = b.build()
    for q2 in (0.0, 0.9):
        M = np.array([[m1 + m2, -m2 * d * np.sin(q2)], [-m2 * d * np.sin(q2), Izz + m2 * d**2]])
        qdd = screwdyn.forward_dynamics(model, [0.3, q2], [0.0, 0.0], [1.0, 0.0])
        assert np.allclose(qdd, np.linalg.solve(M, [1.0, 0.0]), atol=1e-13)
        assert (abs(qdd[1]) > 1e-3) == (q2 != 0.0)


def test_massless_joint_is_a_singular_mass_matrix():
    b = screwdyn.ModelBuilder("massless")
    b.add_body("a", "base", "j", "revolute", inertial=point_mass(0.0))
    model = b.build()
    for method in ("aba", "crba"):
        with pytest.raises(screwdyn.ModelError, match="singular"):
            screwdyn.forward_dynamics(model, [0.1], [0.0], [1.0], method=method)
    with pytest.raises(screwdyn.ModelError, match="singular"):
        screwdyn.forward_dynamics(model, [[0.1], [0.2]], [0.0], [1.0])
    # a rotor makes it regular again
    geared = model.replace(rotor_inertia=np.array([0.5]))
    assert np.allclose(screwdyn.forward_dynamics(geared, [0.1], [0.0], [1.0]), [2.0])


def test_batch_matches_single_calls(rng):
    model = random_model(rng, n=6, armature=True)
    Q, QD, _ = random_state(rng, model.n, (3, 2))
    TAU = rng.normal(size=(3, 2, model.n))
    F = rng.normal(size=(3, 2, model.n, 6))
    for method in ("aba", "crba"):
        qdd = screwdyn.forward_dynamics(model, Q, QD, TAU, F, method=method)
        assert qdd.shape == (3, 2, model.n)
        for a in range(3):
            for b in range(2):
                single = screwdyn.forward_dynamics(model, Q[a, b], QD[a, b], TAU[a, b], F[a, b], method=method)
                assert np.array_equal(qdd[a, b], single)
    # one torque vector broadcast against a batch of states
    qdd = screwdyn.forward_dynamics(model, Q, QD, TAU[0, 0])
    assert np.array_equal(qdd[2, 1], screwdyn.forward_dynamics(model, Q[2, 1], QD[2, 1], TAU[0, 0]))


@pytest.mark.parametrize("groups, extra", [(0, 1), (1, -1), (1, 1), (17, 3)])
def test_batch_in_lanes_equals_single_states_exactly(rng, groups, extra):
    """The batch ABA runs LANES states side by side (aba_lanes, vectorised): every state, in full
    and partial groups, with and without wrenches, angles beyond the polynomial sine's range
    included, equals the single-state kernel bit for bit; a NaN in one state is reported at its
    index. (A singular mass matrix in a batch: test_massless_joint_is_a_singular_mass_matrix.)"""
    from screwdyn.algorithms.aba import LANES
    B = groups * LANES + extra
    model = random_model(rng, n=9, fixed=2, branching=0.5, armature=True)
    Q, QD, _ = random_state(rng, model.n, (B,))
    TAU = rng.normal(size=(B, model.n))
    Q[0, 0] = 3e8
    FE = rng.normal(size=(B, model.n, 6))
    qdd = screwdyn.forward_dynamics(model, Q, QD, TAU)
    qdd_f = screwdyn.forward_dynamics(model, Q, QD, TAU, FE)
    for k in range(B):
        assert np.array_equal(qdd[k], screwdyn.forward_dynamics(model, Q[k], QD[k], TAU[k]))
        assert np.array_equal(qdd_f[k], screwdyn.forward_dynamics(model, Q[k], QD[k], TAU[k], FE[k]))
    TAU[B // 2, 2] = np.inf
    with pytest.raises(ValueError, match=rf"tau contains NaN or inf \(batch index \({B // 2},\)\)"):
        screwdyn.forward_dynamics(model, Q, QD, TAU)


def test_forward_dynamics_is_unchanged_when_the_robot_stands_far_from_the_base_origin(rng):
    """Uniform gravity and no lever arm between bodies change when every root body moves by 1 km:
    ``qdd`` stays the same to near machine precision (world-aligned frames at the bodies)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = screwdyn.load_urdf(example_robot_data_path("panda"))
    T = model.T_parent_body.copy()
    T[model.parent < 0, :3, 3] += [1000.0, -700.0, 300.0]
    far = model.replace(T_parent_body=T)
    for _ in range(3):
        q, qd, tau = rng.normal(size=(3, model.n))
        qdd = screwdyn.forward_dynamics(model, q, qd, tau)
        assert np.allclose(screwdyn.forward_dynamics(far, q, qd, tau), qdd, rtol=1e-11, atol=1e-11 * np.abs(qdd).max())
