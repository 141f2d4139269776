"""The joint interface: the only code in screwdyn that branches on the joint type.

The kernels see one degree of freedom per row ``i`` of the packed model (:mod:`.layout`). A
one-DoF joint ``i`` joins body ``p(i)`` to body ``i``. Body ``i``'s frame sits on the joint axis,
so the joint's screw axis in that frame is (docs/theory.md §4)::

    revolute   S_i = s (a, 0)        prismatic   S_i = s (0, a)

with ``a`` a unit axis and ``s`` the joint scale (1 unless a screw list gives a non-unit axis),
and the pose of body ``i`` in its parent is ``T_{p(i),i}(q_i) = T_{p(i),i}(0) exp([S_i] q_i)``.

A free-flyer or spherical joint takes consecutive rows, one per column of its motion subspace
(docs/theory.md §4.5): its first row's pose is ``T_{p,i}(0) (R(quat), p)`` (a free-flyer: the
seven entries ``(p, quat)`` of its q block; spherical: ``(R(quat), 0)``, four entries), the other
rows sit at the identity in the row before. Each row's twist is the whole joint's,
``V = [Ad] V_p + S qd_block`` (:func:`joint_velocity`: the first row adds the joint's whole
``S qd_block``, the others nothing), so that the per-row acceleration terms ``S_i qdd_i +
[ad_{V}] S_i qd_i`` add up to the joint's ``S qdd + [ad_V] S qd``.

As Featherstone's ``jcalc``: :func:`joint_pose` gives ``T_{p(i),i}(q_i)`` and :func:`joint_screw`
gives ``S_i``, as tuples of plain numbers (twelve: ``R`` row-major, then ``p``; six), which the
compiler keeps in registers. :func:`joint_poses` gives the poses of many states side by side
(lanes): their sines and cosines in one loop without branches, then one loop per joint kind with
the kind a constant; sine and cosine are polynomials (:func:`sincos`) so that the loop vectorises
and gives one state's numbers exactly.
"""
import math

from .internals import floor, fma, window
from .layout import AXIS, AXISK, BALL, FREE, INNER, JSCALE, JTYPE, ONE_DOF, POS, POSEK, PRISMATIC, QIDX, ROT
from .spatial_kernels import compose
from .target import HELPER, ONE, njit
from .work import q_size


# sin and cos as polynomials (Cephes' sin.c): the argument reduced by pi/2 in three parts (Cody and
# Waite; j * _PIO2_1 and j * _PIO2_2 are exact for |j| < 2^29), then minimax polynomials on
# [-pi/4, pi/4]. Within 2 ulp of the correctly rounded values up to |x| = SINCOS_LIMIT; beyond it
# the library's sin and cos. No call and no branch, so that a loop over states vectorises.
_TWO_OVER_PI = 0.63661977236758134308
_PIO2_1 = 1.57079625129699707031
_PIO2_2 = 7.54978941586159635335e-8
_PIO2_3 = 5.39030285815811905290e-15
SINCOS_LIMIT = 1.0e8

# Kinds of joint (:func:`joint_kind`), each with its own arithmetic in :func:`joint_pose_of_kind`;
# and the rows of free-flyer and spherical joints (:func:`quaternion_pose`).
PRISMATIC_JOINT, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z, REVOLUTE_AXIS = 0, 1, 2, 3, 4
FREE_POSE, BALL_POSE, INNER_POSE = 5, 6, 7
IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


