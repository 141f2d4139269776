"""Identification from Dask arrays: least squares over data in chunks, the regressor never whole.

Row blocks of a least-squares problem combine through their R factors (docs/theory.md §12.5): for
``A = [A_1; A_2]``, ``A^T A = R_1^T R_1 + R_2^T R_2 = R^T R`` with ``R = qr([R_1; R_2])`` (TSQR,
Demmel et al. 2012).
So each chunk of samples gives, for each joint ``j``, the R factor ``R_j`` (``(r+1) x (r+1)``) of
its equations ``[Y_b,j | tau_j]`` (the samples of the chunk where equation ``j`` is used, in slabs of
:data:`SLAB` samples), and a tree of QRs over the chunks (Dask's reduction, on the cluster)
combines them. From the ``n`` factors and the counts ``N_j``, with no second pass over the data::

    R_w = qr([sqrt(w_1) R_1; ...; sqrt(w_n) R_n])        the R factor of [W^1/2 Y_b | W^1/2 tau]
    beta, cov                                             from R_w, as the in-memory solve (columns scaled)
    |W^1/2 (tau - Y_b beta)|^2 = |R_w [beta; -1]|^2,      sum_k (tau_kj - Y_b,kj beta)^2 = |R_j [beta; -1]|^2

hence ``s^2``, ``sigma``, ``rms`` and every reweighting of Gautier's weighted least squares (weights
per joint). Weights per sample (an ``(N, n)`` array) add the factors of the weighted rows. The
numbers are those of :func:`~screwdyn.ident.identify` on the data in memory, to rounding: the
factors are orthogonal transformations of the same rows (never the normal equations, whose
condition number is the square).

Velocities and accelerations filtered from positions need the samples around each one: each
chunk is extended by the filter's window on both sides (``dask.array.map_overlap``) and filtered
run by run (:func:`~screwdyn.ident.derivatives.filter_runs`), never across two runs.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .._dask import as_array, chunk_threads, compute, is_dask, located
from ..errors import InputError, ScrewdynError
from .base import base_regressor
from .derivatives import _window, filter_runs, period, step_stats
from .least_squares import Identification, _enough, covariance, joint_weights, solution
from .torque_regressor import regressor

__all__ = ["SLAB", "identify_chunked"]

SLAB = 8192   # samples per regressor evaluation within a chunk: a chunk's work is O(SLAB), whatever its size


def identify_chunked(model, q, qd, qdd, tau, *, t=None, dt=None, runs=None, base, weights=None, window=None,
                     polyorder=4, trim=None, min_speed=0.0) -> Identification:
    """:func:`~screwdyn.ident.identify` on Dask arrays (any of the data one): the same arguments
    and result, computed chunk by chunk along the samples (the chunks of ``q``). Two passes over the
    data at most: the sample times (for the sampling period, when ``qd`` is estimated and ``dt`` not
    given), then everything else. The data fields of the result are Dask arrays of every sample."""
    import dask.array as da
    n, nq, r = model.n, model.nq, base.rank
    p = r + 1
    q = as_array(q, "q")
    if q.ndim != 2 or q.shape[1] != nq:
        raise InputError(f"q must have shape (N, {nq}) for this model, got {q.shape}")
    N = q.shape[0]
    lazy = [x for x in (q, tau, qd, qdd, t, runs, weights) if is_dask(x) and x.shape[:1] == (N,)]
    chunks = lazy[0].chunks[0] if lazy else q.chunks[0]   # the chunks of the first Dask array given

    def aligned(x, name, shape, what):
        x = as_array(x, name)
        if x.shape != shape:
            raise InputError(f"{name} must have {what}, got {x.shape}")
        return x.rechunk({0: chunks, **({1: -1} if x.ndim == 2 else {})})

    tau = aligned(tau, "tau", (N, n), f"shape {(N, n)}")
    q = q.rechunk({0: chunks, 1: -1})
    differentiate = qd is None
    if not differentiate:
        qd = aligned(qd, "qd", tau.shape, f"shape {tau.shape}")
        qdd = aligned(qdd, "qdd", tau.shape, f"shape {tau.shape}")
    runs = None if runs is None else aligned(runs, "runs", (N,), f"{N} entries (one label per sample)")
    t = None if t is None else aligned(t, "t", (N,), f"{N} entries")
    if weights is not None and not isinstance(weights, str) and np.shape(weights)[:1] == (1,) and np.ndim(weights) == 2:
        weights = np.asarray(weights)[0]   # (1, n): per joint
    weighted = weights is not None and not isinstance(weights, str) and np.ndim(weights) == 2
    if weighted:
        weights = aligned(weights, "weights", tau.shape, f"shape ({n},) or ({N}, {n})")
    if differentiate:
        if dt is None:
            if t is None:
                raise InputError("qd and qdd are estimated from q: give the sample times t or the period dt")
            dt = period(_step_stats(t, runs))
        window = _window(window, dt, polyorder)
        trim = window // 2 if trim is None else int(trim)
        if window <= polyorder:
            raise InputError(f"window ({window}) must exceed polyorder ({polyorder})")
    trim = int(trim or 0)
    depth = max(window if differentiate else 0, trim)

    # [q | qd | qdd | tau | run | weights], a chunk of samples a block of rows; then filtered (qd and
    # qdd from q), with the run column replaced by "inside", the samples kept after trimming
    zeros = da.zeros((N, n), chunks=(chunks, n))   # (qd, qdd until filtered)
    parts = [q, zeros if differentiate else qd, zeros if differentiate else qdd, tau,
             (da.zeros((N, 1), chunks=(chunks, 1)) if runs is None else runs[:, None])]
    source = da.concatenate(parts + ([weights] if weighted else []), axis=1).rechunk({1: -1})
    data = da.map_overlap(partial(_filter, cols=_Columns(nq, n), dt=dt, window=window, polyorder=polyorder, trim=trim,
                                  differentiate=differentiate, runs=runs is not None),
                          source, depth={0: depth, 1: 0}, boundary="none", dtype=float, meta=np.empty((0, 0)))
    width = n + n * p * p * (2 if weighted else 1)
    factors = data.map_blocks(partial(_factors, model, base, min_speed, weighted), dtype=float,
                              chunks=((1,) * data.numblocks[0], (width,)), meta=np.empty((0, 0)))
    combine = partial(_combine, n, p, weighted)
    total = da.reduction(factors, _chunk, combine, combine=combine, axis=0, keepdims=True, concatenate=True,
                         split_every=8, dtype=float, meta=np.empty((0, 0)))
    (total,) = compute(total)
    Nj, Rj, Rwj = _unpack(total[0], n, p, weighted)
    _enough(Nj, r, N, n)

    def weighted_factor(wj):
        """The R factor of ``[W^1/2 Y_b | W^1/2 tau]`` for per-joint weights ``wj``."""
        return _r(np.concatenate(np.sqrt(wj)[:, None, None] * Rj), p)

    def solve(Ra):
        colnorm = np.linalg.norm(Ra[:, :r], axis=0)
        colnorm[colnorm == 0] = 1.0
        return solution(np.concatenate([Ra[:, :r] / colnorm, Ra[:, r:]], axis=1), colnorm)

    def joint_residuals(beta):
        return np.sum((Rj @ np.append(beta, -1.0)) ** 2, axis=1)

    used = Nj > 0
    if weighted:
        Ra, method = _r(np.concatenate(Rwj), p), "wls"
    elif weights is None:
        Ra, method = weighted_factor(used * 1.0), "ols"
    elif isinstance(weights, str):
        if weights != "joint":
            raise InputError(f"weights must be None, 'joint' or an array, got {weights!r}")
        wj = joint_weights(lambda wj: solve(weighted_factor(wj))[0],
                           lambda beta: joint_residuals(beta) / np.maximum(Nj - r / n, 1.0), used)
        Ra, method = weighted_factor(wj), "wls"
    else:
        wj = np.asarray(weights, dtype=float)
        if wj.shape != (n,):
            raise InputError(f"weights must have shape ({n},) or ({N}, {n}), got {wj.shape}")
        if not np.all(np.isfinite(wj)) or np.any(wj < 0):
            raise InputError("weights must be finite and >= 0")
        Ra, method = weighted_factor(wj * used), "wls"
    beta, Rw, cond = solve(Ra)
    cost0 = float(np.sum((Ra @ np.append(beta, -1.0)) ** 2))
    s2 = cost0 / (Nj.sum() - r)
    cov = covariance(Rw, s2)
    res2 = joint_residuals(beta)
    sigma = np.sqrt(res2 / np.maximum(Nj - r / n, 1.0))
    rms = np.sqrt(res2 / np.maximum(Nj, 1))
    c = _Columns(nq, n)
    q, qd, qdd, tau = data[:, c.q], data[:, c.qd], data[:, c.qdd], data[:, c.tau]
    keep = (data[:, c.run:c.run + 1] > 0.5) & (abs(qd) >= min_speed)
    tau_fit = base_regressor(model, q, qd, qdd, base=base) @ beta
    return Identification(model, base, beta, np.sqrt(np.diag(cov)), cov, sigma, rms, method, float(cond),
                          q, qd, qdd, tau, tau_fit, t, Rw, s2, cost0, float(np.sum(Ra[:, r] ** 2) / Nj.sum()), keep,
                          _Rj=Rj, _Nj=Nj)


# ---------------------------------------------------------------------------------- per chunk
class _Columns:
    """Where a chunk's columns are: ``[q (nq) | qd (n) | qdd (n) | tau (n) | run | weights (n)]``."""

    def __init__(self, nq, n):
        self.q, self.qd, self.qdd = slice(0, nq), slice(nq, nq + n), slice(nq + n, nq + 2 * n)
        self.tau = slice(nq + 2 * n, nq + 3 * n)
        self.run = nq + 3 * n
        self.w = slice(nq + 3 * n + 1, None)


