"""Physically consistent estimates: inertial parameters whose pseudo-inertias are positive semidefinite.

A body's parameters are physically consistent (a mass distribution can have them) when its
pseudo-inertia ``J_i(pi)`` (4 x 4, linear in ``pi``; :func:`screwdyn.model_params.pseudo_inertia`)
is positive semidefinite; armature and friction parameters must be non-negative. From a
least-squares estimate ``beta`` (:mod:`.least_squares`) with ``R^T R = Y_b^T W Y_b``::

    minimise    1/2 |R (K pi - beta)|^2 / s^2 + 1/2 regularization |D (pi - prior)|^2
    subject to  J_i(pi) >= 0 for every body,  armature, friction >= 0

a convex problem (quadratic cost, linear matrix inequalities), solved here with numpy and scipy
only (no cvxpy) by a log-det barrier interior-point method: Newton steps on
``t f(pi) - sum_i log det J_i(pi) - sum log extras`` for increasing ``t`` (Boyd & Vandenberghe
11.3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import InputError
from ..model import Model
from ..model_params import (
    inertial_parameters, parameters_from_pseudo_inertia, physical_consistency, pseudo_inertia, with_inertial_parameters,
)

__all__ = ["PhysicalEstimate", "physical_estimate"]


@dataclass(frozen=True, eq=False)
class PhysicalEstimate:
    """A physically consistent estimate: every pseudo-inertia ``J_i`` PSD, extras ``>= 0``.

    ``pi`` the full parameters, ``beta = K pi``, ``model`` the model carrying them; ``rms`` the
    per-joint RMS torque residual on the identification data and ``cost_ratio`` its weighted sum
    of squares over that of the unconstrained estimate (1 when the latter was consistent already).
    """

    pi: np.ndarray
    beta: np.ndarray
    model: Model
    rms: np.ndarray
    cost_ratio: float
    consistent: bool
    margins: np.ndarray


def physical_estimate(est, prior=None, regularization=1e-4, gap=1e-7) -> PhysicalEstimate:
    """The physically consistent estimate nearest the data of the least-squares estimate ``est``
    (an :class:`~screwdyn.ident.Identification`): a convex problem (Wensing et al. 2017).

    Minimises, over the full ``pi``, ::

        f(pi) = 1/2 |R (K pi - beta)|^2 / s^2 + 1/2 regularization |D (pi - prior)|^2
        subject to  J_i(pi) >= 0 (PSD) for every body,  armature, friction >= 0

    where ``R^T R = Y_b^T W Y_b``, so the first term is the increase of the weighted residual
    over the least-squares estimate in units of the noise variance, and ``D`` divides the
    entries of each body (of each group of extras) by their typical size: the largest entry
    of ``prior`` (default the model's own parameters, the CAD values) or of the least-squares
    estimate nearest to it. The small regularisation only fixes the directions the data cannot
    see (the null space of ``K``). Solved by a log-det barrier interior-point method (Newton
    steps on ``t f - sum_i log det J_i - sum log extras`` for increasing ``t``, Boyd &
    Vandenberghe 11.3) with numpy only, to a duality gap below ``gap`` (in noise-variance units):
    the result is strictly inside the consistent set.
    """
    flags = est.base.flags
    model, n = est.model, est.model.n
    if prior is None:
        prior = inertial_parameters(model, **flags)
    prior = np.asarray(prior, dtype=float)
    if prior.shape != (len(est.base.parameter_names),):
        raise InputError(f"prior must have shape ({len(est.base.parameter_names)},), got {prior.shape}")
    Rw = est._Rw
    s2 = max(est._s2, 1e-12 * est._tau_ms)   # noise-free data: misfit against 1e-6 of the torques
    K, beta = est.base.K, est.beta
    # typical sizes: per body and per extra group, the largest entry of the prior or of the
    # least-squares estimate nearest to it
    pi_ls = est.base.full(beta, prior)
    size = np.maximum(np.abs(prior), np.abs(pi_ls))
    size[:10 * n] = np.maximum(size[:10 * n].reshape(n, 10).max(axis=1), 1e-6).repeat(10)
    size[10 * n:] = np.maximum(size[10 * n:].reshape(-1, n).max(axis=1, initial=0.0), 1e-6).repeat(n)
    D = 1.0 / size
    # f(pi) = 1/2 |A pi - b|^2, in the scaled variables y = D pi (entries of order one)
    A = np.vstack([Rw @ K / np.sqrt(s2), np.sqrt(regularization) * np.eye(len(prior)) * D]) / D
    b = np.concatenate([Rw @ beta / np.sqrt(s2), np.sqrt(regularization) * D * prior])
    y = D * _interior_start(pi_ls, n, size)   # start near the least-squares estimate
    y = _barrier_solve(A, b, y, D, n, gap)
    pi = y / D
    ok, margins = physical_consistency(model, pi, **flags, tol=1e-7)
    beta_p = K @ pi
    rms = est._rms(beta_p)
    d = Rw @ (beta_p - beta)
    cost0 = est._cost0
    ratio = float((cost0 + d @ d) / cost0) if cost0 > 0 else float("inf")
    return PhysicalEstimate(pi, beta_p, with_inertial_parameters(model, pi, **flags), rms, ratio, ok, margins)


# The pseudo-inertia is linear in a body's parameters: J_i = sum_k pi_ik B_k.
_PSEUDO_BASIS = pseudo_inertia(np.eye(10))


def _interior_start(pi, n, size):
    """``pi`` moved strictly inside the consistent set: each ``J_i``'s eigenvalues raised to at
    least ``1e-4`` of its largest (of ``size`` for a massless body), each extra to at least
    ``1e-3`` of ``size`` (its typical magnitude)."""
    pi = pi.copy()
    J = pseudo_inertia(pi[:10 * n].reshape(n, 10))
    e, U = np.linalg.eigh(J)
    floor = np.maximum(1e-4 * e[:, -1:], 1e-4 * size[:10 * n:10, None])
    pi[:10 * n] = parameters_from_pseudo_inertia((U * np.maximum(e, floor)[:, None, :]) @ np.swapaxes(U, 1, 2)).ravel()
    pi[10 * n:] = np.maximum(pi[10 * n:], 1e-3 * size[10 * n:])
    return pi


def _barrier(pi, n):
    """The barrier ``phi = -sum_i log det J_i - sum log e`` and a square root of its Hessian;
    None outside the consistent set (or within rounding of its boundary).

    With ``J_i = L L^T`` and ``M_k = L^-1 B_k L^-T`` (``J_i = sum_k pi_ik B_k``): ``d phi / d pi_ik
    = -tr(J^-1 B_k) = -<1, M_k>`` and ``d^2 phi = tr(J^-1 B_k J^-1 B_l) = <M_k, M_l>``, so with
    ``G_i = [vec M_1 .. vec M_10]`` (16 x 10) the Hessian is ``G^T G`` and the gradient
    ``G^T (-vec 1)``; for an extra ``e``, ``(1/e)^2`` and ``(1/e)(-1)``. Returns
    ``(phi, G (16 n + n_e, p), c (16 n + n_e))``: Hessian ``G^T G``, gradient ``G^T c``.
    """
    J = pseudo_inertia(pi[:10 * n].reshape(n, 10))
    ext = pi[10 * n:]
    try:
        L = np.linalg.cholesky(J)
    except np.linalg.LinAlgError:
        return None
    d = np.diagonal(L, axis1=1, axis2=2)
    if np.any(ext <= 0) or np.any(d.min(axis=1) <= 1e-7 * d.max(axis=1)):   # cond(J_i) > 1e14: treat as outside
        return None
    val = -2.0 * np.sum(np.log(d)) - np.sum(np.log(ext))
    Linv = np.linalg.inv(L)
    M = np.einsum("nab,kbc,ndc->nadk", Linv, _PSEUDO_BASIS, Linv).reshape(n, 16, 10)
    ne = len(ext)
    G = np.zeros((16 * n + ne, len(pi)))
    for i in range(n):
        G[16 * i:16 * i + 16, 10 * i:10 * i + 10] = M[i]
    G[16 * n + np.arange(ne), 10 * n + np.arange(ne)] = 1.0 / ext
    c = np.concatenate([np.tile(-np.eye(4).ravel(), n), -np.ones(ne)])
    return val, G, c


def _max_step(pi, dpi, n):
    """The largest ``a`` keeping ``pi + a dpi`` consistent: ``J + a dJ > 0`` iff
    ``a < -1 / lambda_min(L^-1 dJ L^-T)`` with ``J = L L^T``; extras ``e + a de > 0``."""
    L = np.linalg.cholesky(pseudo_inertia(pi[:10 * n].reshape(n, 10)))
    dJ = pseudo_inertia(dpi[:10 * n].reshape(n, 10))
    X = np.linalg.solve(L, dJ)
    lam = np.linalg.eigvalsh(np.linalg.solve(L, np.swapaxes(X, 1, 2)))[:, 0]
    e, de = pi[10 * n:], dpi[10 * n:]
    limits = np.concatenate([-1.0 / lam[lam < 0], -e[de < 0] / de[de < 0]])
    return limits.min(initial=np.inf)


def _barrier_solve(A, b, y, D, n, gap, mu=10.0, max_newton=100):
    """Minimise ``1/2 |A y - b|^2`` over the consistent set (``pi = y / D``) from a strictly
    feasible ``y``: the barrier method, Newton steps, each at most 0.99 of the way to the
    boundary, then backtracking (Armijo) on the barrier-augmented cost."""
    m = 4 * n + (len(y) - 10 * n)          # barrier parameter: log det of 4x4 counts 4
    p = A.shape[1]
    t = 1.0
    while True:
        for _ in range(max_newton):
            val, G, c_phi = _barrier(y / D, n)
            r = A @ y - b
            # Newton step as a least-squares problem, never forming a Hessian: minimise
            # |B dy + c|^2 with B = [sqrt(t) A; G / D], c = [sqrt(t) r; c_phi]  (B^T B = H, B^T c = g)
            Bc = np.vstack([np.hstack([np.sqrt(t) * A, np.sqrt(t) * r[:, None]]),
                            np.hstack([G / D, c_phi[:, None]])])
            Rc = scipy.linalg.qr(Bc, mode="r", overwrite_a=True, check_finite=False)[0]   # [R, Q^T c]
            dy = -scipy.linalg.solve_triangular(Rc[:p, :p], Rc[:p, p])
            dec = float(np.sum(Rc[:p, p] ** 2))                     # Newton decrement squared |B dy|^2
            if dec < 1e-9:
                break
            Ad = A @ dy
            step = min(1.0, 0.99 * _max_step(y / D, dy / D, n))
            while step > 1e-10:
                bn = _barrier((y + step * dy) / D, n)
                # the change of t f + phi, written as a difference so that it keeps its digits
                if bn is not None and (t * step * (Ad @ r + 0.5 * step * Ad @ Ad) + bn[0] - val
                                       <= -0.25 * step * dec):
                    break
                step *= 0.5
            else:
                break                                               # no progress: rounding level
            y = y + step * dy
        if m / t < gap:
            return y
        t *= mu
