"""The derivatives of constrained dynamics and impulses (screwdyn.constrained_derivatives,
algorithms/constrained_derivatives.py, the tangents of algorithms/constraint_kinds.py; docs/theory.md
§17) against Pinocchio 4.1's ``computeConstraintDynamicsDerivatives`` and
``computeImpulseDynamicsDerivatives`` (Solo12's feet, Talos' soles and hands, LOCAL and
LOCAL_WORLD_ALIGNED, Baumgarte gains), against central differences of ``constrained_forward_dynamics``
and ``impulse_dynamics`` along ``integrate`` for every kind (point and frame contacts and loops, joint
couplings, both references, Baumgarte gains, external wrenches), against a dense minimum-norm reference
for redundant constraints, and ``linearize(..., constraints=...)`` against central differences.

Central differences here use the 4-point stencil (error ``O(h^4)``) in ``q`` and, since ``qdd`` and
``lam`` are quadratic in ``qd`` and affine in ``tau``, a unit step there (exact to rounding)."""
import numpy as np
import pytest

import screwdyn
from screwdyn import constrained as C
from screwdyn.constrained_derivatives import constrained_forward_dynamics_derivatives as derivatives
from screwdyn.constrained_derivatives import impulse_dynamics_derivatives
from screwdyn.errors import InputError

pin = pytest.importorskip("pinocchio", reason="Pinocchio is a reference for the derivatives")
from test_constrained import (  # noqa: E402  (after Pinocchio's import check)
    FEET, SOLES, in_ours, pin_constraint, pin_dynamics, random_state, rel, robot, six,
)

HANDS = ("gripper_left_base_link", "gripper_right_base_link")
EXACT = pin.ProximalSettings(1e-14, 0.0, 1)


def stencil(f, h):
    """``d f(s) / ds`` at 0 by the 4-point central stencil, for ``f`` returning a tuple of arrays."""
    values = [f(s * h) for s in (2.0, 1.0, -1.0, -2.0)]
    return [(-a + 8 * b - 8 * c + d) / (12 * h) for a, b, c, d in zip(*values)]


def differences(model, f, q, v, u, h=3e-4, steps=(1.0, 1.0)):
    """The columns of ``f(q, v, u)``'s outputs along ``integrate`` in ``q`` (step ``h``), ``v`` and ``u``
    (unit ``steps``: the outputs are quadratic in ``v`` and affine in ``u``), in the order ``(dy0_dq,
    dy0_dv, dy0_du, dy1_dq, ...)``."""
    n = model.n
    out = []
    for which, step in ((0, h), (1, steps[0]), (2, steps[1])):
        cols = []
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1.0
            g = [lambda s: f(screwdyn.integrate(model, q, s * e), v, u), lambda s: f(q, v + s * e, u),
                 lambda s: f(q, v, u + s * e)][which]
            cols.append(stencil(g, step))
        out.append([np.stack([c[k] for c in cols], axis=-1) for k in range(len(cols[0]))])
    return [out[w][0] for w in range(3)] + [out[w][1] for w in range(3)]


def pin_layout(model, pm, sizes):
    """Maps of Pinocchio's matrices to ours: ``P A P^T`` for ``(nv, nv)``, ``six(A) P^T`` for ``(m, nv)``."""
    P = np.array([in_ours(model, pm, e) for e in np.eye(model.n)]).T
    return (lambda A: P @ A @ P.T), (lambda A: six(A, sizes) @ P.T)


def against_pinocchio(name, ours, theirs, seed):
    model, pm = robot(name)
    qp, vp, taup, q, v, tau = random_state(model, pm, np.random.default_rng(seed))
    _, _, pd, cms, cds = pin_dynamics(pm, qp, vp, taup, theirs)
    ref = pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, EXACT)
    square, rows = pin_layout(model, pm, [c.size for c in ours])
    got = derivatives(model, q, v, tau, ours, mu=0.0)
    return max(rel(a, (square if k < 3 else rows)(b)) for k, (a, b) in enumerate(zip(got, ref)))


