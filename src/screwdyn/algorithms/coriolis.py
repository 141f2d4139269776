"""The Coriolis matrix ``C(q, qd)`` built from the Christoffel symbols of ``M(q)`` (docs/theory.md
§7.3 and §9), by the recursive ``O(n d)`` algorithm of Echeandia & Wensing (2021), the one behind Pinocchio's
``computeCoriolisMatrix``. No finite differences, no ``n^2`` inverse-dynamics calls.

Every quantity is expressed in the base frame ``{0}`` (space frame, ``(omega, v)`` order).
For body ``i`` with pose ``T_{0,i} = (R_i, p_i)`` and spatial twist ``V_i``::

    J_i   = [Ad_{T_{0,i}}] S_i                    joint i's column of the space Jacobian
    V_i   = V_p(i) + J_i qd_i                     ([Ad_{T_{0,i}}] v_J for a multi-DoF joint's rows)
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
from numba import prange

from .inertia_kernels import body_inertia, inertia_apply, inertia_transform
from .internals import release_gil, restore_gil, scratch, stack, window
from .joints import joint_poses, joint_screw, joint_velocities
from .layout import ONE_DOF, PARENT, POSEK
from .spatial_kernels import ad, twist_to_world, world_body
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import (
    STACK_LIMIT, add, claim, copy_lanes, flat, get3, get6, get9, get10, get12, is_rows, is_vector, lanes_of, q_size, load, put,
    row, store, units, zero_lanes,
)

LANES = 8   # its arrays grow as n^2: 8 lanes keep Talos' 44 joints on the stack
# one-state calls release the GIL from this many DoF (a 32-joint Talos: 4.2 us a call; internals.release_gil)
GIL_FROM = 30


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies."""
    return n * n + 56 * n + 106


@njit(**HELPER)
def twist_and_rate(Vp, J, vJ):
    """``V_i = V_p + v_J`` (``v_J = J_i qd_i`` for a one-DoF joint) and ``dJ_i = [ad_{V_i}] J_i``:
    the body's twist and the rate of its Jacobian column (6 numbers each)."""
    V = (Vp[0] + vJ[0], Vp[1] + vJ[1], Vp[2] + vJ[2], Vp[3] + vJ[3], Vp[4] + vJ[4], Vp[5] + vJ[5])
    return V, ad(V, J)


@njit(**HELPER)
def body_b(Y, V):
    """``B_i`` of a body with inertia ``Y_i = (m, c, I)`` in {0} and twist ``V_i = (w, v)``: ``B11_i``
    (row-major) and ``f_i``, twelve numbers. ``h_i = Y_i V_i = (n, f)``,
    ``B11_i = -(Q + Q^T)/2 - [n]/2`` with ``Q = I [w] + v c^T - (c.v) 1`` (columns ``I (w x e_b)``)."""
    m, c0, c1, c2, ixx, ixy, ixz, iyy, iyz, izz = Y
    w0, w1, w2, v0, v1, v2 = V
    n0, n1, n2, f0, f1, f2 = inertia_apply(Y, V)
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
    return (-Q00, -0.5 * (Q01 + Q10) + 0.5 * n2, -0.5 * (Q02 + Q20) - 0.5 * n1,
            -0.5 * (Q10 + Q01) - 0.5 * n2, -Q11, -0.5 * (Q12 + Q21) + 0.5 * n0,
            -0.5 * (Q20 + Q02) + 0.5 * n1, -0.5 * (Q21 + Q12) - 0.5 * n0, -Q22,
            f0, f1, f2)


@njit(**HELPER)
def b_apply(B, U):
    """``B U = (B11 U_w, U_w x f)`` for ``B = [[B11, 0], [-[f], 0]]`` held as twelve numbers
    (``B11`` row-major, then ``f``) and a twist ``U`` (six numbers)."""
    B00, B01, B02, B10, B11, B12, B20, B21, B22, f0, f1, f2 = B
    Uw0, Uw1, Uw2 = U[0], U[1], U[2]
    return (B00 * Uw0 + B01 * Uw1 + B02 * Uw2, B10 * Uw0 + B11 * Uw1 + B12 * Uw2, B20 * Uw0 + B21 * Uw1 + B22 * Uw2,
            Uw1 * f2 - Uw2 * f1, Uw2 * f0 - Uw0 * f2, Uw0 * f1 - Uw1 * f0)


