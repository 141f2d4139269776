"""Constrained dynamics (screwdyn.constrained, algorithms/constrained.py, kkt.py, constraint_kinds.py)
against Pinocchio 4.1's ``constraintDynamics``, ``impulseDynamics``, ``getConstraintsJacobian`` and
``computeDelassusMatrix`` on example-robot-data's legged robots and humanoids with a free-flyer, and
against physics: ``J qdd + gamma = 0``, Gauss's principle by a generic least-squares solve, impacts
that never add kinetic energy, minimum-norm forces for redundant constraints, the dense KKT system.

The kernels compile once for every robot (their arguments' types do not depend on the model); the
file takes about 1 min cold on the project's machine (the compiles), 15-25 s warm."""
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn import constrained as C
from screwdyn.errors import InputError

pin = pytest.importorskip("pinocchio", reason="Pinocchio is the reference for constrained dynamics")

FEET = {"solo12": ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], "anymal": ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"],
        "hyq": ["lf_foot", "rf_foot", "lh_foot", "rh_foot"], "go1": ["FR_foot", "FL_foot", "RR_foot", "RL_foot"],
        "a1": ["FR_foot", "FL_foot", "RR_foot", "RL_foot"], "b1": ["FR_foot", "FL_foot", "RR_foot", "RL_foot"]}
SOLES = {"talos_full_v2": ["left_sole_link", "right_sole_link"], "icub": ["l_sole", "r_sole"],
         "romeo": ["l_sole", "r_sole"]}
REFS = {"local": pin.LOCAL, "world": pin.LOCAL_WORLD_ALIGNED}
_ROBOTS = {}


def robot(name):
    """``(model, pin_model)`` of an example-robot-data robot with a free-flyer, loaded once."""
    if name not in _ROBOTS:
        from screwdyn.io.urdf import example_robot_data_path

        path = str(example_robot_data_path(name))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # (Pinocchio's model has no mimic couplings: Romeo's fingers stay free in both)
            model = screwdyn.load_urdf(path, floating_base=True, mimic="independent")
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        if name == "romeo":   # massless fingers: M singular in both libraries; an armature makes it definite
            arm = np.r_[np.zeros(6), np.full(model.nv - 6, 0.01)]
            model = model.replace(rotor_inertia=arm, gear_ratio=np.ones(model.nv))
            pm.armature = arm
        _ROBOTS[name] = (model, pm)
    return _ROBOTS[name]


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def in_ours(model, pm, x):
    """A Pinocchio velocity-like vector (or each row of a matrix) in screwdyn's layout."""
    return screwdyn.from_pinocchio(model, None, x, pin_model=pm)[1]


def pin_side(pm, frame, offset=None):
    """Pinocchio's ``(joint, placement)`` of a frame (moved by ``offset``)."""
    fr = pm.frames[pm.getFrameId(frame)]
    placement = fr.placement if offset is None else fr.placement * pin.SE3(np.eye(3), np.asarray(offset, float))
    return fr.parentJoint, placement


def pin_constraint(pm, kind, frame_a, ref, frame_b=None, offset_a=None, offset_b=None, anchor=None, gains=None):
    ja, Pa = pin_side(pm, frame_a, offset_a)
    ctype = pin.ContactType.CONTACT_3D if kind == 3 else pin.ContactType.CONTACT_6D
    if frame_b is None:
        Pb = pin.SE3.Identity() if anchor is None else pin.SE3(anchor)
        cm = pin.RigidConstraintModel(ctype, pm, ja, Pa, 0, Pb, REFS[ref])
    else:
        jb, Pb = pin_side(pm, frame_b, offset_b)
        cm = pin.RigidConstraintModel(ctype, pm, ja, Pa, jb, Pb, REFS[ref])
    if gains is not None:
        cm.m_baumgarte_parameters.Kp, cm.m_baumgarte_parameters.Kd = gains
    return cm


def random_state(model, pm, rng):
    qp = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    vp, taup = rng.normal(size=pm.nv), rng.normal(size=pm.nv) * 10
    q, v = screwdyn.from_pinocchio(model, qp, vp, pin_model=pm)
    return qp, vp, taup, q, v, in_ours(model, pm, taup)


