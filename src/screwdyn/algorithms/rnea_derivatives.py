"""Analytic derivatives of inverse dynamics: ``dtau/dq``, ``dtau/dqd`` and ``dtau/dqdd = M``
(docs/theory.md §14; Carpentier & Mansard, RSS 2018, the algorithm of Pinocchio's
``computeRNEADerivatives``), in one forward and one backward pass, ``O(n d)``.

Every quantity is expressed in the base frame ``{0}`` (space frame, ``(omega, v)`` order), as in
:mod:`.coriolis`; ``x`` is the twist bracket ``[ad]`` and ``x*`` its dual (``V x* F = -[ad_V]^T F``).
A change of ``q_k`` turns the whole subtree of joint ``k`` about ``J_k``: every quantity of the
subtree fixed in its bodies moves as ``X -> X + dq_k J_k x X``, the rest of the tree not at all.
That and the chain rule give (§14) ``dtau/dq_k`` and ``dtau/dqd_k`` from the four columns below.

Pass 1, forward, ``i = 0 .. n-1``, ``p = p(i)`` (base: ``V = 0``, ``A = (0, -g)``)::

    T_{0,i} = T_{0,p} T_{p,i}(q_i),      J_i = [Ad_{T_{0,i}}] S_i
    V_i, A_i = [Ad_{T_{0,i}}] (the body twist and acceleration of RNEA's pass 1)
    dJ_i     = V_i x J_i                           = d/dt J_i = dV/dq_i = V_p x J_i (one DoF)
    dA_i     = A_p x J_i + V_p x dJ_i              the acceleration's share of d/dq_i
    Y_i      = [Ad_{T_{i,0}}]^T G_i [Ad_{T_{i,0}}],   B_i (:func:`.coriolis.body_b`)
    F_i      = [Ad_{T_{i,0}}]^T (G_i dV_i - [ad_{V_i}]^T G_i V_i - F_ext_i)     (RNEA's body wrench)

Pass 2, backward, ``i = n-1 .. 0``, with the subtree sums ``Yc_i``, ``Bc_i``, ``Fc_i`` (plain sums,
all in ``{0}``)::

    a_i   = Yc_i J_i                       g_i = top of 2 Bc_i^T J_i    (its bottom is zero)
    dFq_i = Yc_i dA_i + 2 Bc_i dJ_i + J_i x* Fc_i
    dFv_i = 2 (Yc_i dJ_i + Bc_i J_i)
    dtau_dq[i, i] = J_i^T dFq_i,   dtau_dqd[i, i] = J_i^T dFv_i,   M[i, i] = J_i^T a_i + armature_i
    for each strict ancestor j of i:
        dtau_dq[j, i]  = J_j^T dFq_i,        dtau_dq[i, j]  = a_i^T dA_j + g_i^T dJ_j
        dtau_dqd[j, i] = J_j^T dFv_i,        dtau_dqd[i, j] = 2 a_i^T dJ_j + g_i^T J_j
        M[j, i] = M[i, j] = J_j^T a_i

and zero for two joints on different branches. ``2 B`` is ``Ydot - Lambda(h)`` of
:mod:`.coriolis`, so ``dtau_dqd = 2 C`` with ``C`` the Christoffel Coriolis matrix. ``L`` states
run side by side (:mod:`.work`); ``F_ext_i`` is in body ``i``'s frame, as in :mod:`.rnea`.
"""
import numpy as np
from numba import njit, prange

from .coriolis import b_apply, b_transpose_top, body_b
from .inertia_kernels import body_inertia, inertia_apply, inertia_transform
from .internals import CACHED, HELPER, KERNEL, dot6, scratch, stack, window
from .joints import joint_poses, joint_screw
from .layout import ARMAT, GRAVITY, PARENT
from .rnea import body_motion, body_wrench
from .spatial_kernels import ad, cross_force, pose_of, twist_to_world, world_body, wrench_to_parent
from .entry import Entry
from .status import Status
from .work import (
    STACK_LIMIT, add, claim, copy_lanes, flat, get3, get6, get9, get10, get12, is_rows, is_vector, lanes_of, load,
    load_wrenches, put, row, store, units, zero_lanes,
)

