"""Articulated-Body Algorithm: forward dynamics ``qdd = FD(q, qd, tau, F_ext)`` in ``O(n)``
(docs/theory.md §10.1; Featherstone's ``FDab``).

Each body's quantities are expressed in a world-aligned frame at its origin, as in :mod:`.crba`:
rotations are applied once per body (to ``S_i`` and ``G_i``), and a quantity moves between
neighbours by the pure translation ``X_i = [[1, 0], [-[r_i], 1]]`` (``X_i V = (w, v + w x r_i)``).

Pass 1, forward, ``i = 0 .. n-1`` (base ``V = 0``)::

    J_i  = (R_i s_w, R_i s_v)                             S_i in world axes
    V_i  = X_i V_p + J_i qd_i                             (R_i v_J for a multi-DoF joint's rows: joints.py)
    c_i  = [ad_{V_i}] J_i qd_i                            velocity-product acceleration
    IA_i = Y_i = G_i in world axes,    pA_i = V_i x* Y_i V_i - R_i F_ext_i

Pass 2, backward, ``i = n-1 .. 0``::

    U_i = IA_i J_i,    D_i = J_i^T U_i + armature_i,    u_i = tau_i - J_i^T pA_i
    Ia  = IA_i - U_i U_i^T / D_i,    pa = pA_i + Ia c_i + U_i u_i / D_i
    IA_p(i) += X_i^T Ia X_i,         pA_p(i) += X_i^T pa = (n + r_i x f, f)

Pass 3, forward, ``i = 0 .. n-1`` (base acceleration ``a_0 = (0, -g)``: gravity)::

    a'     = X_i a_p + c_i
    qdd_i  = (u_i - U_i^T a') / D_i
    a_i    = a' + J_i qdd_i

The armature (reflected rotor inertia) enters only ``D_i``, as in Pinocchio's ``aba``. A state
with some ``D_i <= 0`` (a joint that moves no inertia: ``M`` singular) is flagged SINGULAR.
The symmetric ``IA_i`` are held as their 21 upper-triangle numbers (:data:`.inertia_kernels.UPPER`).
``L`` states run side by side (:mod:`.work`); ``F_ext_i`` is in body ``i``'s frame, as in :mod:`.rnea`.
"""
import numpy as np
from numba import prange

