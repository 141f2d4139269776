"""The sparse KKT factorization of constrained dynamics and its proximal solve (docs/theory.md
§15.4-§15.6; Pinocchio's ``ContactCholeskyDecomposition`` and ``ProximalSettings``).

The constrained equations of motion are the KKT system (``m`` constraint rows, ``J (m, nv)``)::

    [ M    J^T ] [  qdd ]   [ tau - h ]
    [ J  -mu 1 ] [ -lam ] = [    b_c  ]       b_c = -gamma - Kd J qd - Kp e

factored with the joints first: ``M = L^T D L`` (:func:`.ltdl.ltdl_factor`, branch-induced
sparsity, no fill-in), then the constraint block's Schur complement, the damped Delassus matrix
``G + mu 1`` with ``G = J M^-1 J^T``, by a dense Cholesky (``m x m``)::

    X   = L^-T J^T             each row of J by the sweep of L^T x = J_r^T (tips to base; row r
                                stays on the ancestors of its constraint's bodies)
    G   = X^T D^-1 X            (the rows of X as stored: G_rs = sum_k X_rk X_sk / D_k)
    y   = L^-T (tau - h),       J M^-1 (tau - h) = X D^-1 y
    lam : (G + mu 1) lam_{k+1} = b + mu lam_k,   b = b_c - X D^-1 y,   lam_0 = 0
    qdd = L^-1 D^-1 (y + X^T lam)   (the sweep of L x = z, base to tips)

The proximal iterations (Pinocchio's ``constraintDynamics``) converge to the solution of
``G lam = b`` nearest ``lam_0 = 0``: the exact one for independent constraints, the minimum-norm
one for redundant but consistent constraints (the components of ``lam`` in the null space of
``G`` keep their start, zero). ``mu = 0`` is one exact solve (``G`` must then be positive
definite). The components of ``lam`` in the null space of ``G`` gather the rounding of the right
side divided by ``mu`` (each solve by ``G + mu 1``): about ``eps |G| / mu`` of ``|lam|`` an
iteration, while the others converge at the rate ``mu / (sigma + mu)`` (``sigma`` the smallest
nonzero eigenvalue of ``G``), so ``mu`` is best taken in proportion to ``|G|``
(:func:`kkt_solve` with ``mu < 0``). Each iteration: one Cholesky solve, the residual ``||G lam - b||_inf`` and the step
``||lam_{k+1} - lam_k||_inf``; it stops when either is at most ``accuracy``.

Cost: ``O(n d^2)`` for ``L^T D L``, ``O(m d^2)`` for ``X`` (``d`` the depth of the tree),
``O(m^2 n + m^3)`` for ``G`` and its factor, ``O(m^2)`` an iteration.
"""
import math

from .target import HELPER, KERNEL, njit

# kkt_solve's status: the damped Delassus matrix is not positive definite (redundant constraints with mu = 0)
DELASSUS_SINGULAR = -1


@njit(**HELPER)
def rows_times_inverse_lt(par, H, X, m, nz, cnt, mark):
    """Each of the rows ``X[:m]`` (``nv`` long) replaced by ``L^-T`` times it, in place (``H`` from
    :func:`.ltdl.ltdl_factor`): the sweep of ``L^T x = b``, tips to base, on the row's support only.
    A row of ``J`` is nonzero on the ancestors of its constraint's bodies, and ``L^-T`` keeps it
    there: ``nz[r, :cnt[r]]`` receives that support (the entries nonzero in ``J`` and their
    ancestors), in decreasing order. ``mark (nv,)``: int64 work."""
    n = H.shape[0]
    for r in range(m):
        x = X[r]
        for k in range(n):
            mark[k] = 1 if x[k] != 0.0 else 0
        c = 0
        for k in range(n - 1, -1, -1):
            if mark[k]:
                nz[r, c] = k
                c += 1
                xk = x[k]
                i = par[k]
                if i >= 0:
                    mark[i] = 1
                while i >= 0:
                    x[i] -= H[k, i] * xk
                    i = par[i]
        cnt[r] = c


@njit(**HELPER)
def vector_times_inverse_lt(par, H, x):
    """``x = L^-T x`` in place (the first sweep of :func:`.ltdl.ltdl_solve`)."""
    n = H.shape[0]
    for k in range(n - 1, -1, -1):
        xk = x[k]
        i = par[k]
        while i >= 0:
            x[i] -= H[k, i] * xk
            i = par[i]


@njit(**HELPER)
def solve_lower_from_scaled(par, H, x):
    """``x = L^-1 D^-1 x`` in place: the last two sweeps of :func:`.ltdl.ltdl_solve`."""
    n = H.shape[0]
    for k in range(n):
        x[k] /= H[k, k]
    for k in range(n):
        i = par[k]
        while i >= 0:
            x[k] -= H[k, i] * x[i]
            i = par[i]


