"""The contact problem of one step built in NumPy from screwdyn's public functions (independent of
the compiled step's assembly, docs/theory.md §18.2), and Pinocchio's ADMM solver on it: the
oracles of tests/test_contacts.py."""
from __future__ import annotations

import numpy as np

import screwdyn
from screwdyn.algorithms import collide as C
from screwdyn.sim.contacts import ContactSettings, _scene


def contacts_of(model, q, environment, settings=None):
    """The contacts the step finds at ``q`` (the narrow phase with the step's margin)."""
    scene = _scene(model, environment, (), True, True, False, 1e-3, settings or ContactSettings())
    from screwdyn import dispatch
    kernel = dispatch.Kernel("collide", scene.collider.tier)
    data, count = dispatch.call(kernel, model, (np.asarray(q, float),), shape=((scene.K, C.WIDTH), (1,)),
                                params=(scene.geoms, scene.pairs, scene.vertices, scene.graph))
    return data[:min(int(count[0]), scene.K)]


def point_jacobian(model, q, body, p):
    """``(3, nv)``: the velocity of the world point ``p`` moving with ``body`` (-1: zero)."""
    if body < 0:
        return np.zeros((3, model.nv))
    Js = screwdyn.jacobian(model, q, model.link_names[body], "space")
    w, v = Js[:3], Js[3:]
    return v - np.cross(p, w.T).T


def frame_drift(model, qd, dt):
    """``dt (0, omega x v)`` on a root free-flyer's rows (theory §18.1), zero elsewhere."""
    c = np.zeros(model.nv)
    if model.joint_type[0] == screwdyn.FREE_FLYER:
        c[3:6] = dt * np.cross(qd[:3], qd[3:6])
    return c


def problem(model, q, qd, tau, dt, environment, settings=None, joint_limits=None):
    """``(G, g, mu, rows)`` of the step's contacts (rigid, no restitution): the Delassus matrix
    over the contacts' rows (normal, tangent 1, tangent 2 each), the free velocities plus biases,
    the friction coefficients, and the contact rows themselves. With ``joint_limits`` (a
    :class:`screwdyn.sim.JointLimits`, or "hard"), also the joints near a limit, one row each after
    the contacts: ``(G, g, mu, rows, R, kind, param)`` with the compliance ``R`` and the kinds and
    parameters of :mod:`screwdyn.algorithms.cone`."""
    from screwdyn.algorithms.cone import NORMAL, TANGENT, UNILATERAL
    from screwdyn.sim.limits import _dof_limits

    settings = settings or ContactSettings()
    rows = contacts_of(model, q, environment, settings)
    M = screwdyn.mass_matrix(model, q)
    h = screwdyn.bias_torques(model, q, qd)
    v_free = qd + frame_drift(model, qd, dt) + dt * np.linalg.solve(M, tau - model.damping * qd - h)
    J, R, b = [], [], []
    for c in rows:
        p = c[C.POS:C.POS + 3]
        Jp = point_jacobian(model, q, int(c[C.BODY_A]), p) - point_jacobian(model, q, int(c[C.BODY_B]), p)
        J.append(c[C.NORMAL:C.TANGENT2 + 3].reshape(3, 3) @ Jp)
        phi = c[C.DIST] - c[C.MARGIN]
        R += [0.0, 0.0, 0.0]
        b += [(phi if phi >= 0 else settings.stabilization * phi) / dt, 0.0, 0.0]
    nc = len(rows)
    kind = [NORMAL, TANGENT, TANGENT] * nc
    if joint_limits is not None:
        lo, hi = _dof_limits(model)
        qv = np.zeros(model.nv)
        one = model.nvs == 1
        qv[model.idx_vs[one]] = q[model.idx_qs[one]]
        if joint_limits == "hard":
            k = c_ = np.zeros(model.nv)
        else:
            k, c_ = joint_limits.constants(model, dt)
        for i in range(model.nv):
            low, high = qv[i] - lo[i], hi[i] - qv[i]
            if min(low, high) < dt * (abs(qd[i]) + abs(v_free[i])):
                e = np.zeros(model.nv)
                e[i] = 1.0 if low <= high else -1.0
                phi = min(low, high)
                d = e @ np.linalg.solve(M, e)
                J.append(e[None])
                kind.append(UNILATERAL)
                if k[i] > 0 or c_[i] > 0:
                    s = dt * k[i] + c_[i]
                    R.append(d / (dt * s))
                    b.append(k[i] * phi / s)
                else:
                    R.append(0.0)
                    b.append((phi if phi >= 0 else settings.stabilization * phi) / dt)
    J = np.concatenate(J)
    G = J @ np.linalg.solve(M, J.T)
    g = J @ v_free + np.array(b)
    mu = np.where(rows[:, C.CONDIM] >= 3, rows[:, C.MU], 0.0) if nc else np.zeros(0)
    if joint_limits is None:
        return G, g, mu, rows
    param = np.zeros(len(g))
    param[0:3 * nc:3] = mu
    return G, g, mu, rows, np.array(R), np.array(kind, dtype=float), param


def pinocchio_admm(G, g, mu, tol=1e-12, max_iterations=20000):
    """Pinocchio 4.1's ``ADMMConstraintSolver`` on ``(G, g)`` with a Coulomb cone per contact (rows
    normal first here, tangents first in Pinocchio's cones): the impulses, normal first."""
    import pinocchio as pin

    model = pin.Model()
    joint = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "anchor")
    nc = len(mu)
    P = np.zeros((3 * nc, 3 * nc))
    for k in range(nc):
        P[3 * k:3 * k + 3, 3 * k:3 * k + 3] = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]   # (n, t1, t2) -> (t1, t2, n)
    models, datas = pin.StdVec_ConstraintModel(), pin.StdVec_ConstraintData()
    for k in range(nc):
        cm = pin.PointContactConstraintModel(model, joint)
        cm.setFriction(float(mu[k]))
        models.append(pin.ConstraintModel(cm))
    for cm in models:
        datas.append(cm.createData())
    settings = pin.ADMMSolverSettings()
    settings.absolute_feasibility_tol = settings.absolute_complementarity_tol = tol
    settings.relative_feasibility_tol = settings.relative_complementarity_tol = 0.0
    settings.max_iterations = max_iterations
    result = pin.ADMMSolverResult()
    solver = pin.ADMMConstraintSolver(3 * nc)
    converged = solver.solve(pin.DelassusOperatorDense(P @ G @ P.T), P @ g, models, datas, settings, result)
    return P.T @ result.retrieveConstraintImpulses(), bool(converged)
