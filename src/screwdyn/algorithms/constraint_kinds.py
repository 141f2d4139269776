"""The constraint interface: the only code in screwdyn that branches on the constraint kind.

A constraint ``c`` (a row of the packed ``cd``, :mod:`.constraint_layout`) joins the frame
``ca`` on body ``a`` to the frame ``cb`` on body ``b`` (the base: ``b = -1``, ``cb`` a pose in the
world). Given the world poses ``T_{0,ca} = (R_a, p_a)``, ``T_{0,cb} = (R_b, p_b)`` and the bodies'
spatial twists ``V = (w, v)`` and bias accelerations ``A = (dw, dv)`` (their rates at ``qdd = 0``,
without gravity; ``v`` the velocity of the point at the world origin: docs/theory.md §5), each
kind gives its rows of ``J qd``, of the drift ``gamma`` and of the position error ``e``
(docs/theory.md §15.2, §15.3)::

    POINT  u(V, p) = v + w x p                      a point's velocity
           a(V, A, p) = dv + dw x p + w x u(V, p)  its acceleration at qdd = 0
           J qd  = Q (u(V_a, p_a) - u(V_b, p_b))
           gamma = Q (a(V_a, A_a, p_a) - a(V_b, A_b, p_b))
           e     = Q (p_a - p_b)
    FRAME  J qd  = LOCAL: [Ad_{T_{ca,0}}] (V_a - V_b)      WORLD: X_a (V_a - V_b)
           gamma = LOCAL: [Ad_{T_{ca,0}}] (A_a - A_b) + [ad_{V_a'}] V_b'   (V' = [Ad_{T_{ca,0}}] V)
                   WORLD: X_a (A_a - A_b)
           e     = LOCAL: log(T_{0,cb}^-1 T_{0,ca})       WORLD: (R_a, R_a) times it
                   (a contact without anchor: e = 0)
    JOINT  J qd  = sum_j k_j qd_j,   gamma = 0,   e = sum_j k_j q_j - offset

with ``Q = R_a^T`` (LOCAL: the axes of ``ca``) or ``1`` (WORLD), and ``X_a (w, v) = (w, v + w x
p_a)`` (a twist seen at ``p_a``, world axes). These are Pinocchio's ``constraintDynamics``: for a
point the acceleration of the point, for a frame the rate of the twist of ``ca`` relative to
``cb``; ``gamma`` is ``Jdot qd`` wherever the constraint holds at the velocity level (``J qd =
0``; docs/theory.md (15.4)). A column of ``J`` is the ``J qd`` of a joint's unit twist (the
twists enter linearly): :func:`jacobian_rows`.

Each helper returns six numbers (the first ``size`` are the rows: 3, 6 or 1), plain values the
compiler keeps in registers, as :mod:`.joints` does for the joints.
"""
import math

from .constraint_layout import (
    CANCHORED, CBODY_A, CBODY_B, CKD, CKIND, CKP, CNTERMS, COFFSET, CPOSE_A, CPOSE_B, CREF, CROW, CSIZE, CTERMS, FRAME,
    JOINT, LOCAL, POINT,
)
from .joints import joint_screw
from .layout import PARENT
from .spatial_kernels import (
    ad, compose, cross, rotate6, translate_twist, translate_wrench, twist_to_child, twist_to_world,
)
from .target import HELPER, njit
from .work import get12

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(**HELPER)
def constraint_size(cd, c):
    """The rows of constraint ``c``: 3, 6 or 1."""
    return int(cd[c, CSIZE])


@njit(**HELPER)
def constraint_row(cd, c):
    """Where constraint ``c``'s rows start in ``lam`` and ``J``."""
    return int(cd[c, CROW])


@njit(**HELPER)
def constraint_gains(cd, c):
    """The Baumgarte gains ``(Kp, Kd)`` of constraint ``c``."""
    return cd[c, CKP], cd[c, CKD]


@njit(**HELPER)
def constraint_bodies(cd, c):
    """The kernel rows of bodies ``a`` and ``b`` of constraint ``c`` (-1: the fixed base, or none)."""
    return int(cd[c, CBODY_A]), int(cd[c, CBODY_B])


