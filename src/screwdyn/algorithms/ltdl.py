"""Sparse ``L^T D L`` factorization of the mass matrix (Featherstone, RBDA section 6.5) and its
uses: forward dynamics by the composite rigid body route and the inverse mass matrix.

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

Forward dynamics by CRB (note 002, Featherstone's ``FDcrb``)::

    h = RNEA(q, qd, 0, F_ext)          (bias torques: C qd + g - J^T F_ext)
    M = CRBA(q)
    qdd = M^{-1} (tau - h)              (L^T D L solve)

The inverse mass matrix is ``M^{-1} = L^{-1} D^{-1} L^{-T}``, built column by column by the
same solve (``O(n^2 d)``), its upper triangle mirrored so it is exactly symmetric.
"""
import numpy as np
from numba import njit, prange

from . import crba as _crba
from . import rnea as _rnea
from .layout import PARENT
from .rnea import nonfinite_code
from .work import thread_chunks


@njit(cache=True)
def ltdl_factor(kd, H):
    """Factor ``H = M`` in place (lower triangle used). Returns 0, or 5 when a pivot is not
    positive (a singular mass matrix)."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):
        d = H[k, k]
        if not d > 0.0:
            return 5
        i = int(kd[k, PARENT])
        while i >= 0:
            a = H[k, i] / d
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = int(kd[j, PARENT])
            H[k, i] = a
            i = int(kd[i, PARENT])
    return 0


@njit(cache=True)
def ltdl_solve(kd, H, x):
    """Solve ``M x = b`` in place (``x`` holds ``b``) with ``H`` from :func:`ltdl_factor`."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):                 # L^T y = b
        i = int(kd[k, PARENT])
        while i >= 0:
            x[i] -= H[k, i] * x[k]
            i = int(kd[i, PARENT])
    for k in range(n):                             # z = D^{-1} y
        x[k] /= H[k, k]
    for k in range(n):                             # L x = z
        i = int(kd[k, PARENT])
        while i >= 0:
            x[k] -= H[k, i] * x[i]
            i = int(kd[i, PARENT])


@njit(cache=True)
def fd_crb_state(kd, q, qd, tau, fext, use_fext, qdd, H, zero, wr, wc):
    """One state: ``qdd`` by CRBA + ``L^T D L``. ``H (n,n)``, ``zero (n,)`` zeros; ``wr``, ``wc``:
    RNEA and CRBA work arrays. Returns 0 or 5 (singular)."""
    n = kd.shape[0] - 1
    W, V, dV, F = wr
    _rnea.rnea_state(kd, q, qd, zero, fext, use_fext, qdd, W, V, dV, F)  # qdd <- h
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    Rc, pc, Sc, Ic, Fc = wc
    _crba.crba_state(kd, q, H, Rc, pc, Sc, Ic, Fc)
    code = ltdl_factor(kd, H)
    if code:
        return code
    ltdl_solve(kd, H, qdd)
    return 0


@njit(cache=True)
def _fd_work(n):
    return np.empty((n, n)), np.zeros(n), _rnea._work(n), _crba._work(n)


@njit(cache=True)
def fd_crb(kd, q, qd, tau, fext, qdd, use_fext):
    """One state; returns 0, 1/2/3 for a NaN or inf in q/qd/tau, 4 in fext, 5 when singular."""
    code = nonfinite_code(q, qd, tau, fext, use_fext)
    if code:
        return code
    H, zero, wr, wc = _fd_work(kd.shape[0] - 1)
    return fd_crb_state(kd, q, qd, tau, fext, use_fext, qdd, H, zero, wr, wc)


@njit(cache=True, parallel=True)
def fd_crb_batch(kd, q, qd, tau, fext, use_fext, qdd, status):
    """Batch of :func:`fd_crb`, one set of work arrays per chunk."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    chunks = thread_chunks(B)
    for ch in prange(chunks):
        H, zero, wr, wc = _fd_work(n)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            fk = fext[k] if use_fext else fext[0]
            status[k] = nonfinite_code(q[k], qd[k], tau[k], fk, use_fext)
            if status[k] == 0:
                status[k] = fd_crb_state(kd, q[k], qd[k], tau[k], fk, use_fext, qdd[k], H, zero, wr, wc)


@njit(cache=True)
def minv_state(kd, q, Minv, H, wc):
    """One state: ``Minv (n, n) = M(q)^{-1}``. Returns 0 or 5 (singular)."""
    n = kd.shape[0] - 1
    Rc, pc, Sc, Ic, Fc = wc
    _crba.crba_state(kd, q, H, Rc, pc, Sc, Ic, Fc)
    code = ltdl_factor(kd, H)
    if code:
        return code
    for c in range(n):
        x = Minv[c]                                # row c = column c (symmetric)
        for k in range(n):
            x[k] = 0.0
        x[c] = 1.0
        ltdl_solve(kd, H, x)
    for a in range(n):                             # mirror the upper triangle: exact symmetry
        for b in range(a):
            Minv[a, b] = Minv[b, a]
    return 0


@njit(cache=True)
def minv(kd, q, Minv):
    """One state; returns 0, 1 for a NaN or inf in ``q``, 5 when singular."""
    code = nonfinite_code(q)
    if code:
        return code
    n = kd.shape[0] - 1
    return minv_state(kd, q, Minv, np.empty((n, n)), _crba._work(n))


@njit(cache=True, parallel=True)
def minv_batch(kd, q, Minv, status):
    """Batch of :func:`minv`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    chunks = thread_chunks(B)
    for ch in prange(chunks):
        H = np.empty((n, n))
        wc = _crba._work(n)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            status[k] = nonfinite_code(q[k])
            if status[k] == 0:
                status[k] = minv_state(kd, q[k], Minv[k], H, wc)
