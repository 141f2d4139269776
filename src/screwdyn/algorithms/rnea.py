"""Recursive Newton-Euler Algorithm: inverse dynamics ``tau = ID(q, qd, qdd, F_ext)``
(docs/theory.md §6; Featherstone's ``ID``).

On a tree, body ``i`` has parent ``p(i) < i`` and its frame on its joint axis, so ``A_i = S_i``
(:mod:`.joints`). Base: ``V = 0``, ``dV = (0, -g)`` (gravity as an acceleration of the base).

Pass 1, forward, ``i = 0 .. n-1``::

    T_{p,i} = T_{p,i}(0) exp([S_i] q_i)
    V_i     = [Ad_{T_{i,p}}] V_p  + S_i qd_i        (a free-flyer's or spherical joint's rows: v_J, joints.py)
    dV_i    = [Ad_{T_{i,p}}] dV_p + [ad_{V_i}] S_i qd_i + S_i qdd_i
    F_i     = G_i dV_i - [ad_{V_i}]^T G_i V_i - F_ext_i

Pass 2, backward, ``i = n-1 .. 0``::

    tau_i   = S_i^T F_i + armature_i qdd_i
    F_p(i) += [Ad_{T_{i,p}}]^T F_i

``F_ext_i`` is the wrench ``(n, f)`` the environment exerts on body ``i``, in body ``i``'s frame.
The kernel runs ``L`` states side by side (:mod:`.work`): each step below is a loop over the lanes.
Work arrays have a row more than there are bodies: row ``n`` is the base, which the parent index
``-1`` reads without a branch.
"""
import numpy as np
from numba import prange

from .inertia_kernels import body_inertia, inertia_apply, massless
from .internals import release_gil, restore_gil, scratch, stack, window
from .joints import in_parent_frame, joint_poses, joint_screw, joint_velocities
from .layout import ARMAT, GRAVITY, ONE_DOF, PARENT, POSEK
from .spatial_kernels import ad, cross_force, twist_to_child, wrench_to_parent
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import (
    STACK_LIMIT, add, claim, copy_lanes, get6, get12, is_rows, is_vector, lanes_of, q_size, load, load_wrenches, put, row,
    store, units,
)

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
LANES = 16   # states side by side (bench/variants.py measures each count)
# one-state calls release the GIL from this many DoF (Talos, 44 joints: 3.7 us a call; internals.release_gil)
GIL_FROM = 56


@njit(**HELPER)
def body_motion(T, S, vJ, qd, qdd, Vp, Ap):
    """Pass 1's motion of one body from its parent's twist ``Vp`` and acceleration ``Ap``:
    ``V_i = [Ad_{T_{i,p}}] V_p + v_J`` and ``dV_i = [Ad_{T_{i,p}}] dV_p + [ad_{V_i}] S_i qd_i +
    S_i qdd_i`` (``T = T_{p,i}``, ``S = S_i``, ``v_J`` of :func:`.joints.joint_velocity`: ``S_i qd_i``
    for a one-DoF joint)."""
    return joint_motion(twist_to_child(T, Vp), twist_to_child(T, Ap), S, vJ, qd, qdd)


@njit(**HELPER)
def joint_motion(Vc, Ac, S, vJ, qd, qdd):
    """:func:`body_motion` from the parent's twist and acceleration already in the child's frame
    (``Vc``, ``Ac``; the parent's own where the child is in its frame: :func:`.joints.in_parent_frame`)."""
    w0, w1, w2, v0, v1, v2 = Vc
    V = (w0 + vJ[0], w1 + vJ[1], w2 + vJ[2], v0 + vJ[3], v1 + vJ[4], v2 + vJ[5])
    a0, a1, a2, a3, a4, a5 = Ac
    c0, c1, c2, c3, c4, c5 = ad(V, S)
    return V, (a0 + S[0] * qdd + qd * c0, a1 + S[1] * qdd + qd * c1, a2 + S[2] * qdd + qd * c2,
               a3 + S[3] * qdd + qd * c3, a4 + S[4] * qdd + qd * c4, a5 + S[5] * qdd + qd * c5)


@njit(**HELPER)
def body_wrench(I, V, A):
    """The wrench body ``i`` needs for its own motion: ``G_i dV_i - [ad_{V_i}]^T G_i V_i``."""
    f0, f1, f2, f3, f4, f5 = inertia_apply(I, A)
    c0, c1, c2, c3, c4, c5 = cross_force(V, inertia_apply(I, V))
    return f0 + c0, f1 + c1, f2 + c2, f3 + c3, f4 + c4, f5 + c5


