"""Constrained dynamics: the constraint Jacobian and drift, the Delassus matrix, forward dynamics
under constraints and impulses (docs/theory.md §15; Pinocchio's ``constraintDynamics``,
``computeDelassusMatrix`` and ``impulseDynamics``).

For one state, every kernel below first runs the same forward pass over the tree (base ``V = A =
0``, no gravity)::

    T_{0,i} = T_{0,p} T_{p,i}(q_i)
    V_i, A_i = body_motion(T_{p,i}, S_i, v_J, qd_i, qdd_i = 0, V_p, A_p)    (rnea.py; body frames)

then, constraint by constraint (:mod:`.constraint_kinds`, the only code that reads the kind), its
rows of ``J``, of ``J qd``, of the drift ``gamma`` and of the position error ``e`` from the
spatial twists ``[Ad_{T_{0,i}}] V_i`` and accelerations ``[Ad_{T_{0,i}}] A_i`` of its two bodies.
Forward dynamics and impulses then solve the KKT system of :mod:`.kkt`::

    forward dynamics   f = tau - h (h = RNEA(q, qd, 0, F_ext)),   b_c = -gamma - Kd J qd - Kp e
                       M qdd = f + J^T lam,  J qdd = b_c              (§15.4)
    impulse            f = 0,  b_c = -(1 + r) J qd^-
                       M (qd^+ - qd^-) = J^T lam,  J qd^+ = -r J qd^-  (§15.6)
    projection         f = 0,  b_c = -e:  dq = M^-1 J^T lam,  J dq = -e    (§15.9, a simulation's step)

``M`` by CRBA and ``h`` by RNEA, each one state (``lanes = 1``); the states of a batch run one at a
time on each of numba's threads (:mod:`.work`). The packed constraints ``cd`` are
:mod:`.constraint_layout`'s; ``m`` their rows. ``info[k] = (iterations, residual)`` of the
proximal solve (:func:`.kkt.proximal`); a state whose residual ends above ``CONFLICT (1 + |b|)``
has constraints that conflict (redundant rows asking for different accelerations): CONFLICTING.
"""
import numpy as np
from numba import prange

from .constraint_kinds import (
    constraint_bodies, constraint_frames, constraint_gains, constraint_row, constraint_size, drift_rows, error_rows,
    jacobian_rows, velocity_rows,
)
from .constraint_layout import CROW, CSIZE
from .crba import crba
from .entry import F64, I64, Entry, array
from .internals import release_gil, restore_gil, stack, window
from .joints import joint_pose, joint_screw, joint_velocity
from .kkt import DELASSUS_SINGULAR, delassus_of, kkt_solve, rows_times_inverse_lt, vector_times_inverse_lt
from .layout import PARENT
from .ltdl import ltdl_factor
from .rnea import body_motion, rnea
from .spatial_kernels import compose, twist_to_world
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import check, claim, get6, get12, is_rows, is_vector, one_state, overflowed, put, q_size, row, units