def _filter(block, *, cols, dt, window, polyorder, trim, differentiate, runs, block_info=None):
    """A chunk extended by its neighbours' samples (``map_overlap``): ``q`` filtered run by run into
    ``(q, qd, qdd)`` when ``differentiate``, and the run column replaced by 1 for the samples kept
    (``trim`` from the ends of their run), 0 for the others."""
    info = block_info[0]
    k, count = info["chunk-location"][0], info["num-chunks"][0]
    out = block.copy()
    q_f, qd, qdd, inside = filter_runs(block[:, cols.q], dt, block[:, cols.run] if runs else None, window=window,
                                       polyorder=polyorder, trim=trim, differentiate=differentiate,
                                       open_ends=(k > 0, k < count - 1))
    if differentiate:
        out[:, cols.q], out[:, cols.qd], out[:, cols.qdd] = q_f, qd, qdd
    out[:, cols.run] = inside
    return out


def _factors(model, base, min_speed, weighted, block, block_info=None):
    """A chunk's counts ``N_j`` and factors ``R_j`` (and those of the weighted rows), packed in a row."""
    n, r = model.n, base.rank
    p = r + 1
    start = block_info[0]["array-location"][0][0] if block_info else 0
    cols = _Columns(model.nq, n)
    q, qd, qdd, tau = block[:, cols.q], block[:, cols.qd], block[:, cols.qdd], block[:, cols.tau]
    inside = block[:, cols.run] > 0.5
    w = block[:, cols.w] if weighted else None
    if not np.all(np.isfinite(tau[inside])):
        raise InputError("tau contains NaN or inf")
    if weighted and (not np.all(np.isfinite(w)) or np.any(w < 0)):
        raise InputError("weights must be finite and >= 0")
    counts = np.zeros(n)
    R = np.zeros((n, p, p))
    Rw = np.zeros((n, p, p)) if weighted else None
    for a in range(0, block.shape[0], SLAB):
        rows = slice(a, a + SLAB)
        keep = inside[rows, None] & (np.abs(qd[rows]) >= min_speed)
        if not keep.any():
            continue
        try:
            with chunk_threads():
                Y = regressor(model, q[rows], qd[rows], qdd[rows], **base.flags)   # (s, n, p_full)
        except ScrewdynError as e:
            raise located(e, [start + a]) from None
        for j in range(n):
            used = np.flatnonzero(keep[:, j])
            A = np.empty((p + used.size, p))
            A[:p] = R[j]
            A[p:, :r] = np.take(Y[used, j], base.independent, axis=1)   # Y_b,j
            A[p:, r] = tau[a + used, j]
            if weighted:
                sw = np.sqrt(w[a + used, j])[:, None]
                Rw[j] = _r(np.concatenate([Rw[j], A[p:] * sw]), p)
            R[j] = _r(A, p)
            counts[j] += used.size
    return _pack(counts, R, Rw)[None, :]


