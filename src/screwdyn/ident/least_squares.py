"""Least-squares estimation of the base parameters from measured motion and torques.

The equations ``tau_k = Y_b(q_k, qd_k, qdd_k) beta`` of all samples ``k`` and joints, stacked
and weighted by ``W`` (1 for ordinary least squares; each joint's inverse residual variance for
weighted least squares, Gautier 1997), give ::

    beta = argmin |W^1/2 (tau - Y_b beta)|^2
    cov(beta) = s^2 (Y_b^T W Y_b)^-1,    s^2 = rho^T W rho / (N_e - r),    rho = tau - Y_b beta

(``N_e`` equations, ``r`` base parameters), solved by QR of the weighted, column-scaled
``[Y_b | tau]``. Velocities and accelerations not measured are estimated from the positions
(:mod:`.derivatives`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..dispatch import check_model
from ..errors import InputError
from ..model import Model
from ..model_params import inertial_parameters, physical_consistency
from .base import BaseParameters, base_parameters, base_regressor
from .derivatives import _window, estimate_derivatives
from .physical import PhysicalEstimate, physical_estimate

__all__ = ["identify", "Identification"]


@dataclass(frozen=True, eq=False)
class Identification:
    """The result of :func:`identify`.

    Attributes
    ----------
    base : the :class:`BaseParameters` estimated.
    beta, std : ``(r,)`` estimates and their standard deviations ``sqrt(diag cov)``.
    cov : ``(r, r)`` covariance ``s^2 (Y_b^T W Y_b)^-1``, ``s^2`` the weighted residual variance.
    sigma : ``(n,)`` per-joint residual standard deviation [N m].
    rms : ``(n,)`` per-joint RMS of ``tau - Y_b beta`` on the data (the equations kept).
    method : ``"ols"`` or ``"wls"``. cond : condition number of the (weighted, column-scaled) ``Y_b``.
    q, qd, qdd, tau : the data used (after differentiation and trimming); tau_fit : ``Y_b beta``;
    t : the matching sample times when ``t`` was given, else None.
    """

    model: Model
    base: BaseParameters
    beta: np.ndarray
    std: np.ndarray
    cov: np.ndarray
    sigma: np.ndarray
    rms: np.ndarray
    method: str
    cond: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    tau_fit: np.ndarray
    t: np.ndarray | None = None
    _Rw: np.ndarray = field(repr=False, default=None)      # R_w^T R_w = Y_b^T W Y_b
    _s2: float = field(repr=False, default=float("nan"))   # weighted residual variance s^2
    _cost0: float = field(repr=False, default=float("nan"))  # weighted residual sum of squares
    _tau_ms: float = field(repr=False, default=float("nan"))  # weighted mean square torque
    _keep: np.ndarray = field(repr=False, default=None)      # (N, n) equations used (min_speed)

    def predict(self, q, qd, qdd) -> np.ndarray:
        """Torques ``Y_b(q, qd, qdd) beta`` predicted by the estimate, ``(..., n)``."""
        return base_regressor(self.model, q, qd, qdd, base=self.base) @ self.beta

    def full_parameters(self, prior=None) -> np.ndarray:
        """A full ``pi`` reproducing ``beta``: the nearest to ``prior`` (default the model's own)."""
        if prior is None:
            prior = inertial_parameters(self.model, **self.base.flags)
        return self.base.full(self.beta, prior)

    def consistency(self, prior=None, tol=1e-9):
        """``physical_consistency`` of :meth:`full_parameters` (a sufficient test: another ``pi``
        with the same ``beta`` may be consistent when this one is not; :meth:`physical` decides)."""
        return physical_consistency(self.model, self.full_parameters(prior), **self.base.flags, tol=tol)

    def table(self, reference=None) -> str:
        """Base parameters, their estimates and standard deviations (and ``reference`` values)."""
        cols, heads = [self.beta, self.std], ["estimate", "std"]
        if reference is not None:
            cols.append(np.asarray(reference))
            heads.append("reference")
        return self.base.table(*cols, headers=heads)

    def physical(self, prior=None, regularization=1e-4, gap=1e-7) -> PhysicalEstimate:
        """The physically consistent estimate nearest the data: every pseudo-inertia positive
        semidefinite, extras ``>= 0`` (:func:`screwdyn.ident.physical.physical_estimate`)."""
        return physical_estimate(self, prior, regularization, gap)


def identify(model: Model, q, qd=None, qdd=None, tau=None, *, t=None, dt=None, base: BaseParameters | None = None,
             armature=False, viscous=False, coulomb=False, weights=None, window=None, polyorder=4,
             trim=None, min_speed=0.0) -> Identification:
    """Least-squares estimate of the base parameters from measured motion and torques.

    Parameters
    ----------
    q : ``(N, n)`` joint positions at ``N`` instants.
    qd, qdd : ``(N, n)`` or None: when None, estimated from ``q`` by :func:`estimate_derivatives`
        (Savitzky-Golay, ``window``/``polyorder``; needs uniform sampling, ``dt`` or ``t``), and
        ``trim`` samples (default ``window // 2``) are dropped at each end.
    tau : ``(N, n)`` measured joint torques [N m, N].
    base : the base parameters to estimate; default ``base_parameters(model, armature=...,
        viscous=..., coulomb=...)``.
    weights : None (ordinary least squares); ``"joint"`` (weighted least squares: each joint's
        rows weighted by the inverse of its residual variance, from an OLS fit first (Gautier
        1997) then from the weighted fit until the variances settle);
        or an array ``(n,)`` or ``(N, n)`` of inverse variances.
    min_speed : leave out the equation of joint ``j`` at the instants where ``|qd_j| < min_speed``
        (weight 0): near a velocity reversal the sign in the Coulomb term, from estimated
        velocities, is unreliable. ``sigma``, ``rms`` and the degrees of freedom count the rest.

    The covariance of the estimate is ``s^2 (Y_b^T W Y_b)^-1`` with ``s^2 = rho^T W rho / (N_e - r)``
    the weighted residual variance (``N_e`` equations kept; ``= sigma^2 (Y_b^T Y_b)^-1`` for OLS),
    assuming independent noise on the torques; ``std`` is the square root of its diagonal.
    """
    check_model(model)
    n = model.n
    if base is None:
        base = base_parameters(model, armature=armature, viscous=viscous, coulomb=coulomb)
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != model.nq:
        raise InputError(f"q must have shape (N, {model.nq}) for this model, got {q.shape}")
    if tau is None:
        raise InputError("tau (the measured torques, (N, n)) is required")
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (q.shape[0], n):
        raise InputError(f"tau must have shape {(q.shape[0], n)}, got {tau.shape}")
    if (qd is None) != (qdd is None):
        raise InputError("give both qd and qdd, or neither (then both are estimated from q)")
    if qd is None and model.nq != n:
        raise InputError("a model with free-flyer or spherical joints needs qd and qdd (velocities in the tangent "
                         "space are not derivatives of q's quaternions)")
    if qd is None:
        if dt is None:
            if t is None:
                raise InputError("qd and qdd are estimated from q: give the sample times t or the period dt")
            t = np.asarray(t, dtype=float).reshape(-1)
            if t.shape[0] != q.shape[0]:
                raise InputError(f"t must have {q.shape[0]} entries, got {t.shape[0]}")
            steps = np.diff(t)
            dt = float(np.mean(steps))
            if dt <= 0 or np.max(np.abs(steps - dt)) > 1e-6 * dt + 1e-12:
                raise InputError("t must be uniformly sampled and increasing to differentiate q")
        q, qd, qdd = estimate_derivatives(q, dt, window=window, polyorder=polyorder)
        if trim is None:
            trim = _window(window, dt, polyorder) // 2
    else:
        qd, qdd = np.asarray(qd, dtype=float), np.asarray(qdd, dtype=float)
        if qd.shape != tau.shape or qdd.shape != tau.shape:
            raise InputError(f"qd and qdd must have shape {tau.shape}")
    if t is not None:
        t = np.asarray(t, dtype=float).reshape(-1)
        if t.shape[0] != q.shape[0]:
            raise InputError(f"t must have {q.shape[0]} entries, got {t.shape[0]}")
    if trim:
        sl = slice(int(trim), q.shape[0] - int(trim))
        q, qd, qdd, tau = q[sl], qd[sl], qdd[sl], tau[sl]
        t = None if t is None else t[sl]
    if not np.all(np.isfinite(tau)):
        raise InputError("tau contains NaN or inf")
    N = q.shape[0]
    r = base.rank
    keep = np.abs(qd) >= min_speed                              # (N, n) equations used
    Nj = keep.sum(axis=0)                                       # per joint
    if Nj.sum() <= r:
        raise InputError(f"{N} samples of {n} joints give {int(Nj.sum())} equations for {r} base parameters: "
                         "too few")
    Yb = base_regressor(model, q, qd, qdd, base=base)            # (N, n, r)

    def per_joint_var(res):
        return np.sum(keep * res**2, axis=0) / np.maximum(Nj - r / n, 1.0)

    def solve(w):
        """Weighted least squares by QR of ``[W^1/2 Y_b D^-1 | W^1/2 tau]`` (columns scaled to unit
        norm by ``D``): its R factor holds ``R`` and ``Q^T y``, so Q is never formed."""
        sw = np.sqrt(w)
        M = np.empty((N * n, r + 1))
        M[:, :r] = (Yb * sw[..., None]).reshape(N * n, r)
        M[:, r] = (tau * sw).reshape(N * n)
        colnorm = np.linalg.norm(M[:, :r], axis=0)
        colnorm[colnorm == 0] = 1.0
        M[:, :r] /= colnorm
        Ra = scipy.linalg.qr(M, mode="r", overwrite_a=True, check_finite=False)[0]
        R = Ra[:r, :r]
        beta = scipy.linalg.solve_triangular(R, Ra[:r, r]) / colnorm
        return beta, R * colnorm, np.linalg.cond(R)  # R * colnorm = R_w, R_w^T R_w = Y_b^T W Y_b

    if weights is None:
        w = keep * 1.0
        method = "ols"
    elif isinstance(weights, str):
        if weights != "joint":
            raise InputError(f"weights must be None, 'joint' or an array, got {weights!r}")
        w = keep * 1.0
        for _ in range(10):   # OLS, then reweight until the per-joint variances settle
            beta0, _, _ = solve(w)
            var = per_joint_var(tau - Yb @ beta0)
            w_new = keep / np.maximum(var, 1e-300 + 1e-12 * var.max())
            done = np.allclose(w_new * var.max(), w * var.max(), rtol=1e-3)
            w = w_new
            if done:
                break
        method = "wls"
    else:
        w = np.asarray(weights, dtype=float)
        try:
            w = np.broadcast_to(w, (N, n))
        except ValueError:
            raise InputError(f"weights must have shape ({n},) or ({N}, {n}), got {w.shape}") from None
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InputError("weights must be finite and >= 0")
        w = w * keep
        method = "wls"
    beta, Rw, cond = solve(w)
    tau_fit = Yb @ beta
    res = tau - tau_fit
    cost0 = float(np.sum(w * res**2))
    s2 = cost0 / (Nj.sum() - r)
    Rinv = scipy.linalg.solve_triangular(Rw, np.eye(r))
    cov = s2 * Rinv @ Rinv.T
    sigma = np.sqrt(per_joint_var(res))
    rms = np.sqrt(np.sum(keep * res**2, axis=0) / np.maximum(Nj, 1))
    return Identification(model, base, beta, np.sqrt(np.diag(cov)), cov, sigma, rms, method, float(cond),
                          q, qd, qdd, tau, tau_fit, t, Rw, s2, cost0, float(np.sum(w * tau**2) / Nj.sum()), keep)
