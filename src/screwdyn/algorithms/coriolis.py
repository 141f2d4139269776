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
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_times, inertia10_transform
from .joints import joint_transform, motion_subspace
from .layout import MASS, PARENT
from .rnea import all_finite
from .spatial_kernels import bracket_add


@njit(cache=True, inline="always")
def pose_to_world(Rw, pw, R, p, Rwi, pwi):
    """``T_{0,i} = T_{0,p} T_{p,i}``: ``R_0i = R_0p R``, ``p_0i = R_0p p + p_0p``."""
    for a in range(3):
        for b in range(3):
            Rwi[a, b] = Rw[a, 0] * R[0, b] + Rw[a, 1] * R[1, b] + Rw[a, 2] * R[2, b]
        pwi[a] = Rw[a, 0] * p[0] + Rw[a, 1] * p[1] + Rw[a, 2] * p[2] + pw[a]


@njit(cache=True, inline="always")
def twist_to_world(R, p, S, out):
    """``out = [Ad_T] S = (R w, R v + p x R w)`` for ``T = (R, p)``."""
    for a in range(3):
        out[a] = R[a, 0] * S[0] + R[a, 1] * S[1] + R[a, 2] * S[2]
        out[3 + a] = R[a, 0] * S[3] + R[a, 1] * S[4] + R[a, 2] * S[5]
    out[3] += p[1] * out[2] - p[2] * out[1]
    out[4] += p[2] * out[0] - p[0] * out[2]
    out[5] += p[0] * out[1] - p[1] * out[0]


@njit(cache=True, inline="always")
def cross_unit(a0, a1, a2, e, out, o):
    """``out[o:o+3] = a x e_e`` for the unit vector ``e_e``."""
    if e == 0:
        out[o + 1] = a2
        out[o + 2] = -a1
    elif e == 1:
        out[o] = -a2
        out[o + 2] = a0
    else:
        out[o] = a1
        out[o + 1] = -a0


@njit(cache=True)
def coriolis_state(kd, q, qd, C, R, p, S, Rw, pw, J, dJ, V, Yc, Bc, col, K, h):
    """One state: writes ``C (n, n)``. Work arrays: ``R (n,3,3)``, ``p (n,3)``, ``S (n,6)``,
    ``Rw (n+1,3,3)``, ``pw (n+1,3)`` (world poses, base last), ``J, dJ (n,6)``, ``V (n+1,6)``,
    ``Yc (n,10)``, ``Bc (n,6,6)``, ``col (6,)``, ``K (6,6)``, ``h (6,)``."""
    n = kd.shape[0] - 1
    for a in range(3):
        for b in range(3):
            Rw[n, a, b] = 1.0 if a == b else 0.0
        pw[n, a] = 0.0
    for k in range(6):
        V[n, k] = 0.0

    # Pass 1: world poses, Jacobian columns and their rates, world inertias and B_i.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_transform(kd, i, q[i], R[i], p[i])
        motion_subspace(kd, i, S[i])
        pose_to_world(Rw[par], pw[par], R[i], p[i], Rw[i], pw[i])
        twist_to_world(Rw[i], pw[i], S[i], J[i])                 # J_i = Ad_{T_0i} S_i
        for k in range(6):
            V[i, k] = V[par, k] + J[i, k] * qd[i]                # V_i = V_p + J_i qd_i
            dJ[i, k] = 0.0
        bracket_add(V[i], J[i], 1.0, dJ[i])                      # dJ_i = [ad_V_i] J_i
        inertia10_transform(Rw[i], pw[i], kd[i, MASS:MASS + 10], Yc[i], False)  # Y_i in {0}
        inertia10_times(Yc[i], V[i], h)                          # h_i = Y_i V_i
        # K = Y_i [ad_V_i], column by column: K e_c = Y_i ([ad_V_i] e_c), with
        # [ad_V] e_c = (w x e_c, v x e_c) for c < 3 and (0, w x e_{c-3}) for c >= 3.
        for cc in range(6):
            for k in range(6):
                col[k] = 0.0
            e = cc % 3
            if cc < 3:
                cross_unit(V[i, 0], V[i, 1], V[i, 2], e, col, 0)
                cross_unit(V[i, 3], V[i, 4], V[i, 5], e, col, 3)
            else:
                cross_unit(V[i, 0], V[i, 1], V[i, 2], e, col, 3)
            inertia10_times(Yc[i], col, K[:, cc])
        # B_i = -(K + K^T)/2 - Lambda(h)/2
        for a in range(6):
            for b in range(6):
                Bc[i, a, b] = -0.5 * (K[a, b] + K[b, a])
        hn0, hn1, hn2, hf0, hf1, hf2 = 0.5 * h[0], 0.5 * h[1], 0.5 * h[2], 0.5 * h[3], 0.5 * h[4], 0.5 * h[5]
        for blk in range(3):
            r0 = 0 if blk < 2 else 3
            c0 = 0 if blk == 0 else (3 if blk == 1 else 0)
            x0, x1, x2 = (hn0, hn1, hn2) if blk == 0 else (hf0, hf1, hf2)
            # subtract [x] from block (r0, c0)
            Bc[i, r0, c0 + 1] += x2
            Bc[i, r0, c0 + 2] -= x1
            Bc[i, r0 + 1, c0] -= x2
            Bc[i, r0 + 1, c0 + 2] += x0
            Bc[i, r0 + 2, c0] += x1
            Bc[i, r0 + 2, c0 + 1] -= x0
        for j in range(n):
            C[i, j] = 0.0

    # Pass 2: composites, tips to base, and the rows/columns of C.
    for l in range(n - 1, -1, -1):
        inertia10_times(Yc[l], dJ[l], h)                         # dF_l = Yc_l dJ_l + Bc_l J_l
        for a in range(6):
            s = h[a]
            for b in range(6):
                s += Bc[l, a, b] * J[l, b]
            col[a] = s
        s = 0.0
        for a in range(6):
            s += J[l, a] * col[a]
        C[l, l] = s
        inertia10_times(Yc[l], J[l], h)                          # a_l = Yc_l J_l
        for b in range(6):                                       # K[0] = Bc_l^T J_l
            s = 0.0
            for a in range(6):
                s += Bc[l, a, b] * J[l, a]
            K[0, b] = s
        j = int(kd[l, PARENT])
        while j >= 0:
            s1 = 0.0
            s2 = 0.0
            for a in range(6):
                s1 += J[j, a] * col[a]
                s2 += h[a] * dJ[j, a] + K[0, a] * J[j, a]
            C[j, l] = s1
            C[l, j] = s2
            j = int(kd[j, PARENT])
        par = int(kd[l, PARENT])
        if par >= 0:
            for a in range(10):
                Yc[par, a] += Yc[l, a]
            for a in range(6):
                for b in range(6):
                    Bc[par, a, b] += Bc[l, a, b]


