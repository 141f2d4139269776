"""The contact problem's solver: ADMM on the Delassus matrix (docs/theory.md §17.4; the method of
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
is at most ``tol``, and returns ``y``: always in ``K``. ``rho`` grows (shrinks) by ``RHO_STEP``
when the primal residual ``|x - y|`` (times the mean diagonal of ``G + R``) exceeds the dual
residual ``|rho dy + eta dx|`` ``RHO_RATIO`` times (or the converse), with a new factorization,
at most ``MAX_FACTORS`` times a solve. The start is the caller's ``lam`` (the last step's
impulses: a warm start) and ``rho`` (the last solve's, or ``RHO_START`` times the mean diagonal):
a resting robot, whose impulses do not change, needs no iteration. Cost: ``m^3 / 6`` a
factorization, ``3 m^2`` an iteration.
"""
from numba import njit

from .cone import natural_residual, project, shift
from .internals import HELPER, KERNEL
from .kkt import cholesky, cholesky_solve

PROX = 1e-9          # eta, relative to the largest diagonal entry of G + R
RHO_START = 0.1      # rho of a first solve, relative to the mean diagonal entry of G + R
RHO_RATIO = 10.0
RHO_STEP = 4.0
MAX_FACTORS = 12
WORK_ROWS = 7        # rows of the solver's work array (m columns each)


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


@njit(**HELPER)
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


@njit(**KERNEL)
def admm(G, R, g, kind, param, m, tol, max_iter, rho, lam, C, W):
    """Solve the contact problem of the module docstring for ``lam[:m]`` (in: the warm start, out:
    the impulses). ``G (>= m, >= m)``, ``R``, ``g``, ``kind``, ``param`` (``(>= m,)``: :mod:`.cone`'s
    kinds and parameters); ``tol`` the residual to reach, ``max_iter`` the most iterations, ``rho``
    the penalty to start from (``<= 0``: ``RHO_START`` times the mean diagonal). Work: ``C (>= m,
    >= m)``, ``W (WORK_ROWS, >= m)``. Returns ``(iterations, residual, rho)``; a residual above
    ``tol`` after ``max_iter`` iterations is the caller's to report."""
    if m == 0:
        return 0, 0.0, rho
    x, xp, z, s, w, t, d = W[0], W[1], W[2], W[3], W[4], W[5], W[6]
    block_scales(kind, G, R, d, m)
    project(kind, param, lam, lam, m)
    velocities(G, R, g, lam, w, m)
    res = natural_residual(kind, param, d, lam, w, m)
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
            break
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

