"""Identification of the dynamic parameters: regressor, base parameters, excitation, least squares.

Inverse dynamics is linear in the parameters (note 002, last section)::

    tau = Y(q, qd, qdd) pi

``pi`` holds 10 parameters per body, ``(m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz,
I_zz)`` with the inertia about the body frame's origin, body by body, then optional per-joint
armature, viscous and Coulomb friction parameters (:mod:`screwdyn.model_params`).

Workflow::

    base = base_parameters(model, viscous=True, coulomb=True)   # identifiable combinations
    traj = excitation_trajectory(model, base=base)               # Fourier series, optimised
    q, qd, qdd = traj(t)                                         # run it on the robot, record tau
    est = identify(model, q, None, None, tau, t=t, base=base)   # qd, qdd by Savitzky-Golay
    est.beta, est.std                                            # base parameters, std. deviations
    phys = est.physical()                                        # a physically consistent pi

Only numpy and scipy are used (no cvxpy): the physically consistent estimate is a convex
problem (a quadratic in ``pi`` with linear matrix inequalities ``J_i(pi) >= 0``), solved by a
small log-det barrier interior-point method written here (:meth:`Identification.physical`).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.signal

from .algorithms import regressor as _reg
from .dynamics import _batch_arrays, _check_model, _output, _raise_nonfinite, _run_batch, _vector
from .errors import InputError
from .model import Model
from .model_params import (
    PARAMETER_NAMES, PINOCCHIO_ORDER, inertial_parameters, parameter_names, parameters_from_pseudo_inertia,
    physical_consistency, pseudo_inertia, with_inertial_parameters,
)
from .plot import plot_torques

__all__ = [
    "regressor", "base_parameters", "base_regressor", "BaseParameters", "FourierTrajectory",
    "excitation_trajectory", "estimate_derivatives", "identify", "Identification", "PhysicalEstimate",
    "inertial_parameters", "with_inertial_parameters", "parameter_names", "physical_consistency",
    "pseudo_inertia", "read_csv", "write_csv", "plot_torques", "PARAMETER_NAMES", "PINOCCHIO_ORDER",
]


def _extras(armature, viscous, coulomb) -> int:
    return (_reg.ARMATURE if armature else 0) | (_reg.VISCOUS if viscous else 0) | (_reg.COULOMB if coulomb else 0)


# ============================================================================ 1. the regressor
def regressor(model: Model, q, qd, qdd, *, armature=False, viscous=False, coulomb=False, out=None) -> np.ndarray:
    """The joint-torque regressor ``Y`` with ``tau = Y pi`` (:mod:`screwdyn.algorithms.regressor`).

    ``tau`` is ``inverse_dynamics(model, q, qd, qdd)`` (plus ``friction_torques`` when both
    ``viscous`` and ``coulomb`` are on) and ``pi = inertial_parameters(model, armature=...,
    viscous=..., coulomb=...)``. Computed by a Newton-Euler recursion: forward pass for the
    twists and accelerations, then each body's ``6 x 10`` wrench regressor projected on the joints
    of its path to the base.

    Parameters
    ----------
    q, qd, qdd : ``(n,)`` or ``(..., n)``, broadcasting against each other.
    armature, viscous, coulomb : append ``n`` columns each: ``qdd_i``, ``qd_i``, ``sign(qd_i)``.
    out : optional preallocated C-contiguous result.

    Returns ``Y`` ``(..., n, 10 n [+ n per extra])``; the columns are ordered as
    :func:`screwdyn.model_params.parameter_names`.

    >>> import screwdyn
    >>> from screwdyn.inertia import point_mass
    >>> b = screwdyn.ModelBuilder("pendulum")                  # gravity (0, 0, -9.81)
    >>> _ = b.add_body("link", "base", "joint", "revolute", axis=(0, 1, 0), inertial=point_mass(2.0, [0, 0, -0.5]))
    >>> model = b.build()
    >>> Y = regressor(model, [0.3], [1.0], [2.0])
    >>> bool((Y[0, [0, 2, 4, 5, 6, 8, 9]] == 0).all())   # only m c_x, m c_z (gravity) and I_yy act
    True
    >>> Y[0, [1, 3, 7]].round(3)      # -g cos q, -g sin q, qdd
    array([-9.372, -2.899,  2.   ])
    >>> (Y @ inertial_parameters(model)).round(6), screwdyn.inverse_dynamics(model, [0.3], [1.0], [2.0]).round(6)
    (array([3.899053]), array([3.899053]))
    """
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    qdd = _vector(qdd, n, "qdd")
    extras = _extras(armature, viscous, coulomb)
    ncols = n * (10 + bool(armature) + bool(viscous) + bool(coulomb))
    kd = model._kd
    if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1:
        Y = _output(out, (n, ncols))
        code = _reg.regressor(kd, q, qd, qdd, extras, Y)
        if code:
            _raise_nonfinite(code)
        return Y
    batch_shape, (Q, QD, QDD) = _batch_arrays(n, (q, qd, qdd), ("q", "qd", "qdd"))   # writable C arrays
    Y = _output(out, batch_shape + (n, ncols))
    _run_batch(_reg.regressor_batch, batch_shape, kd, Q, QD, QDD, extras, Y.reshape(-1, n, ncols))
    return Y


# ============================================================================ 2. base parameters
@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The identifiable (base) parameters of a model: ``beta = K pi``, ``Y pi = Y_b beta``.

    Attributes
    ----------
    names : ``(r,)`` a name per base parameter: the independent parameter, then the dependent
        ones regrouped into it with their coefficients, e.g. ``"Izz_link1 + 0.0182*m_link2 + Iyy_link2"``.
    K : ``(r, p)`` the matrix mapping the full ``pi`` to ``beta``; ``K[:, independent] = 1_r``.
    independent : ``(r,)`` indices into ``pi`` of the independent columns: ``Y_b = Y[..., independent]``.
    unidentifiable : indices of the parameters that do not enter the torques at all.
    parameter_names : ``(p,)`` names of the entries of ``pi``.
    armature, viscous, coulomb : which per-joint columns ``pi`` carries.
    """

    names: tuple
    K: np.ndarray
    independent: np.ndarray
    unidentifiable: np.ndarray
    parameter_names: tuple
    armature: bool
    viscous: bool
    coulomb: bool

    @property
    def rank(self) -> int:
        return len(self.independent)

    @property
    def flags(self) -> dict:
        return dict(armature=self.armature, viscous=self.viscous, coulomb=self.coulomb)

    def from_full(self, pi) -> np.ndarray:
        """``beta = K pi``."""
        return self.K @ np.asarray(pi, dtype=float)

    def of_model(self, model) -> np.ndarray:
        """The model's own base parameters ``K inertial_parameters(model)``."""
        return self.K @ inertial_parameters(model, **self.flags)

    def reduce(self, Y) -> np.ndarray:
        """``Y_b = Y[..., independent]`` from a full regressor."""
        return np.asarray(Y)[..., self.independent]

    def full(self, beta, prior) -> np.ndarray:
        """The ``pi`` nearest to ``prior`` (Euclidean) with ``K pi = beta``: ``prior + K^+ (beta - K prior)``."""
        prior = np.asarray(prior, dtype=float)
        return prior + np.linalg.lstsq(self.K, np.asarray(beta, dtype=float) - self.K @ prior, rcond=None)[0]

    def table(self, *columns, headers=("value",), fmt="{:>13.6g}") -> str:
        """A text table: one row per base parameter, its ``columns`` of ``(r,)`` values, then its name."""
        lines = ["  # " + " ".join(f"{h:>13}" for h in headers) + "  base parameter"]
        for k, name in enumerate(self.names):
            lines.append(f"{k:>3} " + " ".join(fmt.format(c[k]) for c in columns) + "  " + name)
        return "\n".join(lines)


