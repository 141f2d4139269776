"""Rollouts under constraints: the fixed-step integrators of :mod:`.rollout` with the constrained
forward dynamics, and each step projected back onto the constraints (docs/theory.md §13, §15.9;
the public entry is :func:`screwdyn.simulate` with constraints).

The vector field is that of :mod:`.rollout` with ABA replaced by the KKT solve of
:mod:`.constrained` (FORWARD: ``M a + h = d + J^T lam``, ``J a + gamma = -Kd J qd - Kp e``, the
constraints' own Baumgarte gains). The integrator's step (Euler, semi-implicit Euler or RK4 on the
joints' manifolds, :func:`.rollout.advance`) leaves the state off the constraints by its error; after
each step it is projected back (docs/theory.md (15.16), (15.17))::

    q' = q (+) dq,    dq = -M^-1 J^T G^-1 e(q)          one Gauss-Newton step in the metric of M (PROJECTION)
    v' = v - M^-1 J^T G^-1 J v                         at q': an inelastic impulse (IMPULSE, r = 0)

so that ``e`` and ``J v`` stay at the integrator's error of one step (its square, for the
positions), without a gain to tune. Joint limits are not enforced here (:func:`screwdyn.simulate`
refuses them with constraints); they are watched as in :mod:`.rollout`.

Arrays as :mod:`.rollout`'s, with ``cd`` the packed constraints (:mod:`.constraint_layout`) and the
proximal settings ``mu``, ``accuracy``, ``max_iter`` (:mod:`.kkt`). One rollout at a time on each of
numba's threads; a rollout whose KKT solve fails (singular ``M``, redundant constraints with
``mu = 0``, conflicting constraints) is dead from then on, its status saying why.
"""
import math

import numpy as np
from numba import prange

from .constrained import FORWARD, IMPULSE, PROJECTION, constraint_floats, constraint_rows_of, dynamics
from .constrained import per_lane as dynamics_per_lane
from .entry import BOOL, F64, I64, Entry, array
from .internals import release_gil, restore_gil, stack, window
from .joints import joint_integrate
from .rollout import COULOMB, RK4, VISCOUS, WATCH, _shapes_fit, advance, copy_rows, drive, inputs, record, watch
from .rollout import per_lane as rollout_per_lane
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import claim, one_state, q_size, units

# The constraint rows a rollout's work is sized for, per degree of freedom: screwdyn.simulate refuses more.
ROWS_PER_DOF = 2


@njit(**HELPER)
def per_lane(n):
    """Floats of work a rollout takes for ``n`` bodies and up to ``ROWS_PER_DOF n`` constraint rows:
    the rollout's own, and the constrained dynamics' (its frame, below the rollout's)."""
    return rollout_per_lane(n) + dynamics_per_lane(n) + constraint_floats(n, ROWS_PER_DOF * n) + 16 * n


@njit(**HELPER)
def solve(kd, cd, Qs, Vs, TA, FE, use_fext, mode, mu, accuracy, max_iter, out, LAM, INFO, st, dead, m):
    """:func:`.constrained.dynamics` in ``mode`` on the rows ``l < m``; a row it flags dies (its
    status kept: SINGULAR, the constrained kernels' REDUNDANT or CONFLICTING, else NONFINITE)."""
    dynamics(kd, Qs, Vs, TA, FE, use_fext, cd, 0.0, mode, mu, accuracy, max_iter, out, LAM, INFO, st, 0, m)
    for l in range(m):
        if st[l] != 0 and dead[l] == 0:
            dead[l] = st[l] if st[l] >= Status.SINGULAR else Status.NONFINITE