def pin_dynamics(pm, qp, vp, taup, cms):
    pd = pm.createData()
    cms = pin.StdVec_RigidConstraintModel(cms)
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pin.initConstraintDynamics(pm, pd, cms, cds)
    a = pin.constraintDynamics(pm, pd, qp, vp, taup, cms, cds, pin.ProximalSettings(1e-14, 0.0, 1))
    return a, pd.lambda_c.copy(), pd, cms, cds


def six(lam, sizes):
    """Pinocchio's stacked forces with each 6-row block turned to screwdyn's ``(moment, force)``."""
    out, r = lam.copy(), 0
    for s in sizes:
        if s == 6:
            out[r:r + 6] = np.concatenate([lam[r + 3:r + 6], lam[r:r + 3]])
        r += s
    return out


def check_against_pinocchio(name, ours, theirs, rng, tol=1e-9, states=2):
    """``constrained_forward_dynamics`` with the constraints ``ours`` and Pinocchio's ``theirs``: qdd and
    lam at random states; J (and, for LOCAL contacts, the Delassus matrix) as Pinocchio's. iCub's
    mass matrix reaches a condition number of 1e12 (its small hand links), which bounds any two
    solutions' agreement: there the tolerance grows with it (1e-18 cond(M)), and the residual of
    the equations of motion must be no larger than Pinocchio's. Returns the worst relative
    difference of qdd and lam."""
    model, pm = robot(name)
    sizes = [c.size for c in ours]
    worst = 0.0
    for _ in range(states):
        qp, vp, taup, q, v, tau = random_state(model, pm, rng)
        a, lam_p, pd, cms, cds = pin_dynamics(pm, qp, vp, taup, theirs)
        a, lam_p = in_ours(model, pm, a), six(lam_p, sizes)
        qdd, lam = C.constrained_forward_dynamics(model, q, v, tau, ours, mu=0.0, max_iter=1)
        M = screwdyn.mass_matrix(model, q)
        conditioned = max(1.0, 1e-18 * np.linalg.cond(M) / tol)
        diff = max(rel(qdd, a), rel(lam, lam_p))
        assert diff < tol * conditioned, (diff, conditioned)
        worst = max(worst, diff)
        J = C.constraint_jacobian(model, q, ours)
        Jp = pin.getConstraintsJacobian(pm, pd, cms, cds)
        Jp = in_ours(model, pm, six(Jp, sizes))
        assert rel(J, Jp) < 1e-12
        h = screwdyn.bias_torques(model, q, v)
        residual = lambda x, f: np.abs(M @ x + h - tau - J.T @ f).max()
        assert residual(qdd, lam) <= 2 * residual(a, lam_p) + 1e-12 * np.abs(tau).max()
        G = C.delassus(model, q, ours)
        assert rel(G, J @ np.linalg.solve(M, J.T)) < 1e-9     # the dense product, the tests' cross-check
        if all(c.reference == "local" and c.body_b < 0 for c in ours):   # (Pinocchio's is LOCAL, of contacts only)
            Gp = pin.computeDelassusMatrix(pm, pd, qp, cms, cds, 0.0)
            P = np.concatenate([np.r_[r + 3:r + 6, r:r + 3] if s == 6 else np.arange(r, r + s)
                                for r, s in zip(np.cumsum([0] + sizes[:-1]), sizes)])
            assert rel(G, Gp[np.ix_(P, P)]) < 1e-9 * conditioned
        gamma = C.constraint_drift(model, q, v, ours)
        Kp, Kd = (np.repeat([getattr(c, g) for c in ours], sizes) for g in ("Kp", "Kd"))
        corrector = Kd * (J @ v) + Kp * C.constraint_error(model, q, ours)
        assert np.abs(J @ qdd + gamma + corrector).max() < 1e-10 * conditioned * (
            1 + np.abs(gamma).max() + np.abs(corrector).max())
    return worst


@pytest.mark.parametrize("name", sorted(FEET))
@pytest.mark.parametrize("ref", ["local", "world"])
def test_point_contacts_at_the_feet_match_pinocchio(name, ref):
    model, pm = robot(name)
    ours = [screwdyn.PointContact(model, f, reference=ref) for f in FEET[name]]
    theirs = [pin_constraint(pm, 3, f, ref) for f in FEET[name]]
    check_against_pinocchio(name, ours, theirs, np.random.default_rng(len(name)))


