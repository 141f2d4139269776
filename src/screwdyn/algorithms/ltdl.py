"""Sparse ``L^T D L`` factorization of the mass matrix (Featherstone, RBDA section 6.5; docs/theory.md
§10.2) and its uses: forward dynamics by the composite rigid body route and the inverse mass matrix.

On a tree, ``M_ij != 0`` only when ``i`` and ``j`` lie on one branch (one is an ancestor of the
other): "branch-induced sparsity". Factoring from the tips, ``M = L^T D L`` with ``L`` unit
lower triangular of the same sparsity, so no fill-in and cost ``O(n d^2)`` (``d`` the depth)::

    for k = n-1 .. 0:
        for each strict ancestor i of k (nearest first):
            a = H_ki / H_kk
            for each ancestor-or-self j of i:  H_ij -= a H_kj
            H_ki = a

after which ``D = diag(H)`` and ``L_ki = H_ki`` below the diagonal. Solving ``M x = b``:
``L^T y = b`` (tips to base), ``z = D^{-1} y``, ``L x = z`` (base to tips).

Forward dynamics by CRB (docs/theory.md §10.2, Featherstone's ``FDcrb``)::

    h = RNEA(q, qd, 0, F_ext)          (bias torques: C qd + g - J^T F_ext)
    M = CRBA(q)
    qdd = M^{-1} (tau - h)              (L^T D L solve)

The inverse mass matrix is ``M^{-1} = L^{-1} D^{-1} L^{-T}``: the same solve on the identity, all
columns at once, each row operation on the columns of its branch only (:func:`ltdl_solve_columns`,
``O(n^2 d)``), its upper triangle mirrored so it is exactly symmetric.
"""
import numpy as np
from numba import prange

from .crba import crba
from .internals import (
    GEMM_ONE_THREAD, gemm, lanes_copy, lanes_div, lanes_dot_runs, lanes_fms, lanes_zero, release_gil, restore_gil,
    stack, window,
)
from .layout import PARENT
from .rnea import rnea
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import check, claim, is_rows, is_vector, one_state, overflowed, q_size, row, units

# one-state calls release the GIL from this many DoF (a 32-joint Talos: about 5 us a call; internals.release_gil)
FD_GIL_FROM = 30
# one-state calls release the GIL from this many DoF (a floating Solo12, 18 DoF: 3.7 us a call; internals.release_gil)
GIL_FROM = 20


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies: ``H``, the parents, then RNEA's and CRBA's own
    (one lane)."""
    return n * n + 5 * n + 8 + max(40 * n + 40, n * n + 29 * n + 50)


@njit(**HELPER)
def ltdl_factor(par, H):
    """Factor ``H = M`` in place (lower triangle used; ``par``: the parents as integers, of
    :func:`branch_columns`, so that each step of a walk to the base waits on one load only).
    Returns 0, or SINGULAR when a pivot is not positive (OVERFLOW when it is NaN: the numbers
    overflowed)."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):
        d = H[k, k]
        if not d > 0.0:
            return Status.SINGULAR if d <= 0.0 else Status.OVERFLOW
        i = par[k]
        while i >= 0:
            a = H[k, i] / d
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = par[j]
            H[k, i] = a
            i = par[i]
    return 0


