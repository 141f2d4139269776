"""Analytic derivatives of constrained forward dynamics and of impulses (docs/theory.md §17;
the result of Pinocchio's ``computeConstraintDynamicsDerivatives`` and ``computeImpulseDynamicsDerivatives``).

Constrained forward dynamics (:mod:`.constrained`) solves, with ``c(q, qd, qdd)`` the constraints'
acceleration rows ``J qdd + gamma`` plus their Baumgarte terms ``Kd J qd + Kp e``::

    ID(q, qd, qdd) - J(q)^T lam = tau,        c(q, qd, qdd) = 0

Differentiating both along ``x`` (``q`` in the tangent space, ``qd`` or ``tau``; the implicit function
theorem, as :mod:`.aba_derivatives` for the unconstrained case) gives the KKT system of the
derivatives (17.1), solved as (17.2)::

    R_x  = dID/dx - d(J^T lam)/dx |lam,   r_x = dc/dx |qdd      (lam, qdd held; R_tau = -1, r_tau = 0)
    F_x  = -M^{-1} R_x                                          (M factored by the solve; as aba_derivatives)
    dlam/dx = -G^+ (J F_x + r_x),   G = J M^{-1} J^T             (:func:`pseudo_solve`)
    dqdd/dx = F_x + M^{-1} J^T dlam/dx                           (BLAS, ``K^T = J M^{-1}``)

``dID/dq``, ``dID/dqd`` and ``M`` by :mod:`.rnea_derivatives` at ``qdd`` (the user's ``F_ext`` held in
their bodies' frames); ``r_x`` and ``d(J^T lam)/dq`` from each constraint's rows along the tree,
:func:`row_columns` and :func:`force_columns` (:mod:`.constraint_kinds`' tangents: a change of ``q_k``
turns the subtree of ``k`` about ``J_k`` and shifts its twists by ``Psi_k`` and accelerations by
``Phi_k``, docs/theory.md §14.2, §17.2). An impulse (``M (qd^+ - qd^-) = J^T lam``, ``J qd^+ = -r J qd^-``)
is the same with
``ID = M w`` (``w = qd^+ - qd^-``: RNEA at ``qd = 0``, ``qdd = w``, no gravity), ``c = J (w + (1 + r)
qd^-)``, and ``dqd^+/dqd^- = 1 + dw/dqd^-``.

``G^+``: the inverse where ``G`` is positive definite; for redundant constraints (``G`` singular) the
proximal iterations of :mod:`.kkt` on the columns, which give the minimum-norm ``dlam``, plus the turn
of ``J^T``'s null space (:func:`null_space_turn`, docs/theory.md (17.10)).

Cost a state: the constrained solve, the inverse-dynamics derivatives (``O(n d)``), ``M^{-1}`` and two
products by it (``O(n^3)`` at BLAS' speed, as :mod:`.aba_derivatives` above 28 DoF), ``O(m d)``
constraint columns (``O(d^2)`` each for ``d(J^T lam)/dq``), ``O(m n d + m^2 n)`` for ``J F``, ``K`` and
``G^+``, three ``n m n`` products.
"""
import numpy as np
from numba import prange

from .constrained import (
    CONFLICT, CONFLICTING, REDUNDANT, constraint_motion, constraint_rows_of, corrected_rhs, factor_and_project,
    needs_errors, parents, rows_needed, tree_motion,
)
from .constraint_kinds import (
    coupling_columns, constraint_bodies, constraint_frames, constraint_gains, constraint_row, constraint_size,
    constraint_wrench, constraint_wrench_tangent, drift_rows_tangent, error_rows_tangent, velocity_rows_tangent,
)
from .coriolis import twist_and_rate
from .entry import BOOL, F64, I64, Entry, array
from .internals import dot6, gemm, release_gil, restore_gil, stack, window
from .joints import in_parent_frame, joint_screw, joint_velocity
from .kkt import DELASSUS_SINGULAR, cholesky, delassus_of, kkt_solve, proximal, vector_times_inverse_lt
from .layout import PARENT
from .ltdl import branch_columns, inverse_times, ltdl_inverse
from .rnea import rnea
from .rnea_derivatives import per_lane as rnea_derivatives_per_lane
from .rnea_derivatives import rnea_derivatives
from .spatial_kernels import ad, cross_force, twist_to_world
from .status import Status
from .target import BATCH, HELPER, KERNEL, ONE, njit
from .work import check, claim, get6, get12, is_rows, is_vector, one_state, overflowed, put, q_size, row, units

