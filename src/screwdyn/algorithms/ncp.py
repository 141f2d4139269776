"""The contact problem's solver: ADMM on the Delassus matrix (docs/theory.md §18.4; the method of
Carpentier, Le Lidec et al., "From compliant to rigid contact simulation", RSS 2024, which is
Pinocchio's ``ADMMConstraintSolver`` and the Simple simulator's).

The problem (``m`` rows, their kinds and sets in :mod:`.cone`): find the impulses ``lam`` with::

    w = (G + R) lam + g,     lam in K,   w + s(w) in K*,   lam . (w + s(w)) = 0

``G = J M^-1 J^T`` the Delassus matrix, ``R`` the compliance (a diagonal, zero for rigid rows),
``g`` the rows' velocities without the impulses plus their biases, ``K`` the product of the rows'
sets and ``s`` the de Saxcé shift (:func:`.cone.shift`), which makes the cone complementarity
Coulomb's law. For ``s`` fixed this is the optimality condition of the convex problem
``min 1/2 lam^T (G + R) lam + (g + s)^T lam`` over ``K``; ADMM splits ``lam`` into ``x`` (the
linear part) and ``y`` (the set), with the dual ``z`` (the velocity ``w + s``) and a proximal
term ``eta`` that makes a singular ``G`` (redundant contacts: a box's four corners) solvable::

    s   = s(z)
    x   = (G + R + (eta + rho) 1)^-1 (-(g + s) + eta x + rho y + z)
    y   = P_K(x - z / rho)
    z   = z - rho (x - y)

It stops when the complementarity residual of ``y`` (:func:`.cone.natural_residual`, a velocity)
is at most ``tol``, and returns ``y``: always in ``K``. ADMM converges linearly, slowly near the
end when contacts change between sticking and sliding; so from the warm start and every few
iterations the iterate is *polished* (:func:`polish`, as OSQP polishes): each block is guessed
apart, sticking or sliding (or, for the other kinds, free or at its bound) and the equations of
that guess solved exactly; the result is taken when its residual is within ``tol``, and a
converged iterate is replaced by its polished self when that is better: a resting or steadily
sliding robot needs no ADMM iteration, and its forces are exact to rounding, not to ``tol``.
``rho`` grows (shrinks) by ``RHO_STEP`` when the primal residual ``|x - y|`` (times the mean
diagonal of ``G + R``) exceeds the dual residual ``|rho dy + eta dx|`` ``RHO_RATIO`` times (or the
converse), with a new factorization, at most ``MAX_FACTORS`` times a solve. The start is the
caller's ``lam`` (the last step's impulses: a warm start) and ``rho`` (the contact step passes
none: ``RHO_START`` times the mean diagonal, as a ``rho`` adapted to the last step's problem
need not suit this one). Cost: ``m^3 / 6`` a factorization, ``3 m^2`` an iteration.
"""
import math

from .cone import BOX, NORMAL, UNILATERAL, natural_residual, project, shift
from .kkt import cholesky, cholesky_solve
from .target import HELPER, KERNEL, njit

PROX = 1e-9          # eta, relative to the largest diagonal entry of G + R
RHO_START = 0.1      # rho of a first solve, relative to the mean diagonal entry of G + R
RHO_RATIO = 10.0
RHO_STEP = 4.0
MAX_FACTORS = 12
APART = 1e-6         # polish: a block whose impulse is below this fraction of the largest is apart
EXACT = 1e-6         # a residual below EXACT * tol is taken as it is; above it (converged or not), polished
POLISH_FIRST, POLISH_EVERY, POLISH_PASSES = 2, 4, 4
POLISH_ROWS = 9
WORK_ROWS = 7 + POLISH_ROWS   # rows of the solver's work array (m columns each)


@njit(**HELPER)
def block_scales(kind, G, R, d, m):
    """``d[r]``: the scale of row ``r``'s block for :func:`.cone.natural_residual`, the largest
    diagonal entry of ``G + R`` over the block (a cone's three rows), at least a tiny positive."""
    r = 0
    while r < m:
        size = 3 if int(kind[r]) == 0 else 1
        x = 1e-300
        for k in range(r, r + size):
            x = max(x, G[k, k] + R[k])
        for k in range(r, r + size):
            d[k] = x
        r += size


@njit(**KERNEL)
def velocities(G, R, g, lam, w, m):
    """``w = (G + R) lam + g``."""
    for r in range(m):
        acc = g[r] + R[r] * lam[r]
        for k in range(m):
            acc += G[r, k] * lam[k]
        w[r] = acc


@njit(**HELPER)
def factor(G, R, sigma, C, m):
    """``C C^T = G + R + sigma 1`` (the lower triangle of ``C``)."""
    for r in range(m):
        for k in range(r + 1):
            C[r, k] = G[r, k]
        C[r, r] += R[r] + sigma
    return cholesky(C, m)


