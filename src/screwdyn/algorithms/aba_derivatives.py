"""Analytic derivatives of forward dynamics: ``dqdd/dq``, ``dqdd/dqd`` and ``dqdd/dtau = M^{-1}``
(docs/theory.md §14.4; the result of Pinocchio's ``computeABADerivatives``).

Forward dynamics inverts inverse dynamics: ``ID(q, qd, FD(q, qd, tau)) = tau`` for every state, so
differentiating both sides (the implicit function theorem) gives, at ``qdd = FD(q, qd, tau)``::

    dqdd/dq   = -M^{-1} dtau/dq          dqdd/dqd = -M^{-1} dtau/dqd          dqdd/dtau = M^{-1}

One state in one kernel; a batch as two passes over numba's threads: ABA (its batch entry point,
states side by side in lanes, :mod:`.work`), then the rest a group of states at a time, so that
their matrices are still in the cache when they are solved::

    qdd                   = ABA(q, qd, tau, F_ext)                       (:mod:`.aba`)
    dtau/dq, dtau/dqd, M  = the derivatives of ID at (q, qd, qdd, F_ext)   (:mod:`.rnea_derivatives`)
    M = L^T D L                                                          (:mod:`.ltdl`, no fill-in)
    D[0] = -M^{-1} dtau/dq,  D[1] = -M^{-1} dtau/dqd,  D[2] = M^{-1}

the last line two ways, chosen by the model's size alone (so one state and a batch run the same
one): up to 28 DoF (:func:`dense`), ``M^{-1}`` from the factors and then dense products over each
tree's block, :data:`SOLVE_LANES` states side by side as vector operations, inside the kernel of
the inverse-dynamics derivatives, whose matrices never leave their lanes (its ``solve``;
:func:`.ltdl.inverse_times_lanes`, ``O(n^3)``); above it, a state at a time, ``M^{-1}`` by sparse
solves on the identity (:func:`.ltdl.ltdl_inverse`, ``O(n^2 d)``) and the two products by BLAS
over each tree's block (:func:`.ltdl.inverse_times`: Talos' 44 joints, a tree of 32 and two legs).
A state whose ``M`` is singular (ABA's ``D_i <= 0`` or a pivot of ``L^T D L``) is flagged SINGULAR,
as in forward dynamics.

Each route has entry points of its own (:data:`ENTRIES`: ``aba_derivatives`` for the models of
:func:`dense`, ``aba_derivatives_sparse`` for the others; :mod:`screwdyn.dynamics` picks by ``dense(n)``),
thin drivers of one copy of the code (:func:`one_entry`, :func:`batch_entry`, :func:`solved_batch`)
whose route is a compile-time argument (``sparse_lanes`` None or a lane count: numba prunes a branch
on ``is None`` before typing), so that a first call compiles its own route and no other (panda's first
one-state call with an empty cache: 19.1 s with both, 12.6 s).
"""
import numpy as np
from numba import prange

from .aba import LANES as ABA_LANES
from .aba import aba, aba_batch
from .aba import per_lane as aba_per_lane
from .internals import release_gil, restore_gil, stack, store_fence, window
from .ltdl import branch_columns, inverse_times, ltdl_factor, ltdl_inverse
from .rnea_derivatives import per_lane as rnea_derivatives_per_lane
from .rnea_derivatives import rnea_derivatives
from .entry import Entry
from .status import Status
from .target import HELPER, KERNEL, ONE, njit
from .work import (
    STACK_LIMIT, STREAM_BYTES, claim, is_rows, is_vector, one_state, q_size, row, stream_plan, stream_step, units,
)


LANES = 4   # the inverse-dynamics derivatives' (ABA runs its own ABA_LANES: these lanes' work is room for them)
# Models whose SOLVE_LANES lanes of that work fit the stack (:func:`dense`: up to 28 DoF) solve by
# M^{-1} and products, SOLVE_LANES states side by side, in the kernel of the inverse-dynamics
# derivatives (``solve``); larger ones by sparse solves, a state at a time (:func:`sparse_states`).
SOLVE_LANES = 8
# one-state calls release the GIL from this many DoF (UR5, 6 joints: 4.3 us a call; internals.release_gil)
GIL_FROM = 8