# one-state calls release the GIL from this many DoF (a floating Talos, 50 DoF, two soles: 12 us a call;
# internals.release_gil)
GIL_FROM = 24
# status of a state whose constraints are redundant while mu = 0 (the damped Delassus matrix is singular)
REDUNDANT = 10
# status of a state whose constraints conflict: the solve ends with a residual above CONFLICT times 1 + |b|
CONFLICTING = 11
CONFLICT = 1e-8
# what dynamics() solves for (docs/theory.md §15.4, §15.6, §15.9)
FORWARD, IMPULSE, PROJECTION = 0, 1, 2
IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies, without the constraints' (:func:`constraint_floats`):
    poses, twists, accelerations, ``M`` and its factor, vectors, then RNEA's and CRBA's own."""
    return 36 * (n + 1) + n * n + 8 * n + 16 + max(41 * n + 46, n * n + 31 * n + 50)


@njit(**HELPER)
def constraint_floats(n, m):
    """The floats of work ``m`` constraint rows add to :func:`per_lane`: ``J`` (then ``X``), ``G``
    and its factor, vectors."""
    return 3 * m * n + 2 * m * m + 8 * m + 8


@njit(**HELPER)
def constraint_rows_of(cd):
    """``m``, the rows of the packed constraints ``cd``."""
    c = cd.shape[0]
    return 0 if c == 0 else int(cd[c - 1, CROW] + cd[c - 1, CSIZE])


@njit(**HELPER)
def rows_needed(kd, cd, need):
    """``need[i] = 1`` for the kernel rows on the path from the base to a body of some constraint of
    ``cd`` (the rows :func:`tree_motion` must compute), 0 for the others."""
    for i in range(kd.shape[0] - 1):
        need[i] = 0
    for c in range(cd.shape[0]):
        a, b = constraint_bodies(cd, c)
        for j in (a, b):
            while j >= 0 and need[j] == 0:
                need[j] = 1
                j = int(kd[j, PARENT])


@njit(**KERNEL)
def tree_motion(kd, q, qd, need, Tw, V, A):
    """The forward pass of the module docstring on the rows ``i`` with ``need[i]`` (the ancestors of
    the constraints' bodies, :func:`rows_needed`): ``T_{0,i}`` into ``Tw (n + 1, 12, 1)``, the body
    twists ``V_i`` and bias accelerations ``A_i`` (``qdd = 0``, no gravity) into ``V``, ``A (n + 1, 6,
    1)``; row ``n`` is the base (identity, at rest)."""
    n = kd.shape[0] - 1
    put(Tw[n], 0, IDENTITY)
    put(V[n], 0, ZERO6)
    put(A[n], 0, ZERO6)
    for i in range(n):
        if need[i] == 0:
            continue
        par = int(kd[i, PARENT])
        Tp = joint_pose(kd, i, q)
        put(Tw[i], 0, compose(get12(Tw[par], 0), Tp))
        S = joint_screw(kd, i)
        Vi, Ai = body_motion(Tp, S, joint_velocity(kd, i, S, qd), qd[i], 0.0, get6(V[par], 0), get6(A[par], 0))
        put(V[i], 0, Vi)
        put(A[i], 0, Ai)


@njit(**HELPER)
def spatial(Tw, W, i):
    """The body quantity ``W`` (a twist or acceleration, six numbers in its frame) of kernel row ``i``
    (-1: the base) in the world: ``[Ad_{T_{0,i}}] W_i``."""
    j = i if i >= 0 else Tw.shape[0] - 1
    return twist_to_world(get12(Tw[j], 0), get6(W[j], 0))


@njit(**KERNEL)
def constraint_motion(kd, cd, q, qd, Tw, V, A, J, jqd, gamma, e, errors):
    """Every constraint's rows of ``J (m, nv)``, ``J qd``, ``gamma`` and, with ``errors``, ``e`` (``(m,)``
    each; else ``e`` left as it is) from the forward pass :func:`tree_motion` (module docstring)."""
    for c in range(cd.shape[0]):
        jacobian_rows(kd, cd, c, Tw, J)
        Ta, Tb = constraint_frames(cd, c, Tw)
        a, b = constraint_bodies(cd, c)
        Va, Vb = spatial(Tw, V, a), spatial(Tw, V, b)
        r0, size = constraint_row(cd, c), constraint_size(cd, c)
        put_rows(jqd, r0, size, velocity_rows(cd, c, Ta, Tb, Va, Vb, qd))
        put_rows(gamma, r0, size, drift_rows(cd, c, Ta, Tb, Va, spatial(Tw, A, a), Vb, spatial(Tw, A, b)))
        if errors:
            put_rows(e, r0, size, error_rows(cd, c, Ta, Tb, q))


@njit(**HELPER)
def put_rows(y, r0, size, x):
    """``y[r0 + r] = x[r]`` for the ``size`` (1, 3 or 6) rows of a constraint, written out."""
    y[r0] = x[0]
    if size > 1:
        y[r0 + 1], y[r0 + 2] = x[1], x[2]
        if size > 3:
            y[r0 + 3], y[r0 + 4], y[r0 + 5] = x[3], x[4], x[5]


@njit(**HELPER)
def needs_errors(cd):
    """Whether some constraint of ``cd`` has a Baumgarte ``Kp`` (forward dynamics then reads ``e``)."""
    for c in range(cd.shape[0]):
        if constraint_gains(cd, c)[0] != 0.0:
            return True
    return False


@njit(**HELPER)
def corrected_rhs(cd, jqd, gamma, e, b):
    """``b_c = -gamma - Kd J qd - Kp e`` of every constraint row (the Baumgarte corrector, §15.3)."""
    for c in range(cd.shape[0]):
        Kp, Kd = constraint_gains(cd, c)
        r0 = constraint_row(cd, c)
        for r in range(r0, r0 + constraint_size(cd, c)):
            b[r] = -gamma[r] - Kd * jqd[r] - Kp * e[r]


@njit(**KERNEL)
def factor_and_project(kd, q, par, H, J, m, nz, cnt, mark, one):
    """``M = CRBA(q)`` factored in ``H`` (:func:`.ltdl.ltdl_factor`) and ``J[:m]`` replaced by
    ``X = L^-T J^T`` (its rows; their supports into ``nz``, ``cnt``: :func:`.kkt.rows_times_inverse_lt`).
    Returns 0 or the status of a singular ``M``."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    crba(kd, window(q, 0, (1, nq)), window(H, 0, (1, n, n)), one, 0, 1, 1)
    if one[0]:
        return one[0]
    code = ltdl_factor(par, H)
    if code:
        return code
    rows_times_inverse_lt(par, H, J, m, nz, cnt, mark)
    return 0