@pytest.mark.parametrize("ref", ["local", "world"])
def test_point_feet_and_sole_contacts_match_pinocchio(ref):
    """Solo12's four feet (3D) and Talos' two soles (6D), with Baumgarte gains on the feet and, in
    LOCAL, on the soles: within 1e-8 (seen 1e-12)."""
    model, pm = robot("solo12")
    g = (10.0, 3.0)
    ours = [screwdyn.PointContact(model, f, reference=ref, baumgarte=g, anchor=(0.1, 0.0, -0.3))
            for f in FEET["solo12"]]
    theirs = [pin_constraint(pm, 3, f, ref, anchor=screwdyn.spatial.transform(p=(0.1, 0.0, -0.3)), gains=g)
              for f in FEET["solo12"]]
    assert against_pinocchio("solo12", ours, theirs, 1) < 1e-8
    model, pm = robot("talos_full_v2")
    g = (10.0, 3.0) if ref == "local" else (0.0, 3.0)
    anchor = screwdyn.spatial.transform(screwdyn.spatial.exp_so3([0.1, -0.2, 0.3]), [0.1, 0.2, 0.0])
    ours = [screwdyn.FrameContact(model, f, reference=ref, baumgarte=g, anchor=anchor) for f in SOLES["talos_full_v2"]]
    theirs = [pin_constraint(pm, 6, f, ref, anchor=anchor, gains=g) for f in SOLES["talos_full_v2"]]
    assert against_pinocchio("talos_full_v2", ours, theirs, 2) < 1e-8


@pytest.mark.parametrize("ref", ["local", "world"])
def test_hand_loops_match_pinocchio(ref):
    """Talos' hands held together, 3D between two points and 6D, with a sole on the ground."""
    model, pm = robot("talos_full_v2")
    oa, ob = (0.02, -0.01, 0.05), (-0.03, 0.0, 0.01)
    ours = [screwdyn.PointLoop(model, *HANDS, offset_a=oa, offset_b=ob, reference=ref, baumgarte=(10.0, 2.0)),
            screwdyn.FrameLoop(model, *HANDS, reference=ref, baumgarte=(0.0, 2.0)),
            screwdyn.FrameContact(model, "left_sole_link", reference=ref)]
    theirs = [pin_constraint(pm, 3, HANDS[0], ref, HANDS[1], offset_a=oa, offset_b=ob, gains=(10.0, 2.0)),
              pin_constraint(pm, 6, HANDS[0], ref, HANDS[1], gains=(0.0, 2.0)),
              pin_constraint(pm, 6, "left_sole_link", ref)]
    assert against_pinocchio("talos_full_v2", ours[:1] + ours[2:], theirs[:1] + theirs[2:], 5) < 1e-8
    assert against_pinocchio("talos_full_v2", ours[1:], theirs[1:], 6) < 1e-8


def test_pinocchio_world_aligned_6d_position_gain_disagrees_with_its_own_dynamics():
    """The one case where the references part: a 6D LOCAL_WORLD_ALIGNED contact with Kp > 0. Central
    differences of Pinocchio's own constraintDynamics side with ours (its derivative applies the
    LOCAL error's Jacobian there); ours also match our central differences."""
    model, pm = robot("talos_full_v2")
    qp, vp, taup, q, v, tau = random_state(model, pm, np.random.default_rng(3))
    anchor = screwdyn.spatial.transform(screwdyn.spatial.exp_so3([0.1, -0.2, 0.3]), [0.1, 0.2, 0.0])
    ours = [screwdyn.FrameContact(model, "left_sole_link", reference="world", baumgarte=(20.0, 0.0), anchor=anchor)]
    theirs = [pin_constraint(pm, 6, "left_sole_link", "world", anchor=anchor, gains=(20.0, 0.0))]
    _, _, pd, cms, cds = pin_dynamics(pm, qp, vp, taup, theirs)
    ref = pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, EXACT)[0]
    h, cols = 1e-4, []
    for i in range(pm.nv):
        e = np.zeros(pm.nv)
        e[i] = 1.0
        cols.append(stencil(lambda s: (pin_dynamics(pm, pin.integrate(pm, qp, s * e), vp, taup, theirs)[0],), h)[0])
    fd = np.stack(cols, axis=-1)
    square, _ = pin_layout(model, pm, [6])
    ours_dq = derivatives(model, q, v, tau, ours, mu=0.0)[0]
    assert rel(ours_dq, square(fd)) < 1e-8
    assert rel(square(ref), square(fd)) > 1e-4