@pytest.mark.parametrize("name", sorted(SOLES))
@pytest.mark.parametrize("ref", ["local", "world"])
def test_sole_contacts_in_6d_match_pinocchio(name, ref):
    model, pm = robot(name)
    ours = [screwdyn.FrameContact(model, f, reference=ref) for f in SOLES[name]]
    theirs = [pin_constraint(pm, 6, f, ref) for f in SOLES[name]]
    check_against_pinocchio(name, ours, theirs, np.random.default_rng(3))


@pytest.mark.parametrize("ref", ["local", "world"])
def test_hand_to_hand_loops_and_baumgarte_match_pinocchio(ref):
    """Talos' hands held together (6D, and 3D between two points) with a sole on the ground, each with
    Baumgarte gains: the loop's drift and position error between two moving bodies."""
    model, pm = robot("talos_full_v2")
    hands = ("gripper_left_base_link", "gripper_right_base_link")
    anchor = screwdyn.spatial.transform(screwdyn.spatial.exp_so3([0.1, -0.2, 0.3]), [0.1, 0.2, 0.0])
    ours = [screwdyn.FrameLoop(model, *hands, reference=ref, baumgarte=(20.0, 3.0)),
            screwdyn.FrameContact(model, "left_sole_link", reference=ref, baumgarte=(5.0, 1.0), anchor=anchor)]
    theirs = [pin_constraint(pm, 6, hands[0], ref, hands[1], gains=(20.0, 3.0)),
              pin_constraint(pm, 6, "left_sole_link", ref, anchor=anchor, gains=(5.0, 1.0))]
    check_against_pinocchio("talos_full_v2", ours, theirs, np.random.default_rng(5))
    oa, ob = (0.02, -0.01, 0.05), (-0.03, 0.0, 0.01)
    ours = [screwdyn.PointLoop(model, *hands, offset_a=oa, offset_b=ob, reference=ref, baumgarte=(10.0, 2.0)),
            screwdyn.PointContact(model, "right_sole_link", reference=ref, baumgarte=(4.0, 1.5), anchor=(0, 0.1, 0))]
    theirs = [pin_constraint(pm, 3, hands[0], ref, hands[1], offset_a=oa, offset_b=ob, gains=(10.0, 2.0)),
              pin_constraint(pm, 3, "right_sole_link", ref, anchor=screwdyn.spatial.transform(p=(0, 0.1, 0)),
                             gains=(4.0, 1.5))]
    check_against_pinocchio("talos_full_v2", ours, theirs, np.random.default_rng(6))


@pytest.mark.parametrize("restitution", [0.0, 0.5])
@pytest.mark.parametrize("ref", ["local", "world"])
def test_impulses_match_pinocchio_and_never_add_energy(restitution, ref):
    rng = np.random.default_rng(7)
    for name, kind, frames in (("solo12", 3, FEET["solo12"][:3]), ("talos_full_v2", 6, SOLES["talos_full_v2"])):
        model, pm = robot(name)
        make = screwdyn.PointContact if kind == 3 else screwdyn.FrameContact
        ours = [make(model, f, reference=ref) for f in frames]
        qp, vp, _, q, v, _ = random_state(model, pm, rng)
        pd = pm.createData()
        cms = pin.StdVec_RigidConstraintModel([pin_constraint(pm, kind, f, ref) for f in frames])
        cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
        pin.initConstraintDynamics(pm, pd, cms, cds)
        vplus_p = pin.impulseDynamics(pm, pd, qp, vp, cms, cds, restitution, pin.ProximalSettings(1e-14, 0.0, 1))
        vplus, impulse = C.impulse_dynamics(model, q, v, ours, restitution, mu=0.0, max_iter=1)
        sizes = [c.size for c in ours]
        assert rel(vplus, in_ours(model, pm, vplus_p)) < 1e-9
        assert rel(impulse, six(pd.impulse_c, sizes)) < 1e-9
        J = C.constraint_jacobian(model, q, ours)
        assert np.abs(J @ vplus + restitution * J @ v).max() < 1e-10 * np.abs(J @ v).max()
        ke = screwdyn.kinetic_energy
        assert ke(model, q, vplus) <= ke(model, q, v) * (1 + 1e-12)


