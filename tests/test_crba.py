"""The mass matrix by CRBA against independent oracles: Pinocchio's ``crba`` on real robots and
random trees, the construction by ``n`` RNEA columns (docs/theory.md eq. (6.12)), and the closed
forms of docs/theory.md §7.5 (planar 2R, PR robot, actuated pendulum with a geared rotor) and of a
planar RP arm."""
import warnings

import numpy as np
import pytest

import screwdyn
from helpers import random_model, random_state, to_pin, to_pinocchio, urdf_robot
from screwdyn.inertia import RigidBody, point_mass
from screwdyn.io.urdf import example_robot_data_path
from screwdyn.spatial import transform

pin = pytest.importorskip("pinocchio")


def full(upper):
    """Pinocchio fills only the upper triangle of M and M^{-1}."""
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.mark.parametrize("name", ["panda", "ur5", "talos_full_v2"])
def test_mass_matrix_matches_pinocchio_on_real_robots(name, rng):
    model, pm, idx = urdf_robot(name, armature=True)
    pd = pm.createData()
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, model.n)
        M = screwdyn.mass_matrix(model, q)
        ref = full(pin.crba(pm, pd, to_pin(q, idx)))[np.ix_(idx, idx)]
        assert np.allclose(M, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("seed", range(8))
def test_mass_matrix_matches_pinocchio_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=int(rng.integers(1, 14)), fixed=int(rng.integers(0, 4)), armature=True)
    pm = to_pinocchio(model)
    q, _, _ = random_state(rng, model.n)
    ref = full(pin.crba(pm, pm.createData(), q))
    assert np.allclose(screwdyn.mass_matrix(model, q), ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_mass_matrix_equals_n_rnea_columns_of_note_002(rng):
    """tau is linear in qdd, so M[:, j] = ID(q, qd, e_j) - ID(q, qd, 0) exactly (docs/theory.md
    eq. (6.12))."""
    model = random_model(rng, n=9, fixed=3, armature=True)
    q, qd, _ = random_state(rng, model.n)
    h = screwdyn.inverse_dynamics(model, q, qd, np.zeros(model.n))
    cols = np.array([screwdyn.inverse_dynamics(model, q, qd, e) - h for e in np.eye(model.n)]).T
    M = screwdyn.mass_matrix(model, q)
    assert np.allclose(M, cols, rtol=1e-10, atol=1e-10 * np.abs(M).max())


def test_symmetric_positive_definite_and_decoupled_branches(rng):
    model = random_model(rng, n=12, branching=0.8, armature=True)
    q, _, _ = random_state(rng, model.n)
    M = screwdyn.mass_matrix(model, q)
    assert np.array_equal(M, M.T)
    assert np.all(np.linalg.eigvalsh(M) > 0)
    # joints on different branches do not couple: M_ij = 0 unless one is an ancestor of the other
    ancestors = [set() for _ in range(model.n)]
    for i in range(model.n):
        j = i
        while j >= 0:
            ancestors[i].add(j)
            j = model.parent[j]
    for i in range(model.n):
        for j in range(model.n):
            if j not in ancestors[i] and i not in ancestors[j]:
                assert M[i, j] == 0.0
    assert any(j not in ancestors[i] and i not in ancestors[j] for i in range(model.n) for j in range(model.n))


def test_armature_is_added_on_the_diagonal(rng):
    model = random_model(rng, n=6, armature=True)
    bare = model.replace(rotor_inertia=np.zeros(model.n))
    q, _, _ = random_state(rng, model.n)
    assert np.allclose(screwdyn.mass_matrix(model, q) - screwdyn.mass_matrix(bare, q), np.diag(model.armature),
                       atol=1e-12)
    assert np.allclose(model.armature, model.gear_ratio**2 * model.rotor_inertia)


def planar_2r(m1, m2, L1, L2, g=9.81):
    b = screwdyn.ModelBuilder("planar_2r", gravity=(0, -g, 0))
    b.add_body("link1", "base", "joint1", "revolute", inertial=point_mass(m1, [L1, 0, 0]))
    b.add_body("link2", "link1", "joint2", "revolute", origin=transform(None, [L1, 0, 0]),
               inertial=point_mass(m2, [L2, 0, 0]))
    return b.build()


def test_planar_2r_closed_form_of_note_001(rng):
    m1, m2, L1, L2 = 2.0, 1.5, 1.3, 0.7
    model = planar_2r(m1, m2, L1, L2)
    for t1, t2 in rng.uniform(-np.pi, np.pi, (5, 2)):
        c2 = np.cos(t2)
        M = np.array([[m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * c2 + L2**2), m2 * (L1 * L2 * c2 + L2**2)],
                      [m2 * (L1 * L2 * c2 + L2**2), m2 * L2**2]])
        assert np.allclose(screwdyn.mass_matrix(model, [t1, t2]), M, rtol=1e-12, atol=1e-12)


def planar_rp(m1, m2, L1, g=9.81):
    """A planar RP chain: a revolute joint about z, then a slider along the link's x axis
    carrying a point mass m2 at distance q2; link 1 a point mass m1 at L1."""
    b = screwdyn.ModelBuilder("planar_rp", gravity=(0, -g, 0))
    b.add_body("link1", "base", "joint1", "revolute", inertial=point_mass(m1, [L1, 0, 0]))
    b.add_body("slider", "link1", "joint2", "prismatic", axis=(1, 0, 0), inertial=point_mass(m2))
    return b.build()


