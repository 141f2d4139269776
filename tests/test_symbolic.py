"""screwdyn.symbolic: the worked examples (docs/theory.md §7.5, and screwdyn.symbolic.examples)
exactly, and the identities of closed-form dynamics (M symmetric, Mdot - 2C skew, Lagrangian =
symbolic RNEA, g = dU/dq)."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from screwdyn.errors import InputError, ModelError
from screwdyn.symbolic import (
    NUMPY, SYMPY, Dynamics, SymbolicModel, SymbolicModelBuilder, backend_for, count_ops, derive, derive_text,
    is_trig_zero, lagrange_equations, rnea, translation, trig_equal,
)
from screwdyn.symbolic.examples import (
    WORKED_EXAMPLES, bent_link, cartesian_ppp, pendulum, planar_2r, planar_rp, pr_robot,
)

from helpers import random_model


def is_zero(M):
    """``simplify(diff) == 0`` entrywise."""
    entries = M if isinstance(M, sp.MatrixBase) else [M]
    return all(sp.simplify(e) == 0 for e in entries)


# ---------------------------------------------------------------------- the worked examples, exactly
def test_bent_link_note001_example2():
    model, s = bent_link()
    dyn = Dynamics(model)
    (th,), (thd,), (thdd,) = dyn.q, dyn.qd, dyn.qdd
    assert is_zero(dyn.M - sp.Matrix([[s.m2 * s.l2**2 * sp.cos(s.phi) ** 2]]))
    assert is_zero(dyn.g) and is_zero(dyn.C)          # gravity does no work: both masses turn in horizontal planes
    assert is_zero(dyn.tau - sp.Matrix([s.m2 * s.l2**2 * sp.cos(s.phi) ** 2 * thdd]))
    # U is constant: m1 g l1 + m2 g (l1 + l2 sin phi)
    assert sp.simplify(dyn.U - (s.m1 * s.g * s.l1 + s.m2 * s.g * (s.l1 + s.l2 * sp.sin(s.phi)))) == 0


def test_planar_2r_note001_example3():
    model, s = planar_2r()
    L1, L2, m1, m2, g = s.L1, s.L2, s.m1, s.m2, s.g
    dyn = Dynamics(model)
    (th1, th2), (thd1, thd2), (thdd1, thdd2) = dyn.q, dyn.qd, dyn.qdd
    M = sp.Matrix([[m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * sp.cos(th2) + L2**2), m2 * (L1 * L2 * sp.cos(th2) + L2**2)],
                   [m2 * (L1 * L2 * sp.cos(th2) + L2**2), m2 * L2**2]])
    c = sp.Matrix([-m2 * L1 * L2 * sp.sin(th2) * (2 * thd1 * thd2 + thd2**2), m2 * L1 * L2 * thd1**2 * sp.sin(th2)])
    gv = sp.Matrix([(m1 + m2) * L1 * g * sp.cos(th1) + m2 * g * L2 * sp.cos(th1 + th2), m2 * g * L2 * sp.cos(th1 + th2)])
    assert is_zero(dyn.M - M)
    assert is_zero(dyn.C @ dyn.qd - c)
    assert is_zero(dyn.g - gv)
    tau1 = ((m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * sp.cos(th2) + L2**2)) * thdd1
            + m2 * (L1 * L2 * sp.cos(th2) + L2**2) * thdd2 - m2 * L1 * L2 * sp.sin(th2) * (2 * thd1 * thd2 + thd2**2)
            + (m1 + m2) * L1 * g * sp.cos(th1) + m2 * g * L2 * sp.cos(th1 + th2))
    tau2 = (m2 * (L1 * L2 * sp.cos(th2) + L2**2) * thdd1 + m2 * L2**2 * thdd2 + m2 * L1 * L2 * thd1**2 * sp.sin(th2)
            + m2 * g * L2 * sp.cos(th1 + th2))
    assert is_zero(dyn.tau - sp.Matrix([tau1, tau2]))
    # the textbook Christoffel form of C
    C = sp.Matrix([[-m2 * L1 * L2 * sp.sin(th2) * thd2, -m2 * L1 * L2 * sp.sin(th2) * (thd1 + thd2)],
                   [m2 * L1 * L2 * sp.sin(th2) * thd1, 0]])
    assert is_zero(dyn.C - C)


def test_planar_2r_from_energies_by_inspection():
    """The textbook route (Lynch & Park, sect. 8.1): positions by inspection, T and U, Euler-Lagrange
    (docs/theory.md eq. (7.1)) with theta(t)."""
    model, s = planar_2r()
    t = sp.Symbol("t", real=True)
    th1, th2 = sp.Function("theta1")(t), sp.Function("theta2")(t)
    x1, y1 = s.L1 * sp.cos(th1), s.L1 * sp.sin(th1)
    x2, y2 = x1 + s.L2 * sp.cos(th1 + th2), y1 + s.L2 * sp.sin(th1 + th2)
    T = sum(m * (x.diff(t) ** 2 + y.diff(t) ** 2) / 2 for m, x, y in ((s.m1, x1, y1), (s.m2, x2, y2)))
    U = s.m1 * s.g * y1 + s.m2 * s.g * y2
    dyn = Dynamics(model)
    E = lagrange_equations(T, U, [th1, th2], qd=list(dyn.qd), qdd=list(dyn.qdd))
    E = E.subs({th1: dyn.q[0], th2: dyn.q[1]})
    assert trig_equal(E, dyn.tau, list(dyn.q))
    # and from the Dynamics' own energies, with symbols
    assert is_zero(lagrange_equations(dyn.T, dyn.U, dyn.q, dyn.qd, dyn.qdd) - dyn.tau)


def test_planar_rp_note001_example4():
    model, s = planar_rp()
    dyn = Dynamics(model)
    (q1, q2), (qd1, qd2), _ = dyn.q, dyn.qd, dyn.qdd
    assert is_zero(dyn.M - sp.diag(s.m1 * s.L1**2 + s.m2 * q2**2, s.m2))
    assert is_zero(dyn.C @ dyn.qd - sp.Matrix([2 * s.m2 * q2 * qd1 * qd2, -s.m2 * q2 * qd1**2]))
    assert is_zero(dyn.g - sp.Matrix([(s.m1 * s.L1 + s.m2 * q2) * s.g * sp.cos(q1), s.m2 * s.g * sp.sin(q1)]))


def test_cartesian_ppp_note001_example5():
    model, s = cartesian_ppp()
    dyn = Dynamics(model)
    mt = s.m1 + s.m2 + s.m3
    assert is_zero(dyn.M - sp.diag(mt, s.m2 + s.m3, s.m3))
    assert dyn.C == sp.zeros(3, 3)
    assert is_zero(dyn.g - sp.Matrix([mt * s.g, 0, 0]))
    assert is_zero(dyn.tau - sp.Matrix([mt * (dyn.qdd[0] + s.g), (s.m2 + s.m3) * dyn.qdd[1], s.m3 * dyn.qdd[2]]))


def test_pr_robot_note004():
    model, s = pr_robot()
    dyn = Dynamics(model)
    (_, q2), (_, qd2), _ = dyn.q, dyn.qd, dyn.qdd
    M = sp.Matrix([[s.m1 + s.m2, -s.m2 * s.dc2 * sp.sin(q2)], [-s.m2 * s.dc2 * sp.sin(q2), s.Ic2zz + s.m2 * s.dc2**2]])
    assert is_zero(dyn.M - M)
    assert is_zero(dyn.C @ dyn.qd - sp.Matrix([-s.m2 * s.dc2 * sp.cos(q2) * qd2**2, 0]))
    assert is_zero(dyn.g)                    # horizontal plane
    # the Christoffel form (docs/theory.md eqs. (7.5), (7.6)): c_k = qd^T C_k qd with
    # C_k(q) = 1/2 (dM_k/dq + dM_k/dq^T - dM/dq_k)
    for k in range(2):
        Mk = dyn.M[:, k]
        Ck = (Mk.jacobian(dyn.q) + Mk.jacobian(dyn.q).T - dyn.M.diff(dyn.q[k])) / 2
        assert is_zero((dyn.qd.T @ Ck @ dyn.qd)[0, 0] - (dyn.C @ dyn.qd)[k])


def pendulum_symbols():
    return sp.symbols("tau_m F_x", real=True)


def test_pendulum_note004_in_theta():
    model, s = pendulum()
    tau_m, F_x = pendulum_symbols()
    dyn = Dynamics(model)
    (th,), (thd,), (thdd,) = dyn.q, dyn.qd, dyn.qdd
    I = s.I_l + s.m * s.d**2 + s.I_m * s.n_r**2
    note = I * thdd + s.m * s.g0 * s.d * sp.sin(th) - (
        s.n_r * tau_m - (s.b_l + s.b_m * s.n_r**2) * thd + s.l * sp.cos(th) * F_x)
    # ours: joint torque tau = n_r tau_m + J^T F at the tip
    ours = dyn.tau[0] - s.n_r * tau_m - dyn.generalized_force("tip", (0, 0, 0), (F_x, 0, 0))[0]
    assert sp.simplify(ours - note) == 0
    assert sp.simplify(dyn.M[0, 0] - I) == 0
    # and from the energies of docs/theory.md eq. (7.17), q = theta
    T = I * thd**2 / 2
    U = -s.m * s.g0 * s.d * sp.cos(th)
    Q = s.n_r * tau_m - (s.b_l + s.b_m * s.n_r**2) * thd + s.l * sp.cos(th) * F_x
    assert sp.simplify(lagrange_equations(T, U, [th], [thd], [thdd], [Q])[0] - note) == 0


def test_pendulum_note004_in_theta_m():
    """The same pendulum in the motor angle q = theta_m = n_r theta (docs/theory.md eq. (7.19))."""
    _, s = pendulum()
    tau_m, F_x = pendulum_symbols()
    thm, thmd, thmdd = sp.symbols("theta_m thetad_m thetadd_m", real=True)
    I = s.I_l + s.m * s.d**2 + s.I_m * s.n_r**2
    T = (s.I_l + s.m * s.d**2) * (thmd / s.n_r) ** 2 / 2 + s.I_m * thmd**2 / 2
    U = -s.m * s.g0 * s.d * sp.cos(thm / s.n_r)
    Q = tau_m - (s.b_l / s.n_r**2 + s.b_m) * thmd + s.l / s.n_r * sp.cos(thm / s.n_r) * F_x
    E = lagrange_equations(T, U, [thm], [thmd], [thmdd], [Q])[0]
    note = (I / s.n_r**2 * thmdd + s.m / s.n_r * s.g0 * s.d * sp.sin(thm / s.n_r)
            - (tau_m - (s.b_l / s.n_r**2 + s.b_m) * thmd + s.l / s.n_r * sp.cos(thm / s.n_r) * F_x))
    assert sp.simplify(E - note) == 0


def test_particle_on_vertical_line_note001():
    m, g = sp.symbols("m g", positive=True)
    x, xd, xdd = sp.symbols("x xd xdd", real=True)
    assert sp.simplify(lagrange_equations(m * xd**2 / 2, m * g * x, [x], [xd])[0] - (m * xdd + m * g)) == 0
    # default rate names, and x as a function of time
    assert lagrange_equations(m * xd**2 / 2, m * g * x, [x], [xd])[0].has(sp.Symbol("xdd", real=True))
    t = sp.Symbol("t", real=True)
    X = sp.Function("x")(t)
    E = lagrange_equations(m * X.diff(t) ** 2 / 2, m * g * X, [X])
    assert sp.simplify(E[0] - (m * X.diff(t, 2) + m * g)) == 0
    f = sp.Symbol("f", real=True)
    assert sp.simplify(lagrange_equations(m * X.diff(t) ** 2 / 2, m * g * X, [X], generalized_forces=[f])[0]
                       - (m * X.diff(t, 2) + m * g - f)) == 0


def test_lagrange_equations_checks_sizes():
    x, xd = sp.symbols("x xd")
    with pytest.raises(InputError):
        lagrange_equations(xd**2, x, [x], [xd], generalized_forces=[1, 2])


# ---------------------------------------------------------------------- identities on every example
@pytest.fixture(scope="module")
def derived():
    out = {}
    for name, make in WORKED_EXAMPLES.items():
        model, s = make()
        out[name] = (model, Dynamics(model))
    return out


@pytest.mark.parametrize("name", sorted(WORKED_EXAMPLES))
def test_identities(derived, name):
    model, dyn = derived[name]
    q = list(dyn.q)
    assert dyn.M == dyn.M.T
    # Mdot - 2C is skew-symmetric (Christoffel C)
    N = dyn.Mdot - 2 * dyn.C
    assert trig_equal(N + N.T, sp.zeros(dyn.n, dyn.n), q)
    # tau is linear in qdd with M, and g is tau at rest
    assert dyn.tau.jacobian(dyn.qdd) == dyn.M
    assert trig_equal(dyn.tau.subs({**dict(zip(dyn.qd, [0] * dyn.n)), **dict(zip(dyn.qdd, [0] * dyn.n))}), dyn.g, q)
    # Christoffel symbols are symmetric in their first two indices
    c = dyn.christoffel
    assert all(c[i, j, k] == c[j, i, k] for i in range(dyn.n) for j in range(dyn.n) for k in range(dyn.n))
    # the Lagrangian route equals the symbolic RNEA (docs/theory.md §6)
    assert trig_equal(rnea(model, dyn.q, dyn.qd, dyn.qdd), dyn.tau, q)


def test_lagrangian_equals_rnea_with_simplify_on_2r():
    model, _ = planar_2r()
    dyn = Dynamics(model)
    assert is_zero(rnea(model, dyn.q, dyn.qd, dyn.qdd) - dyn.tau)


def test_spatial_rrr_note003_jacobian_formula(derived):
    """M = sum m J_v^T J_v + J_w^T R I R^T J_w with the base-frame Jacobians of docs/theory.md §7.1."""
    model, dyn = derived["spatial_rrr"]
    M = sp.zeros(3, 3)
    for i in range(3):
        Jv, Jw = dyn.link_jacobians(i)
        R = dyn.poses[i][:3, :3]
        M += model.mass[i] * Jv.T @ Jv + Jw.T @ R @ model.inertia_com[i] @ R.T @ Jw
    assert trig_equal(M, dyn.M, list(dyn.q))
    # the symbolic derivative formula for dM (Lie brackets of Jacobian columns) is the derivative
    for k in range(3):
        assert trig_equal(dyn.dM[k], dyn.M.diff(dyn.q[k]), list(dyn.q))
    # g = dU/dq = -sum m J_v^T g_vec
    g = -sum((model.mass[i] * dyn.link_jacobians(i)[0].T @ model.gravity for i in range(3)), sp.zeros(3, 1))
    assert trig_equal(g, dyn.g, list(dyn.q))


def test_spatial_rrr_has_the_symbols_and_depends_on_no_q1(derived):
    _, dyn = derived["spatial_rrr"]
    assert not dyn.M.has(dyn.q[0])               # q1 is cyclic: the base frame is arbitrary
    assert {str(p) for p in dyn.parameters} >= {"m_1", "m_2", "m_3", "L1", "L2", "g", "Izz_1"}


def test_rotor_friction_terms():
    model, s = pendulum()
    dyn = Dynamics(model)
    assert sp.simplify(dyn.M[0, 0] - (s.I_l + s.m * s.d**2 + s.I_m * s.n_r**2)) == 0
    fc = sp.Symbol("fc", positive=True)
    dyn2 = Dynamics(model.replace(friction=(fc,)))
    assert sp.simplify(dyn2.friction[0] - ((s.b_l + s.b_m * s.n_r**2) * dyn2.qd[0] + fc * sp.sign(dyn2.qd[0]))) == 0
    assert sp.simplify(rnea(dyn2.model, dyn2.q, dyn2.qd, dyn2.qdd)[0] - dyn2.tau[0]) == 0


def test_simplify_option_gives_textbook_forms():
    model, s = planar_2r()
    dyn = Dynamics(model, simplify=True)
    th2 = dyn.q[1]
    assert dyn.M[1, 1] == s.m2 * s.L2**2
    assert dyn.C[1, 1] == 0
    assert dyn.C[0, 1] == sp.factor_terms(-s.m2 * s.L1 * s.L2 * sp.sin(th2) * (dyn.qd[0] + dyn.qd[1]))
    assert sp.count_ops(dyn.M[0, 0]) <= sp.count_ops(Dynamics(model).M[0, 0])


# ---------------------------------------------------------------------- models and builders
def test_from_model_symbolic_masses_round_trip(rng):
    model = random_model(rng, n=3, fixed=1)
    sm = SymbolicModel.from_model(model, symbolic_masses=True)
    assert [str(p) for p in sm.parameters] == ["m_1", "m_2", "m_3"]
    back = sm.subs({sp.Symbol(f"m_{k + 1}", positive=True): model.mass[k] for k in range(3)}).to_model()
    for key in ("mass", "com", "inertia_com", "T_parent_body", "joint_axis", "damping", "friction", "gravity"):
        np.testing.assert_allclose(getattr(back, key), getattr(model, key), atol=1e-12)
    assert back.joint_names == model.joint_names and tuple(back.parent) == tuple(model.parent)


def test_from_model_flags_and_symbols_dict(rng):
    model = random_model(rng, n=3, fixed=0, gravity=(0, 0, -9.81))
    sm = SymbolicModel.from_model(model, symbolic_coms=True, symbolic_inertias=True, symbolic_gravity=True,
                                  symbolic_friction=True, symbolic_rotors=True)
    g = sp.Symbol("g", positive=True)
    assert sm.gravity == sp.Matrix([0, 0, -g])
    assert sm.inertia_com[1] == sm.inertia_com[1].T and sm.inertia_com[1].has(sp.Symbol("Ixy_2", real=True))
    assert sm.com[2][0] == sp.Symbol("cx_3", real=True)
    assert sm.armature[0] == sp.Symbol("nr_1", real=True) ** 2 * sp.Symbol("Im_1", nonnegative=True)
    L, m, a = sp.symbols("L m a", positive=True)
    name1 = model.link_names[1]
    sm = SymbolicModel.from_model(model, symbols={
        "mass": {0: m}, ("com", name1): (a, 0, 0), ("T_parent_body", model.joint_names[2], (0, 3)): L,
        ("inertia_com", 0, (0, 1)): a, "gravity": (0, 0, -g)})
    assert sm.mass[0] == m and sm.com[1] == sp.Matrix([a, 0, 0]) and sm.T_parent_body[2][0, 3] == L
    assert sm.inertia_com[0][0, 1] == a == sm.inertia_com[0][1, 0]
    assert sm.mass[1] == sp.Float(model.mass[1])
    with pytest.raises(ModelError):
        SymbolicModel.from_model(model, symbols={"nonsense": [1]})
    with pytest.raises(ModelError):
        SymbolicModel.from_model(model, symbols={("mass", "no_such_link"): m})


def test_from_model_cleans_float_noise():
    import screwdyn
    from screwdyn.spatial import rotation_from_rpy, transform

    b = screwdyn.ModelBuilder("r")
    b.add_body("l1", "base", "j1", "revolute", origin=transform(rotation_from_rpy([np.pi / 2, 0, 0]), [0, 0, 0.3]),
               mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    sm = SymbolicModel.from_model(b.build())
    assert sm.T_parent_body[0][:3, :3] == sp.Matrix([[1, 0, 0], [0, 0, -1], [0, 1, 0]])
    assert sm.mass[0] == 1 and isinstance(sm.mass[0], sp.Integer)


def test_from_screws_matches_builder():
    """Modern Robotics lists (CoM frames, point masses, space screw axes) give the 2R of docs/theory.md §7.5."""
    model, s = planar_2r()
    G = [sp.diag(0, 0, 0, m, m, m) for m in (s.m1, s.m2)]
    M_list = [translation((s.L1, 0, 0)), translation((s.L2, 0, 0)), sp.eye(4)]
    S_list = sp.Matrix([[0, 0, 1, 0, 0, 0], [0, 0, 1, 0, -s.L1, 0]]).T
    sm = SymbolicModel.from_screws(M_list, G, S_list, gravity=(0, -s.g, 0))
    assert sm.n == 2 and "ee" in sm.frame_names and "link1_com" in sm.frame_names
    d1, d2 = Dynamics(model), Dynamics(sm)
    assert is_zero(d1.M - d2.M) and is_zero(d1.g - d2.g)
    # a prismatic screw
    sp_model = SymbolicModel.from_screws([sp.eye(4)], [sp.diag(1, 1, 1, s.m1, s.m1, s.m1)], [[0, 0, 0, 0, 0, 1]])
    assert sp_model.joint_type == (1,)


def test_joint_scale_from_a_non_unit_screw():
    """A screw axis (0, 0, 2, 0, 0, 0) turns the link by 2 q: M is 4 times larger, as in the numeric model."""
    import screwdyn

    L, m = sp.symbols("L m", positive=True)
    G = [sp.diag(0, 0, 0, m, m, m)]
    sm = SymbolicModel.from_screws([translation((L, 0, 0))], G, [[0, 0, 2, 0, 0, 0]], gravity=(0, 0, 0))
    assert sm.joint_scale == (2,)
    dyn = Dynamics(sm)
    assert is_zero(dyn.M[0, 0] - 4 * m * L**2)
    assert is_zero(rnea(sm, dyn.q, dyn.qd, dyn.qdd) - dyn.tau)
    num = screwdyn.Model.from_screws([np.array(translation((0.5, 0, 0)), dtype=float)], [np.diag([0, 0, 0, 2.0, 2, 2])],
                                     [np.array([0, 0, 2.0, 0, 0, 0])], gravity=(0, 0, 0))
    sym = SymbolicModel.from_model(num)
    assert sym.joint_scale == (2,)
    assert float(Dynamics(sym).M[0, 0]) == pytest.approx(4 * 2 * 0.25)
    np.testing.assert_allclose(sym.to_model().joint_scale, [2.0])


def test_builder_fixed_joint_merges_and_checks():
    model, s = bent_link()
    assert model.n == 1 and "arm" in model.frame_names
    assert sp.simplify(model.mass[0] - (s.m1 + s.m2)) == 0
    b = SymbolicModelBuilder("x")
    with pytest.raises(ModelError):
        b.add_body("a", "nowhere", "j", "revolute")
    with pytest.raises(ModelError):
        b.add_body("a", "base", "j", "revolute", axis=(0, 0, 0))
    with pytest.raises(ModelError):
        b.add_body("a", "base", "j", "spherical")
    with pytest.raises(ModelError):
        b.add_body("a", "base", "j", "fixed")
    b.add_body("a", "base", "j", "revolute")
    with pytest.raises(ModelError):
        b.add_body("a", "base", "j2", "revolute")


def test_from_urdf_with_symbols():
    import screwdyn.models as models

    path = models.path("planar_2r") if hasattr(models, "path") else None
    if path is None:
        pytest.skip("no bundled URDF")
    m = sp.Symbol("m_2", positive=True)
    sm = SymbolicModel.from_urdf(path, symbols={("mass", 1): m})
    assert sm.mass[1] == m and sm.n == 2


# ---------------------------------------------------------------------- the generic RNEA
def test_rnea_same_code_numpy_and_sympy(rng):
    model = random_model(rng, n=4, fixed=1, armature=True)
    q, qd, qdd = (rng.normal(size=4) for _ in range(3))
    tau_np = rnea(model, q, qd, qdd)
    assert isinstance(tau_np, np.ndarray) and tau_np.shape == (4,)
    tau_sp = rnea(SymbolicModel.from_model(model, tol=0), [sp.Float(x) for x in q], list(qd), list(qdd))
    assert isinstance(tau_sp, sp.MatrixBase)
    np.testing.assert_allclose(np.array(tau_sp, dtype=float).ravel(), tau_np, atol=1e-10)
    # external wrench on the last body: tau changes by -J^T F
    F = rng.normal(size=6)
    tau_f = rnea(model, q, qd, qdd, f_ext={3: F})
    assert not np.allclose(tau_f, tau_np)


def test_backend_for():
    assert backend_for(np.zeros(3), [1.0]) is NUMPY
    assert backend_for([sp.Symbol("x"), 1.0]) is SYMPY
    assert backend_for(sp.Matrix([1])) is SYMPY


# ---------------------------------------------------------------------- trig identities
def test_is_trig_zero():
    a, b, m = sp.symbols("a b m")
    assert is_trig_zero(sp.sin(a) ** 2 + sp.cos(a) ** 2 - 1, [a])
    assert is_trig_zero(sp.cos(a + b) - sp.cos(a) * sp.cos(b) + sp.sin(a) * sp.sin(b), [a, b])
    assert is_trig_zero(m * sp.sin(2 * (a - b)) - 2 * m * sp.sin(a - b) * sp.cos(a - b), [a, b])
    assert not is_trig_zero(sp.sin(a) - sp.cos(a), [a])
    assert not is_trig_zero(m * sp.sin(a) ** 2, [a])
    assert is_trig_zero((sp.sin(a) ** 2 - 1) / m + sp.cos(a) ** 2 / m, [a])


# ---------------------------------------------------------------------- output
def test_count_ops_matches_sympy(derived):
    _, dyn = derived["spatial_rrr"]
    for e in list(dyn.C) + list(dyn.M) + list(dyn.g):
        assert count_ops({"e": sp.Matrix([e])}) == sp.count_ops(e)


def test_cse_reduces_operations(derived):
    _, dyn = derived["spatial_rrr"]
    r = dyn.cse()
    assert r.ops_after < r.ops_before == dyn.count_ops()
    assert set(r.exprs) == {"M", "C", "g"}
    # the reduced form evaluates to the same numbers
    point = {s: sp.Float(0.1 * k + 0.3) for k, s in enumerate(sorted(dyn.C.free_symbols | set(dyn.q), key=str))}
    values = dict(point)
    for x, e in r.replacements:
        values[x] = e.xreplace(values)
    np.testing.assert_allclose(np.array(r.exprs["C"].xreplace(values), dtype=float),
                               np.array(dyn.C.xreplace(point), dtype=float), rtol=1e-12, atol=1e-12)
    assert "operations" in str(r)


def test_latex_and_text():
    model, _ = planar_2r()
    dyn = Dynamics(model, simplify=True)
    tex = dyn.latex()
    assert r"\dot{q}_{1}" in tex and r"M(q) = " in tex and r"\cos" in tex
    txt = derive_text(model)
    assert "M[1,1] = " in txt and "C[2,1] = " in txt and "g[2] = " in txt and "M[2,1]" not in txt
    assert "L1" in txt and "parameters:" in txt
    assert derive("planar_2r", simplify=True).count("\n") > 8
    tex = derive("pendulum", latex=True)
    assert r"\tau_f" in tex                       # the pendulum's viscous friction (docs/theory.md eq. (4.6))
    cse_txt = derive_text(model, cse=True)
    assert "common subexpressions" in cse_txt
    with pytest.raises(InputError):
        derive("no_such_robot_anywhere")


def test_lambdify_with_parameters():
    model, s = planar_2r()
    dyn = Dynamics(model)
    f = dyn.lambdify("tau")
    assert [str(p) for p in f.parameters] == ["L1", "L2", "g", "m1", "m2"]
    q, qd, qdd, p = [0.3, -0.7], [1.1, 0.4], [0.2, -1.0], [1.0, 0.8, 9.81, 2.0, 1.5]
    values = dict(zip(dyn.q, q)) | dict(zip(dyn.qd, qd)) | dict(zip(dyn.qdd, qdd)) | dict(zip(f.parameters, p))
    expected = np.array(dyn.tau.subs(values), dtype=float).ravel()
    np.testing.assert_allclose(f(q, qd, qdd, p), expected, rtol=1e-13)
    fM = dyn.lambdify("M")
    assert fM(q, p).shape == (2, 2)
    M, C, g = dyn.lambdify(("M", "C", "g"))(q, qd, p)
    np.testing.assert_allclose(M @ qdd + C @ qd + g, expected, rtol=1e-13)
    with pytest.raises(InputError):
        dyn.lambdify("M", params=[])


def test_ccode_planar_2r_compiles_and_agrees(tmp_path):
    import shutil
    import subprocess
    import ctypes

    model, _ = planar_2r()
    dyn = Dynamics(model)
    src = dyn.ccode()
    assert "void planar_2r_M(const double *q, const double *p, double *out)" in src
    assert "void planar_2r_tau(const double *q, const double *qd, const double *qdd, const double *p, double *out)" in src
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "dyn.c").write_text(src)
    lib = tmp_path / "libdyn.so"
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-std=c99", "-Wall", "-Werror", "-o", str(lib),
                    str(tmp_path / "dyn.c"), "-lm"], check=True)
    so = ctypes.CDLL(str(lib))
    arr = lambda x: np.ascontiguousarray(x, dtype=float)   # noqa: E731
    ptr = lambda a: a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))   # noqa: E731
    q, qd, qdd, p = arr([0.3, -0.7]), arr([1.1, 0.4]), arr([0.2, -1.0]), arr([1.0, 0.8, 9.81, 2.0, 1.5])
    out = arr(np.zeros(2))
    so.planar_2r_tau(ptr(q), ptr(qd), ptr(qdd), ptr(p), ptr(out))
    np.testing.assert_allclose(out, dyn.lambdify("tau")(q, qd, qdd, p), rtol=1e-13)
    outM = arr(np.zeros(4))
    so.planar_2r_M(ptr(q), ptr(p), ptr(outM))
    np.testing.assert_allclose(outM.reshape(2, 2), dyn.lambdify("M")(q, p), rtol=1e-13)


def test_worked_examples_script_runs(capsys):
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "symbolic_worked_examples.py"
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    assert "planar 2R" in out and "all worked examples agree" in out