@njit(**HELPER)
def parents(kd, par):
    for i in range(kd.shape[0] - 1):
        par[i] = int(kd[i, PARENT])


@njit(**KERNEL)
def motion(kd, q, qd, cd, J, gamma, err, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, nq)``, ``qd (B, nv)``: ``J[k] (m, nv)``, ``gamma[k] (m,)`` and
    ``err[k] (m,)`` of the constraints ``cd``."""
    n = kd.shape[0] - 1
    m = constraint_rows_of(cd)
    Tw, V, A = stack((n + 1, 12, 1)), stack((n + 1, 6, 1)), stack((n + 1, 6, 1))
    need = stack((n,)).view(np.int64)
    rows_needed(kd, cd, need)
    jqd = stack((m + 1,))
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        check(status, k, Status.NONFINITE + 1, qd[k])
        if status[k]:
            continue
        tree_motion(kd, q[k], qd[k], need, Tw, V, A)
        constraint_motion(kd, cd, q[k], qd[k], Tw, V, A, J[k], jqd, gamma[k], err[k], True)
        overflowed(status, k, J)
        overflowed(status, k, gamma)
        overflowed(status, k, err)


@njit(**KERNEL)
def delassus(kd, q, cd, G, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, nq)``: the Delassus matrix ``G[k] = J M^-1 J^T (m, m)``."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    m = constraint_rows_of(cd)
    Tw, V, A = stack((n + 1, 12, 1)), stack((n + 1, 6, 1)), stack((n + 1, 6, 1))
    need = stack((n,)).view(np.int64)
    rows_needed(kd, cd, need)
    H = stack((n, n))
    X, Y = stack((m + 1, n)), stack((m + 1, n))
    nz, cnt, mark = stack((m + 1, n)).view(np.int64), stack((m + 1,)).view(np.int64), stack((n,)).view(np.int64)
    zero = stack((n,))
    for i in range(n):
        zero[i] = 0.0
    one = stack((1,)).view(np.int64)
    par = stack((n,)).view(np.int64)
    parents(kd, par)
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        if status[k]:
            continue
        tree_motion(kd, q[k], zero, need, Tw, V, A)
        for c in range(cd.shape[0]):
            jacobian_rows(kd, cd, c, Tw, X)
        status[k] = factor_and_project(kd, q[k], par, H, X, m, nz, cnt, mark, one)
        if status[k]:
            continue
        delassus_of(H, X, Y, m, nz, cnt, G[k])
        overflowed(status, k, G)


@njit(**KERNEL)
def dynamics(kd, q, qd, tau, fext, use_fext, cd, restitution, mode, mu, accuracy, max_iter, out, lam, info, status,
             k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, nq)``, ``qd, tau (B, nv)`` (and ``fext (B, nv, 6)`` when
    ``use_fext``) under the constraints ``cd`` (module docstring; :mod:`.kkt`'s settings ``mu``,
    ``accuracy``, ``max_iter``), by ``mode``: FORWARD dynamics, ``out[k] = qdd``, ``lam[k]`` the
    forces; an IMPULSE of restitution ``restitution``, ``out[k] = qd^+``, ``lam[k]`` the impulse; or a
    PROJECTION step onto the constraints' manifold, ``out[k] = dq = -M^-1 J^T G^-1 e`` (docs/theory.md
    (15.16); ``qd`` not read). ``tau``, ``fext`` are read by FORWARD only. ``info[k] = (iterations,
    residual)``."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    m = constraint_rows_of(cd)
    Tw, V, A = stack((n + 1, 12, 1)), stack((n + 1, 6, 1)), stack((n + 1, 6, 1))
    need = stack((n,)).view(np.int64)
    rows_needed(kd, cd, need)
    H = stack((n, n))
    h, zero = stack((1, n)), stack((1, n))
    for i in range(n):
        zero[0, i] = 0.0
    X, Y = stack((m + 1, n)), stack((m + 1, n))
    nz, cnt, mark = stack((m + 1, n)).view(np.int64), stack((m + 1,)).view(np.int64), stack((n,)).view(np.int64)
    G, C = stack((m + 1, m + 1)), stack((m + 1, m + 1))
    jqd, gamma, err, b, w = stack((m + 1,)), stack((m + 1,)), stack((m + 1,)), stack((m + 1,)), stack((m + 1,))
    y = stack((n,))
    one = stack((1,)).view(np.int64)
    par = stack((n,)).view(np.int64)
    parents(kd, par)
    errors = mode == PROJECTION or (mode == FORWARD and needs_errors(cd))
    for r in range(m):
        err[r] = 0.0           # (read with Kp = 0 when not computed)
    for k in range(k0, k1):
        status[k] = Status.OK
        if mode != FORWARD:
            check(status, k, Status.NONFINITE, q[k])
            check(status, k, Status.NONFINITE + 1, qd[k])
        else:
            check(status, k, Status.NONFINITE + 2, tau[k])
            fk = window(fext, k * n * 6, (1, n, 6)) if use_fext else fext
            rnea(kd, window(q, k * nq, (1, nq)), window(qd, k * n, (1, n)), zero, fk, use_fext, h, one, 0, 1, 1)   # h
            if one[0] and (status[k] == 0 or one[0] < status[k]):   # codes follow the arguments: the first wins
                status[k] = one[0]
        if status[k]:
            continue
        tree_motion(kd, q[k], qd[k], need, Tw, V, A)
        constraint_motion(kd, cd, q[k], qd[k], Tw, V, A, X, jqd, gamma, err, errors)
        if mode == IMPULSE:
            for r in range(m):
                b[r] = -(1.0 + restitution) * jqd[r]
        elif mode == PROJECTION:
            for r in range(m):
                b[r] = -err[r]
        else:
            corrected_rhs(cd, jqd, gamma, err, b)
        status[k] = factor_and_project(kd, q[k], par, H, X, m, nz, cnt, mark, one)
        if status[k]:
            continue
        delassus_of(H, X, Y, m, nz, cnt, G)
        for i in range(n):
            y[i] = 0.0 if mode != FORWARD else tau[k, i] - h[0, i]
        if mode == FORWARD:
            vector_times_inverse_lt(par, H, y)
        it, residual, b_norm = kkt_solve(par, H, X, Y, nz, cnt, G, C, y, b, m, mu, accuracy, max_iter, lam[k], w,
                                         out[k])
        if it == DELASSUS_SINGULAR:
            status[k] = REDUNDANT
            continue
        if residual > CONFLICT * (1.0 + b_norm):
            status[k] = CONFLICTING
        if mode == IMPULSE:
            for i in range(n):
                out[k, i] += qd[k, i]
        info[k, 0], info[k, 1] = it, residual
        overflowed(status, k, out)
        overflowed(status, k, lam)


# ---------------------------------------------------------------------------------- entry points
@njit(**ONE)
def motion_one(kd, q, qd, cd, J, gamma, err):
    """One state: :func:`motion` on it as a batch of one."""
    n = kd.shape[0] - 1
    m = constraint_rows_of(cd)
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and J.shape[0] == m and J.shape[1] == n
            and gamma.shape[0] == m and err.shape[0] == m):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    motion(kd, row(q), row(qd), cd, window(J, 0, (1, m, n)), window(gamma, 0, (1, m)), window(err, 0, (1, m)),
           status, k0, k1)
    return status[0]


@njit(**ONE)
def delassus_one(kd, q, cd, G):
    """One state: :func:`delassus` on it as a batch of one."""
    m = constraint_rows_of(cd)
    if not (is_vector(q, q_size(kd)) and G.shape[0] == m and G.shape[1] == m):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(kd.shape[0] - 1 >= GIL_FROM)   # a long call lets other threads run
    delassus(kd, row(q), cd, window(G, 0, (1, m, m)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**ONE)
def dynamics_one(kd, q, qd, tau, fext, use_fext, cd, restitution, mode, mu, accuracy, max_iter, out, lam, info):
    """One state: :func:`dynamics` on it as a batch of one."""
    n = kd.shape[0] - 1
    m = constraint_rows_of(cd)
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and is_vector(tau, n) and out.shape[0] == n
            and lam.shape[0] == m and info.shape[0] == 2 and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    dynamics(kd, row(q), row(qd), row(tau), window(fext, 0, (1, fext.shape[0], 6)), use_fext, cd, restitution, mode,
             mu, accuracy, max_iter, window(out, 0, (1, n)), window(lam, 0, (1, m)), window(info, 0, (1, 2)), status,
             k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def motion_batch(kd, q, qd, cd, J, gamma, err, status):
    """States ``(B, n)`` over numba's threads."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and status.shape[0] == B):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            motion(kd, q, qd, cd, J, gamma, err, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**BATCH)
