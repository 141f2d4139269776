"""The Coriolis matrix ``C(q, qd)`` built from the Christoffel symbols of ``M(q)`` (notes 003, 004),
by the recursive ``O(n d)`` algorithm of Echeandia & Wensing (2021), the one behind Pinocchio's
``computeCoriolisMatrix``. No finite differences, no ``n^2`` inverse-dynamics calls.

Every quantity is expressed in the base frame ``{0}`` (space frame, ``(omega, v)`` order).
For body ``i`` with pose ``T_{0,i} = (R_i, p_i)`` and spatial twist ``V_i``::

    J_i   = [Ad_{T_{0,i}}] S_i                    joint i's column of the space Jacobian
    V_i   = V_p(i) + J_i qd_i
    dJ_i  = [ad_{V_i}] J_i                        d/dt J_i (a space-frame column moves with its body)
    Y_i   = [Ad_{T_{i,0}}]^T G_i [Ad_{T_{i,0}}]   spatial inertia in {0};  h_i = Y_i V_i
    B_i   = 1/2 Ydot_i - 1/2 Lambda(h_i),  Ydot_i = -[ad_V]^T Y_i - Y_i [ad_V]
    Lambda(h) = [[ [n], [f] ], [ [f], 0 ]]        so that Lambda(h) V = [ad_V]^T h

``B_i`` factors the body's velocity-product wrench, ``B_i V_i = -[ad_{V_i}]^T h_i``, with
``Ydot_i - 2 B_i`` skew. Summed over bodies, ``C = sum_b J_b^T (Y_b dJ_b + B_b J_b)`` has
``Mdot - 2C`` skew and ``C qd`` equal to the velocity-product torques; this particular ``B``
makes ``C`` the Christoffel one, ``C_kj = sum_i c_ijk qd_i`` (Echeandia & Wensing, "Numerical
methods to compute the Coriolis matrix and Christoffel symbols for rigid-body systems", JCND 2021).

With composites ``Yc_i = sum_{b in subtree(i)} Y_b`` and ``Bc_i`` likewise (plain sums: all in
{0}), for joint ``l`` and each strict ancestor ``j`` of ``l``::

    dF_l   = Yc_l dJ_l + Bc_l J_l
    C_ll   = J_l^T dF_l
    C_jl   = J_j^T dF_l
    C_lj   = (Yc_l J_l)^T dJ_j + (Bc_l^T J_l)^T J_j

and ``C_jl = 0`` for joints on different branches. Armature is constant and does not enter ``C``.

``B_i`` is sparse. With ``Y_i = (m, c, I)`` in {0} (``c = m`` times the centre of mass, ``I`` about
the origin), ``V_i = (w, v)`` and ``h_i = (n, f) = (I w + c x v, m v - c x w)``, the blocks of
``K = Y_i [ad_{V_i}]`` are ``K = [[Q, [c][w]], [m [v] - [c][w], m [w]]]`` with ``Q = I [w] + [c][v]``,
so ``-(K + K^T)/2 = [[-(Q + Q^T)/2, (m [v] - [c x w])/2], [.., 0]]`` and, since ``f = m v - c x w``::

    B_i = [[B11_i, 0], [-[f_i], 0]],     B11_i = -(Q + Q^T)/2 - [n_i]/2,   [c][v] = v c^T - (c.v) 1

``Bc_l`` is held as ``(B11c_l, fc_l)``: 12 numbers, ``Bc_l J = (B11c J_w, J_w x fc)`` and
``Bc_l^T J = (B11c^T J_w + fc x J_v, 0)``.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import (  # noqa: F401 (pose_to_world, twist_to_world re-exported)
    inertia10_apply, inertia10_times, inertia10_transform, pose_to_world, twist_to_world,
)
from .joints import joint_transform, motion_subspace
from .layout import MASS, PARENT
from .rnea import nonfinite_code
from .spatial_kernels import bracket_add
from .work import NOT_FAST, block2, block3, contiguous, scratch, unit_stride, work_size


@njit(cache=True, inline="always")
def coriolis_state(kd, q, qd, C, R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h):
    """One state: writes ``C (n, n)``. Work arrays: ``R (3,3)``, ``p (3,)``, ``S (6,)`` (``T_{p,i}``,
    ``S_i`` scratch), ``Rw (n+1,3,3)``, ``pw (n+1,3)`` (world poses, base last), ``J, dJ (n,6)``,
    ``V (n+1,6)``, ``Yc (n,10)``, ``Bc (n,12)`` (``B11`` row-major, then ``f``), ``P (n,)`` int64
    parents (for the ancestor walks), ``h (6,)``."""
    n = kd.shape[0] - 1
    for r in range(3):
        for b in range(3):
            Rw[n, r, b] = 1.0 if r == b else 0.0
        pw[n, r] = 0.0
    for k in range(6):
        V[n, k] = 0.0

    # Pass 1: world poses, Jacobian columns and their rates, world inertias and B_i.
    for i in range(n):
        par = int(kd[i, PARENT])
        P[i] = par
        joint_transform(kd, i, q[i], R, p)
        motion_subspace(kd, i, S)
        pose_to_world(Rw[par], pw[par], R, p, Rw[i], pw[i])
        twist_to_world(Rw[i], pw[i], S, J[i])                    # J_i = Ad_{T_0i} S_i
        for k in range(6):
            V[i, k] = V[par, k] + J[i, k] * qd[i]                # V_i = V_p + J_i qd_i
            dJ[i, k] = 0.0
        bracket_add(V[i], J[i], 1.0, dJ[i])                      # dJ_i = [ad_V_i] J_i
        inertia10_transform(Rw[i], pw[i], kd[i, MASS:MASS + 10], Yc[i], False)  # Y_i in {0}
        inertia10_times(Yc[i], V[i], h)                          # h_i = Y_i V_i = (n, f)
        # B11_i = -(Q + Q^T)/2 - [n]/2,  Q = I [w] + v c^T - (c.v) 1  (columns I (w x e_b))
        c0, c1, c2 = Yc[i, 1], Yc[i, 2], Yc[i, 3]
        ixx, ixy, ixz, iyy, iyz, izz = Yc[i, 4], Yc[i, 5], Yc[i, 6], Yc[i, 7], Yc[i, 8], Yc[i, 9]
        w0, w1, w2, v0, v1, v2 = V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5]
        cv = c0 * v0 + c1 * v1 + c2 * v2
        Q00 = ixy * w2 - ixz * w1 + v0 * c0 - cv
        Q01 = ixz * w0 - ixx * w2 + v0 * c1
        Q02 = ixx * w1 - ixy * w0 + v0 * c2
        Q10 = iyy * w2 - iyz * w1 + v1 * c0
        Q11 = iyz * w0 - ixy * w2 + v1 * c1 - cv
        Q12 = ixy * w1 - iyy * w0 + v1 * c2
        Q20 = iyz * w2 - izz * w1 + v2 * c0
        Q21 = izz * w0 - ixz * w2 + v2 * c1
        Q22 = ixz * w1 - iyz * w0 + v2 * c2 - cv
        n0, n1, n2 = h[0], h[1], h[2]
        Bc[i, 0] = -Q00
        Bc[i, 1] = -0.5 * (Q01 + Q10) + 0.5 * n2
        Bc[i, 2] = -0.5 * (Q02 + Q20) - 0.5 * n1
        Bc[i, 3] = -0.5 * (Q10 + Q01) - 0.5 * n2
        Bc[i, 4] = -Q11
        Bc[i, 5] = -0.5 * (Q12 + Q21) + 0.5 * n0
        Bc[i, 6] = -0.5 * (Q20 + Q02) + 0.5 * n1
        Bc[i, 7] = -0.5 * (Q21 + Q12) - 0.5 * n0
        Bc[i, 8] = -Q22
        Bc[i, 9] = h[3]                                          # f_i: B21_i = -[f_i]
        Bc[i, 10] = h[4]
        Bc[i, 11] = h[5]
        for j in range(n):
            C[i, j] = 0.0

    # Pass 2: composites, tips to base, and the rows/columns of C.
    for l in range(n - 1, -1, -1):
        Jw0, Jw1, Jw2, Jv0, Jv1, Jv2 = J[l, 0], J[l, 1], J[l, 2], J[l, 3], J[l, 4], J[l, 5]
        B00, B01, B02 = Bc[l, 0], Bc[l, 1], Bc[l, 2]
        B10, B11, B12 = Bc[l, 3], Bc[l, 4], Bc[l, 5]
        B20, B21, B22 = Bc[l, 6], Bc[l, 7], Bc[l, 8]
        f0, f1, f2 = Bc[l, 9], Bc[l, 10], Bc[l, 11]
        F0, F1, F2, F3, F4, F5 = inertia10_apply(Yc, l, dJ, l)  # dF_l = Yc_l dJ_l + Bc_l J_l
        F0 += B00 * Jw0 + B01 * Jw1 + B02 * Jw2
        F1 += B10 * Jw0 + B11 * Jw1 + B12 * Jw2
        F2 += B20 * Jw0 + B21 * Jw1 + B22 * Jw2
        F3 += Jw1 * f2 - Jw2 * f1
        F4 += Jw2 * f0 - Jw0 * f2
        F5 += Jw0 * f1 - Jw1 * f0
        C[l, l] = Jw0 * F0 + Jw1 * F1 + Jw2 * F2 + Jv0 * F3 + Jv1 * F4 + Jv2 * F5
        a0, a1, a2, a3, a4, a5 = inertia10_apply(Yc, l, J, l)    # a_l = Yc_l J_l
        g0 = B00 * Jw0 + B10 * Jw1 + B20 * Jw2 + (f1 * Jv2 - f2 * Jv1)   # g = Bc_l^T J_l = (g, 0)
        g1 = B01 * Jw0 + B11 * Jw1 + B21 * Jw2 + (f2 * Jv0 - f0 * Jv2)
        g2 = B02 * Jw0 + B12 * Jw1 + B22 * Jw2 + (f0 * Jv1 - f1 * Jv0)
        par = P[l]
        j = par
        while j >= 0:
            C[j, l] = (J[j, 0] * F0 + J[j, 1] * F1 + J[j, 2] * F2     # C_jl = J_j^T dF_l
                       + J[j, 3] * F3 + J[j, 4] * F4 + J[j, 5] * F5)
            C[l, j] = (a0 * dJ[j, 0] + a1 * dJ[j, 1] + a2 * dJ[j, 2]  # C_lj = a^T dJ_j + g^T J_j
                       + a3 * dJ[j, 3] + a4 * dJ[j, 4] + a5 * dJ[j, 5]
                       + (g0 * J[j, 0] + g1 * J[j, 1] + g2 * J[j, 2]))
            j = P[j]
        if par >= 0:
            for k in range(10):
                Yc[par, k] += Yc[l, k]
            for k in range(12):
                Bc[par, k] += Bc[l, k]


@njit(cache=True, inline="always")
def _carve(w, n):
    o = 0
    R = block2(w, o, 3, 3)
    o += 9
    p = w[o: o + 3]
    o += 3
    S = w[o: o + 6]
    o += 6
    Rw = block3(w, o, n + 1, 3, 3)
    o += 9 * (n + 1)
    pw = block2(w, o, n + 1, 3)
    o += 3 * (n + 1)
    J = block2(w, o, n, 6)
    o += 6 * n
    dJ = block2(w, o, n, 6)
    o += 6 * n
    V = block2(w, o, n + 1, 6)
    o += 6 * (n + 1)
    Yc = block2(w, o, n, 10)
    o += 10 * n
    Bc = block2(w, o, n, 12)
    o += 12 * n
    P = w[o: o + n].view(np.int64)
    o += n
    h = w[o: o + 6]
    return R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h


@njit(cache=True)
def _work(n):
    """Work arrays for one state in a fresh buffer (one per chunk of a batch)."""
    return _carve(np.empty(work_size(n)), n)


@njit(cache=True)
def coriolis(kd, q, qd, C):
    """One state: ``C (n, n)``, q/qd of any stride. Returns 0, 1/2 when q/qd holds a NaN or inf
    (``C`` untouched), or NOT_FAST for a wrong length or a strided input."""
    n = kd.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or C.shape[0] != n or C.shape[1] != n
            or not (unit_stride(q) and unit_stride(qd))):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    qc, qdc = contiguous(q), contiguous(qd)
    code = nonfinite_code(qc, qdc)
    if code:
        return code
    R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h = _carve(scratch(n), n)
    coriolis_state(kd, qc, qdc, C, R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h)
    return 0


@njit(cache=True)
def coriolis_state_call(kd, q, qd, C, R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h):
    """:func:`coriolis_state` as a compiled call, for the batch kernel
    (inlined into a parallel loop, the state's arithmetic makes numba's parallel pass several times slower to compile)."""
    coriolis_state(kd, q, qd, C, R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h)


@njit(cache=True, parallel=True)
def coriolis_batch(kd, q, qd, C, status, chunks):
    """States ``(q[k], qd[k]) -> C[k]`` for ``k < B``; ``status[k]`` as :func:`coriolis`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for ch in prange(chunks):
        R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h = _work(n)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            status[k] = nonfinite_code(q[k], qd[k])
            if status[k] == 0:
                coriolis_state_call(kd, q[k], qd[k], C[k], R, p, S, Rw, pw, J, dJ, V, Yc, Bc, P, h)
