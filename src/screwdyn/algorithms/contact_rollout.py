"""Rollouts with contacts: many simulations of one model, each with its own contacts, stepped by
:func:`.contact_step.step_state` (docs/theory.md §18; the public entry is :func:`screwdyn.simulate`
with an environment).

Arrays (``B`` rollouts, ``N`` samples at times ``t``, ``n = nv``, ``K`` contact rows, ``mb``
bilateral rows)::

    t     (N,)              sample times; step k runs from t[k] to t[k+1] (of S's DT, or the shorter last)
    tau   (Bt, Tt, n)       torques, Bt in (1, B), row min(k, Tt - 1) for step k (zero-order hold)
    fext  (Bf, Tf, n, 6)    wrenches (n, f) on each body in its frame, indexed as tau
    Q (B, N, nq), V, A, TAU (B, N, n)   q, v, the step's mean acceleration (v_{k+1} - v_k) / dt and
                            sat(tau) at the samples
    REC   (B, R, K, REC_WIDTH), JF (B, R, 2, n), BL (B, R, mb)   each step's contacts, joint-limit and
                            friction torques and bilateral forces (:mod:`.contact_step`): R = N (every
                            step's) or 2 (the last two, for the warm start: step k writes row k % 2)
    INFO  (B, N, INFO_WIDTH)   each step's solver record

A call steps the samples ``s0 .. s1`` (both included), reading the state at ``s0`` and writing
each next one; the last sample's step is for its records (its next state is not kept).
Step ``k`` is warm-started from step ``k - 1``'s records. A rollout whose step fails (a singular
mass matrix) or whose state stops being finite is *dead*: its samples from then on are NaN, its
status says why, and the others go on.
"""
import numpy as np
from numba import prange

from .collide import general_pair, ground_pair
from .contact_step import BODY, DT, INFO_WIDTH, REC_WIDTH, SETTINGS, steps
from .contact_step import per_lane as step_per_lane
from .entry import BOOL, I64, Entry, array
from .internals import release_gil, restore_gil, stack, window
from .rollout import saturate
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import claim, one_state, q_size, units


@njit(**HELPER)
def per_lane(n):
    """Floats of work of one rollout: a step's (:func:`.contact_step.per_lane`) and the rollout's own."""
    return step_per_lane(n) + 4 * n + 12 + SETTINGS + 16 * REC_WIDTH + 2 * n


@njit(**HELPER)
def nan_from(X, b, k):
    """``X[b, k:] = NaN`` (the samples of a dead rollout)."""
    for j in range(k, X.shape[1]):
        for i in range(X.shape[2]):
            X[b, j, i] = np.nan