@njit(**HELPER)
def sincos_reduced(x):
    """``(sin x, cos x)`` for ``|x| <= SINCOS_LIMIT``, without a branch or a call."""
    j = floor(fma(x, _TWO_OVER_PI, 0.5))                 # x = j pi/2 + r, |r| <= pi/4
    r = fma(-j, _PIO2_3, fma(-j, _PIO2_2, fma(-j, _PIO2_1, x)))
    z = r * r
    ps = fma(fma(fma(fma(fma(1.58962301576546568060e-10, z, -2.50507477628578072866e-8), z,
                         2.75573136213857245213e-6), z, -1.98412698295895385996e-4), z,
                 8.33333333332211858878e-3), z, -1.66666666666666307295e-1)
    pc = fma(fma(fma(fma(fma(-1.13585365213876817300e-11, z, 2.08757008419747316778e-9), z,
                         -2.75573141792967388112e-7), z, 2.48015872888517045348e-5), z,
                 -1.38888888888730564116e-3), z, 4.16666666666665929218e-2)
    s = fma(r * z, ps, r)
    c = fma(z * z, pc, 1.0 - 0.5 * z)
    k = j - 4.0 * floor(0.25 * j)                        # the quadrant, 0 .. 3
    sin = s if k == 0.0 else (c if k == 1.0 else (-s if k == 2.0 else -c))
    cos = c if k == 0.0 else (-s if k == 1.0 else (-c if k == 2.0 else s))
    return sin, cos


@njit(**HELPER)
def sincos(x):
    """``(sin x, cos x)``: :func:`sincos_reduced`, or the library's beyond ``SINCOS_LIMIT``."""
    if abs(x) > SINCOS_LIMIT:
        return math.sin(x), math.cos(x)
    return sincos_reduced(x)


@njit(**HELPER)
def _poses_of_kind(kd, i, qi, Q, SC, W, m, kind):
    for l in range(m):
        T = joint_pose_of_kind(kd, i, Q[qi, l], SC[0, l], SC[1, l], kind)
        for c in range(12):
            W[c, l] = T[c]


@njit(**HELPER)
def quaternion_pose(kd, i, x, y, z, qx, qy, qz, qw):
    """``T_{p,i}(0) (R, (x, y, z))`` with ``R`` the rotation of the quaternion ``(qx, qy, qz, qw)``
    (scalar last) scaled to unit length, ``R = 1 + 2 w [v] + 2 [v]^2`` for ``(v, w)`` unit (a
    free-flyer's first row; a spherical joint's with ``x = y = z = 0``)."""
    s = 2.0 / (qx * qx + qy * qy + qz * qz + qw * qw)
    xx, yy, zz = s * qx * qx, s * qy * qy, s * qz * qz
    xy, xz, yz = s * qx * qy, s * qx * qz, s * qy * qz
    wx, wy, wz = s * qw * qx, s * qw * qy, s * qw * qz
    Tq = (1.0 - yy - zz, xy - wz, xz + wy,
          xy + wz, 1.0 - xx - zz, yz - wx,
          xz - wy, yz + wx, 1.0 - xx - yy, x, y, z)
    T0 = (kd[i, ROT], kd[i, ROT + 1], kd[i, ROT + 2], kd[i, ROT + 3], kd[i, ROT + 4], kd[i, ROT + 5],
          kd[i, ROT + 6], kd[i, ROT + 7], kd[i, ROT + 8], kd[i, POS], kd[i, POS + 1], kd[i, POS + 2])
    return compose(T0, Tq)


