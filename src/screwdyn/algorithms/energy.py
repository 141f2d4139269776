"""Energies, centre of mass and spatial momentum of the whole tree, in one forward pass
(docs/theory.md §11).

With body twists ``V_i`` in body frames (RNEA's forward pass, :func:`.rnea.body_motion`) and
world poses ``T_{0,i} = (R_i, p_i)`` (:func:`.kinematics.world_poses`)::

    KE  = 1/2 sum_i V_i^T G_i V_i + 1/2 sum_i armature_i qd_i^2   (= 1/2 qd^T M qd)
    mc  = sum_i (m_i p_i + R_i h_i)                             (first moment, h_i = m_i c_i)
    U   = -g^T mc = -sum_i m_i g^T c_i^0                        (Pinocchio's convention)
    P   = sum_i [Ad_{T_{i,0}}]^T G_i V_i                        (momentum (angular, linear) about {0}'s origin)
    c   = mc / sum_i m_i                                        (centre of mass; 0 for a massless tree)

The rotors' kinetic energy ``1/2 armature qd^2`` is in ``KE`` (as in Pinocchio's
``computeKineticEnergy``) but not in the momentum ``P`` (a rotor is modelled by its reflected
inertia only, with no spin axis in space). Output per state: ``KE, U, mc (3), P (6), c (3)`` (the
centre of mass here, not by numpy after: a division of 3 numbers costs numpy 0.5 us).
"""
import numpy as np
from numba import prange

from .inertia_kernels import body_inertia, inertia_apply
from .internals import dot3, dot6, release_gil, restore_gil, stack, window
from .joints import joint_pose, joint_screw, joint_velocity
from .kinematics import world_poses
from .layout import ARMAT, GRAVITY, MASS, MCOM, PARENT
from .rnea import body_motion
from .spatial_kernels import wrench_to_parent
from .entry import Entry
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import check, claim, get6, get12, is_rows, is_vector, one_state, overflowed, q_size, put, row, units

# one-state calls release the GIL from this many DoF (Talos, 44 joints: 3.9 us a call; internals.release_gil)
GIL_FROM = 48

OUTPUTS = 14   # KE, U, mc (3), P (6), c (3)


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies."""
    return 18 * (n + 1) + 12


@njit(**KERNEL)
def energy(kd, q, qd, out, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q, qd (B, n)``: ``out[k] (14,)`` as in the module docstring."""
    n = kd.shape[0] - 1
    Tw = stack((n + 1, 12, 1))
    V = stack((n + 1, 6, 1))
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        check(status, k, Status.NONFINITE + 1, qd[k])
        if status[k]:
            continue
        world_poses(kd, q[k], Tw)
        put(V[n], 0, zero)
        ke, mc0, mc1, mc2, mass = 0.0, 0.0, 0.0, 0.0, 0.0
        P = zero
        for i in range(n):
            I = body_inertia(kd, i)
            S = joint_screw(kd, i)
            Vi, _ = body_motion(joint_pose(kd, i, q[k]), S, joint_velocity(kd, i, S, qd[k]), qd[k, i], 0.0,
                                get6(V[int(kd[i, PARENT])], 0), zero)
            put(V[i], 0, Vi)
            h = inertia_apply(I, Vi)                                   # h = G_i V_i
            ke += 0.5 * (dot6(Vi[0], Vi[1], Vi[2], Vi[3], Vi[4], Vi[5], h[0], h[1], h[2], h[3], h[4], h[5])
                         + kd[i, ARMAT] * qd[k, i] * qd[k, i])
            T = get12(Tw[i], 0)
            m = kd[i, MASS]                                            # mc += m p_i + R_i h_i
            mass += m
            mc0 += m * T[9] + dot3(T[0], T[1], T[2], kd[i, MCOM], kd[i, MCOM + 1], kd[i, MCOM + 2])
            mc1 += m * T[10] + dot3(T[3], T[4], T[5], kd[i, MCOM], kd[i, MCOM + 1], kd[i, MCOM + 2])
            mc2 += m * T[11] + dot3(T[6], T[7], T[8], kd[i, MCOM], kd[i, MCOM + 1], kd[i, MCOM + 2])
            p = wrench_to_parent(T, h)                                 # P += Ad_{T_i0}^T G_i V_i
            P = (P[0] + p[0], P[1] + p[1], P[2] + p[2], P[3] + p[3], P[4] + p[4], P[5] + p[5])
        out[k, 0] = ke
        out[k, 1] = -(kd[n, GRAVITY] * mc0 + kd[n, GRAVITY + 1] * mc1 + kd[n, GRAVITY + 2] * mc2)
        out[k, 2], out[k, 3], out[k, 4] = mc0, mc1, mc2
        for c in range(6):
            out[k, 5 + c] = P[c]
        if mass > 0.0:
            out[k, 11], out[k, 12], out[k, 13] = mc0 / mass, mc1 / mass, mc2 / mass
        else:
            out[k, 11], out[k, 12], out[k, 13] = 0.0, 0.0, 0.0
        overflowed(status, k, out)


@njit(**ONE)
def energy_one(kd, q, qd, out):
    """One state: :func:`energy` on it as a batch of one."""
    n = kd.shape[0] - 1
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and out.shape[0] == OUTPUTS):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    energy(kd, row(q), row(qd), window(out, 0, (1, OUTPUTS)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def energy_batch(kd, q, qd, out, status):
    """States ``q, qd (B, n)`` over numba's threads."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n)):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            energy(kd, q, qd, out, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"energy": Entry("energies and momentum", energy_one, energy_batch, ("q", "qd"), (1,), per_lane)}