@njit(**HELPER)
def lu_factor(A, piv, n):
    """``A[:n, :n] = P L U`` in place (partial pivoting, ``piv`` the row swaps); False when singular."""
    for k in range(n):
        p, big = k, abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > big:
                p, big = i, abs(A[i, k])
        piv[k] = p
        if not big > 0.0:
            return False
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] * inv
            A[i, k] = f
            for j in range(k + 1, n):
                A[i, j] -= f * A[k, j]
    return True


@njit(**HELPER)
def lu_solve(A, piv, b, n):
    """``b = A^-1 b`` in place for the factor of :func:`lu_factor`."""
    for k in range(n):
        p = int(piv[k])
        if p != k:
            b[k], b[p] = b[p], b[k]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * b[k]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= A[i, k] * b[k]
        b[i] = s / A[i, i]


@njit(**HELPER)
def guess(kind, param, y, w, m, tol, row, d1, d2, fixed):
    """The active set of the iterate ``y`` (velocities ``w``) for :func:`polish`: the unknowns, each
    at the problem row ``row[j]`` with the column ``(1, -mu d1[j], -mu d2[j])`` on a sliding
    contact's rows (``d`` its slip direction) or the unit column; ``fixed``: the impulses held
    (a BOX row at its bound), zero elsewhere. A contact (a limit) is apart when its impulse is
    nearly zero and it separates faster than ``tol``; one touching without force is kept, as
    sticking (a box's fourth corner). Returns the number of unknowns."""
    big = 0.0
    for r in range(m):
        big = max(big, abs(y[r]))
        fixed[r] = 0.0
    apart = APART * big
    u = 0
    r = 0
    while r < m:
        k = int(kind[r])
        if k == NORMAL:
            mu, n, t1, t2 = param[r], y[r], y[r + 1], y[r + 2]
            t = math.sqrt(t1 * t1 + t2 * t2)
            if n > apart or w[r] <= tol:
                if mu == 0.0:
                    row[u], d1[u], d2[u] = r, 0.0, 0.0
                    u += 1
                elif t < mu * n * (1.0 - 1e-6) or n <= apart:   # sticking: three unknowns
                    for e in range(3):
                        row[u], d1[u], d2[u] = r + e, math.nan, math.nan
                        u += 1
                else:                                           # sliding: the normal impulse
                    s = math.sqrt(w[r + 1] * w[r + 1] + w[r + 2] * w[r + 2])
                    a, b = (w[r + 1] / s, w[r + 2] / s) if s > 1e-14 else (-t1 / t, -t2 / t)
                    row[u], d1[u], d2[u] = r, a, b
                    u += 1
            r += 3
        else:
            if k == BOX and abs(y[r]) >= param[r] * (1.0 - 1e-9):
                fixed[r] = param[r] if y[r] > 0.0 else -param[r]
            elif not (k == UNILATERAL and y[r] <= apart and w[r] > tol):
                row[u], d1[u], d2[u] = r, math.nan, math.nan
                u += 1
            r += 1
    return u


@njit(**HELPER)
def expand(kind, param, row, d1, d2, fixed, x, nu, lam, m):
    """``lam = B x + fixed``: the impulses of the unknowns ``x[:nu]`` (:func:`guess`)."""
    for r in range(m):
        lam[r] = fixed[r]
    for j in range(nu):
        r = int(row[j])
        lam[r] += x[j]
        if not math.isnan(d1[j]) and param[r] > 0.0:
            lam[r + 1] -= param[r] * d1[j] * x[j]
            lam[r + 2] -= param[r] * d2[j] * x[j]


@njit(**KERNEL)
def polish(G, R, g, kind, param, y, m, tol, d, A, P):
    """Polish the iterate ``y`` (module docstring): up to ``POLISH_PASSES`` times, guess the
    active set from the last candidate (:func:`guess`), solve its equations ``w_r = 0`` (one per
    unknown, at its row) for the unknowns ``x``, and project. The solve is a proximal refinement,
    ``(A + eps 1) dx = -w``, ``A = (G + R) B`` on the rows, which redundant contacts make singular.
    ``d``: the
    residual's block scales; ``A (>= m, >= m)``, ``P (POLISH_ROWS, >= m)``: work. Returns the
    residual of the last candidate, which is in ``P[0]``. The refinement starts from zero: where
    redundant contacts (a box's four corners) leave the impulses undetermined, it gives those of
    least norm (all four corners alike), the same whatever the warm start, so that a resting
    body's forces do not wander from step to step."""
    lam, w, x, b, row, d1, d2, fixed, piv = P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8]
    for r in range(m):
        lam[r] = y[r]
    best = math.inf
    for _ in range(POLISH_PASSES):
        velocities(G, R, g, lam, w, m)
        nu = guess(kind, param, lam, w, m, tol, row, d1, d2, fixed)
        scale = 0.0
        for i in range(nu):
            ri = int(row[i])
            x[i] = 0.0
            for j in range(nu):
                rj = int(row[j])
                a = G[ri, rj] + (R[ri] if ri == rj else 0.0)
                if not math.isnan(d1[j]) and param[rj] > 0.0:
                    a -= param[rj] * (d1[j] * G[ri, rj + 1] + d2[j] * G[ri, rj + 2])
                A[i, j] = a
            scale = max(scale, abs(A[i, i]))
        for i in range(nu):
            A[i, i] += 1e-10 * scale
        if nu and not lu_factor(A, piv, nu):
            return math.inf
        for _refine in range(3):
            expand(kind, param, row, d1, d2, fixed, x, nu, lam, m)
            for i in range(nu):
                ri = int(row[i])
                acc = g[ri] + R[ri] * lam[ri]
                for k in range(m):
                    acc += G[ri, k] * lam[k]
                b[i] = -acc
            lu_solve(A, piv, b, nu)
            for i in range(nu):
                x[i] += b[i]
        expand(kind, param, row, d1, d2, fixed, x, nu, lam, m)
        project(kind, param, lam, lam, m)
        velocities(G, R, g, lam, w, m)
        res = natural_residual(kind, param, d, lam, w, m)
        if res >= 0.5 * best:
            return res
        best = res
    return best