@pytest.mark.parametrize("ref", ["local", "world"])
def test_every_kind_against_central_differences(ref):
    """Solo12 with a point loop and a frame loop between its legs, a joint coupling and a point contact,
    then a frame contact at its base, each with Baumgarte gains (anchored contacts), and external wrenches."""
    model, pm = robot("solo12")
    _, _, _, q, v, tau = random_state(model, pm, np.random.default_rng(11))
    anchor = screwdyn.spatial.transform(screwdyn.spatial.exp_so3([0.2, 0.1, -0.3]), [0.1, -0.2, 0.05])
    loops = [screwdyn.PointLoop(model, "FL_FOOT", "FR_FOOT", offset_a=(0.01, 0.02, 0.0), offset_b=(0.0, -0.01, 0.03),
                                reference=ref, baumgarte=(15.0, 2.0)),
             screwdyn.FrameLoop(model, "HL_FOOT", "HR_FOOT", anchor, reference=ref, baumgarte=(12.0, 3.0)),
             screwdyn.JointCoupling(model, {"FL_KFE": 1.0, "HR_HFE": -0.5}, 0.1, baumgarte=(9.0, 1.5))]
    contacts = [screwdyn.PointContact(model, "FL_LOWER_LEG", offset=(0.0, 0.01, -0.05), reference=ref,
                                      baumgarte=(5.0, 1.0), anchor=(0.0, 0.1, -0.2)),
                screwdyn.FrameContact(model, "base_link", reference=ref, baumgarte=(4.0, 2.0), anchor=anchor)]
    F = np.random.default_rng(12).normal(size=(model.nbodies, 6))
    for cons in (loops + contacts[:1], loops[:1] + contacts[1:]):
        got = derivatives(model, q, v, tau, cons, F, mu=0.0)
        fd = differences(model, lambda a, b, c: C.constrained_forward_dynamics(model, a, b, c, cons, F, mu=0.0), q, v,
                         tau)
        for a, b in zip(got, fd):
            assert rel(a, b) < 1e-8


def test_spherical_joints_on_a_random_tree():
    """A free-flyer carrying spherical joints (every row of a multi-DoF joint turns the joint's whole
    subtree, docs/theory.md §14.1), with armature: a point loop, a world-aligned frame contact and a
    point contact, against central differences."""
    from helpers import random_model

    rng = np.random.default_rng(3)
    model = random_model(rng, n=6, fixed=0, spherical=0.5, floating=True, armature=True)
    assert np.count_nonzero(model.nvs == 3) >= 2
    q, v, tau = screwdyn.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    links = model.link_names
    cons = [screwdyn.PointLoop(model, links[-1], links[-3], offset_a=(0.1, 0.0, 0.0), baumgarte=(5.0, 2.0)),
            screwdyn.FrameContact(model, links[-2], reference="world", baumgarte=(3.0, 1.0), anchor=np.eye(4)),
            screwdyn.PointContact(model, links[2])]
    got = derivatives(model, q, v, tau, cons, mu=0.0)
    fd = differences(model, lambda a, b, c: C.constrained_forward_dynamics(model, a, b, c, cons, mu=0.0), q, v, tau)
    for a, b in zip(got, fd):
        assert rel(a, b) < 1e-8


@pytest.mark.parametrize("restitution", [0.0, 0.5])
@pytest.mark.parametrize("ref", ["local", "world"])
def test_impulse_derivatives_match_pinocchio_and_differences(restitution, ref):
    """Solo12's three feet (3D) and Talos' soles (6D): Pinocchio's data.ddq_dq, dlambda_dq, dlambda_dv and,
    with the identity, ddq_dv (Pinocchio's is that of qd^+ - qd^-); Solo's also by central differences."""
    for name, kind, frames in (("solo12", 3, FEET["solo12"][:3]), ("talos_full_v2", 6, SOLES["talos_full_v2"])):
        model, pm = robot(name)
        qp, vp, _, q, v, _ = random_state(model, pm, np.random.default_rng(7))
        make = screwdyn.PointContact if kind == 3 else screwdyn.FrameContact
        ours = [make(model, f, reference=ref) for f in frames]
        pd = pm.createData()
        cms = pin.StdVec_RigidConstraintModel([pin_constraint(pm, kind, f, ref) for f in frames])
        cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
        pin.initConstraintDynamics(pm, pd, cms, cds)
        pin.impulseDynamics(pm, pd, qp, vp, cms, cds, restitution, EXACT)
        pin.computeImpulseDynamicsDerivatives(pm, pd, cms, cds, restitution, EXACT)
        square, rows = pin_layout(model, pm, [c.size for c in ours])
        got = impulse_dynamics_derivatives(model, q, v, ours, restitution, mu=0.0)
        ref_ = [square(pd.ddq_dq), square(pd.ddq_dv) + np.eye(model.n), rows(pd.dlambda_dq), rows(pd.dlambda_dv)]
        assert max(rel(a, b) for a, b in zip(got, ref_)) < 1e-8
        if name == "solo12":
            fd = differences(model, lambda a, b, c: C.impulse_dynamics(model, a, b, ours, restitution, mu=0.0), q, v,
                             np.zeros(model.n))
            for a, b in zip(got, (fd[0], fd[1], fd[3], fd[4])):
                assert rel(a, b) < 1e-8


