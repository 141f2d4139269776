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
``F_ext_i`` is the wrench ``(n, f)`` on body ``i`` in body ``i``'s frame, as in :mod:`.rnea`.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_apply6, inertia10_rotate, inertia10_to_matrix, matrix6_shift_add
from .layout import ARMAT, GRAVITY, MASS, PARENT
from .rnea import NO_FEXT, nonfinite_code
from .spatial_kernels import aligned_body, wrench_to_parent
from .work import NOT_FAST, block2, block3, contiguous, scratch, unit_stride, work_size


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
    zero = p[n + 1]                                              # the base's position, 0
    for i in range(n):
        par = int(kd[i, PARENT])                                 # -1: the base, row n + 1
        Rt = aligned_body(kd, i, q[i], par, R, p, J)   # R_i = R_p R_pi, r_i = R_p p_pi, J_i
        Ri = R[i]
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
            for k in range(6):
                h[k] = 0.0
            wrench_to_parent(Ri, zero, fext[i], h)
            for k in range(6):
                pA[i, k] -= h[k]

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
    if not (unit_stride(q) and unit_stride(qd) and unit_stride(tau)):
        return NOT_FAST
    return _one_state(kd, contiguous(q), contiguous(qd), contiguous(tau), NO_FEXT, False, qdd)


@njit(cache=True)
def aba_fext(kd, q, qd, tau, fext, qdd, use_fext=True):
    """One state with external wrenches ``fext (n, 6)``; returns as :func:`aba`, or 4 for a bad fext."""
    return _one_state(kd, q, qd, tau, fext, use_fext, qdd)


@njit(cache=True, inline="always")
def _one_state(kd, q, qd, tau, fext, use_fext, qdd):
    """The body of :func:`aba` and :func:`aba_fext`, inlined into each (a call between compiled
    functions costs a reference count per array); its work buffer is on the caller's stack."""
    n = kd.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n or (use_fext and fext.shape[0] != n):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    code = nonfinite_code(q, qd, tau, fext, use_fext)
    if code:
        return code
    R, p, J, V, c, IA, pA, U, D, u, Y, h = _carve(scratch(n), n)
    return aba_state(kd, q, qd, tau, fext, use_fext, qdd, R, p, J, V, c, IA, pA, U, D, u, Y, h)


@njit(cache=True, parallel=True)
def aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status, chunks):
    """States ``(q[k], qd[k], tau[k]) -> qdd[k]`` for ``k < B``, ``chunks`` work units over numba's
    threads, one set of work arrays per chunk. ``status[k]`` as :func:`aba_fext`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for ch in prange(chunks):
        R, p, J, V, c, IA, pA, U, D, u, Y, h = _work(n)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            fk = fext[k] if use_fext else fext[0]
            status[k] = nonfinite_code(q[k], qd[k], tau[k], fk, use_fext)
            if status[k] == 0:
                status[k] = aba_state(kd, q[k], qd[k], tau[k], fk, use_fext, qdd[k],
                                      R, p, J, V, c, IA, pA, U, D, u, Y, h)