# one-state calls release the GIL from this many DoF (a floating Solo12, 18 DoF, four feet: 19 us a call)
GIL_FROM = 8
# G is taken as singular (redundant constraints: the proximal route) below this pivot, relative to its largest
# diagonal entry
SINGULAR_PIVOT = 1e-11
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(**HELPER)
def per_lane(n):
    """Floats of work one state takes for ``n`` bodies, without the constraints' (:func:`constraint_floats`):
    poses, twists and the columns of the tree, ``M``'s factor, the derivatives' work ``(3, n, n)``,
    vectors and integers, then the callees' own (RNEA, CRBA, the inverse-dynamics derivatives)."""
    return 60 * (n + 1) + 4 * n * n + 14 * n + 16 + max(41 * n + 46, n * n + 31 * n + 50,
                                                         rnea_derivatives_per_lane(n))


@njit(**HELPER)
def constraint_floats(n, m):
    """The floats of work ``m`` constraint rows add to :func:`per_lane`."""
    return 8 * (m + 1) * n + 3 * (m + 1) * (m + 1) + 8 * m + 16


@njit(**HELPER)
def joint_rows(kd, jfirst, jpar):
    """For each kernel row: the first row of its joint (``jfirst``; a one-DoF joint's is itself) and
    that joint's parent row (``jpar``, -1 the base; :mod:`.rnea_derivatives`' ``l``)."""
    for i in range(kd.shape[0] - 1):
        p = int(kd[i, PARENT])
        if in_parent_frame(kd, i):
            jfirst[i], jpar[i] = jfirst[p], jpar[p]
        else:
            jfirst[i], jpar[i] = i, p


@njit(**HELPER)
def world_motion(kd, Tw, need, v, a, jpar, Jw, Vw, Aw, Psi, Phi, U):
    """In the world frame, from the poses ``Tw`` of :func:`.constrained.tree_motion`, for the velocity
    ``v`` and acceleration ``a`` (no gravity): ``J_i``, ``V_i``, ``A_i`` (rows ``n``: the base, at
    rest) and the columns ``Psi_i``, ``Phi_i``, ``U_i`` of docs/theory.md (14.3)-(14.5), as
    :mod:`.rnea_derivatives`' pass 1 (``(n + 1, 6, 1)`` each)::

        V_i = V_p + [Ad_{T_{0,i}}] v_J,   A_i = A_p + J_i a_i + [ad_{V_i}] J_i v_i
        Psi_i = [ad_{V_l}] J_i,   Phi_i = [ad_{A_l}] J_i + [ad_{V_l}] Psi_i,   U_i = [ad_{V_i}] J_i + Psi_i"""
    n = kd.shape[0] - 1
    put(Vw[n], 0, ZERO6)
    put(Aw[n], 0, ZERO6)
    for i in range(n):
        if need[i] == 0:
            continue
        p = int(kd[i, PARENT])
        lp = jpar[i] if jpar[i] >= 0 else n
        T = get12(Tw[i], 0)
        S = joint_screw(kd, i)
        J = twist_to_world(T, S)
        V, dJ = twist_and_rate(get6(Vw[p], 0), J, twist_to_world(T, joint_velocity(kd, i, S, v)))
        Ap = get6(Aw[p], 0)
        vi, ai = v[i], a[i]
        put(Jw[i], 0, J)
        put(Vw[i], 0, V)
        put(Aw[i], 0, (Ap[0] + J[0] * ai + dJ[0] * vi, Ap[1] + J[1] * ai + dJ[1] * vi, Ap[2] + J[2] * ai + dJ[2] * vi,
                       Ap[3] + J[3] * ai + dJ[3] * vi, Ap[4] + J[4] * ai + dJ[4] * vi, Ap[5] + J[5] * ai + dJ[5] * vi))
        Vl = get6(Vw[lp], 0)
        Ps = ad(Vl, J)
        e, f = ad(get6(Aw[lp], 0), J), ad(Vl, Ps)
        put(Psi[i], 0, Ps)
        put(Phi[i], 0, (e[0] + f[0], e[1] + f[1], e[2] + f[2], e[3] + f[3], e[4] + f[4], e[5] + f[5]))
        put(U[i], 0, (dJ[0] + Ps[0], dJ[1] + Ps[1], dJ[2] + Ps[2], dJ[3] + Ps[3], dJ[4] + Ps[4], dJ[5] + Ps[5]))