@njit(**HELPER)
def joint_poses(kd, i, Q, SC, W, m):
    """``W[:, l] = T_{p,i}(q)`` (twelve numbers) for the lanes ``l < m`` of ``Q (nq, L)``, exactly
    as :func:`joint_pose` gives each: ``SC (2, L)`` takes the sines and cosines, computed in one
    loop without branches (the rare arguments beyond ``SINCOS_LIMIT`` again with the library's),
    then the poses in a loop with the joint kind a constant."""
    kind = joint_kind(kd, i)
    qi = int(kd[i, QIDX])
    if kind >= FREE_POSE:
        if kind == FREE_POSE:
            for l in range(m):
                T = quaternion_pose(kd, i, Q[qi, l], Q[qi + 1, l], Q[qi + 2, l], Q[qi + 3, l], Q[qi + 4, l],
                                    Q[qi + 5, l], Q[qi + 6, l])
                for c in range(12):
                    W[c, l] = T[c]
        elif kind == BALL_POSE:
            for l in range(m):
                T = quaternion_pose(kd, i, 0.0, 0.0, 0.0, Q[qi, l], Q[qi + 1, l], Q[qi + 2, l], Q[qi + 3, l])
                for c in range(12):
                    W[c, l] = T[c]
        else:
            for l in range(m):
                for c in range(12):
                    W[c, l] = IDENTITY[c]
        return
    scale = kd[i, JSCALE]
    for l in range(m):
        SC[0, l], SC[1, l] = sincos_reduced(Q[qi, l] * scale)
    for l in range(m):
        x = Q[qi, l] * scale
        if abs(x) > SINCOS_LIMIT:
            SC[0, l], SC[1, l] = math.sin(x), math.cos(x)
    if kind == PRISMATIC_JOINT:
        _poses_of_kind(kd, i, qi, Q, SC, W, m, PRISMATIC_JOINT)
    elif kind == REVOLUTE_X:
        _poses_of_kind(kd, i, qi, Q, SC, W, m, REVOLUTE_X)
    elif kind == REVOLUTE_Y:
        _poses_of_kind(kd, i, qi, Q, SC, W, m, REVOLUTE_Y)
    elif kind == REVOLUTE_Z:
        _poses_of_kind(kd, i, qi, Q, SC, W, m, REVOLUTE_Z)
    else:
        _poses_of_kind(kd, i, qi, Q, SC, W, m, REVOLUTE_AXIS)


@njit(**HELPER)
def joint_pose(kd, i, q):
    """``T_{p(i),i}(q) = (R, p)`` of row ``i`` for the configuration ``q (nq,)``, as twelve numbers
    ``(R00, R01, R02, R10, .., R22, p0, p1, p2)`` (plain values, which the compiler keeps in registers).

    Revolute: ``R = R_0 Rot(a, s q_i)`` (Rodrigues), ``p = p_0``.
    Prismatic: ``R = R_0``, ``p = p_0 + R_0 a s q_i``.
    Free-flyer, spherical: :func:`quaternion_pose`; their inner rows: the identity.
    """
    kind = joint_kind(kd, i)
    qi = int(kd[i, QIDX])
    if kind == FREE_POSE:
        return quaternion_pose(kd, i, q[qi], q[qi + 1], q[qi + 2], q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6])
    if kind == BALL_POSE:
        return quaternion_pose(kd, i, 0.0, 0.0, 0.0, q[qi], q[qi + 1], q[qi + 2], q[qi + 3])
    if kind == INNER_POSE:
        return IDENTITY
    if kind == PRISMATIC_JOINT:
        return joint_pose_of_kind(kd, i, q[qi], 0.0, 1.0, kind)
    s, c = sincos(q[qi] * kd[i, JSCALE])
    return joint_pose_of_kind(kd, i, q[qi], s, c, kind)


@njit(**HELPER)
def joint_velocity(kd, i, S, qd):
    """What row ``i`` adds to its parent's twist, ``V_i = [Ad_{T_{i,p}}] V_p + v_J`` (six numbers),
    for the velocities ``qd (nv,)``: ``S_i qd_i`` (one DoF); the whole joint's ``S qd_block`` on a
    free-flyer's or spherical joint's first row (``qd_block`` itself, its rows' ``S`` being unit
    axes in order); nothing on their inner rows."""
    pk = kd[i, POSEK]
    if pk == ONE_DOF:
        x = qd[i]
        return S[0] * x, S[1] * x, S[2] * x, S[3] * x, S[4] * x, S[5] * x
    if pk == FREE:
        return qd[i], qd[i + 1], qd[i + 2], qd[i + 3], qd[i + 4], qd[i + 5]
    if pk == BALL:
        return qd[i], qd[i + 1], qd[i + 2], 0.0, 0.0, 0.0
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@njit(**HELPER)
def joint_velocities(kd, i, S, QD, VJ, m):
    """:func:`joint_velocity` for the lanes ``l < m`` of ``QD (nv, L)`` into ``VJ (6, L)``, a loop
    with the row's kind a constant."""
    pk = kd[i, POSEK]
    if pk == ONE_DOF:
        s0, s1, s2, s3, s4, s5 = S
        for l in range(m):
            x = QD[i, l]
            VJ[0, l], VJ[1, l], VJ[2, l], VJ[3, l], VJ[4, l], VJ[5, l] = s0 * x, s1 * x, s2 * x, s3 * x, s4 * x, s5 * x
    elif pk == FREE:
        for l in range(m):
            for c in range(6):
                VJ[c, l] = QD[i + c, l]
    elif pk == BALL:
        for l in range(m):
            for c in range(3):
                VJ[c, l] = QD[i + c, l]
                VJ[3 + c, l] = 0.0
    else:
        for l in range(m):
            for c in range(6):
                VJ[c, l] = 0.0


