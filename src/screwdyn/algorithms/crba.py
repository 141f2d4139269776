"""Composite Rigid Body Algorithm: the joint-space mass matrix ``M(q)`` (Featherstone's ``HandC``).

Each body's quantities are expressed in a world-aligned frame at its origin, as in :mod:`.aba`:
frame ``{i}`` sits at ``p_i`` with the axes of ``{0}`` (``T_{0,i} = (R_i, p_i)``, offset
``r_i = p_i - p_p(i) = R_p(i) p_{p(i),i}``), so rotations are applied once per body and a wrench
moves to the parent by the pure translation ``X_i^T F = (n + r_i x f, f)`` (6 multiplications
instead of a full ``[Ad]^T``), while lever arms stay body-sized (entries of ``M`` as accurate as
in body frames; a single world origin would lose digits on small distal bodies).

Pass 1, forward, ``i = 0 .. n-1``::

    J_i   = (R_i s_w, R_i s_v)  for  S_i = (s_w, s_v)      S_i in world axes
    Ic_i  = G_i in world axes

Pass 2, backward, ``i = n-1 .. 0`` (``Ic_i`` is then the composite inertia of the subtree of
``i``: all its descendants have larger indices)::

    F        = Ic_i J_i                         wrench that accelerates the subtree at qdd_i = 1
    M_ii     = J_i^T F + armature_i             reflected rotor inertia on the diagonal (note 004)
    j = i;  while p(j) >= 0:  F = X_j^T F;  j = p(j);  M_ij = M_ji = J_j^T F
    Ic_p(i) += X_i^T Ic_i X_i                   a translation of a 10-parameter inertia

Entries of two joints on different branches stay zero. ``M`` is written whole (both triangles,
exactly symmetric). Cost ``O(n d)`` with ``d`` the depth of the tree.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_apply, inertia10_rotate, inertia10_shift_add
from .layout import ARMAT, MASS, PARENT
from .rnea import nonfinite_code
from .spatial_kernels import aligned_body
from .work import NOT_FAST, block2, block3, contiguous, scratch, unit_stride, work_size


@njit(cache=True, inline="always")
def crba_state(kd, q, M, R, p, J, Ic, P):
    """One state: writes ``M (n, n)``. Work: ``R (n+2,3,3)``, ``p (n+2,3)``: ``R_i`` and ``r_i``
    (row ``n+1 = -1``: the base; row ``n`` unused), ``J (n+1, 6)`` (row ``n`` unused), ``Ic (n, 10)``
    composite inertias, ``P (n,)`` int64: the parents ``p(i)``
    as integers (the ancestor walks read them)."""
    n = kd.shape[0] - 1
    for a in range(3):
        for b in range(3):
            R[n + 1, a, b] = 1.0 if a == b else 0.0
        p[n + 1, a] = 0.0
    # Pass 1: poses, joint axes J_i and inertias Ic_i = G_i in world axes.
    for i in range(n):
        par = int(kd[i, PARENT])                                 # -1: the base, row n + 1
        P[i] = par
        Rt = aligned_body(kd, i, q[i], par, R, p, J)   # R_i = R_p R_pi, r_i = R_p p_pi, J_i
        inertia10_rotate(Rt, kd, i, MASS, Ic, i)       # G_i in world axes
        for j in range(n):
            M[i, j] = 0.0
    # Pass 2: composite inertias, tips to base, and the rows of M.
    for i in range(n - 1, -1, -1):
        F0, F1, F2, F3, F4, F5 = inertia10_apply(Ic, i, J, i)    # F = Ic_i J_i
        M[i, i] = (J[i, 0] * F0 + J[i, 1] * F1 + J[i, 2] * F2
                   + J[i, 3] * F3 + J[i, 4] * F4 + J[i, 5] * F5) + kd[i, ARMAT]
        j = i
        par = P[j]
        while par >= 0:
            r0, r1, r2 = p[j, 0], p[j, 1], p[j, 2]               # F = X_j^T F = (n + r x f, f)
            F0 += r1 * F5 - r2 * F4
            F1 += r2 * F3 - r0 * F5
            F2 += r0 * F4 - r1 * F3
            j = par
            par = P[j]
            t = (J[j, 0] * F0 + J[j, 1] * F1 + J[j, 2] * F2        # M_ij = M_ji = J_j^T F
                 + J[j, 3] * F3 + J[j, 4] * F4 + J[j, 5] * F5)
            M[i, j] = t
            M[j, i] = t
        par = P[i]
        if par >= 0:                                             # Ic_p += X_i^T Ic_i X_i
            inertia10_shift_add(p[i, 0], p[i, 1], p[i, 2], Ic[i], Ic[par])


@njit(cache=True, inline="always")
def _carve(w, n):
    R = block3(w, 0, n + 2, 3, 3)
    o = 9 * (n + 2)
    p = block2(w, o, n + 2, 3)
    o += 3 * (n + 2)
    J = block2(w, o, n + 1, 6)
    o += 6 * (n + 1)
    Ic = block2(w, o, n, 10)
    o += 10 * n
    P = w[o: o + n].view(np.int64)
    return R, p, J, Ic, P


@njit(cache=True)
def _work(n):
    """Work arrays for one state in a fresh buffer (one per chunk of a batch)."""
    return _carve(np.empty(work_size(n)), n)


@njit(cache=True)
def crba(kd, q, M):
    """One state: ``M (n, n)``, ``q`` of any stride. Returns 0, 1 when ``q`` holds a NaN or inf
    (``M`` untouched), or NOT_FAST for a wrong length or a strided ``q``."""
    n = kd.shape[0] - 1
    if q.shape[0] != n or M.shape[0] != n or M.shape[1] != n or not unit_stride(q):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    qc = contiguous(q)
    code = nonfinite_code(qc)
    if code:
        return code
    R, p, J, Ic, P = _carve(scratch(n), n)
    crba_state(kd, qc, M, R, p, J, Ic, P)
    return 0


@njit(cache=True)
def crba_state_call(kd, q, M, R, p, J, Ic, P):
    """:func:`crba_state` as a compiled call, for the batch kernel
    (inlined into a parallel loop, the state's arithmetic makes numba's parallel pass several times slower to compile)."""
    crba_state(kd, q, M, R, p, J, Ic, P)


@njit(cache=True, parallel=True)
def crba_batch(kd, q, M, status, chunks):
    """States ``q[k] -> M[k]`` for ``k < B`` over ``chunks`` work units; ``status[k]`` as :func:`crba`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for c in prange(chunks):
        R, p, J, Ic, P = _work(n)
        for k in range(c * B // chunks, (c + 1) * B // chunks):
            status[k] = nonfinite_code(q[k])
            if status[k] == 0:
                crba_state_call(kd, q[k], M[k], R, p, J, Ic, P)