LANES = 4   # its output grows as 3 n^2: 4 lanes keep Talos' 44 joints on the stack


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies."""
    return 3 * n * n + 100 * n + 200


@njit(**HELPER)
def dot(a, b):
    """``a^T b`` of six numbers each."""
    return dot6(a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3], b[4], b[5])


@njit(**HELPER)
def body_columns(Y, B, F, J, dJ, dA):
    """For joint ``i`` with the subtree sums ``Y = Yc_i`` (ten numbers), ``B = Bc_i`` (twelve) and
    ``F = Fc_i`` (six), and its columns ``J_i``, ``dJ_i``, ``dA_i``: ``a_i = Yc_i J_i``, ``g_i`` (three),
    ``dFq_i`` and ``dFv_i`` (six each)."""
    a = inertia_apply(Y, J)
    g0, g1, g2 = b_transpose_top(B, J)
    y0, y1, y2, y3, y4, y5 = inertia_apply(Y, dA)
    b0, b1, b2, b3, b4, b5 = b_apply(B, dJ)
    c0, c1, c2, c3, c4, c5 = cross_force(J, F)
    e0, e1, e2, e3, e4, e5 = inertia_apply(Y, dJ)
    k0, k1, k2, k3, k4, k5 = b_apply(B, J)
    return (a, (2.0 * g0, 2.0 * g1, 2.0 * g2),
            (y0 + 2.0 * b0 + c0, y1 + 2.0 * b1 + c1, y2 + 2.0 * b2 + c2, y3 + 2.0 * b3 + c3, y4 + 2.0 * b4 + c4,
             y5 + 2.0 * b5 + c5),
            (2.0 * (e0 + k0), 2.0 * (e1 + k1), 2.0 * (e2 + k2), 2.0 * (e3 + k3), 2.0 * (e4 + k4), 2.0 * (e5 + k5)))


@njit(**HELPER)
def ancestor_entries(a, g, dFq, dFv, Jj, dJj, dAj):
    """The five entries of an ancestor ``j`` of ``i``: ``dtau_dq[j, i]``, ``dtau_dq[i, j]``,
    ``dtau_dqd[j, i]``, ``dtau_dqd[i, j]`` and ``M[i, j]``."""
    return (dot(Jj, dFq), dot(a, dAj) + (g[0] * dJj[0] + g[1] * dJj[1] + g[2] * dJj[2]),
            dot(Jj, dFv), 2.0 * dot(a, dJj) + (g[0] * Jj[0] + g[1] * Jj[1] + g[2] * Jj[2]),
            dot(Jj, a))


@njit(**KERNEL)
def rnea_derivatives(kd, q, qd, qdd, fext, use_fext, D, status, k0, k1, lanes):
    """States ``k0 <= k < k1`` of ``q, qd, qdd (B, n)`` (and ``fext (B, n, 6)`` when ``use_fext``):
    ``D[k] (3, n, n)`` = ``(dtau_dq, dtau_dqd, M)`` and ``status[k]``, ``lanes`` (a compile-time
    constant) at a time."""
    n = kd.shape[0] - 1
    L = lanes
    Q, QD, QDD = stack((n, L)), stack((n, L)), stack((n, L))
    FE = stack((n, 6, L))
    Rw = stack((n + 1, 9, L))    # R_0i row-major; row n: the base
    pw = stack((n + 1, 3, L))
    Vs, As = stack((n + 1, 6, L)), stack((n + 1, 6, L))   # V_i, A_i in {0}
    Vb, Ab = stack((n + 1, 6, L)), stack((n + 1, 6, L))   # the same in body i's frame (RNEA's pass 1)
    J, dJ, dA = stack((n, 6, L)), stack((n, 6, L)), stack((n, 6, L))
    Yc = stack((n, 10, L))       # subtree sums in {0}
    Bc = stack((n, 12, L))
    Fc = stack((n, 6, L))
    Dw = stack((3, n, n, L))     # the lanes' D (lanes_of: with one lane, D's row itself)
    P = scratch(36, lanes)       # the parent's R, p, V, A in {0}, and V, A in its frame
    G = scratch(28, lanes)       # the child's Yc, Bc, Fc
    H = scratch(21, lanes)       # a_i, g_i, dFq_i, dFv_i
    W = scratch(12, lanes)
    SC = scratch(2, lanes)
    bad = stack((L,)).view(np.int64)
    par_of = stack((n,)).view(np.int64)   # the parents as integers (the ancestor walks read them)
    for i in range(n):
        par_of[i] = int(kd[i, PARENT])
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            bad[l] = 0
        load(q, b, m, Q, bad, Status.NONFINITE)
        load(qd, b, m, QD, bad, Status.NONFINITE + 1)
        load(qdd, b, m, QDD, bad, Status.NONFINITE + 2)
        if use_fext:
            load_wrenches(fext, b, m, FE, bad)
        Dl = lanes_of(Dw, D, b)
        zero_lanes(window(Dl, 0, (3 * n, n, L)), m)
        g0 = (0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1], -kd[n, GRAVITY + 2])
        for l in range(m):
            put(Rw[n], l, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
            put(pw[n], l, (0.0, 0.0, 0.0))
            put(Vs[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
            put(As[n], l, g0)
            put(Vb[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
            put(Ab[n], l, g0)

        # Pass 1: poses, twists and accelerations, Jacobian columns, inertias, B_i and body wrenches.
        for i in range(n):
            par = par_of[i]
            joint_poses(kd, i, Q, SC, W, m)
            copy_lanes(Rw[par], P, m)
            copy_lanes(pw[par], P[9:], m)
            copy_lanes(Vs[par], P[12:], m)
            copy_lanes(As[par], P[18:], m)
            copy_lanes(Vb[par], P[24:], m)
            copy_lanes(Ab[par], P[30:], m)
            S = joint_screw(kd, i)
            I = body_inertia(kd, i)
            for l in range(m):
                Ri, pi, Ji = world_body(get9(P, l), get3(P[9:], l), get12(W, l), S)    # T_0i, J_i = Ad_T0i S_i
                put(Rw[i], l, Ri)
                put(pw[i], l, pi)
                put(J[i], l, Ji)
                Vi, Ai = body_motion(get12(W, l), S, QD[i, l], QDD[i, l], get6(P[24:], l), get6(P[30:], l))
                put(Vb[i], l, Vi)
                put(Ab[i], l, Ai)
                T0i = pose_of(Ri, pi)
                Vw = twist_to_world(T0i, Vi)
                put(Vs[i], l, Vw)
                put(As[i], l, twist_to_world(T0i, Ai))
                dJi = ad(Vw, Ji)                                                          # dJ_i = V_i x J_i
                put(dJ[i], l, dJi)
                e0, e1, e2, e3, e4, e5 = ad(get6(P[18:], l), Ji)                          # dA_i = A_p x J_i
                f0, f1, f2, f3, f4, f5 = ad(get6(P[12:], l), dJi)                         #      + V_p x dJ_i
                put(dA[i], l, (e0 + f0, e1 + f1, e2 + f2, e3 + f3, e4 + f4, e5 + f5))
                Yi = inertia_transform(Ri, pi, I)                                         # Y_i in {0}
                put(Yc[i], l, Yi)
                put(Bc[i], l, body_b(Yi, Vw))
                w0, w1, w2, w3, w4, w5 = body_wrench(I, Vi, Ai)                           # RNEA's body wrench
                if use_fext:
                    w0, w1, w2, w3, w4, w5 = (w0 - FE[i, 0, l], w1 - FE[i, 1, l], w2 - FE[i, 2, l],
                                              w3 - FE[i, 3, l], w4 - FE[i, 4, l], w5 - FE[i, 5, l])
                put(Fc[i], l, wrench_to_parent(T0i, (w0, w1, w2, w3, w4, w5)))            # in {0}

        # Pass 2: subtree sums, tips to base, and the rows and columns of the three matrices.
        for i in range(n - 1, -1, -1):
            arm = kd[i, ARMAT]
            copy_lanes(Yc[i], G, m)
            copy_lanes(Bc[i], G[10:], m)
            copy_lanes(Fc[i], G[22:], m)
            for l in range(m):
                Ji = get6(J[i], l)
                a, g, dFq, dFv = body_columns(get10(G, l), get12(G[10:], l), get6(G[22:], l), Ji, get6(dJ[i], l),
                                              get6(dA[i], l))
                Dl[0, i, i, l] = dot(Ji, dFq)
                Dl[1, i, i, l] = dot(Ji, dFv)
                Dl[2, i, i, l] = dot(Ji, a) + arm
                put(H, l, a)
                put(H[6:], l, g)
                put(H[9:], l, dFq)
                put(H[15:], l, dFv)
            par = par_of[i]
            j = par
            while j >= 0:
                for l in range(m):
                    qji, qij, vji, vij, mij = ancestor_entries(get6(H, l), get3(H[6:], l), get6(H[9:], l),
                                                               get6(H[15:], l), get6(J[j], l), get6(dJ[j], l),
                                                               get6(dA[j], l))
                    Dl[0, j, i, l] = qji
                    Dl[0, i, j, l] = qij
                    Dl[1, j, i, l] = vji
                    Dl[1, i, j, l] = vij
                    Dl[2, j, i, l] = mij
                    Dl[2, i, j, l] = mij
                j = par_of[j]
            if par >= 0:
                for l in range(m):
                    add(Yc[par], l, get10(G, l))
                    add(Bc[par], l, get12(G[10:], l))
                    add(Fc[par], l, get6(G[22:], l))
        store(window(Dl, 0, (3 * n * n, L)), b, m, flat(D), status, bad)


@njit(**KERNEL)
def rnea_derivatives_one(kd, q, qd, qdd, fext, use_fext, D):
    """One state: :func:`rnea_derivatives` on it as a batch of one (see :func:`.rnea.rnea_one`)."""
    n = kd.shape[0] - 1
    if not (is_vector(q, n) and is_vector(qd, n) and is_vector(qdd, n) and D.shape[0] == 3 and D.shape[1] == n
            and D.shape[2] == n and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    rnea_derivatives(kd, row(q), row(qd), row(qdd), window(fext, 0, (1, fext.shape[0], 6)), use_fext,
                     window(D, 0, (1, 3, n, n)), status, 0, 1, 1)
    return status[0]


@njit(cache=CACHED, parallel=True)
def rnea_derivatives_batch(kd, q, qd, qdd, fext, use_fext, D, status, lanes):
    """States ``(B, n) -> D (B, 3, n, n)`` over numba's threads, as :func:`.rnea.rnea_batch`."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, n) and is_rows(qd, B, n) and is_rows(qdd, B, n) and D.shape[0] == B and D.shape[1] == 3
            and D.shape[2] == n and D.shape[3] == n and status.shape[0] == B
            and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            rnea_derivatives(kd, q, qd, qdd, fext, use_fext, D, status, start, end, lanes)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"rnea_derivatives": Entry("the derivatives of inverse dynamics", rnea_derivatives_one,
                                     rnea_derivatives_batch, ("q", "qd", "qdd"), (3,), per_lane, LANES, fext=True)}