def _sample_states(model, rng, count):
    """Random states spread over the joint ranges (finite limits, else [-pi, pi] / [-1, 1] m)."""
    n = model.n
    default = np.where(model.joint_type == 0, np.pi, 1.0)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -default)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, default)
    q = lo + (hi - lo) * rng.random((count, n))
    return q, rng.normal(size=(count, n)), rng.normal(size=(count, n))


def _combo_name(names, lead, coefs, dep):
    s = names[lead]
    for c, d in zip(coefs, dep):
        if c == 0.0:
            continue
        sign = " - " if c < 0 else " + "
        a = abs(c)
        s += sign + (names[d] if abs(a - 1.0) < 1e-9 else f"{a:.6g}*{names[d]}")
    return s


_BASE_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def base_parameters(model: Model, *, armature=False, viscous=False, coulomb=False, samples=None, seed=0,
                    tol=1e-8) -> BaseParameters:
    """The base parameters of ``model``, found numerically (Gautier 1990) on random states.

    The regressor is stacked at ``samples`` random states (default: enough for three times as
    many rows as parameters, at least 30 states), its columns are scaled to unit norm, and

    1. the rank ``r`` comes from QR with column pivoting (``scipy.linalg.qr(pivoting=True)``):
       the number of ``|R_kk| > tol |R_00|``;
    2. the independent columns are chosen in the order of ``pi`` (body 0 first, the joints'
       extras last), keeping a column when it is not in the span of those kept before (QR
       without pivoting); dependent parameters are thus regrouped into parameters of bodies
       nearer the base, as in Khalil's symbolic regrouping (if rounding made the greedy choice
       disagree with the rank, the pivoted choice is used);
    3. the regrouping coefficients ``Y_d = Y_b B`` by least squares; entries below
       ``tol`` (relative) are zeroed. ``K[:, independent] = 1``, ``K[:, dependent] = B``.

    The result is cached per model and arguments.

    >>> import screwdyn
    >>> from screwdyn.inertia import point_mass
    >>> b = screwdyn.ModelBuilder("pendulum")
    >>> _ = b.add_body("link", "base", "joint", "revolute", axis=(0, 1, 0), inertial=point_mass(2.0, [0, 0, -0.5]))
    >>> base_parameters(b.build(), viscous=True).names
    ('mcx_link', 'mcz_link', 'Iyy_link', 'fv_joint')
    """
    _check_model(model)
    key = (bool(armature), bool(viscous), bool(coulomb), samples, seed, tol)
    cache = _BASE_CACHE.setdefault(model, {})
    if key in cache:
        return cache[key]
    names = parameter_names(model, armature=armature, viscous=viscous, coulomb=coulomb)
    p = len(names)
    n = model.n
    count = samples if samples is not None else max(30, -(-3 * p // n))
    rng = np.random.default_rng(seed)
    q, qd, qdd = _sample_states(model, rng, count)
    Y = regressor(model, q, qd, qdd, armature=armature, viscous=viscous, coulomb=coulomb).reshape(-1, p)
    norms = np.linalg.norm(Y, axis=0)
    zero = norms <= tol * max(norms.max(initial=0.0), 1e-300)
    live = np.flatnonzero(~zero)
    Ys = Y[:, live] / norms[live]
    _, Rp, perm = scipy.linalg.qr(Ys, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rp))
    rank = int(np.sum(diag > tol * diag[0])) if diag.size else 0
    R0 = scipy.linalg.qr(Ys, mode="r")[0]
    d0 = np.abs(np.diag(R0))
    keep = np.flatnonzero(d0 > np.sqrt(tol) * 1e-2)  # unit columns: |R_kk| is the distance to the span
    if len(keep) != rank:
        keep = np.sort(perm[:rank])
    indep = live[keep]
    dep = np.setdiff1d(live, indep)
    B = np.linalg.lstsq(Y[:, indep], Y[:, dep], rcond=None)[0] if dep.size else np.zeros((rank, 0))
    scale = norms[dep][None, :] / norms[indep][:, None] if dep.size else B
    B = np.where(np.abs(B) <= tol * np.maximum(scale, 1e-300) * 1e2, 0.0, B)
    K = np.zeros((rank, p))
    K[np.arange(rank), indep] = 1.0
    K[:, dep] = B
    base_names = tuple(_combo_name(names, indep[k], B[k], dep) for k in range(rank))
    bp = BaseParameters(base_names, K, indep, np.flatnonzero(zero), tuple(names), bool(armature), bool(viscous),
                        bool(coulomb))
    cache[key] = bp
    return bp


def base_regressor(model: Model, q, qd, qdd, *, base: BaseParameters | None = None, armature=False, viscous=False,
                   coulomb=False) -> np.ndarray:
    """The base regressor ``Y_b (..., n, r)``: ``tau = Y_b beta``, ``beta = base.K pi``.
    ``base`` defaults to ``base_parameters(model, armature=..., viscous=..., coulomb=...)``;
    when given, its own flags are used."""
    if base is None:
        base = base_parameters(model, armature=armature, viscous=viscous, coulomb=coulomb)
    return base.reduce(regressor(model, q, qd, qdd, **base.flags))


# ============================================================================ 3. excitation
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
    _check_model(model)
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
    scipy.optimize.minimize(objective, x0, jac=True, method="SLSQP",
                            constraints=[scipy.optimize.LinearConstraint(A, lb, ub)],
                            options=dict(maxiter=maxiter, ftol=1e-6))
    f, x = best if best[0] <= f0 else (f0, x0)
    a, b, q0 = unpack(x)
    return FourierTrajectory(a.copy(), b.copy(), q0.copy(), float(period), float(np.exp(f)))


# ============================================================================ 4. estimation
def _window(window, dt, polyorder):
    """The Savitzky-Golay window in samples (odd): ``window``, or the samples in 0.2 s."""
    return int(max(int(round(0.2 / dt)), polyorder + 3) if window is None else window) | 1


def estimate_derivatives(q, dt, *, window=None, polyorder=4):
    """Smoothed positions, velocities and accelerations from uniformly sampled positions.

    Savitzky-Golay filter (:func:`scipy.signal.savgol_filter`, a least-squares polynomial of
    degree ``polyorder`` fitted over ``window`` samples, differentiated): ``q (N, n)`` sampled
    every ``dt`` seconds -> ``(q_f, qd, qdd)``, each ``(N, n)``. ``window`` (odd) defaults to the
    samples in 0.2 s, at least ``polyorder + 3``: for ``polyorder = 4`` a low-pass with its -3 dB
    cutoff near ``(polyorder + 1) / (3.2 window dt) = 8`` Hz (Schafer 2011), well above the
    bandwidth of the usual excitation trajectories (a few harmonics of 0.1 Hz).
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 2:
        raise InputError(f"q must have shape (N, n) to be differentiated, got {q.shape}")
    window = _window(window, dt, polyorder)
    if window > q.shape[0]:
        raise InputError(f"the Savitzky-Golay window ({window} samples) is longer than the data ({q.shape[0]})")
    if window <= polyorder:
        raise InputError(f"window ({window}) must exceed polyorder ({polyorder})")
    kw = dict(window_length=window, polyorder=polyorder, delta=dt, axis=0, mode="interp")
    return (scipy.signal.savgol_filter(q, deriv=0, **kw), scipy.signal.savgol_filter(q, deriv=1, **kw),
            scipy.signal.savgol_filter(q, deriv=2, **kw))


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
        """The physically consistent estimate nearest the data (a convex problem, Wensing et al. 2017).

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
        flags = self.base.flags
        model, n = self.model, self.model.n
        if prior is None:
            prior = inertial_parameters(model, **flags)
        prior = np.asarray(prior, dtype=float)
        if prior.shape != (len(self.base.parameter_names),):
            raise InputError(f"prior must have shape ({len(self.base.parameter_names)},), got {prior.shape}")
        Rw = self._Rw
        s2 = max(self._s2, 1e-12 * self._tau_ms)   # noise-free data: misfit against 1e-6 of the torques
        K, beta = self.base.K, self.beta
        # typical sizes: per body and per extra group, the largest entry of the prior or of the
        # least-squares estimate nearest to it
        pi_ls = self.base.full(beta, prior)
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
        dtau = self.tau - base_regressor(model, self.q, self.qd, self.qdd, base=self.base) @ beta_p
        rms = np.sqrt(np.sum(self._keep * dtau**2, axis=0) / np.maximum(self._keep.sum(axis=0), 1))
        d = Rw @ (beta_p - beta)
        cost0 = self._cost0
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
    _check_model(model)
    n = model.n
    if base is None:
        base = base_parameters(model, armature=armature, viscous=viscous, coulomb=coulomb)
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != n:
        raise InputError(f"q must have shape (N, {n}) for this model, got {q.shape}")
    if tau is None:
        raise InputError("tau (the measured torques, (N, n)) is required")
    tau = np.asarray(tau, dtype=float)
    if tau.shape != q.shape:
        raise InputError(f"tau must have the shape of q {q.shape}, got {tau.shape}")
    if (qd is None) != (qdd is None):
        raise InputError("give both qd and qdd, or neither (then both are estimated from q)")
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
        if qd.shape != q.shape or qdd.shape != q.shape:
            raise InputError(f"qd and qdd must have the shape of q {q.shape}")
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


# ============================================================================ 5. data files
CSV_FORMAT = """\
CSV format (comma-separated, one header row, one row per sample):
  t                  sample time [s] (uniform sampling when qd/qdd are absent)
  q_<joint>          position of each joint, for every joint of the model
  qd_<joint>         velocity (optional; all joints or none)
  qdd_<joint>        acceleration (optional; all joints or none; requires qd)
  tau_<joint>        measured torque/force, for every joint
<joint> is the joint's name as in the URDF (model.joint_names) or its index 0..n-1.
Other columns are ignored."""


def write_csv(path, model: Model, t, q, tau, qd=None, qdd=None) -> None:
    """Write data in the format :func:`read_csv` and ``screwdyn identify`` read (:data:`CSV_FORMAT`)."""
    cols, names = [np.asarray(t, dtype=float).reshape(-1, 1)], ["t"]
    for prefix, arr in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        if arr is None:
            continue
        cols.append(np.asarray(arr, dtype=float).reshape(-1, model.n))
        names += [f"{prefix}_{j}" for j in model.joint_names]
    np.savetxt(path, np.hstack(cols), delimiter=",", header=",".join(names), comments="", fmt="%.17g")


def read_csv(path, model: Model) -> dict:
    """Read a data file (:data:`CSV_FORMAT`): a dict with ``t``, ``q``, ``tau`` and, when present,
    ``qd``, ``qdd``, each ``(N,)`` or ``(N, n)``."""
    with open(path) as f:
        header = [h.strip() for h in f.readline().strip().split(",")]
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if data.shape[1] != len(header):
        raise InputError(f"{path}: the header has {len(header)} columns, the data {data.shape[1]}")
    col = {h: k for k, h in enumerate(header)}
    out = {}
    if "t" in col:
        out["t"] = data[:, col["t"]]
    for prefix in ("q", "qd", "qdd", "tau"):
        idx = []
        for k, jn in enumerate(model.joint_names):
            c = col.get(f"{prefix}_{jn}", col.get(f"{prefix}_{k}"))
            idx.append(c)
        present = [c is not None for c in idx]
        if all(present):
            out[prefix] = data[:, idx]
        elif any(present) or prefix in ("q", "tau"):
            missing = [jn for jn, c in zip(model.joint_names, idx) if c is None]
            raise InputError(f"{path}: columns {prefix}_<joint> missing for joints {missing}\n{CSV_FORMAT}")
    if ("qd" in out) != ("qdd" in out):
        raise InputError(f"{path}: give both qd_* and qdd_* columns, or neither\n{CSV_FORMAT}")
    return out