@njit(**HELPER)
def _placement(cd, c, col):
    return (cd[c, col], cd[c, col + 1], cd[c, col + 2], cd[c, col + 3], cd[c, col + 4], cd[c, col + 5],
            cd[c, col + 6], cd[c, col + 7], cd[c, col + 8], cd[c, col + 9], cd[c, col + 10], cd[c, col + 11])


@njit(**HELPER)
def constraint_frames(cd, c, Tw):
    """``(T_{0,ca}, T_{0,cb})`` of constraint ``c`` from the world poses ``Tw (n + 1, 12, 1)`` of the
    kernel rows (row ``n``: the base, the identity)."""
    n = Tw.shape[0] - 1
    a, b = constraint_bodies(cd, c)
    Ta = compose(get12(Tw[a if a >= 0 else n], 0), _placement(cd, c, CPOSE_A))
    Tb = compose(get12(Tw[b if b >= 0 else n], 0), _placement(cd, c, CPOSE_B))
    return Ta, Tb


@njit(**HELPER)
def _local(T, x0, x1, x2):
    """``R^T x`` for the rotation of the pose ``T``."""
    return (T[0] * x0 + T[3] * x1 + T[6] * x2, T[1] * x0 + T[4] * x1 + T[7] * x2,
            T[2] * x0 + T[5] * x1 + T[8] * x2)


@njit(**HELPER)
def _point_velocity(V, p):
    """``u = v + w x p``: the velocity of the point ``p`` of a body of spatial twist ``V``."""
    c = cross((V[0], V[1], V[2]), p)
    return V[3] + c[0], V[4] + c[1], V[5] + c[2]


@njit(**HELPER)
def _point_acceleration(V, A, p):
    """``dv + dw x p + w x u``: the acceleration of the point ``p`` (``A`` the spatial acceleration)."""
    u = _point_velocity(V, p)
    c = cross((A[0], A[1], A[2]), p)
    d = cross((V[0], V[1], V[2]), u)
    return A[3] + c[0] + d[0], A[4] + c[1] + d[1], A[5] + c[2] + d[2]


@njit(**HELPER)
def _in_reference(cd, c, Ta, x):
    """Rows ``x`` (a point's three, or a frame's six in world axes at ``p_a``) in the constraint's
    reference: ``R_a^T`` for LOCAL, as they are for WORLD."""
    if cd[c, CREF] != LOCAL:
        return x
    r0, r1, r2 = _local(Ta, x[0], x[1], x[2])
    if int(cd[c, CKIND]) == POINT:
        return r0, r1, r2, 0.0, 0.0, 0.0
    r3, r4, r5 = _local(Ta, x[3], x[4], x[5])
    return r0, r1, r2, r3, r4, r5


@njit(**HELPER)
def twist_rows(cd, c, Ta, Tb, V, side):
    """The rows of ``J qd`` that a spatial twist ``V`` of body ``a`` (``side`` 0) or ``b`` (1)
    contributes, before the sign of its side: a point's velocity (POINT) or ``V`` seen at ``p_a``
    (FRAME), in the reference. JOINT: none (six zeros)."""
    kind = int(cd[c, CKIND])
    if kind == POINT:
        p = (Ta[9], Ta[10], Ta[11]) if side == 0 else (Tb[9], Tb[10], Tb[11])
        u = _point_velocity(V, p)
        return _in_reference(cd, c, Ta, (u[0], u[1], u[2], 0.0, 0.0, 0.0))
    if kind == FRAME:
        return _in_reference(cd, c, Ta, translate_twist((Ta[9], Ta[10], Ta[11]), V))
    return ZERO6


@njit(**HELPER)
def _difference(x, y):
    return x[0] - y[0], x[1] - y[1], x[2] - y[2], x[3] - y[3], x[4] - y[4], x[5] - y[5]


@njit(**HELPER)
def _coupling(cd, c, x, use_q):
    """``sum_j k_j x_j`` over the terms of a JOINT row: ``x`` indexed as ``q`` (``use_q``) or ``qd``."""
    s = 0.0
    for t in range(int(cd[c, CNTERMS])):
        s += cd[c, CTERMS + 3 * t + 2] * x[int(cd[c, CTERMS + 3 * t + (0 if use_q else 1)])]
    return s


