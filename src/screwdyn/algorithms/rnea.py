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

from .inertia_kernels import inertia10_apply6
from .joints import joint_pose, joint_poses_lanes, joint_screw, joint_sincos_lanes
from .layout import ARMAT, GRAVITY, MASS, PARENT
from .spatial_kernels import twist_to_child6, wrench_to_parent6, wrench_to_parent6v
from .work import (
    NO_NRT, NOT_FAST, STACK_LIMIT, block2, claim, claim_size, contiguous, fits_stack, rows_of, scratch,
    stack2, stack3, stack_scratch, thread_chunks, unit_stride, work_size,
)


@njit(cache=True, inline="always")
def all_finite(x):
    for v in x.flat:   # not x.ravel(): numba's reshape is a call into C
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


@njit(cache=True, inline="always")
def body_motion(T, s0, s1, s2, s3, s4, s5, qdi, qddi, pw0, pw1, pw2, pv0, pv1, pv2, pa0, pa1, pa2, pa3, pa4, pa5):
    """Pass 1 for one body, from its parent's twist ``(pw, pv)`` and acceleration ``pa``:
    returns ``V_i`` and ``dV_i`` (twelve numbers); ``T = T_{p,i}``, ``S_i = s``."""
    # V_i = [Ad_{T_{i,p}}] V_p + S_i qd_i
    w0, w1, w2, v0, v1, v2 = twist_to_child6(T, pw0, pw1, pw2, pv0, pv1, pv2)
    w0 += s0 * qdi
    w1 += s1 * qdi
    w2 += s2 * qdi
    v0 += s3 * qdi
    v1 += s4 * qdi
    v2 += s5 * qdi
    # dV_i = [Ad_{T_{i,p}}] dV_p + [ad_V_i] S_i qd_i + S_i qdd_i,  [ad_V] S = (w x s_w, v x s_w + w x s_v)
    a0, a1, a2, a3, a4, a5 = twist_to_child6(T, pa0, pa1, pa2, pa3, pa4, pa5)
    a0 += s0 * qddi + qdi * (w1 * s2 - w2 * s1)
    a1 += s1 * qddi + qdi * (w2 * s0 - w0 * s2)
    a2 += s2 * qddi + qdi * (w0 * s1 - w1 * s0)
    a3 += s3 * qddi + qdi * ((v1 * s2 - v2 * s1) + (w1 * s5 - w2 * s4))
    a4 += s4 * qddi + qdi * ((v2 * s0 - v0 * s2) + (w2 * s3 - w0 * s5))
    a5 += s5 * qddi + qdi * ((v0 * s1 - v1 * s0) + (w0 * s4 - w1 * s3))
    return w0, w1, w2, v0, v1, v2, a0, a1, a2, a3, a4, a5


@njit(cache=True, inline="always")
def body_wrench(kd, i, w0, w1, w2, v0, v1, v2, a0, a1, a2, a3, a4, a5):
    """The wrench body ``i`` needs for its own motion: ``G_i dV_i - [ad_V_i]^T G_i V_i``, with
    ``-[ad_V]^T h = (w x h_n + v x h_f, w x h_f)`` (six numbers)."""
    f0, f1, f2, f3, f4, f5 = inertia10_apply6(kd, i, MASS, a0, a1, a2, a3, a4, a5)   # G_i = (m, m c, I_o)
    h0, h1, h2, h3, h4, h5 = inertia10_apply6(kd, i, MASS, w0, w1, w2, v0, v1, v2)
    return (f0 + (w1 * h2 - w2 * h1) + (v1 * h5 - v2 * h4),
            f1 + (w2 * h0 - w0 * h2) + (v2 * h3 - v0 * h5),
            f2 + (w0 * h1 - w1 * h0) + (v0 * h4 - v1 * h3),
            f3 + (w1 * h5 - w2 * h4),
            f4 + (w2 * h3 - w0 * h5),
            f5 + (w0 * h4 - w1 * h3))


