"""Analytic derivatives of inverse dynamics: ``dtau/dq``, ``dtau/dqd`` and ``dtau/dqdd = M``
(docs/theory.md §14; Carpentier & Mansard, RSS 2018, the algorithm of Pinocchio's
``computeRNEADerivatives``), in one forward and one backward pass, ``O(n d)``.

Every quantity is expressed in the base frame ``{0}`` (space frame, ``(omega, v)`` order), as in
:mod:`.coriolis`; ``x`` is the twist bracket ``[ad]`` and ``x*`` its dual (``V x* F = -[ad_V]^T F``).
A change of ``q_k`` turns the whole subtree of joint ``k`` (all the rows of a free-flyer or
spherical joint included) about ``J_k``: every quantity of the subtree fixed in its bodies moves as
``X -> X + dq_k J_k x X``, the rest of the tree not at all. That and the chain rule give (§14)
``dtau/dq_k`` and ``dtau/dqd_k`` from the columns below.

Pass 1, forward, ``i = 0 .. n-1``, ``p = p(i)``, ``l`` the parent of row ``i``'s joint (``p`` but
for the inner rows of a free-flyer or spherical joint, :mod:`.layout`; base: ``V = 0``, ``A = (0, -g)``)::

    T_{0,i} = T_{0,p} T_{p,i}(q),      J_i = [Ad_{T_{0,i}}] S_i
    V_i      = V_p + J_i qd_i                      ([Ad_{T_{0,i}}] v_J for a multi-DoF joint's rows, joints.py)
    dJ_i     = V_i x J_i,                A_i = A_p + J_i qdd_i + dJ_i qd_i
    Psi_i    = V_l x J_i                           dV/dq_i's own part (= dJ_i = V_i x J_i for one DoF)
    Phi_i    = A_l x J_i + V_l x Psi_i             dA/dq_i's own part
    U_i      = dJ_i + Psi_i                        dA/dqd_i's own part
    Y_i      = [Ad_{T_{i,0}}]^T G_i [Ad_{T_{i,0}}],   B_i (:func:`.coriolis.body_b`)
    F_i      = Y_i A_i - [ad_{V_i}]^T Y_i V_i - [Ad_{T_{i,0}}]^T F_ext_i          (RNEA's body wrench in {0})

Pass 2, backward, ``i = n-1 .. 0``, with the subtree sums ``Yc_i``, ``Bc_i``, ``Fc_i`` (plain sums,
all in ``{0}``)::

    a_i   = Yc_i J_i                       g_i = top of 2 Bc_i^T J_i    (its bottom is zero)
    dFq_i = Yc_i Phi_i + 2 Bc_i Psi_i + J_i x* Fc_i
    dFv_i = Yc_i U_i + 2 Bc_i J_i
    dtau_dq[i, i] = J_i^T dFq_i,   dtau_dqd[i, i] = J_i^T dFv_i,   M[i, i] = J_i^T a_i + armature_i
    for each strict ancestor j of i:
        dtau_dq[j, i]  = J_j^T dFq_i   (J_j^T (dFq_i - J_i x* Fc_i) for j a row of i's own joint)
        dtau_dq[i, j]  = a_i^T Phi_j + g_i^T Psi_j
        dtau_dqd[j, i] = J_j^T dFv_i,        dtau_dqd[i, j] = a_i^T U_j + g_i^T J_j
        M[j, i] = M[i, j] = J_j^T a_i

and zero for two joints on different branches. ``2 B`` is ``Ydot - Lambda(h)`` of
:mod:`.coriolis`; with one DoF per joint ``dtau_dqd = 2 C``, ``C`` the Christoffel Coriolis matrix.
``L`` states run side by side (:mod:`.work`); ``F_ext_i`` is in body ``i``'s frame, as in :mod:`.rnea`.
"""
import numpy as np
from numba import prange

