"""Articulated-Body Algorithm: forward dynamics ``qdd = FD(q, qd, tau, F_ext)`` in ``O(n)``
(Featherstone's ``FDab``, in the notation of note 000 and :mod:`.rnea`).

Bodies as in :mod:`.rnea`: ``X_i = [Ad_{T_{i,p(i)}}]`` maps the parent's twists to body ``i``'s
frame and ``X_i^T`` maps body ``i``'s wrenches to the parent's frame.

Pass 1, forward, ``i = 0 .. n-1`` (base ``V = 0``)::

    V_i  = X_i V_p + S_i qd_i
    c_i  = [ad_{V_i}] S_i qd_i                         velocity-product acceleration
    IA_i = G_i,    pA_i = -[ad_{V_i}]^T G_i V_i - F_ext_i

Pass 2, backward, ``i = n-1 .. 0``::

    U_i = IA_i S_i,    D_i = S_i^T U_i + armature_i,    u_i = tau_i - S_i^T pA_i
    Ia  = IA_i - U_i U_i^T / D_i,    pa = pA_i + Ia c_i + U_i u_i / D_i
    IA_p(i) += X_i^T Ia X_i,         pA_p(i) += X_i^T pa

Pass 3, forward, ``i = 0 .. n-1`` (base acceleration ``a_0 = (0, -g)``: gravity)::

    a'     = X_i a_p + c_i
    qdd_i  = (u_i - U_i^T a') / D_i
    a_i    = a' + S_i qdd_i

The armature (reflected rotor inertia ``n_r^2 I_m``) enters only ``D_i``, as in Pinocchio's ``aba``.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_times, inertia10_to_matrix, matrix6_to_parent_add
from .joints import joint_transform, motion_subspace
from .layout import ARMAT, GRAVITY, MASS, PARENT
from .rnea import NO_FEXT, all_finite
from .spatial_kernels import bracket_add, coadjoint_bias_add, twist_to_child, wrench_to_parent


@njit(cache=True)
def aba_state(kd, q, qd, tau, fext, use_fext, qdd, R, p, S, V, c, IA, pA, U, D, u, W, h):
    """One state: writes ``qdd (n,)``. Returns 0, or 5 when some ``D_i <= 0`` (a singular mass
    matrix: a joint that moves no inertia). Work arrays: ``R (n,3,3)``, ``p (n,3)``, ``S, c, pA, U
    (n,6)``, ``V (n+1,6)`` (base last; reused for ``a`` in pass 3), ``IA (n,6,6)``, ``D, u (n,)``,
    ``W (4,3,3)``, ``h (6,)``."""
    n = kd.shape[0] - 1
    for k in range(6):
        V[n, k] = 0.0

    # Pass 1: twists, velocity-product accelerations, rigid-body inertias and bias wrenches.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_transform(kd, i, q[i], R[i], p[i])
        motion_subspace(kd, i, S[i])
        twist_to_child(R[i], p[i], V[par], V[i])                 # V_i = X_i V_p + S_i qd_i
        for k in range(6):
            V[i, k] += S[i, k] * qd[i]
            c[i, k] = 0.0
        bracket_add(V[i], S[i], qd[i], c[i])                     # c_i = [ad_V_i] S_i qd_i
        inertia10_to_matrix(kd[i, MASS:MASS + 10], IA[i])        # IA_i = G_i
        inertia10_times(kd[i, MASS:MASS + 10], V[i], h)          # h = G_i V_i
        for k in range(6):
            pA[i, k] = -fext[i, k] if use_fext else 0.0
        coadjoint_bias_add(V[i], h, pA[i])                       # pA_i = -ad_V^T G V - F_ext

    # Pass 2: articulated inertias and bias wrenches, tips to base.
    for i in range(n - 1, -1, -1):
        d = kd[i, ARMAT]
        uu = tau[i]
        for k in range(6):
            s = 0.0
            for l in range(6):
                s += IA[i, k, l] * S[i, l]
            U[i, k] = s                                          # U_i = IA_i S_i
            d += S[i, k] * s                                     # D_i = S^T U + armature
            uu -= S[i, k] * pA[i, k]                             # u_i = tau_i - S^T pA_i
        if not d > 0.0:
            return 5
        D[i] = d
        u[i] = uu
        par = int(kd[i, PARENT])
        if par >= 0:
            inv_d = 1.0 / d
            for k in range(6):                                   # Ia = IA - U U^T / D (in place)
                Uk = U[i, k] * inv_d
                for l in range(6):
                    IA[i, k, l] -= Uk * U[i, l]
            for k in range(6):                                   # pa = pA + Ia c + U u / D
                s = pA[i, k] + U[i, k] * uu * inv_d
                for l in range(6):
                    s += IA[i, k, l] * c[i, l]
                h[k] = s
            matrix6_to_parent_add(R[i], p[i], IA[i], IA[par], W)  # IA_p += X^T Ia X
            wrench_to_parent(R[i], p[i], h, pA[par])              # pA_p += X^T pa

    # Pass 3: accelerations, base to tips; V is reused for a_i (row n: a_0 = (0, -g)).
    for k in range(3):
        V[n, k] = 0.0
        V[n, 3 + k] = -kd[n, GRAVITY + k]
    for i in range(n):
        par = int(kd[i, PARENT])
        twist_to_child(R[i], p[i], V[par], h)                    # a' = X_i a_p + c_i
        s = u[i]
        for k in range(6):
            h[k] += c[i, k]
            s -= U[i, k] * h[k]
        qdd[i] = s / D[i]                                        # qdd_i = (u_i - U^T a') / D_i
        for k in range(6):
            V[i, k] = h[k] + S[i, k] * qdd[i]                    # a_i = a' + S_i qdd_i
    return 0


@njit(cache=True)
def _work(n):
    """Work arrays for one state, carved out of one allocation."""
    sizes = (9 * n, 3 * n, 6 * n, 6 * (n + 1), 6 * n, 36 * n, 6 * n, 6 * n, n, n, 36, 6)
    total = 0
    for s in sizes:
        total += s
    w = np.empty(total)
    o = 0
    R = w[o: o + 9 * n].reshape((n, 3, 3))
    o += 9 * n
    p = w[o: o + 3 * n].reshape((n, 3))
    o += 3 * n
    S = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    V = w[o: o + 6 * (n + 1)].reshape((n + 1, 6))
    o += 6 * (n + 1)
    c = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    IA = w[o: o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    pA = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    U = w[o: o + 6 * n].reshape((n, 6))
    o += 6 * n
    D = w[o: o + n]
    o += n
    u = w[o: o + n]
    o += n
    W = w[o: o + 36].reshape((4, 3, 3))
    o += 36
    h = w[o: o + 6]
    return R, p, S, V, c, IA, pA, U, D, u, W, h


@njit(cache=True)
def aba(kd, q, qd, tau, qdd):
    """One state without external wrenches. Returns 0; 1/2/3 when q/qd/tau holds a NaN or inf
    (``qdd`` untouched); 5 for a singular mass matrix."""
    return aba_fext(kd, q, qd, tau, NO_FEXT, qdd, False)


@njit(cache=True)
def aba_fext(kd, q, qd, tau, fext, qdd, use_fext=True):
    """One state with external wrenches ``fext (n, 6)``; returns as :func:`aba`, or 4 for a bad fext."""
    if not all_finite(q):
        return 1
    if not all_finite(qd):
        return 2
    if not all_finite(tau):
        return 3
    if use_fext and not all_finite(fext):
        return 4
    R, p, S, V, c, IA, pA, U, D, u, W, h = _work(kd.shape[0] - 1)
    return aba_state(kd, q, qd, tau, fext, use_fext, qdd, R, p, S, V, c, IA, pA, U, D, u, W, h)


@njit(cache=True, parallel=True)
def aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status, chunks):
    """States ``(q[k], qd[k], tau[k]) -> qdd[k]`` for ``k < B``, ``chunks`` work units over numba's
    threads, one set of work arrays per chunk. ``status[k]`` as :func:`aba_fext`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for ch in prange(chunks):
        R, p, S, V, c, IA, pA, U, D, u, W, h = _work(n)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            fk = fext[k] if use_fext else fext[0]
            if not all_finite(q[k]):
                status[k] = 1
            elif not all_finite(qd[k]):
                status[k] = 2
            elif not all_finite(tau[k]):
                status[k] = 3
            elif use_fext and not all_finite(fk):
                status[k] = 4
            else:
                status[k] = aba_state(kd, q[k], qd[k], tau[k], fk, use_fext, qdd[k],
                                      R, p, S, V, c, IA, pA, U, D, u, W, h)
