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

from .inertia_kernels import inertia_apply, inertia_transform
from .joints import joint_pose, joint_poses_lanes, joint_screw, joint_sincos_lanes
from .layout import MASS, PARENT
from .rnea import nonfinite_code
from .spatial_kernels import aligned
from .work import (
    NO_NRT, NOT_FAST, STACK_LIMIT, block2, block3, claim, claim_size, contiguous, fits_stack, rows_of,
    scratch, stack2, stack3, stack_scratch, thread_chunks, unit_stride, work_size,
)

LANES = 8   # states side by side in coriolis_lanes (its arrays grow as n^2: 8 lanes fit Talos' 44 joints)


@njit(cache=True, inline="always")
def world_body(a00, a01, a02, a10, a11, a12, a20, a21, a22, t0, t1, t2, T, S):
    """Body ``i`` in {0} from its parent's pose ``T_{0,p} = (a, t)`` (row-major ``a``), ``T =
    T_{p,i}`` (twelve numbers) and ``S = S_i`` (six): ``R_i = R_p R_{p,i}``, ``p_i = R_p p_{p,i} +
    p_p`` and ``J_i = [Ad_{T_0i}] S_i = (R_i s_w, R_i s_v + p_i x R_i s_w)``, eighteen numbers."""
    (c00, c01, c02, c10, c11, c12, c20, c21, c22, r0, r1, r2, j0, j1, j2, j3, j4, j5) = aligned(
        a00, a01, a02, a10, a11, a12, a20, a21, a22, T, S)
    p0, p1, p2 = r0 + t0, r1 + t1, r2 + t2
    return (c00, c01, c02, c10, c11, c12, c20, c21, c22, p0, p1, p2,
            j0, j1, j2, j3 + (p1 * j2 - p2 * j1), j4 + (p2 * j0 - p0 * j2), j5 + (p0 * j1 - p1 * j0))


@njit(cache=True, inline="always")
def twist_and_rate(u0, u1, u2, u3, u4, u5, j0, j1, j2, j3, j4, j5, qdi):
    """``V_i = V_p + J_i qd_i`` from the parent's twist ``u``, and ``dJ_i = [ad_{V_i}] J_i =
    (w x J_w, v x J_w + w x J_v)``: twelve numbers."""
    w0, w1, w2 = u0 + j0 * qdi, u1 + j1 * qdi, u2 + j2 * qdi
    v0, v1, v2 = u3 + j3 * qdi, u4 + j4 * qdi, u5 + j5 * qdi
    return (w0, w1, w2, v0, v1, v2,
            w1 * j2 - w2 * j1, w2 * j0 - w0 * j2, w0 * j1 - w1 * j0,
            (v1 * j2 - v2 * j1) + (w1 * j5 - w2 * j4), (v2 * j0 - v0 * j2) + (w2 * j3 - w0 * j5),
            (v0 * j1 - v1 * j0) + (w0 * j4 - w1 * j3))


@njit(cache=True, inline="always")
def body_b(m, c0, c1, c2, ixx, ixy, ixz, iyy, iyz, izz, w0, w1, w2, v0, v1, v2):
    """``B_i`` of a body with inertia ``Y_i = (m, c, I)`` in {0} and twist ``V_i = (w, v)``: ``B11_i``
    (row-major) and ``f_i``, twelve numbers. ``h_i = Y_i V_i = (n, f)``,
    ``B11_i = -(Q + Q^T)/2 - [n]/2`` with ``Q = I [w] + v c^T - (c.v) 1`` (columns ``I (w x e_b)``)."""
    n0, n1, n2, f0, f1, f2 = inertia_apply(m, c0, c1, c2, ixx, ixy, ixz, iyy, iyz, izz, w0, w1, w2, v0, v1, v2)
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