@njit(**HELPER)
def in_parent_frame(kd, i):
    """Whether row ``i``'s frame is its parent row's for every ``q`` (``T_{p,i}`` the identity: an
    inner row of a free-flyer or spherical joint). A kernel then skips the change of frame between
    the two rows (adds, where it would transform): the same numbers, five rows' work fewer per
    free-flyer."""
    return kd[i, POSEK] == INNER


@njit(**HELPER)
def screw_half(kd, i):
    """Which half of row ``i``'s screw ``S_i`` is nonzero: 0 for a rotation ``s (a, 0)``, 1 for a
    translation ``s (0, a)`` (:func:`joint_screw`; every row is one or the other)."""
    return 1 if kd[i, JTYPE] == PRISMATIC else 0


@njit(**HELPER)
def joint_kind(kd, i):
    """The kind of row ``i``: prismatic, revolute about the x, y or z axis of its frame, revolute
    about another axis; or the first row of a free-flyer or spherical joint, or an inner row."""
    pk = kd[i, POSEK]
    if pk != ONE_DOF:
        return FREE_POSE if pk == FREE else (BALL_POSE if pk == BALL else INNER_POSE)
    if kd[i, JTYPE] == PRISMATIC:
        return PRISMATIC_JOINT
    k = kd[i, AXISK]
    return REVOLUTE_X if k == 1.0 else (REVOLUTE_Y if k == 2.0 else (REVOLUTE_Z if k == 3.0 else REVOLUTE_AXIS))