def _chunk(x, axis=None, keepdims=None):
    return x


def _combine(n, p, weighted, x, axis=None, keepdims=None):
    """Rows of packed factors combined into one: counts added, factors stacked and factored."""
    parts = [_unpack(row, n, p, weighted) for row in x]
    counts = sum(c for c, _, _ in parts)
    R = np.stack([_r(np.concatenate([f[j] for _, f, _ in parts]), p) for j in range(n)])
    Rw = np.stack([_r(np.concatenate([f[j] for _, _, f in parts]), p) for j in range(n)]) if weighted else None
    return _pack(counts, R, Rw)[None, :]


def _r(A, p):
    """The ``(p, p)`` R factor of ``A`` (rows of zeros below when ``A`` has fewer than ``p``)."""
    R = np.linalg.qr(A, mode="r")
    if R.shape[0] < p:
        R = np.concatenate([R, np.zeros((p - R.shape[0], p))])
    return R


def _pack(counts, R, Rw):
    return np.concatenate([counts, R.ravel()] + ([Rw.ravel()] if Rw is not None else []))


def _unpack(row, n, p, weighted):
    m = n * p * p
    return row[:n], row[n:n + m].reshape(n, p, p), (row[n + m:n + 2 * m].reshape(n, p, p) if weighted else None)