from .coriolis import b_apply, b_transpose_top, body_b, twist_and_rate
from .inertia_kernels import body_inertia, inertia_apply, inertia_transform
from .internals import (
    dot6, lanes_copy, lanes_dot, lanes_zero, release_gil, restore_gil, scratch, stack, store_fence, window,
)
from .joints import joint_poses, joint_screw, joint_velocities
from .layout import ARMAT, GRAVITY, INNER, ONE_DOF, PARENT, POSEK
from .ltdl import branch_columns, inverse_times_lanes
from .rnea import body_wrench
from .spatial_kernels import ad, cross_force, pose_of, twist_to_world, world_body, wrench_to_parent
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import (
    STACK_LIMIT, STREAM_BYTES, add, claim, copy_lanes, get3, get6, get9, get10, get12, is_rows, is_vector, load,
    load_wrenches, put, q_size, row, stream_plan, stream_step, units,
)

LANES = 4   # 8 ran slower on UR5 and no faster on Talos
# one-state calls release the GIL from this many DoF (a floating Solo12, 18 DoF: 5.1 us a call; internals.release_gil)
GIL_FROM = 12


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies."""
    return 106 * n + 200


@njit(**HELPER)
def dot(a, b):
    """``a^T b`` of six numbers each."""
    return dot6(a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3], b[4], b[5])


@njit(**HELPER)
def body_columns(Y, B, F, J, Psi, Phi, U):
    """For row ``i`` with the subtree sums ``Y = Yc_i`` (ten numbers), ``B = Bc_i`` (twelve) and
    ``F = Fc_i`` (six), and its columns ``J_i``, ``Psi_i``, ``Phi_i``, ``U_i``: ``a_i = Yc_i J_i``,
    ``g_i`` (three), ``dFq_i - J_i x* Fc_i``, ``J_i x* Fc_i`` and ``dFv_i`` (six each)."""
    a = inertia_apply(Y, J)
    g0, g1, g2 = b_transpose_top(B, J)
    y0, y1, y2, y3, y4, y5 = inertia_apply(Y, Phi)
    b0, b1, b2, b3, b4, b5 = b_apply(B, Psi)
    e0, e1, e2, e3, e4, e5 = inertia_apply(Y, U)
    k0, k1, k2, k3, k4, k5 = b_apply(B, J)
    return (a, (2.0 * g0, 2.0 * g1, 2.0 * g2),
            (y0 + 2.0 * b0, y1 + 2.0 * b1, y2 + 2.0 * b2, y3 + 2.0 * b3, y4 + 2.0 * b4, y5 + 2.0 * b5),
            cross_force(J, F),
            (e0 + 2.0 * k0, e1 + 2.0 * k1, e2 + 2.0 * k2, e3 + 2.0 * k3, e4 + 2.0 * k4, e5 + 2.0 * k5))


@njit(**KERNEL)
def rnea_derivatives(kd, q, qd, qdd, fext, use_fext, D, status, k0, k1, lanes, solve):
    """States ``k0 <= k < k1`` of ``q, qd, qdd (B, n)`` (and ``fext (B, n, 6)`` when ``use_fext``):
    ``D[k] (3, n, n)`` = ``(dtau_dq, dtau_dqd, M)`` and ``status[k]``, ``lanes`` (a compile-time
    constant) at a time. ``solve`` (a literal too) 0: ``D`` zeroed here, then its entries written;
    2: only the entries written, ``D`` holding zeros everywhere else already (work reused for the
    states of a batch: the entries written are the same for every state, :mod:`.aba_derivatives`);
    3: into work of the lanes' matrices (``(3, n, n, L)``, the lanes innermost, so that an entry of
    the lanes is one vector store; zeroed once), each group's copied into ``D`` by non-temporal
    stores during the next group's pass 1 (an output larger than the cache,
    :data:`.work.STREAM_BYTES`);
    1 (the derivatives of forward dynamics of a small model, :mod:`.aba_derivatives`): the lanes'
    matrices stay in lanes for :func:`.ltdl.inverse_times_lanes` and ``D[k]`` is
    ``(-M^{-1} dtau_dq, -M^{-1} dtau_dqd, M^{-1})``;
    ``status[k]`` then holds forward dynamics' code on entry (a flagged state is left as it is), and
    a state that these derivatives flag, or whose ``M`` has a pivot that is not positive, gets
    SINGULAR (OVERFLOW for a NaN pivot)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    L = lanes
    Q, QD, QDD = stack((nq, L)), stack((n, L)), stack((n, L))
    FE = stack((n, 6, L))
    Rw = stack((n + 1, 9, L))    # R_0i row-major; row n: the base
    pw = stack((n + 1, 3, L))
    Vs, As = stack((n + 1, 6, L)), stack((n + 1, 6, L))   # V_i, A_i in {0}
    J, Psi = stack((n, 6, L)), stack((n, 6, L))
    Phi, U = stack((n, 9, L)), stack((n, 9, L))   # (Phi_i, top of Psi_i), (U_i, top of J_i): what g_j meets
    Yc = stack((n, 10, L))       # subtree sums in {0}
    Bc = stack((n, 12, L))
    Fc = stack((n, 6, L))
    P = scratch(36, lanes)       # the parent's R, p, V, A; its joint's parent's V, A (all in {0})
    G = scratch(28, lanes)       # the child's Yc, Bc, Fc
    H = scratch(27, lanes)       # a_i, g_i, dFq_i - J_i x* Fc_i, dFq_i, dFv_i
    R = scratch(5, lanes)        # the five entries of an ancestor j
    ns = n if solve == 1 else 0  # solve 1: the matrices in lanes (M; dtau_dq, dtau_dqd transposed), the results
    Hs, Ts, Ys, Xs, Zs = stack((ns, n, L)), stack((2, ns, n, L)), stack((ns, n, L)), stack((ns, n, L)), stack((ns, n, L))
    acc = stack((ns + 1, L))
    broot, blast = stack((ns,)).view(np.int64), stack((ns,)).view(np.int64)   # (the parents: par_of)
    nn = n * L
    W = scratch(12, lanes)
    SC = scratch(2, lanes)
    VJ = scratch(6, lanes)       # v_J of a multi-DoF joint's row
    bad = stack((L,)).view(np.int64)
    NF = stack((L,))
    Dw = stack((3 * n * nn if solve == 3 else 0,))   # solve 3: the lanes' matrices (3, n, n, L), zeros written once
    for a in range(Dw.shape[0]):
        Dw[a] = 0.0
    SP = stack((6,)).view(np.int64)                       # the copy of the last group's into D (work.stream_plan)
    SP[1] = 0
    par_of = stack((n,)).view(np.int64)   # the parents as integers (the ancestor walks read them)
    lam = stack((n,)).view(np.int64)      # the parent of each row's joint (its first row's parent)
    first = stack((n,)).view(np.int64)    # the first row of each row's joint
    for i in range(n):
        par_of[i] = int(kd[i, PARENT])
        inner = kd[i, POSEK] == INNER
        lam[i] = lam[par_of[i]] if inner else par_of[i]
        first[i] = first[par_of[i]] if inner else i
    if solve == 1:               # entries of two joints on different branches: zero (M: the identity), never written
        branch_columns(kd, par_of, broot, blast)
        for a in range(n):
            for e in range(n):
                for A in (Hs[a], Ts[0, a], Ts[1, a], Ys[a], Xs[a], Zs[a]):
                    lanes_zero(A, e * L, L)
            for l in range(L):
                Hs[a, a, l] = 1.0
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            bad[l] = 0
        load(q, b, m, Q, bad, Status.NONFINITE)
        load(qd, b, m, QD, bad, Status.NONFINITE + 1)
        load(qdd, b, m, QDD, bad, Status.NONFINITE + 2)
        if use_fext:
            load_wrenches(fext, b, m, FE, bad)
        Dl = window(D, b * 3 * n * n, (m, 3, n, n))   # the lanes' rows of D, written in place (solve 0, 2)
        for l in range(m):
            NF[l] = 0.0                 # the sum of x * 0 over the entries written: NaN if one is NaN or inf
        if solve == 0:
            Dz = window(D, b * 3 * n * n, (m * 3 * n * n,))   # the lanes' rows of D are one run: zeroed at once
            for a in range(Dz.shape[0]):
                Dz[a] = 0.0
        g0 = (0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1], -kd[n, GRAVITY + 2])
        for l in range(m):
            put(Rw[n], l, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
            put(pw[n], l, (0.0, 0.0, 0.0))
            put(Vs[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
            put(As[n], l, g0)

        # Pass 1: poses, twists and accelerations, Jacobian columns, inertias, B_i and body wrenches.
        for i in range(n):
            par = par_of[i]
            joint_poses(kd, i, Q, SC, W, m)
            copy_lanes(Rw[par], P, m)
            copy_lanes(pw[par], P[9:], m)
            copy_lanes(Vs[par], P[12:], m)
            copy_lanes(As[par], P[18:], m)
            copy_lanes(Vs[lam[i]], P[24:], m)
            copy_lanes(As[lam[i]], P[30:], m)
            S = joint_screw(kd, i)
            one_dof = kd[i, POSEK] == ONE_DOF
            if not one_dof:
                joint_velocities(kd, i, S, QD, VJ, m)
            I = body_inertia(kd, i)
            for l in range(m):
                Ri, pi, Ji = world_body(get9(P, l), get3(P[9:], l), get12(W, l), S)    # T_0i, J_i = Ad_T0i S_i
                put(Rw[i], l, Ri)
                put(pw[i], l, pi)
                put(J[i], l, Ji)
                qdi, qddi = QD[i, l], QDD[i, l]
                vJ = ((Ji[0] * qdi, Ji[1] * qdi, Ji[2] * qdi, Ji[3] * qdi, Ji[4] * qdi, Ji[5] * qdi) if one_dof
                      else twist_to_world(pose_of(Ri, pi), get6(VJ, l)))
                Vi, dJi = twist_and_rate(get6(P[12:], l), Ji, vJ)                        # V_i = V_p + v_J, dJ_i
                put(Vs[i], l, Vi)
                a0, a1, a2, a3, a4, a5 = get6(P[18:], l)                                  # A_i = A_p + J_i qdd_i
                Ai = (a0 + Ji[0] * qddi + dJi[0] * qdi, a1 + Ji[1] * qddi + dJi[1] * qdi,  #     + dJ_i qd_i
                      a2 + Ji[2] * qddi + dJi[2] * qdi, a3 + Ji[3] * qddi + dJi[3] * qdi,
                      a4 + Ji[4] * qddi + dJi[4] * qdi, a5 + Ji[5] * qddi + dJi[5] * qdi)
                put(As[i], l, Ai)
                Vl = get6(P[24:], l)
                Ps = ad(Vl, Ji)                                                           # Psi_i = V_l x J_i
                put(Psi[i], l, Ps)
                e0, e1, e2, e3, e4, e5 = ad(get6(P[30:], l), Ji)                          # Phi_i = A_l x J_i
                f0, f1, f2, f3, f4, f5 = ad(Vl, Ps)                                       #       + V_l x Psi_i
                put(Phi[i], l, (e0 + f0, e1 + f1, e2 + f2, e3 + f3, e4 + f4, e5 + f5, Ps[0], Ps[1], Ps[2]))
                put(U[i], l, (dJi[0] + Ps[0], dJi[1] + Ps[1], dJi[2] + Ps[2], dJi[3] + Ps[3], dJi[4] + Ps[4],
                              dJi[5] + Ps[5], Ji[0], Ji[1], Ji[2]))                     # U_i = dJ_i + Psi_i
                Yi = inertia_transform(Ri, pi, I)                                         # Y_i in {0}
                put(Yc[i], l, Yi)
                put(Bc[i], l, body_b(Yi, Vi))
                put(Fc[i], l, body_wrench(Yi, Vi, Ai))                                    # RNEA's body wrench, in {0}
            if use_fext:                                                                  # F_i -= F_ext_i in {0}
                for l in range(m):
                    T0i = pose_of(get9(Rw[i], l), get3(pw[i], l))
                    e0, e1, e2, e3, e4, e5 = wrench_to_parent(T0i, get6(FE[i], l))
                    add(Fc[i], l, (-e0, -e1, -e2, -e3, -e4, -e5))
            if solve == 3:
                stream_step(SP, D, Dw, False, L)                                          # a step a body

        if solve == 3:
            stream_step(SP, D, Dw, True, L)   # (the rest, before pass 2 writes the work again)

        # Pass 2: subtree sums, tips to base, and the rows and columns of the three matrices.
        for i in range(n - 1, -1, -1):
            arm = kd[i, ARMAT]
            copy_lanes(Yc[i], G, m)
            copy_lanes(Bc[i], G[10:], m)
            copy_lanes(Fc[i], G[22:], m)
            for l in range(m):
                Ji = get6(J[i], l)
                a, g, dF0, turn, dFv = body_columns(get10(G, l), get12(G[10:], l), get6(G[22:], l), Ji,
                                                     get6(Psi[i], l), get6(Phi[i], l), get6(U[i], l))
                qii, vii, mii = dot(Ji, dF0), dot(Ji, dFv), dot(Ji, a) + arm      # (J_i^T (J_i x* Fc_i) = 0)
                R[0, l] = qii
                R[1, l] = vii
                R[2, l] = mii
                put(H, l, a)
                put(H[6:], l, g)
                put(H[9:], l, dF0)
                put(H[15:], l, (dF0[0] + turn[0], dF0[1] + turn[1], dF0[2] + turn[2], dF0[3] + turn[3],
                                dF0[4] + turn[4], dF0[5] + turn[5]))
                put(H[21:], l, dFv)
            for l in range(m):        # (apart: stores a whole D apart in the loop above kept it from vectorising)
                qii, vii, mii = R[0, l], R[1, l], R[2, l]
                if solve == 1:
                    Ts[0, i, i, l] = qii
                    Ts[1, i, i, l] = vii
                    Hs[i, i, l] = mii
                elif solve == 3:
                    Dw[(i * n + i) * L + l] = qii
                    Dw[n * nn + (i * n + i) * L + l] = vii
                    Dw[2 * n * nn + (i * n + i) * L + l] = mii
                else:
                    Dl[l, 0, i, i] = qii
                    Dl[l, 1, i, i] = vii
                    Dl[l, 2, i, i] = mii
                NF[l] += qii * 0.0 + vii * 0.0 + mii * 0.0
            par = par_of[i]
            j = par
            while j >= 0:
                # a row of i's own joint turns with q_i: no turn term (docs/theory.md §14.3)
                dFq = 9 * L if j >= first[i] else 15 * L
                lanes_dot(R, 0, J, 6 * L * j, H, dFq, 6, L)           # dtau_dq[j, i]  = J_j . dFq_i
                lanes_dot(R, L, H, 0, Phi, 9 * L * j, 9, L)           # dtau_dq[i, j]  = a_i . Phi_j + g_i . Psi_j
                lanes_dot(R, 2 * L, J, 6 * L * j, H, 21 * L, 6, L)    # dtau_dqd[j, i] = J_j . dFv_i
                lanes_dot(R, 3 * L, H, 0, U, 9 * L * j, 9, L)         # dtau_dqd[i, j] = a_i . U_j + g_i . J_j
                lanes_dot(R, 4 * L, J, 6 * L * j, H, 0, 6, L)         # M[i, j]        = J_j . a_i
                if solve == 1:                                        # (T: transposed; H: M's lower triangle)
                    lanes_copy(Ts, i * nn + j * L, R, 0, L)
                    lanes_copy(Ts, j * nn + i * L, R, L, L)
                    lanes_copy(Ts, n * nn + i * nn + j * L, R, 2 * L, L)
                    lanes_copy(Ts, n * nn + j * nn + i * L, R, 3 * L, L)
                    lanes_copy(Hs, i * nn + j * L, R, 4 * L, L)
                elif solve == 3:                                      # (Dw: the lanes innermost)
                    lanes_copy(Dw, j * nn + i * L, R, 0, L)
                    lanes_copy(Dw, i * nn + j * L, R, L, L)
                    lanes_copy(Dw, n * nn + j * nn + i * L, R, 2 * L, L)
                    lanes_copy(Dw, n * nn + i * nn + j * L, R, 3 * L, L)
                    lanes_copy(Dw, 2 * n * nn + j * nn + i * L, R, 4 * L, L)
                    lanes_copy(Dw, 2 * n * nn + i * nn + j * L, R, 4 * L, L)
                for l in range(m):
                    qji, qij, vji, vij, mij = R[0, l], R[1, l], R[2, l], R[3, l], R[4, l]
                    if solve == 0 or solve == 2:
                        Dl[l, 0, j, i] = qji
                        Dl[l, 0, i, j] = qij
                        Dl[l, 1, j, i] = vji
                        Dl[l, 1, i, j] = vij
                        Dl[l, 2, j, i] = mij
                        Dl[l, 2, i, j] = mij
                    NF[l] += qji * 0.0 + qij * 0.0 + vji * 0.0 + vij * 0.0 + mij * 0.0
                j = par_of[j]
            if par >= 0:
                for l in range(m):
                    add(Yc[par], l, get10(G, l))
                    add(Bc[par], l, get12(G[10:], l))
                    add(Fc[par], l, get6(G[22:], l))
        if solve == 1:
            inverse_times_lanes(par_of, broot, blast, Hs, Ts, Ys, Xs, Zs, acc, L)
            for l in range(m):
                k = b + l
                code = status[k]
                if code == 0 and (bad[l] or NF[l] != 0.0):   # a qdd beyond float64: M all but singular
                    code = Status.SINGULAR
                for a in range(n):
                    d = Hs[a, a, l]
                    if code == 0 and not d > 0.0:
                        code = Status.SINGULAR if d <= 0.0 else Status.OVERFLOW
                status[k] = code
                if code == 0:
                    for a in range(n):
                        for e in range(n):
                            Dl[l, 0, a, e] = -Ys[a, e, l]
                            Dl[l, 1, a, e] = -Zs[a, e, l]
                            Dl[l, 2, a, e] = Xs[a, e, l]
            continue
        for l in range(m):              # (a flagged state's D is not meaningful: written as the others)
            status[b + l] = bad[l]
            if NF[l] != 0.0 and bad[l] == 0:   # finite inputs, a D beyond float64: some x * 0 is NaN
                status[b + l] = Status.OVERFLOW
        if solve == 3:
            stream_plan(SP, D, b * 3 * n * n, 3 * n * n, m, n)
    if solve == 3:
        stream_step(SP, D, Dw, True, L)
        store_fence()


@njit(**ONE)
def rnea_derivatives_one(kd, q, qd, qdd, fext, use_fext, D):
    """One state: :func:`rnea_derivatives` on it as a batch of one (see :func:`.rnea.rnea_one`)."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and is_vector(qdd, n) and D.shape[0] == 3
            and D.shape[1] == n and D.shape[2] == n and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    rnea_derivatives(kd, row(q), row(qd), row(qdd), window(fext, 0, (1, fext.shape[0], 6)), use_fext,
                     window(D, 0, (1, 3, n, n)), status, 0, 1, 1, 0)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def rnea_derivatives_batch(kd, q, qd, qdd, fext, use_fext, D, status, lanes):
    """States ``(B, n) -> D (B, 3, n, n)`` over numba's threads, as :func:`.rnea.rnea_batch`."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and is_rows(qdd, B, n) and D.shape[0] == B
            and D.shape[1] == 3
            and D.shape[2] == n and D.shape[3] == n and status.shape[0] == B
            and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    # an output past the cache: streamed from work (solve 3), where the lanes' matrices fit the stack too
    stream = 24 * n * n * B > STREAM_BYTES and lanes * (per_lane(n) + 3 * n * n) <= STACK_LIMIT
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            if stream:
                rnea_derivatives(kd, q, qd, qdd, fext, use_fext, D, status, start, end, lanes, 3)
            else:
                rnea_derivatives(kd, q, qd, qdd, fext, use_fext, D, status, start, end, lanes, 0)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"rnea_derivatives": Entry("the derivatives of inverse dynamics", rnea_derivatives_one,
                                     rnea_derivatives_batch, ("q", "qd", "qdd"), (3,), per_lane, LANES, fext=True)}
