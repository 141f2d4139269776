"""The joint-torque regressor ``Y(q, qd, qdd)`` with ``tau = Y pi``, by a Newton-Euler recursion
(docs/theory.md §12): inverse dynamics is linear in the inertial parameters. Per body ``i``
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
from numba import prange

from .internals import release_gil, restore_gil, stack, window
from .joints import joint_pose, joint_screw, joint_velocity
from .layout import GRAVITY, PARENT
from .rnea import body_motion
from .spatial_kernels import twist_to_child
from .entry import I64, Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import check, claim, get6, get12, is_rows, is_vector, one_state, overflowed, q_size, put, row, units

# one-state calls release the GIL from this many DoF (panda, 9 joints: 2.9 us a call; internals.release_gil)
GIL_FROM = 12

ARMATURE = 1
VISCOUS = 2
COULOMB = 4


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies."""
    return 6 * n * n + 24 * n + 100


@njit(**HELPER)
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


@njit(**KERNEL)
def regressor(kd, q, qd, qdd, extras, Y, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q, qd, qdd (B, n)``: ``Y[k] (n, ncols)`` (columns as in the
    module docstring; ``extras`` the sum of ARMATURE, VISCOUS, COULOMB asked for)."""
    n = kd.shape[0] - 1
    V = stack((n + 1, 12, 1))       # V_i, then dV_i; row n: the base
    Jc = stack((n, n, 6, 1))        # Jc[i, j] = J_{i,j}
    A = stack((10, 6))
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        check(status, k, Status.NONFINITE + 1, qd[k])
        check(status, k, Status.NONFINITE + 2, qdd[k])
        if status[k]:
            continue
        for r in range(n):
            for c in range(Y.shape[2]):
                Y[k, r, c] = 0.0
        put(V[n], 0, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -kd[n, GRAVITY], -kd[n, GRAVITY + 1],
                      -kd[n, GRAVITY + 2]))                                # V_0 = 0, dV_0 = (0, -g)
        for i in range(n):
            par = int(kd[i, PARENT])
            T = joint_pose(kd, i, q[k])
            S = joint_screw(kd, i)
            Vp = get12(V[par], 0)
            Vi, Ai = body_motion(T, S, joint_velocity(kd, i, S, qd[k]), qd[k, i], qdd[k, i], Vp[:6], Vp[6:])
            put(V[i], 0, Vi + Ai)
            put(Jc[i, i], 0, S)                                          # J_{i,i} = S_i
            j = par
            while j >= 0:
                put(Jc[i, j], 0, twist_to_child(T, get6(Jc[par, j], 0)))   # J_{i,j} = Ad J_{p,j}
                j = int(kd[j, PARENT])
            body_regressor(Vi, Ai, A)                                     # F_i = A_i pi_i
            j = i
            while j >= 0:
                Jij = get6(Jc[i, j], 0)
                for p in range(10):                                      # Y_{j, i} = J_{i,j}^T A_i
                    Y[k, j, 10 * i + p] = (Jij[0] * A[p, 0] + Jij[1] * A[p, 1] + Jij[2] * A[p, 2]
                                           + Jij[3] * A[p, 3] + Jij[4] * A[p, 4] + Jij[5] * A[p, 5])
                j = int(kd[j, PARENT])
        col = 10 * n                                                     # armature qdd_i, viscous qd_i,
        if extras & ARMATURE:                                            # Coulomb sign(qd_i)
            for i in range(n):
                Y[k, i, col + i] = qdd[k, i]
            col += n
        if extras & VISCOUS:
            for i in range(n):
                Y[k, i, col + i] = qd[k, i]
            col += n
        if extras & COULOMB:
            for i in range(n):
                Y[k, i, col + i] = (qd[k, i] > 0.0) - (qd[k, i] < 0.0)
        overflowed(status, k, Y)


@njit(**ONE)
def regressor_one(kd, q, qd, qdd, extras, Y):
    """One state: :func:`regressor` on it as a batch of one."""
    n = kd.shape[0] - 1
    ncols = n * (10 + (extras & ARMATURE > 0) + (extras & VISCOUS > 0) + (extras & COULOMB > 0))
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and is_vector(qdd, n) and Y.shape[0] == n and Y.shape[1] == ncols):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    regressor(kd, row(q), row(qd), row(qdd), extras, window(Y, 0, (1, n, Y.shape[1])), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def regressor_batch(kd, q, qd, qdd, extras, Y, status):
    """States ``q, qd, qdd (B, n)`` over numba's threads."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and is_rows(qdd, B, n)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            regressor(kd, q, qd, qdd, extras, Y, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"regressor": Entry("the regressor", regressor_one, regressor_batch, ("q", "qd", "qdd"), (2,), per_lane,
                              params=(I64,))}