@njit(**HELPER)
def per_lane(n):
    """Floats of work a lane takes for ``n`` bodies: ABA's (``ABA_LANES / LANES`` of its lanes per
    lane of this kernel) or the inverse-dynamics derivatives' own (with the solves in lanes, for the
    models of :func:`dense`), and :func:`sparse_states`' matrices of a state (``Dw``) and parents."""
    solve = dense_floats(n) if dense(n) else 0   # the matrices in lanes (rnea_derivatives' solve)
    return 3 * n * n + 3 * n + 8 + max(ABA_LANES // LANES * aba_per_lane(n), rnea_derivatives_per_lane(n) + solve)


@njit(**HELPER)
def dense_floats(n):
    """Floats of work a lane of the solves in lanes takes (``rnea_derivatives``' ``solve``)."""
    return 6 * n * n + 4 * n + 1


@njit(**HELPER)
def dense(n):
    """Whether a model of ``n`` DoF solves in lanes: :data:`SOLVE_LANES` lanes of the derivatives'
    work and the solves' fit STACK_LIMIT (up to 28 DoF). Decided by ``n`` alone, so that one state
    and a batch take the same route."""
    return SOLVE_LANES * (rnea_derivatives_per_lane(n) + dense_floats(n)) <= STACK_LIMIT


@njit(**HELPER)
def solve_state(par, first, last, Dw, Dk):
    """``Dw (3, n, n)`` holding ``(dtau_dq, dtau_dqd, M)`` (work: ``M`` is factored in place):
    ``Dk (3, n, n) = (-M^{-1} dtau_dq, -M^{-1} dtau_dqd, M^{-1})`` (``par``, ``first``, ``last`` of
    :func:`.ltdl.branch_columns`). Returns 0, SINGULAR for a pivot that is not positive (OVERFLOW
    for a NaN one), or NO_BLAS where BLAS cannot be loaded."""
    code = ltdl_factor(par, Dw[2])                                                                    # M = L^T D L
    if code:
        return code
    ltdl_inverse(par, first, last, Dw[2], Dk[2])                                                       # M^{-1}
    for c in range(2):
        if inverse_times(last, Dk[2], Dw[c], Dk[c]):                                                   # -M^{-1} dtau
            return Status.NO_BLAS
    return 0


@njit(**KERNEL)
def sparse_states(kd, q, qd, qdd, fext, use_fext, D, status, k0, k1, lanes):
    """States ``k0 <= k < k1`` not flagged by ABA (``status``), ``lanes`` (a compile-time constant)
    at a time: the derivatives of inverse dynamics in lanes, into work (``Dw``), then the solves of
    those states from it into ``D`` while the matrices are in the cache (Talos: 46 KB a state, which
    went out of the cache and back between two passes over the batch). ``D`` is written once, and
    ``M`` factored where it lies. One flagged by the derivatives of inverse dynamics (``inner``: a
    ``qdd`` that overflowed, where ``M`` is all but singular) is SINGULAR."""
    n, nq = kd.shape[0] - 1, q_size(kd)
    # an output past the cache: each state's matrices solved into work, then streamed into D
    stream = 24 * n * n * D.shape[0] > STREAM_BYTES and lanes * per_lane(n) + 3 * n * n <= STACK_LIMIT
    Ok = stack((3 if stream else 0, n, n))
    SP = stack((6,)).view(np.int64)
    Dw = stack((lanes, 3, n, n))
    Dz = Dw.reshape(-1)   # zeroed once: every group writes the same entries (the factor too: no fill-in)
    for a in range(Dz.shape[0]):
        Dz[a] = 0.0
    inner = stack((lanes,)).view(np.int64)
    par, first, last = stack((n,)).view(np.int64), stack((n,)).view(np.int64), stack((n,)).view(np.int64)
    branch_columns(kd, par, first, last)
    for s in range(k0, k1, lanes):
        m = min(k1, s + lanes) - s
        fs = window(fext, s * n * 6, (m, n, 6)) if use_fext else fext
        rnea_derivatives(kd, window(q, s * nq, (m, nq)), window(qd, s * n, (m, n)), window(qdd, s * n, (m, n)),
                         fs, use_fext, Dw, inner, 0, m, lanes, 2)                                      # dtau, M
        for l in range(m):
            k = s + l
            if status[k]:
                continue
            if inner[l]:
                status[k] = Status.SINGULAR
            elif stream:
                status[k] = solve_state(par, first, last, Dw[l], Ok)                                   # M^{-1} ...
                stream_plan(SP, D, k * 3 * n * n, 3 * n * n, 1, 1)
                stream_step(SP, D, Ok, True, 1)
            else:
                status[k] = solve_state(par, first, last, Dw[l], D[k])
    if stream:
        store_fence()


@njit(**HELPER)
def one_entry(kd, q, qd, tau, fext, use_fext, D, sparse_lanes):
    """One state: ABA, the derivatives of inverse dynamics and the solves, by one route: the solves in
    lanes (``sparse_lanes`` None, the models of :func:`dense`) or :func:`sparse_states` (``sparse_lanes``
    1, the others). The route is a compile-time choice (numba prunes a branch on ``is None`` of an
    argument before typing), so that each entry point compiles its own route and no other; a model of
    the other route is NOT_FAST. The kernels run as a batch of one lane, compiled as for their own
    one-state entry points (:func:`.aba.aba_one`, :func:`.rnea_derivatives.rnea_derivatives_one`):
    one compilation serves both."""
    n = kd.shape[0] - 1
    mine = dense(n) if sparse_lanes is None else not dense(n)
    if not (mine and is_vector(q, q_size(kd)) and is_vector(qd, n) and is_vector(tau, n) and D.shape[0] == 3
            and D.shape[1] == n and D.shape[2] == n and (not use_fext or is_rows(fext, n, 6))):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    gil = release_gil(n >= GIL_FROM)   # a long call lets other threads run
    qdd = stack((1, n))
    fk = window(fext, 0, (1, fext.shape[0], 6))
    Dk = window(D, 0, (1, 3, n, n))
    aba(kd, row(q), row(qd), row(tau), fk, use_fext, qdd, status, 0, 1, 1)                           # qdd
    if status[0] == 0:
        if sparse_lanes is None:
            rnea_derivatives(kd, row(q), row(qd), qdd, fk, use_fext, Dk, status, 0, 1, 1, 1)          # all, in lanes
        else:
            k0, k1 = one_state(status)     # (run-time integers: the batch's compilation of sparse_states)
            sparse_states(kd, row(q), row(qd), qdd, fk, use_fext, Dk, status, k0, k1, sparse_lanes)   # dtau, M^{-1} ...
    restore_gil(gil)
    return status[0]


@njit(**ONE)
def aba_derivatives_one(kd, q, qd, tau, fext, use_fext, D):
    """One state of a model of :func:`dense`: the solves in lanes."""
    return one_entry(kd, q, qd, tau, fext, use_fext, D, None)


@njit(**ONE)
def aba_derivatives_sparse_one(kd, q, qd, tau, fext, use_fext, D):
    """One state of a larger model: :func:`sparse_states`."""
    return one_entry(kd, q, qd, tau, fext, use_fext, D, 1)


@njit(parallel=True)
def solved_batch(kd, q, qd, qdd, fext, use_fext, D, status, sparse_lanes):
    """The derivatives of inverse dynamics and the solves in one pass over numba's threads, a group
    of states at a time: :data:`SOLVE_LANES` states in lanes (``sparse_lanes`` None: the models of
    :func:`dense`, ``rnea_derivatives``' ``solve``), else :func:`sparse_states` with ``sparse_lanes``
    lanes (a compile-time constant)."""
    B = q.shape[0]
    count, size, counter = units(B, SOLVE_LANES)
    for u in prange(count):
        start, end = claim(counter, u, B, size)
        while start < end:
            if sparse_lanes is None:
                rnea_derivatives(kd, q, qd, qdd, fext, use_fext, D, status, start, end, SOLVE_LANES, 1)
            else:
                sparse_states(kd, q, qd, qdd, fext, use_fext, D, status, start, end, sparse_lanes)
            start, end = claim(counter, u, B, size)


@njit
def batch_entry(kd, q, qd, tau, fext, use_fext, D, status, sparse_lanes):
    """States ``(B, n) -> D (B, 3, n, n)`` by one route, chosen at compile time as in :func:`one_entry`:
    ABA's batch entry point (``ABA_LANES`` lanes; for the larger models, one where they do not fit the
    stack), then :func:`solved_batch` (``sparse_lanes``: None, or the sparse entry point's lanes,
    :data:`LANES` where they fit the stack, else 1)."""
    B, n = q.shape[0], kd.shape[0] - 1
    if not (is_rows(q, B, q_size(kd)) and is_rows(qd, B, n) and is_rows(tau, B, n) and D.shape[0] == B
            and D.shape[1] == 3 and D.shape[2] == n and D.shape[3] == n and status.shape[0] == B
            and (not use_fext or (fext.shape[0] == B and fext.shape[1] == n))):
        return Status.NOT_FAST
    if sparse_lanes is None:
        if not dense(n):
            return Status.NOT_FAST
    elif dense(n) or sparse_lanes * per_lane(n) > STACK_LIMIT:
        return Status.NOT_FAST
    qdd = np.empty((B, n))
    if sparse_lanes is None:
        if aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status, ABA_LANES):                           # qdd
            return Status.NOT_FAST       # (never: ABA's lanes fit the stack for these models)
    elif aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status, ABA_LANES):                             # qdd
        aba_batch(kd, q, qd, tau, fext, use_fext, qdd, status, 1)        # (NOT_FAST: its lanes do not fit)
    solved_batch(kd, q, qd, qdd, fext, use_fext, D, status, sparse_lanes)                             # the rest
    return 0


