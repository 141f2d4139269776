"""The Coriolis matrix against Pinocchio's ``computeCoriolisMatrix`` (real robots, random trees),
the Christoffel symbols of finite-difference ``dM/dq`` (docs/theory.md §7.3), the skew symmetry
of ``Mdot - 2C``, ``C qd`` = the velocity-product torques, and the closed forms of docs/theory.md
§7.5 and of a planar RP arm;
plus gravity and bias torques against ``computeGeneralizedGravity`` and ``nonLinearEffects``."""

import numpy as np
import pytest

import screwdyn
from helpers import random_model, random_state, to_pin, to_pinocchio, urdf_robot
from screwdyn.inertia import RigidBody, point_mass
from screwdyn.spatial import transform

pin = pytest.importorskip("pinocchio")


@pytest.mark.parametrize("name", ["panda", "ur5", "talos_full_v2"])
def test_coriolis_gravity_and_bias_match_pinocchio_on_real_robots(name, rng):
    model, pm, idx = urdf_robot(name)
    pd = pm.createData()
    for _ in range(3):
        q, qd, _ = random_state(rng, model.n)
        qp, qdp = to_pin(q, idx), to_pin(qd, idx)
        C = screwdyn.coriolis_matrix(model, q, qd)
        ref = pin.computeCoriolisMatrix(pm, pd, qp, qdp)[np.ix_(idx, idx)]
        assert np.allclose(C, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
        ref = pin.computeGeneralizedGravity(pm, pd, qp)[idx]
        assert np.allclose(screwdyn.gravity_torques(model, q), ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
        ref = pin.nonLinearEffects(pm, pd, qp, qdp)[idx]
        assert np.allclose(screwdyn.bias_torques(model, q, qd), ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("seed", range(8))
def test_coriolis_matches_pinocchio_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=int(rng.integers(1, 14)), fixed=int(rng.integers(0, 4)), armature=True,
                         gravity=rng.normal(size=3) * 5)
    pm = to_pinocchio(model)
    pd = pm.createData()
    q, qd, _ = random_state(rng, model.n)
    ref = pin.computeCoriolisMatrix(pm, pd, q, qd)
    C = screwdyn.coriolis_matrix(model, q, qd)
    assert np.allclose(C, ref, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(ref).max()))
    ref = pin.nonLinearEffects(pm, pd, q, qd)
    assert np.allclose(screwdyn.bias_torques(model, q, qd), ref, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(ref).max()))
    ref = pin.computeGeneralizedGravity(pm, pd, q)
    assert np.allclose(screwdyn.gravity_torques(model, q), ref, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(ref).max()))


def dM_dq(model, q, h=1e-6):
    """``D[i] = dM/dq_i`` by central differences."""
    return np.array([(screwdyn.mass_matrix(model, q + h * e) - screwdyn.mass_matrix(model, q - h * e)) / (2 * h)
                     for e in np.eye(model.n)])


def test_coriolis_is_the_christoffel_matrix(rng):
    """C_kj = sum_i c_ijk qd_i, c_ijk = 1/2 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k) (docs/theory.md
    eqs. (7.6), (7.8))."""
    for _ in range(3):
        model = random_model(rng, n=6, fixed=2, armature=True)
        q, qd, _ = random_state(rng, model.n)
        D = dM_dq(model, q)                                   # D[i, k, j] = dM_kj / dq_i
        # c[i, k, j] = 1/2 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k)
        c = 0.5 * (D + np.einsum("jki->ikj", D) - np.einsum("kij->ikj", D))
        C_ref = np.einsum("ikj,i->kj", c, qd)
        C = screwdyn.coriolis_matrix(model, q, qd)
        assert np.allclose(C, C_ref, rtol=1e-6, atol=1e-6 * np.abs(C).max())


def test_mdot_minus_2c_is_skew_and_c_qd_is_the_velocity_product_torque(rng):
    for _ in range(3):
        model = random_model(rng, n=9, fixed=2, armature=True)
        q, qd, _ = random_state(rng, model.n)
        h = 1e-6
        Mdot = (screwdyn.mass_matrix(model, q + h * qd) - screwdyn.mass_matrix(model, q - h * qd)) / (2 * h)
        C = screwdyn.coriolis_matrix(model, q, qd)
        N = Mdot - 2 * C
        assert np.allclose(N, -N.T, atol=1e-6 * np.abs(Mdot).max())
        c = screwdyn.bias_torques(model, q, qd) - screwdyn.gravity_torques(model, q)
        assert np.allclose(C @ qd, c, rtol=1e-10, atol=1e-10 * np.abs(c).max())


