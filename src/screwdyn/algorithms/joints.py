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

import numpy as np
from numba import njit

from .internals import HELPER, fma, window
from .layout import AXIS, AXISK, BALL, FREE, INNER, JSCALE, JTYPE, ONE_DOF, POS, POSEK, PRISMATIC, QIDX, ROT
from .spatial_kernels import compose


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
    j = np.floor(fma(x, _TWO_OVER_PI, 0.5))              # x = j pi/2 + r, |r| <= pi/4
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
    k = j - 4.0 * np.floor(0.25 * j)                     # the quadrant, 0 .. 3
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
def joint_integrate(kd, Q, V, dt, OUT, m):
    """``OUT[l] = Q[l] (+) V[l] dt`` for the rows ``l < m`` of ``Q (L, nq)``, ``V (L, nv)``: the
    configuration reached from ``q`` by moving with the velocity ``v`` for ``dt`` (the exponential
    map of each joint's configuration space; every integrator's position update goes through
    here). Revolute and prismatic joints: ``q_i + dt v_i``, one loop over the rows' numbers. ``OUT``
    may be ``Q``."""
    size = m * Q.shape[1]
    q, v, out = window(Q, 0, (size,)), window(V, 0, (size,)), window(OUT, 0, (size,))
    for x in range(size):
        out[x] = q[x] + dt * v[x]