@njit(**HELPER)
def velocity_rows(cd, c, Ta, Tb, Va, Vb, qd):
    """``J qd`` of constraint ``c`` (six numbers, ``size`` of them rows) from the spatial twists
    ``Va``, ``Vb`` of its bodies (zero for the base) and ``qd (nv,)``."""
    if int(cd[c, CKIND]) == JOINT:
        return _coupling(cd, c, qd, False), 0.0, 0.0, 0.0, 0.0, 0.0
    return _difference(twist_rows(cd, c, Ta, Tb, Va, 0), twist_rows(cd, c, Ta, Tb, Vb, 1))


@njit(**HELPER)
def drift_rows(cd, c, Ta, Tb, Va, Aa, Vb, Ab):
    """``gamma`` of constraint ``c`` (six numbers): the constrained quantity's acceleration at
    ``qdd = 0`` (module docstring) from the bodies' spatial twists ``V`` and bias accelerations ``A``."""
    kind = int(cd[c, CKIND])
    if kind == POINT:
        x = _point_acceleration(Va, Aa, (Ta[9], Ta[10], Ta[11]))
        y = _point_acceleration(Vb, Ab, (Tb[9], Tb[10], Tb[11]))
        return _in_reference(cd, c, Ta, (x[0] - y[0], x[1] - y[1], x[2] - y[2], 0.0, 0.0, 0.0))
    if kind == FRAME:
        dA = _difference(Aa, Ab)
        if cd[c, CREF] == LOCAL:
            g = twist_to_child(Ta, dA)
            b = ad(twist_to_child(Ta, Va), twist_to_child(Ta, Vb))
            return g[0] + b[0], g[1] + b[1], g[2] + b[2], g[3] + b[3], g[4] + b[4], g[5] + b[5]
        return translate_twist((Ta[9], Ta[10], Ta[11]), dA)
    return ZERO6


@njit(**HELPER)
def log_rotation(R):
    """``omega`` with ``exp([omega]) = R`` (nine numbers, row-major), ``|omega| <= pi``: the angle by
    ``atan2(|s|, c)`` (``s = sin t a`` from the skew part, ``c = cos t``), the axis from the skew
    part, or near ``t = pi`` from the symmetric part (the column of ``R + R^T - 2c`` of largest diagonal)."""
    s0, s1, s2 = 0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    s = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    t = math.atan2(s, c)
    if c > -0.5:
        f = 1.0 + t * t / 6.0 if s < 1e-8 else t / s          # t / sin t
        return f * s0, f * s1, f * s2
    d = 1.0 - c                                               # R + R^T = 2c + 2 (1 - c) a a^T
    b00, b11, b22 = R[0] - c, R[4] - c, R[8] - c
    if b00 >= b11 and b00 >= b22:
        a0 = math.sqrt(max(b00 / d, 0.0))
        a1, a2 = 0.5 * (R[1] + R[3]) / (d * a0), 0.5 * (R[2] + R[6]) / (d * a0)
    elif b11 >= b22:
        a1 = math.sqrt(max(b11 / d, 0.0))
        a0, a2 = 0.5 * (R[1] + R[3]) / (d * a1), 0.5 * (R[5] + R[7]) / (d * a1)
    else:
        a2 = math.sqrt(max(b22 / d, 0.0))
        a0, a1 = 0.5 * (R[2] + R[6]) / (d * a2), 0.5 * (R[5] + R[7]) / (d * a2)
    if a0 * s0 + a1 * s1 + a2 * s2 < 0.0:                     # the sign of sin t a
        a0, a1, a2 = -a0, -a1, -a2
    return t * a0, t * a1, t * a2