@njit(**HELPER)
def joint_pose_of_kind(kd, i, qi, s, c, kind):
    """:func:`joint_pose` for a joint of the given :func:`joint_kind`, given ``s = sin(s q_i)`` and
    ``c = cos(s q_i)`` (a revolute joint; a prismatic joint uses ``q_i``). A kernel that calls it in
    a loop over states with ``kind`` a constant gets a loop without branches (vectorised)."""
    qi = qi * kd[i, JSCALE]
    ax = kd[i, AXIS]
    ay = kd[i, AXIS + 1]
    az = kd[i, AXIS + 2]
    R00, R01, R02 = kd[i, ROT], kd[i, ROT + 1], kd[i, ROT + 2]
    R10, R11, R12 = kd[i, ROT + 3], kd[i, ROT + 4], kd[i, ROT + 5]
    R20, R21, R22 = kd[i, ROT + 6], kd[i, ROT + 7], kd[i, ROT + 8]
    p0, p1, p2 = kd[i, POS], kd[i, POS + 1], kd[i, POS + 2]
    if kind == PRISMATIC_JOINT:
        p0 += (R00 * ax + R01 * ay + R02 * az) * qi
        p1 += (R10 * ax + R11 * ay + R12 * az) * qi
        p2 += (R20 * ax + R21 * ay + R22 * az) * qi
        return R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2
    # a coordinate axis x, y or z: R = R_0 Rot(e_k, q) keeps column k of R_0 and turns the other two
    if kind == REVOLUTE_Z:      # (c R00 + s R01, c R01 - s R00, R02), ...
        return (fma(c, R00, s * R01), fma(c, R01, -s * R00), R02,
                fma(c, R10, s * R11), fma(c, R11, -s * R10), R12,
                fma(c, R20, s * R21), fma(c, R21, -s * R20), R22, p0, p1, p2)
    if kind == REVOLUTE_X:      # (R00, c R01 + s R02, c R02 - s R01), ...
        return (R00, fma(c, R01, s * R02), fma(c, R02, -s * R01),
                R10, fma(c, R11, s * R12), fma(c, R12, -s * R11),
                R20, fma(c, R21, s * R22), fma(c, R22, -s * R21), p0, p1, p2)
    if kind == REVOLUTE_Y:      # (c R00 - s R02, R01, c R02 + s R00), ...
        return (fma(c, R00, -s * R02), R01, fma(c, R02, s * R00),
                fma(c, R10, -s * R12), R11, fma(c, R12, s * R10),
                fma(c, R20, -s * R22), R21, fma(c, R22, s * R20), p0, p1, p2)
    # Rodrigues: Rot(a, q) = I + sin q [a] + (1 - cos q) [a]^2
    t = 1.0 - c
    j00 = c + t * ax * ax
    j01 = t * ax * ay - s * az
    j02 = t * ax * az + s * ay
    j10 = t * ax * ay + s * az
    j11 = c + t * ay * ay
    j12 = t * ay * az - s * ax
    j20 = t * ax * az - s * ay
    j21 = t * ay * az + s * ax
    j22 = c + t * az * az
    return (R00 * j00 + R01 * j10 + R02 * j20, R00 * j01 + R01 * j11 + R02 * j21, R00 * j02 + R01 * j12 + R02 * j22,
            R10 * j00 + R11 * j10 + R12 * j20, R10 * j01 + R11 * j11 + R12 * j21, R10 * j02 + R11 * j12 + R12 * j22,
            R20 * j00 + R21 * j10 + R22 * j20, R20 * j01 + R21 * j11 + R22 * j21, R20 * j02 + R21 * j12 + R22 * j22,
            p0, p1, p2)


@njit(**HELPER)
def joint_screw(kd, i):
    """The joint's screw axis in body ``i``'s frame as six numbers: ``s (a, 0)`` or ``s (0, a)``."""
    s = kd[i, JSCALE]
    a0 = kd[i, AXIS] * s
    a1 = kd[i, AXIS + 1] * s
    a2 = kd[i, AXIS + 2] * s
    if kd[i, JTYPE] == PRISMATIC:
        return 0.0, 0.0, 0.0, a0, a1, a2
    return a0, a1, a2, 0.0, 0.0, 0.0


@njit(**HELPER)
def quaternion_exp(w0, w1, w2):
    """The unit quaternion ``(x, y, z, w)`` of ``exp([omega])``, a rotation by ``|omega|`` about
    ``omega`` (``sin(t/2) / t`` by its series below ``t = 1e-4``)."""
    t = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    half = 0.5 - t * t / 48.0 if t < 1e-4 else math.sin(0.5 * t) / t
    return half * w0, half * w1, half * w2, math.cos(0.5 * t)


@njit(**HELPER)
def quaternion_step(x, y, z, w, e0, e1, e2):
    """``unit(q exp([omega]))`` for the quaternion ``q = (x, y, z, w)`` (scaled to unit length first)
    and ``omega = e``: a rotation turned by ``omega`` in its own frame."""
    s = 1.0 / math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x * s, y * s, z * s, w * s
    bx, by, bz, bw = quaternion_exp(e0, e1, e2)
    cx = w * bx + bw * x + (y * bz - z * by)
    cy = w * by + bw * y + (z * bx - x * bz)
    cz = w * bz + bw * z + (x * by - y * bx)
    cw = w * bw - (x * bx + y * by + z * bz)
    u = 1.0 / math.sqrt(cx * cx + cy * cy + cz * cz + cw * cw)
    return x, y, z, w, cx * u, cy * u, cz * u, cw * u