@njit(**HELPER)
def accept(P, lam, m):
    for r in range(m):
        lam[r] = P[0, r]


@njit(**KERNEL)
def admm(G, R, g, kind, param, m, tol, max_iter, rho, lam, C, A, W):
    """Solve the contact problem of the module docstring for ``lam[:m]`` (in: the warm start, out:
    the impulses). ``G (>= m, >= m)``, ``R``, ``g``, ``kind``, ``param`` (``(>= m,)``: :mod:`.cone`'s
    kinds and parameters); ``tol`` the residual to reach, ``max_iter`` the most iterations, ``rho``
    the penalty to start from (``<= 0``: ``RHO_START`` times the mean diagonal). Work: ``C (>= m,
    >= m)``, ``A (>= m, >= m)``, ``W (WORK_ROWS, >= m)``. Returns ``(iterations, residual, rho)``;
    a residual above ``tol`` after ``max_iter`` iterations is the caller's to report."""
    if m == 0:
        return 0, 0.0, rho
    x, xp, z, s, w, t, d = W[0], W[1], W[2], W[3], W[4], W[5], W[6]
    P = W[7:]
    block_scales(kind, G, R, d, m)
    project(kind, param, lam, lam, m)
    velocities(G, R, g, lam, w, m)
    res = natural_residual(kind, param, d, lam, w, m)
    if res <= EXACT * tol:
        return 0, res, rho
    polished = polish(G, R, g, kind, param, lam, m, tol, d, A, P)
    if polished <= min(tol, res):
        accept(P, lam, m)
        return 0, polished, rho
    if res <= tol:
        return 0, res, rho
    dmax, dmean = 0.0, 0.0
    for r in range(m):
        dmax = max(dmax, G[r, r] + R[r])
        dmean += (G[r, r] + R[r]) / m
    eta = PROX * dmax
    if not rho > 0.0:
        rho = RHO_START * dmean
    factor(G, R, eta + rho, C, m)
    factors = 1
    shift(kind, param, w, s, m)
    for r in range(m):
        x[r] = lam[r]
        z[r] = w[r] + s[r]
    it = 0
    while it < max_iter:
        it += 1
        shift(kind, param, z, s, m)
        for r in range(m):
            xp[r] = x[r]
            t[r] = -(g[r] + s[r]) + eta * x[r] + rho * lam[r] + z[r]
        cholesky_solve(C, t, m)
        for r in range(m):
            x[r] = t[r]
            t[r] = x[r] - z[r] / rho
        project(kind, param, t, t, m)
        primal, dual = 0.0, 0.0
        for r in range(m):
            primal = max(primal, abs(x[r] - t[r]))
            dual = max(dual, abs(rho * (t[r] - lam[r]) + eta * (x[r] - xp[r])))
            lam[r] = t[r]
            z[r] -= rho * (x[r] - t[r])
        velocities(G, R, g, lam, w, m)
        res = natural_residual(kind, param, d, lam, w, m)
        if res <= tol:
            if res > EXACT * tol:           # converged: the polished answer when it is better
                polished = polish(G, R, g, kind, param, lam, m, tol, d, A, P)
                if polished < res:
                    accept(P, lam, m)
                    res = polished
            break
        if it >= POLISH_FIRST and (it - POLISH_FIRST) % POLISH_EVERY == 0:
            polished = polish(G, R, g, kind, param, lam, m, tol, d, A, P)
            if polished <= tol:
                accept(P, lam, m)
                return it, polished, rho
        if factors < MAX_FACTORS:
            primal *= dmean
            if primal > RHO_RATIO * dual:
                rho *= RHO_STEP
            elif dual > RHO_RATIO * primal:
                rho /= RHO_STEP
            else:
                continue
            factor(G, R, eta + rho, C, m)
            factors += 1
    return it, res, rho