@njit(cache=True, inline="always")
def rnea_state(kd, q, qd, qdd, fext, use_fext, tau, W, V, dV, F):
    """One state: writes ``tau (n,)``. Work arrays: ``W (n, 18)`` (row ``i``: ``T_{p,i}`` as the
    twelve numbers of :func:`.joints.joint_pose`, then ``S_i``), ``V, dV, F (n+1, 6)`` with the
    base in the last row. Each body's quantities are plain local numbers; only what the other
    bodies read goes through the arrays."""
    n = kd.shape[0] - 1
    for c in range(6):
        V[n, c] = 0.0
        dV[n, c] = 0.0
        F[n, c] = 0.0
    for c in range(3):
        dV[n, 3 + c] = -kd[n, GRAVITY + c]  # dV_0 = (0, -g)

    # Pass 1: twists and accelerations, base to tips; each body's own wrench.
    for i in range(n):
        par = int(kd[i, PARENT])
        T = joint_pose(kd, i, q[i])
        s0, s1, s2, s3, s4, s5 = joint_screw(kd, i)
        for c in range(12):
            W[i, c] = T[c]
        W[i, 12], W[i, 13], W[i, 14], W[i, 15], W[i, 16], W[i, 17] = s0, s1, s2, s3, s4, s5
        w0, w1, w2, v0, v1, v2, a0, a1, a2, a3, a4, a5 = body_motion(
            T, s0, s1, s2, s3, s4, s5, qd[i], qdd[i], V[par, 0], V[par, 1], V[par, 2], V[par, 3], V[par, 4],
            V[par, 5], dV[par, 0], dV[par, 1], dV[par, 2], dV[par, 3], dV[par, 4], dV[par, 5])
        V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5] = w0, w1, w2, v0, v1, v2
        dV[i, 0], dV[i, 1], dV[i, 2], dV[i, 3], dV[i, 4], dV[i, 5] = a0, a1, a2, a3, a4, a5
        # F_i = G_i dV_i - [ad_V_i]^T G_i V_i - F_ext_i
        F[i, 0], F[i, 1], F[i, 2], F[i, 3], F[i, 4], F[i, 5] = body_wrench(
            kd, i, w0, w1, w2, v0, v1, v2, a0, a1, a2, a3, a4, a5)
        if use_fext:
            for c in range(6):
                F[i, c] -= fext[i, c]

    # Pass 2: wrenches, tips to base; tau_i = S_i^T F_i, F_p(i) += [Ad_{T_{i,p}}]^T F_i.
    for i in range(n - 1, -1, -1):
        n0, n1, n2, f0, f1, f2 = F[i, 0], F[i, 1], F[i, 2], F[i, 3], F[i, 4], F[i, 5]
        tau[i] = (W[i, 12] * n0 + W[i, 13] * n1 + W[i, 14] * n2
                  + W[i, 15] * f0 + W[i, 16] * f1 + W[i, 17] * f2) + kd[i, ARMAT] * qdd[i]
        T = (W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5],
             W[i, 6], W[i, 7], W[i, 8], W[i, 9], W[i, 10], W[i, 11])
        wrench_to_parent6(T, n0, n1, n2, f0, f1, f2, F, int(kd[i, PARENT]))


# States per group in a batch: :func:`rnea_lanes` runs this many side by side (32 ran faster than 8
# or 16 on UR5 and panda, and as fast as 64, which would leave Talos' 44 bodies off the stack).
LANES = 32


@njit(cache=True, inline="always")
def lanes_fit(n):
    """Whether :func:`rnea_lanes`' work arrays for ``n`` bodies fit on the stack (up to 64 bodies
    with 32 lanes); larger models run one state at a time."""
    return LANES * (18 * (n + 1) + 13 * n + 20) <= STACK_LIMIT