@njit(cache=True, inline="always")
def joint_columns(Y, B, Jl, dJl):
    """For joint ``l`` with composites ``Y = Yc_l`` (ten numbers) and ``B = Bc_l`` (``B11c``
    row-major, ``fc``: twelve), ``Jl = J_l`` and ``dJl = dJ_l`` (six each): ``dF_l = Yc_l dJ_l +
    Bc_l J_l`` (six), ``C_ll = J_l^T dF_l``, ``a_l = Yc_l J_l`` (six) and ``g_l``, the top of
    ``Bc_l^T J_l = (g_l, 0)`` (three): sixteen numbers."""
    B00, B01, B02, B10, B11, B12, B20, B21, B22, f0, f1, f2 = B
    Jw0, Jw1, Jw2, Jv0, Jv1, Jv2 = Jl
    F0, F1, F2, F3, F4, F5 = inertia_apply(Y[0], Y[1], Y[2], Y[3], Y[4], Y[5], Y[6], Y[7], Y[8], Y[9],
                                           dJl[0], dJl[1], dJl[2], dJl[3], dJl[4], dJl[5])
    F0 += B00 * Jw0 + B01 * Jw1 + B02 * Jw2
    F1 += B10 * Jw0 + B11 * Jw1 + B12 * Jw2
    F2 += B20 * Jw0 + B21 * Jw1 + B22 * Jw2
    F3 += Jw1 * f2 - Jw2 * f1
    F4 += Jw2 * f0 - Jw0 * f2
    F5 += Jw0 * f1 - Jw1 * f0
    a0, a1, a2, a3, a4, a5 = inertia_apply(Y[0], Y[1], Y[2], Y[3], Y[4], Y[5], Y[6], Y[7], Y[8], Y[9],
                                           Jw0, Jw1, Jw2, Jv0, Jv1, Jv2)
    return (F0, F1, F2, F3, F4, F5, Jw0 * F0 + Jw1 * F1 + Jw2 * F2 + Jv0 * F3 + Jv1 * F4 + Jv2 * F5,
            a0, a1, a2, a3, a4, a5,
            B00 * Jw0 + B10 * Jw1 + B20 * Jw2 + (f1 * Jv2 - f2 * Jv1),
            B01 * Jw0 + B11 * Jw1 + B21 * Jw2 + (f2 * Jv0 - f0 * Jv2),
            B02 * Jw0 + B12 * Jw1 + B22 * Jw2 + (f0 * Jv1 - f1 * Jv0))


@njit(cache=True, inline="always")
def ancestor_pair(F0, F1, F2, F3, F4, F5, a0, a1, a2, a3, a4, a5, g0, g1, g2, Jj, dJj):
    """``C_jl = J_j^T dF_l`` and ``C_lj = a_l^T dJ_j + g_l^T J_j`` for an ancestor ``j`` of ``l``
    (``Jj``, ``dJj``: six numbers each)."""
    return (Jj[0] * F0 + Jj[1] * F1 + Jj[2] * F2 + Jj[3] * F3 + Jj[4] * F4 + Jj[5] * F5,
            (a0 * dJj[0] + a1 * dJj[1] + a2 * dJj[2] + a3 * dJj[3] + a4 * dJj[4] + a5 * dJj[5]
             + (g0 * Jj[0] + g1 * Jj[1] + g2 * Jj[2])))


