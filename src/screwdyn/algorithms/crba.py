"""Composite Rigid Body Algorithm: the joint-space mass matrix ``M(q)`` (docs/theory.md §8;
Featherstone's ``HandC``).

Each body's quantities are expressed in a world-aligned frame at its origin: frame ``{i}`` sits at
``p_i`` with the axes of the base (``T_{0,i} = (R_i, p_i)``, offset ``r_i = p_i - p_p(i) =
R_p(i) p_{p(i),i}``), so rotations are applied once per body and a wrench moves to the parent by
the pure translation ``X_i^T F = (n + r_i x f, f)``, while lever arms stay body-sized (entries of
``M`` as accurate as in body frames; one world origin would lose digits on small distal bodies).

Pass 1, forward, ``i = 0 .. n-1``::

    R_i   = R_p R_{p,i}(q_i),   r_i = R_p p_{p,i},   J_i = (R_i s_w, R_i s_v)
    Ic_i  = G_i in world axes

Pass 2, backward, ``i = n-1 .. 0`` (``Ic_i`` is then the composite inertia of the subtree of
``i``: all its descendants have larger indices)::

    F        = Ic_i J_i                       the wrench that accelerates the subtree at qdd_i = 1
    M_ii     = J_i^T F + armature_i           reflected rotor inertia on the diagonal
    j = i;  while p(j) >= 0:  F = X_j^T F;  j = p(j);  M_ij = M_ji = J_j^T F
    Ic_p(i) += X_i^T Ic_i X_i                 a translation of a ten-number inertia

Entries of two joints on different branches stay zero; ``M`` is written whole, exactly symmetric.
Cost ``O(n d)``, ``d`` the depth of the tree. ``L`` states run side by side (:mod:`.work`).
"""
import numpy as np
from numba import prange

from .inertia_kernels import body_inertia, inertia_apply, inertia_rotate, inertia_shift, massless
from .internals import dot6, release_gil, restore_gil, scratch, stack, window
from .joints import in_parent_frame, joint_poses, joint_screw
from .layout import ARMAT, PARENT
from .spatial_kernels import aligned, aligned_in_parent, translate_wrench
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import (
    STACK_LIMIT, add, claim, copy_lanes, flat, get3, get6, get9, get10, get12, is_rows, is_vector, lanes_of, q_size, load, put,
    row, store, units, zero_lanes,
)