@njit(**HELPER)
def se3_translation(w0, w1, w2, x0, x1, x2):
    """``V(omega) x``, ``V = 1 + b [omega] + c [omega]^2``: the translation of ``exp`` of the twist
    ``(omega, x)`` (Modern Robotics (3.88); ``b``, ``c`` by their series below ``|omega| = 1e-3``)."""
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    t = math.sqrt(t2)
    if t < 1e-3:
        b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
        c = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    else:
        b = (1.0 - math.cos(t)) / t2
        c = (t - math.sin(t)) / (t2 * t)
    y0, y1, y2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0          # omega x x
    z0, z1, z2 = w1 * y2 - w2 * y1, w2 * y0 - w0 * y2, w0 * y1 - w1 * y0          # omega x (omega x x)
    return x0 + b * y0 + c * z0, x1 + b * y1 + c * z1, x2 + b * y2 + c * z2


@njit(**HELPER)
def quaternion_rotate(x, y, z, w, p0, p1, p2):
    """``R(q) p`` for a unit quaternion ``(x, y, z, w)``: ``p + w t + v x t``, ``t = 2 v x p``."""
    t0, t1, t2 = 2.0 * (y * p2 - z * p1), 2.0 * (z * p0 - x * p2), 2.0 * (x * p1 - y * p0)
    return (p0 + w * t0 + (y * t2 - z * t1), p1 + w * t1 + (z * t0 - x * t2), p2 + w * t2 + (x * t1 - y * t0))


@njit(**HELPER)
def dof_position(kd, i):
    """Where row ``i``'s position is in ``q``: its one-DoF joint's coordinate, or -1 for the rows of
    a free-flyer or spherical joint (no coordinate of their own, and no position limits)."""
    return int(kd[i, QIDX]) if kd[i, POSEK] == ONE_DOF else -1


@njit(**HELPER)
def has_manifold(kd):
    """Whether some joint of the packed model is a free-flyer or spherical joint (``nq > nv``)."""
    return q_size(kd) != kd.shape[0] - 1


@njit(**HELPER)
def joint_integrate(kd, Q, V, dt, OUT, m):
    """``OUT[l] = Q[l] (+) V[l] dt`` for the rows ``l < m`` of ``Q (L, nq)``, ``V (L, nv)``: the
    configuration reached from ``q`` by moving with the velocity ``v`` for ``dt`` (the exponential
    map of each joint's configuration space, docs/theory.md (4.9); every integrator's position
    update goes through here, and :func:`screwdyn.integrate`). Revolute and prismatic joints:
    ``q_i + dt v_i`` (one loop over the rows' numbers when no joint has more); a free-flyer's pose
    ``T(q) exp([V dt])`` (its position moves by ``R(q) V(omega dt) v dt``), a spherical joint's
    rotation ``R(q) exp([omega dt])``, quaternions out of unit length. ``OUT`` may be ``Q``."""
    if not has_manifold(kd):
        size = m * Q.shape[1]
        q, v, out = window(Q, 0, (size,)), window(V, 0, (size,)), window(OUT, 0, (size,))
        for x in range(size):
            out[x] = q[x] + dt * v[x]
        return
    joint_integrate_rows(kd, Q, V, dt, OUT, m)


@njit(**HELPER)
def joint_integrate_rows(kd, Q, V, dt, OUT, m):
    """:func:`joint_integrate` joint by joint (a GPU driver's, and the CPU's for a model with a
    free-flyer or spherical joint)."""
    n = kd.shape[0] - 1
    for i in range(n):
        pk = kd[i, POSEK]
        qi = int(kd[i, QIDX])
        if pk == ONE_DOF:
            for l in range(m):
                OUT[l, qi] = Q[l, qi] + dt * V[l, i]
        elif pk == FREE:
            for l in range(m):
                free_flyer_step(Q[l], V[l], qi, i, dt, OUT[l])
        elif pk == BALL:
            for l in range(m):
                ball_step(Q[l], V[l], qi, i, dt, OUT[l])