@njit(cache=True, inline="always")
def coriolis_state(kd, q, qd, C, Rw, pw, J, dJ, V, Yc, Bc, P):
    """One state: writes ``C (n, n)``. Work arrays: ``Rw (n+1,3,3)``, ``pw (n+1,3)`` (world poses,
    base last), ``J, dJ (n,6)``, ``V (n+1,6)``, ``Yc (n,10)``, ``Bc (n,12)`` (``B11`` row-major,
    then ``f``), ``P (n,)`` int64 parents (for the ancestor walks). The arithmetic of each body is in
    the plain-number functions above, which :func:`coriolis_lanes` shares."""
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
        (c00, c01, c02, c10, c11, c12, c20, c21, c22, p0, p1, p2, j0, j1, j2, j3, j4, j5) = world_body(
            Rw[par, 0, 0], Rw[par, 0, 1], Rw[par, 0, 2], Rw[par, 1, 0], Rw[par, 1, 1], Rw[par, 1, 2],
            Rw[par, 2, 0], Rw[par, 2, 1], Rw[par, 2, 2], pw[par, 0], pw[par, 1], pw[par, 2],
            joint_pose(kd, i, q[i]), joint_screw(kd, i))                 # T_0i = T_0p T_pi, J_i = Ad_T0i S_i
        Rw[i, 0, 0], Rw[i, 0, 1], Rw[i, 0, 2], Rw[i, 1, 0], Rw[i, 1, 1] = c00, c01, c02, c10, c11
        Rw[i, 1, 2], Rw[i, 2, 0], Rw[i, 2, 1], Rw[i, 2, 2] = c12, c20, c21, c22
        pw[i, 0], pw[i, 1], pw[i, 2] = p0, p1, p2
        J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5] = j0, j1, j2, j3, j4, j5
        (w0, w1, w2, v0, v1, v2, d0, d1, d2, d3, d4, d5) = twist_and_rate(     # V_i = V_p + J_i qd_i, dJ_i
            V[par, 0], V[par, 1], V[par, 2], V[par, 3], V[par, 4], V[par, 5], j0, j1, j2, j3, j4, j5, qd[i])
        V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5] = w0, w1, w2, v0, v1, v2
        dJ[i, 0], dJ[i, 1], dJ[i, 2], dJ[i, 3], dJ[i, 4], dJ[i, 5] = d0, d1, d2, d3, d4, d5
        (m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz) = inertia_transform(       # Y_i in {0}
            c00, c01, c02, c10, c11, c12, c20, c21, c22, p0, p1, p2, kd[i, MASS], kd[i, MASS + 1],
            kd[i, MASS + 2], kd[i, MASS + 3], kd[i, MASS + 4], kd[i, MASS + 5], kd[i, MASS + 6],
            kd[i, MASS + 7], kd[i, MASS + 8], kd[i, MASS + 9])
        Yc[i, 0], Yc[i, 1], Yc[i, 2], Yc[i, 3], Yc[i, 4] = m, h0, h1, h2, ixx
        Yc[i, 5], Yc[i, 6], Yc[i, 7], Yc[i, 8], Yc[i, 9] = ixy, ixz, iyy, iyz, izz
        (Bc[i, 0], Bc[i, 1], Bc[i, 2], Bc[i, 3], Bc[i, 4], Bc[i, 5], Bc[i, 6], Bc[i, 7], Bc[i, 8], Bc[i, 9],
         Bc[i, 10], Bc[i, 11]) = body_b(m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz, w0, w1, w2, v0, v1, v2)
        for j in range(n):
            C[i, j] = 0.0

    # Pass 2: composites, tips to base, and the rows/columns of C.
    for l in range(n - 1, -1, -1):
        (F0, F1, F2, F3, F4, F5, cll, a0, a1, a2, a3, a4, a5, g0, g1, g2) = joint_columns(
            (Yc[l, 0], Yc[l, 1], Yc[l, 2], Yc[l, 3], Yc[l, 4], Yc[l, 5], Yc[l, 6], Yc[l, 7], Yc[l, 8], Yc[l, 9]),
            (Bc[l, 0], Bc[l, 1], Bc[l, 2], Bc[l, 3], Bc[l, 4], Bc[l, 5], Bc[l, 6], Bc[l, 7], Bc[l, 8], Bc[l, 9],
             Bc[l, 10], Bc[l, 11]),
            (J[l, 0], J[l, 1], J[l, 2], J[l, 3], J[l, 4], J[l, 5]),
            (dJ[l, 0], dJ[l, 1], dJ[l, 2], dJ[l, 3], dJ[l, 4], dJ[l, 5]))
        C[l, l] = cll
        par = P[l]
        j = par
        while j >= 0:
            C[j, l], C[l, j] = ancestor_pair(F0, F1, F2, F3, F4, F5, a0, a1, a2, a3, a4, a5, g0, g1, g2,
                                             (J[j, 0], J[j, 1], J[j, 2], J[j, 3], J[j, 4], J[j, 5]),
                                             (dJ[j, 0], dJ[j, 1], dJ[j, 2], dJ[j, 3], dJ[j, 4], dJ[j, 5]))
            j = P[j]
        if par >= 0:
            for k in range(10):
                Yc[par, k] += Yc[l, k]
            for k in range(12):
                Bc[par, k] += Bc[l, k]


@njit(cache=True, inline="always")
def _carve(w, n):
    o = 0
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
    return Rw, pw, J, dJ, V, Yc, Bc, P


@njit(cache=True)
def _work(n):
    """Work arrays for one state in a fresh buffer (one per chunk of a batch)."""
    return _carve(np.empty(work_size(n)), n)