@njit(cache=True)
def rnea_lanes(kd, q, qd, qdd, fext, tau, m):
    """States side by side: lane ``l < m`` of ``q, qd, qdd, tau (n, LANES)`` and ``fext (n, 6,
    LANES)`` is one state (zeros for no external wrench: subtracting them is exact). The
    arithmetic of :func:`rnea_state`, each body's done for all lanes in one loop without branches
    or calls, which the compiler vectorises (SIMD across states): the loops read one work array
    and write another, each in memory of its own (:func:`.work.stack3`), so it needs no aliasing
    checks. The parent's rows are first copied out (``P``, ``G``), and ``tau`` is written at the end
    from a stack array of its own (``Tl``): written in the backward loop, which also reads ``qdd``,
    it made that loop's vectorised code check for overlap between two arrays that are arguments
    (UR5, one thread: 75 -> 63 cycles per body and state, panda 68 -> 55). The joint poses have loops of
    their own: the sines and cosines of all lanes first (:func:`.joints.joint_sincos_lanes`,
    vectorised), then the poses. Only for models with
    :func:`lanes_fit` (the arrays live on the stack). Results equal :func:`rnea_state`'s bit for bit."""
    n = kd.shape[0] - 1
    L = LANES
    W = stack3(n, 12, L)       # T_{p,i} of each lane, as joint_pose's twelve numbers
    V = stack3(n + 1, 6, L)
    dV = stack3(n + 1, 6, L)
    F = stack3(n + 1, 6, L)
    P = stack2(12, L)          # the parent's V and dV
    G = stack2(6, L)           # the child's F
    SC = stack2(2, L)          # sin and cos of the joint angle
    Tl = stack2(n, L)          # tau, copied out at the end
    for c in range(6):
        g = -kd[n, GRAVITY + c - 3] if c >= 3 else 0.0   # dV_0 = (0, -g)
        for l in range(m):
            V[n, c, l] = 0.0
            dV[n, c, l] = g
            F[n, c, l] = 0.0

    for i in range(n):
        par = int(kd[i, PARENT])
        joint_sincos_lanes(kd, i, q, SC, m)
        joint_poses_lanes(kd, i, q, SC, W[i], m)
        for c in range(6):
            for l in range(m):
                P[c, l] = V[par, c, l]
                P[6 + c, l] = dV[par, c, l]
        s0, s1, s2, s3, s4, s5 = joint_screw(kd, i)
        for l in range(m):
            T = (W[i, 0, l], W[i, 1, l], W[i, 2, l], W[i, 3, l], W[i, 4, l], W[i, 5, l],
                 W[i, 6, l], W[i, 7, l], W[i, 8, l], W[i, 9, l], W[i, 10, l], W[i, 11, l])
            w0, w1, w2, v0, v1, v2, a0, a1, a2, a3, a4, a5 = body_motion(
                T, s0, s1, s2, s3, s4, s5, qd[i, l], qdd[i, l], P[0, l], P[1, l], P[2, l],
                P[3, l], P[4, l], P[5, l], P[6, l], P[7, l], P[8, l], P[9, l], P[10, l], P[11, l])
            V[i, 0, l], V[i, 1, l], V[i, 2, l], V[i, 3, l], V[i, 4, l], V[i, 5, l] = w0, w1, w2, v0, v1, v2
            dV[i, 0, l], dV[i, 1, l], dV[i, 2, l], dV[i, 3, l], dV[i, 4, l], dV[i, 5, l] = a0, a1, a2, a3, a4, a5
            e0, e1, e2, e3, e4, e5 = body_wrench(kd, i, w0, w1, w2, v0, v1, v2, a0, a1, a2, a3, a4, a5)
            F[i, 0, l] = e0 - fext[i, 0, l]     # - F_ext_i (zeros when there is none: exact)
            F[i, 1, l] = e1 - fext[i, 1, l]
            F[i, 2, l] = e2 - fext[i, 2, l]
            F[i, 3, l] = e3 - fext[i, 3, l]
            F[i, 4, l] = e4 - fext[i, 4, l]
            F[i, 5, l] = e5 - fext[i, 5, l]

    for i in range(n - 1, -1, -1):
        par = int(kd[i, PARENT])
        s0, s1, s2, s3, s4, s5 = joint_screw(kd, i)
        arm = kd[i, ARMAT]
        for c in range(6):
            for l in range(m):
                G[c, l] = F[i, c, l]
        for l in range(m):
            n0, n1, n2, f0, f1, f2 = G[0, l], G[1, l], G[2, l], G[3, l], G[4, l], G[5, l]
            Tl[i, l] = (s0 * n0 + s1 * n1 + s2 * n2 + s3 * f0 + s4 * f1 + s5 * f2) + arm * qdd[i, l]
            T = (W[i, 0, l], W[i, 1, l], W[i, 2, l], W[i, 3, l], W[i, 4, l], W[i, 5, l],
                 W[i, 6, l], W[i, 7, l], W[i, 8, l], W[i, 9, l], W[i, 10, l], W[i, 11, l])
            m0, m1, m2, m3, m4, m5 = wrench_to_parent6v(T, n0, n1, n2, f0, f1, f2)
            F[par, 0, l] += m0
            F[par, 1, l] += m1
            F[par, 2, l] += m2
            F[par, 3, l] += m3
            F[par, 4, l] += m4
            F[par, 5, l] += m5
    for i in range(n):
        for l in range(m):
            tau[i, l] = Tl[i, l]