@njit(**HELPER)
def free_flyer_step(q, v, qi, i, dt, out):
    """``out[qi:qi + 7]``: a free-flyer's ``(p, quat)`` at ``q[qi:]`` moved by ``exp([V dt])``, ``V =
    v[i:i + 6]`` in its own frame (:func:`joint_integrate`; ``out`` may be ``q``)."""
    p0, p1, p2 = q[qi], q[qi + 1], q[qi + 2]
    w0, w1, w2 = v[i] * dt, v[i + 1] * dt, v[i + 2] * dt
    x, y, z, w, cx, cy, cz, cw = quaternion_step(q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6], w0, w1, w2)
    d0, d1, d2 = quaternion_rotate(x, y, z, w, *se3_translation(w0, w1, w2, v[i + 3] * dt, v[i + 4] * dt,
                                                               v[i + 5] * dt))
    out[qi], out[qi + 1], out[qi + 2] = p0 + d0, p1 + d1, p2 + d2
    out[qi + 3], out[qi + 4], out[qi + 5], out[qi + 6] = cx, cy, cz, cw


@njit(**HELPER)
def ball_step(q, v, qi, i, dt, out):
    """``out[qi:qi + 4]``: a spherical joint's quaternion at ``q[qi:]`` turned by ``exp([omega dt])``,
    ``omega = v[i:i + 3]`` (:func:`joint_integrate`; ``out`` may be ``q``)."""
    _, _, _, _, cx, cy, cz, cw = quaternion_step(q[qi], q[qi + 1], q[qi + 2], q[qi + 3], v[i] * dt, v[i + 1] * dt,
                                                 v[i + 2] * dt)
    out[qi], out[qi + 1], out[qi + 2], out[qi + 3] = cx, cy, cz, cw


@njit(**HELPER)
def joint_integrate_decoupled(kd, Q, V, dt, OUT, m):
    """:func:`joint_integrate`, but a free-flyer moves on ``SO(3) x R^3`` (MuJoCo's free joint): its
    origin along the straight line ``p + dt R v``, its rotation ``R exp([omega dt])`` (``V`` its body
    twist ``(omega, v)`` in the frame ``R = R(q)`` at the start of the step), and its twist is
    carried into the new body frame, ``v <- exp(-[omega dt]) v`` (``V`` changed in place), so that
    the origin's world velocity is the same at both ends of the step. The velocity-level contact
    step (docs/theory.md §18.1) holds a contact point's velocity ``R (v + omega x r)`` for the whole
    step: on ``SE(3)``, along the screw of ``exp([V dt])``, a rolling ball's centre would fall by ``r
    (omega dt)^2 / 2`` a step. Its velocity update is then the origin's classical acceleration in
    the frame ``R``: :func:`frame_drift`. ``OUT`` must not be ``Q``."""
    n = kd.shape[0] - 1
    joint_integrate(kd, Q, V, dt, OUT, m)
    for i in range(n):
        if kd[i, POSEK] == FREE:
            qi = int(kd[i, QIDX])
            for l in range(m):
                x, y, z, w = Q[l, qi + 3], Q[l, qi + 4], Q[l, qi + 5], Q[l, qi + 6]
                s = 1.0 / math.sqrt(x * x + y * y + z * z + w * w)
                d0, d1, d2 = quaternion_rotate(x * s, y * s, z * s, w * s, V[l, i + 3] * dt, V[l, i + 4] * dt,
                                               V[l, i + 5] * dt)
                OUT[l, qi], OUT[l, qi + 1], OUT[l, qi + 2] = Q[l, qi] + d0, Q[l, qi + 1] + d1, Q[l, qi + 2] + d2
                bx, by, bz, bw = quaternion_exp(-V[l, i] * dt, -V[l, i + 1] * dt, -V[l, i + 2] * dt)
                V[l, i + 3], V[l, i + 4], V[l, i + 5] = quaternion_rotate(bx, by, bz, bw, V[l, i + 3], V[l, i + 4],
                                                                          V[l, i + 5])