@njit(cache=True)
def coriolis(kd, q, qd, C):
    """One state: ``C (n, n)``, q/qd of any stride. Returns 0, 1/2 when q/qd holds a NaN or inf
    (``C`` untouched), or NOT_FAST for a wrong length or a strided input."""
    return _one_state(kd, q, qd, C, scratch(kd.shape[0] - 1))


@njit(cache=True, **NO_NRT)
def coriolis_fast(kd, q, qd, C):
    """:func:`coriolis` compiled without numba's runtime, for ``dynamics``' fast paths (see
    :data:`.work.NO_NRT`): the same, but NOT_FAST for a model whose work does not fit the stack."""
    n = kd.shape[0] - 1
    if not fits_stack(n):
        return NOT_FAST
    return _one_state(kd, q, qd, C, stack_scratch(n))


@njit(cache=True, inline="always")
def _one_state(kd, q, qd, C, w):
    """The body of :func:`coriolis` and :func:`coriolis_fast`, with the work buffer ``w`` the caller made."""
    n = kd.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or C.shape[0] != n or C.shape[1] != n
            or not (unit_stride(q) and unit_stride(qd))):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    qc, qdc = contiguous(q), contiguous(qd)
    code = nonfinite_code(qc, qdc)
    if code:
        return code
    Rw, pw, J, dJ, V, Yc, Bc, P = _carve(w, n)
    coriolis_state(kd, qc, qdc, C, Rw, pw, J, dJ, V, Yc, Bc, P)
    return 0


@njit(cache=True)
def coriolis_state_call(kd, q, qd, C, Rw, pw, J, dJ, V, Yc, Bc, P):
    """:func:`coriolis_state` as a compiled call, for the batch kernel
    (inlined into a parallel loop, the state's arithmetic makes numba's parallel pass several times slower to compile)."""
    coriolis_state(kd, q, qd, C, Rw, pw, J, dJ, V, Yc, Bc, P)


@njit(cache=True, inline="always")
def lanes_fit(n):
    """Whether :func:`coriolis_lanes`' arrays for ``n`` bodies fit on the stack (up to 67 bodies);
    larger models run one state at a time."""
    return LANES * (n * n + 52 * n + 87) <= STACK_LIMIT


