"""The joint interface: the only code in screwdyn that branches on the joint type.

A joint ``i`` joins body ``p(i)`` to body ``i``. Body ``i``'s frame sits on the joint axis,
so the joint's screw axis in that frame is (notes 000 and 001, ``A_i``)::

    revolute   S_i = s (a, 0)        prismatic   S_i = s (0, a)

with ``a`` a unit axis and ``s`` the joint scale (1 unless a screw list gives a non-unit axis),

and the pose of body ``i`` in its parent is ``T_{p(i),i}(q_i) = T_{p(i),i}(0) exp([S_i] q_i)``.

Two functions make the interface, in the style of Featherstone's ``jcalc``:
:func:`joint_transform` gives ``T_{p(i),i}(q_i)`` and :func:`motion_subspace` gives ``S_i``.
Both are numba ``njit`` functions inlined into the algorithm kernels.
"""
import math

from numba import njit

from .layout import AXIS, AXISK, JSCALE, JTYPE, POS, PRISMATIC, ROT


@njit(cache=True, inline="always")
def joint_transform(kd, i, qi, R, p):
    """Write ``T_{p(i),i}(q_i) = (R, p)`` into ``R (3, 3)`` and ``p (3,)``.

    Revolute: ``R = R_0 Rot(a, s q)`` (Rodrigues), ``p = p_0``.
    Prismatic: ``R = R_0``, ``p = p_0 + R_0 a s q``.
    """
    qi = qi * kd[i, JSCALE]
    ax = kd[i, AXIS]
    ay = kd[i, AXIS + 1]
    az = kd[i, AXIS + 2]
    if kd[i, JTYPE] == PRISMATIC:
        for r in range(3):
            R0r0 = kd[i, ROT + 3 * r]
            R0r1 = kd[i, ROT + 3 * r + 1]
            R0r2 = kd[i, ROT + 3 * r + 2]
            R[r, 0] = R0r0
            R[r, 1] = R0r1
            R[r, 2] = R0r2
            p[r] = kd[i, POS + r] + (R0r0 * ax + R0r1 * ay + R0r2 * az) * qi
        return
    s = math.sin(qi)
    c = math.cos(qi)
    k = kd[i, AXISK]
    if k != 0.0:
        # a coordinate axis x, y or z: R = R_0 Rot(e_k, q) mixes two columns of R_0 and keeps one
        j = int(k) - 1                       # the axis column, kept
        j1 = (j + 1) % 3                     # the two columns rotated into each other
        j2 = (j + 2) % 3
        for r in range(3):
            a1 = kd[i, ROT + 3 * r + j1]
            a2 = kd[i, ROT + 3 * r + j2]
            R[r, j] = kd[i, ROT + 3 * r + j]
            R[r, j1] = c * a1 + s * a2
            R[r, j2] = c * a2 - s * a1
            p[r] = kd[i, POS + r]
        return
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
    for r in range(3):
        R0r0 = kd[i, ROT + 3 * r]
        R0r1 = kd[i, ROT + 3 * r + 1]
        R0r2 = kd[i, ROT + 3 * r + 2]
        R[r, 0] = R0r0 * j00 + R0r1 * j10 + R0r2 * j20
        R[r, 1] = R0r0 * j01 + R0r1 * j11 + R0r2 * j21
        R[r, 2] = R0r0 * j02 + R0r1 * j12 + R0r2 * j22
        p[r] = kd[i, POS + r]


@njit(cache=True, inline="always")
def motion_subspace(kd, i, S):
    """Write the joint's screw axis in body ``i``'s frame, ``S_i = s (a, 0)`` or ``s (0, a)``, into ``S (6,)``."""
    prismatic = kd[i, JTYPE] == PRISMATIC
    for r in range(3):
        a = kd[i, AXIS + r] * kd[i, JSCALE]
        S[r] = 0.0 if prismatic else a
        S[3 + r] = a if prismatic else 0.0