LANES = 16
# one-state calls release the GIL from this many DoF (Talos, 44 joints: 4.4 us a call; internals.release_gil)
GIL_FROM = 40
ZERO10 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies."""
    return n * n + 31 * n + 50


@njit(**HELPER)
def joint_row(J, F):
    """``J^T F``: one entry of ``M`` (six numbers each)."""
    return dot6(J[0], J[1], J[2], J[3], J[4], J[5], F[0], F[1], F[2], F[3], F[4], F[5])


@njit(**HELPER)
def put_body(R, r, J, Ic, l, Ri, ri, Ji, I, empty):
    """Pass 1's numbers of body ``i`` into lane ``l`` of its rows of the work arrays: ``R_i``, ``r_i``,
    ``J_i`` and its inertia in world axes (zero when the body is ``empty``: no inertia)."""
    put(R, l, Ri)
    put(r, l, ri)
    put(J, l, Ji)
    put(Ic, l, ZERO10 if empty else inertia_rotate(Ri, I))


@njit(**KERNEL)
def crba(kd, q, M, status, k0, k1, lanes):
    """States ``k0 <= k < k1`` of ``q (B, n)``: ``M[k] (n, n)`` and ``status[k]``, ``lanes`` (a
    compile-time constant) at a time."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    L = lanes
    Q = stack((nq, L))
    R = stack((n + 1, 9, L))   # R_i row-major; row n: the base
    r = stack((n, 3, L))
    J = stack((n, 6, L))
    Ic = stack((n, 10, L))     # composite inertias
    Mw = stack((n, n, L))      # the lanes' M (lanes_of: with one lane, M's row itself)
    A = scratch(9, lanes)      # the parent's axes
    G = scratch(10, lanes)     # the child's composite inertia
    F = scratch(6, lanes)
    W = scratch(12, lanes)
    SC = scratch(2, lanes)
    bad = stack((L,)).view(np.int64)
    P = stack((n,)).view(np.int64)   # the parents as integers (the ancestor walks read them)
    for i in range(n):
        P[i] = int(kd[i, PARENT])
    E = stack((n,)).view(np.int64)   # 1 where row i sits in its parent's frame (r_i = 0: X_i = 1)
    for i in range(n):
        E[i] = 1 if in_parent_frame(kd, i) else 0
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            bad[l] = 0
        load(q, b, m, Q, bad, Status.NONFINITE)
        for l in range(m):
            put(R[n], l, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
        Ml = lanes_of(Mw, M, b)
        zero_lanes(Ml, m)

        # Pass 1: axes, offsets, joint axes and inertias in world axes.
        for i in range(n):
            joint_poses(kd, i, Q, SC, W, m)
            copy_lanes(R[int(kd[i, PARENT])], A, m)
            S = joint_screw(kd, i)
            I = body_inertia(kd, i)
            if E[i]:                      # R_i = R_p, r_i = 0; such rows are mostly massless
                empty = massless(kd, i)
                for l in range(m):
                    Ri, ri, Ji = aligned_in_parent(get9(A, l), S)
                    put_body(R[i], r[i], J[i], Ic[i], l, Ri, ri, Ji, I, empty)
            else:
                for l in range(m):
                    Ri, ri, Ji = aligned(get9(A, l), get12(W, l), S)
                    put_body(R[i], r[i], J[i], Ic[i], l, Ri, ri, Ji, I, False)

        # Pass 2: composite inertias, tips to base, and the rows of M.
        for i in range(n - 1, -1, -1):
            arm = kd[i, ARMAT]
            copy_lanes(Ic[i], G, m)
            for l in range(m):
                Ji = get6(J[i], l)
                Fi = inertia_apply(get10(G, l), Ji)
                Ml[i, i, l] = joint_row(Ji, Fi) + arm
                put(F, l, Fi)
            j = i
            par = P[j]
            while par >= 0:
                if E[j]:
                    for l in range(m):
                        Ml[i, par, l] = Ml[par, i, l] = joint_row(get6(J[par], l), get6(F, l))
                else:
                    for l in range(m):
                        Fj = translate_wrench(get3(r[j], l), get6(F, l))   # F = X_j^T F
                        put(F, l, Fj)
                        Ml[i, par, l] = Ml[par, i, l] = joint_row(get6(J[par], l), Fj)
                j = par
                par = P[j]
            par = P[i]
            if par >= 0:
                if E[i]:
                    for l in range(m):
                        add(Ic[par], l, get10(G, l))
                else:
                    for l in range(m):
                        add(Ic[par], l, inertia_shift(get3(r[i], l), get10(G, l)))
        store(window(Ml, 0, (n * n, L)), b, m, flat(M), status, bad)


@njit(**ONE)
def crba_one(kd, q, M):
    """One state: :func:`crba` on it as a batch of one (see :func:`.rnea.rnea_one`)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    if not (is_vector(q, nq) and M.shape[0] == n and M.shape[1] == n):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    crba(kd, row(q), window(M, 0, (1, n, n)), status, 0, 1, 1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def crba_batch(kd, q, M, status, lanes):
    """States ``q (B, n) -> M (B, n, n)`` over numba's threads, as :func:`.rnea.rnea_batch`."""
    B, n, nq = q.shape[0], kd.shape[0] - 1, q_size(kd)
    if not (is_rows(q, B, nq) and M.shape[0] == B and M.shape[1] == n and M.shape[2] == n and status.shape[0] == B):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            crba(kd, q, M, status, start, end, lanes)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"crba": Entry("the mass matrix", crba_one, crba_batch, ("q",), (2,), per_lane, LANES)}
