"""Articulated-Body Algorithm: forward dynamics ``qdd = FD(q, qd, tau, F_ext)`` in ``O(n)``
(Featherstone's ``FDab``, in the notation of note 000 and :mod:`.rnea`).

Each body's quantities are expressed in a world-aligned frame at its origin: frame ``{i}``
sits at ``p_i`` with the axes of ``{0}`` (``T_{0,i} = (R_i, p_i)``, offset
``r_i = p_i - p_p(i) = R_p(i) p_{p(i),i}``, computed as such). Rotations are then applied once
per body (to ``S_i`` and ``G_i``), and a quantity moves between neighbours by the pure
translation ``X_i = [[1, 0], [-[r_i], 1]]`` (``X_i V = (w, v + w x r_i)``), far cheaper than a
full ``[Ad]``, while all lever arms stay body-sized (as accurate as the body-frame form; a single
world origin would lose digits on small distal bodies).

Pass 1, forward, ``i = 0 .. n-1`` (base ``V = 0``)::

    J_i  = (R_i s_w, R_i s_v)  for  S_i = (s_w, s_v)        S_i in world axes
    V_i  = X_i V_p + J_i qd_i
    c_i  = [ad_{V_i}] J_i qd_i                              velocity-product acceleration
    IA_i = Y_i = G_i in world axes,    pA_i = -[ad_{V_i}]^T Y_i V_i - F_ext_i (world axes)

Pass 2, backward, ``i = n-1 .. 0``::

    U_i = IA_i J_i,    D_i = J_i^T U_i + armature_i,    u_i = tau_i - J_i^T pA_i
    Ia  = IA_i - U_i U_i^T / D_i,    pa = pA_i + Ia c_i + U_i u_i / D_i
    IA_p(i) += X_i^T Ia X_i,         pA_p(i) += X_i^T pa = (n + r_i x f, f)

Pass 3, forward, ``i = 0 .. n-1`` (base acceleration ``a_0 = (0, -g)``: gravity)::

    a'     = X_i a_p + c_i
    qdd_i  = (u_i - U_i^T a') / D_i
    a_i    = a' + J_i qdd_i

(the body-frame recursion conjugated by the rotations ``R_i``, which commute with ``ad``).
The armature (reflected rotor inertia ``n_r^2 I_m``) enters only ``D_i``, as in Pinocchio's ``aba``.

A batch runs ``LANES`` states side by side (:func:`aba_lanes`): the same arithmetic, each step
for all lanes in one loop that the compiler vectorises, bit for bit the single state's result.
``F_ext_i`` is the wrench ``(n, f)`` on body ``i`` in body ``i``'s frame, as in :mod:`.rnea`.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import (inertia10_apply6, inertia10_rotate, inertia10_to_matrix, inertia_apply, inertia_rotate,
                              matrix6_shift, matrix6_shift_add)
from .layout import ARMAT, GRAVITY, MASS, PARENT
from .rnea import NO_FEXT, lanes_in, nonfinite_code
from .joints import joint_poses_lanes, joint_screw, joint_sincos_lanes
from .spatial_kernels import aligned, aligned_body, wrench_to_parent6v
from .work import (
    NO_NRT, NOT_FAST, STACK_LIMIT, block2, block3, claim, claim_size, contiguous, fits_stack, rows_of,
    scratch, stack2, stack3, stack_scratch, thread_chunks, unit_stride, work_size,
)


@njit(cache=True, inline="always")
def aba_state(kd, q, qd, tau, fext, use_fext, qdd, R, p, J, V, c, IA, pA, U, D, u, Y, h):
    """One state: writes ``qdd (n,)``. Returns 0, or 5 when some ``D_i <= 0`` (a singular mass
    matrix: a joint that moves no inertia). Work arrays: ``R (n+2,3,3)``, ``p (n+2,3)``: ``R_i``
    and ``r_i`` (row ``n+1 = -1``: the base; row ``n`` unused), ``J (n+1,6)`` (row ``n`` unused),
    ``V (n+1,6)`` (base last; reused for ``a`` in pass 3), ``c, pA, U (n,6)``,
    ``IA (n,6,6)``, ``D, u (n,)``, ``Y (1, 10)``, ``h (6,)``."""
    n = kd.shape[0] - 1
    for a in range(3):
        for b in range(3):
            R[n + 1, a, b] = 1.0 if a == b else 0.0
        p[n + 1, a] = 0.0
    for k in range(6):
        V[n, k] = 0.0

    # Pass 1: poses, twists, velocity-product accelerations, inertias and bias wrenches.
    for i in range(n):
        par = int(kd[i, PARENT])                                 # -1: the base, row n + 1
        Rt = aligned_body(kd, i, q[i], par, R, p, J)   # R_i = R_p R_pi, r_i = R_p p_pi, J_i
        r0, r1, r2 = p[i, 0], p[i, 1], p[i, 2]
        qdi = qd[i]
        J0, J1, J2, J3, J4, J5 = J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5]
        wp0, wp1, wp2 = V[par, 0], V[par, 1], V[par, 2]
        w0 = wp0 + J0 * qdi                                      # V_i = X_i V_p + J_i qd_i = (w, v)
        w1 = wp1 + J1 * qdi
        w2 = wp2 + J2 * qdi
        v0 = V[par, 3] + (wp1 * r2 - wp2 * r1) + J3 * qdi
        v1 = V[par, 4] + (wp2 * r0 - wp0 * r2) + J4 * qdi
        v2 = V[par, 5] + (wp0 * r1 - wp1 * r0) + J5 * qdi
        V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5] = w0, w1, w2, v0, v1, v2
        # c_i = [ad_V_i] J_i qd_i = qd_i (w x J_w, v x J_w + w x J_v)
        c[i, 0] = qdi * (w1 * J2 - w2 * J1)
        c[i, 1] = qdi * (w2 * J0 - w0 * J2)
        c[i, 2] = qdi * (w0 * J1 - w1 * J0)
        c[i, 3] = qdi * ((v1 * J2 - v2 * J1) + (w1 * J5 - w2 * J4))
        c[i, 4] = qdi * ((v2 * J0 - v0 * J2) + (w2 * J3 - w0 * J5))
        c[i, 5] = qdi * ((v0 * J1 - v1 * J0) + (w0 * J4 - w1 * J3))
        inertia10_rotate(Rt, kd, i, MASS, Y, 0)                  # Y_i: G_i rotated by R_i
        inertia10_to_matrix(Y[0], IA[i])                            # IA_i = Y_i
        hn0, hn1, hn2, hf0, hf1, hf2 = inertia10_apply6(Y, 0, 0, w0, w1, w2, v0, v1, v2)  # h = Y_i V_i
        # pA_i = -[ad_V_i]^T h = (w x h_n + v x h_f, w x h_f)
        pA[i, 0] = (w1 * hn2 - w2 * hn1) + (v1 * hf2 - v2 * hf1)
        pA[i, 1] = (w2 * hn0 - w0 * hn2) + (v2 * hf0 - v0 * hf2)
        pA[i, 2] = (w0 * hn1 - w1 * hn0) + (v0 * hf1 - v1 * hf0)
        pA[i, 3] = w1 * hf2 - w2 * hf1
        pA[i, 4] = w2 * hf0 - w0 * hf2
        pA[i, 5] = w0 * hf1 - w1 * hf0
        if use_fext:                                             # ... - F_ext_i in world axes
            e0, e1, e2, e3, e4, e5 = wrench_to_parent6v(Rt + (0.0, 0.0, 0.0), fext[i, 0], fext[i, 1], fext[i, 2],
                                                        fext[i, 3], fext[i, 4], fext[i, 5])
            pA[i, 0] -= e0
            pA[i, 1] -= e1
            pA[i, 2] -= e2
            pA[i, 3] -= e3
            pA[i, 4] -= e4
            pA[i, 5] -= e5

    # Pass 2: articulated inertias and bias wrenches, tips to base.
    for i in range(n - 1, -1, -1):
        J0, J1, J2, J3, J4, J5 = J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5]
        for k in range(6):                                       # U_i = IA_i J_i
            U[i, k] = (IA[i, k, 0] * J0 + IA[i, k, 1] * J1 + IA[i, k, 2] * J2
                       + IA[i, k, 3] * J3 + IA[i, k, 4] * J4 + IA[i, k, 5] * J5)
        d = kd[i, ARMAT] + (J0 * U[i, 0] + J1 * U[i, 1] + J2 * U[i, 2]
                            + J3 * U[i, 3] + J4 * U[i, 4] + J5 * U[i, 5])
        uu = tau[i] - (J0 * pA[i, 0] + J1 * pA[i, 1] + J2 * pA[i, 2]
                       + J3 * pA[i, 3] + J4 * pA[i, 4] + J5 * pA[i, 5])
        if not d > 0.0:                                          # D_i = J^T U + armature
            return 5
        D[i] = d
        u[i] = uu                                                # u_i = tau_i - J^T pA_i
        par = int(kd[i, PARENT])
        if par >= 0:
            inv_d = 1.0 / d
            ud = uu * inv_d
            for k in range(6):                                   # pa = pA + U u / D + Ia c
                h[k] = pA[i, k] + U[i, k] * ud
            for k in range(6):                                   # Ia = IA - U U^T / D in place
                Uk = U[i, k] * inv_d                             # (upper triangle: Ia symmetric)
                ck = c[i, k]
                ia = IA[i, k, k] - Uk * U[i, k]
                IA[i, k, k] = ia
                s = h[k] + ia * ck
                for l in range(k + 1, 6):
                    ia = IA[i, k, l] - Uk * U[i, l]
                    IA[i, k, l] = ia
                    s += ia * c[i, l]
                    h[l] += ia * ck
                h[k] = s
            r0, r1, r2 = p[i, 0], p[i, 1], p[i, 2]
            matrix6_shift_add(r0, r1, r2, IA[i], IA[par])        # IA_p += X^T Ia X
            pA[par, 0] += h[0] + (r1 * h[5] - r2 * h[4])         # pA_p += (n + r x f, f)
            pA[par, 1] += h[1] + (r2 * h[3] - r0 * h[5])
            pA[par, 2] += h[2] + (r0 * h[4] - r1 * h[3])
            pA[par, 3] += h[3]
            pA[par, 4] += h[4]
            pA[par, 5] += h[5]

    # Pass 3: accelerations, base to tips; V is reused for a_i (row n: a_0 = (0, -g)).
    for k in range(3):
        V[n, k] = 0.0
        V[n, 3 + k] = -kd[n, GRAVITY + k]
    for i in range(n):
        par = int(kd[i, PARENT])
        r0, r1, r2 = p[i, 0], p[i, 1], p[i, 2]
        ap0, ap1, ap2 = V[par, 0], V[par, 1], V[par, 2]
        h[0] = ap0 + c[i, 0]                                     # a' = X_i a_p + c_i
        h[1] = ap1 + c[i, 1]
        h[2] = ap2 + c[i, 2]
        h[3] = V[par, 3] + (ap1 * r2 - ap2 * r1) + c[i, 3]
        h[4] = V[par, 4] + (ap2 * r0 - ap0 * r2) + c[i, 4]
        h[5] = V[par, 5] + (ap0 * r1 - ap1 * r0) + c[i, 5]
        s = u[i]
        for k in range(6):
            s -= U[i, k] * h[k]
        qddi = s / D[i]                                          # qdd_i = (u_i - U^T a') / D_i
        qdd[i] = qddi
        for k in range(6):
            V[i, k] = h[k] + J[i, k] * qddi                      # a_i = a' + J_i qdd_i
    return 0


@njit(cache=True, inline="always")
def _carve(w, n):
    """Carve the work arrays of one state out of the buffer ``w``."""
    o = 0
    R = block3(w, o, n + 2, 3, 3)
    o += 9 * (n + 2)
    p = block2(w, o, n + 2, 3)
    o += 3 * (n + 2)
    J = block2(w, o, n + 1, 6)
    o += 6 * (n + 1)
    V = block2(w, o, n + 1, 6)
    o += 6 * (n + 1)
    c = block2(w, o, n, 6)
    o += 6 * n
    IA = block3(w, o, n, 6, 6)
    o += 36 * n
    pA = block2(w, o, n, 6)
    o += 6 * n
    U = block2(w, o, n, 6)
    o += 6 * n
    D = w[o: o + n]
    o += n
    u = w[o: o + n]
    o += n
    Y = block2(w, o, 1, 10)
    o += 10
    h = w[o: o + 6]
    return R, p, J, V, c, IA, pA, U, D, u, Y, h


@njit(cache=True)
def _work(n):
    """Work arrays for one state in a fresh buffer (one per chunk of a batch)."""
    return _carve(np.empty(work_size(n)), n)


@njit(cache=True)
def aba(kd, q, qd, tau, qdd):
    """One state without external wrenches. Returns 0; 1/2/3 when q/qd/tau holds a NaN or inf
    (``qdd`` untouched); 5 for a singular mass matrix; NOT_FAST for a strided input."""
    return _one_state(kd, q, qd, tau, NO_FEXT, False, qdd, scratch(kd.shape[0] - 1))


@njit(cache=True, **NO_NRT)
def aba_fast(kd, q, qd, tau, qdd):
    """:func:`aba` compiled without numba's runtime, for ``dynamics``' fast paths (see
    :data:`.work.NO_NRT`): the same, but NOT_FAST for a model whose work does not fit the stack."""
    n = kd.shape[0] - 1
    if not fits_stack(n):
        return NOT_FAST
    return _one_state(kd, q, qd, tau, NO_FEXT, False, qdd, stack_scratch(n))


@njit(cache=True)
def aba_fext(kd, q, qd, tau, fext, qdd, use_fext=True):
    """One state with external wrenches ``fext (n, 6)``; returns as :func:`aba`, or 4 for a bad fext."""
    return _one_state(kd, q, qd, tau, fext, use_fext, qdd, scratch(kd.shape[0] - 1))


@njit(cache=True, inline="always")
def _one_state(kd, q, qd, tau, fext, use_fext, qdd, w):
    """The body of :func:`aba`, :func:`aba_fast` and :func:`aba_fext`, inlined into each (a call
    between compiled functions costs a reference count per array), with the work buffer ``w`` the
    caller made (on its stack, or on the heap for a very large model). NOT_FAST for a wrong length
    or a strided ``q``, ``qd``, ``tau``."""
    n = kd.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n or (use_fext and fext.shape[0] != n):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    if not (unit_stride(q) and unit_stride(qd) and unit_stride(tau)):
        return NOT_FAST
    q, qd, tau = contiguous(q), contiguous(qd), contiguous(tau)
    code = nonfinite_code(q, qd, tau, fext, use_fext)
    if code:
        return code
    R, p, J, V, c, IA, pA, U, D, u, Y, h = _carve(w, n)
    return aba_state(kd, q, qd, tau, fext, use_fext, qdd, R, p, J, V, c, IA, pA, U, D, u, Y, h)


# States per group in a batch: :func:`aba_lanes` runs this many side by side (16: Talos' 44 bodies
# keep their work arrays on the stack).
LANES = 16


@njit(cache=True, inline="always")
def lanes_fit(n):
    """Whether :func:`aba_lanes`' work arrays for ``n`` bodies fit on the stack (up to 61 bodies);
    larger models run one state at a time."""
    return LANES * (65 * n + 80) <= STACK_LIMIT


@njit(cache=True, inline="always")
def _ut(k, j):
    """Where entry ``(k, j)`` of a symmetric 6x6 matrix sits in its upper triangle, stored row by
    row in 21 numbers."""
    if k > j:
        k, j = j, k
    return 6 * k - (k * (k - 1)) // 2 + (j - k)


@njit(cache=True, error_model="numpy")   # a lane with D_i = 0 divides by it: inf, flagged in bad
def aba_lanes(kd, q, qd, tau, fext, use_fext, qdd, bad, m):
    """States side by side, as :func:`.rnea.rnea_lanes`: lane ``l < m`` of ``q, qd, tau, qdd
    (n, LANES)`` and ``fext (n, 6, LANES)`` is one state; ``bad[l]`` counts the joints where
    ``D_i <= 0`` (a singular mass matrix; that lane's ``qdd`` is then meaningless). The
    arithmetic of :func:`aba_state`, each step done for all lanes in one loop that reads some
    work arrays and writes others (each a stack allocation of its own, :func:`.work.stack3`), so
    that the compiler vectorises it. The symmetric ``IA_i`` keep their upper triangles only
    (:func:`_ut`). Results equal :func:`aba_state`'s bit for bit."""
    n = kd.shape[0] - 1
    L = LANES
    Rw = stack3(n + 2, 9, L)     # R_i; row n + 1: the base (identity); row n unused
    r = stack3(n, 3, L)          # r_i = R_p p_{p,i}
    J = stack3(n, 6, L)
    V = stack3(n + 1, 6, L)      # V_i, then a_i in pass 3; row n: the base
    C = stack3(n, 6, L)          # c_i
    IA = stack3(n, 21, L)
    pA = stack3(n, 6, L)
    U = stack3(n, 6, L)
    D = stack2(n, L)
    u = stack2(n, L)
    P = stack2(15, L)            # the parent's R (0:9) and V (9:15); its a (0:6) in pass 3
    T = stack2(12, L)            # T_{p,i}
    SC = stack2(2, L)            # sin and cos of the joint angle
    G = stack2(21, L)            # Ia of the child
    H = stack2(6, L)             # pa of the child
    for l in range(m):
        for c in range(9):
            Rw[n + 1, c, l] = 1.0 if c % 4 == 0 else 0.0
        for c in range(6):
            V[n, c, l] = 0.0
        bad[l] = 0

    # Pass 1: poses, twists, velocity-product accelerations, inertias and bias wrenches.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_sincos_lanes(kd, i, q, SC, m)
        joint_poses_lanes(kd, i, q, SC, T, m)
        for l in range(m):
            for c in range(9):
                P[c, l] = Rw[par, c, l]
            for c in range(6):
                P[9 + c, l] = V[par, c, l]
        S = joint_screw(kd, i)
        k0, k1, k2, k3, k4 = kd[i, MASS], kd[i, MASS + 1], kd[i, MASS + 2], kd[i, MASS + 3], kd[i, MASS + 4]
        k5, k6, k7, k8, k9 = kd[i, MASS + 5], kd[i, MASS + 6], kd[i, MASS + 7], kd[i, MASS + 8], kd[i, MASS + 9]
        for l in range(m):
            (c00, c01, c02, c10, c11, c12, c20, c21, c22, r0, r1, r2, J0, J1, J2, J3, J4, J5) = aligned(
                P[0, l], P[1, l], P[2, l], P[3, l], P[4, l], P[5, l], P[6, l], P[7, l], P[8, l],
                (T[0, l], T[1, l], T[2, l], T[3, l], T[4, l], T[5, l], T[6, l], T[7, l], T[8, l], T[9, l],
                 T[10, l], T[11, l]), S)
            Rw[i, 0, l], Rw[i, 1, l], Rw[i, 2, l], Rw[i, 3, l], Rw[i, 4, l] = c00, c01, c02, c10, c11
            Rw[i, 5, l], Rw[i, 6, l], Rw[i, 7, l], Rw[i, 8, l] = c12, c20, c21, c22
            r[i, 0, l], r[i, 1, l], r[i, 2, l] = r0, r1, r2
            J[i, 0, l], J[i, 1, l], J[i, 2, l], J[i, 3, l], J[i, 4, l], J[i, 5, l] = J0, J1, J2, J3, J4, J5
            qdi = qd[i, l]
            wp0, wp1, wp2 = P[9, l], P[10, l], P[11, l]
            w0 = wp0 + J0 * qdi
            w1 = wp1 + J1 * qdi
            w2 = wp2 + J2 * qdi
            v0 = P[12, l] + (wp1 * r2 - wp2 * r1) + J3 * qdi
            v1 = P[13, l] + (wp2 * r0 - wp0 * r2) + J4 * qdi
            v2 = P[14, l] + (wp0 * r1 - wp1 * r0) + J5 * qdi
            V[i, 0, l], V[i, 1, l], V[i, 2, l], V[i, 3, l], V[i, 4, l], V[i, 5, l] = w0, w1, w2, v0, v1, v2
            C[i, 0, l] = qdi * (w1 * J2 - w2 * J1)
            C[i, 1, l] = qdi * (w2 * J0 - w0 * J2)
            C[i, 2, l] = qdi * (w0 * J1 - w1 * J0)
            C[i, 3, l] = qdi * ((v1 * J2 - v2 * J1) + (w1 * J5 - w2 * J4))
            C[i, 4, l] = qdi * ((v2 * J0 - v0 * J2) + (w2 * J3 - w0 * J5))
            C[i, 5, l] = qdi * ((v0 * J1 - v1 * J0) + (w0 * J4 - w1 * J3))
            ym, y0, y1, y2, yxx, yxy, yxz, yyy, yyz, yzz = inertia_rotate(
                c00, c01, c02, c10, c11, c12, c20, c21, c22, k0, k1, k2, k3, k4, k5, k6, k7, k8, k9)
            # IA_i = Y_i = [[I_o, [h]], [[h]^T, m 1]] (upper triangle)
            IA[i, 0, l], IA[i, 1, l], IA[i, 2, l], IA[i, 3, l], IA[i, 4, l], IA[i, 5, l] = yxx, yxy, yxz, 0.0, -y2, y1
            IA[i, 6, l], IA[i, 7, l], IA[i, 8, l], IA[i, 9, l], IA[i, 10, l] = yyy, yyz, y2, 0.0, -y0
            IA[i, 11, l], IA[i, 12, l], IA[i, 13, l], IA[i, 14, l] = yzz, -y1, y0, 0.0
            IA[i, 15, l], IA[i, 16, l], IA[i, 17, l], IA[i, 18, l], IA[i, 19, l], IA[i, 20, l] = ym, 0.0, 0.0, ym, 0.0, ym
            hn0, hn1, hn2, hf0, hf1, hf2 = inertia_apply(ym, y0, y1, y2, yxx, yxy, yxz, yyy, yyz, yzz,
                                                         w0, w1, w2, v0, v1, v2)
            pA[i, 0, l] = (w1 * hn2 - w2 * hn1) + (v1 * hf2 - v2 * hf1)
            pA[i, 1, l] = (w2 * hn0 - w0 * hn2) + (v2 * hf0 - v0 * hf2)
            pA[i, 2, l] = (w0 * hn1 - w1 * hn0) + (v0 * hf1 - v1 * hf0)
            pA[i, 3, l] = w1 * hf2 - w2 * hf1
            pA[i, 4, l] = w2 * hf0 - w0 * hf2
            pA[i, 5, l] = w0 * hf1 - w1 * hf0
        if use_fext:
            for l in range(m):
                e0, e1, e2, e3, e4, e5 = wrench_to_parent6v(
                    (Rw[i, 0, l], Rw[i, 1, l], Rw[i, 2, l], Rw[i, 3, l], Rw[i, 4, l], Rw[i, 5, l], Rw[i, 6, l],
                     Rw[i, 7, l], Rw[i, 8, l], 0.0, 0.0, 0.0),
                    fext[i, 0, l], fext[i, 1, l], fext[i, 2, l], fext[i, 3, l], fext[i, 4, l], fext[i, 5, l])
                pA[i, 0, l] -= e0
                pA[i, 1, l] -= e1
                pA[i, 2, l] -= e2
                pA[i, 3, l] -= e3
                pA[i, 4, l] -= e4
                pA[i, 5, l] -= e5

    # Pass 2: articulated inertias and bias wrenches, tips to base.
    for i in range(n - 1, -1, -1):
        par = int(kd[i, PARENT])
        arm = kd[i, ARMAT]
        for k in range(6):                                       # U_i = IA_i J_i
            a0, a1, a2, a3, a4, a5 = _ut(k, 0), _ut(k, 1), _ut(k, 2), _ut(k, 3), _ut(k, 4), _ut(k, 5)
            for l in range(m):
                U[i, k, l] = (IA[i, a0, l] * J[i, 0, l] + IA[i, a1, l] * J[i, 1, l] + IA[i, a2, l] * J[i, 2, l]
                              + IA[i, a3, l] * J[i, 3, l] + IA[i, a4, l] * J[i, 4, l] + IA[i, a5, l] * J[i, 5, l])
        for l in range(m):
            J0, J1, J2, J3, J4, J5 = J[i, 0, l], J[i, 1, l], J[i, 2, l], J[i, 3, l], J[i, 4, l], J[i, 5, l]
            d = arm + (J0 * U[i, 0, l] + J1 * U[i, 1, l] + J2 * U[i, 2, l]
                       + J3 * U[i, 3, l] + J4 * U[i, 4, l] + J5 * U[i, 5, l])
            D[i, l] = d
            u[i, l] = tau[i, l] - (J0 * pA[i, 0, l] + J1 * pA[i, 1, l] + J2 * pA[i, 2, l]
                                   + J3 * pA[i, 3, l] + J4 * pA[i, 4, l] + J5 * pA[i, 5, l])
            bad[l] += 0 if d > 0.0 else 1
        if par < 0:
            continue
        # Ia = IA - U U^T / D and pa = pA + U u / D + Ia c, all 27 numbers in one loop over the lanes:
        # with a loop per entry the whole batch took 1.3-1.4x as long (UR5, panda, Talos; one thread).
        # U above keeps a loop per row: in one loop it took 10 % longer.
        for l in range(m):
            inv_d = 1.0 / D[i, l]
            ud = u[i, l] * inv_d
            U0, U1, U2, U3, U4, U5 = U[i, 0, l], U[i, 1, l], U[i, 2, l], U[i, 3, l], U[i, 4, l], U[i, 5, l]
            W0, W1, W2, W3, W4, W5 = U0 * inv_d, U1 * inv_d, U2 * inv_d, U3 * inv_d, U4 * inv_d, U5 * inv_d
            g00 = IA[i, 0, l] - W0 * U0
            g01 = IA[i, 1, l] - W0 * U1
            g02 = IA[i, 2, l] - W0 * U2
            g03 = IA[i, 3, l] - W0 * U3
            g04 = IA[i, 4, l] - W0 * U4
            g05 = IA[i, 5, l] - W0 * U5
            g11 = IA[i, 6, l] - W1 * U1
            g12 = IA[i, 7, l] - W1 * U2
            g13 = IA[i, 8, l] - W1 * U3
            g14 = IA[i, 9, l] - W1 * U4
            g15 = IA[i, 10, l] - W1 * U5
            g22 = IA[i, 11, l] - W2 * U2
            g23 = IA[i, 12, l] - W2 * U3
            g24 = IA[i, 13, l] - W2 * U4
            g25 = IA[i, 14, l] - W2 * U5
            g33 = IA[i, 15, l] - W3 * U3
            g34 = IA[i, 16, l] - W3 * U4
            g35 = IA[i, 17, l] - W3 * U5
            g44 = IA[i, 18, l] - W4 * U4
            g45 = IA[i, 19, l] - W4 * U5
            g55 = IA[i, 20, l] - W5 * U5
            G[0, l], G[1, l], G[2, l], G[3, l], G[4, l], G[5, l] = g00, g01, g02, g03, g04, g05
            G[6, l], G[7, l], G[8, l], G[9, l], G[10, l] = g11, g12, g13, g14, g15
            G[11, l], G[12, l], G[13, l], G[14, l] = g22, g23, g24, g25
            G[15, l], G[16, l], G[17, l] = g33, g34, g35
            G[18, l], G[19, l] = g44, g45
            G[20, l] = g55
            c0, c1, c2, c3, c4, c5 = C[i, 0, l], C[i, 1, l], C[i, 2, l], C[i, 3, l], C[i, 4, l], C[i, 5, l]
            H[0, l] = pA[i, 0, l] + U0 * ud + g00 * c0 + g01 * c1 + g02 * c2 + g03 * c3 + g04 * c4 + g05 * c5
            H[1, l] = pA[i, 1, l] + U1 * ud + g01 * c0 + g11 * c1 + g12 * c2 + g13 * c3 + g14 * c4 + g15 * c5
            H[2, l] = pA[i, 2, l] + U2 * ud + g02 * c0 + g12 * c1 + g22 * c2 + g23 * c3 + g24 * c4 + g25 * c5
            H[3, l] = pA[i, 3, l] + U3 * ud + g03 * c0 + g13 * c1 + g23 * c2 + g33 * c3 + g34 * c4 + g35 * c5
            H[4, l] = pA[i, 4, l] + U4 * ud + g04 * c0 + g14 * c1 + g24 * c2 + g34 * c3 + g44 * c4 + g45 * c5
            H[5, l] = pA[i, 5, l] + U5 * ud + g05 * c0 + g15 * c1 + g25 * c2 + g35 * c3 + g45 * c4 + g55 * c5
        for l in range(m):                                       # IA_p += X^T Ia X, pA_p += X^T pa
            r0, r1, r2 = r[i, 0, l], r[i, 1, l], r[i, 2, l]
            (A00, A01, A02, A11, A12, A22, D00, D01, D02, D10, D11, D12, D20, D21, D22,
             C00, C01, C02, C11, C12, C22) = matrix6_shift(
                r0, r1, r2, G[0, l], G[1, l], G[2, l], G[6, l], G[7, l], G[11, l], G[3, l], G[4, l], G[5, l],
                G[8, l], G[9, l], G[10, l], G[12, l], G[13, l], G[14, l],
                G[15, l], G[16, l], G[17, l], G[18, l], G[19, l], G[20, l])
            IA[par, 0, l] += A00
            IA[par, 1, l] += A01
            IA[par, 2, l] += A02
            IA[par, 3, l] += D00
            IA[par, 4, l] += D01
            IA[par, 5, l] += D02
            IA[par, 6, l] += A11
            IA[par, 7, l] += A12
            IA[par, 8, l] += D10
            IA[par, 9, l] += D11
            IA[par, 10, l] += D12
            IA[par, 11, l] += A22
            IA[par, 12, l] += D20
            IA[par, 13, l] += D21
            IA[par, 14, l] += D22
            IA[par, 15, l] += C00
            IA[par, 16, l] += C01
            IA[par, 17, l] += C02
            IA[par, 18, l] += C11
            IA[par, 19, l] += C12
            IA[par, 20, l] += C22
            h0, h1, h2, h3, h4, h5 = H[0, l], H[1, l], H[2, l], H[3, l], H[4, l], H[5, l]
            pA[par, 0, l] += h0 + (r1 * h5 - r2 * h4)
            pA[par, 1, l] += h1 + (r2 * h3 - r0 * h5)
            pA[par, 2, l] += h2 + (r0 * h4 - r1 * h3)
            pA[par, 3, l] += h3
            pA[par, 4, l] += h4
            pA[par, 5, l] += h5

    # Pass 3: accelerations, base to tips (row n of V: a_0 = (0, -g)).
    for l in range(m):
        for c in range(3):
            V[n, c, l] = 0.0
            V[n, 3 + c, l] = -kd[n, GRAVITY + c]
    for i in range(n):
        par = int(kd[i, PARENT])
        for l in range(m):
            for c in range(6):
                P[c, l] = V[par, c, l]
        for l in range(m):
            r0, r1, r2 = r[i, 0, l], r[i, 1, l], r[i, 2, l]
            ap0, ap1, ap2 = P[0, l], P[1, l], P[2, l]
            h0 = ap0 + C[i, 0, l]                                # a' = X_i a_p + c_i
            h1 = ap1 + C[i, 1, l]
            h2 = ap2 + C[i, 2, l]
            h3 = P[3, l] + (ap1 * r2 - ap2 * r1) + C[i, 3, l]
            h4 = P[4, l] + (ap2 * r0 - ap0 * r2) + C[i, 4, l]
            h5 = P[5, l] + (ap0 * r1 - ap1 * r0) + C[i, 5, l]
            s = u[i, l]
            s -= U[i, 0, l] * h0
            s -= U[i, 1, l] * h1
            s -= U[i, 2, l] * h2
            s -= U[i, 3, l] * h3
            s -= U[i, 4, l] * h4
            s -= U[i, 5, l] * h5
            qddi = s / D[i, l]                                   # qdd_i = (u_i - U^T a') / D_i
            qdd[i, l] = qddi
            V[i, 0, l] = h0 + J[i, 0, l] * qddi                  # a_i = a' + J_i qdd_i
            V[i, 1, l] = h1 + J[i, 1, l] * qddi
            V[i, 2, l] = h2 + J[i, 2, l] * qddi
            V[i, 3, l] = h3 + J[i, 3, l] * qddi
            V[i, 4, l] = h4 + J[i, 4, l] * qddi
            V[i, 5, l] = h5 + J[i, 5, l] * qddi


@njit(cache=True)
def _lane_io(n):
    """One chunk's states in lanes: ``q, qd, tau, qdd (n, LANES)``, ``fext (n, 6, LANES)``, the
    flags ``bad (LANES,)`` and ``acc (LANES,)`` for :func:`.rnea.lanes_in`, each an array of its
    own (C-contiguous)."""
    L = LANES
    return (np.empty((n, L)), np.empty((n, L)), np.empty((n, L)), np.empty((n, L)), np.empty((n, 6, L)),
            np.zeros(L, dtype=np.int64), np.empty(L))


@njit(cache=True)
def _batch_in_lanes(kd, q, qd, tau, fext, use_fext, qdd, status, claimed, size):
    """The states of a batch that this thread claims (:func:`.work.claim`), ``LANES`` at a time
    through :func:`aba_lanes`."""
    n = kd.shape[0] - 1
    ql, qdl, taul, qddl, fl, bad, acc = _lane_io(n)
    B = q.shape[0]
    while True:
        start, end = claim(claimed, B, size)
        if start >= end:
            break
        for b in range(start, end, LANES):
            m = min(LANES, end - b)
            lanes_in(q, qd, tau, fext, use_fext, b, m, ql, qdl, taul, fl, acc)
            aba_lanes(kd, ql, qdl, taul, fl, use_fext, qddl, bad, m)
            for l in range(m):
                k = b + l
                status[k] = 0 if acc[l] == 0.0 else nonfinite_code(q[k], qd[k], tau[k], fext[k] if use_fext else fext[0], use_fext)
                if status[k] == 0:
                    if bad[l]:
                        status[k] = 5
                    else:
                        for i in range(n):
                            qdd[k, i] = qddl[i, l]


@njit(cache=True)
def aba_state_call(kd, q, qd, tau, fext, use_fext, qdd, R, p, J, V, c, IA, pA, U, D, u, Y, h):
    """:func:`aba_state` as a compiled call, for the batch kernel's one-state-at-a-time route
    (inlined into a parallel loop, the state's arithmetic makes numba's parallel pass several times slower to compile)."""
    return aba_state(kd, q, qd, tau, fext, use_fext, qdd, R, p, J, V, c, IA, pA, U, D, u, Y, h)


@njit(cache=True, parallel=True)
def aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status):
    """States ``(q[k], qd[k], tau[k]) -> qdd[k]`` for ``k < B``, one work unit per numba thread
    (:func:`.work.thread_chunks`), one set of work arrays per unit. ``status[k]`` as
    :func:`aba_fext`, written for every ``k``. States go to :func:`aba_lanes` as in
    :func:`.rnea.rnea_batch`. Returns 0, or NOT_FAST as :func:`.rnea.rnea_batch`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    if not (rows_of(q, B, n) and rows_of(qd, B, n) and rows_of(tau, B, n) and rows_of(qdd, B, n)
            and status.shape[0] == B and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return NOT_FAST   # see dynamics._Entries: a fast path's entry point does not check layouts
    lanes = lanes_fit(n)
    chunks = thread_chunks(B)
    claimed = np.zeros(1, dtype=np.int64)   # the lanes drivers' shared counter (work.claim)
    size = claim_size(B, chunks, LANES)
    for ch in prange(chunks):
        if lanes:
            _batch_in_lanes(kd, q, qd, tau, fext, use_fext, qdd, status, claimed, size)
        else:
            start, end = ch * B // chunks, (ch + 1) * B // chunks
            R, p, J, V, c, IA, pA, U, D, u, Y, h = _work(n)
            for k in range(start, end):
                fk = fext[k] if use_fext else fext[0]
                status[k] = nonfinite_code(q[k], qd[k], tau[k], fk, use_fext)
                if status[k] == 0:
                    status[k] = aba_state_call(kd, q[k], qd[k], tau[k], fk, use_fext, qdd[k],
                                               R, p, J, V, c, IA, pA, U, D, u, Y, h)
    return 0