@njit(**HELPER)
def _sum(x, y):
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@njit(**HELPER)
def _times(s, x):
    return s * x[0], s * x[1], s * x[2], s * x[3], s * x[4], s * x[5]


@njit(**HELPER)
def support(kd, cd, c, mark, cols):
    """The columns constraint ``c`` moves with: the ancestors of its body ``a`` (``mark`` bit 1) and of
    ``b`` (bit 2) into ``cols``; returns their count. The caller clears ``mark`` after."""
    count = 0
    a, b = constraint_bodies(cd, c)
    for side in range(2):
        j = a if side == 0 else b
        while j >= 0:
            if mark[j] == 0:
                cols[count] = j
                count += 1
            mark[j] |= 1 << side
            j = int(kd[j, PARENT])
    return count


@njit(**HELPER)
def _moved(J, Ps, V, on):
    """``dV = [ad_{J_k}] V + Psi_k`` of a side that column ``k`` moves (``on``), else zero."""
    return _sum(ad(J, V), Ps) if on else ZERO6


@njit(**KERNEL)
def row_columns(kd, cd, Tw, Jw, Vw, Aw, Psi, Phi, U, velocity, Rq, Rv, mark, cols):
    """The constraints' columns along the tree (docs/theory.md (17.3)-(17.7)), from :func:`world_motion`,
    into ``Rq``, ``Rv (m, n)`` (zeroed here; ``Rv`` only for the acceleration rows): ``velocity`` 0, the
    acceleration rows and Baumgarte terms ``c = J qdd + gamma + Kd J qd + Kp e``, ``Rq = dc/dq``, ``Rv =
    dc/dqd`` without its ``Kd J`` (``qdd`` held; ``world_motion`` at ``(qd, qdd)``); ``velocity`` 1, the
    velocity rows ``J v``, ``Rq = d(J v)/dq`` (``v`` held; ``world_motion`` at ``v``). Along ``q_k``, each
    side ``s`` that ``k`` moves (``k`` an ancestor of its body) turns, ``x_s = J_k``, and ``dV_s = [ad_{J_k}]
    V_s + Psi_k``, ``dA_s = [ad_{J_k}] A_s + Phi_k + [ad_{Psi_k}] V_s``; along ``qd_k``, ``dV_s = J_k``,
    ``dA_s = U_k + [ad_{J_k}] V_s``; the rows change by the tangents of :mod:`.constraint_kinds` (a JOINT
    row by ``Kp k`` along ``q``). ``mark``, ``cols (n,)``: int64 work, ``mark`` zero."""
    n = kd.shape[0] - 1
    for r in range(Rq.shape[0]):
        for k in range(n):
            Rq[r, k] = 0.0
            Rv[r, k] = 0.0
    for c in range(cd.shape[0]):
        a, b = constraint_bodies(cd, c)
        Ta, Tb = constraint_frames(cd, c, Tw)
        Kp, Kd = constraint_gains(cd, c)
        if velocity:
            Kp, Kd = 0.0, 1.0
        r0, size = constraint_row(cd, c), constraint_size(cd, c)
        ia, ib = a if a >= 0 else n, b if b >= 0 else n
        Va, Aa, Vb, Ab = get6(Vw[ia], 0), get6(Aw[ia], 0), get6(Vw[ib], 0), get6(Aw[ib], 0)
        count = support(kd, cd, c, mark, cols)
        for t in range(count):
            k = cols[t]
            J, Ps, Ph, Uk = get6(Jw[k], 0), get6(Psi[k], 0), get6(Phi[k], 0), get6(U[k], 0)
            in_a, in_b = (mark[k] & 1) != 0, (mark[k] & 2) != 0
            for along_qd in range(1 if velocity else 2):
                if along_qd:
                    xa, xb = ZERO6, ZERO6
                    dVa, dVb = (J if in_a else ZERO6), (J if in_b else ZERO6)
                    dAa = _sum(Uk, ad(J, Va)) if in_a else ZERO6
                    dAb = _sum(Uk, ad(J, Vb)) if in_b else ZERO6
                else:
                    xa, xb = (J if in_a else ZERO6), (J if in_b else ZERO6)
                    dVa, dVb = _moved(J, Ps, Va, in_a), _moved(J, Ps, Vb, in_b)
                    dAa = _sum(_sum(ad(J, Aa), Ph), ad(Ps, Va)) if in_a else ZERO6
                    dAb = _sum(_sum(ad(J, Ab), Ph), ad(Ps, Vb)) if in_b else ZERO6
                x = ZERO6 if velocity else drift_rows_tangent(cd, c, Ta, Tb, Va, Aa, Vb, Ab, xa, xb, dVa, dAa, dVb, dAb)
                if Kd != 0.0 and not along_qd:
                    x = _sum(x, _times(Kd, velocity_rows_tangent(cd, c, Ta, Tb, Va, Vb, xa, xb, dVa, dVb)))
                if Kp != 0.0 and not along_qd:
                    x = _sum(x, _times(Kp, error_rows_tangent(cd, c, Ta, Tb, xa, xb)))
                R = Rv if along_qd else Rq
                for r in range(size):
                    R[r0 + r, k] = x[r]
        coupling_columns(cd, c, Rq, r0, Kp)
        for t in range(count):
            mark[cols[t]] = 0


