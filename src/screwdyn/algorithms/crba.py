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

from .inertia_kernels import inertia10_apply, inertia10_rotate, inertia10_shift_add, inertia_apply, inertia_rotate, inertia_shift
from .fma import dot6, fma
from .joints import joint_poses_lanes, joint_screw, joint_sincos_lanes
from .layout import ARMAT, MASS, PARENT
from .rnea import nonfinite_code
from .spatial_kernels import aligned, aligned_body
from .work import (
    NO_NRT, NOT_FAST, STACK_LIMIT, block2, block3, claim, claim_size, contiguous, fits_stack, rows_of,
    scratch, stack2, stack3, stack_scratch, thread_chunks, unit_stride, work_size,
)

LANES = 16   # states side by side in crba_lanes


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
        M[i, i] = dot6(J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5], F0, F1, F2, F3, F4, F5) + kd[i, ARMAT]
        j = i
        par = P[j]
        while par >= 0:
            r0, r1, r2 = p[j, 0], p[j, 1], p[j, 2]               # F = X_j^T F = (n + r x f, f)
            F0 += fma(r1, F5, -r2 * F4)
            F1 += fma(r2, F3, -r0 * F5)
            F2 += fma(r0, F4, -r1 * F3)
            j = par
            par = P[j]
            t = dot6(J[j, 0], J[j, 1], J[j, 2], J[j, 3], J[j, 4], J[j, 5], F0, F1, F2, F3, F4, F5)
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
    return _one_state(kd, q, M, scratch(kd.shape[0] - 1))


@njit(cache=True, **NO_NRT)
def crba_fast(kd, q, M):
    """:func:`crba` compiled without numba's runtime, for ``dynamics``' fast paths (see
    :data:`.work.NO_NRT`): the same, but NOT_FAST for a model whose work does not fit the stack."""
    n = kd.shape[0] - 1
    if not fits_stack(n):
        return NOT_FAST
    return _one_state(kd, q, M, stack_scratch(n))


@njit(cache=True, inline="always")
def _one_state(kd, q, M, w):
    """The body of :func:`crba` and :func:`crba_fast`, with the work buffer ``w`` the caller made."""
    n = kd.shape[0] - 1
    if q.shape[0] != n or M.shape[0] != n or M.shape[1] != n or not unit_stride(q):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    qc = contiguous(q)
    code = nonfinite_code(qc)
    if code:
        return code
    R, p, J, Ic, P = _carve(w, n)
    crba_state(kd, qc, M, R, p, J, Ic, P)
    return 0


@njit(cache=True)
def crba_state_call(kd, q, M, R, p, J, Ic, P):
    """:func:`crba_state` as a compiled call, for the batch kernel
    (inlined into a parallel loop, the state's arithmetic makes numba's parallel pass several times slower to compile)."""
    crba_state(kd, q, M, R, p, J, Ic, P)


@njit(cache=True, inline="always")
def lanes_fit(n):
    """Whether :func:`crba_lanes`' arrays for ``n`` bodies fit on the stack (up to 51 bodies);
    larger models run one state at a time."""
    return LANES * (n * n + 28 * n + 69) <= STACK_LIMIT