@njit(**HELPER)
def log_pose(T):
    """``(omega, v)`` with ``exp([(omega, v)]) = T`` (twelve numbers; docs/theory.md (2.18)-(2.19) inverted):
    ``omega = log R``, ``v = V(omega)^-1 p``, ``V^-1 = 1 - [w]/2 + beta [w]^2``,
    ``beta = 1/t^2 - cos(t/2) / (2 t sin(t/2))`` (its series below ``t = 1e-3``)."""
    w0, w1, w2 = log_rotation((T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8]))
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    t = math.sqrt(t2)
    if t < 1e-3:
        beta = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    else:
        beta = 1.0 / t2 - math.cos(0.5 * t) / (2.0 * t * math.sin(0.5 * t))
    p = (T[9], T[10], T[11])
    x = cross((w0, w1, w2), p)
    y = cross((w0, w1, w2), x)
    return w0, w1, w2, p[0] - 0.5 * x[0] + beta * y[0], p[1] - 0.5 * x[1] + beta * y[1], p[2] - 0.5 * x[2] + beta * y[2]


@njit(**HELPER)
def error_rows(cd, c, Ta, Tb, q):
    """The position error ``e`` of constraint ``c`` (six numbers; module docstring) for the
    Baumgarte corrector; zero for a contact without anchor (no position to hold it at)."""
    if cd[c, CANCHORED] == 0.0:
        return ZERO6
    kind = int(cd[c, CKIND])
    if kind == POINT:
        return _in_reference(cd, c, Ta, (Ta[9] - Tb[9], Ta[10] - Tb[10], Ta[11] - Tb[11], 0.0, 0.0, 0.0))
    if kind == FRAME:
        Tbi = (Tb[0], Tb[3], Tb[6], Tb[1], Tb[4], Tb[7], Tb[2], Tb[5], Tb[8],
               -(Tb[0] * Tb[9] + Tb[3] * Tb[10] + Tb[6] * Tb[11]), -(Tb[1] * Tb[9] + Tb[4] * Tb[10] + Tb[7] * Tb[11]),
               -(Tb[2] * Tb[9] + Tb[5] * Tb[10] + Tb[8] * Tb[11]))
        e = log_pose(compose(Tbi, Ta))                          # log(T_{cb,ca})
        if cd[c, CREF] == LOCAL:
            return e
        return rotate6((Ta[0], Ta[1], Ta[2], Ta[3], Ta[4], Ta[5], Ta[6], Ta[7], Ta[8]), e)
    return _coupling(cd, c, q, True) - cd[c, COFFSET], 0.0, 0.0, 0.0, 0.0, 0.0


@njit(**HELPER)
def jacobian_rows(kd, cd, c, Tw, J):
    """Constraint ``c``'s rows of the constraint Jacobian into ``J (m, nv)`` (each row zeroed first):
    column ``j`` is the rows of the unit twist ``[Ad_{T_{0,j}}] S_j`` of kernel row ``j``, plus for
    each ancestor of ``a`` and minus for each of ``b`` (:func:`twist_rows`); a JOINT row is ``k``.
    ``Tw (n + 1, 12, 1)``: the world poses of the kernel rows."""
    r0, size = constraint_row(cd, c), constraint_size(cd, c)
    n = J.shape[1]
    for r in range(size):
        for j in range(n):
            J[r0 + r, j] = 0.0
    if int(cd[c, CKIND]) == JOINT:
        for t in range(int(cd[c, CNTERMS])):
            J[r0, int(cd[c, CTERMS + 3 * t + 1])] += cd[c, CTERMS + 3 * t + 2]
        return
    Ta, Tb = constraint_frames(cd, c, Tw)
    for side in range(2):
        j = int(cd[c, CBODY_A + side])
        sign = 1.0 if side == 0 else -1.0
        while j >= 0:
            x = twist_rows(cd, c, Ta, Tb, twist_to_world(get12(Tw[j], 0), joint_screw(kd, j)), side)
            J[r0, j] += sign * x[0]
            if size > 1:
                J[r0 + 1, j] += sign * x[1]
                J[r0 + 2, j] += sign * x[2]
                if size > 3:
                    J[r0 + 3, j] += sign * x[3]
                    J[r0 + 4, j] += sign * x[4]
                    J[r0 + 5, j] += sign * x[5]
            j = int(kd[j, PARENT])