@njit(cache=True)
def _work(n):
    sizes = 9 * n + 3 * n + 6 * n + 9 * (n + 1) + 3 * (n + 1) + 12 * n + 6 * (n + 1) + 10 * n + 36 * n + 48
    w = np.empty(sizes)
    o = 0
    R = w[o: o + 9 * n].reshape((n, 3, 3))
    o += 9 * n
    p = w[o: o + 3 * n].reshape((n, 3))
    o += 3 * n
    S = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    Rw = w[o: o + 9 * (n + 1)].reshape((n + 1, 3, 3))
    o += 9 * (n + 1)
    pw = w[o: o + 3 * (n + 1)].reshape((n + 1, 3))
    o += 3 * (n + 1)
    J = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    dJ = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    V = w[o: o + 6 * (n + 1)].reshape((n + 1, 6))
    o += 6 * (n + 1)
    Yc = w[o: o + 10 * n].reshape((n, 10))
    o += 10 * n
    Bc = w[o: o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    col = w[o: o + 6]
    K = w[o + 6: o + 42].reshape((6, 6))
    h = w[o + 42: o + 48]
    return R, p, S, Rw, pw, J, dJ, V, Yc, Bc, col, K, h


@njit(cache=True)
def coriolis(kd, q, qd, C):
    """One state: ``C (n, n)``. Returns 0, or 1/2 when q/qd holds a NaN or inf (``C`` untouched)."""
    if not all_finite(q):
        return 1
    if not all_finite(qd):
        return 2
    R, p, S, Rw, pw, J, dJ, V, Yc, Bc, col, K, h = _work(kd.shape[0] - 1)
    coriolis_state(kd, q, qd, C, R, p, S, Rw, pw, J, dJ, V, Yc, Bc, col, K, h)
    return 0


@njit(cache=True, parallel=True)
def coriolis_batch(kd, q, qd, C, status, chunks):
    """States ``(q[k], qd[k]) -> C[k]`` for ``k < B``; ``status[k]`` as :func:`coriolis`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for ch in prange(chunks):
        R, p, S, Rw, pw, J, dJ, V, Yc, Bc, col, K, h = _work(n)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            if not all_finite(q[k]):
                status[k] = 1
            elif not all_finite(qd[k]):
                status[k] = 2
            else:
                status[k] = 0
                coriolis_state(kd, q[k], qd[k], C[k], R, p, S, Rw, pw, J, dJ, V, Yc, Bc, col, K, h)