@njit(cache=True)
def crba_lanes(kd, q, M, k0, ok, m):
    """States side by side, as :func:`.rnea.rnea_lanes`: lane ``l < m`` of ``q (n, LANES)`` is
    state ``k0 + l``, whose ``M`` goes to ``M[k0 + l]`` when ``ok[l]``. The arithmetic of
    :func:`crba_state`, each step in one loop over the lanes, in stack arrays of their own (the
    parent's axes and the child's inertia are first copied out, so no loop reads the array it
    writes); the ancestor walk is the same for every lane. Results equal :func:`crba_state`'s
    bit for bit. Only for models with :func:`lanes_fit`.

    A step over several numbers is one loop over the lanes with all the numbers in its body
    (``for l: for c:``, the inner loop unrolled), not a loop over the lanes per number: each loop
    costs its set-up on top of its few vector operations. Swapped so in the copies, the batches of
    this kernel and :func:`.coriolis.coriolis_lanes` took 6-30 % less time (one thread; UR5, panda,
    Talos), and :func:`.aba.aba_lanes`' 2-8 %; the same in :func:`.rnea.rnea_lanes` gained nothing."""
    n = kd.shape[0] - 1
    L = LANES
    R = stack3(n + 2, 9, L)      # R_i, row-major (row n + 1: the base)
    p = stack3(n + 2, 3, L)      # r_i
    J = stack3(n + 1, 6, L)      # J_i
    Ic = stack3(n, 10, L)        # composite inertias
    Ml = stack3(n, n, L)
    A = stack2(9, L)             # the parent's axes
    G = stack2(10, L)            # the child's composite inertia
    F = stack2(6, L)
    W = stack2(12, L)
    SC = stack2(2, L)
    for c in range(9):
        e = 1.0 if c == 0 or c == 4 or c == 8 else 0.0
        for l in range(m):
            R[n + 1, c, l] = e
    for l in range(m):
        for c in range(3):
            p[n + 1, c, l] = 0.0
    for i in range(n):
        for j in range(n):
            for l in range(m):
                Ml[i, j, l] = 0.0
    # Pass 1: poses, joint axes J_i and inertias Ic_i = G_i in world axes.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_sincos_lanes(kd, i, q, SC, m)
        joint_poses_lanes(kd, i, q, SC, W, m)
        for l in range(m):
            for c in range(9):
                A[c, l] = R[par, c, l]
        s = joint_screw(kd, i)
        for l in range(m):
            T = (W[0, l], W[1, l], W[2, l], W[3, l], W[4, l], W[5, l], W[6, l], W[7, l], W[8, l], W[9, l],
                 W[10, l], W[11, l])
            (c00, c01, c02, c10, c11, c12, c20, c21, c22, r0, r1, r2, j0, j1, j2, j3, j4, j5) = aligned(
                A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l], A[6, l], A[7, l], A[8, l], T, s)
            R[i, 0, l], R[i, 1, l], R[i, 2, l], R[i, 3, l], R[i, 4, l] = c00, c01, c02, c10, c11
            R[i, 5, l], R[i, 6, l], R[i, 7, l], R[i, 8, l] = c12, c20, c21, c22
            p[i, 0, l], p[i, 1, l], p[i, 2, l] = r0, r1, r2
            J[i, 0, l], J[i, 1, l], J[i, 2, l], J[i, 3, l], J[i, 4, l], J[i, 5, l] = j0, j1, j2, j3, j4, j5
            (Ic[i, 0, l], Ic[i, 1, l], Ic[i, 2, l], Ic[i, 3, l], Ic[i, 4, l], Ic[i, 5, l], Ic[i, 6, l], Ic[i, 7, l],
             Ic[i, 8, l], Ic[i, 9, l]) = inertia_rotate(
                c00, c01, c02, c10, c11, c12, c20, c21, c22, kd[i, MASS], kd[i, MASS + 1], kd[i, MASS + 2],
                kd[i, MASS + 3], kd[i, MASS + 4], kd[i, MASS + 5], kd[i, MASS + 6], kd[i, MASS + 7],
                kd[i, MASS + 8], kd[i, MASS + 9])
    # Pass 2: composite inertias, tips to base, and the rows of M.
    for i in range(n - 1, -1, -1):
        arm = kd[i, ARMAT]
        for l in range(m):
            for c in range(10):
                G[c, l] = Ic[i, c, l]
        for l in range(m):
            F0, F1, F2, F3, F4, F5 = inertia_apply(G[0, l], G[1, l], G[2, l], G[3, l], G[4, l], G[5, l], G[6, l],
                                                   G[7, l], G[8, l], G[9, l], J[i, 0, l], J[i, 1, l], J[i, 2, l],
                                                   J[i, 3, l], J[i, 4, l], J[i, 5, l])
            Ml[i, i, l] = dot6(J[i, 0, l], J[i, 1, l], J[i, 2, l], J[i, 3, l], J[i, 4, l], J[i, 5, l],
                               F0, F1, F2, F3, F4, F5) + arm
            F[0, l], F[1, l], F[2, l], F[3, l], F[4, l], F[5, l] = F0, F1, F2, F3, F4, F5
        j = i
        par = int(kd[j, PARENT])
        while par >= 0:
            for l in range(m):
                r0, r1, r2 = p[j, 0, l], p[j, 1, l], p[j, 2, l]       # F = X_j^T F = (n + r x f, f)
                F0, F1, F2, F3, F4, F5 = F[0, l], F[1, l], F[2, l], F[3, l], F[4, l], F[5, l]
                F0 += fma(r1, F5, -r2 * F4)
                F1 += fma(r2, F3, -r0 * F5)
                F2 += fma(r0, F4, -r1 * F3)
                F[0, l], F[1, l], F[2, l] = F0, F1, F2
                t = dot6(J[par, 0, l], J[par, 1, l], J[par, 2, l], J[par, 3, l], J[par, 4, l], J[par, 5, l],  # M_ij = J_j^T F
                         F0, F1, F2, F3, F4, F5)
                Ml[i, par, l] = t
                Ml[par, i, l] = t
            j = par
            par = int(kd[j, PARENT])
        par = int(kd[i, PARENT])
        if par >= 0:                                             # Ic_p += X_i^T Ic_i X_i
            for l in range(m):
                d0, d1, d2, d3, d4, d5, d6, d7, d8, d9 = inertia_shift(
                    p[i, 0, l], p[i, 1, l], p[i, 2, l], G[0, l], G[1, l], G[2, l], G[3, l], G[4, l], G[5, l],
                    G[6, l], G[7, l], G[8, l], G[9, l])
                Ic[par, 0, l] += d0
                Ic[par, 1, l] += d1
                Ic[par, 2, l] += d2
                Ic[par, 3, l] += d3
                Ic[par, 4, l] += d4
                Ic[par, 5, l] += d5
                Ic[par, 6, l] += d6
                Ic[par, 7, l] += d7
                Ic[par, 8, l] += d8
                Ic[par, 9, l] += d9
    for l in range(m):
        if ok[l]:
            for i in range(n):
                for j in range(n):
                    M[k0 + l, i, j] = Ml[i, j, l]


