"""Spatial operators on 6-vectors for the compiled kernels, written out component-wise.

The same operators as :mod:`screwdyn.spatial`, (omega, v) and (n, f) ordering, for a body
``i`` whose pose in its parent is ``T_{p,i} = (R, p)``:

* :func:`twist_to_child`      ``V_i  = [Ad_{T_{i,p}}] V_p = (R^T w, R^T (v + w x p))``
* :func:`wrench_to_parent`    ``F_p += [Ad_{T_{i,p}}]^T F_i = (R n + p x R f, R f)``
* :func:`bracket`             ``[ad_V] S = (w x s_w, v x s_w + w x s_v)``

and, for the kernels that work in world-aligned frames (CRBA, ABA),
:func:`aligned_body` ``R_i = R_p R_{p,i}``, ``r_i = R_p p_{p,i}``, ``J_i = (R_i s_w, R_i s_v)``
(:func:`aligned`: the same in plain numbers).

The ``*6`` variants take the pose as the twelve numbers of :func:`.joints.joint_pose` and the
6-vectors as plain numbers, and return plain numbers: no array traffic in the inner loops.
"""
from numba import njit

from .fma import dot3, matmul3
from .joints import joint_pose, joint_screw



@njit(cache=True, inline="always")
def cross_add(a0, a1, a2, b0, b1, b2, out, o, scale):
    """``out[o:o+3] += scale * (a x b)``."""
    out[o] += scale * (a1 * b2 - a2 * b1)
    out[o + 1] += scale * (a2 * b0 - a0 * b2)
    out[o + 2] += scale * (a0 * b1 - a1 * b0)


@njit(cache=True, inline="always")
def twist_to_child(R, p, Vp, Vi):
    """``Vi = [Ad_{T_{i,p}}] Vp`` with ``T_{p,i} = (R, p)``: ``(R^T w, R^T (v + w x p))``."""
    w0, w1, w2 = Vp[0], Vp[1], Vp[2]
    u0 = Vp[3] + w1 * p[2] - w2 * p[1]
    u1 = Vp[4] + w2 * p[0] - w0 * p[2]
    u2 = Vp[5] + w0 * p[1] - w1 * p[0]
    for c in range(3):
        Vi[c] = R[0, c] * w0 + R[1, c] * w1 + R[2, c] * w2
        Vi[3 + c] = R[0, c] * u0 + R[1, c] * u1 + R[2, c] * u2


@njit(cache=True, inline="always")
def wrench_to_parent(R, p, Fi, Fp):
    """``Fp += [Ad_{T_{i,p}}]^T Fi``: ``n_p += R n + p x (R f)``, ``f_p += R f``."""
    f0 = R[0, 0] * Fi[3] + R[0, 1] * Fi[4] + R[0, 2] * Fi[5]
    f1 = R[1, 0] * Fi[3] + R[1, 1] * Fi[4] + R[1, 2] * Fi[5]
    f2 = R[2, 0] * Fi[3] + R[2, 1] * Fi[4] + R[2, 2] * Fi[5]
    for r in range(3):
        Fp[r] += R[r, 0] * Fi[0] + R[r, 1] * Fi[1] + R[r, 2] * Fi[2]
    Fp[0] += p[1] * f2 - p[2] * f1
    Fp[1] += p[2] * f0 - p[0] * f2
    Fp[2] += p[0] * f1 - p[1] * f0
    Fp[3] += f0
    Fp[4] += f1
    Fp[5] += f2


@njit(cache=True, inline="always")
def bracket_add(V, S, scale, out):
    """``out += scale * [ad_V] S = scale * (w x s_w, v x s_w + w x s_v)``."""
    cross_add(V[0], V[1], V[2], S[0], S[1], S[2], out, 0, scale)
    cross_add(V[3], V[4], V[5], S[0], S[1], S[2], out, 3, scale)
    cross_add(V[0], V[1], V[2], S[3], S[4], S[5], out, 3, scale)