@njit(cache=True, inline="always")
def _carve(w, n):
    """Carve the work arrays of one state out of the buffer ``w``."""
    W = block2(w, 0, n, 18)
    o = 18 * n
    V = block2(w, o, n + 1, 6)
    dV = block2(w, o + 6 * (n + 1), n + 1, 6)
    F = block2(w, o + 12 * (n + 1), n + 1, 6)
    return W, V, dV, F


@njit(cache=True)
def _work(n):
    """Work arrays for one state in a fresh buffer (one per chunk of a batch)."""
    return _carve(np.empty(work_size(n)), n)


# Stands in for F_ext when there is none: a read-only global that numba freezes into the code.
NO_FEXT = np.zeros((1, 6))


@njit(cache=True)
def rnea(kd, q, qd, qdd, tau):
    """One state without external wrenches, inputs of any stride. Returns 0, 1/2/3 when q/qd/qdd
    holds a NaN or inf (then ``tau`` is untouched), or NOT_FAST for a strided input."""
    return _one_state(kd, q, qd, qdd, NO_FEXT, False, tau, scratch(kd.shape[0] - 1))


@njit(cache=True, **NO_NRT)
def rnea_fast(kd, q, qd, qdd, tau):
    """:func:`rnea` compiled without numba's runtime, for ``dynamics``' fast paths (see
    :data:`.work.NO_NRT`): the same, but NOT_FAST for a model whose work does not fit the stack."""
    n = kd.shape[0] - 1
    if not fits_stack(n):
        return NOT_FAST
    return _one_state(kd, q, qd, qdd, NO_FEXT, False, tau, stack_scratch(n))


@njit(cache=True)
def rnea_fext(kd, q, qd, qdd, fext, tau, use_fext=True):
    """One state with external wrenches ``fext (n, 6)``; returns as :func:`rnea`, or 4 for a bad fext."""
    return _one_state(kd, q, qd, qdd, fext, use_fext, tau, scratch(kd.shape[0] - 1))


@njit(cache=True, inline="always")
def _one_state(kd, q, qd, qdd, fext, use_fext, tau, w):
    """The body of :func:`rnea`, :func:`rnea_fast` and :func:`rnea_fext`, inlined into each (a call
    between compiled functions costs a reference count per array), with the work buffer ``w`` the
    caller made (on its stack, or on the heap for a very large model). NOT_FAST for a wrong length
    or a strided ``q``, ``qd``, ``qdd``."""
    n = kd.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or tau.shape[0] != n or (use_fext and fext.shape[0] != n):
        return NOT_FAST  # lengths are checked by the Python entry; this guards the direct fast path
    if not (unit_stride(q) and unit_stride(qd) and unit_stride(qdd)):
        return NOT_FAST
    q, qd, qdd = contiguous(q), contiguous(qd), contiguous(qdd)
    code = nonfinite_code(q, qd, qdd, fext, use_fext)
    if code:
        return code
    W, V, dV, F = _carve(w, n)
    rnea_state(kd, q, qd, qdd, fext, use_fext, tau, W, V, dV, F)
    return 0


@njit(cache=True)
def _lane_io(n):
    """One chunk's states in lanes: ``q, qd, qdd, tau (n, LANES)`` and ``fext (n, 6, LANES)``, each
    C-contiguous (a unit stride that the vectorised loops of :func:`rnea_lanes` rely on), and
    ``acc (LANES,)`` for :func:`lanes_in`."""
    L = LANES
    return np.empty((n, L)), np.empty((n, L)), np.empty((n, L)), np.empty((n, L)), np.empty((n, 6, L)), np.empty(L)