@njit(**HELPER)
def frame_drift(kd, v, dt, out):
    """``out = dt (0, omega x v)`` on each free-flyer's rows of ``v (nv,)``, zero on the others: what
    the body twist's rate ``dv/dt`` lacks of the origin's classical acceleration ``R^T a = dv/dt +
    omega x v``, for the step of :func:`joint_integrate_decoupled`, which holds the frame ``R`` over
    the step and turns the twist into the new frame at its end."""
    n = kd.shape[0] - 1
    for i in range(n):
        out[i] = 0.0
    for i in range(n):
        if kd[i, POSEK] == FREE:
            w0, w1, w2, u0, u1, u2 = v[i], v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5]
            out[i + 3] = dt * (w1 * u2 - w2 * u1)
            out[i + 4] = dt * (w2 * u0 - w0 * u2)
            out[i + 5] = dt * (w0 * u1 - w1 * u0)


@njit(**HELPER)
def joint_dexp_inverse(kd, K, c, V, OUT, m):
    """``OUT[l] = dexp^-1_{c K[l]}(V[l])`` for the rows ``l < m`` of ``(L, nv)`` arrays: the rate of
    ``xi`` where ``q0 (+) xi`` moves with the velocity ``v`` (docs/theory.md §13; a
    Runge-Kutta-Munthe-Kaas stage): ``v + [xi, v] / 2 + [xi, [xi, v]] / 12`` on a free-flyer's or
    spherical joint's block (``[., .]`` the twists' bracket ``ad``), ``v`` on the others. ``OUT`` may
    be ``K``."""
    n = kd.shape[0] - 1
    for i in range(n):
        pk = kd[i, POSEK]        # (an inner row's numbers are its joint's first row's, written there)
        if pk == ONE_DOF:
            for l in range(m):
                OUT[l, i] = V[l, i]
        elif pk == FREE:
            for l in range(m):
                x = (c * K[l, i], c * K[l, i + 1], c * K[l, i + 2], c * K[l, i + 3], c * K[l, i + 4], c * K[l, i + 5])
                y = (V[l, i], V[l, i + 1], V[l, i + 2], V[l, i + 3], V[l, i + 4], V[l, i + 5])
                b = twist_bracket(x, y)
                bb = twist_bracket(x, b)
                for e in range(6):
                    OUT[l, i + e] = y[e] + 0.5 * b[e] + bb[e] / 12.0
        elif pk == BALL:
            for l in range(m):
                x = (c * K[l, i], c * K[l, i + 1], c * K[l, i + 2], 0.0, 0.0, 0.0)
                y = (V[l, i], V[l, i + 1], V[l, i + 2], 0.0, 0.0, 0.0)
                b = twist_bracket(x, y)
                bb = twist_bracket(x, b)
                for e in range(3):
                    OUT[l, i + e] = y[e] + 0.5 * b[e] + bb[e] / 12.0


@njit(**HELPER)
def twist_bracket(a, b):
    """``[a, b] = ad_a b`` of twists ``(w, u)``: ``(wa x wb, wa x ub + ua x wb)``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0],
            (a[1] * b[5] - a[2] * b[4]) + (a[4] * b[2] - a[5] * b[1]),
            (a[2] * b[3] - a[0] * b[5]) + (a[5] * b[0] - a[3] * b[2]),
            (a[0] * b[4] - a[1] * b[3]) + (a[3] * b[1] - a[4] * b[0]))


@njit(**ONE)
def integrate_rows(kd, Q, V, dt, OUT):
    """:func:`joint_integrate` of every row of ``Q (B, nq)``, ``V (B, nv)`` into ``OUT (B, nq)`` (C
    arrays; :func:`screwdyn.integrate`)."""
    joint_integrate(kd, Q, V, dt, OUT, Q.shape[0])


@njit(**ONE)
def dexp_inverse_rows(kd, X, V, OUT):
    """:func:`joint_dexp_inverse` of every row of ``X, V (B, nv)`` into ``OUT`` (C arrays;
    :func:`screwdyn.configuration.dexp_inverse`)."""
    joint_dexp_inverse(kd, X, 1.0, V, OUT, X.shape[0])