def dense_minimum_norm(model, q, v, tau, cons):
    """``(qdd, lam)`` by the dense KKT route with ``lam = pinv(G) b``: the minimum-norm forces, a smooth
    reference that shares nothing with the kernels but ``M``, ``h``, ``J`` and ``gamma``."""
    M, h = screwdyn.mass_matrix(model, q), screwdyn.bias_torques(model, q, v)
    J, gamma = C.constraint_jacobian(model, q, cons), C.constraint_drift(model, q, v, cons)
    Mi = np.linalg.inv(M)
    lam = np.linalg.pinv(J @ Mi @ J.T, rcond=1e-10) @ (-gamma - J @ Mi @ (tau - h))
    return Mi @ (tau - h + J.T @ lam), lam


def test_redundant_constraints_minimum_norm_force_derivatives():
    """Talos' soles in 6D, a point of the left sole in world axes and the right sole again in world axes
    (G singular, its null space turning with q): qdd's derivatives against central differences of
    constrained_forward_dynamics; lam's against those of the dense minimum-norm solution, including the
    part in the null space of J^T (docs/theory.md (17.10)), which is not small here."""
    model, pm = robot("talos_full_v2")
    cons = [screwdyn.FrameContact(model, "left_sole_link"), screwdyn.FrameContact(model, "right_sole_link"),
            screwdyn.PointContact(model, "left_sole_link", offset=(0.05, 0.02, 0.0), reference="world"),
            screwdyn.FrameContact(model, "right_sole_link", reference="world")]
    _, _, _, q, v, tau = random_state(model, pm, np.random.default_rng(13))
    J = C.constraint_jacobian(model, q, cons)
    v = v - np.linalg.pinv(J) @ (J @ v)                 # redundant rows agree only where J qd = 0
    got = derivatives(model, q, v, tau, cons)
    fd = differences(model, lambda a, b, c: dense_minimum_norm(model, a, b, c, cons), q, v, tau)
    for k, (a, b) in enumerate(zip(got, fd)):
        assert rel(a, b) < 1e-7, k
    a = differences(model, lambda a, b, c: C.constrained_forward_dynamics(model, a, b, c, cons), q, v, tau, h=1e-3,
                    steps=(1e-3, 1.0))       # (small steps in qd: the redundant rows must stay consistent)
    for k in range(3):                       # (the solver's accuracy, 1e-12 on lam, limits these differences)
        assert rel(got[k], a[k]) < 1e-6, k
    G = J @ np.linalg.solve(screwdyn.mass_matrix(model, q), J.T)
    null = np.eye(len(G)) - np.linalg.pinv(G, rcond=1e-10) @ G
    assert np.abs(null @ got[3]).max() > 0.1 * np.abs(got[3]).max()
    with pytest.raises(InputError, match="redundant"):
        derivatives(model, q, v, tau, cons, mu=0.0)


