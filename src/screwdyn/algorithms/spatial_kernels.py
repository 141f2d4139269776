"""Spatial operators for the compiled kernels, on tuples of plain numbers.

The operators of :mod:`screwdyn.spatial` (docs/theory.md §2), twists ``(w, v)`` and wrenches
``(n, f)`` as 6-tuples, poses ``T = (R, p)`` as the twelve numbers of :func:`.joints.joint_pose`
(``R`` row-major, then ``p``), rotations as 9-tuples. For a body ``i`` whose pose in its parent is
``T_{p,i} = (R, p)``:

* :func:`twist_to_child`   ``[Ad_{T_{i,p}}] V = (R^T w, R^T (v + w x p))``
* :func:`wrench_to_parent` ``[Ad_{T_{i,p}}]^T F = (R n + p x R f, R f)``
* :func:`ad`               ``[ad_V] S = (w x s_w, v x s_w + w x s_v)``
* :func:`cross_force`      ``V x* F = -[ad_V]^T F = (w x n + v x f, w x f)``

and, for the kernels that work in world-aligned frames at each body's origin (CRBA, ABA) or in
the base frame (the Coriolis matrix, kinematics), :func:`aligned` and :func:`world_body`.

Every function is inlined by LLVM into the kernels (``internals.HELPER``): tuples become
registers, and the kernels' loops over states (lanes) keep no array traffic in their bodies.
"""

from .internals import dot3, matmul3
from .target import HELPER, njit


@njit(**HELPER)
def cross(a, b):
    """``a x b`` of 3-tuples."""
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@njit(**HELPER)
def twist_to_child(T, V):
    """``[Ad_{T_{i,p}}] V = (R^T w, R^T (v + w x p))`` for ``T_{p,i} = T = (R, p)``."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2 = T
    w0, w1, w2, v0, v1, v2 = V
    u0 = v0 + w1 * p2 - w2 * p1
    u1 = v1 + w2 * p0 - w0 * p2
    u2 = v2 + w0 * p1 - w1 * p0
    return (R00 * w0 + R10 * w1 + R20 * w2, R01 * w0 + R11 * w1 + R21 * w2, R02 * w0 + R12 * w1 + R22 * w2,
            R00 * u0 + R10 * u1 + R20 * u2, R01 * u0 + R11 * u1 + R21 * u2, R02 * u0 + R12 * u1 + R22 * u2)


@njit(**HELPER)
def wrench_to_parent(T, F):
    """``[Ad_{T_{i,p}}]^T F = (R n + p x R f, R f)`` for ``T_{p,i} = T = (R, p)``."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2 = T
    n0, n1, n2, f0, f1, f2 = F
    g0 = R00 * f0 + R01 * f1 + R02 * f2
    g1 = R10 * f0 + R11 * f1 + R12 * f2
    g2 = R20 * f0 + R21 * f1 + R22 * f2
    return (R00 * n0 + R01 * n1 + R02 * n2 + (p1 * g2 - p2 * g1),
            R10 * n0 + R11 * n1 + R12 * n2 + (p2 * g0 - p0 * g2),
            R20 * n0 + R21 * n1 + R22 * n2 + (p0 * g1 - p1 * g0),
            g0, g1, g2)


@njit(**HELPER)
def ad(V, S):
    """``[ad_V] S = (w x s_w, v x s_w + w x s_v)``: the Lie bracket of twists."""
    w0, w1, w2, v0, v1, v2 = V
    s0, s1, s2, s3, s4, s5 = S
    return (w1 * s2 - w2 * s1, w2 * s0 - w0 * s2, w0 * s1 - w1 * s0,
            (v1 * s2 - v2 * s1) + (w1 * s5 - w2 * s4),
            (v2 * s0 - v0 * s2) + (w2 * s3 - w0 * s5),
            (v0 * s1 - v1 * s0) + (w0 * s4 - w1 * s3))


@njit(**HELPER)
def cross_force(V, F):
    """``V x* F = -[ad_V]^T F = (w x n + v x f, w x f)``: the rate of a wrench carried by a body
    moving with twist ``V``."""
    w0, w1, w2, v0, v1, v2 = V
    n0, n1, n2, f0, f1, f2 = F
    return ((w1 * n2 - w2 * n1) + (v1 * f2 - v2 * f1),
            (w2 * n0 - w0 * n2) + (v2 * f0 - v0 * f2),
            (w0 * n1 - w1 * n0) + (v0 * f1 - v1 * f0),
            w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0)


@njit(**HELPER)
def aligned(Rp, T, S):
    """Body ``i`` in world-aligned form (its frame's axes those of the base, its origin its own):
    from its parent's axes ``R_p`` (9), ``T = T_{p,i}`` (12) and ``S = S_i`` (6), the triple

        R_i = R_p R_{p,i},    r_i = R_p p_{p,i},    J_i = (R_i s_w, R_i s_v)

    (9, 3 and 6 numbers): its axes, the offset of its origin from its parent's in base axes, and
    its joint axis in base axes."""
    R = matmul3(Rp, (T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8]))
    r = (dot3(Rp[0], Rp[1], Rp[2], T[9], T[10], T[11]), dot3(Rp[3], Rp[4], Rp[5], T[9], T[10], T[11]),
         dot3(Rp[6], Rp[7], Rp[8], T[9], T[10], T[11]))
    J = (dot3(R[0], R[1], R[2], S[0], S[1], S[2]), dot3(R[3], R[4], R[5], S[0], S[1], S[2]),
         dot3(R[6], R[7], R[8], S[0], S[1], S[2]), dot3(R[0], R[1], R[2], S[3], S[4], S[5]),
         dot3(R[3], R[4], R[5], S[3], S[4], S[5]), dot3(R[6], R[7], R[8], S[3], S[4], S[5]))
    return R, r, J