# ---------------------------------------------------------------------------------- derivatives
# The derivatives of the rows above (docs/theory.md §17.2, §17.3). Each ``*_tangent`` helper gives the change
# of its rows along a change of their arguments: the poses by world twists ``xa``, ``xb``
# (``T_{0,ca} -> exp([xa] e) T_{0,ca}``, ``T_{0,cb}`` likewise), the bodies' twists and accelerations by
# ``dVa``, ``dAa``, ``dVb``, ``dAb`` (all in the world frame). A point of a frame moves with it at the
# velocity ``u(x, p)`` of :func:`_point_velocity`; rows in ``ca``'s axes (LOCAL) turn with ``xa``.
@njit(**HELPER)
def _sub3(x, y):
    return x[0] - y[0], x[1] - y[1], x[2] - y[2]


@njit(**HELPER)
def _add3(x, y):
    return x[0] + y[0], x[1] + y[1], x[2] + y[2]


@njit(**HELPER)
def _scaled(s, x):
    return s * x[0], s * x[1], s * x[2], s * x[3], s * x[4], s * x[5]


@njit(**HELPER)
def _point_velocity_tangent(V, p, dV, dp):
    """The change of ``u = v + w x p`` for changes ``dV`` of the twist and ``dp`` of the point."""
    return _add3(_add3((dV[3], dV[4], dV[5]), cross((dV[0], dV[1], dV[2]), p)), cross((V[0], V[1], V[2]), dp))


@njit(**HELPER)
def _point_acceleration_tangent(V, A, p, dV, dA, dp):
    """The change of :func:`_point_acceleration` ``dv + dw x p + w x u``."""
    a = _add3(_add3((dA[3], dA[4], dA[5]), cross((dA[0], dA[1], dA[2]), p)), cross((A[0], A[1], A[2]), dp))
    b = _add3(cross((dV[0], dV[1], dV[2]), _point_velocity(V, p)),
              cross((V[0], V[1], V[2]), _point_velocity_tangent(V, p, dV, dp)))
    return _add3(a, b)


@njit(**HELPER)
def _reference_tangent(cd, c, Ta, xa, x, dx):
    """The change of :func:`_in_reference`'s rows ``Q x`` (``x`` a point's three numbers or a
    frame's six, world axes) for a change ``dx`` of ``x`` and ``xa`` of ``ca``'s pose: LOCAL
    ``R_a^T (dx - w_a x x)`` (each 3-block), WORLD ``dx``."""
    if cd[c, CREF] != LOCAL:
        return dx
    w = (xa[0], xa[1], xa[2])
    d = _sub3((dx[0], dx[1], dx[2]), cross(w, (x[0], x[1], x[2])))
    r0, r1, r2 = _local(Ta, d[0], d[1], d[2])
    if int(cd[c, CKIND]) == POINT:
        return r0, r1, r2, 0.0, 0.0, 0.0
    d = _sub3((dx[3], dx[4], dx[5]), cross(w, (x[3], x[4], x[5])))
    r3, r4, r5 = _local(Ta, d[0], d[1], d[2])
    return r0, r1, r2, r3, r4, r5


@njit(**HELPER)
def _at_point(p, dp, X, dX):
    """The change of ``(w, v + w x p)`` (a twist seen at ``p``, :func:`translate_twist`) for changes
    ``dX`` of ``X`` and ``dp`` of ``p``."""
    a = translate_twist(p, dX)
    b = cross((X[0], X[1], X[2]), dp)
    return a[0], a[1], a[2], a[3] + b[0], a[4] + b[1], a[5] + b[2]


