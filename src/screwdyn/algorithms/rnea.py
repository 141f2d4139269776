"""Recursive Newton-Euler Algorithm: inverse dynamics ``tau = ID(q, qd, qdd, F_ext)``.

Note 000 (Lie-algebra form) and note 001 (Modern Robotics), on a tree: body ``i`` has parent
``p(i) < i`` and its frame on its joint axis, so ``A_i = S_i`` (see :mod:`.joints`).

Pass 1, forward, ``i = 0 .. n-1`` (base: ``V = 0``, ``dV = (0, -g)``, gravity as base acceleration)::

    T_{p,i}  = T_{p,i}(0) exp([S_i] q_i)
    V_i      = [Ad_{T_{i,p}}] V_p  + S_i qd_i
    dV_i     = [Ad_{T_{i,p}}] dV_p + [ad_{V_i}] S_i qd_i + S_i qdd_i

Pass 2, backward, ``i = n-1 .. 0``::

    F_i     += G_i dV_i - [ad_{V_i}]^T G_i V_i - F_ext_i
    tau_i    = S_i^T F_i + armature_i qdd_i
    F_p(i)  += [Ad_{T_{i,p}}]^T F_i

``F_ext_i`` is the wrench ``(n, f)`` the environment exerts on body ``i``, in body ``i``'s frame.
Work arrays have one row more than there are bodies; row ``-1`` is the base, so the parent
index ``-1`` reads the base's twist without a branch.
"""
import math

import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_times
from .joints import joint_transform, motion_subspace
from .layout import ARMAT, GRAVITY, MASS, PARENT, WORK_EXTRA, WORK_PER_BODY
from .spatial_kernels import (
    bracket_add, coadjoint_bias_add, twist_to_child, wrench_to_parent,
)


@njit(cache=True, inline="always")
def all_finite(x):
    for v in x.ravel():
        if not math.isfinite(v):
            return False
    return True


@njit(cache=True, inline="always")
def nonfinite_code(a, b=None, c=None, f=None, use_f=False):
    """The status code of the kernels for their inputs: 0 when all are finite, else 1, 2, 3 for the
    first of ``a, b, c`` (``q``, ``qd``, ``qdd`` or ``tau``) with a NaN or inf, 4 for ``f`` (the
    external wrenches, checked when ``use_f``). Arguments left ``None`` are not checked."""
    if not all_finite(a):
        return 1
    if b is not None and not all_finite(b):
        return 2
    if c is not None and not all_finite(c):
        return 3
    if use_f and not all_finite(f):
        return 4
    return 0


@njit(cache=True)
def rnea_state(kd, q, qd, qdd, fext, use_fext, tau, R, p, S, V, dV, F, h):
    """One state: writes ``tau (n,)``. Work arrays: ``R (n,3,3)``, ``p (n,3)``, ``S (n,6)``,
    ``V, dV, F (n+1, 6)`` with the base in the last row, ``h (6,)``."""
    n = kd.shape[0] - 1
    for c in range(6):
        V[n, c] = 0.0
        dV[n, c] = 0.0
    for c in range(3):
        dV[n, 3 + c] = -kd[n, GRAVITY + c]  # dV_0 = (0, -g)

    # Pass 1: twists and accelerations, base to tips.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_transform(kd, i, q[i], R[i], p[i])
        motion_subspace(kd, i, S[i])
        twist_to_child(R[i], p[i], V[par], V[i])                 # V_i = Ad V_p ...
        twist_to_child(R[i], p[i], dV[par], dV[i])               # dV_i = Ad dV_p ...
        for c in range(6):
            V[i, c] += S[i, c] * qd[i]                           # ... + S_i qd_i
            dV[i, c] += S[i, c] * qdd[i]                         # ... + S_i qdd_i
        bracket_add(V[i], S[i], qd[i], dV[i])                    # ... + [ad_V_i] S_i qd_i
        # Body wrench: F_i = G_i dV_i - [ad_V_i]^T G_i V_i - F_ext_i
        inertia10_times(kd[i, MASS:MASS + 10], dV[i], F[i])     # G_i dV_i (row: m, m c, I_o)
        inertia10_times(kd[i, MASS:MASS + 10], V[i], h)         # G_i V_i
        coadjoint_bias_add(V[i], h, F[i])
        if use_fext:
            for c in range(6):
                F[i, c] -= fext[i, c]
    for c in range(6):
        F[n, c] = 0.0

    # Pass 2: wrenches, tips to base; tau_i = S_i^T F_i.
    for i in range(n - 1, -1, -1):
        t = 0.0
        for c in range(6):
            t += S[i, c] * F[i, c]
        tau[i] = t + kd[i, ARMAT] * qdd[i]
        wrench_to_parent(R[i], p[i], F[i], F[int(kd[i, PARENT])])