@njit(**HELPER)
def aligned_in_parent(Rp, S):
    """:func:`aligned` for a body in its parent's frame (``T_{p,i} = 1``): ``(R_p, 0, (R_p s_w,
    R_p s_v))``, the same numbers without the products by the identity."""
    J = (dot3(Rp[0], Rp[1], Rp[2], S[0], S[1], S[2]), dot3(Rp[3], Rp[4], Rp[5], S[0], S[1], S[2]),
         dot3(Rp[6], Rp[7], Rp[8], S[0], S[1], S[2]), dot3(Rp[0], Rp[1], Rp[2], S[3], S[4], S[5]),
         dot3(Rp[3], Rp[4], Rp[5], S[3], S[4], S[5]), dot3(Rp[6], Rp[7], Rp[8], S[3], S[4], S[5]))
    return Rp, (0.0, 0.0, 0.0), J


@njit(**HELPER)
def world_body(Rp, pp, T, S):
    """Body ``i`` in the base frame from its parent's pose ``T_{0,p} = (R_p, p_p)``: ``R_i = R_p
    R_{p,i}``, ``p_i = R_p p_{p,i} + p_p`` and its joint's space-Jacobian column ``J_i =
    [Ad_{T_{0,i}}] S_i = (R_i s_w, R_i s_v + p_i x R_i s_w)`` (9, 3 and 6 numbers)."""
    R, r, J = aligned(Rp, T, S)
    p = (r[0] + pp[0], r[1] + pp[1], r[2] + pp[2])
    return R, p, (J[0], J[1], J[2], J[3] + (p[1] * J[2] - p[2] * J[1]), J[4] + (p[2] * J[0] - p[0] * J[2]),
                  J[5] + (p[0] * J[1] - p[1] * J[0]))


@njit(**HELPER)
def translate_twist(r, V):
    """``X V = (w, v + w x r)``: a twist seen from a point moved by ``-r`` (world-aligned frames)."""
    w0, w1, w2, v0, v1, v2 = V
    return w0, w1, w2, v0 + (w1 * r[2] - w2 * r[1]), v1 + (w2 * r[0] - w0 * r[2]), v2 + (w0 * r[1] - w1 * r[0])


@njit(**HELPER)
def translate_wrench(r, F):
    """``X^T F = (n + r x f, f)``: the dual of :func:`translate_twist`."""
    n0, n1, n2, f0, f1, f2 = F
    return n0 + (r[1] * f2 - r[2] * f1), n1 + (r[2] * f0 - r[0] * f2), n2 + (r[0] * f1 - r[1] * f0), f0, f1, f2


@njit(**HELPER)
def rotate6(R, V):
    """``(R w, R v)``: a twist or wrench turned to other axes (``R`` row-major, nine numbers)."""
    return (dot3(R[0], R[1], R[2], V[0], V[1], V[2]), dot3(R[3], R[4], R[5], V[0], V[1], V[2]),
            dot3(R[6], R[7], R[8], V[0], V[1], V[2]), dot3(R[0], R[1], R[2], V[3], V[4], V[5]),
            dot3(R[3], R[4], R[5], V[3], V[4], V[5]), dot3(R[6], R[7], R[8], V[3], V[4], V[5]))


@njit(**HELPER)
def pose_of(R, p):
    """The twelve numbers of the pose ``(R, p)``."""
    return R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8], p[0], p[1], p[2]


@njit(**HELPER)
def compose(T1, T2):
    """``T1 T2`` of two poses (twelve numbers each): ``(R1 R2, R1 p2 + p1)``."""
    R1 = (T1[0], T1[1], T1[2], T1[3], T1[4], T1[5], T1[6], T1[7], T1[8])
    R = matmul3(R1, (T2[0], T2[1], T2[2], T2[3], T2[4], T2[5], T2[6], T2[7], T2[8]))
    return (R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8],
            dot3(T1[0], T1[1], T1[2], T2[9], T2[10], T2[11]) + T1[9],
            dot3(T1[3], T1[4], T1[5], T2[9], T2[10], T2[11]) + T1[10],
            dot3(T1[6], T1[7], T1[8], T2[9], T2[10], T2[11]) + T1[11])


@njit(**HELPER)
def twist_to_world(T, S):
    """``[Ad_T] S = (R w, R v + p x R w)`` for ``T = (R, p)``: a twist given in a frame at pose
    ``T``, expressed in the base frame."""
    a0, a1, a2, b0, b1, b2 = rotate6((T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8]), S)
    return a0, a1, a2, b0 + (T[10] * a2 - T[11] * a1), b1 + (T[11] * a0 - T[9] * a2), b2 + (T[9] * a1 - T[10] * a0)