@njit(cache=True)
def _batch_in_lanes(kd, q, M, status, claimed, size):
    """The states of a batch that this thread claims (:func:`.work.claim`), ``LANES`` at a time
    through :func:`crba_lanes`."""
    n = kd.shape[0] - 1
    ql = np.empty((n, LANES))
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
                status[k] = nonfinite_code(q[k])
                ok[l] = status[k] == 0
                for i in range(n):
                    ql[i, l] = q[k, i] if ok[l] else 0.0
            crba_lanes(kd, ql, M, b, ok, m)


@njit(cache=True, parallel=True)
def crba_batch(kd, q, M, status):
    """States ``q[k] -> M[k]`` for ``k < B``, one work unit per numba thread; ``status[k]`` as
    :func:`crba`, written for every ``k``. States go to :func:`crba_lanes` as in
    :func:`.rnea.rnea_batch`. Returns 0, or NOT_FAST as :func:`.rnea.rnea_batch`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    if not (rows_of(q, B, n) and M.shape[0] == B and M.shape[1] == n and M.shape[2] == n and status.shape[0] == B):
        return NOT_FAST   # see dynamics._Entries: a fast path's entry point does not check layouts
    lanes = lanes_fit(n)
    chunks = thread_chunks(B)
    claimed = np.zeros(1, dtype=np.int64)   # the lanes drivers' shared counter (work.claim)
    size = claim_size(B, chunks, LANES)
    for c in prange(chunks):
        if lanes:
            _batch_in_lanes(kd, q, M, status, claimed, size)
        else:
            start, end = c * B // chunks, (c + 1) * B // chunks
            R, p, J, Ic, P = _work(n)
            for k in range(start, end):
                status[k] = nonfinite_code(q[k])
                if status[k] == 0:
                    crba_state_call(kd, q[k], M[k], R, p, J, Ic, P)
    return 0