@njit(**HELPER)
def velocity_rows_tangent(cd, c, Ta, Tb, Va, Vb, xa, xb, dVa, dVb):
    """The change of :func:`velocity_rows` (without a JOINT row's, which depends on ``qd`` alone)."""
    kind = int(cd[c, CKIND])
    pa, pb = (Ta[9], Ta[10], Ta[11]), (Tb[9], Tb[10], Tb[11])
    if kind == POINT:
        x = _point_velocity(Va, pa)
        dx = _point_velocity_tangent(Va, pa, dVa, _point_velocity(xa, pa))
        if cd[c, CBODY_B] >= 0:                                    # (a contact's anchor does not move)
            x = _sub3(x, _point_velocity(Vb, pb))
            dx = _sub3(dx, _point_velocity_tangent(Vb, pb, dVb, _point_velocity(xb, pb)))
        return _reference_tangent(cd, c, Ta, xa, (x[0], x[1], x[2], 0.0, 0.0, 0.0),
                                  (dx[0], dx[1], dx[2], 0.0, 0.0, 0.0))
    if kind == FRAME:
        dV, ddV = _difference(Va, Vb), _difference(dVa, dVb)
        if cd[c, CREF] == LOCAL:                                   # [Ad_{T_{ca,0}}] (dV - [ad_xa] V)
            return twist_to_child(Ta, _difference(ddV, ad(xa, dV)))
        return _at_point(pa, _point_velocity(xa, pa), dV, ddV)
    return ZERO6


@njit(**HELPER)
def drift_rows_tangent(cd, c, Ta, Tb, Va, Aa, Vb, Ab, xa, xb, dVa, dAa, dVb, dAb):
    """The change of :func:`drift_rows` (the acceleration rows ``J qdd + gamma`` when ``A`` holds the
    bodies' accelerations with ``qdd``)."""
    kind = int(cd[c, CKIND])
    pa, pb = (Ta[9], Ta[10], Ta[11]), (Tb[9], Tb[10], Tb[11])
    if kind == POINT:
        x = _point_acceleration(Va, Aa, pa)
        dx = _point_acceleration_tangent(Va, Aa, pa, dVa, dAa, _point_velocity(xa, pa))
        if cd[c, CBODY_B] >= 0:                                    # (a contact's anchor does not move)
            x = _sub3(x, _point_acceleration(Vb, Ab, pb))
            dx = _sub3(dx, _point_acceleration_tangent(Vb, Ab, pb, dVb, dAb, _point_velocity(xb, pb)))
        return _reference_tangent(cd, c, Ta, xa, (x[0], x[1], x[2], 0.0, 0.0, 0.0),
                                  (dx[0], dx[1], dx[2], 0.0, 0.0, 0.0))
    if kind == FRAME:
        if cd[c, CREF] == LOCAL:                                   # Y = dA + [ad_Va] Vb in ca's axes
            y = ad(Va, Vb)
            Y = _difference(_difference(Aa, Ab), _scaled(-1.0, y))
            e, f = ad(dVa, Vb), ad(Va, dVb)
            dY = _difference(_difference(dAa, dAb), (-e[0] - f[0], -e[1] - f[1], -e[2] - f[2], -e[3] - f[3],
                                                     -e[4] - f[4], -e[5] - f[5]))
            return twist_to_child(Ta, _difference(dY, ad(xa, Y)))
        return _at_point(pa, _point_velocity(xa, pa), _difference(Aa, Ab), _difference(dAa, dAb))
    return ZERO6


@njit(**HELPER)
def _jlog3(w, t2, alpha, y):
    """``y + [w] y / 2 + alpha [w]^2 y``: the inverse of SO(3)'s right Jacobian at ``w`` (``t2 = |w|^2``)
    times ``y``."""
    c = cross(w, y)
    wy = w[0] * y[0] + w[1] * y[1] + w[2] * y[2]
    return (y[0] + 0.5 * c[0] + alpha * (wy * w[0] - t2 * y[0]), y[1] + 0.5 * c[1] + alpha * (wy * w[1] - t2 * y[1]),
            y[2] + 0.5 * c[2] + alpha * (wy * w[2] - t2 * y[2]))