@njit(**HELPER)
def joint_force(S, F, arm, qdd):
    """Pass 2's ``tau_i = S_i^T F_i + armature_i qdd_i``."""
    n0, n1, n2, f0, f1, f2 = F
    return (S[0] * n0 + S[1] * n1 + S[2] * n2 + S[3] * f0 + S[4] * f1 + S[5] * f2) + arm * qdd


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies."""
    return 41 * n + 46


@njit(**KERNEL)
def rnea(kd, q, qd, qdd, fext, use_fext, tau, status, k0, k1, lanes):
    """States ``k0 <= k < k1`` of ``q, qd, qdd, tau (B, n)`` (and ``fext (B, n, 6)`` when
    ``use_fext``): ``tau[k]`` and ``status[k]``, ``lanes`` (a compile-time constant) at a time. A
    state flagged for a NaN or inf has no meaningful ``tau[k]`` (:mod:`.work`: ``lanes_of``)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    L = lanes
    Q, QD, QDD, TAUw = stack((nq, L)), stack((n, L)), stack((n, L)), stack((n, L))   # TAUw: lanes_of
    FE = stack((n, 6, L))
    W = stack((n, 12, L))      # T_{p,i} of each lane, the twelve numbers of joint_pose
    V, dV, F = stack((n + 1, 6, L)), stack((n + 1, 6, L)), stack((n + 1, 6, L))
    P = scratch(12, lanes)     # the parent's V and dV
    G = scratch(6, lanes)      # the child's F
    SC = scratch(2, lanes)
    VJ = scratch(6, lanes)
    bad = stack((L,)).view(np.int64)
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            bad[l] = 0
        load(q, b, m, Q, bad, Status.NONFINITE)
        load(qd, b, m, QD, bad, Status.NONFINITE + 1)
        load(qdd, b, m, QDD, bad, Status.NONFINITE + 2)
        if use_fext:
            load_wrenches(fext, b, m, FE, bad)
        TAU = lanes_of(TAUw, tau, b)
        for l in range(m):
            put(V[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
            put(dV[n], l, (0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1], -kd[n, GRAVITY + 2]))
            put(F[n], l, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))

        # Pass 1: twists and accelerations, base to tips, and each body's own wrench.
        for i in range(n):
            par = int(kd[i, PARENT])
            joint_poses(kd, i, Q, SC, W[i], m)
            copy_lanes(V[par], P, m)
            copy_lanes(dV[par], P[6:], m)
            S = joint_screw(kd, i)
            one_dof = kd[i, POSEK] == ONE_DOF
            if not one_dof:
                joint_velocities(kd, i, S, QD, VJ, m)
            I = body_inertia(kd, i)
            if in_parent_frame(kd, i):    # T_{p,i} = 1, v_J = 0; most such rows carry no inertia
                for l in range(m):
                    Vi, Ai = joint_motion(get6(P, l), get6(P[6:], l), S, ZERO6, QD[i, l], QDD[i, l])
                    put(V[i], l, Vi)
                    put(dV[i], l, Ai)
                if massless(kd, i):
                    for l in range(m):
                        put(F[i], l, ZERO6)
                else:
                    for l in range(m):
                        put(F[i], l, body_wrench(I, get6(V[i], l), get6(dV[i], l)))
            else:
                for l in range(m):
                    qdi = QD[i, l]
                    vJ = ((S[0] * qdi, S[1] * qdi, S[2] * qdi, S[3] * qdi, S[4] * qdi, S[5] * qdi) if one_dof
                          else get6(VJ, l))
                    Vi, Ai = body_motion(get12(W[i], l), S, vJ, qdi, QDD[i, l], get6(P, l), get6(P[6:], l))
                    put(V[i], l, Vi)
                    put(dV[i], l, Ai)
                    put(F[i], l, body_wrench(I, Vi, Ai))
            if use_fext:
                for l in range(m):
                    for c in range(6):
                        F[i, c, l] -= FE[i, c, l]

        # Pass 2: wrenches, tips to base.
        for i in range(n - 1, -1, -1):
            par = int(kd[i, PARENT])
            S = joint_screw(kd, i)
            arm = kd[i, ARMAT]
            copy_lanes(F[i], G, m)
            for l in range(m):
                TAU[i, l] = joint_force(S, get6(G, l), arm, QDD[i, l])
            if in_parent_frame(kd, i):
                for l in range(m):
                    add(F[par], l, get6(G, l))
            else:
                for l in range(m):
                    add(F[par], l, wrench_to_parent(get12(W[i], l), get6(G, l)))
        store(TAU, b, m, tau, status, bad)


@njit(**ONE)
def rnea_one(kd, q, qd, qdd, fext, use_fext, tau):
    """One state (vectors ``(n,)``, ``fext (n, 6)``): :func:`rnea` on it as a batch of one.
    Returns its status, or NOT_FAST for a vector of another length or stride. (The literal range
    ``0, 1`` compiles the kernel once more for one lane, every lane loop a single pass: 1.6 s more
    compile, a third less time per call.)"""
    n, nq = kd.shape[0] - 1, q_size(kd)
    if not (is_vector(q, nq) and is_vector(qd, n) and is_vector(qdd, n) and tau.shape[0] == n
            and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    rnea(kd, row(q), row(qd), row(qdd), window(fext, 0, (1, fext.shape[0], 6)), use_fext, window(tau, 0, (1, n)),
         status, 0, 1, 1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def rnea_batch(kd, q, qd, qdd, fext, use_fext, tau, status, lanes):
    """States ``(B, n)`` over numba's threads (:func:`.work.units`). Returns 0, or NOT_FAST with
    nothing computed when an array is not of the shape and C layout the kernel indexes."""
    B, n, nq = q.shape[0], kd.shape[0] - 1, q_size(kd)
    if not (is_rows(q, B, nq) and is_rows(qd, B, n) and is_rows(qdd, B, n) and is_rows(tau, B, n)
            and status.shape[0] == B and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            rnea(kd, q, qd, qdd, fext, use_fext, tau, status, start, end, lanes)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"rnea": Entry("inverse dynamics", rnea_one, rnea_batch, ("q", "qd", "qdd"), (1,), per_lane, LANES,
                         fext=True)}