@njit(**HELPER)
def b_transpose_top(B, J):
    """The top of ``B^T J = (B11^T J_w + f x J_v, 0)`` (three numbers; the bottom is zero)."""
    B00, B01, B02, B10, B11, B12, B20, B21, B22, f0, f1, f2 = B
    Jw0, Jw1, Jw2, Jv0, Jv1, Jv2 = J
    return (B00 * Jw0 + B10 * Jw1 + B20 * Jw2 + (f1 * Jv2 - f2 * Jv1),
            B01 * Jw0 + B11 * Jw1 + B21 * Jw2 + (f2 * Jv0 - f0 * Jv2),
            B02 * Jw0 + B12 * Jw1 + B22 * Jw2 + (f0 * Jv1 - f1 * Jv0))


@njit(**HELPER)
def joint_columns(Y, B, Jl, dJl):
    """For joint ``l`` with composites ``Y = Yc_l`` (ten numbers) and ``B = Bc_l`` (``B11c``
    row-major, ``fc``: twelve), ``Jl = J_l`` and ``dJl = dJ_l``: ``dF_l = Yc_l dJ_l + Bc_l J_l``
    (six), ``C_ll = J_l^T dF_l``, ``a_l = Yc_l J_l`` (six) and ``g_l``, the top of
    ``Bc_l^T J_l = (g_l, 0)`` (three)."""
    Jw0, Jw1, Jw2, Jv0, Jv1, Jv2 = Jl
    F0, F1, F2, F3, F4, F5 = inertia_apply(Y, dJl)
    G0, G1, G2, G3, G4, G5 = b_apply(B, Jl)
    F0 += G0
    F1 += G1
    F2 += G2
    F3 += G3
    F4 += G4
    F5 += G5
    return ((F0, F1, F2, F3, F4, F5), Jw0 * F0 + Jw1 * F1 + Jw2 * F2 + Jv0 * F3 + Jv1 * F4 + Jv2 * F5,
            inertia_apply(Y, Jl), b_transpose_top(B, Jl))


@njit(**HELPER)
def ancestor_pair(F, a, g, Jj, dJj):
    """``C_jl = J_j^T dF_l`` and ``C_lj = a_l^T dJ_j + g_l^T J_j`` for an ancestor ``j`` of ``l``."""
    return (Jj[0] * F[0] + Jj[1] * F[1] + Jj[2] * F[2] + Jj[3] * F[3] + Jj[4] * F[4] + Jj[5] * F[5],
            (a[0] * dJj[0] + a[1] * dJj[1] + a[2] * dJj[2] + a[3] * dJj[3] + a[4] * dJj[4] + a[5] * dJj[5]
             + (g[0] * Jj[0] + g[1] * Jj[1] + g[2] * Jj[2])))


