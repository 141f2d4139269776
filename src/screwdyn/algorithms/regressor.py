"""The joint-torque regressor ``Y(q, qd, qdd)`` with ``tau = Y pi``, by a Newton-Euler recursion.

Note 002 (last section): inverse dynamics is linear in the inertial parameters. Per body ``i``
(frame on its joint axis, all quantities in that frame) the parameters are::

    pi_i = (m, h_x, h_y, h_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz)      h = m c,  I = I_o

with ``I_o`` the rotational inertia about the body frame's origin (the packed columns ``MASS``,
``MCOM``, ``IORG`` of :mod:`.layout`, in the same order). The columns of ``Y`` are the ``10 n``
inertial ones, body by body, then ``n`` per joint for each extra asked for by ``extras``
(bit 1: armature ``qdd_i``; bit 2: viscous ``qd_i``; bit 4: Coulomb ``sign(qd_i)``), in that order.

One forward pass, ``i = 0 .. n-1``, as the RNEA's first (base ``V = 0``, ``dV = (0, -g)``)::

    V_i  = [Ad_{T_{i,p}}] V_p  + S_i qd_i
    dV_i = [Ad_{T_{i,p}}] dV_p + [ad_{V_i}] S_i qd_i + S_i qdd_i

The body wrench ``F_i = G_i dV_i - [ad_{V_i}]^T G_i V_i`` is linear in ``pi_i``: with
``V_i = (w, v)``, ``dV_i = (dw, dv)`` and the classical acceleration of the origin ``a = dv + w x v``::

    n_i = I dw + w x (I w) + h x a   = L(dw) I + [w] L(w) I - [a] h
    f_i = m a + dw x h + w x (w x h) = a m + ([dw] + [w][w]) h

so ``F_i = A_i pi_i`` with the ``6 x 10`` body regressor (``L(x) I = I x`` for the six entries)::

    A_i = [[ 0, -[a],             L(dw) + [w] L(w) ],
           [ a, [dw] + [w][w],    0                ]]

and, in the same pass, the columns of body ``i``'s Jacobian for each ancestor ``j`` (the joint
axes of its path to the base, written in body ``i``'s frame)::

    J_{i,i} = S_i        J_{i,j} = [Ad_{T_{i,p}}] J_{p,j}   (j an ancestor of p = p(i))

Then ``tau = sum_i J_i^T F_i`` (the RNEA's backward pass ``tau_j = S_j^T F_j``,
``F_p += [Ad]^T F_j``, unrolled) gives the regressor block by block::

    Y[j, 10 i : 10 i + 10] = J_{i,j}^T A_i      for j on the path of i, 0 otherwise

Only ancestors of ``i`` get a nonzero block: the rest stay 0.
"""
import numpy as np
from numba import njit, prange

from .joints import joint_transform, motion_subspace
from .layout import GRAVITY, PARENT
from .rnea import nonfinite_code
from .spatial_kernels import bracket_add, twist_to_child
from .work import thread_chunks

ARMATURE = 1
VISCOUS = 2
COULOMB = 4


@njit(cache=True, inline="always")
def body_regressor(V, dV, A):
    """Write the body regressor ``A_i`` (note the storage: ``A[k]`` is the wrench ``(n, f)`` of
    parameter ``k``, i.e. column ``k`` of the 6 x 10 matrix) for twist ``V`` and acceleration ``dV``."""
    w0, w1, w2 = V[0], V[1], V[2]
    dw0, dw1, dw2 = dV[0], dV[1], dV[2]
    # a = dv + w x v
    a0 = dV[3] + w1 * V[5] - w2 * V[4]
    a1 = dV[4] + w2 * V[3] - w0 * V[5]
    a2 = dV[5] + w0 * V[4] - w1 * V[3]
    for k in range(10):
        for c in range(6):
            A[k, c] = 0.0
    # mass column: (0, a)
    A[0, 3] = a0
    A[0, 4] = a1
    A[0, 5] = a2
    # h columns: n = -[a] h, f = ([dw] + [w][w]) h; column k is the image of unit vector e_k
    # [a] e_x = (0, a2, -a1), [a] e_y = (-a2, 0, a0), [a] e_z = (a1, -a0, 0)
    A[1, 1] = -a2
    A[1, 2] = a1
    A[2, 0] = a2
    A[2, 2] = -a0
    A[3, 0] = -a1
    A[3, 1] = a0
    # [dw] + [w][w] = [dw] + w w^T - |w|^2 I_3
    ww = w0 * w0 + w1 * w1 + w2 * w2
    A[1, 3] = w0 * w0 - ww
    A[1, 4] = dw2 + w1 * w0
    A[1, 5] = -dw1 + w2 * w0
    A[2, 3] = -dw2 + w0 * w1
    A[2, 4] = w1 * w1 - ww
    A[2, 5] = dw0 + w2 * w1
    A[3, 3] = dw1 + w0 * w2
    A[3, 4] = -dw0 + w1 * w2
    A[3, 5] = w2 * w2 - ww
    # inertia columns, entries (xx, xy, xz, yy, yz, zz): I x = L(x) I with
    # L(x) = [[x0, x1, x2, 0, 0, 0], [0, x0, 0, x1, x2, 0], [0, 0, x0, 0, x1, x2]];
    # n = L(dw) I + w x (L(w) I): column k holds L(dw) e_k + w x (L(w) e_k).
    for k in range(6):
        # L(x) e_k = (l0, l1, l2) for x = dw and x = w
        if k == 0:
            d0, d1, d2, u0, u1, u2 = dw0, 0.0, 0.0, w0, 0.0, 0.0
        elif k == 1:
            d0, d1, d2, u0, u1, u2 = dw1, dw0, 0.0, w1, w0, 0.0
        elif k == 2:
            d0, d1, d2, u0, u1, u2 = dw2, 0.0, dw0, w2, 0.0, w0
        elif k == 3:
            d0, d1, d2, u0, u1, u2 = 0.0, dw1, 0.0, 0.0, w1, 0.0
        elif k == 4:
            d0, d1, d2, u0, u1, u2 = 0.0, dw2, dw1, 0.0, w2, w1
        else:
            d0, d1, d2, u0, u1, u2 = 0.0, 0.0, dw2, 0.0, 0.0, w2
        A[4 + k, 0] = d0 + w1 * u2 - w2 * u1
        A[4 + k, 1] = d1 + w2 * u0 - w0 * u2
        A[4 + k, 2] = d2 + w0 * u1 - w1 * u0