def delassus_batch(kd, q, cd, G, status):
    """States ``(B, n)`` over numba's threads."""
    B = q.shape[0]
    if not (is_rows(q, B, q_size(kd)) and status.shape[0] == B):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            delassus(kd, q, cd, G, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**BATCH)
def dynamics_batch(kd, q, qd, tau, fext, use_fext, cd, restitution, mode, mu, accuracy, max_iter, out, lam, info,
                   status):
    """States ``(B, n)`` over numba's threads."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and is_rows(tau, B, n) and is_rows(out, B, n)
            and status.shape[0] == B and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            dynamics(kd, q, qd, tau, fext, use_fext, cd, restitution, mode, mu, accuracy, max_iter, out, lam, info,
                     status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


_SETTINGS = (F64, I64, F64, F64, I64)   # restitution, mode, mu, accuracy, max_iter
ENTRIES = {
    "constraint_motion": Entry("the constraint Jacobian and drift", motion_one, motion_batch, ("q", "qd"), (2, 1, 1),
                               per_lane, params=(array(2),)),
    "delassus": Entry("the Delassus matrix", delassus_one, delassus_batch, ("q",), (2,), per_lane,
                      params=(array(2),)),
    "constrained_dynamics": Entry("constrained dynamics", dynamics_one, dynamics_batch, ("q", "qd", "tau"), (1, 1, 1),
                                  per_lane, fext=True, params=(array(2),) + _SETTINGS),
}