@njit(**KERNEL)
def rollout(narrow, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC,
            JF, BL, INFO, status, k0, k1):
    """Rollouts ``k0 <= b < k1`` from sample ``s0`` to ``s1`` (module docstring), each step one call
    of :func:`.contact_step.steps` (the step's compiled code, shared with :func:`screwdyn.step`);
    ``status[b]`` set when a rollout dies (and kept: a dead rollout is not stepped)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    N, K, mb = t.shape[0], REC.shape[2], BL.shape[2]
    R = REC.shape[1]
    qn, vn, tk = stack((1, nq)), stack((1, n)), stack((1, n))
    Sk = stack((SETTINGS,))
    for i in range(SETTINGS):
        Sk[i] = S[i]
    empty_rec, empty_jf, empty_bl = stack((1, K, REC_WIDTH)), stack((1, 2, n)), stack((1, max(mb, 1)))
    for r in range(K):
        empty_rec[0, r, BODY] = -1.0
    for i in range(n):
        empty_jf[0, 0, i], empty_jf[0, 1, i] = 0.0, 0.0
    for i in range(mb):
        empty_bl[0, i] = 0.0
    code = stack((1,)).view(np.int64)
    c0, c1 = one_state(code)
    for b in range(k0, k1):
        if status[b]:
            continue
        for k in range(s0, s1 + 1):
            h = t[k + 1] - t[k] if k + 1 < N else t[k] - t[k - 1]
            if abs(h - S[DT]) <= 1e-9 * S[DT]:       # (the grid's rounding: every full step is dt itself)
                h = S[DT]
            Sk[DT] = h
            kt, bt = min(k, tau.shape[1] - 1), b if tau.shape[0] > 1 else 0
            for i in range(n):
                tk[0, i] = tau[bt, kt, i]
            fk = window(fext, ((b if fext.shape[0] > 1 else 0) * fext.shape[1] + min(k, fext.shape[1] - 1)) * n * 6,
                        (1, n, 6)) if use_fext else window(fext, 0, (1, 1, 6))
            r, rp = (k, k - 1) if R == N else (k % 2, (k - 1) % 2)
            if k > 0:
                wrec = window(REC, (b * R + rp) * K * REC_WIDTH, (1, K, REC_WIDTH))
                wjf = window(JF, (b * R + rp) * 2 * n, (1, 2, n))
                wbl = window(BL, (b * R + rp) * mb, (1, mb))
            else:
                wrec, wjf, wbl = empty_rec, empty_jf, window(empty_bl, 0, (1, mb))
            steps(narrow, kd, window(Q, (b * N + k) * nq, (1, nq)), window(V, (b * N + k) * n, (1, n)), tk, fk,
                  use_fext, geoms, pairs, vertices, graph, cd, lim, Sk, wrec, wjf, wbl, qn, vn,
                  window(REC, (b * R + r) * K * REC_WIDTH, (1, K, REC_WIDTH)),
                  window(JF, (b * R + r) * 2 * n, (1, 2, n)), window(BL, (b * R + r) * mb, (1, mb)),
                  window(INFO, (b * N + k) * INFO_WIDTH, (1, INFO_WIDTH)), code, c0, c1)
            s = 0.0
            for i in range(nq):
                s += qn[0, i] * qn[0, i]
            for i in range(n):
                s += vn[0, i] * vn[0, i]
            if code[0] == 0 and not np.isfinite(s):
                code[0] = Status.NONFINITE
            if code[0] != 0:
                status[b] = Status.SINGULAR if code[0] == Status.SINGULAR else Status.NONFINITE
                for X in (Q, V):
                    nan_from(X, b, k + 1)
                nan_from(A, b, k)
                nan_from(TAU, b, k)
                break
            for i in range(n):
                A[b, k, i] = (vn[0, i] - V[b, k, i]) / h
                TAU[b, k, i] = saturate(lim, i, tau[bt, kt, i])
            if k + 1 < N:
                for i in range(nq):
                    Q[b, k + 1, i] = qn[0, i]
                for i in range(n):
                    V[b, k + 1, i] = vn[0, i]


@njit(**HELPER)
def fits(kd, lim, t, tau, fext, use_fext, S, s0, s1, Q, V, A, TAU, REC, JF, BL, INFO, B):
    n, nq, N = kd.shape[0] - 1, q_size(kd), t.shape[0]
    ok = (lim.shape[0] == n and S.shape[0] == SETTINGS and 0 <= s0 and s0 <= s1 and s1 < N and N >= 2
          and (tau.shape[0] == 1 or tau.shape[0] == B) and tau.shape[1] >= 1 and tau.shape[2] == n
          and (not use_fext or ((fext.shape[0] == 1 or fext.shape[0] == B) and fext.shape[1] >= 1
                                and fext.shape[2] == n and fext.shape[3] == 6)))
    ok = ok and Q.shape[0] == B and Q.shape[1] == N and Q.shape[2] == nq
    ok = ok and V.shape[0] == B and V.shape[1] == N and V.shape[2] == n and A.shape[0] == B and A.shape[1] == N
    ok = ok and A.shape[2] == n and TAU.shape[0] == B and TAU.shape[1] == N and TAU.shape[2] == n
    ok = ok and REC.shape[0] == B and (REC.shape[1] == N or REC.shape[1] == 2) and REC.shape[3] == REC_WIDTH
    ok = ok and JF.shape[0] == B and JF.shape[1] == REC.shape[1] and JF.shape[2] == 2 and JF.shape[3] == n
    ok = ok and BL.shape[0] == B and BL.shape[1] == REC.shape[1]
    return ok and INFO.shape[0] == B and INFO.shape[1] == N and INFO.shape[2] == INFO_WIDTH


@njit(**HELPER)
def one_entry(narrow, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC,
              JF, BL, INFO):
    """One rollout (``Q (N, nq)``, ``REC (R, K, REC_WIDTH)`` ..., no batch axis): :func:`rollout` on it
    as a batch of one; returns its status."""
    N, n, nq = t.shape[0], kd.shape[0] - 1, q_size(kd)
    R, K, mb = REC.shape[0], REC.shape[1], BL.shape[1]
    Q3, V3, A3, T3 = (window(Q, 0, (1, N, nq)), window(V, 0, (1, N, n)), window(A, 0, (1, N, n)),
                      window(TAU, 0, (1, N, n)))
    R4, J4, B3, I3 = (window(REC, 0, (1, R, K, REC_WIDTH)), window(JF, 0, (1, R, 2, n)), window(BL, 0, (1, R, mb)),
                      window(INFO, 0, (1, N, INFO_WIDTH)))
    if not fits(kd, lim, t, tau, fext, use_fext, S, s0, s1, Q3, V3, A3, T3, R4, J4, B3, I3, 1):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    status[0] = 0
    k0, k1 = one_state(status)
    gil = release_gil(True)
    rollout(narrow, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q3, V3, A3, T3, R4,
            J4, B3, I3, status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**HELPER)
def rollout_with(narrow, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU,
                 REC, JF, BL, INFO, status, k0, k1):
    """:func:`rollout` (a narrow phase named in a kernel's body and passed on directly is compiled
    as the address of its dispatcher, which numba cannot cache: passed through here, it is not)."""
    rollout(narrow, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC,
            JF, BL, INFO, status, k0, k1)


@njit(**KERNEL)
def ground_range(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC, JF,
                 BL, INFO, status, k0, k1):
    """:func:`rollout` with the narrow phase of planes only."""
    rollout_with(ground_pair, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A,
                 TAU, REC, JF, BL, INFO, status, k0, k1)


@njit(**KERNEL)
def general_range(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC,
                  JF, BL, INFO, status, k0, k1):
    """:func:`rollout` with every narrow phase."""
    rollout_with(general_pair, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A,
                 TAU, REC, JF, BL, INFO, status, k0, k1)


@njit(**ONE)
def ground_one(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC, JF,
               BL, INFO):
    """One rollout, every contact pair with a plane."""
    return one_entry(ground_pair, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V,
                     A, TAU, REC, JF, BL, INFO)


@njit(**ONE)
def general_one(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC, JF,
                BL, INFO):
    """One rollout, any contact pairs."""
    return one_entry(general_pair, kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V,
                     A, TAU, REC, JF, BL, INFO)


@njit(**BATCH)
def ground_batch(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC, JF,
                 BL, INFO, status):
    """Rollouts over numba's threads, every contact pair with a plane; ``status`` read and written."""
    B = Q.shape[0]
    if not (fits(kd, lim, t, tau, fext, use_fext, S, s0, s1, Q, V, A, TAU, REC, JF, BL, INFO, B)
            and status.shape[0] == B):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            ground_range(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU,
                         REC, JF, BL, INFO, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**BATCH)
