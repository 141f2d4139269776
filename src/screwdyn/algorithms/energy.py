"""Energies, centre of mass and spatial momentum of the whole tree, in one forward pass.

With body twists ``V_i`` in body frames (as in :mod:`.rnea`) and world poses
``T_{0,i} = (R_i, p_i)``::

    KE  = 1/2 sum_i V_i^T G_i V_i + 1/2 sum_i armature_i qd_i^2   (= 1/2 qd^T M qd, note 004)
    mc  = sum_i (m_i p_i + R_i h_i)                             (first moment, h_i = m_i c_i)
    U   = -g^T mc = -sum_i m_i g^T c_i^0                        (note 004; Pinocchio's convention)
    P   = sum_i [Ad_{T_{i,0}}]^T G_i V_i                        (momentum (angular, linear) about {0}'s origin)

The rotor kinetic energy ``1/2 n_r^2 I_m qd^2`` is in ``KE`` (as in Pinocchio's
``computeKineticEnergy``) but not in the momentum ``P`` (the rotors are modelled by their
reflected inertia only, with no spin axis in space).

Output ``out (11,)``: ``KE, U, mc (3), P (6)``.
"""
import numpy as np
from numba import njit, prange

from .inertia_kernels import inertia10_times
from .joints import motion_subspace
from .kinematics import world_poses
from .layout import ARMAT, GRAVITY, MASS, MCOM, PARENT
from .rnea import nonfinite_code
from .spatial_kernels import twist_to_child, wrench_to_parent
from .work import thread_chunks


@njit(cache=True)
def energy_state(kd, q, qd, out, R, p, Rw, pw, S, V, h):
    """One state into ``out (11,)``. Work: ``S, h (6,)``, ``V (n+1, 6)``."""
    n = kd.shape[0] - 1
    for c in range(11):
        out[c] = 0.0
    for c in range(6):
        V[n, c] = 0.0
    world_poses(kd, q, R, p, Rw, pw)
    for i in range(n):
        par = int(kd[i, PARENT])
        motion_subspace(kd, i, S)
        twist_to_child(R[i], p[i], V[par], V[i])
        for c in range(6):
            V[i, c] += S[c] * qd[i]
        inertia10_times(kd[i, MASS:MASS + 10], V[i], h)          # h = G_i V_i
        ke = kd[i, ARMAT] * qd[i] * qd[i]
        for c in range(6):
            ke += V[i, c] * h[c]
        out[0] += 0.5 * ke
        m = kd[i, MASS]
        for a in range(3):                                        # mc += m p_i + R_i h_i
            out[2 + a] += m * pw[i, a] + Rw[i, a, 0] * kd[i, MCOM] + Rw[i, a, 1] * kd[i, MCOM + 1] \
                + Rw[i, a, 2] * kd[i, MCOM + 2]
        wrench_to_parent(Rw[i], pw[i], h, out[5:])              # P += Ad_{T_i0}^T G_i V_i
    out[1] = -(kd[n, GRAVITY] * out[2] + kd[n, GRAVITY + 1] * out[3] + kd[n, GRAVITY + 2] * out[4])


@njit(cache=True)
def _work(n):
    w = np.empty(12 * n + 12 * (n + 1) + 6 * (n + 1) + 12)
    R = w[:9 * n].reshape((n, 3, 3))
    p = w[9 * n:12 * n].reshape((n, 3))
    o = 12 * n
    Rw = w[o:o + 9 * (n + 1)].reshape((n + 1, 3, 3))
    pw = w[o + 9 * (n + 1):o + 12 * (n + 1)].reshape((n + 1, 3))
    o += 12 * (n + 1)
    V = w[o:o + 6 * (n + 1)].reshape((n + 1, 6))
    o += 6 * (n + 1)
    return R, p, Rw, pw, w[o:o + 6], V, w[o + 6:o + 12]


@njit(cache=True)
def energy(kd, q, qd, out):
    """One state; returns 0, or 1/2 (NaN or inf in q/qd)."""
    code = nonfinite_code(q, qd)
    if code:
        return code
    R, p, Rw, pw, S, V, h = _work(kd.shape[0] - 1)
    energy_state(kd, q, qd, out, R, p, Rw, pw, S, V, h)
    return 0


@njit(cache=True, parallel=True)
def energy_batch(kd, q, qd, out, status):
    B = q.shape[0]
    chunks = thread_chunks(B)
    for ch in prange(chunks):
        R, p, Rw, pw, S, V, h = _work(kd.shape[0] - 1)
        for k in range(ch * B // chunks, (ch + 1) * B // chunks):
            status[k] = nonfinite_code(q[k], qd[k])
            if status[k] == 0:
                energy_state(kd, q[k], qd[k], out[k], R, p, Rw, pw, S, V, h)
