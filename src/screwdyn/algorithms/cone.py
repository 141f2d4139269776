"""The sets of the contact problem, row by row: the Coulomb cone and the other kinds of constraint
rows that :mod:`.ncp` solves together (docs/theory.md §18.3).

Every row ``r`` of the problem has an impulse ``lam_r`` (a force times the step), a velocity
``w_r`` (the constraint's velocity after the step, with its bias, compliance and, for a cone, the
de Saxcé shift) and a kind, with its parameter ``p_r``::

    NORMAL     the first of three rows (normal, tangent 1, tangent 2) of a contact:
               lam in the Coulomb cone K_mu = {(l_n, l_t): |l_t| <= mu l_n},  mu = p_r;
               w = u + (mu |u_t|, 0, 0) in its dual K_mu* = {(w_n, w_t): mu |w_t| <= w_n},  lam . w = 0
    TANGENT    the rows after a NORMAL (read with it)
    UNILATERAL lam >= 0,  w >= 0,  lam w = 0                  (a joint limit; a frictionless contact)
    BOX        -p_r <= lam <= p_r,  w >= 0 at -p_r, w <= 0 at p_r, w = 0 between   (joint dry friction)
    FREE       lam free,  w = 0                               (a bilateral constraint)

The per-row helpers take and return plain numbers (three for a cone), so that a driver on any
backend can call them; the loops over a problem's rows are kernels of their own (one compiled
copy for their several callers).
"""
import math

from .target import HELPER, KERNEL, njit

NORMAL, TANGENT, UNILATERAL, BOX, FREE = 0, 1, 2, 3, 4


@njit(**HELPER)
def project_cone(mu, n, t1, t2):
    """The Euclidean projection of ``(n, t1, t2)`` onto the Coulomb cone ``K_mu``: itself inside,
    zero in the polar cone (``n + mu |t| <= 0``), else onto the cone's boundary ray in the plane of
    ``n`` and ``t``: ``a (1, mu t / |t|)`` with ``a = (n + mu |t|) / (1 + mu^2)``. ``mu = 0``: the ray
    ``(max(n, 0), 0, 0)``."""
    t = math.sqrt(t1 * t1 + t2 * t2)
    if t <= mu * n:
        return n, t1, t2
    if mu * t <= -n:
        return 0.0, 0.0, 0.0
    a = (n + mu * t) / (1.0 + mu * mu)
    s = mu * a / t
    return a, s * t1, s * t2


@njit(**HELPER)
def desaxce(mu, t1, t2):
    """The de Saxcé shift of a contact's normal velocity, ``mu |u_t|``: with it, the cone
    complementarity ``K_mu ∋ lam ⊥ u + (mu |u_t|, 0, 0) ∈ K_mu*`` is Coulomb's law (sticking inside
    the cone, sliding on its boundary against the slip) and no longer lets a sliding contact lift."""
    return mu * math.sqrt(t1 * t1 + t2 * t2)


@njit(**HELPER)
def project_row(kind, p, x):
    """The projection of one row's ``x`` onto its set (not for NORMAL and TANGENT rows, which
    :func:`project_cone` takes three at a time)."""
    if kind == UNILATERAL:
        return max(x, 0.0)
    if kind == BOX:
        return min(max(x, -p), p)
    return x


@njit(**KERNEL)
def project(kind, param, x, out, m):
    """``out = P(x)``: every row of ``x[:m]`` projected onto its set (``out`` may be ``x``)."""
    r = 0
    while r < m:
        k = int(kind[r])
        if k == NORMAL:
            out[r], out[r + 1], out[r + 2] = project_cone(param[r], x[r], x[r + 1], x[r + 2])
            r += 3
        else:
            out[r] = project_row(k, param[r], x[r])
            r += 1


@njit(**KERNEL)
def shift(kind, param, w, s, m):
    """The de Saxcé shifts ``s[:m]`` of the velocities ``w``: ``mu |w_t|`` on each NORMAL row, zero
    on the others."""
    for r in range(m):
        s[r] = 0.0
    for r in range(m):
        if int(kind[r]) == NORMAL:
            s[r] = desaxce(param[r], w[r + 1], w[r + 2])


@njit(**KERNEL)
def natural_residual(kind, param, scale, lam, w, m):
    """The complementarity residual of ``(lam, w)`` [velocity units]: over each block (a contact's
    three rows, or one row) with scale ``d > 0``, ``d |lam - P(lam - w' / d)|_inf``, zero exactly
    when ``lam`` is in its set, ``w'`` in the dual set and ``lam . w' = 0`` (the natural map of
    the complementarity problem), ``w'`` the velocities ``w`` with the de Saxcé shift of each
    contact added here; ``scale[r]``: the block's ``d`` on its first row (a diagonal entry of the
    Delassus matrix, so that the residual is a velocity)."""
    res = 0.0
    r = 0
    while r < m:
        k = int(kind[r])
        d = scale[r]
        if k == NORMAL:
            wn = w[r] + desaxce(param[r], w[r + 1], w[r + 2])
            a, b, c = project_cone(param[r], lam[r] - wn / d, lam[r + 1] - w[r + 1] / d, lam[r + 2] - w[r + 2] / d)
            res = max(res, d * max(abs(lam[r] - a), max(abs(lam[r + 1] - b), abs(lam[r + 2] - c))))
            r += 3
        else:
            if k == FREE:
                e = abs(w[r])
            else:
                e = d * abs(lam[r] - project_row(k, param[r], lam[r] - w[r] / d))
            res = max(res, e)
            r += 1
    return res