def test_batches_single_states_and_the_unconstrained_case():
    """A batch equals its states bit for bit; no constraint at all is forward_dynamics_derivatives;
    conflicting constraints raise as in constrained_forward_dynamics."""
    model, pm = robot("solo12")
    rng = np.random.default_rng(17)
    cons = (screwdyn.PointContact(model, "FL_FOOT"), screwdyn.FrameContact(model, "HR_FOOT", reference="world"))
    states = [random_state(model, pm, rng)[3:] for _ in range(3)]
    Q, V, T = (np.array([s[k] for s in states]) for k in range(3))
    got = derivatives(model, Q, V, T, cons)
    imp = impulse_dynamics_derivatives(model, Q, V, cons, 0.3)
    assert [g.shape for g in got] == [(3, 18, 18)] * 3 + [(3, 9, 18)] * 3 and imp[3].shape == (3, 9, 18)
    for k in range(3):
        assert all(np.array_equal(a[k], b) for a, b in zip(got, derivatives(model, Q[k], V[k], T[k], cons)))
        assert all(np.array_equal(a[k], b) for a, b in zip(imp, impulse_dynamics_derivatives(model, Q[k], V[k], cons,
                                                                                              0.3)))
    none = derivatives(model, Q[0], V[0], T[0])
    assert none[3].shape == (0, 18)
    for a, b in zip(none, screwdyn.forward_dynamics_derivatives(model, Q[0], V[0], T[0])):
        assert rel(a, b) < 1e-12
    twice = (screwdyn.FrameContact(model, "HR_FOOT"), screwdyn.PointContact(model, "HR_FOOT", offset=(0.05, 0.0, 0.0)))
    with pytest.raises(InputError, match="conflict"):      # (a moving foot: its point's rows disagree)
        derivatives(model, Q[0], V[0], T[0], twice)


def test_linearize_under_constraints():
    """The continuous pair of Solo12 standing on four feet against central differences of (qd, FD_c);
    the discrete RK4 and semi-implicit Euler pairs of UR5 with its tool on a wall and a coupling
    against central differences of one step of the constrained ODE."""
    model, pm = robot("solo12")
    _, _, _, q, v, tau = random_state(model, pm, np.random.default_rng(19))
    feet = [screwdyn.PointContact(model, f) for f in FEET["solo12"]]
    n = model.n
    A, B = screwdyn.linearize(model, q, v, tau, constraints=feet)
    fd = differences(model, lambda a, b, c: C.constrained_forward_dynamics(model, a, b, c, feet), q, v, tau)
    assert rel(A[n:, :n], fd[0]) < 1e-8 and rel(A[n:, n:], fd[1]) < 1e-8 and rel(B[n:], fd[2]) < 1e-8
    assert np.array_equal(A[:n, n:], np.eye(n)) and not B[:n].any()
    held = screwdyn.linearize(model, q, v, constraints=feet)   # tau None: constrained inverse dynamics' torques
    assert held[0].shape == (2 * n, 2 * n)

    from screwdyn.io.urdf import example_robot_data_path
    ur5 = screwdyn.load_urdf(str(example_robot_data_path("ur5")))
    rng = np.random.default_rng(23)
    x0 = np.concatenate([rng.uniform(-1, 1, 6), rng.normal(size=6)])
    u = rng.normal(size=6) * 5
    cons = [screwdyn.PointContact(ur5, "tool0", reference="world", baumgarte=(10.0, 4.0), anchor=(0.3, 0.2, 0.4)),
            screwdyn.JointCoupling(ur5, {"wrist_1_joint": 1.0, "wrist_3_joint": 1.0})]
    h = 0.01

    def step(x, u, scheme):
        def f(x):
            return np.concatenate([x[6:], C.constrained_forward_dynamics(ur5, x[:6], x[6:], u, cons, mu=0.0)[0]])
        if scheme == "semi_implicit_euler":
            qd = x[6:] + h * f(x)[6:]
            return np.concatenate([x[:6] + h * qd, qd])
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    for scheme in ("rk4", "semi_implicit_euler"):
        Ad, Bd = screwdyn.linearize(ur5, x0[:6], x0[6:], u, dt=h, scheme=scheme, constraints=cons)
        eye = np.eye(12)
        fa = np.stack([stencil(lambda s: (step(x0 + s * eye[i], u, scheme),), 1e-4)[0] for i in range(12)], axis=-1)
        fb = np.stack([stencil(lambda s: (step(x0, u + s * eye[i, :6], scheme),), 1e-2)[0] for i in range(6)], axis=-1)
        assert rel(Ad, fa) < 1e-8 and rel(Bd, fb) < 1e-8