def test_planar_rp_closed_form_of_note_001(rng):
    # M = diag(m1 L1^2 + m2 q2^2, m2)
    m1, m2, L1 = 1.2, 0.8, 0.5
    model = planar_rp(m1, m2, L1)
    for q in rng.uniform(-2, 2, (5, 2)):
        assert np.allclose(screwdyn.mass_matrix(model, q), np.diag([m1 * L1**2 + m2 * q[1] ** 2, m2]), atol=1e-12)


def pr_robot(m1, m2, d, Izz):
    """The PR robot of docs/theory.md §7.5, on a horizontal plane."""
    b = screwdyn.ModelBuilder("pr", gravity=(0, 0, -9.81))
    b.add_body("slider", "base", "q1", "prismatic", axis=(1, 0, 0), inertial=point_mass(m1, [-0.2, 0, 0]))
    b.add_body("arm", "slider", "q2", "revolute", axis=(0, 0, 1),
               inertial=RigidBody(m2, [d, 0, 0], np.diag([0.03, 0.02, Izz])))
    return b.build()


def test_pr_robot_closed_form_of_note_004(rng):
    # M = [[m1 + m2, -m2 d sin q2], [-m2 d sin q2, Izz + m2 d^2]]; q1 is cyclic, M_22 constant
    # (docs/theory.md eq. (7.16))
    m1, m2, d, Izz = 3.0, 2.0, 0.4, 0.05
    model = pr_robot(m1, m2, d, Izz)
    for q in rng.uniform(-3, 3, (5, 2)):
        s = np.sin(q[1])
        M = np.array([[m1 + m2, -m2 * d * s], [-m2 * d * s, Izz + m2 * d**2]])
        assert np.allclose(screwdyn.mass_matrix(model, q), M, atol=1e-12)


def test_actuated_pendulum_reflected_inertia_of_note_004():
    # I = I_l + m d^2 + I_m n_r^2 (docs/theory.md eq. (7.17))
    m, d, I_l, I_m, n_r = 1.5, 0.3, 0.02, 1e-4, 50.0
    b = screwdyn.ModelBuilder("pendulum", gravity=(0, -9.81, 0))
    b.add_body("link", "base", "theta", "revolute", inertial=RigidBody(m, [0, -d, 0], np.diag([I_l / 2, I_l / 2, I_l])),
               rotor_inertia=I_m, gear_ratio=n_r)
    model = b.build()
    for th in (0.0, 0.7, -2.0):
        assert np.allclose(screwdyn.mass_matrix(model, [th]), [[I_l + m * d**2 + I_m * n_r**2]], rtol=1e-14)


def test_batch_matches_single_calls_and_out(rng):
    model = random_model(rng, n=7, armature=True)
    Q, _, _ = random_state(rng, model.n, (2, 3))
    M = screwdyn.mass_matrix(model, Q)
    assert M.shape == (2, 3, model.n, model.n)
    for a in range(2):
        for b in range(3):
            assert np.array_equal(M[a, b], screwdyn.mass_matrix(model, Q[a, b]))
    out = np.empty((2, 3, model.n, model.n))
    assert screwdyn.mass_matrix(model, Q, out=out) is out
    assert np.array_equal(out, M)


@pytest.mark.parametrize("groups, extra", [(0, 1), (1, -1), (1, 1), (9, 3)])
def test_batch_in_lanes_equals_single_states_exactly(rng, groups, extra):
    """The batch kernel runs LANES states side by side (vectorised): every state, in full and
    part-filled groups, joint angles beyond the polynomial sine's range included, equals the
    single-state kernel bit for bit, on a tree (entries of different branches stay zero); a NaN
    in one state is reported at its index."""
    from screwdyn.algorithms.crba import LANES
    B = groups * LANES + extra
    model = random_model(rng, n=9, fixed=2, branching=0.5)
    Q, _, _ = random_state(rng, model.n, (B,))
    Q[0, 0] = 3e8       # beyond joints.SINCOS_LIMIT
    Q[-1, -1] = -2e8
    M = screwdyn.mass_matrix(model, Q)
    for k in range(B):
        assert np.array_equal(M[k], screwdyn.mass_matrix(model, Q[k]))
    Q[B // 2, 1] = np.inf
    with pytest.raises(ValueError, match=rf"q contains NaN or inf \(batch index \({B // 2},\)\)"):
        screwdyn.mass_matrix(model, Q)


def test_mass_matrix_is_unchanged_when_the_robot_stands_far_from_the_base_origin(rng):
    """Moving every root body by 1 km changes no lever arm between bodies: ``M`` stays the same,
    entry by entry, to near machine precision (the kernel never forms world positions)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = screwdyn.load_urdf(example_robot_data_path("panda"))
    T = model.T_parent_body.copy()
    T[model.parent < 0, :3, 3] += [1000.0, -700.0, 300.0]
    far = model.replace(T_parent_body=T)
    for _ in range(3):
        q = rng.normal(size=model.n)
        M, M_far = screwdyn.mass_matrix(model, q), screwdyn.mass_matrix(far, q)
        assert np.allclose(M_far, M, rtol=1e-12, atol=1e-13 * np.abs(np.diag(M)).min())