def general_batch(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU, REC, JF,
                  BL, INFO, status):
    """Rollouts over numba's threads, any contact pairs."""
    B = Q.shape[0]
    if not (fits(kd, lim, t, tau, fext, use_fext, S, s0, s1, Q, V, A, TAU, REC, JF, BL, INFO, B)
            and status.shape[0] == B):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            general_range(kd, lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1, Q, V, A, TAU,
                          REC, JF, BL, INFO, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


# One kernel per narrow-phase tier of :mod:`.collide`, each compiled on first use (a scene of planes
# only, legged robots on the ground, needs the smallest).
_PARAMS = (array(2), array(1), array(3), array(4), BOOL, array(2), array(2), array(2), array(1, dtype=I64), array(2),
           array(1), I64, I64)   # lim, t, tau, fext, use_fext, geoms, pairs, vertices, graph, cd, S, s0, s1
_OUTPUTS = (2, 2, 2, 2, 3, 3, 2, 2)   # Q, V, A, TAU, REC, JF, BL, INFO
ENTRIES = {
    tier: Entry(f"rollouts with contacts ({tier} pairs)", one, batch, (), _OUTPUTS, per_lane, params=_PARAMS)
    for tier, one, batch in (("ground", ground_one, ground_batch), ("general", general_one, general_batch))
}