@njit(cache=True)
def coriolis_lanes(kd, q, qd, C, k0, ok, m):
    """States side by side, as :func:`.crba.crba_lanes`: lane ``l < m`` of ``q, qd (n, LANES)`` is
    state ``k0 + l``, whose ``C`` goes to ``C[k0 + l]`` when ``ok[l]``. The arithmetic of
    :func:`coriolis_state` (the same plain-number functions), each step one loop over the lanes
    in stack arrays of its own: the parent's pose and twist, and the child's composites, are first
    copied out, so that no loop reads the array it writes; each copy in one loop over the lanes,
    as in :func:`.crba.crba_lanes`. Results equal :func:`coriolis_state`'s bit for bit. Only for
    models with :func:`lanes_fit`."""
    n = kd.shape[0] - 1
    L = LANES
    Rw = stack3(n + 1, 9, L)     # R_0i row-major (row n: the base)
    pw = stack3(n + 1, 3, L)
    V = stack3(n + 1, 6, L)
    J = stack3(n, 6, L)
    dJ = stack3(n, 6, L)
    Yc = stack3(n, 10, L)
    Bc = stack3(n, 12, L)
    Cl = stack3(n, n, L)
    A = stack2(18, L)            # the parent's R, p and V
    G = stack2(22, L)            # the child's Yc and Bc
    H = stack2(15, L)            # dF_l, a_l, g_l
    W = stack2(12, L)
    SC = stack2(2, L)
    for c in range(9):
        e = 1.0 if c == 0 or c == 4 or c == 8 else 0.0
        for l in range(m):
            Rw[n, c, l] = e
    for l in range(m):
        for c in range(6):
            V[n, c, l] = 0.0
            if c < 3:
                pw[n, c, l] = 0.0
    for i in range(n):
        for j in range(n):
            for l in range(m):
                Cl[i, j, l] = 0.0
    # Pass 1: world poses, Jacobian columns and their rates, world inertias and B_i.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_sincos_lanes(kd, i, q, SC, m)
        joint_poses_lanes(kd, i, q, SC, W, m)
        for l in range(m):
            for c in range(9):
                A[c, l] = Rw[par, c, l]
            for c in range(3):
                A[9 + c, l] = pw[par, c, l]
            for c in range(6):
                A[12 + c, l] = V[par, c, l]
        s = joint_screw(kd, i)
        for l in range(m):
            T = (W[0, l], W[1, l], W[2, l], W[3, l], W[4, l], W[5, l], W[6, l], W[7, l], W[8, l], W[9, l],
                 W[10, l], W[11, l])
            (c00, c01, c02, c10, c11, c12, c20, c21, c22, p0, p1, p2, j0, j1, j2, j3, j4, j5) = world_body(
                A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l], A[6, l], A[7, l], A[8, l],
                A[9, l], A[10, l], A[11, l], T, s)
            Rw[i, 0, l], Rw[i, 1, l], Rw[i, 2, l], Rw[i, 3, l], Rw[i, 4, l] = c00, c01, c02, c10, c11
            Rw[i, 5, l], Rw[i, 6, l], Rw[i, 7, l], Rw[i, 8, l] = c12, c20, c21, c22
            pw[i, 0, l], pw[i, 1, l], pw[i, 2, l] = p0, p1, p2
            J[i, 0, l], J[i, 1, l], J[i, 2, l], J[i, 3, l], J[i, 4, l], J[i, 5, l] = j0, j1, j2, j3, j4, j5
            (w0, w1, w2, v0, v1, v2, d0, d1, d2, d3, d4, d5) = twist_and_rate(
                A[12, l], A[13, l], A[14, l], A[15, l], A[16, l], A[17, l], j0, j1, j2, j3, j4, j5, qd[i, l])
            V[i, 0, l], V[i, 1, l], V[i, 2, l], V[i, 3, l], V[i, 4, l], V[i, 5, l] = w0, w1, w2, v0, v1, v2
            dJ[i, 0, l], dJ[i, 1, l], dJ[i, 2, l], dJ[i, 3, l], dJ[i, 4, l], dJ[i, 5, l] = d0, d1, d2, d3, d4, d5
            (y0, y1, y2, y3, y4, y5, y6, y7, y8, y9) = inertia_transform(
                c00, c01, c02, c10, c11, c12, c20, c21, c22, p0, p1, p2, kd[i, MASS], kd[i, MASS + 1],
                kd[i, MASS + 2], kd[i, MASS + 3], kd[i, MASS + 4], kd[i, MASS + 5], kd[i, MASS + 6],
                kd[i, MASS + 7], kd[i, MASS + 8], kd[i, MASS + 9])
            Yc[i, 0, l], Yc[i, 1, l], Yc[i, 2, l], Yc[i, 3, l], Yc[i, 4, l] = y0, y1, y2, y3, y4
            Yc[i, 5, l], Yc[i, 6, l], Yc[i, 7, l], Yc[i, 8, l], Yc[i, 9, l] = y5, y6, y7, y8, y9
            (Bc[i, 0, l], Bc[i, 1, l], Bc[i, 2, l], Bc[i, 3, l], Bc[i, 4, l], Bc[i, 5, l], Bc[i, 6, l],
             Bc[i, 7, l], Bc[i, 8, l], Bc[i, 9, l], Bc[i, 10, l], Bc[i, 11, l]) = body_b(
                y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, w0, w1, w2, v0, v1, v2)
    # Pass 2: composites, tips to base, and the rows/columns of C.
    for i in range(n - 1, -1, -1):
        for l in range(m):
            for c in range(10):
                G[c, l] = Yc[i, c, l]
            for c in range(12):
                G[10 + c, l] = Bc[i, c, l]
        for l in range(m):
            (F0, F1, F2, F3, F4, F5, cll, a0, a1, a2, a3, a4, a5, g0, g1, g2) = joint_columns(
                (G[0, l], G[1, l], G[2, l], G[3, l], G[4, l], G[5, l], G[6, l], G[7, l], G[8, l], G[9, l]),
                (G[10, l], G[11, l], G[12, l], G[13, l], G[14, l], G[15, l], G[16, l], G[17, l], G[18, l],
                 G[19, l], G[20, l], G[21, l]),
                (J[i, 0, l], J[i, 1, l], J[i, 2, l], J[i, 3, l], J[i, 4, l], J[i, 5, l]),
                (dJ[i, 0, l], dJ[i, 1, l], dJ[i, 2, l], dJ[i, 3, l], dJ[i, 4, l], dJ[i, 5, l]))
            Cl[i, i, l] = cll
            H[0, l], H[1, l], H[2, l], H[3, l], H[4, l], H[5, l] = F0, F1, F2, F3, F4, F5
            H[6, l], H[7, l], H[8, l], H[9, l], H[10, l], H[11, l] = a0, a1, a2, a3, a4, a5
            H[12, l], H[13, l], H[14, l] = g0, g1, g2
        par = int(kd[i, PARENT])
        j = par
        while j >= 0:
            for l in range(m):
                Cl[j, i, l], Cl[i, j, l] = ancestor_pair(
                    H[0, l], H[1, l], H[2, l], H[3, l], H[4, l], H[5, l], H[6, l], H[7, l], H[8, l], H[9, l],
                    H[10, l], H[11, l], H[12, l], H[13, l], H[14, l],
                    (J[j, 0, l], J[j, 1, l], J[j, 2, l], J[j, 3, l], J[j, 4, l], J[j, 5, l]),
                    (dJ[j, 0, l], dJ[j, 1, l], dJ[j, 2, l], dJ[j, 3, l], dJ[j, 4, l], dJ[j, 5, l]))
            j = int(kd[j, PARENT])
        if par >= 0:
            for l in range(m):
                for c in range(10):
                    Yc[par, c, l] += G[c, l]
                for c in range(12):
                    Bc[par, c, l] += G[10 + c, l]
    for l in range(m):
        if ok[l]:
            for i in range(n):
                for j in range(n):
                    C[k0 + l, i, j] = Cl[i, j, l]