@njit(**KERNEL)
def delassus_of(H, X, Y, m, nz, cnt, G):
    """``G = X D^-1 X^T`` (``m x m``, both triangles) from the rows ``X[:m]`` of
    :func:`rows_times_inverse_lt` and their supports ``nz``, ``cnt``; ``Y[:m]`` receives ``X D^-1``
    on the supports (a product by ``1 / D_k``)."""
    for r in range(m):
        for t in range(cnt[r]):
            k = nz[r, t]
            Y[r, k] = X[r, k] * (1.0 / H[k, k])
    for r in range(m):
        for s in range(r + 1):
            acc = 0.0
            for t in range(cnt[r]):      # (X[s] is zero off its support: the product over r's)
                k = nz[r, t]
                acc += Y[r, k] * X[s, k]
            G[r, s] = acc
            G[s, r] = acc


@njit(**HELPER)
def cholesky(A, m):
    """``A = C C^T`` in place on the lower triangle of ``A[:m, :m]``; False when a pivot is not positive."""
    for j in range(m):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@njit(**HELPER)
def cholesky_solve(C, x, m):
    """``x = (C C^T)^-1 x`` in place for the factor ``C`` of :func:`cholesky`."""
    for i in range(m):
        s = x[i]
        for k in range(i):
            s -= C[i, k] * x[k]
        x[i] = s / C[i, i]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, m):
            s -= C[k, i] * x[k]
        x[i] = s / C[i, i]


@njit(**HELPER)
def proximal(G, C, b, m, mu, accuracy, max_iter, lam, w):
    """The proximal iterations on ``G lam = b`` (module docstring): ``C`` the factor of ``G + mu 1``,
    ``lam (m,)`` the result (from zero), ``w (m,)`` work. Returns ``(iterations, residual)``, the
    residual ``||G lam - b||_inf`` of the last iterate."""
    for r in range(m):
        lam[r] = 0.0
    residual = 0.0
    it = 0
    while it < max_iter:
        it += 1
        for r in range(m):
            w[r] = b[r] + mu * lam[r]
        cholesky_solve(C, w, m)
        residual, step = 0.0, 0.0
        for r in range(m):
            acc = -b[r]
            for s in range(m):
                acc += G[r, s] * w[s]
            residual = max(residual, abs(acc))
            step = max(step, abs(w[r] - lam[r]))
            lam[r] = w[r]
        if residual <= accuracy or step <= accuracy:
            break
    return it, residual


@njit(**KERNEL)
def kkt_solve(par, H, X, Y, nz, cnt, G, C, y, b, m, mu, accuracy, max_iter, lam, w, out):
    """The constraint forces and the accelerations of the KKT system (module docstring), from ``M``
    factored in ``H``, the rows ``X = L^-T J^T``, ``Y = X D^-1`` and their supports (``[:m]``, of
    :func:`delassus_of`), ``G = X D^-1 X^T``, ``y = L^-T f`` and the constraint rows' right side
    ``b`` (``b_c``; overwritten by ``b_c - X D^-1 y``): ``lam (m,)`` and ``out = M^-1 (f + J^T lam)``
    (``nv``). ``C``, ``w``: work. Returns ``(iterations, residual, ||b||_inf)``, or
    ``(DELASSUS_SINGULAR, 0, 0)`` when ``G + mu 1`` is not positive definite. ``mu < 0`` stands for ``|mu|`` times the largest
    diagonal entry of ``G`` (a damping in proportion to the constraints' scale)."""
    n = H.shape[0]
    b_norm = 0.0
    for r in range(m):
        acc = 0.0
        for t in range(cnt[r]):
            k = nz[r, t]
            acc += Y[r, k] * y[k]
        b[r] -= acc
        b_norm = max(b_norm, abs(b[r]))
    if mu < 0.0:                       # relative to the largest diagonal entry of G
        scale = 0.0
        for r in range(m):
            scale = max(scale, G[r, r])
        mu = -mu * scale
    for r in range(m):
        for s in range(r + 1):
            C[r, s] = G[r, s]
        C[r, r] += mu
    if not cholesky(C, m):
        return DELASSUS_SINGULAR, 0.0, 0.0
    it, residual = proximal(G, C, b, m, mu, accuracy, max_iter, lam, w)
    for k in range(n):
        out[k] = y[k]
    for r in range(m):
        lr = lam[r]
        for t in range(cnt[r]):
            k = nz[r, t]
            out[k] += X[r, k] * lr
    solve_lower_from_scaled(par, H, out)
    return it, residual, b_norm