@njit(cache=True, inline="always")
def twist_to_child6(T, w0, w1, w2, v0, v1, v2):
    """``[Ad_{T_{i,p}}] (w, v) = (R^T w, R^T (v + w x p))`` for ``T_{p,i} = T = (R, p)`` (12 numbers)."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2 = T
    u0 = v0 + w1 * p2 - w2 * p1
    u1 = v1 + w2 * p0 - w0 * p2
    u2 = v2 + w0 * p1 - w1 * p0
    return (R00 * w0 + R10 * w1 + R20 * w2, R01 * w0 + R11 * w1 + R21 * w2, R02 * w0 + R12 * w1 + R22 * w2,
            R00 * u0 + R10 * u1 + R20 * u2, R01 * u0 + R11 * u1 + R21 * u2, R02 * u0 + R12 * u1 + R22 * u2)


@njit(cache=True, inline="always")
def wrench_to_parent6(T, n0, n1, n2, f0, f1, f2, F, par):
    """``F[par] += [Ad_{T_{i,p}}]^T (n, f) = (R n + p x R f, R f)`` for ``T_{p,i} = T = (R, p)`` (12 numbers)."""
    m0, m1, m2, g0, g1, g2 = wrench_to_parent6v(T, n0, n1, n2, f0, f1, f2)
    F[par, 0] += m0
    F[par, 1] += m1
    F[par, 2] += m2
    F[par, 3] += g0
    F[par, 4] += g1
    F[par, 5] += g2


@njit(cache=True, inline="always")
def wrench_to_parent6v(T, n0, n1, n2, f0, f1, f2):
    """``[Ad_{T_{i,p}}]^T (n, f) = (R n + p x R f, R f)`` for ``T_{p,i} = T = (R, p)``, as six numbers."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2 = T
    g0 = R00 * f0 + R01 * f1 + R02 * f2
    g1 = R10 * f0 + R11 * f1 + R12 * f2
    g2 = R20 * f0 + R21 * f1 + R22 * f2
    return (R00 * n0 + R01 * n1 + R02 * n2 + (p1 * g2 - p2 * g1),
            R10 * n0 + R11 * n1 + R12 * n2 + (p2 * g0 - p0 * g2),
            R20 * n0 + R21 * n1 + R22 * n2 + (p0 * g1 - p1 * g0),
            g0, g1, g2)


@njit(cache=True, inline="always")
def aligned_body(kd, i, qi, par, R, r, J):
    """Body ``i`` in world-aligned form (see :mod:`.crba`): from its parent's axes ``R[par]``
    write ``R[i] = R_p R_{p,i}(q_i)``, the offset ``r[i] = R_p p_{p,i}`` of its origin from its
    parent's, in world axes, and its joint axis ``J[i] = (R_i s_w, R_i s_v)``. Returns ``R_i`` as
    nine numbers (row-major). (Whole arrays and indices, not row views: a view passed into an
    inlined function costs a reference count each time.)"""
    (c00, c01, c02, c10, c11, c12, c20, c21, c22, r[i, 0], r[i, 1], r[i, 2],
     J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5]) = aligned(
        R[par, 0, 0], R[par, 0, 1], R[par, 0, 2], R[par, 1, 0], R[par, 1, 1], R[par, 1, 2],
        R[par, 2, 0], R[par, 2, 1], R[par, 2, 2], joint_pose(kd, i, qi), joint_screw(kd, i))
    R[i, 0, 0], R[i, 0, 1], R[i, 0, 2] = c00, c01, c02
    R[i, 1, 0], R[i, 1, 1], R[i, 1, 2] = c10, c11, c12
    R[i, 2, 0], R[i, 2, 1], R[i, 2, 2] = c20, c21, c22
    return c00, c01, c02, c10, c11, c12, c20, c21, c22


@njit(cache=True, inline="always")
def aligned(a00, a01, a02, a10, a11, a12, a20, a21, a22, T, S):
    """:func:`aligned_body` in plain numbers, from the parent's axes ``a`` (row-major), ``T =
    T_{p,i}`` (twelve numbers) and ``S = S_i`` (six): ``R_i`` (nine), ``r_i`` (three), ``J_i`` (six)."""
    b00, b01, b02, b10, b11, b12, b20, b21, b22, e0, e1, e2 = T
    s0, s1, s2, s3, s4, s5 = S
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = matmul3((a00, a01, a02, a10, a11, a12, a20, a21, a22),
                                                          (b00, b01, b02, b10, b11, b12, b20, b21, b22))   # R_i = R_p R_{p,i}
    return (c00, c01, c02, c10, c11, c12, c20, c21, c22,
            dot3(a00, a01, a02, e0, e1, e2), dot3(a10, a11, a12, e0, e1, e2), dot3(a20, a21, a22, e0, e1, e2),
            dot3(c00, c01, c02, s0, s1, s2), dot3(c10, c11, c12, s0, s1, s2), dot3(c20, c21, c22, s0, s1, s2),
            dot3(c00, c01, c02, s3, s4, s5), dot3(c10, c11, c12, s3, s4, s5), dot3(c20, c21, c22, s3, s4, s5))