def test_gravity_and_bias_torques_are_rnea_terms(rng):
    model = random_model(rng, n=7, armature=True)
    q, qd, qdd = random_state(rng, model.n)
    F = rng.normal(size=(model.n, 6))
    z = np.zeros(model.n)
    assert np.array_equal(screwdyn.gravity_torques(model, q), screwdyn.inverse_dynamics(model, q, z, z))
    assert np.array_equal(screwdyn.bias_torques(model, q, qd, F), screwdyn.inverse_dynamics(model, q, qd, z, F))
    M = screwdyn.mass_matrix(model, q)
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd, F)
    assert np.allclose(tau, M @ qdd + screwdyn.bias_torques(model, q, qd, F), rtol=1e-10, atol=1e-10)


def test_planar_2r_closed_form_of_note_001(rng):
    # with h = -m2 L1 L2 sin q2 (-eta of docs/theory.md §7.5): C = [[h qd2, h (qd1 + qd2)], [-h qd1, 0]]
    # (eq. (7.14)); g as in eq. (7.15)
    m1, m2, L1, L2, g = 2.0, 1.5, 1.3, 0.7, 9.81
    b = screwdyn.ModelBuilder("planar_2r", gravity=(0, -g, 0))
    b.add_body("link1", "base", "joint1", "revolute", inertial=point_mass(m1, [L1, 0, 0]))
    b.add_body("link2", "link1", "joint2", "revolute", origin=transform(None, [L1, 0, 0]),
               inertial=point_mass(m2, [L2, 0, 0]))
    model = b.build()
    for _ in range(5):
        (t1, t2), (d1, d2), _ = random_state(rng, 2)
        h = -m2 * L1 * L2 * np.sin(t2)
        C = np.array([[h * d2, h * (d1 + d2)], [-h * d1, 0.0]])
        assert np.allclose(screwdyn.coriolis_matrix(model, [t1, t2], [d1, d2]), C, atol=1e-12)
        gv = [(m1 + m2) * L1 * g * np.cos(t1) + m2 * g * L2 * np.cos(t1 + t2), m2 * g * L2 * np.cos(t1 + t2)]
        assert np.allclose(screwdyn.gravity_torques(model, [t1, t2]), gv, atol=1e-12)


def test_planar_rp_closed_form_of_note_001(rng):
    # M = diag(m1 L1^2 + m2 q2^2, m2): C = [[m2 q2 qd2, m2 q2 qd1], [-m2 q2 qd1, 0]],
    # g = [(m1 L1 + m2 q2) g cos q1, m2 g sin q1]
    m1, m2, L1, g = 1.2, 0.8, 0.5, 9.81
    b = screwdyn.ModelBuilder("planar_rp", gravity=(0, -g, 0))
    b.add_body("link1", "base", "joint1", "revolute", inertial=point_mass(m1, [L1, 0, 0]))
    b.add_body("slider", "link1", "joint2", "prismatic", axis=(1, 0, 0), inertial=point_mass(m2))
    model = b.build()
    for _ in range(5):
        q, qd, _ = random_state(rng, 2)
        C = np.array([[m2 * q[1] * qd[1], m2 * q[1] * qd[0]], [-m2 * q[1] * qd[0], 0.0]])
        assert np.allclose(screwdyn.coriolis_matrix(model, q, qd), C, atol=1e-12)
        gv = [(m1 * L1 + m2 * q[1]) * g * np.cos(q[0]), m2 * g * np.sin(q[0])]
        assert np.allclose(screwdyn.gravity_torques(model, q), gv, atol=1e-12)