@njit(**HELPER)
def log_pose_tangent(T, x):
    """``d/de log(T exp([x] e))`` at ``e = 0`` (six numbers ``(omega, v)``; docs/theory.md (17.8)): the
    inverse of the right Jacobian of SE(3)'s exponential at ``log T`` times the body twist ``x``,
    ``(A x_w, A x_v + B A x_w)`` with ``A`` of :func:`_jlog3`, ``w = log R``, ``t = |w|``, ``p`` the
    translation of ``T``, ``alpha = 1/t^2 - cot(t/2) / (2t)``, ``beta = alpha' / t`` (their series
    below ``t = 0.1``) and ``B y = beta (w.p)(w.y) w - (t^2 beta + 2 alpha)(w.y) p + alpha ((p.y) w +
    (w.p) y) + p x y / 2``."""
    w = log_rotation((T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8]))
    t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    if t2 < 0.01:
        alpha = 1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 * (1.0 / 30240.0 + t2 * (1.0 / 1209600.0 + t2 / 47900160.0)))
        beta = 1.0 / 360.0 + t2 * (1.0 / 7560.0 + t2 * (1.0 / 201600.0 + t2 / 5987520.0))
    else:
        t = math.sqrt(t2)
        s, co = math.sin(t), math.cos(t)
        alpha = 1.0 / t2 - s / (2.0 * t * (1.0 - co))
        beta = -2.0 / (t2 * t2) + (1.0 + s / t) / (2.0 * t2 * (1.0 - co))
    p = (T[9], T[10], T[11])
    aw = _jlog3(w, t2, alpha, (x[0], x[1], x[2]))
    av = _jlog3(w, t2, alpha, (x[3], x[4], x[5]))
    wp = w[0] * p[0] + w[1] * p[1] + w[2] * p[2]
    wy = w[0] * aw[0] + w[1] * aw[1] + w[2] * aw[2]
    py = p[0] * aw[0] + p[1] * aw[1] + p[2] * aw[2]
    c = cross(p, aw)
    g, h = beta * wp * wy + alpha * py, (t2 * beta + 2.0 * alpha) * wy
    return (aw[0], aw[1], aw[2],
            av[0] + g * w[0] - h * p[0] + alpha * wp * aw[0] + 0.5 * c[0],
            av[1] + g * w[1] - h * p[1] + alpha * wp * aw[1] + 0.5 * c[1],
            av[2] + g * w[2] - h * p[2] + alpha * wp * aw[2] + 0.5 * c[2])


@njit(**HELPER)
def error_rows_tangent(cd, c, Ta, Tb, xa, xb):
    """The change of :func:`error_rows` for the changes ``xa``, ``xb`` of the frames' poses (docs/theory.md
    (17.7); zero for a contact without anchor; a JOINT row's, ``k`` over ``q``, by :func:`coupling_columns`):
    POINT ``Q (u(xa, p_a) - u(xb, p_b))`` turned as :func:`_reference_tangent`; FRAME LOCAL
    ``log_pose_tangent(T_{cb,ca}, [Ad_{T_{ca,0}}] (xa - xb))`` (``T_{cb,ca} exp(e [Ad_{T_{ca,0}}] (xa - xb))``
    is the moved relative pose), WORLD that turned by ``R_a`` plus ``w_a x`` each half."""
    if cd[c, CANCHORED] == 0.0:
        return ZERO6
    kind = int(cd[c, CKIND])
    pa, pb = (Ta[9], Ta[10], Ta[11]), (Tb[9], Tb[10], Tb[11])
    if kind == POINT:
        x = _sub3(pa, pb)
        dx = _sub3(_point_velocity(xa, pa), _point_velocity(xb, pb))
        return _reference_tangent(cd, c, Ta, xa, (x[0], x[1], x[2], 0.0, 0.0, 0.0),
                                  (dx[0], dx[1], dx[2], 0.0, 0.0, 0.0))
    if kind == FRAME:
        Tbi = (Tb[0], Tb[3], Tb[6], Tb[1], Tb[4], Tb[7], Tb[2], Tb[5], Tb[8],
               -(Tb[0] * Tb[9] + Tb[3] * Tb[10] + Tb[6] * Tb[11]), -(Tb[1] * Tb[9] + Tb[4] * Tb[10] + Tb[7] * Tb[11]),
               -(Tb[2] * Tb[9] + Tb[5] * Tb[10] + Tb[8] * Tb[11]))
        Tr = compose(Tbi, Ta)                                                   # T_{cb,ca}
        de = log_pose_tangent(Tr, twist_to_child(Ta, _difference(xa, xb)))
        if cd[c, CREF] == LOCAL:
            return de
        Ra = (Ta[0], Ta[1], Ta[2], Ta[3], Ta[4], Ta[5], Ta[6], Ta[7], Ta[8])
        e = rotate6(Ra, log_pose(Tr))
        d = rotate6(Ra, de)
        w = (xa[0], xa[1], xa[2])
        f, g = cross(w, (e[0], e[1], e[2])), cross(w, (e[3], e[4], e[5]))
        return d[0] + f[0], d[1] + f[1], d[2] + f[2], d[3] + g[0], d[4] + g[1], d[5] + g[2]
    return ZERO6


