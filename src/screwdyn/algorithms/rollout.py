"""Rollouts: many simulations of one model stepped together by a fixed-step integrator
(docs/theory.md §13; the public entry is :func:`screwdyn.simulate`).

The state is ``x = (q, v)``. With the torque ``tau_k`` and the wrenches ``F_k`` of step ``k`` held
over the step (zero-order hold), the vector field is (13.1) with the joint limits of (13.7)::

    a = FD(q, v, d + f, F_k)                                              ABA, :mod:`.aba`
    d = sat(tau_k) - (b v + f_c sgn v)                                    the drive torque
    sat(tau) = min(max(tau, -e), e)                                       e: effort limit (or inf)

and ``f`` the limit torques: zero but on the joints ``i`` beyond a limit ``q_lim``, where they make
``a_i`` the reference ``a_ref,i = -k (q_i - q_lim) - c v_i`` pushing only (``f_i <= 0`` beyond the
upper limit, ``>= 0`` beyond the lower), by projected Gauss-Seidel on ``a = a_u + M^-1 f`` (``a_u``:
``f = 0``) with the columns ``M^-1 e_i = FD(q, v, d + e_i) - a_u`` of those joints (:func:`limits`).

and the integrators (13.2)-(13.4), every position update through :func:`.joints.joint_integrate`
(``q (+) v h``)::

    euler           q' = q (+) h v,    v' = v + h a(q, v)
    semi-implicit   v' = v + h a(q, v),    q' = q (+) h v'
    rk4             a1 = a(q, v),                                             k1 = v
                    v2 = v + h/2 a1,   a2 = a(q (+) h/2 k1, v2),   k2 = dexp^-1_{h/2 k1}(v2)
                    v3 = v + h/2 a2,   a3 = a(q (+) h/2 k2, v3),   k3 = dexp^-1_{h/2 k2}(v3)
                    v4 = v + h a3,     a4 = a(q (+) h k3,   v4),   k4 = dexp^-1_{h k3}(v4)
                    q' = q (+) h/6 (k1 + 2 k2 + 2 k3 + k4),   v' = v + h/6 (a1 + 2 a2 + 2 a3 + a4)

(Runge-Kutta-Munthe-Kaas, fourth order on a free-flyer's or spherical joint's manifold;
:func:`.joints.joint_dexp_inverse` is the identity on revolute and prismatic joints, where this is
the classical RK4.)

``L`` rollouts run side by side: each lane's state is a row of ``(L, n)`` work arrays, and each
stage is one call of the ABA kernel on those rows (its lanes, its SIMD across rollouts), so a
rollout alone and in a batch give the same numbers bit for bit. A rollout whose state stops
being finite (``q.q + v.v`` overflows: it diverged) or whose ABA flags its state is *dead*: its
samples from then on are NaN, its status says why, and the others go on.

Arrays (``B`` rollouts, ``N`` samples at times ``t``, ``n = nv`` degrees of freedom, ``nq`` coordinates)::

    lim   (n, LIM_WIDTH)     per joint: limits, their stiffness and damping, friction, effort
    t     (N,)               sample times; step k runs from t[k] to t[k+1]
    tau   (Bt, Tt, n)        torques, Bt in (1, B), row min(k, Tt - 1) for step k
    fext  (Bf, Tf, n, 6)     wrenches (n, f) on each body in its frame, indexed as tau
    Q (B, N, nq), V, A, TAU (B, N, n)   q, v, a and sat(tau) at the samples: rows s0 .. s1 written, the
                             state at s0 read (the initial state, or where the last call stopped)
    W     (B, WATCH, n)      what the samples did against the limits ``q_min <= q <= q_max``,
                             ``|v| <= v_max`` (enforced or not): FIRST_Q the first sample beyond
                             them (-1: none), PEAK_Q the largest max(q - q_max, q_min - q), FIRST_V,
                             PEAK_V the same for |v|; read and updated (start: -1, -inf)

A call integrates the samples ``s0 .. s1`` (``s1 == s0``: none) and, when ``s1 == N - 1``,
evaluates ``a`` and ``sat(tau)`` at the last sample too.
"""
import math

import numpy as np
from numba import prange