def test_pr_robot_closed_form_of_note_004(rng):
    # C = [[0, -m2 d cos q2 qd2], [0, 0]]: c_1 = -m2 d cos q2 qd2^2, no Coriolis terms (docs/theory.md eq. (7.16))
    m1, m2, d, Izz = 3.0, 2.0, 0.4, 0.05
    b = screwdyn.ModelBuilder("pr", gravity=(0, 0, -9.81))
    b.add_body("slider", "base", "q1", "prismatic", axis=(1, 0, 0), inertial=point_mass(m1, [-0.2, 0, 0]))
    b.add_body("arm", "slider", "q2", "revolute", axis=(0, 0, 1),
               inertial=RigidBody(m2, [d, 0, 0], np.diag([0.03, 0.02, Izz])))
    model = b.build()
    for _ in range(5):
        q, qd, _ = random_state(rng, 2)
        C = np.array([[0.0, -m2 * d * np.cos(q[1]) * qd[1]], [0.0, 0.0]])
        assert np.allclose(screwdyn.coriolis_matrix(model, q, qd), C, atol=1e-12)
        assert np.allclose(screwdyn.gravity_torques(model, q), 0.0, atol=1e-12)   # horizontal plane


def test_batch_matches_single_calls(rng):
    model = random_model(rng, n=6)
    Q, QD, _ = random_state(rng, model.n, (2, 3))
    C = screwdyn.coriolis_matrix(model, Q, QD)
    G = screwdyn.gravity_torques(model, Q)
    H = screwdyn.bias_torques(model, Q, QD)
    assert C.shape == (2, 3, model.n, model.n) and G.shape == H.shape == (2, 3, model.n)
    for a in range(2):
        for b in range(3):
            assert np.array_equal(C[a, b], screwdyn.coriolis_matrix(model, Q[a, b], QD[a, b]))
            assert np.array_equal(G[a, b], screwdyn.gravity_torques(model, Q[a, b]))
            assert np.array_equal(H[a, b], screwdyn.bias_torques(model, Q[a, b], QD[a, b]))


@pytest.mark.parametrize("groups, extra", [(0, 1), (1, -1), (2, 3), (9, 5)])
def test_batch_in_lanes_equals_single_states_exactly(rng, groups, extra):
    """The batch kernel runs LANES states side by side (vectorised): every state, in full and
    part-filled groups, equals the single-state kernel bit for bit, on a tree with revolute joints
    about coordinate and other axes and prismatic joints, joint angles beyond the polynomial
    sine's range included (entries of different branches stay zero); a NaN in one state is
    reported at its index, and an inf in qd too."""
    from screwdyn.algorithms.coriolis import LANES
    B = groups * LANES + extra
    for aligned in (False, True):
        model = random_model(rng, n=9, fixed=2, branching=0.5, aligned=aligned)
        Q, QD, _ = random_state(rng, model.n, (B,))
        Q[0, 0] = 3e8       # beyond joints.SINCOS_LIMIT
        Q[-1, -1] = -2e8
        C = screwdyn.coriolis_matrix(model, Q, QD)
        for k in range(B):
            assert np.array_equal(C[k], screwdyn.coriolis_matrix(model, Q[k], QD[k]))
    Q[B // 2, 1] = np.nan
    with pytest.raises(ValueError, match=rf"q contains NaN or inf \(batch index \({B // 2},\)\)"):
        screwdyn.coriolis_matrix(model, Q, QD)
    Q[B // 2, 1] = 0.0
    QD[B - 1, 0] = -np.inf
    with pytest.raises(ValueError, match=rf"qd contains NaN or inf \(batch index \({B - 1},\)\)"):
        screwdyn.coriolis_matrix(model, Q, QD)


def test_batch_of_a_model_too_large_for_lanes_runs_fewer_lanes(rng):
    """A model whose LANES lanes of work do not fit the stack (here 70 bodies) runs its batch with
    the most of LANES / 2, LANES / 4, ... that fit; the numbers are the one-state kernel's."""
    from screwdyn.dynamics import _CORIOLIS
    model = random_model(rng, n=70, fixed=0, branching=0.3)
    assert _CORIOLIS.lanes(model.n) == 4 < _CORIOLIS.entry.lanes and _CORIOLIS.lanes(40) == _CORIOLIS.entry.lanes
    Q, QD, _ = random_state(rng, model.n, (3,))
    C = screwdyn.coriolis_matrix(model, Q, QD)
    for k in range(3):
        assert np.array_equal(C[k], screwdyn.coriolis_matrix(model, Q[k], QD[k]))