@njit(**KERNEL)
def constrained_rollout(kd, cd, mu, accuracy, max_iter, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A, TAU,
                        W, status, k0, k1):
    """Rollouts ``k0 <= b < k1`` from sample ``s0`` to ``s1`` (as :func:`.rollout.rollout`) under the
    constraints ``cd``, one at a time; ``status[b]`` set when a rollout dies (and kept)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    N = t.shape[0]
    L = 1
    mc = max(1, constraint_rows_of(cd))
    Qc, Vc, Qs, Vs = stack((L, nq)), stack((L, n)), stack((L, nq)), stack((L, n))  # state, stage state
    Ks = stack((L, n))
    Wv, Wa, Acc = stack((L, n)), stack((L, n)), stack((L, n))
    TP, TA = stack((L, n)), stack((L, n))
    FE = stack((L, n, 6))
    D = stack((L, n))                                                               # a projection's step
    LAM, INFO = stack((L, mc)), stack((L, 2))
    VIS, COU = stack((L, n)), stack((L, n))
    for i in range(n):
        VIS[0, i], COU[0, i] = lim[i, VISCOUS], lim[i, COULOMB]
    st = stack((L,)).view(np.int64)
    dead = stack((L,)).view(np.int64)
    stages = 4 if method == RK4 else 1
    for b in range(k0, k1):
        m = 1
        dead[0] = status[b]
        s = 0.0
        for i in range(nq):
            Qc[0, i] = Q[b, s0, i]
            s += Qc[0, i] * 0.0
        for i in range(n):
            Vc[0, i] = V[b, s0, i]
            s += Vc[0, i] * 0.0
        if s != 0.0 and dead[0] == 0:
            dead[0] = Status.NONFINITE
        for k in range(s0, s1 + 1):
            last = k == s1
            if last and k != N - 1:
                record(Q, b, k, Qc, dead, m)
                record(V, b, k, Vc, dead, m)
                break
            inputs(lim, tau, fext, use_fext, b, k, TP, FE, m)
            h = 0.0 if last else t[k + 1] - t[k]
            for s in range(stages):
                if s == 0:
                    copy_rows(Qc, Qs, m)
                    copy_rows(Vc, Vs, m)
                drive(TP, Vs, VIS, COU, TA, m)                                      # a = FD_c(q, v, d)
                if dead[0] == 0:
                    solve(kd, cd, Qs, Vs, TA, FE, use_fext, FORWARD, mu, accuracy, max_iter, Acc, LAM, INFO, st,
                          dead, m)
                if s == 0:
                    watch(kd, lim, W, b, k, Qc, Vc, dead, m)
                    record(Q, b, k, Qc, dead, m)
                    record(V, b, k, Vc, dead, m)
                    record(A, b, k, Acc, dead, m)
                    record(TAU, b, k, TP, dead, m)
                    if last:
                        break
                advance(kd, method, s, h, Qc, Vc, Qs, Vs, Ks, Acc, Wv, Wa, m)
            if last:
                break
            if dead[0] == 0:                                                        # back onto the constraints
                solve(kd, cd, Qc, Vc, TA, FE, use_fext, PROJECTION, mu, accuracy, max_iter, D, LAM, INFO, st, dead, m)
                joint_integrate(kd, Qc, D, 1.0, Qc, m)
            if dead[0] == 0:
                solve(kd, cd, Qc, Vc, TA, FE, use_fext, IMPULSE, mu, accuracy, max_iter, D, LAM, INFO, st, dead, m)
                copy_rows(D, Vc, m)
            s = 0.0                                                                 # diverged: q.q + v.v not finite
            for i in range(nq):
                s += Qc[0, i] * Qc[0, i]
            for i in range(n):
                s += Vc[0, i] * Vc[0, i]
            if not math.isfinite(s) and dead[0] == 0:
                dead[0] = Status.NONFINITE
            if dead[0] != 0:
                for i in range(nq):
                    Qc[0, i] = np.nan
                for i in range(n):
                    Vc[0, i] = np.nan
        status[b] = dead[0]


@njit(**ONE)
def constrained_rollout_one(kd, cd, mu, accuracy, max_iter, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A,
                            TAU, W):
    """One rollout, ``Q, V, A, TAU (N, n)``: :func:`constrained_rollout` on it as a batch of one."""
    N, n, nq = t.shape[0], kd.shape[0] - 1, q_size(kd)
    Q3, V3 = window(Q, 0, (1, N, nq)), window(V, 0, (1, N, n))
    A3, T3 = window(A, 0, (1, N, n)), window(TAU, 0, (1, N, n))
    W3 = window(W, 0, (1, WATCH, n))
    if not _shapes_fit(kd, lim, t, tau, fext, use_fext, s0, s1, Q3, V3, A3, T3, W3, 1):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    status[0] = 0
    k0, k1 = one_state(status)   # (run-time integers: the batch entry's compiled kernel, not another)
    gil = release_gil(s1 > s0)
    constrained_rollout(kd, cd, mu, accuracy, max_iter, lim, t, tau, fext, use_fext, method, s0, s1, Q3, V3, A3, T3,
                        W3, status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def constrained_rollout_batch(kd, cd, mu, accuracy, max_iter, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A,
                              TAU, W, status):
    """Rollouts ``(B, N, n)`` over numba's threads; ``status`` is read (a rollout already dead stays
    dead) and written."""
    B = Q.shape[0]
    if not (_shapes_fit(kd, lim, t, tau, fext, use_fext, s0, s1, Q, V, A, TAU, W, B) and status.shape[0] == B):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            constrained_rollout(kd, cd, mu, accuracy, max_iter, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A,
                                TAU, W, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"constrained_rollout": Entry(
    "rollouts under constraints", constrained_rollout_one, constrained_rollout_batch, (), (2, 2, 2, 2, 2), per_lane,
    params=(array(2), F64, F64, I64, array(2), array(1), array(3), array(4), BOOL, I64, I64, I64))}