@njit(entry=True)
def aba_derivatives_batch(kd, q, qd, tau, fext, use_fext, D, status):
    """A batch of a model of :func:`dense`: the solves in lanes (no lane count: ABA's and
    :data:`SOLVE_LANES` fit the stack for every such model)."""
    return batch_entry(kd, q, qd, tau, fext, use_fext, D, status, None)


@njit(entry=True)
def aba_derivatives_sparse_batch(kd, q, qd, tau, fext, use_fext, D, status, lanes):
    """A batch of a larger model: :func:`sparse_states` with ``lanes``."""
    return batch_entry(kd, q, qd, tau, fext, use_fext, D, status, lanes)


# Two entries, one per route (:func:`dense`, decided by the model's size alone), so that a first call
# compiles its own route only: screwdyn.dynamics picks the key by ``dense(model.n)``.
ENTRIES = {
    "aba_derivatives": Entry("the derivatives of forward dynamics", aba_derivatives_one, aba_derivatives_batch,
                             ("q", "qd", "tau"), (3,), per_lane, fext=True),
    "aba_derivatives_sparse": Entry("the derivatives of forward dynamics", aba_derivatives_sparse_one,
                                    aba_derivatives_sparse_batch, ("q", "qd", "tau"), (3,), per_lane, LANES,
                                    fext=True),
}