@njit(cache=True)
def regressor_state(kd, q, qd, qdd, extras, Y, R, p, S, V, dV, Jc, A):
    """One state: writes ``Y (n, ncols)``. Work arrays: ``R (n,3,3)``, ``p (n,3)``, ``S (n,6)``,
    ``V, dV (n+1, 6)`` with the base in the last row, ``Jc (n, n, 6)`` (``Jc[i, j] = J_{i,j}``),
    ``A (10, 6)``."""
    n = kd.shape[0] - 1
    for c in range(6):
        V[n, c] = 0.0
        dV[n, c] = 0.0
    for c in range(3):
        dV[n, 3 + c] = -kd[n, GRAVITY + c]  # dV_0 = (0, -g)
    for r in range(n):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0

    # One forward pass, base to tips.
    for i in range(n):
        par = int(kd[i, PARENT])
        joint_transform(kd, i, q[i], R[i], p[i])
        motion_subspace(kd, i, S[i])
        twist_to_child(R[i], p[i], V[par], V[i])                 # V_i = Ad V_p + S_i qd_i
        twist_to_child(R[i], p[i], dV[par], dV[i])               # dV_i = Ad dV_p + S_i qdd_i + [ad_V_i] S_i qd_i
        for c in range(6):
            V[i, c] += S[i, c] * qd[i]
            dV[i, c] += S[i, c] * qdd[i]
            Jc[i, i, c] = S[i, c]                                # J_{i,i} = S_i
        bracket_add(V[i], S[i], qd[i], dV[i])
        j = par
        while j >= 0:
            twist_to_child(R[i], p[i], Jc[par, j], Jc[i, j])     # J_{i,j} = Ad J_{p,j}
            j = int(kd[j, PARENT])
        body_regressor(V[i], dV[i], A)                           # F_i = A_i pi_i
        j = i
        while j >= 0:
            for k in range(10):
                t = 0.0
                for c in range(6):
                    t += Jc[i, j, c] * A[k, c]
                Y[j, 10 * i + k] = t                             # Y_{j, i} = J_{i,j}^T A_i
            j = int(kd[j, PARENT])

    # Per-joint columns: armature qdd_i, viscous qd_i, Coulomb sign(qd_i).
    col = 10 * n
    if extras & ARMATURE:
        for i in range(n):
            Y[i, col + i] = qdd[i]
        col += n
    if extras & VISCOUS:
        for i in range(n):
            Y[i, col + i] = qd[i]
        col += n
    if extras & COULOMB:
        for i in range(n):
            Y[i, col + i] = (qd[i] > 0.0) - (qd[i] < 0.0)
        col += n


@njit(cache=True)
def _work(n):
    """Work arrays for one state, carved out of one allocation."""
    w = np.empty(18 * n + 12 * (n + 1) + 6 * n * n + 60)
    R = w[: 9 * n].reshape((n, 3, 3))
    p = w[9 * n: 12 * n].reshape((n, 3))
    S = w[12 * n: 18 * n].reshape((n, 6))
    o = 18 * n
    V = w[o: o + 6 * (n + 1)].reshape((n + 1, 6))
    dV = w[o + 6 * (n + 1): o + 12 * (n + 1)].reshape((n + 1, 6))
    o += 12 * (n + 1)
    Jc = w[o: o + 6 * n * n].reshape((n, n, 6))
    A = w[o + 6 * n * n:].reshape((10, 6))
    return R, p, S, V, dV, Jc, A


@njit(cache=True)
def regressor(kd, q, qd, qdd, extras, Y):
    """One state. Returns 0, or 1/2/3 when q/qd/qdd holds a NaN or inf (then ``Y`` is untouched)."""
    code = nonfinite_code(q, qd, qdd)
    if code:
        return code
    R, p, S, V, dV, Jc, A = _work(kd.shape[0] - 1)
    regressor_state(kd, q, qd, qdd, extras, Y, R, p, S, V, dV, Jc, A)
    return 0


@njit(cache=True, parallel=True)
def regressor_batch(kd, q, qd, qdd, extras, Y, status):
    """States ``k < B``: ``Y[k] (n, ncols)``; one set of work arrays per chunk, none per state.
    ``status[k]`` as :func:`regressor`."""
    B = q.shape[0]
    n = kd.shape[0] - 1
    chunks = thread_chunks(B)
    for c in prange(chunks):
        R, p, S, V, dV, Jc, A = _work(n)
        for k in range(c * B // chunks, (c + 1) * B // chunks):
            status[k] = nonfinite_code(q[k], qd[k], qdd[k])
            if status[k] == 0:
                regressor_state(kd, q[k], qd[k], qdd[k], extras, Y[k], R, p, S, V, dV, Jc, A)