@njit(**KERNEL)
def force_columns(kd, cd, Tw, Jw, jfirst, lam, Dq, mark, cols):
    """``d(J^T lam)/dq`` (``lam`` held) subtracted from ``Dq (n, n)`` (docs/theory.md (17.9)): ``J^T lam``
    is ``J_j^T W_s`` summed over each constraint's sides ``s`` (:func:`.constraint_kinds.constraint_wrench`)
    and the ancestors ``j`` of their bodies; along ``q_k``, ``W_s`` changes by its tangent ``dW_s`` and
    ``J_j`` turns (``[ad_{J_k}] J_j``) when ``j`` is in the subtree of ``k``'s joint, so that entry
    ``(j, k)`` is ``J_j^T (dW_s - J_k x* W_s)`` there, ``J_j^T dW_s`` elsewhere. ``mark``, ``cols``: as
    :func:`row_columns`."""
    for c in range(cd.shape[0]):
        Ta, Tb = constraint_frames(cd, c, Tw)
        count = support(kd, cd, c, mark, cols)
        for side in range(2):
            s = constraint_bodies(cd, c)[side]
            if s < 0:
                continue
            W = constraint_wrench(cd, c, Ta, Tb, lam, side)
            for t in range(count):
                k = cols[t]
                J = get6(Jw[k], 0)
                dW = constraint_wrench_tangent(cd, c, Ta, Tb, lam, side, J if (mark[k] & 1) != 0 else ZERO6,
                                               J if (mark[k] & 2) != 0 else ZERO6)
                turn = cross_force(J, W)
                moved = ((mark[k] >> side) & 1) != 0
                j = s
                while j >= 0:
                    d = (dW[0] - turn[0], dW[1] - turn[1], dW[2] - turn[2], dW[3] - turn[3], dW[4] - turn[4],
                         dW[5] - turn[5]) if moved and jfirst[k] <= j else dW
                    Jj = get6(Jw[j], 0)
                    Dq[j, k] -= dot6(Jj[0], Jj[1], Jj[2], Jj[3], Jj[4], Jj[5], d[0], d[1], d[2], d[3], d[4], d[5])
                    j = int(kd[j, PARENT])
        for t in range(count):
            mark[cols[t]] = 0


