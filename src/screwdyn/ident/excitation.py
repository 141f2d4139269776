"""Excitation trajectories: Fourier series optimised for the conditioning of the base regressor.

Each joint follows a finite Fourier series (Swevers, Ganseman, Tukel, de Schutter, van Brussel
1997), ``l = 1 .. L``, ``w = 2 pi / period``::

    q_j(t) = q0_j + sum_l  a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t)

Its coefficients ``x = (a, b, q0)`` solve ::

    minimise  log cond(Y_b(x))    subject to  lo <= q(t_k) <= hi,  |qd(t_k)| <= qd_max,  |qdd(t_k)| <= qdd_max

with ``Y_b`` the base regressor (:mod:`.base`) stacked at instants ``t_k`` over one period; the
constraints are linear in ``x``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dispatch import check_model
from ..errors import InputError
from ..model import Model
from .base import BaseParameters, base_parameters
from .torque_regressor import regressor

__all__ = ["FourierTrajectory", "excitation_trajectory"]


@dataclass(frozen=True)
class FourierTrajectory:
    """A finite Fourier series per joint (Swevers, Ganseman, Tukel, de Schutter, van Brussel 1997)::

        q_j(t)   = q0_j + sum_l  a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t)
        qd_j(t)  =        sum_l  a_jl cos(w l t) + b_jl sin(w l t)
        qdd_j(t) =        sum_l -a_jl w l sin(w l t) + b_jl w l cos(w l t)

    ``l = 1 .. L``, ``w = 2 pi / period``; periodic, so it can be repeated and averaged.
    ``a, b`` are ``(n, L)``, ``q0`` is ``(n,)``. ``cond`` is the condition number of the stacked
    base regressor it was optimised for (NaN if unknown).
    """

    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    period: float
    cond: float = float("nan")

    @property
    def omega(self) -> float:
        return 2.0 * np.pi / self.period

    def __call__(self, t):
        """``q, qd, qdd`` at times ``t`` (scalar or ``(N,)``): each ``(n,)`` or ``(N, n)``."""
        t = np.asarray(t, dtype=float)
        Pq, Pd, Pa = _fourier_basis(t.reshape(-1), self.omega, self.a.shape[1])
        q = self.q0 + Pq[0] @ self.a.T + Pq[1] @ self.b.T
        qd = Pd[0] @ self.a.T + Pd[1] @ self.b.T
        qdd = Pa[0] @ self.a.T + Pa[1] @ self.b.T
        if t.ndim == 0:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd


def _fourier_basis(t, w, L):
    """``(N, L)`` basis matrices for (a, b) of q, qd, qdd at times ``t``."""
    wl = w * np.arange(1, L + 1)
    s = np.sin(np.outer(t, wl))
    c = np.cos(np.outer(t, wl))
    return (s / wl, -c / wl), (c, s), (-s * wl, c * wl)


def _joint_box(model, q_range, margin):
    default = np.where(model.joint_type == 0, q_range, q_range / np.pi)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -default)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, default)
    shrink = margin * (hi - lo)
    return lo + shrink, hi - shrink


def excitation_trajectory(model: Model, *, base: BaseParameters | None = None, harmonics=5, period=10.0, samples=60,
                          q_range=np.pi, margin=0.05, qd_max=None, qdd_max=None, maxiter=30, seed=0,
                          armature=False, viscous=False, coulomb=False) -> FourierTrajectory:
    """An excitation trajectory optimised for the condition number of the stacked base regressor.

    A :class:`FourierTrajectory` with ``harmonics`` terms per joint and the given ``period``
    [s]; its coefficients minimise ``log cond(Y_b)``, ``Y_b`` stacked at ``samples`` instants
    evenly spread over one period, by SLSQP (:func:`scipy.optimize.minimize`), subject to linear
    constraints at those instants:

    * the joint limits (shrunk by ``margin`` of the range each side; a joint without limits gets
      ``[-q_range, q_range]`` rad, or ``q_range / pi`` m if prismatic),
    * ``|qd| <= qd_max`` (default ``model.velocity_limit`` where finite, else no bound),
    * ``|qdd| <= qdd_max`` when given (scalar or ``(n,)``).

    The start is a random series (``seed``) scaled into the constraints. ``base`` defaults to
    :func:`base_parameters` with the given flags. Check the limits between the samples on a
    fine grid before running it on hardware.
    """
    check_model(model)
    if base is None:
        base = base_parameters(model, armature=armature, viscous=viscous, coulomb=coulomb)
    n, L = model.n, int(harmonics)
    if L < 1 or samples < 2 or period <= 0:
        raise InputError("excitation_trajectory: harmonics >= 1, samples >= 2 and period > 0 are required")
    w = 2.0 * np.pi / period
    t = np.arange(samples) * (period / samples)
    Pq, Pd, Pa = _fourier_basis(t, w, L)
    lo, hi = _joint_box(model, q_range, margin)
    vmax = np.broadcast_to(np.asarray(model.velocity_limit if qd_max is None else qd_max, dtype=float), (n,))
    amax = np.broadcast_to(np.asarray(np.inf if qdd_max is None else qdd_max, dtype=float), (n,))
    nx = 2 * n * L + n

    def unpack(x):
        return x[:n * L].reshape(n, L), x[n * L:2 * n * L].reshape(n, L), x[2 * n * L:]

    # Linear maps x -> q (N n), qd, qdd: row (k, j) of each.
    def linear_map(P, with_q0):
        M = np.zeros((samples, n, nx))
        for j in range(n):
            M[:, j, j * L:(j + 1) * L] = P[0]
            M[:, j, n * L + j * L:n * L + (j + 1) * L] = P[1]
            if with_q0:
                M[:, j, 2 * n * L + j] = 1.0
        return M.reshape(samples * n, nx)

    Mq, Md, Ma = linear_map(Pq, True), linear_map(Pd, False), linear_map(Pa, False)
    rows, lb, ub = [Mq], [np.tile(lo, samples)], [np.tile(hi, samples)]
    for M, bound in ((Md, vmax), (Ma, amax)):
        fin = np.tile(np.isfinite(bound), samples)
        if fin.any():
            rows.append(M[fin])
            lb.append(-np.tile(bound, samples)[fin])
            ub.append(np.tile(bound, samples)[fin])
    A, lb, ub = np.vstack(rows), np.concatenate(lb), np.concatenate(ub)

    r, h = base.rank, 1e-6

    def objective(x):
        """``log cond(Y_b)`` and its gradient: ``d log(s_1 / s_r) = u_1^T dY v_1 / s_1 - u_r^T dY v_r / s_r``,
        with ``dY / d(q, qd, qdd)`` of each sample by central differences in one batch call."""
        z = np.stack([(Mq @ x).reshape(samples, n), (Md @ x).reshape(samples, n), (Ma @ x).reshape(samples, n)],
                     axis=1)                                                  # (samples, 3, n)
        Yb = base.reduce(regressor(model, z[:, 0], z[:, 1], z[:, 2], **base.flags))
        U, sv, Vt = np.linalg.svd(Yb.reshape(-1, r), full_matrices=False)
        f = float(np.log(sv[0] / max(sv[-1], 1e-300)))
        G = (np.outer(U[:, 0], Vt[0]) / sv[0] - np.outer(U[:, -1], Vt[-1]) / sv[-1]).reshape(samples, n, r)
        zp = np.repeat(z[:, None], 3 * n, axis=1)                             # (samples, 3n, 3, n)
        zp = zp.reshape(samples, 3 * n, 3 * n)
        eye = h * np.eye(3 * n)
        zz = np.stack([zp + eye, zp - eye], axis=0).reshape(2, samples, 3 * n, 3, n)
        Yp = base.reduce(regressor(model, zz[..., 0, :], zz[..., 1, :], zz[..., 2, :], **base.flags))
        dY = (Yp[0] - Yp[1]) / (2 * h)                                        # (samples, 3n, n, r)
        g = np.einsum("ksjc,kjc->ks", dY, G).reshape(samples, 3, n)
        grad = Mq.T @ g[:, 0].ravel() + Md.T @ g[:, 1].ravel() + Ma.T @ g[:, 2].ravel()
        Ax = A @ x
        if f < best[0] and np.all(Ax <= ub + tol_c) and np.all(Ax >= lb - tol_c):
            best[:] = [f, x.copy()]
        return f, grad

    rng = np.random.default_rng(seed)
    x0 = np.concatenate([rng.normal(size=2 * n * L) / np.tile(np.arange(1, L + 1), 2 * n), 0.5 * (lo + hi)])
    # scale the oscillating part into the box (q about its centre, qd, qdd) with a 10 % reserve
    osc = x0.copy()
    osc[2 * n * L:] = 0.0
    half = 0.5 * (hi - lo)
    need = [np.max(np.abs((Mq @ osc).reshape(samples, n)) / half, axis=0)]
    for M, bound in ((Md, vmax), (Ma, amax)):
        need.append(np.max(np.abs((M @ osc).reshape(samples, n)), axis=0) / bound)
    factor = 0.9 / np.maximum(np.max(need, axis=0), 1e-300)
    x0[:2 * n * L] *= np.tile(np.repeat(factor, L), 2)
    # SLSQP is not monotone on this non-smooth objective: keep the best feasible point it visits
    best = [np.inf, x0]
    tol_c = 1e-9 * max(1.0, np.abs(np.concatenate([lb, ub])[np.isfinite(np.concatenate([lb, ub]))]).max())
    f0 = objective(x0)[0]
    import scipy.optimize   # (imported here: 0.4 s that a user of the regressor alone need not pay)
    scipy.optimize.minimize(objective, x0, jac=True, method="SLSQP",
                            constraints=[scipy.optimize.LinearConstraint(A, lb, ub)],
                            options=dict(maxiter=maxiter, ftol=1e-6))
    f, x = best if best[0] <= f0 else (f0, x0)
    a, b, q0 = unpack(x)
    return FourierTrajectory(a.copy(), b.copy(), q0.copy(), float(period), float(np.exp(f)))