@njit(cache=True, inline="always")
def lanes_in(a, b, c, fext, use_fext, k0, m, al, bl, cl, fl, acc):
    """Copy states ``k0 <= k < k0 + m`` of ``a, b, c (B, n)`` (and ``fext (B, n, 6)`` when
    ``use_fext``) into lanes ``al, bl, cl (n, L)``, ``fl (n, 6, L)``. ``acc[l]`` is then 0 when
    lane ``l``'s inputs are all finite, NaN when not: each input adds ``x * 0``, which is NaN for
    NaN and inf (a branch-free sum where a test per number would cost a branch)."""
    n = al.shape[0]
    for l in range(m):
        acc[l] = 0.0
    for i in range(n):
        for l in range(m):
            x = a[k0 + l, i]
            y = b[k0 + l, i]
            z = c[k0 + l, i]
            al[i, l] = x
            bl[i, l] = y
            cl[i, l] = z
            acc[l] += (x * 0.0 + y * 0.0) + z * 0.0
    if use_fext:
        for i in range(n):
            for j in range(6):
                for l in range(m):
                    x = fext[k0 + l, i, j]
                    fl[i, j, l] = x
                    acc[l] += x * 0.0


@njit(cache=True)
def _batch_in_lanes(kd, q, qd, qdd, fext, use_fext, tau, status, claimed, size):
    """The states of a batch that this thread claims (:func:`.work.claim`), ``LANES`` at a time
    through :func:`rnea_lanes`."""
    n = kd.shape[0] - 1
    ql, qdl, qddl, taul, fl, acc = _lane_io(n)
    if not use_fext:
        fl[:] = 0.0
    B = q.shape[0]
    while True:
        start, end = claim(claimed, B, size)
        if start >= end:
            break
        for b in range(start, end, LANES):
            m = min(LANES, end - b)
            lanes_in(q, qd, qdd, fext, use_fext, b, m, ql, qdl, qddl, fl, acc)
            rnea_lanes(kd, ql, qdl, qddl, fl, taul, m)
            for l in range(m):
                k = b + l
                status[k] = 0 if acc[l] == 0.0 else nonfinite_code(q[k], qd[k], qdd[k], fext[k] if use_fext else fext[0], use_fext)
                if status[k] == 0:
                    for i in range(n):
                        tau[k, i] = taul[i, l]


@njit(cache=True)
def rnea_state_call(kd, q, qd, qdd, fext, use_fext, tau, W, V, dV, F):
    """:func:`rnea_state` as a compiled call, for the batch kernel's one-state-at-a-time route
    (inlined into a parallel loop, the state's arithmetic makes numba's parallel pass several times slower to compile)."""
    rnea_state(kd, q, qd, qdd, fext, use_fext, tau, W, V, dV, F)


@njit(cache=True, parallel=True)
def rnea_batch(kd, q, qd, qdd, fext, use_fext, tau, status):
    """States ``q[k], qd[k], qdd[k] -> tau[k]`` for ``k < B``, one work unit per numba thread
    (:func:`.work.thread_chunks`); one set of work arrays per unit, none per state. ``status[k]``
    as :func:`rnea`, written for every ``k``. Each unit claims states (:func:`.work.claim_size`
    at a time) until none is left (:func:`.work.claim`: a thread that starts late or runs slower
    takes fewer) and
    runs them ``LANES`` at a time through :func:`rnea_lanes`, vectorised across them (the batch
    rows of BENCHMARKS.md); models too large for lanes split the batch evenly. Returns 0, or
    NOT_FAST (nothing computed) when an array is not of the shape and C layout the loops index."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    if not (rows_of(q, B, n) and rows_of(qd, B, n) and rows_of(qdd, B, n) and rows_of(tau, B, n)
            and status.shape[0] == B and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return NOT_FAST   # see dynamics._Entries: a fast path's entry point does not check layouts
    lanes = lanes_fit(n)
    chunks = thread_chunks(B)
    claimed = np.zeros(1, dtype=np.int64)   # the lanes drivers' shared counter (work.claim)
    size = claim_size(B, chunks, LANES)
    for c in prange(chunks):
        if lanes:
            _batch_in_lanes(kd, q, qd, qdd, fext, use_fext, tau, status, claimed, size)
        else:
            start, end = c * B // chunks, (c + 1) * B // chunks
            W, V, dV, F = _work(n)
            for k in range(start, end):
                fk = fext[k] if use_fext else fext[0]
                status[k] = nonfinite_code(q[k], qd[k], qdd[k], fk, use_fext)
                if status[k] == 0:
                    rnea_state_call(kd, q[k], qd[k], qdd[k], fk, use_fext, tau[k], W, V, dV, F)
    return 0