@njit(**HELPER)
def _triangular_solves(C, Y, m, n):
    """Each column of ``Y[:m, :n]`` replaced by ``(C C^T)^{-1}`` times it (a factor of :func:`.kkt.cholesky`):
    the two sweeps on whole rows, which the compiler vectorises."""
    for i in range(m):
        for k in range(i):
            a = C[i, k]
            for j in range(n):
                Y[i, j] -= a * Y[k, j]
        r = 1.0 / C[i, i]
        for j in range(n):
            Y[i, j] *= r
    for i in range(m - 1, -1, -1):
        for k in range(i + 1, m):
            a = C[k, i]
            for j in range(n):
                Y[i, j] -= a * Y[k, j]
        r = 1.0 / C[i, i]
        for j in range(n):
            Y[i, j] *= r


@njit(**HELPER)
def pseudo_solve(C, mu, iterations, S, m, n, out, Z):
    """``out = -G^+ S`` (``S``, ``out`` ``(m, n)``; docs/theory.md §17.6) by the proximal iterations
    ``(G + mu 1) Y_{i+1} = S + mu Y_i`` from ``Y_0 = 0`` on every column at once, ``C`` the Cholesky
    factor of ``G + mu 1``: the minimum-norm solution for ``S`` in the range of ``G`` (one exact solve
    when ``mu = 0``, ``iterations = 1``). They stop when the largest change is at most ``1e-14`` of the
    largest entry or no longer halves, or after ``iterations``. ``Z (m, n)``: work."""
    if iterations == 1 and mu == 0.0:            # (one exact solve)
        for i in range(m):
            for j in range(n):
                out[i, j] = -S[i, j]
        _triangular_solves(C, out, m, n)
        return
    for i in range(m):
        for j in range(n):
            out[i, j] = 0.0
    previous = np.inf
    for it in range(iterations):
        for i in range(m):
            for j in range(n):
                Z[i, j] = S[i, j] - mu * out[i, j]
        _triangular_solves(C, Z, m, n)
        step, size = 0.0, 0.0
        for i in range(m):
            for j in range(n):
                z = -Z[i, j]
                step = max(step, abs(z - out[i, j]))
                size = max(size, abs(z))
                out[i, j] = z
        if step <= 1e-14 * size or step > 0.5 * previous:
            break
        previous = step


@njit(**KERNEL)
def null_space_turn(kd, cd, Tw, need, G, C, mu, iterations, KT, lam, jpar, Jw, Vw, Aw, Psi, Phi, U, velocity, E, Y, Z,
                    z, mark, cols, out):
    """Redundant constraints (docs/theory.md (17.10)): adds to ``out = dlam/dq`` the part of the minimum-norm
    force's derivative in the null space ``N`` of ``J^T``, ``P_N (dJ/dq) z`` with ``J z = lam``,
    ``z = M^{-1} J^T G^+ lam`` (``KT = J M^{-1}``, then work), ``P_N = 1 - G^+ G``: the tree's columns at the
    velocity (:func:`world_motion`, overwritten), ``E = (dJ/dq) z`` (:func:`row_columns` with ``velocity``
    1), then ``E - G^+ G E``. ``C``: the factor of ``G + mu 1``; ``E``, ``Y``, ``Z`` ``(m + 1, n)``,
    ``z (n,)``: work."""
    n = kd.shape[0] - 1
    m = E.shape[0] - 1
    t, w = Y[0], Y[1]
    proximal(G, C, lam, m, mu, 0.0, iterations, t, w)                        # t = G^+ lam
    for i in range(n):
        acc = 0.0
        for r in range(m):
            acc += KT[r, i] * t[r]
        z[i] = acc
    for i in range(n):
        Y[m, i] = 0.0
    world_motion(kd, Tw, need, z, Y[m], jpar, Jw, Vw, Aw, Psi, Phi, U)
    row_columns(kd, cd, Tw, Jw, Vw, Aw, Psi, Phi, U, velocity, E[:m], Y[:m], mark, cols)
    for r in range(m):                                                        # G E
        for i in range(n):
            Y[r, i] = 0.0
        for s in range(m):
            g = G[r, s]
            for i in range(n):
                Y[r, i] += g * E[s, i]
    pseudo_solve(C, mu, iterations, Y, m, n, Z, KT)                          # -G^+ G E
    for r in range(m):
        for i in range(n):
            out[r, i] += E[r, i] + Z[r, i]