@njit(cache=True)
def _batch_in_lanes(kd, q, qd, C, status, claimed, size):
    """The states of a batch that this thread claims (:func:`.work.claim`), ``LANES`` at a time
    through :func:`coriolis_lanes`."""
    n = kd.shape[0] - 1
    ql = np.empty((n, LANES))
    qdl = np.empty((n, LANES))
    ok = np.empty(LANES, dtype=np.bool_)
    B = q.shape[0]
    while True:
        start, end = claim(claimed, B, size)
        if start >= end:
            break
        for b in range(start, end, LANES):
            m = min(LANES, end - b)
            for l in range(m):
                k = b + l
                status[k] = nonfinite_code(q[k], qd[k])
                ok[l] = status[k] == 0
                for i in range(n):
                    ql[i, l] = q[k, i] if ok[l] else 0.0
                    qdl[i, l] = qd[k, i] if ok[l] else 0.0
            coriolis_lanes(kd, ql, qdl, C, b, ok, m)


@njit(cache=True, parallel=True)
def coriolis_batch(kd, q, qd, C, status):
    """States ``(q[k], qd[k]) -> C[k]`` for ``k < B``, one work unit per numba thread; ``status[k]``
    as :func:`coriolis`, written for every ``k``. States go to :func:`coriolis_lanes` as in
    :func:`.rnea.rnea_batch`, or one at a time for models too large for lanes. Returns 0, or
    NOT_FAST as :func:`.rnea.rnea_batch`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    if not (rows_of(q, B, n) and rows_of(qd, B, n) and C.shape[0] == B and C.shape[1] == n and C.shape[2] == n
            and status.shape[0] == B):
        return NOT_FAST   # see dynamics._Entries: a fast path's entry point does not check layouts
    lanes = lanes_fit(n)
    chunks = thread_chunks(B)
    claimed = np.zeros(1, dtype=np.int64)   # the lanes drivers' shared counter (work.claim)
    size = claim_size(B, chunks, LANES)
    for ch in prange(chunks):
        if lanes:
            _batch_in_lanes(kd, q, qd, C, status, claimed, size)
        else:
            start, end = ch * B // chunks, (ch + 1) * B // chunks
            Rw, pw, J, dJ, V, Yc, Bc, P = _work(n)
            for k in range(start, end):
                status[k] = nonfinite_code(q[k], qd[k])
                if status[k] == 0:
                    coriolis_state_call(kd, q[k], qd[k], C[k], Rw, pw, J, dJ, V, Yc, Bc, P)
    return 0
