"""Composite Rigid Body Algorithm: the joint-space mass matrix ``M(q)`` (Featherstone's ``HandC``).

Bodies as in :mod:`.rnea`: body ``i``'s frame on its joint axis, ``S_i`` its screw axis there,
``X_i = [Ad_{T_{i,p(i)}}]`` the motion transform parent -> ``i``.

Pass 1, forward, ``i = 0 .. n-1``: ``T_{p,i}(q_i)``, ``S_i``, and ``Ic_i = G_i``.

Pass 2, backward, ``i = n-1 .. 0`` (``Ic_i`` is then the composite inertia of the subtree of
``i``: all its descendants have larger indices)::

    F        = Ic_i S_i                         wrench that accelerates the subtree at qdd_i = 1
    M_ii     = S_i^T F + armature_i             reflected rotor inertia on the diagonal (note 004)
    j = i;  while p(j) >= 0:  F = X_j^T F;  j = p(j);  M_ij = M_ji = S_j^T F
    Ic_p(i) += X_i^T Ic_i X_i

Entries of two joints on different branches stay zero. ``M`` is written whole (both triangles,
exactly symmetric). Cost ``O(n d)`` with ``d`` the depth of the tree.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_times, inertia10_transform
from .joints import joint_transform, motion_subspace
from .layout import ARMAT, MASS, PARENT
from .rnea import all_finite
from .spatial_kernels import wrench_to_parent


@njit(cache=True)
def crba_state(kd, q, M, R, p, S, Ic, F):
    """One state: writes ``M (n, n)``. Work: ``R (n,3,3)``, ``p (n,3)``, ``S (n,6)``,
    ``Ic (n, 10)`` composite inertias, ``F (2, 6)``."""
    n = kd.shape[0] - 1
    # Pass 1: joint transforms, screw axes, Ic_i = G_i.
    for i in range(n):
        joint_transform(kd, i, q[i], R[i], p[i])
        motion_subspace(kd, i, S[i])
        for c in range(10):
            Ic[i, c] = kd[i, MASS + c]
        for j in range(n):
            M[i, j] = 0.0
    # Pass 2: composite inertias, tips to base, and the columns of M.
    for i in range(n - 1, -1, -1):
        inertia10_times(Ic[i], S[i], F[0])                      # F = Ic_i S_i
        t = 0.0
        for c in range(6):
            t += S[i, c] * F[0, c]
        M[i, i] = t + kd[i, ARMAT]
        j = i
        a = 0
        while int(kd[j, PARENT]) >= 0:
            for c in range(6):
                F[1 - a, c] = 0.0
            wrench_to_parent(R[j], p[j], F[a], F[1 - a])        # F = X_j^T F
            a = 1 - a
            j = int(kd[j, PARENT])
            t = 0.0
            for c in range(6):
                t += S[j, c] * F[a, c]
            M[i, j] = t
            M[j, i] = t
        par = int(kd[i, PARENT])
        if par >= 0:
            inertia10_transform(R[i], p[i], Ic[i], Ic[par], True)  # Ic_p += X^T Ic_i X


@njit(cache=True)
def _work(n):
    w = np.empty(9 * n + 3 * n + 6 * n + 10 * n + 12)
    R = w[: 9 * n].reshape((n, 3, 3))
    p = w[9 * n: 12 * n].reshape((n, 3))
    S = w[12 * n: 18 * n].reshape((n, 6))
    Ic = w[18 * n: 28 * n].reshape((n, 10))
    F = w[28 * n:].reshape((2, 6))
    return R, p, S, Ic, F


@njit(cache=True)
def crba(kd, q, M):
    """One state: ``M (n, n)``. Returns 0, or 1 when ``q`` holds a NaN or inf (``M`` untouched)."""
    if not all_finite(q):
        return 1
    R, p, S, Ic, F = _work(kd.shape[0] - 1)
    crba_state(kd, q, M, R, p, S, Ic, F)
    return 0


@njit(cache=True, parallel=True)
def crba_batch(kd, q, M, status, chunks):
    """States ``q[k] -> M[k]`` for ``k < B`` over ``chunks`` work units; ``status[k]`` as :func:`crba`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    for c in prange(chunks):
        R, p, S, Ic, F = _work(n)
        for k in range(c * B // chunks, (c + 1) * B // chunks):
            if not all_finite(q[k]):
                status[k] = 1
            else:
                status[k] = 0
                crba_state(kd, q[k], M[k], R, p, S, Ic, F)