def test_gauss_principle_by_a_generic_least_squares_solve():
    """qdd minimises (qdd - qdd_free)^T M (qdd - qdd_free) under J qdd = -gamma: the same qdd from a
    generic least-squares solve (M^1/2 weighting, the constraint by a large penalty), a route that
    shares nothing with the kernels but J, gamma, M and the free acceleration."""
    model, pm = robot("anymal")
    rng = np.random.default_rng(11)
    cons = [screwdyn.PointContact(model, f) for f in FEET["anymal"][:3]] + [
        screwdyn.JointCoupling(model, {"LF_HAA": 1.0, "RF_HAA": 1.0})]
    _, _, _, q, v, tau = random_state(model, pm, rng)
    qdd, lam = C.constrained_forward_dynamics(model, q, v, tau, cons)
    free = screwdyn.forward_dynamics(model, q, v, tau)
    M = screwdyn.mass_matrix(model, q)
    J, gamma = C.constraint_jacobian(model, q, cons), C.constraint_drift(model, q, v, cons)
    Lc = np.linalg.cholesky(M)
    w = 1e7
    A = np.vstack([Lc.T, w * J])
    b = np.concatenate([Lc.T @ free, -w * gamma])
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    assert rel(qdd, x) < 1e-6          # (the penalty's own error is of order 1 / w^2 relative)
    assert np.abs(J @ qdd + gamma).max() < 1e-10 * (1 + np.abs(gamma).max())
    assert rel(M @ qdd + screwdyn.bias_torques(model, q, v), tau + J.T @ lam) < 1e-12


def test_redundant_constraints_give_the_minimum_norm_forces():
    """A foot in 6D contact plus a point of it, and that same foot twice: the Delassus matrix is
    singular; the proximal iterations converge to the minimum-norm forces of the dense KKT system
    (pinv), at a velocity that meets the constraints (redundant rows must agree). mu = 0 says why it
    cannot solve; conflicting rows raise."""
    model, pm = robot("talos_full_v2")
    rng = np.random.default_rng(13)
    cons = [screwdyn.FrameContact(model, "left_sole_link"), screwdyn.FrameContact(model, "right_sole_link"),
            screwdyn.PointContact(model, "left_sole_link", offset=(0.05, 0.02, 0.0), reference="world"),
            screwdyn.FrameContact(model, "right_sole_link", reference="world")]
    _, _, _, q, v, tau = random_state(model, pm, rng)
    J = C.constraint_jacobian(model, q, cons)
    v = v - np.linalg.pinv(J) @ (J @ v)          # the constraints hold at the velocity level
    qdd, lam, info = C.constrained_forward_dynamics(model, q, v, tau, cons, return_info=True)
    M = screwdyn.mass_matrix(model, q)
    h = screwdyn.bias_torques(model, q, v)
    gamma = C.constraint_drift(model, q, v, cons)
    G = J @ np.linalg.solve(M, J.T)
    b = -gamma - J @ np.linalg.solve(M, tau - h)
    lam_min = np.linalg.pinv(G, rcond=1e-10) @ b
    assert np.linalg.matrix_rank(G, tol=1e-9 * np.abs(G).max()) == 12 < G.shape[0]
    null = np.linalg.svd(J.T)[2][12:]             # the null space of J^T (and of G): forces that do nothing
    assert np.linalg.norm(null @ lam) < 1e-8 * np.linalg.norm(lam)   # lam is orthogonal to it: minimum norm
    assert rel(lam, lam_min) < 1e-7 and info.iterations > 1 and info.residual < 1e-10
    assert np.abs(J @ qdd + gamma).max() < 1e-9
    with pytest.raises(InputError, match="redundant"):
        C.constrained_forward_dynamics(model, q, v, tau, cons, mu=0.0)
    with pytest.raises(InputError, match="conflict"):
        C.constrained_forward_dynamics(model, q, v + 0.1, tau, cons)