@njit(**HELPER)
def coupling_columns(cd, c, D, r, scale):
    """A JOINT row's ``d e / d q`` (its ``k_j`` at its joints' velocity indices, the same as its row of
    ``J``) times ``scale``, added into row ``r`` of ``D``; nothing for the other kinds (their columns
    come from :func:`error_rows_tangent` along the tree)."""
    if int(cd[c, CKIND]) != JOINT:
        return
    for t in range(int(cd[c, CNTERMS])):
        D[r, int(cd[c, CTERMS + 3 * t + 1])] += scale * cd[c, CTERMS + 3 * t + 2]


@njit(**HELPER)
def _forces(cd, c, Ta, lam):
    """``(n, f)``: constraint ``c``'s moment and force in world axes from its rows of ``lam`` (a
    point's ``n = 0``)."""
    r0 = constraint_row(cd, c)
    if int(cd[c, CKIND]) == POINT:
        x = (0.0, 0.0, 0.0, lam[r0], lam[r0 + 1], lam[r0 + 2])
    else:
        x = (lam[r0], lam[r0 + 1], lam[r0 + 2], lam[r0 + 3], lam[r0 + 4], lam[r0 + 5])
    if cd[c, CREF] != LOCAL:
        return x
    return rotate6((Ta[0], Ta[1], Ta[2], Ta[3], Ta[4], Ta[5], Ta[6], Ta[7], Ta[8]), x)


@njit(**HELPER)
def constraint_wrench(cd, c, Ta, Tb, lam, side):
    """The wrench (world frame, about its origin) constraint ``c`` exerts with its forces ``lam`` on
    body ``a`` (``side`` 0) or ``b`` (1): ``J^T lam`` is the sum over the constraints and sides of
    ``J_j^T`` times it for each ancestor ``j`` of the side's body. ``+-(n + p x f, f)`` at ``p = p_a``
    (FRAME; both sides) or at the side's point (POINT); zero for a JOINT row."""
    kind = int(cd[c, CKIND])
    if kind == JOINT:
        return ZERO6
    F = _forces(cd, c, Ta, lam)
    p = (Ta[9], Ta[10], Ta[11]) if side == 0 or kind == FRAME else (Tb[9], Tb[10], Tb[11])
    W = translate_wrench(p, F)
    return W if side == 0 else _scaled(-1.0, W)


@njit(**HELPER)
def constraint_wrench_tangent(cd, c, Ta, Tb, lam, side, xa, xb):
    """The change of :func:`constraint_wrench` (``lam`` held) for the changes ``xa``, ``xb`` of the
    frames' poses: its point moves at ``u(x, p)`` with its frame, and LOCAL forces turn with ``xa``:
    ``+-(dp x f + p x df + dn, df)``, ``(dn, df) = w_a x (n, f)`` (LOCAL) or zero (WORLD)."""
    kind = int(cd[c, CKIND])
    if kind == JOINT:
        return ZERO6
    n0, n1, n2, f0, f1, f2 = _forces(cd, c, Ta, lam)
    n, f = (n0, n1, n2), (f0, f1, f2)
    a = side == 0 or kind == FRAME
    p = (Ta[9], Ta[10], Ta[11]) if a else (Tb[9], Tb[10], Tb[11])
    dp = _point_velocity(xa, p) if a else _point_velocity(xb, p)
    if cd[c, CREF] == LOCAL:
        w = (xa[0], xa[1], xa[2])
        dn, df = cross(w, n), cross(w, f)
    else:
        dn, df = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    m = _add3(_add3(cross(dp, f), cross(p, df)), dn)
    W = (m[0], m[1], m[2], df[0], df[1], df[2])
    return W if side == 0 else _scaled(-1.0, W)
