"""The centroidal momentum matrix ``A_G(q)``: ``h_G = A_G(q) qd``, the robot's spatial momentum
about its centre of mass in world-aligned axes, angular first ``(k_G, l)`` (docs/theory.md eq. (11.6);
Orin, Goswami and Lee 2013, Pinocchio's ``computeCentroidalMap`` with its halves swapped).

In the base frame {0}, with ``Y_i`` body ``i``'s spatial inertia in {0} and ``J_k =
[Ad_{T_{0,k}}] S_k`` the space-Jacobian column of row ``k`` (:mod:`.coriolis`), the momentum about
the origin is ``sum_i Y_i V_i = sum_k Yc_k J_k qd_k``, ``Yc_k = sum_{i in subtree(k)} Y_i`` (the
composite inertia, summed tips to base). Moved to the centre of mass ``c = (sum m_i c_i) / m``::

    A_G[:, k] = (n_k + f_k x c, f_k),     (n_k, f_k) = Yc_k J_k

The kernel takes one state at a time (:mod:`.work`).
"""
import numpy as np
from numba import prange

from .entry import Entry
from .inertia_kernels import body_inertia, inertia_apply, inertia_transform
from .internals import release_gil, restore_gil, stack, window
from .joints import joint_screw
from .kinematics import world_poses
from .layout import PARENT
from .spatial_kernels import twist_to_world
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import add, check, claim, get10, get12, is_rows, is_vector, one_state, overflowed, put, q_size, row, units

# one-state calls release the GIL from this many DoF (a floating Talos, 50 DoF: 5.0 us a call; internals.release_gil)
GIL_FROM = 48


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies."""
    return 22 * (n + 1) + 12


@njit(**KERNEL)
def centroidal(kd, q, Ag, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, nq)``: ``Ag[k] (6, n)`` as in the module docstring."""
    n = kd.shape[0] - 1
    Tw = stack((n + 1, 12, 1))
    Yc = stack((n + 1, 10, 1))       # row n: the whole robot
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        if status[k]:
            continue
        world_poses(kd, q[k], Tw)
        put(Yc[n], 0, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        for i in range(n):
            T = get12(Tw[i], 0)
            put(Yc[i], 0, inertia_transform(T[:9], T[9:], body_inertia(kd, i)))   # Y_i in {0}
        for i in range(n - 1, -1, -1):                                             # Yc_p += Yc_i
            par = int(kd[i, PARENT])
            add(Yc[par if par >= 0 else n], 0, get10(Yc[i], 0))
        Y = get10(Yc[n], 0)
        m = Y[0]
        c0, c1, c2 = (Y[1] / m, Y[2] / m, Y[3] / m) if m > 0.0 else (0.0, 0.0, 0.0)
        for i in range(n):
            n0, n1, n2, f0, f1, f2 = inertia_apply(get10(Yc[i], 0), twist_to_world(get12(Tw[i], 0), joint_screw(kd, i)))
            Ag[k, 0, i] = n0 + (f1 * c2 - f2 * c1)
            Ag[k, 1, i] = n1 + (f2 * c0 - f0 * c2)
            Ag[k, 2, i] = n2 + (f0 * c1 - f1 * c0)
            Ag[k, 3, i], Ag[k, 4, i], Ag[k, 5, i] = f0, f1, f2
        overflowed(status, k, Ag)


@njit(**ONE)
def centroidal_one(kd, q, Ag):
    """One state: :func:`centroidal` on it as a batch of one."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and Ag.shape[0] == 6 and Ag.shape[1] == n):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    centroidal(kd, row(q), window(Ag, 0, (1, 6, n)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def centroidal_batch(kd, q, Ag, status):
    """States ``q (B, nq)`` over numba's threads."""
    B = q.shape[0]
    if not is_rows(q, B, q_size(kd)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            centroidal(kd, q, Ag, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"centroidal": Entry("the centroidal momentum matrix", centroidal_one, centroidal_batch, ("q",), (2,),
                               per_lane)}