from .aba import aba
from .aba import per_lane as aba_per_lane
from .entry import BOOL, I64, Entry, array
from .internals import release_gil, restore_gil, stack, window
from .joints import dof_position, has_manifold, joint_dexp_inverse, joint_integrate
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import STACK_LIMIT, claim, q_size, units

LANES = 8

# Columns of ``lim``: the joint's range (+-inf: not enforced), the stiffness k [1/s^2] and damping c
# [1/s] of its limit's reference acceleration, its viscous and Coulomb friction, its effort limit
# (inf: the torque is applied as given).
LOWER, UPPER, STIFFNESS, DAMPING, VISCOUS, COULOMB, EFFORT = 0, 1, 2, 3, 4, 5, 6
QMIN, QMAX, VMAX = 7, 8, 9    # the limits watched (the model's, enforced or not)
LIM_WIDTH = 10

FIRST_Q, PEAK_Q, FIRST_V, PEAK_V = 0, 1, 2, 3   # rows of W
WATCH = 4

EULER, SEMI_IMPLICIT_EULER, RK4 = 0, 1, 2

SWEEPS = 4   # projected Gauss-Seidel sweeps over the joints beyond their limits (one is exact for one joint)


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies: the ABA kernel's and the rollout's own."""
    return aba_per_lane(n) + n * n + 26 * n + 3   # (q's arrays: nq <= 7 n / 6)


@njit(**HELPER)
def saturate(lim, i, tau):
    """``sat(tau) = min(max(tau, -e), e)`` for joint ``i`` (``e = inf``: ``tau``)."""
    e = lim[i, EFFORT]
    return min(max(tau, -e), e)


@njit(**HELPER)
def drive(TP, Vs, VIS, COU, TA, m):
    """The drive torques ``d = tau - (b v + f_c sgn v)`` of the rows ``l < m`` (``TP``: the torques,
    saturated; ``VIS``, ``COU``: each joint's ``b`` and ``f_c`` in every row), one loop."""
    size = m * TP.shape[1]
    tp, v, b, f, d = (window(TP, 0, (size,)), window(Vs, 0, (size,)), window(VIS, 0, (size,)),
                      window(COU, 0, (size,)), window(TA, 0, (size,)))
    for x in range(size):
        sgn = 1.0 if v[x] > 0.0 else (-1.0 if v[x] < 0.0 else 0.0)
        d[x] = tp[x] - (b[x] * v[x] + f[x] * sgn)


@njit(**HELPER)
def copy_rows(X, Y, m):
    """``Y[l] = X[l]`` for the rows ``l < m``."""
    size = m * X.shape[1]
    x, y = window(X, 0, (size,)), window(Y, 0, (size,))
    for j in range(size):
        y[j] = x[j]


@njit(**KERNEL)
def limits(kd, lim, Qs, Vs, TA, FE, use_fext, Acc, E, C, F, S, st, m, lanes):
    """The joint limits of the lanes ``l < m`` at ``(Qs, Vs)``, whose accelerations under the drive
    torques ``TA`` (and wrenches ``FE``) are ``Acc``: ``S[l, i]`` = +1 / -1 for a joint beyond its
    upper / lower limit (else 0), ``F[l, i]`` its limit torque, and ``Acc`` with them. FD is affine
    in the torque, so ``M^-1 e_i = FD(q, v, d + e_i) - FD(q, v, d)``: one ABA call per joint beyond
    a limit in some lane. Work: ``E (L, n)``, ``C (n, L, n)``."""
    n = Vs.shape[1]
    active = False
    for l in range(m):
        for i in range(n):
            S[l, i] = 0.0
            F[l, i] = 0.0
            qi = dof_position(kd, i)
            if qi >= 0:
                q = Qs[l, qi]
                S[l, i] = 1.0 if q > lim[i, UPPER] else (-1.0 if q < lim[i, LOWER] else 0.0)
                active = active or S[l, i] != 0.0
    if not active:
        return
    for i in range(n):
        column = False
        for l in range(m):
            column = column or S[l, i] != 0.0
        if column:                                                              # M^-1 e_i
            copy_rows(TA, E, m)
            for l in range(m):
                E[l, i] = E[l, i] + 1.0
            aba(kd, Qs, Vs, E, FE, use_fext, C[i], st, 0, m, lanes)
            for l in range(m):
                for j in range(n):
                    C[i, l, j] = C[i, l, j] - Acc[l, j]
    for _ in range(SWEEPS):                                                     # projected Gauss-Seidel
        for i in range(n):
            for l in range(m):
                side = S[l, i]
                if side != 0.0:
                    x = Qs[l, dof_position(kd, i)] - (lim[i, UPPER] if side > 0.0 else lim[i, LOWER])
                    reference = -lim[i, STIFFNESS] * x - lim[i, DAMPING] * Vs[l, i]
                    f = F[l, i] + (reference - Acc[l, i]) / C[i, l, i]
                    f = min(f, 0.0) if side > 0.0 else max(f, 0.0)              # pushing back only
                    df = f - F[l, i]
                    F[l, i] = f
                    for j in range(n):
                        Acc[l, j] = Acc[l, j] + C[i, l, j] * df


@njit(**HELPER)
def inputs(lim, tau, fext, use_fext, b, k, TP, FE, m):
    """The applied torques ``sat(tau)`` of step ``k`` into ``TP`` and its wrenches into ``FE`` for the
    rollouts ``b .. b + m - 1``."""
    n = TP.shape[1]
    kt = min(k, tau.shape[1] - 1)
    for l in range(m):
        bt = b + l if tau.shape[0] > 1 else 0
        for i in range(n):
            TP[l, i] = saturate(lim, i, tau[bt, kt, i])
    if use_fext:
        kf = min(k, fext.shape[1] - 1)
        for l in range(m):
            bf = b + l if fext.shape[0] > 1 else 0
            for i in range(n):
                for c in range(6):
                    FE[l, i, c] = fext[bf, kf, i, c]


@njit(**HELPER)
def watch(kd, lim, W, b, k, Qc, Vc, dead, m):
    """Sample ``k`` of the lanes ``l < m`` against the watched limits, into ``W[b + l]`` (positions
    on the one-DoF joints: a free-flyer or spherical joint has none)."""
    for l in range(m):
        if dead[l] == 0:
            for i in range(Vc.shape[1]):
                qi = dof_position(kd, i)
                if qi >= 0:
                    q = Qc[l, qi]
                    x = max(q - lim[i, QMAX], lim[i, QMIN] - q)
                    W[b + l, PEAK_Q, i] = max(W[b + l, PEAK_Q, i], x)
                    if x > 0.0 and W[b + l, FIRST_Q, i] < 0.0:
                        W[b + l, FIRST_Q, i] = k
                v = abs(Vc[l, i])
                W[b + l, PEAK_V, i] = max(W[b + l, PEAK_V, i], v)
                if v > lim[i, VMAX] and W[b + l, FIRST_V, i] < 0.0:
                    W[b + l, FIRST_V, i] = k


@njit(**HELPER)
def record(X, b, k, Xl, dead, m):
    """``X[b + l, k] = Xl[l]`` for the lanes ``l < m`` (NaN for a dead lane)."""
    for l in range(m):
        for i in range(Xl.shape[1]):
            X[b + l, k, i] = Xl[l, i] if dead[l] == 0 else np.nan


@njit(**HELPER)
def advance(kd, method, s, h, Qc, Vc, Qs, Vs, Ks, Acc, Wv, Wa, m):
    """After stage ``s`` of a step of ``h`` gave ``Acc``: the next stage's state ``(Qs, Vs)``, or
    (last stage) the next state ``(Qc, Vc)``; ``Ks`` holds the stage's rate of ``xi`` (RK4 on the
    joints' manifolds, Runge-Kutta-Munthe-Kaas: ``k = dexp^-1_xi(v)``, :func:`.joints.joint_dexp_inverse`;
    ``v`` itself on revolute and prismatic joints, where this is the classical RK4), ``Wv``, ``Wa``
    accumulate RK4's weighted sums. The rows ``l < m`` of the ``(L, nv)`` arrays are their first
    ``m nv`` numbers: one loop each."""
    size = m * Vc.shape[1]
    manifold = has_manifold(kd)      # (else k = v: no copies)
    vc, vs, a = window(Vc, 0, (size,)), window(Vs, 0, (size,)), window(Acc, 0, (size,))
    wv, wa, ks = window(Wv, 0, (size,)), window(Wa, 0, (size,)), window(Ks if manifold else Vs, 0, (size,))
    if method == EULER:                                                            # (13.2)
        joint_integrate(kd, Qc, Vc, h, Qc, m)
        for x in range(size):
            vc[x] = vc[x] + h * a[x]
    elif method == SEMI_IMPLICIT_EULER:                                            # (13.3)
        for x in range(size):
            vc[x] = vc[x] + h * a[x]
        joint_integrate(kd, Qc, Vc, h, Qc, m)
    elif s == 0:                                                                   # (13.4): v2, k2, q (+) h/2 k1
        h2 = 0.5 * h
        for x in range(size):
            vs[x] = vc[x] + h2 * a[x]
            wa[x] = a[x]
        if manifold:
            joint_dexp_inverse(kd, Vc, h2, Vs, Ks, m)
        for x in range(size):
            wv[x] = vc[x] + 2.0 * ks[x]
        joint_integrate(kd, Qc, Vc, h2, Qs, m)
    elif s < 3:                                                                    # q (+) h/2 k2, v3, k3; q (+) h k3, v4, k4
        c = 0.5 * h if s == 1 else h
        w = 2.0 if s == 1 else 1.0
        joint_integrate(kd, Qc, Ks if manifold else Vs, c, Qs, m)
        for x in range(size):
            wa[x] = wa[x] + 2.0 * a[x]
            vs[x] = vc[x] + c * a[x]
        if manifold:
            joint_dexp_inverse(kd, Ks, c, Vs, Ks, m)
        for x in range(size):
            wv[x] = wv[x] + w * ks[x]
    else:                                                                          # x' = x + h/6 (k1 + 2 k2 + 2 k3 + k4)
        h6 = h / 6.0
        joint_integrate(kd, Qc, Wv, h6, Qc, m)
        for x in range(size):
            vc[x] = vc[x] + h6 * (wa[x] + a[x])


@njit(**KERNEL)
def rollout(kd, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A, TAU, W, status, k0, k1, lanes):
    """Rollouts ``k0 <= b < k1`` from sample ``s0`` to ``s1`` (see the module docstring), ``lanes``
    (a compile-time constant) at a time; ``status[b]`` set when a rollout dies (and kept)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    N = t.shape[0]
    L = lanes
    Qc, Vc, Qs, Vs = stack((L, nq)), stack((L, n)), stack((L, nq)), stack((L, n))  # state, stage state
    Ks = stack((L, n))                                                              # a stage's rate of xi
    Wv, Wa, Acc = stack((L, n)), stack((L, n)), stack((L, n))                      # RK4 sums, a
    TP, TA = stack((L, n)), stack((L, n))                                           # sat(tau), drive
    FE = stack((L, n, 6))
    E, F, S = stack((L, n)), stack((L, n)), stack((L, n))                           # limits
    C = stack((n, L, n))
    VIS, COU = stack((L, n)), stack((L, n))                                         # friction, every row
    enforced = False
    for i in range(n):
        enforced = enforced or lim[i, LOWER] > -np.inf or lim[i, UPPER] < np.inf
        for l in range(L):
            VIS[l, i], COU[l, i] = lim[i, VISCOUS], lim[i, COULOMB]
    st = stack((L,)).view(np.int64)
    dead = stack((L,)).view(np.int64)
    stages = 4 if method == RK4 else 1
    for b in range(k0, k1, L):
        m = min(L, k1 - b)
        for l in range(m):
            dead[l] = status[b + l]
            s = 0.0
            for i in range(nq):
                Qc[l, i] = Q[b + l, s0, i]
                s += Qc[l, i] * 0.0
            for i in range(n):
                Vc[l, i] = V[b + l, s0, i]
                s += Vc[l, i] * 0.0
            if s != 0.0 and dead[l] == 0:   # (a state made NaN by an earlier call)
                dead[l] = Status.NONFINITE
        for k in range(s0, s1 + 1):
            last = k == s1
            if last and k != N - 1:       # the state where the next call starts
                record(Q, b, k, Qc, dead, m)
                record(V, b, k, Vc, dead, m)
                break
            inputs(lim, tau, fext, use_fext, b, k, TP, FE, m)
            h = 0.0 if last else t[k + 1] - t[k]
            for s in range(stages):
                if s == 0:
                    copy_rows(Qc, Qs, m)
                    copy_rows(Vc, Vs, m)
                drive(TP, Vs, VIS, COU, TA, m)                                      # a = FD(q, v, d)
                aba(kd, Qs, Vs, TA, FE, use_fext, Acc, st, 0, m, lanes)
                for l in range(m):
                    if st[l] != 0 and dead[l] == 0:
                        dead[l] = Status.SINGULAR if st[l] == Status.SINGULAR else Status.NONFINITE
                if enforced:                                                        # + M^-1 f
                    limits(kd, lim, Qs, Vs, TA, FE, use_fext, Acc, E, C, F, S, st, m, lanes)
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
            for l in range(m):   # diverged: q.q + v.v is NaN, inf, or beyond 1e308
                s = 0.0
                for i in range(nq):
                    s += Qc[l, i] * Qc[l, i]
                for i in range(n):
                    s += Vc[l, i] * Vc[l, i]
                if not math.isfinite(s) and dead[l] == 0:
                    dead[l] = Status.NONFINITE
                if dead[l] != 0:
                    for i in range(nq):
                        Qc[l, i] = np.nan
                    for i in range(n):
                        Vc[l, i] = np.nan
        for l in range(m):
            status[b + l] = dead[l]


@njit(**HELPER)
def _shapes_fit(kd, lim, t, tau, fext, use_fext, s0, s1, Q, V, A, TAU, W, B):
    n, nq, N = kd.shape[0] - 1, q_size(kd), t.shape[0]
    ok = (lim.shape[0] == n and lim.shape[1] == LIM_WIDTH and 0 <= s0 and s0 <= s1 and s1 < N
          and (tau.shape[0] == 1 or tau.shape[0] == B) and tau.shape[1] >= 1 and tau.shape[2] == n
          and (not use_fext or ((fext.shape[0] == 1 or fext.shape[0] == B) and fext.shape[1] >= 1
                                and fext.shape[2] == n and fext.shape[3] == 6)))
    ok = ok and Q.shape[0] == B and Q.shape[1] == N and Q.shape[2] == nq
    for X in (V, A, TAU):
        ok = ok and X.shape[0] == B and X.shape[1] == N and X.shape[2] == n
    return ok and W.shape[0] == B and W.shape[1] == WATCH and W.shape[2] == n


@njit(**ONE)
def rollout_one(kd, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A, TAU, W):
    """One rollout, ``Q, V, A, TAU (N, n)``: :func:`rollout` on it as a batch of one; returns its status
    (the state at ``s0`` and ``status`` NONFINITE when it had died in an earlier call)."""
    N, n, nq = t.shape[0], kd.shape[0] - 1, q_size(kd)
    Q3, V3 = window(Q, 0, (1, N, nq)), window(V, 0, (1, N, n))
    A3, T3 = window(A, 0, (1, N, n)), window(TAU, 0, (1, N, n))
    W3 = window(W, 0, (1, WATCH, n))
    if not _shapes_fit(kd, lim, t, tau, fext, use_fext, s0, s1, Q3, V3, A3, T3, W3, 1):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    status[0] = 0
    gil = release_gil((s1 - s0) * n >= 16)   # (a step of a 2-DoF arm: 0.3 us; internals.release_gil)
    rollout(kd, lim, t, tau, fext, use_fext, method, s0, s1, Q3, V3, A3, T3, W3, status, 0, 1, 1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def rollout_batch(kd, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A, TAU, W, status, lanes):
    """Rollouts ``(B, N, n)`` over numba's threads, as :func:`.aba.aba_batch`; ``status`` is read
    (a rollout already dead stays dead) and written."""
    B, n = Q.shape[0], kd.shape[0] - 1
    if not (_shapes_fit(kd, lim, t, tau, fext, use_fext, s0, s1, Q, V, A, TAU, W, B) and status.shape[0] == B):
        return Status.NOT_FAST
    if lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    count, size, counter = units(B, lanes)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            rollout(kd, lim, t, tau, fext, use_fext, method, s0, s1, Q, V, A, TAU, W, status, start, end, lanes)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {"rollout": Entry("rollouts", rollout_one, rollout_batch, (), (2, 2, 2, 2, 2), per_lane, LANES,
                            params=(array(2), array(1), array(3), array(4), BOOL, I64, I64, I64))}