# ---------------------------------------------------------------------------------- sampling period
def _step_stats(t, runs):
    """:func:`~screwdyn.ident.derivatives.step_stats` of the whole of ``t``: chunk by chunk, then
    the steps from one chunk to the next (within a run) added on the client."""
    import dask.array as da
    src = t[:, None] if runs is None else da.stack([t, runs], axis=1).rechunk({1: -1})
    rows = src.map_blocks(_chunk_steps, chunks=((1,) * src.numblocks[0], (8,)), dtype=float, meta=np.empty((0, 0)))
    (rows,) = compute(rows)
    total, count, lo, hi = 0.0, 0, np.inf, -np.inf
    for k, (s, c, a, b, t0, t1, r0, r1) in enumerate(rows):
        total, count, lo, hi = total + s, count + int(c), min(lo, a), max(hi, b)
        if k and r0 == rows[k - 1][7] and np.isfinite(rows[k - 1][5]):
            step = t0 - rows[k - 1][5]
            total, count, lo, hi = total + step, count + 1, min(lo, step), max(hi, step)
    return total, count, lo, hi


def _chunk_steps(block):
    t = block[:, 0]
    runs = block[:, 1] if block.shape[1] > 1 else None
    if not t.size:
        return np.array([[0.0, 0, np.inf, -np.inf, np.nan, np.nan, np.nan, np.nan]])
    s, c, lo, hi = step_stats(t, runs)
    r0, r1 = (runs[0], runs[-1]) if runs is not None else (0.0, 0.0)
    return np.array([[s, c, lo, hi, t[0], t[-1], r0, r1]])