@njit(**KERNEL)
def coriolis(kd, q, qd, C, status, k0, k1, lanes):
    """States ``k0 <= k < k1`` of ``q, qd (B, n)``: ``C[k] (n, n)`` and ``status[k]``, ``lanes``
    (a compile-time constant) at a time."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    L = lanes
    Q, QD = stack((nq, L)), stack((n, L))
    Rw = stack((n + 1, 9, L))    # R_0i row-major; row n: the base
    pw = stack((n + 1, 3, L))
    V = stack((n + 1, 6, L))
    J = stack((n, 6, L))
    dJ = stack((n, 6, L))
    Yc = stack((n, 10, L))       # composite inertias in {0}
    Bc = stack((n, 12, L))       # composite B: B11 row-major, then f
    Cw = stack((n, n, L))        # the lanes' C (lanes_of: with one lane, C's row itself)
    A = scratch(18, lanes)       # the parent's R, p and V
    G = scratch(22, lanes)       # the child's Yc and Bc
    H = scratch(15, lanes)       # dF_l, a_l, g_l
    W = scratch(12, lanes)
    SC = scratch(2, lanes)
    VJ = scratch(6, lanes)       # v_J of a multi-DoF joint's row
    bad = stack((L,)).view(np.int64)
    P = stack((n,)).view(np.int64)   # the parents as integers (the ancestor walks read them)
    for i in range(n):
        P[i] = int(kd[i, PARENT])
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            bad[l] = 0
        load(q, b, m, Q, bad, Status.NONFINITE)
        load(qd, b, m, QD, bad, Status.NONFINITE + 1)
        for l in range(m):
            put(Rw[n], l, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
            put(pw[n], l, (0.0, 0.0, 0.0))
            put(V[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        Cl = lanes_of(Cw, C, b)
        zero_lanes(Cl, m)

        # Pass 1: world poses, Jacobian columns and their rates, world inertias and B_i.
        for i in range(n):
            par = int(kd[i, PARENT])
            joint_poses(kd, i, Q, SC, W, m)
            copy_lanes(Rw[par], A, m)
            copy_lanes(pw[par], A[9:], m)
            copy_lanes(V[par], A[12:], m)
            S = joint_screw(kd, i)
            one_dof = kd[i, POSEK] == ONE_DOF
            if not one_dof:
                joint_velocities(kd, i, S, QD, VJ, m)
            I = body_inertia(kd, i)
            for l in range(m):
                Ri, pi, Ji = world_body(get9(A, l), get3(A[9:], l), get12(W, l), S)   # T_0i, J_i = Ad_T0i S_i
                put(Rw[i], l, Ri)
                put(pw[i], l, pi)
                put(J[i], l, Ji)
                qdi = QD[i, l]
                if one_dof:
                    vJ = (Ji[0] * qdi, Ji[1] * qdi, Ji[2] * qdi, Ji[3] * qdi, Ji[4] * qdi, Ji[5] * qdi)
                else:
                    vJ = twist_to_world(Ri + pi, get6(VJ, l))
                Vi, dJi = twist_and_rate(get6(A[12:], l), Ji, vJ)                     # V_i = V_p + J_i qd_i, dJ_i
                put(V[i], l, Vi)
                put(dJ[i], l, dJi)
                Yi = inertia_transform(Ri, pi, I)                                     # Y_i in {0}
                put(Yc[i], l, Yi)
                put(Bc[i], l, body_b(Yi, Vi))

        # Pass 2: composites, tips to base, and the rows and columns of C.
        for i in range(n - 1, -1, -1):
            copy_lanes(Yc[i], G, m)
            copy_lanes(Bc[i], G[10:], m)
            for l in range(m):
                F, cll, a, g = joint_columns(get10(G, l), get12(G[10:], l), get6(J[i], l), get6(dJ[i], l))
                Cl[i, i, l] = cll
                put(H, l, F)
                put(H[6:], l, a)
                put(H[12:], l, g)
            par = P[i]
            j = par
            while j >= 0:
                for l in range(m):
                    Cl[j, i, l], Cl[i, j, l] = ancestor_pair(get6(H, l), get6(H[6:], l), get3(H[12:], l),
                                                             get6(J[j], l), get6(dJ[j], l))
                j = P[j]
            if par >= 0:
                for l in range(m):
                    add(Yc[par], l, get10(G, l))
                    add(Bc[par], l, get12(G[10:], l))
        store(window(Cl, 0, (n * n, L)), b, m, flat(C), status, bad)


@njit(**ONE)
def coriolis_one(kd, q, qd, C):
    """One state: :func:`coriolis` on it as a batch of one (see :func:`.rnea.rnea_one`)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    if not (is_vector(q, nq) and is_vector(qd, n) and C.shape[0] == n and C.shape[1] == n):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    coriolis(kd, row(q), row(qd), window(C, 0, (1, n, n)), status, 0, 1, 1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def coriolis_batch(kd, q, qd, C, status, lanes):
    """States ``(B, n) -> C (B, n, n)`` over numba's threads, as :func:`.rnea.rnea_batch`."""
    B, n, nq = q.shape[0], kd.shape[0] - 1, q_size(kd)
    if not (is_rows(q, B, nq) and is_rows(qd, B, n) and C.shape[0] == B and C.shape[1] == n and C.shape[2] == n
            and status.shape[0] == B):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            coriolis(kd, q, qd, C, status, start, end, lanes)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"coriolis": Entry("the Coriolis matrix", coriolis_one, coriolis_batch, ("q", "qd"), (2,), per_lane,
                             LANES)}