@njit(cache=True)
def _carve(w, n):
    """Carve the work arrays of one state out of the buffer ``w``."""
    R = w[: 9 * n].reshape((n, 3, 3))
    p = w[9 * n: 12 * n].reshape((n, 3))
    S = w[12 * n: 18 * n].reshape((n, 6))
    o = 18 * n
    V = w[o: o + 6 * (n + 1)].reshape((n + 1, 6))
    dV = w[o + 6 * (n + 1): o + 12 * (n + 1)].reshape((n + 1, 6))
    F = w[o + 12 * (n + 1): o + 18 * (n + 1)].reshape((n + 1, 6))
    return R, p, S, V, dV, F, w[o + 18 * (n + 1): o + 18 * (n + 1) + 6]


@njit(cache=True)
def _work(n):
    """Work arrays for one state in a fresh buffer (one per chunk of a batch)."""
    return _carve(np.empty(WORK_PER_BODY * (n + 1) + WORK_EXTRA), n)


# Stands in for F_ext when there is none: a read-only global that numba freezes into the code.
NO_FEXT = np.zeros((1, 6))


@njit(cache=True)
def rnea(kd, ws, q, qd, qdd, tau):
    """One state without external wrenches. Returns 0, or 1/2/3 when q/qd/qdd holds a NaN or
    inf (then ``tau`` is untouched)."""
    return rnea_fext(kd, ws, q, qd, qdd, NO_FEXT, tau, False)


@njit(cache=True)
def rnea_fext(kd, ws, q, qd, qdd, fext, tau, use_fext=True):
    """One state with external wrenches ``fext (n, 6)``; returns as :func:`rnea`, or 4 for a bad fext."""
    n = kd.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or tau.shape[0] != n or (use_fext and fext.shape[0] != n):
        return 9  # lengths are checked by the Python entry; this guards the direct fast path
    code = nonfinite_code(q, qd, qdd, fext, use_fext)
    if code:
        return code
    R, p, S, V, dV, F, h = _carve(ws, kd.shape[0] - 1)
    rnea_state(kd, q, qd, qdd, fext, use_fext, tau, R, p, S, V, dV, F, h)
    return 0


@njit(cache=True, parallel=True)
def rnea_batch(kd, q, qd, qdd, fext, use_fext, tau, status, chunks):
    """States ``q[k], qd[k], qdd[k] -> tau[k]`` for ``k < B``, ``chunks`` work units over numba's
    threads; one set of work arrays per chunk, none per state. ``status[k]`` as :func:`rnea`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for c in prange(chunks):
        R, p, S, V, dV, F, h = _work(n)
        for k in range(c * B // chunks, (c + 1) * B // chunks):
            fk = fext[k] if use_fext else fext[0]
            status[k] = nonfinite_code(q[k], qd[k], qdd[k], fk, use_fext)
            if status[k] == 0:
                rnea_state(kd, q[k], qd[k], qdd[k], fk, use_fext, tau[k], R, p, S, V, dV, F, h)