@njit(**HELPER)
def ltdl_solve(par, H, x):
    """Solve ``M x = b`` in place (``x`` holds ``b``) with ``H`` from :func:`ltdl_factor`."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):                 # L^T y = b
        i = par[k]
        while i >= 0:
            x[i] -= H[k, i] * x[k]
            i = par[i]
    for k in range(n):                             # z = D^{-1} y
        x[k] /= H[k, k]
    for k in range(n):                             # L x = z
        i = par[k]
        while i >= 0:
            x[k] -= H[k, i] * x[i]
            i = par[i]


@njit(**HELPER)
def branch_columns(kd, par, first, last):
    """For each row ``k``: ``par[k]`` its parent as an integer, ``first[k]`` the root of its tree
    (the ancestor with no parent: the smallest index among its ancestors) and ``last[k]`` the largest
    index in its subtree. A matrix whose entry ``(k, j)`` is nonzero only for ``j`` an ancestor or
    descendant of ``k`` (``M``, the derivatives of inverse dynamics, the identity) has row ``k``
    inside the columns ``first[k] .. last[k]``, and ``M^{-1}`` times it row ``k`` inside
    ``first[k] .. last[first[k]]`` (``M`` is block diagonal over the trees of a fixed base)."""
    n = par.shape[0]
    for k in range(n):
        p = int(kd[k, PARENT])
        par[k] = p
        first[k] = k if p < 0 else first[p]
        last[k] = k
    for k in range(n - 1, -1, -1):
        p = par[k]
        if p >= 0 and last[k] > last[p]:
            last[p] = last[k]


@njit(**HELPER)
def ltdl_solve_columns(par, first, last, H, X):
    """Solve ``M Y = I`` in place (``X`` holds the identity, then ``Y``'s upper triangle: ``M^{-1}``
    is symmetric) with ``H`` from :func:`ltdl_factor`: :func:`ltdl_solve`'s three sweeps on every
    column at once, each a row operation on the columns where the rows can be nonzero
    (:func:`branch_columns`). Row ``k`` of ``L^{-T}`` is nonzero only on ``k``'s subtree, all of
    whose indices are ``k .. last[k]``, and the last sweep writes columns ``j >= k`` only (it reads
    rows of ancestors ``i < k`` at those columns, already final); the lower triangle is left as the
    first sweeps made it. The rows are sliced to those columns, so that the loops run from 0 and
    vectorise."""
    n = X.shape[0]
    for k in range(n - 1, -1, -1):                 # L^T Y = I: row k holds its subtree's rows
        c0, c1 = k, last[k] + 1
        xk = X[k, c0:c1]
        i = par[k]
        while i >= 0:
            a = H[k, i]
            xi = X[i, c0:c1]
            for j in range(xk.shape[0]):
                xi[j] -= a * xk[j]
            i = par[i]
    for k in range(n):                             # Z = D^{-1} Y (by 1 / D_k: one division a row)
        xk = X[k, k:last[first[k]] + 1]
        r = 1.0 / H[k, k]
        for j in range(xk.shape[0]):
            xk[j] *= r
    for k in range(n):                             # L Y = Z
        c0, c1 = k, last[first[k]] + 1
        xk = X[k, c0:c1]
        i = par[k]
        while i >= 0:
            a = H[k, i]
            xi = X[i, c0:c1]
            for j in range(xk.shape[0]):
                xk[j] -= a * xi[j]
            i = par[i]


@njit(**HELPER)
def ltdl_inverse(par, first, last, H, X):
    """``X = M^{-1} (n, n)`` from ``H`` of :func:`ltdl_factor`: :func:`ltdl_solve_columns` on the
    identity, then the upper triangle mirrored (exactly symmetric)."""
    n = X.shape[0]
    for a in range(n):
        for b in range(n):
            X[a, b] = 0.0
        X[a, a] = 1.0
    ltdl_solve_columns(par, first, last, H, X)
    for a in range(n):
        for b in range(a):
            X[a, b] = X[b, a]


@njit(**HELPER)
def inverse_times(last, X, R, out):
    """``out = -X R`` for ``X = M^{-1}`` (:func:`ltdl_inverse`) and ``R (n, n)`` zero where two joints
    lie on different trees (a matrix of branch-induced sparsity), by BLAS products over each tree's
    block of rows and columns; ``out``'s entries outside the blocks are zero (``out`` another array
    than ``R``). A block is the smallest run of indices that holds whole trees: ``r .. last[r]`` for
    a root ``r``, merged with the runs it overlaps (a forest whose trees' indices interleave).
    ``O(n^3)`` per block, at BLAS' speed (Talos' 32-joint tree: 0.9 us a product against 3.8 us
    for :func:`ltdl_solve_columns`). Returns 0, or -1 where BLAS cannot be loaded."""
    n = R.shape[0]
    r = 0
    while r < n:
        e, k = r + 1, r
        while k < e:
            e = max(e, last[k] + 1)
            k += 1
        for a in range(r, e):
            for b in range(r):
                out[a, b] = 0.0
            for b in range(e, n):
                out[a, b] = 0.0
        s = e - r
        w = max(1, GEMM_ONE_THREAD // (s * s))   # columns per product: one OpenBLAS thread (internals.gemm)
        c = r
        while c < e:
            d = min(e, c + w)
            if gemm(X[r:e, r:e], R[r:e, c:d], out[r:e, c:d], -1.0, 0.0, False):
                return -1
            c = d
        r = e
    return 0


@njit(**HELPER)
def inverse_times_lanes(par, first, last, H, T, Y, X, Z, acc, L):
    """``L`` states side by side (each step one vector operation on the lanes, ``internals.lanes_fms``:
    a lane computes what one state alone does): from ``H (n, n, L)`` holding ``M`` (its lower
    triangle, on each tree's block) and ``T (2, n, n, L)`` holding two matrices ``R_c`` transposed
    (row ``j``: column ``j``; zero off the blocks), ``X = M^{-1}`` (exactly symmetric),
    ``Y = M^{-1} R_0`` and ``Z = M^{-1} R_1``, the factors of ``M`` left in ``H`` (``D_k`` on its
    diagonal: the caller checks them). ``acc (n + 1, L)``: work. ``Y``, ``X``, ``Z`` zero off the blocks
    (the caller's, once)::

        M = L^T D L                               (H, lower triangle; no fill-in)
        Y = L^{-T}, row i on i .. last[i]          (tips to base: y_i = e_i - sum_{k > i in i's subtree} L_ki y_k)
        M^{-1} = L^{-1} D^{-1} Y, upper triangle   (base to tips: x_k = y_k / D_k - sum_{i ancestor of k} L_ki x_i),
                                                   then mirrored
        Y = M^{-1} R_0,  Z = M^{-1} R_1             (dense products over each tree's block)

    ``O(n^3)`` per tree, against ``O(n^2 d)`` for the sparse solves, but every operation on ``L``
    states at once: for small models (docs/performance.md, "Lanes as vectors")."""
    n = H.shape[0]
    nn = n * L
    for l in range(L):
        acc[n, l] = 1.0
    for k in range(n - 1, -1, -1):                                                                     # M = L^T D L
        i = par[k]
        while i >= 0:
            lanes_copy(acc, 0, H, k * nn + i * L, L)                       # a = H_ki / D_k
            lanes_div(acc, 0, H, k * nn + k * L, L)
            j = i
            while j >= 0:
                lanes_fms(H, i * nn + j * L, acc, 0, H, k * nn + j * L, L)   # H_ij -= a H_kj
                j = par[j]
            lanes_copy(H, k * nn + i * L, acc, 0, L)                       # L_ki = a
            i = par[i]
    for i in range(n - 1, -1, -1):                                                                     # Y = L^{-T}
        for j in range(i, last[i] + 1):
            lanes_zero(acc, j * L, L)
        lanes_copy(acc, i * L, acc, n * L, L)
        for k in range(i + 1, last[i] + 1):
            for j in range(k, last[k] + 1):
                lanes_fms(acc, j * L, H, k * nn + i * L, Y, k * nn + j * L, L)
        for j in range(i, last[i] + 1):
            lanes_copy(Y, i * nn + j * L, acc, j * L, L)
    for k in range(n):                                                                                 # M^{-1}
        c1 = last[first[k]] + 1   # (its upper triangle, j >= k: rows i < k are final there)
        for j in range(k, c1):
            lanes_zero(acc, j * L, L)
        for j in range(k, last[k] + 1):
            lanes_copy(acc, j * L, Y, k * nn + j * L, L)
            lanes_div(acc, j * L, H, k * nn + k * L, L)
        i = par[k]
        while i >= 0:
            for j in range(k, c1):
                lanes_fms(acc, j * L, H, k * nn + i * L, X, i * nn + j * L, L)
            i = par[i]
        for j in range(k, c1):
            lanes_copy(X, k * nn + j * L, acc, j * L, L)
        for j in range(first[k], k):                                                                   # symmetric
            lanes_copy(X, k * nn + j * L, X, j * nn + k * L, L)
    for i in range(n):                                                                                 # M^{-1} R_c
        c0, c1 = first[i], last[first[i]] + 1
        j = c0                           # (row i of M^{-1}, columns j of R_c: both on the tree's block)
        while j < c1:
            if j + 4 <= c1:              # four columns at a time: four independent sums
                lanes_dot_runs(Y, i * nn + j * L, L, X, i * nn + c0 * L, L, T, j * nn + c0 * L, L, nn, c1 - c0, 4, L)
                lanes_dot_runs(Z, i * nn + j * L, L, X, i * nn + c0 * L, L, T, n * nn + j * nn + c0 * L, L, nn,
                               c1 - c0, 4, L)
                j += 4
            else:
                lanes_dot_runs(Y, i * nn + j * L, L, X, i * nn + c0 * L, L, T, j * nn + c0 * L, L, nn, c1 - c0, 1, L)
                lanes_dot_runs(Z, i * nn + j * L, L, X, i * nn + c0 * L, L, T, n * nn + j * nn + c0 * L, L, nn,
                               c1 - c0, 1, L)
                j += 1


@njit(**KERNEL)
def fd_crb(kd, q, qd, tau, fext, use_fext, qdd, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q, qd, tau, qdd (B, n)``: ``qdd[k]`` by CRBA and ``L^T D L``
    (RNEA and CRBA run one state, as a batch of one; ``status[k]`` SINGULAR for a singular ``M``)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    H = stack((n, n))
    h = stack((1, n))
    zero = stack((1, n))
    for i in range(n):
        zero[0, i] = 0.0
    one = stack((1,)).view(np.int64)
    par, first, last = stack((n,)).view(np.int64), stack((n,)).view(np.int64), stack((n,)).view(np.int64)
    branch_columns(kd, par, first, last)
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE + 2, tau[k])
        fk = window(fext, k * n * 6, (1, n, 6)) if use_fext else fext
        rnea(kd, window(q, k * nq, (1, nq)), window(qd, k * n, (1, n)), zero, fk, use_fext, h, one, 0, 1, 1)   # h
        if one[0] and (status[k] == 0 or one[0] < status[k]):   # codes follow the arguments: the first wins
            status[k] = one[0]
        if status[k]:
            continue
        crba(kd, window(q, k * nq, (1, nq)), window(H, 0, (1, n, n)), one, 0, 1, 1)                         # M
        status[k] = ltdl_factor(par, H)
        if status[k]:
            continue
        for i in range(n):
            qdd[k, i] = tau[k, i] - h[0, i]
        ltdl_solve(par, H, qdd[k])                                                                     # M qdd = tau - h
        overflowed(status, k, qdd)


@njit(**KERNEL)
def minv(kd, q, Minv, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, n)``: ``Minv[k] = M^{-1} (n, n)``, exactly symmetric."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    H = stack((n, n))
    one = stack((1,)).view(np.int64)
    par, first, last = stack((n,)).view(np.int64), stack((n,)).view(np.int64), stack((n,)).view(np.int64)
    branch_columns(kd, par, first, last)
    for k in range(k0, k1):
        crba(kd, window(q, k * nq, (1, nq)), window(H, 0, (1, n, n)), one, 0, 1, 1)
        status[k] = one[0]
        if status[k] == 0:
            status[k] = ltdl_factor(par, H)
        if status[k]:
            continue
        ltdl_inverse(par, first, last, H, Minv[k])
        overflowed(status, k, Minv)


@njit(**ONE)
def fd_crb_one(kd, q, qd, tau, fext, use_fext, qdd):
    """One state: :func:`fd_crb` on it as a batch of one."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and is_vector(tau, n) and qdd.shape[0] == n
            and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= FD_GIL_FROM)   # a long call lets other threads run
    fd_crb(kd, row(q), row(qd), row(tau), window(fext, 0, (1, fext.shape[0], 6)), use_fext, window(qdd, 0, (1, n)),
           status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**ONE)
def minv_one(kd, q, Minv):
    """One state: :func:`minv` on it as a batch of one."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and Minv.shape[0] == n and Minv.shape[1] == n):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    minv(kd, row(q), window(Minv, 0, (1, n, n)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def fd_crb_batch(kd, q, qd, tau, fext, use_fext, qdd, status):
    """States ``(B, n)`` over numba's threads."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and is_rows(tau, B, n) and is_rows(qdd, B, n)
            and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            fd_crb(kd, q, qd, tau, fext, use_fext, qdd, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**BATCH)
def minv_batch(kd, q, Minv, status):
    """States ``q (B, n)`` over numba's threads."""
    B = q.shape[0]
    if not is_rows(q, B, q_size(kd)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            minv(kd, q, Minv, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {
    "fd_crb": Entry("forward dynamics", fd_crb_one, fd_crb_batch, ("q", "qd", "tau"), (1,), per_lane, fext=True),
    "minv": Entry("the inverse mass matrix", minv_one, minv_batch, ("q",), (2,), per_lane),
}
