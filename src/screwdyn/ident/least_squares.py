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

from .._dask import any_dask
from ..dispatch import check_model
from ..errors import InputError
from ..model import Model
from ..model_params import inertial_parameters, physical_consistency
from .base import BaseParameters, base_parameters, base_regressor
from .derivatives import _window, filter_runs, period, step_stats
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
    t : the matching sample times when ``t`` was given, else None. From Dask data (:mod:`.chunked`)
    these are Dask arrays of every sample, lazily, the samples trimmed at the ends of the runs
    included (``_keep`` marks the equations used).
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
    _Rj: np.ndarray = field(repr=False, default=None)        # (n, r+1, r+1) R factors of each joint's [Y_b | tau]
    _Nj: np.ndarray = field(repr=False, default=None)        # (n,) and its equations (data reduced in chunks)

    def _rms(self, beta) -> np.ndarray:
        """``(n,)`` per-joint RMS of ``tau - Y_b beta`` over the equations used."""
        if self._Rj is not None:
            x = np.append(beta, -1.0)
            return np.sqrt(np.sum((self._Rj @ x) ** 2, axis=1) / np.maximum(self._Nj, 1))
        res = self.tau - base_regressor(self.model, self.q, self.qd, self.qdd, base=self.base) @ beta
        return np.sqrt(np.sum(self._keep * res**2, axis=0) / np.maximum(self._keep.sum(axis=0), 1))

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


def identify(model: Model, q, qd=None, qdd=None, tau=None, *, t=None, dt=None, runs=None,
             base: BaseParameters | None = None, armature=False, viscous=False, coulomb=False, weights=None,
             window=None, polyorder=4, trim=None, min_speed=0.0) -> Identification:
    """Least-squares estimate of the base parameters from measured motion and torques.

    Parameters
    ----------
    q : ``(N, nq)`` joint positions at ``N`` instants; or a data frame (pandas or Dask) with the
        columns of :data:`~screwdyn.ident.csv_io.CSV_FORMAT` (``q_<joint>``, ``tau_<joint>``,
        optionally ``t``, ``qd_<joint>``, ``qdd_<joint>``, ``run``), the other data arguments then
        left out.
    qd, qdd : ``(N, n)`` or None: when None, estimated from ``q`` by Savitzky-Golay filtering
        (:func:`estimate_derivatives`, ``window``/``polyorder``; needs uniform sampling, ``dt`` or
        ``t``), and ``trim`` samples (default ``window // 2``) are dropped at each end of each run.
    tau : ``(N, n)`` measured joint torques [N m, N].
    runs : ``(N,)`` a label per sample saying which run (experiment, log file) it belongs to, or
        None (one run): each run is filtered and trimmed on its own, never across two.
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

    Dask arrays (or a Dask data frame) are reduced chunk by chunk, the regressor never formed
    whole (:mod:`.chunked`): the same estimate and standard deviations, on data of any size.
    """
    check_model(model)
    n = model.n
    if hasattr(q, "columns"):
        from .logs import frame_data
        if any(x is not None for x in (qd, qdd, tau, t, runs)):
            raise InputError("with a data frame, give the data as its columns (qd, qdd, tau, t and runs not as arguments)")
        q, qd, qdd, tau, t, runs = frame_data(q, model)
    if base is None:
        base = base_parameters(model, armature=armature, viscous=viscous, coulomb=coulomb)
    if tau is None:
        raise InputError("tau (the measured torques, (N, n)) is required")
    if (qd is None) != (qdd is None):
        raise InputError("give both qd and qdd, or neither (then both are estimated from q)")
    if qd is None and model.nq != n:
        raise InputError("a model with free-flyer or spherical joints needs qd and qdd (velocities in the tangent "
                         "space are not derivatives of q's quaternions)")
    if any_dask(q, qd, qdd, tau, t, runs, weights):
        from .chunked import identify_chunked
        return identify_chunked(model, q, qd, qdd, tau, t=t, dt=dt, runs=runs, base=base, weights=weights,
                                window=window, polyorder=polyorder, trim=trim, min_speed=min_speed)
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != model.nq:
        raise InputError(f"q must have shape (N, {model.nq}) for this model, got {q.shape}")
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (q.shape[0], n):
        raise InputError(f"tau must have shape {(q.shape[0], n)}, got {tau.shape}")
    N = q.shape[0]
    if runs is not None:
        runs = np.asarray(runs).reshape(-1)
        if runs.shape[0] != N:
            raise InputError(f"runs must have {N} entries (one label per sample), got {runs.shape[0]}")
    if t is not None:
        t = np.asarray(t, dtype=float).reshape(-1)
        if t.shape[0] != N:
            raise InputError(f"t must have {N} entries, got {t.shape[0]}")
    if qd is None:
        if dt is None:
            if t is None:
                raise InputError("qd and qdd are estimated from q: give the sample times t or the period dt")
            dt = period(step_stats(t, runs))
        window = _window(window, dt, polyorder)
        if trim is None:
            trim = window // 2
        q, qd, qdd, inside = filter_runs(q, dt, runs, window=window, polyorder=polyorder, trim=int(trim))
    else:
        qd, qdd = np.asarray(qd, dtype=float), np.asarray(qdd, dtype=float)
        if qd.shape != tau.shape or qdd.shape != tau.shape:
            raise InputError(f"qd and qdd must have shape {tau.shape}")
        inside = filter_runs(q, dt, runs, window=0, polyorder=0, trim=int(trim or 0), differentiate=False)[3]
    if not inside.all():
        q, qd, qdd, tau = q[inside], qd[inside], qdd[inside], tau[inside]
        t = None if t is None else t[inside]
    if not np.all(np.isfinite(tau)):
        raise InputError("tau contains NaN or inf")
    N = q.shape[0]
    r = base.rank
    keep = np.abs(qd) >= min_speed                              # (N, n) equations used
    Nj = keep.sum(axis=0)                                       # per joint
    _enough(Nj, r, N, n)
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
        return solution(Ra, colnorm)

    w, method = _weights(weights, keep, Nj, N, n,
                         lambda wj: solve(keep * wj)[0], lambda beta: per_joint_var(tau - Yb @ beta))
    beta, Rw, cond = solve(w)
    tau_fit = Yb @ beta
    res = tau - tau_fit
    cost0 = float(np.sum(w * res**2))
    s2 = cost0 / (Nj.sum() - r)
    cov = covariance(Rw, s2)
    sigma = np.sqrt(per_joint_var(res))
    rms = np.sqrt(np.sum(keep * res**2, axis=0) / np.maximum(Nj, 1))
    return Identification(model, base, beta, np.sqrt(np.diag(cov)), cov, sigma, rms, method, float(cond),
                          q, qd, qdd, tau, tau_fit, t, Rw, s2, cost0, float(np.sum(w * tau**2) / Nj.sum()), keep)