from .inertia_kernels import articulated, articulated_shift, body_inertia, inertia_apply, inertia_rotate, massless
from .internals import release_gil, restore_gil, scratch, stack, window
from .joints import in_parent_frame, joint_poses, joint_screw, joint_velocities, screw_half
from .layout import ARMAT, GRAVITY, ONE_DOF, PARENT, POSEK
from .spatial_kernels import ad, aligned, aligned_in_parent, cross_force, rotate6, translate_twist, translate_wrench
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import (
    STACK_LIMIT, add, claim, copy_lanes, get3, get6, get9, get12, get21, is_rows, is_vector, lanes_of, q_size, load,
    load_wrenches, put, row, store, units,
)

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
ZERO21 = (0.0,) * 21
LANES = 8    # one AVX-512 vector of states; 1-3 % faster than 16 on panda, ur5, floating anymal and Talos
# one-state calls release the GIL from this many DoF (a 32-joint Talos: 4.7 us a call; internals.release_gil)
GIL_FROM = 28


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies."""
    return 76 * n + 78


@njit(**HELPER)
def articulated_apply(IA, V):
    """``IA V`` for a symmetric 6x6 ``IA`` held as its 21 upper-triangle numbers."""
    a00, a01, a02, a03, a04, a05, a11, a12, a13, a14, a15, a22, a23, a24, a25, a33, a34, a35, a44, a45, a55 = IA
    v0, v1, v2, v3, v4, v5 = V
    return (a00 * v0 + a01 * v1 + a02 * v2 + a03 * v3 + a04 * v4 + a05 * v5,
            a01 * v0 + a11 * v1 + a12 * v2 + a13 * v3 + a14 * v4 + a15 * v5,
            a02 * v0 + a12 * v1 + a22 * v2 + a23 * v3 + a24 * v4 + a25 * v5,
            a03 * v0 + a13 * v1 + a23 * v2 + a33 * v3 + a34 * v4 + a35 * v5,
            a04 * v0 + a14 * v1 + a24 * v2 + a34 * v3 + a44 * v4 + a45 * v5,
            a05 * v0 + a15 * v1 + a25 * v2 + a35 * v3 + a45 * v4 + a55 * v5)


@njit(**HELPER)
def articulated_apply_half(IA, x, c):
    """``IA V`` for a ``V`` whose only nonzero numbers are ``x`` at ``3 c .. 3 c + 2`` (``c = 0``: a
    rotation, ``J = (R a, 0)``; ``c = 1``: a translation), with the products by those zeros left
    out: :func:`articulated_apply` to the last bit."""
    a00, a01, a02, a03, a04, a05, a11, a12, a13, a14, a15, a22, a23, a24, a25, a33, a34, a35, a44, a45, a55 = IA
    x0, x1, x2 = x
    if c == 0:
        return (a00 * x0 + a01 * x1 + a02 * x2, a01 * x0 + a11 * x1 + a12 * x2, a02 * x0 + a12 * x1 + a22 * x2,
                a03 * x0 + a13 * x1 + a23 * x2, a04 * x0 + a14 * x1 + a24 * x2, a05 * x0 + a15 * x1 + a25 * x2)
    return (a03 * x0 + a04 * x1 + a05 * x2, a13 * x0 + a14 * x1 + a15 * x2, a23 * x0 + a24 * x1 + a25 * x2,
            a33 * x0 + a34 * x1 + a35 * x2, a34 * x0 + a44 * x1 + a45 * x2, a35 * x0 + a45 * x1 + a55 * x2)


@njit(**HELPER)
def articulate(IA, U, D, u, pA, c):
    """What body ``i`` hands its parent: ``Ia = IA - U U^T / D`` (21 numbers) and
    ``pa = pA + Ia c + U u / D`` (six)."""
    inv_d = 1.0 / D
    ud = u * inv_d
    U0, U1, U2, U3, U4, U5 = U
    W0, W1, W2, W3, W4, W5 = U0 * inv_d, U1 * inv_d, U2 * inv_d, U3 * inv_d, U4 * inv_d, U5 * inv_d
    Ia = (IA[0] - W0 * U0, IA[1] - W0 * U1, IA[2] - W0 * U2, IA[3] - W0 * U3, IA[4] - W0 * U4, IA[5] - W0 * U5,
          IA[6] - W1 * U1, IA[7] - W1 * U2, IA[8] - W1 * U3, IA[9] - W1 * U4, IA[10] - W1 * U5,
          IA[11] - W2 * U2, IA[12] - W2 * U3, IA[13] - W2 * U4, IA[14] - W2 * U5,
          IA[15] - W3 * U3, IA[16] - W3 * U4, IA[17] - W3 * U5,
          IA[18] - W4 * U4, IA[19] - W4 * U5,
          IA[20] - W5 * U5)
    g0, g1, g2, g3, g4, g5 = articulated_apply(Ia, c)
    return Ia, (pA[0] + U0 * ud + g0, pA[1] + U1 * ud + g1, pA[2] + U2 * ud + g2,
                pA[3] + U3 * ud + g3, pA[4] + U4 * ud + g4, pA[5] + U5 * ud + g5)


@njit(**HELPER)
def put_body(Rw, r, J, V, C, IA, pA, l, Ri, ri, Ji, Vi, qdi, I, empty):
    """Pass 1's numbers of body ``i`` into lane ``l`` of its rows of the work arrays: ``R_i``, ``r_i``,
    ``J_i``, ``V_i``, then ``c_i = [ad_V_i] J_i qd_i``, ``IA_i = Y_i`` and ``pA_i = V_i x* Y_i V_i``
    (zero when the body is ``empty``: no inertia)."""
    put(Rw, l, Ri)
    put(r, l, ri)
    put(J, l, Ji)
    put(V, l, Vi)
    Ci, IAi, pAi = body_bias(Ri, Ji, Vi, qdi, I, empty)
    put(C, l, Ci)
    put(IA, l, IAi)
    put(pA, l, pAi)


@njit(**HELPER)
def body_bias(Ri, Ji, Vi, qdi, I, empty):
    """Pass 1's ``c_i = [ad_V_i] J_i qd_i``, ``IA_i = Y_i`` (21 numbers) and ``pA_i = V_i x* Y_i V_i`` of
    body ``i`` from its axes ``R_i``, joint axis ``J_i``, twist ``V_i`` and inertia ``I`` in its own
    frame (``IA_i``, ``pA_i`` zero when the body is ``empty``: no inertia)."""
    c0, c1, c2, c3, c4, c5 = ad(Vi, Ji)
    Ci = (qdi * c0, qdi * c1, qdi * c2, qdi * c3, qdi * c4, qdi * c5)
    if empty:
        return Ci, ZERO21, ZERO6
    Yi = inertia_rotate(Ri, I)
    return Ci, articulated(Yi), cross_force(Vi, inertia_apply(Yi, Vi))


@njit(**HELPER)
def joint_pivot(IA, J, pA, tau, arm, c):
    """Pass 2's ``U_i = IA_i J_i``, ``D_i = J_i^T U_i + armature_i`` and ``u_i = tau_i - J_i^T pA_i``,
    for ``J_i`` whose nonzero half starts at ``c`` (0: a rotation, 3: a translation; a constant in
    the caller's loop, :func:`.joints.screw_half`)."""
    if c == 0:
        J0, J1, J2 = J[0], J[1], J[2]
        U = articulated_apply_half(IA, (J0, J1, J2), 0)
        return U, arm + (J0 * U[0] + J1 * U[1] + J2 * U[2]), tau - (J0 * pA[0] + J1 * pA[1] + J2 * pA[2])
    J3, J4, J5 = J[3], J[4], J[5]
    U = articulated_apply_half(IA, (J3, J4, J5), 1)
    return U, arm + (J3 * U[3] + J4 * U[4] + J5 * U[5]), tau - (J3 * pA[3] + J4 * pA[4] + J5 * pA[5])


@njit(**HELPER)
def joint_acceleration(h, C, U, u, D, J):
    """Pass 3 of body ``i`` from ``h = X_i a_p`` (its parent's acceleration moved to it): ``a' = h +
    c_i``, ``qdd_i = (u_i - U_i^T a') / D_i``, ``a_i = a' + J_i qdd_i``. Returns ``(qdd_i, a_i)``."""
    h0, h1, h2, h3, h4, h5 = h
    c0, c1, c2, c3, c4, c5 = C
    h0, h1, h2, h3, h4, h5 = h0 + c0, h1 + c1, h2 + c2, h3 + c3, h4 + c4, h5 + c5
    U0, U1, U2, U3, U4, U5 = U
    qddi = (u - U0 * h0 - U1 * h1 - U2 * h2 - U3 * h3 - U4 * h4 - U5 * h5) / D
    J0, J1, J2, J3, J4, J5 = J
    return qddi, (h0 + J0 * qddi, h1 + J1 * qddi, h2 + J2 * qddi, h3 + J3 * qddi, h4 + J4 * qddi, h5 + J5 * qddi)


@njit(**KERNEL)
def aba(kd, q, qd, tau, fext, use_fext, qdd, status, k0, k1, lanes):
    """States ``k0 <= k < k1`` of ``q, qd, tau, qdd (B, n)`` (and ``fext (B, n, 6)`` when
    ``use_fext``): ``qdd[k]`` and ``status[k]`` (SINGULAR when some ``D_i <= 0``), ``lanes`` (a
    compile-time constant) at a time."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    L = lanes
    Q, QD, TAU, QDDw = stack((nq, L)), stack((n, L)), stack((n, L)), stack((n, L))   # QDDw: lanes_of
    FE = stack((n, 6, L))
    Rw = stack((n + 1, 9, L))  # R_i; row n: the base
    r = stack((n, 3, L))
    J = stack((n, 6, L))
    V = stack((n + 1, 6, L))   # V_i, then a_i in pass 3; row n: the base
    C = stack((n, 6, L))       # c_i
    IA = stack((n, 21, L))
    pA = stack((n, 6, L))
    U = stack((n, 6, L))
    D, u = stack((n, L)), stack((n, L))
    P = scratch(15, lanes)     # the parent's R and V (pass 1), its a (pass 3)
    T = scratch(12, lanes)
    SC = scratch(2, lanes)
    VJ = scratch(6, lanes)     # v_J of a multi-DoF joint's row
    G = scratch(21, lanes)     # Ia of the child
    H = scratch(6, lanes)      # pa of the child
    bad = stack((L,)).view(np.int64)
    E = stack((n,)).view(np.int64)   # 1 where row i sits in its parent's frame (r_i = 0: X_i = 1)
    for i in range(n):
        E[i] = 1 if in_parent_frame(kd, i) else 0
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            bad[l] = 0
        load(q, b, m, Q, bad, Status.NONFINITE)
        load(qd, b, m, QD, bad, Status.NONFINITE + 1)
        load(tau, b, m, TAU, bad, Status.NONFINITE + 2)
        if use_fext:
            load_wrenches(fext, b, m, FE, bad)
        QDD = lanes_of(QDDw, qdd, b)
        for l in range(m):
            put(Rw[n], l, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
            put(V[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))

        # Pass 1: poses, twists, velocity-product accelerations, inertias and bias wrenches.
        for i in range(n):
            par = int(kd[i, PARENT])
            joint_poses(kd, i, Q, SC, T, m)
            copy_lanes(Rw[par], P, m)
            copy_lanes(V[par], P[9:], m)
            S = joint_screw(kd, i)
            one_dof = kd[i, POSEK] == ONE_DOF
            if not one_dof:
                joint_velocities(kd, i, S, QD, VJ, m)
            I = body_inertia(kd, i)
            if E[i]:     # R_i = R_p, V_i = V_p (v_J = 0), and mostly no inertia
                empty = massless(kd, i)
                for l in range(m):
                    Ri, ri, Ji = aligned_in_parent(get9(P, l), S)
                    put_body(Rw[i], r[i], J[i], V[i], C[i], IA[i], pA[i], l, Ri, ri, Ji, get6(P[9:], l), QD[i, l],
                             I, empty)
            else:
                for l in range(m):
                    Ri, ri, Ji = aligned(get9(P, l), get12(T, l), S)
                    qdi = QD[i, l]
                    if one_dof:
                        vJ = (Ji[0] * qdi, Ji[1] * qdi, Ji[2] * qdi, Ji[3] * qdi, Ji[4] * qdi, Ji[5] * qdi)
                    else:
                        vJ = rotate6(Ri, get6(VJ, l))
                    w0, w1, w2, v0, v1, v2 = translate_twist(ri, get6(P[9:], l))     # V_i = X_i V_p + J_i qd_i
                    Vi = (w0 + vJ[0], w1 + vJ[1], w2 + vJ[2], v0 + vJ[3], v1 + vJ[4], v2 + vJ[5])
                    put_body(Rw[i], r[i], J[i], V[i], C[i], IA[i], pA[i], l, Ri, ri, Ji, Vi, qdi, I, False)
            if use_fext:                                                         # pA_i -= R_i F_ext_i
                for l in range(m):
                    e0, e1, e2, e3, e4, e5 = rotate6(get9(Rw[i], l), get6(FE[i], l))
                    add(pA[i], l, (-e0, -e1, -e2, -e3, -e4, -e5))

        # Pass 2: articulated inertias and bias wrenches, tips to base.
        for i in range(n - 1, -1, -1):
            par = int(kd[i, PARENT])
            arm = kd[i, ARMAT]
            c = 3 * screw_half(kd, i)     # J_i's nonzero half: 0 (a rotation) or 3 (a translation)
            if c == 0:
                for l in range(m):
                    Ui, D[i, l], u[i, l] = joint_pivot(get21(IA[i], l), get6(J[i], l), get6(pA[i], l), TAU[i, l], arm, 0)
                    put(U[i], l, Ui)
            else:
                for l in range(m):
                    Ui, D[i, l], u[i, l] = joint_pivot(get21(IA[i], l), get6(J[i], l), get6(pA[i], l), TAU[i, l], arm, 3)
                    put(U[i], l, Ui)
            for l in range(m):
                d = D[i, l]
                if not d > 0.0 and bad[l] == 0:   # (NaN: the numbers overflowed)
                    bad[l] = Status.SINGULAR if d <= 0.0 else Status.OVERFLOW
            if par < 0:
                continue
            for l in range(m):
                Ia, pa = articulate(get21(IA[i], l), get6(U[i], l), D[i, l], u[i, l], get6(pA[i], l), get6(C[i], l))
                put(G, l, Ia)
                put(H, l, pa)
            if E[i]:
                for l in range(m):
                    add(IA[par], l, get21(G, l))
                    add(pA[par], l, get6(H, l))
            else:
                for l in range(m):                                               # IA_p += X^T Ia X, pA_p += X^T pa
                    ri = get3(r[i], l)
                    add(IA[par], l, articulated_shift(ri, get21(G, l)))
                    add(pA[par], l, translate_wrench(ri, get6(H, l)))

        # Pass 3: accelerations, base to tips (row n of V: a_0 = (0, -g)).
        for l in range(m):
            put(V[n], l, (0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1], -kd[n, GRAVITY + 2]))
        for i in range(n):
            copy_lanes(V[int(kd[i, PARENT])], P, m)
            inner = E[i] == 1
            for l in range(m):
                h = get6(P, l) if inner else translate_twist(get3(r[i], l), get6(P, l))      # X_i a_p
                QDD[i, l], ai = joint_acceleration(h, get6(C[i], l), get6(U[i], l), u[i, l], D[i, l], get6(J[i], l))
                put(V[i], l, ai)
        store(QDD, b, m, qdd, status, bad)


@njit(**ONE)
def aba_one(kd, q, qd, tau, fext, use_fext, qdd):
    """One state: :func:`aba` on it as a batch of one (see :func:`.rnea.rnea_one`)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    if not (is_vector(q, nq) and is_vector(qd, n) and is_vector(tau, n) and qdd.shape[0] == n
            and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    aba(kd, row(q), row(qd), row(tau), window(fext, 0, (1, fext.shape[0], 6)), use_fext, window(qdd, 0, (1, n)),
        status, 0, 1, 1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status, lanes):
    """States ``(B, n)`` over numba's threads, as :func:`.rnea.rnea_batch`."""
    B, n, nq = q.shape[0], kd.shape[0] - 1, q_size(kd)
    if not (is_rows(q, B, nq) and is_rows(qd, B, n) and is_rows(tau, B, n) and is_rows(qdd, B, n)
            and status.shape[0] == B and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            aba(kd, q, qd, tau, fext, use_fext, qdd, status, start, end, lanes)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"aba": Entry("forward dynamics", aba_one, aba_batch, ("q", "qd", "tau"), (1,), per_lane, LANES,
                        fext=True)}
