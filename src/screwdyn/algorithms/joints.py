"""The joint interface: the only code in screwdyn that branches on the joint type.

A joint ``i`` joins body ``p(i)`` to body ``i``. Body ``i``'s frame sits on the joint axis,
so the joint's screw axis in that frame is (notes 000 and 001, ``A_i``)::

    revolute   S_i = s (a, 0)        prismatic   S_i = s (0, a)

with ``a`` a unit axis and ``s`` the joint scale (1 unless a screw list gives a non-unit axis),

and the pose of body ``i`` in its parent is ``T_{p(i),i}(q_i) = T_{p(i),i}(0) exp([S_i] q_i)``.

Two functions make the interface, in the style of Featherstone's ``jcalc``:
:func:`joint_pose` gives ``T_{p(i),i}(q_i)`` and :func:`joint_screw` gives ``S_i``, both as
tuples of plain numbers; :func:`joint_transform` and :func:`motion_subspace` write the same into
arrays. All are numba ``njit`` functions inlined into the algorithm kernels.
"""
import math

from numba import njit

from .layout import AXIS, AXISK, JSCALE, JTYPE, POS, PRISMATIC, ROT


@njit(cache=True, inline="always")
def joint_pose(kd, i, qi):
    """``T_{p(i),i}(q_i) = (R, p)`` as twelve numbers ``(R00, R01, R02, R10, .., R22, p0, p1, p2)``
    (plain values, which the compiler keeps in registers).

    Revolute: ``R = R_0 Rot(a, s q)`` (Rodrigues), ``p = p_0``.
    Prismatic: ``R = R_0``, ``p = p_0 + R_0 a s q``.
    """
    qi = qi * kd[i, JSCALE]
    ax = kd[i, AXIS]
    ay = kd[i, AXIS + 1]
    az = kd[i, AXIS + 2]
    R00, R01, R02 = kd[i, ROT], kd[i, ROT + 1], kd[i, ROT + 2]
    R10, R11, R12 = kd[i, ROT + 3], kd[i, ROT + 4], kd[i, ROT + 5]
    R20, R21, R22 = kd[i, ROT + 6], kd[i, ROT + 7], kd[i, ROT + 8]
    p0, p1, p2 = kd[i, POS], kd[i, POS + 1], kd[i, POS + 2]
    if kd[i, JTYPE] == PRISMATIC:
        p0 += (R00 * ax + R01 * ay + R02 * az) * qi
        p1 += (R10 * ax + R11 * ay + R12 * az) * qi
        p2 += (R20 * ax + R21 * ay + R22 * az) * qi
        return R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2
    s = math.sin(qi)
    c = math.cos(qi)
    k = kd[i, AXISK]
    # a coordinate axis x, y or z: R = R_0 Rot(e_k, q) keeps column k of R_0 and turns the other two
    if k == 3.0:
        return (c * R00 + s * R01, c * R01 - s * R00, R02,
                c * R10 + s * R11, c * R11 - s * R10, R12,
                c * R20 + s * R21, c * R21 - s * R20, R22, p0, p1, p2)
    if k == 1.0:
        return (R00, c * R01 + s * R02, c * R02 - s * R01,
                R10, c * R11 + s * R12, c * R12 - s * R11,
                R20, c * R21 + s * R22, c * R22 - s * R21, p0, p1, p2)
    if k == 2.0:
        return (c * R00 - s * R02, R01, c * R02 + s * R00,
                c * R10 - s * R12, R11, c * R12 + s * R10,
                c * R20 - s * R22, R21, c * R22 + s * R20, p0, p1, p2)
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


@njit(cache=True, inline="always")
def joint_screw(kd, i):
    """The joint's screw axis in body ``i``'s frame as six numbers: ``s (a, 0)`` or ``s (0, a)``."""
    s = kd[i, JSCALE]
    a0 = kd[i, AXIS] * s
    a1 = kd[i, AXIS + 1] * s
    a2 = kd[i, AXIS + 2] * s
    if kd[i, JTYPE] == PRISMATIC:
        return 0.0, 0.0, 0.0, a0, a1, a2
    return a0, a1, a2, 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
def joint_transform(kd, i, qi, R, p):
    """Write ``T_{p(i),i}(q_i)`` of :func:`joint_pose` into ``R (3, 3)`` and ``p (3,)``."""
    T = joint_pose(kd, i, qi)
    for r in range(3):
        R[r, 0] = T[3 * r]
        R[r, 1] = T[3 * r + 1]
        R[r, 2] = T[3 * r + 2]
        p[r] = T[9 + r]


@njit(cache=True, inline="always")
def motion_subspace(kd, i, S):
    """Write the screw axis of :func:`joint_screw` into ``S (6,)``."""
    s = joint_screw(kd, i)
    for r in range(6):
        S[r] = s[r]