def test_batches_equal_single_states_and_errors_name_the_argument():
    model, pm = robot("solo12")
    rng = np.random.default_rng(17)
    cons = (screwdyn.PointContact(model, "FL_FOOT"), screwdyn.FrameContact(model, "HR_FOOT", reference="world"))
    states = [random_state(model, pm, rng)[3:] for _ in range(5)]
    Q, V, T = (np.array([s[k] for s in states]) for k in range(3))
    qdd, lam = C.constrained_forward_dynamics(model, Q, V, T, cons)
    vplus, imp = C.impulse_dynamics(model, Q, V, cons, 0.3)
    J, G = C.constraint_jacobian(model, Q, cons), C.delassus(model, Q, cons)
    gamma, err = C.constraint_drift(model, Q, V, cons), C.constraint_error(model, Q, cons)
    assert qdd.shape == (5, 18) and lam.shape == (5, 9) and J.shape == (5, 9, 18) and G.shape == (5, 9, 9)
    for k in range(5):
        one = C.constrained_forward_dynamics(model, Q[k], V[k], T[k], cons)
        assert np.array_equal(one[0], qdd[k]) and np.array_equal(one[1], lam[k])
        assert np.array_equal(C.impulse_dynamics(model, Q[k], V[k], cons, 0.3)[0], vplus[k])
        assert np.array_equal(C.constraint_jacobian(model, Q[k], cons), J[k])
        assert np.array_equal(C.delassus(model, Q[k], cons), G[k])
        assert np.array_equal(C.constraint_drift(model, Q[k], V[k], cons), gamma[k])
    q2 = np.broadcast_to(Q[0], (2, 3, model.nq))           # leading axes broadcast
    assert C.constrained_forward_dynamics(model, q2, V[0], T[0], cons)[0].shape == (2, 3, 18)
    bad = Q.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match=r"q contains NaN or inf \(batch index \(3,\)\)"):
        C.constrained_forward_dynamics(model, bad, V, T, cons)
    with pytest.raises(InputError, match="tau must have shape"):
        C.constrained_forward_dynamics(model, Q[0], V[0], T[0, :5], cons)
    with pytest.raises(InputError, match="mu must be"):
        C.constrained_forward_dynamics(model, Q[0], V[0], T[0], cons, mu=-1.0)
    with pytest.raises(InputError, match="restitution must be in"):
        C.impulse_dynamics(model, Q[0], V[0], cons, 1.5)
    with pytest.raises(InputError, match="constraints\\[1\\] is a str"):
        C.constrained_forward_dynamics(model, Q[0], V[0], T[0], (cons[0], "FL_FOOT"))


def test_model_constraints_and_external_wrenches_enter_the_dynamics():
    """model.constraints come first; f_ext enters h as in forward_dynamics; no constraint at all is
    forward dynamics."""
    model, pm = robot("solo12")
    rng = np.random.default_rng(19)
    loop = screwdyn.PointLoop(model, "FL_FOOT", "FR_FOOT")
    withloop = model.replace(constraints=(loop,))
    contact = screwdyn.PointContact(withloop, "HL_FOOT")
    _, _, _, q, v, tau = random_state(model, pm, rng)
    a = C.constrained_forward_dynamics(withloop, q, v, tau, [contact])
    b = C.constrained_forward_dynamics(model, q, v, tau, [loop, contact])
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    F = rng.normal(size=(model.nbodies, 6))
    qdd, lam = C.constrained_forward_dynamics(model, q, v, tau, [contact], f_ext=F)
    J = C.constraint_jacobian(model, q, [contact])
    assert rel(screwdyn.inverse_dynamics(model, q, v, qdd, f_ext=F), tau + J.T @ lam) < 1e-11
    qdd0, lam0 = C.constrained_forward_dynamics(model, q, v, tau)
    assert lam0.shape == (0,) and rel(qdd0, screwdyn.forward_dynamics(model, q, v, tau)) < 1e-11