def _enough(Nj, r, N, n):
    if Nj.sum() <= r:
        raise InputError(f"{N} samples of {n} joints give {int(Nj.sum())} equations for {r} base parameters: "
                         "too few")


def solution(Ra, colnorm):
    """From the R factor ``Ra`` of ``[W^1/2 Y_b D^-1 | W^1/2 tau]`` (columns of ``Y_b`` scaled by
    ``D = diag(colnorm)``): ``beta``, ``R_w = R D`` (``R_w^T R_w = Y_b^T W Y_b``) and the condition
    number of ``R``."""
    r = len(colnorm)
    R = Ra[:r, :r]
    beta = scipy.linalg.solve_triangular(R, Ra[:r, r]) / colnorm
    return beta, R * colnorm, np.linalg.cond(R)


def covariance(Rw, s2):
    """``s^2 (R_w^T R_w)^-1``."""
    Rinv = scipy.linalg.solve_triangular(Rw, np.eye(Rw.shape[0]))
    return s2 * Rinv @ Rinv.T


def _weights(weights, keep, Nj, N, n, solve, joint_var):
    """The weights ``w`` (``keep`` times per-joint or per-sample inverse variances) and the method.

    ``weights="joint"``: Gautier's weighted least squares, ``w_kj = 1 / sigma_j^2`` from an OLS fit,
    then from the weighted fit until the variances settle; ``solve(wj)`` is the estimate for
    per-joint weights ``wj (n,)`` and ``joint_var(beta)`` the per-joint residual variances."""
    if weights is None:
        return keep * 1.0, "ols"
    if isinstance(weights, str):
        if weights != "joint":
            raise InputError(f"weights must be None, 'joint' or an array, got {weights!r}")
        return keep * joint_weights(solve, joint_var, Nj > 0), "wls"
    w = np.asarray(weights, dtype=float)
    try:
        w = np.broadcast_to(w, (N, n))
    except ValueError:
        raise InputError(f"weights must have shape ({n},) or ({N}, {n}), got {w.shape}") from None
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InputError("weights must be finite and >= 0")
    return w * keep, "wls"


def joint_weights(solve, joint_var, used):
    """Per-joint weights ``1 / sigma_j^2`` of Gautier's weighted least squares: from an OLS fit,
    then from the weighted fit until they settle (relative change below 1e-3 on the joints ``used``)."""
    wj = used * 1.0
    for _ in range(10):
        var = joint_var(solve(wj))
        w_new = used / np.maximum(var, 1e-300 + 1e-12 * var.max())
        done = np.allclose(w_new * var.max(), wj * var.max(), rtol=1e-3)
        wj = w_new
        if done:
            break
    return wj