@njit(**KERNEL)
def derivatives(kd, q, qd, tau, fext, use_fext, cd, restitution, impact, mu, accuracy, max_iter, D, Dl, status, k0,
                k1):
    """States ``k0 <= k < k1`` of ``q (B, nq)``, ``qd, tau (B, nv)`` (``fext (B, nv, 6)`` when ``use_fext``)
    under the constraints ``cd``, with the settings of :func:`.constrained.dynamics`: forward dynamics'
    derivatives ``D[k] (3, n, n) = (dqdd/dq, dqdd/dqd, dqdd/dtau)``, ``Dl[k] (3, m, n) = (dlam/dq,
    dlam/dqd, dlam/dtau)``; or with ``impact`` (``kd`` without gravity) those of the impulse of
    restitution ``restitution``, ``D[k, :2] = (dqd^+/dq, dqd^+/dqd^-)``, ``Dl[k, :2]`` the impulse's
    (``tau``, ``fext``, ``D[k, 2]``, ``Dl[k, 2]`` not read or written)."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    m = constraint_rows_of(cd)
    Tw, V, A = stack((n + 1, 12, 1)), stack((n + 1, 6, 1)), stack((n + 1, 6, 1))
    Jw, Vw, Aw = stack((n + 1, 6, 1)), stack((n + 1, 6, 1)), stack((n + 1, 6, 1))
    Psi, Phi, U = stack((n + 1, 6, 1)), stack((n + 1, 6, 1)), stack((n + 1, 6, 1))
    H = stack((n, n))
    Dw = stack((1, 3, n, n))
    h, zero, acc = stack((1, n)), stack((1, n)), stack((1, n))
    y, vel = stack((n,)), stack((n,))
    X, Y, Jc = stack((m + 1, n)), stack((m + 1, n)), stack((m + 1, n))
    Rq, Rv, KT, Z = stack((m + 1, n)), stack((m + 1, n)), stack((m + 1, n)), stack((m + 1, n))
    nz, cnt, mark = stack((m + 1, n)).view(np.int64), stack((m + 1,)).view(np.int64), stack((n,)).view(np.int64)
    G, C, C0 = stack((m + 1, m + 1)), stack((m + 1, m + 1)), stack((m + 1, m + 1))
    jqd, gamma, err, b, w, lam = (stack((m + 1,)), stack((m + 1,)), stack((m + 1,)), stack((m + 1,)), stack((m + 1,)),
                                  stack((m + 1,)))
    one = stack((1,)).view(np.int64)
    par, first, last = stack((n,)).view(np.int64), stack((n,)).view(np.int64), stack((n,)).view(np.int64)
    jfirst, jpar, cols = stack((n,)).view(np.int64), stack((n,)).view(np.int64), stack((n,)).view(np.int64)
    bits, need = stack((n,)).view(np.int64), stack((n,)).view(np.int64)
    for i in range(n):
        zero[0, i] = 0.0
        bits[i] = 0
    rows_needed(kd, cd, need)
    errors = not impact and needs_errors(cd)
    for r in range(m):
        err[r] = 0.0              # (read with Kp = 0 when not computed)
    parents(kd, par)
    branch_columns(kd, par, first, last)
    joint_rows(kd, jfirst, jpar)
    outputs = 2 if impact else 3
    for k in range(k0, k1):
        status[k] = Status.OK
        if impact:
            check(status, k, Status.NONFINITE, q[k])
            check(status, k, Status.NONFINITE + 1, qd[k])
        else:
            check(status, k, Status.NONFINITE + 2, tau[k])
            fk = window(fext, k * n * 6, (1, n, 6)) if use_fext else fext
            rnea(kd, window(q, k * nq, (1, nq)), window(qd, k * n, (1, n)), zero, fk, use_fext, h, one, 0, 1, 1)   # h
            if one[0] and (status[k] == 0 or one[0] < status[k]):
                status[k] = one[0]
        if status[k]:
            continue
        # The constrained solve, as .constrained.dynamics, keeping J, M's factor, G and lam.
        tree_motion(kd, q[k], qd[k], need, Tw, V, A)
        constraint_motion(kd, cd, q[k], qd[k], Tw, V, A, X, jqd, gamma, err, errors)
        for r in range(m):
            for i in range(n):
                Jc[r, i] = X[r, i]
            b[r] = -(1.0 + restitution) * jqd[r]
        if not impact:
            corrected_rhs(cd, jqd, gamma, err, b)
        status[k] = factor_and_project(kd, q[k], par, H, X, m, nz, cnt, mark, one)
        if status[k]:
            continue
        delassus_of(H, X, Y, m, nz, cnt, G)
        for i in range(n):
            y[i] = 0.0 if impact else tau[k, i] - h[0, i]
        if not impact:
            vector_times_inverse_lt(par, H, y)
        it, residual, b_norm = kkt_solve(par, H, X, Y, nz, cnt, G, C, y, b, m, mu, accuracy, max_iter, lam, w, acc[0])
        if it == DELASSUS_SINGULAR:
            status[k] = REDUNDANT
            continue
        if residual > CONFLICT * (1.0 + b_norm):
            status[k] = CONFLICTING
            continue
        # G^+: G's own factor where it is positive definite, else the proximal route on G + mu 1 (factored in C).
        scale = 0.0
        for r in range(m):
            scale = max(scale, G[r, r])
            for s in range(r + 1):
                C0[r, s] = G[r, s]
        direct = cholesky(C0, m)
        for r in range(m):
            direct = direct and C0[r, r] * C0[r, r] > SINGULAR_PIVOT * scale
        damping = 0.0 if direct else (mu if mu >= 0.0 else -mu * scale)
        iterations = 1 if direct else max_iter
        # The tree's columns at the solution: qdd (forward dynamics), or the impulse's w = qd^+ - qd^- and the
        # velocity qd^+ + r qd^- of its velocity rows.
        for i in range(n):
            vel[i] = acc[0, i] + (1.0 + restitution) * qd[k, i] if impact else qd[k, i]
            h[0, i] = 0.0
        world_motion(kd, Tw, need, vel, h[0] if impact else acc[0], jpar, Jw, Vw, Aw, Psi, Phi, U)
        fk = window(fext, k * n * 6, (1, n, 6)) if use_fext else fext
        rnea_derivatives(kd, window(q, k * nq, (1, nq)), zero if impact else window(qd, k * n, (1, n)), acc, fk,
                         use_fext, Dw, one, 0, 1, 1, 0)
        if one[0]:
            status[k] = Status.OVERFLOW
            continue
        velocity = 1 if impact else 0
        row_columns(kd, cd, Tw, Jw, Vw, Aw, Psi, Phi, U, velocity, Rq[:m], Rv[:m], bits, cols)
        force_columns(kd, cd, Tw, Jw, jfirst, lam, Dw[0, 0], bits, cols)
        for c in range(cd.shape[0]):               # r_qd's J terms: Kd J, or (1 + r) J for an impulse
            Kp, Kd = constraint_gains(cd, c)
            f = (1.0 + restitution) if impact else Kd
            r0 = constraint_row(cd, c)
            for r in range(r0, r0 + constraint_size(cd, c)):
                for i in range(n):
                    Rv[r, i] += f * Jc[r, i]
        Dk = D[k]
        Minv = Dk[2]
        ltdl_inverse(par, first, last, H, Minv)                                # M^{-1} (H: M factored)
        if inverse_times(last, Minv, Dw[0, 0], Dk[0]) or inverse_times(last, Minv, Dw[0, 1], Dk[1]):   # F_q, F_qd
            status[k] = Status.NO_BLAS
            continue
        for r in range(m):                                                    # K^T = J M^{-1}; J F + r
            for i in range(n):
                KT[r, i] = 0.0
            for t in range(cnt[r]):
                j = nz[r, t]
                a = Jc[r, j]
                if a != 0.0:
                    for i in range(n):
                        KT[r, i] += a * Minv[j, i]
                        Rq[r, i] += a * Dk[0, j, i]
                        Rv[r, i] += a * Dk[1, j, i]
        for o in range(outputs):
            S = Rq if o == 0 else (Rv if o == 1 else KT)
            pseudo_solve(C0 if direct else C, damping, iterations, S, m, n, Dl[k, o], Z)       # dlam = -G^+ S
            if m and gemm(KT[:m], Dl[k, o], Dk[o], 1.0, 1.0, True):                          # F + K dlam
                status[k] = Status.NO_BLAS
        if impact:                                 # (D[k, 2] holds M^{-1}, Dl[k, 2] zeros: not an impulse's)
            for i in range(n):
                Dk[1, i, i] += 1.0
            for r in range(m):
                for i in range(n):
                    Dl[k, 2, r, i] = 0.0
        if not direct:
            velocity = 1 if m else 0      # (1 as a run-time value: row_columns compiles once for both calls)
            null_space_turn(kd, cd, Tw, need, G, C, damping, iterations, KT, lam, jpar, Jw, Vw, Aw, Psi, Phi, U,
                            velocity, Rq, Rv, Z, vel, bits, cols, Dl[k, 0])
        overflowed(status, k, D)
        overflowed(status, k, Dl)


# ---------------------------------------------------------------------------------- entry points
@njit(**ONE)
def derivatives_one(kd, q, qd, tau, fext, use_fext, cd, restitution, impact, mu, accuracy, max_iter, D, Dl):
    """One state: :func:`derivatives` on it as a batch of one."""
    n = kd.shape[0] - 1
    m = Dl.shape[1]
    if not (is_vector(q, q_size(kd)) and is_vector(qd, n) and is_vector(tau, n) and D.shape[0] == 3
            and D.shape[1] == n and D.shape[2] == n and Dl.shape[0] == 3 and Dl.shape[2] == n
            and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    derivatives(kd, row(q), row(qd), row(tau), window(fext, 0, (1, fext.shape[0], 6)), use_fext, cd, restitution,
                impact, mu, accuracy, max_iter, window(D, 0, (1, 3, n, n)), window(Dl, 0, (1, 3, m, n)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**BATCH)
def derivatives_batch(kd, q, qd, tau, fext, use_fext, cd, restitution, impact, mu, accuracy, max_iter, D, Dl, status):
    """States ``(B, n)`` over numba's threads, one state at a time on each."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and is_rows(tau, B, n) and D.shape[0] == B
            and Dl.shape[0] == B and status.shape[0] == B
            and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    count, size, counter = units(B, 1)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            derivatives(kd, q, qd, tau, fext, use_fext, cd, restitution, impact, mu, accuracy, max_iter, D, Dl, status,
                        start, end)
            start, end = claim(counter, u, B, size)
    return 0


ENTRIES = {
    "constrained_derivatives": Entry("the derivatives of constrained dynamics", derivatives_one, derivatives_batch,
                                     ("q", "qd", "tau"), (3, 3), per_lane, fext=True,
                                     params=(array(2), F64, BOOL, F64, F64, I64)),
}