def test_constrained_inverse_dynamics_inverts_the_forward_dynamics():
    """tau with zero free-flyer rows -> (qdd, lam) -> constrained_inverse_dynamics: torques with zero
    free-flyer rows and the minimum-norm forces (four feet: 12 force rows for 6 unactuated ones, many
    answers) that reproduce qdd exactly, and that the forward dynamics maps back to qdd and the same
    forces; a weighting shifts load off a foot; a qdd that violates the constraints, or that one
    foot cannot produce, is an error (strict) or a least-squares answer."""
    model, pm = robot("solo12")
    rng = np.random.default_rng(23)
    cons = [screwdyn.PointContact(model, f) for f in FEET["solo12"]]
    _, _, _, q, v, tau = random_state(model, pm, rng)
    J = C.constraint_jacobian(model, q, cons)
    v = v - np.linalg.pinv(J) @ (J @ v)
    tau[:6] = 0.0
    qdd, lam = C.constrained_forward_dynamics(model, q, v, tau, cons)
    tau_id, lam_id = C.constrained_inverse_dynamics(model, q, v, qdd, cons)
    assert np.all(tau_id[:6] == 0.0)
    assert rel(screwdyn.inverse_dynamics(model, q, v, qdd), tau_id + J.T @ lam_id) < 1e-10
    back, lam_back = C.constrained_forward_dynamics(model, q, v, tau_id, cons)
    assert rel(back, qdd) < 1e-8 and rel(lam_back, lam_id) < 1e-8
    w = np.ones(12)
    w[:3] = 100.0                                         # the first foot costs more
    _, lam_w = C.constrained_inverse_dynamics(model, q, v, qdd, cons, weights=w)
    assert np.linalg.norm(lam_w[:3]) < np.linalg.norm(lam_id[:3])
    with pytest.raises(InputError, match="violates the constraints"):
        C.constrained_inverse_dynamics(model, q, v, qdd + 1.0, cons)
    one_foot = [cons[0]]
    qdd1, _ = C.constrained_forward_dynamics(model, q, v, tau, one_foot)
    with pytest.raises(InputError, match="no constraint force balances"):
        C.constrained_inverse_dynamics(model, q, v, qdd1 + _null_step(model, q, one_foot), one_foot)
    tau_ls, lam_ls = C.constrained_inverse_dynamics(model, q, v, qdd1 + _null_step(model, q, one_foot), one_foot,
                                                    strict=False)
    assert np.abs(tau_ls[:6]).max() > 1e-3


def _null_step(model, q, cons):
    """An acceleration change that keeps J qdd (the constraint) but that one foot cannot produce."""
    J = C.constraint_jacobian(model, q, cons)
    x = np.zeros(model.n)
    x[:6] = (1.0, 0.5, -0.3, 2.0, 1.0, 0.0)
    return x - np.linalg.pinv(J) @ (J @ x)


@pytest.mark.parametrize("ref", ["local", "world"])
def test_drift_is_the_rate_of_J_qd_up_to_terms_in_J_qd(ref):
    """gamma against d/dt (J qd) by central differences along qdd = 0 (screwdyn.integrate), for each
    kind: equal for world points, local frames and couplings, and differing by docs/theory.md
    (15.4)'s terms in J qd for local points and world frames."""
    model, pm = robot("solo12")
    rng = np.random.default_rng(29)
    _, _, _, q, v, _ = random_state(model, pm, rng)
    cases = [screwdyn.PointContact(model, "FL_FOOT", offset=(0.01, 0.02, 0.0), reference=ref),
             screwdyn.PointLoop(model, "FR_FOOT", "HL_FOOT", offset_b=(0.0, 0.01, 0.0), reference=ref),
             screwdyn.FrameContact(model, "HR_FOOT", reference=ref),
             screwdyn.FrameLoop(model, "FL_FOOT", "HR_FOOT", reference=ref),
             screwdyn.JointCoupling(model, {"FL_KFE": 1.0, "HR_HFE": -2.0})]
    h = 1e-5
    for c in cases:
        Jp, Jm = (C.constraint_jacobian(model, screwdyn.integrate(model, q, s * v, dt=h), [c]) for s in (1.0, -1.0))
        rate = (Jp - Jm) @ v / (2 * h)
        gamma = C.constraint_drift(model, q, v, [c])
        jv = C.constraint_jacobian(model, q, [c]) @ v
        if c.kind == "point" and ref == "local":
            w = screwdyn.frame_velocity(model, q, v, c.frame_a, "body")[:3]
            gamma = gamma - np.cross(w, jv)
        elif c.kind == "frame" and ref == "world":
            u = screwdyn.frame_velocity(model, q, v, c.frame_a, "world_aligned")[3:]   # of p_a (T_a_b = 1)
            gamma = gamma + np.concatenate([np.zeros(3), np.cross(jv[:3], u)])
        assert np.abs(rate - gamma).max() < 1e-6 * (1 + np.abs(gamma).max()), (c, ref)
