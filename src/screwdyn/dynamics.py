"""The public dynamics functions: inverse and forward dynamics, the terms of the equations of
motion, energies and momentum, kinematics.

Every function takes one state ``(n,)`` or a batch ``(..., n)`` (arguments broadcast against each
other) and answers with matching leading dimensions; ``out=`` takes a preallocated result.
Equation convention (docs/theory.md §1.3)::

    tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i  (+ friction, when asked)

The arithmetic is in the compiled kernels of :mod:`screwdyn.algorithms`; :mod:`screwdyn.dispatch`
checks the arguments, calls them and reports NaN, inf or a singular mass matrix. Reflected rotor
inertia (``model.armature``) is part of ``M`` everywhere; friction enters only with ``friction=True``.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ._dask import any_dask, is_dask, map_batches
from .dispatch import (
    Kernel,
    check_model,
    check_room,
    external_wrenches,
    finite_result,
    q_broadcasts,
    vector,
)
from .errors import InputError, ModelError
from .model import Model

__all__ = [
    "inverse_dynamics", "friction_torques", "external_wrenches",
    "mass_matrix", "mass_matrix_inverse", "gravity_torques", "bias_torques", "coriolis_matrix",
    "forward_dynamics",
    "kinetic_energy", "potential_energy", "mechanical_energy", "center_of_mass", "momentum",
    "forward_kinematics", "body_poses", "frame_pose", "jacobian", "frame_velocity", "jdot_qd",
    "joint_torques_from_wrench", "centroidal_momentum_matrix", "centroidal_momentum",
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearize", "LINEARIZE_SCHEMES",
]

_RNEA = Kernel("rnea", "rnea")
_CRBA = Kernel("crba", "crba")
_ABA = Kernel("aba", "aba")
_CORIOLIS = Kernel("coriolis", "coriolis")
_FD_CRB = Kernel("ltdl", "fd_crb")
_MINV = Kernel("ltdl", "minv")
_ENERGY = Kernel("energy", "energy")
_POSES = Kernel("kinematics", "poses")
_JACOBIAN = Kernel("kinematics", "jacobian")
_FRAME_MOTION = Kernel("kinematics", "frame_motion")
_CENTROIDAL = Kernel("centroidal", "centroidal")
_RNEA_DERIVATIVES = Kernel("rnea_derivatives", "rnea_derivatives")
_ABA_DERIVATIVES = Kernel("aba_derivatives", "aba_derivatives")           # up to 28 DoF: the solves in lanes
_ABA_DERIVATIVES_SPARSE = Kernel("aba_derivatives", "aba_derivatives_sparse")   # larger models: sparse solves


# ---------------------------------------------------------------------------------------------
# Inverse dynamics and the terms of the equations of motion.
# ---------------------------------------------------------------------------------------------
def inverse_dynamics(model: Model, q, qd, qdd, f_ext=None, friction=False, out=None) -> np.ndarray:
    """Inverse dynamics by the Recursive Newton-Euler Algorithm (docs/theory.md §6).

    ``tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i``, with the reflected rotor inertia
    (armature) in ``M``; ``+ friction_torques(model, qd)`` when ``friction=True``.

    Parameters
    ----------
    q, qd, qdd : ``(n,)`` or ``(..., n)`` joint positions [rad, m], velocities and accelerations,
        ordered as ``model.joint_names``; they broadcast against each other.
    f_ext : ``(..., n, 6)`` wrenches ``(n, f)`` the environment exerts on each body, in that body's
        frame, or a dict ``{link_or_frame_name: wrench in that frame}``.
    out : optional preallocated result ``(..., n)``.

    Returns ``tau`` ``(..., n)`` [N m, N].
    """
    tau = _RNEA.call(model, q, qd, qdd, f_ext, out)
    if friction:   # (qd is finite: the kernel has checked it)
        tau += _friction(model, vector(qd, model.n, "qd"))
    return tau


def _friction(model, qd):
    """``b qd + f_c sign(qd)`` of a float64 ``qd`` (a controller's call: no errstate, which costs a
    microsecond; only a ``qd`` of NaN, inf or beyond 1e300 makes the result non-finite, and then
    the error names it)."""
    y = model.damping * qd + model.friction * np.sign(qd)
    if not np.isfinite(y).all():
        finite = np.isfinite(qd)
        if not finite.all():
            where = ""
            if qd.ndim > 1:
                where = f" (batch index {tuple(int(i) for i in np.argwhere(~finite.all(axis=-1))[0])})"
            raise InputError("qd contains NaN or inf" + where)
        finite_result(y, ("qd",))   # raises: the result overflows
    return y


def friction_torques(model: Model, qd) -> np.ndarray:
    """Joint friction ``tau_f = b qd + f_c sign(qd)``: viscous ``model.damping`` and Coulomb
    ``model.friction`` (URDF ``<dynamics damping friction>``). Same shape as ``qd``."""
    check_model(model)
    qd = vector(qd, model.n, "qd")
    if is_dask(qd):
        return map_batches(partial(friction_torques, model), [qd], [1], (model.n,), name="screwdyn-friction")
    check_room("friction_torques", 24 * qd.size, f"the float64 result {qd.shape} and its work")
    with np.errstate(all="ignore"):
        return _friction(model, qd)


def mass_matrix(model: Model, q, out=None) -> np.ndarray:
    """The joint-space mass matrix ``M(q)`` by the Composite Rigid Body Algorithm (docs/theory.md §8,
    ``O(n d)``).

    ``M`` is symmetric positive definite (both triangles written) and includes the reflected rotor
    inertia ``armature = gear_ratio^2 rotor_inertia`` on its diagonal, as Pinocchio's ``crba``.
    ``q``: ``(n,)`` or ``(..., n)``; returns ``(..., n, n)``.
    """
    return _CRBA.call(model, q, None, out)


def mass_matrix_inverse(model: Model, q, out=None) -> np.ndarray:
    """``M(q)^{-1}`` (armature included): CRBA, then the sparse ``L^T D L`` factorization of ``M``
    (docs/theory.md §10.2; Featherstone's branch-induced sparsity, no fill-in) and ``n`` solves,
    ``O(n^2 d)``. Exactly symmetric. ``q``: ``(n,)`` or ``(..., n)``; returns ``(..., n, n)``.
    Raises :class:`ModelError` when ``M`` is singular (a joint that moves no inertia)."""
    return _MINV.call(model, q, None, out)


def gravity_torques(model: Model, q, out=None) -> np.ndarray:
    """Gravity torques ``g(q) = dU/dq`` (RNEA with ``qd = qdd = 0``; Pinocchio's
    ``computeGeneralizedGravity``). ``q``: ``(n,)`` or ``(..., n)``; returns ``(..., n)``."""
    zero = _zero(model)
    return _RNEA.call(model, q, zero, zero, None, out)


def bias_torques(model: Model, q, qd, f_ext=None, out=None) -> np.ndarray:
    """The bias torques ``h = C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i``: RNEA with ``qdd = 0``
    (Pinocchio's ``nonLinearEffects`` when ``f_ext`` is None), so that ``tau = M qdd + h``.
    ``f_ext`` as in :func:`inverse_dynamics`. Returns ``(..., n)``."""
    return _RNEA.call(model, q, qd, _zero(model), f_ext, out)


def coriolis_matrix(model: Model, q, qd, out=None) -> np.ndarray:
    """The Coriolis matrix ``C(q, qd)`` of ``tau = M qdd + C qd + g``, built from the Christoffel
    symbols of ``M`` (docs/theory.md §7.3): ``C_kj = sum_i c_ijk qd_i``, ``c_ijk = 1/2 (dM_kj/dq_i +
    dM_ki/dq_j - dM_ij/dq_k)``. Hence ``Mdot - 2C`` is skew-symmetric and ``C qd`` is the
    velocity-product torque ``bias_torques - gravity_torques``.

    Computed by the recursive ``O(n d)`` algorithm of Echeandia & Wensing (2021), the one of
    Pinocchio's ``computeCoriolisMatrix`` (equal to it; docs/theory.md §9). Returns ``(..., n, n)``.
    """
    return _CORIOLIS.call(model, q, qd, None, out)


_FD_METHODS = {"aba": _ABA, "crba": _FD_CRB}


def forward_dynamics(model: Model, q, qd, tau, f_ext=None, method="aba", friction=False, out=None) -> np.ndarray:
    """Forward dynamics: ``qdd`` solving ``M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i = tau``
    (``- friction_torques(model, qd)`` on the right when ``friction=True``).

    ``method="aba"`` (default): the Articulated-Body Algorithm, ``O(n)``, as Pinocchio's ``aba``
    (docs/theory.md §10.1). ``method="crba"``: ``h`` by RNEA, ``M`` by CRBA, and ``M qdd = tau - h``
    solved by the sparse ``L^T D L`` factorization of ``M`` (docs/theory.md §10.2, Featherstone's
    ``FDcrb``). Both include the armature in ``M``.

    Parameters as :func:`inverse_dynamics`, with ``tau`` ``(n,)`` or ``(..., n)`` [N m, N] in place of
    ``qdd``. Returns ``qdd`` ``(..., n)``. Raises :class:`ModelError` when ``M`` is singular.
    """
    try:
        kernel = _FD_METHODS[method]
    except (KeyError, TypeError):
        raise InputError(f"method must be one of {tuple(_FD_METHODS)}, got {method!r}") from None
    if friction:
        check_model(model)
        with np.errstate(all="ignore"):
            tau = finite_result(vector(tau, model.n, "tau") - friction_torques(model, qd), ("qd", "tau"))
    return kernel.call(model, q, qd, tau, f_ext, out)


def _zero(model):
    return model._zero if type(model) is Model else np.zeros(0)


# ---------------------------------------------------------------------------------------------
# Derivatives of the dynamics and linearization.
# ---------------------------------------------------------------------------------------------
def _three(model):
    """The output shape ``(3, n, n)`` of one state of the derivative kernels."""
    return (3,) + model._nn if type(model) is Model else (3, 0, 0)


_LAST_SPLIT = (None, None)   # the last one-state result split and its views


def _split(D):
    """The three matrices of ``D (..., 3, n, n)``, as views; for one state, made once for an ``out=``
    given again (three views cost 0.5 us, a tenth of a call on UR5; a batch's are not kept, nor
    is the batch)."""
    global _LAST_SPLIT
    if D.ndim != 3:
        return D[..., 0, :, :], D[..., 1, :, :], D[..., 2, :, :]
    last = _LAST_SPLIT
    if last[0] is D:
        return last[1]
    views = D[0], D[1], D[2]
    _LAST_SPLIT = (D, views)
    return views


def inverse_dynamics_derivatives(model: Model, q, qd, qdd, f_ext=None, friction=False, out=None):
    """The partial derivatives of inverse dynamics (docs/theory.md §14, the analytic algorithm of
    Carpentier & Mansard, RSS 2018, as Pinocchio's ``computeRNEADerivatives``), ``O(n d)``.

    ``tau = ID(q, qd, qdd, f_ext)`` as :func:`inverse_dynamics`; returns
    ``(dtau_dq, dtau_dqd, dtau_dqdd)``, each ``(..., n, n)`` with ``[..., i, j] = d tau_i / d x_j``:

    * ``dtau_dq``: the derivative along ``q`` (for each joint, along its screw axis ``S_j``: the
      body turns (slides) as ``T_{p,j}(q_j) exp([S_j] dq_j)``), with ``qd``, ``qdd`` and the wrenches
      ``f_ext`` (each in its body's frame) held;
    * ``dtau_dqd``: equal to ``2 C(q, qd)`` (:func:`coriolis_matrix`), plus ``diag(damping)`` when
      ``friction=True``. The Coulomb term ``friction sign(qd)`` is constant where ``qd_i != 0`` and
      adds nothing (its jump at ``qd_i = 0`` has no derivative);
    * ``dtau_dqdd``: the mass matrix ``M(q)``, full and symmetric, armature included
      (:func:`mass_matrix`).

    Parameters as :func:`inverse_dynamics`. ``out``: an optional ``(..., 3, n, n)`` float64 array
    (C-contiguous) that receives the three matrices; the returned ones are views of it (of one new
    array when ``out`` is None).
    """
    D = _RNEA_DERIVATIVES.call(model, q, qd, qdd, f_ext, out, (), _three(model))
    if friction:
        D[..., 1, :, :] += np.diag(model.damping)
    return _split(D)


def _aba_derivatives(model):
    """The kernel of :func:`forward_dynamics_derivatives` for ``model``'s route (``aba_derivatives.dense``,
    by its size alone): one entry per route, so that a first call compiles its own only."""
    try:
        return model._derived["aba_derivatives"]
    except (AttributeError, KeyError):
        pass
    if not isinstance(model, Model):
        return _ABA_DERIVATIVES   # (its call says what is wrong)
    from .algorithms.aba_derivatives import dense
    kernel = model._derived["aba_derivatives"] = (_ABA_DERIVATIVES if getattr(dense, "py_func", dense)(model.n)
                                                  else _ABA_DERIVATIVES_SPARSE)
    return kernel


def forward_dynamics_derivatives(model: Model, q, qd, tau, f_ext=None, friction=False, out=None):
    """The partial derivatives of forward dynamics ``qdd = FD(q, qd, tau, f_ext)`` (docs/theory.md
    §14.4; the result of Pinocchio's ``computeABADerivatives``): ``qdd`` by ABA, the derivatives of
    inverse dynamics there, and, since ``ID(q, qd, FD(q, qd, tau)) = tau``::

        dqdd_dq = -M^{-1} dtau_dq,    dqdd_dqd = -M^{-1} dtau_dqd,    dqdd_dtau = M^{-1}

    by the sparse ``L^T D L`` factorization of ``M`` (no fill-in). Returns ``(dqdd_dq, dqdd_dqd,
    dqdd_dtau)``, each ``(..., n, n)``, ``dqdd_dtau`` exactly symmetric. With ``friction=True`` the
    dynamics are those of ``forward_dynamics(..., friction=True)``: ``dqdd_dqd`` gains
    ``-M^{-1} diag(damping)`` (the Coulomb term adds nothing, as in :func:`inverse_dynamics_derivatives`).

    Parameters as :func:`forward_dynamics`; ``out`` as in :func:`inverse_dynamics_derivatives`.
    Raises :class:`ModelError` when ``M`` is singular, as :func:`forward_dynamics`.
    """
    if friction:
        check_model(model)
        tau = vector(tau, model.n, "tau") - friction_torques(model, qd)
    D = _aba_derivatives(model).call(model, q, qd, tau, f_ext, out, (), _three(model))
    if friction:
        D[..., 1, :, :] -= D[..., 2, :, :] * model.damping
    return _split(D)


#: The discrete-time schemes of :func:`linearize` (``x_{k+1} = phi(x_k, tau_k)``, ``tau`` held over the step).
LINEARIZE_SCHEMES = ("rk4", "semi_implicit_euler", "euler")


def linearize(model: Model, q, qd, tau=None, dt=None, *, f_ext=None, friction=False, scheme="rk4", constraints=None,
              out=None):
    """The linearization of the dynamics about a state (docs/theory.md §14.5).

    The state is ``x = (q, qd)`` in tangent coordinates (``2 nv`` entries: a free-flyer's ``dq`` is
    the twist ``T exp([dq])`` perturbs its pose by, as for the derivatives) and the input ``tau``
    ``(nv,)``. With ``dt`` None, the continuous-time pair of ``xdot = (qd, FD(q, qd, tau))``::

        d/dt dx = A dx + B dtau,    A = [[-ad, 1], [dqdd_dq, dqdd_dqd]],    B = [[0], [M^{-1}]]

    (:func:`forward_dynamics_derivatives`; ``-ad`` is zero but for the blocks of free-flyer and
    spherical joints, ``-[ad_V]`` of their velocity ``V``: docs/theory.md (14.12)). With ``dt`` [s], the discrete pair
    ``x_{k+1} = A x_k + B tau_k`` of one step of ``scheme``, ``tau`` held over the step, the
    exact derivatives of that step:

    * ``"rk4"`` (default): the classical Runge-Kutta step of :func:`screwdyn.simulate`'s default
      integrator, its four stages and their derivatives chained (four calls of each function);
    * ``"semi_implicit_euler"``: ``qd' = qd + dt FD(q, qd, tau)``, ``q' = q + dt qd'`` (the symplectic
      Euler step of ``simulate(integrator="semi_implicit_euler")``);
    * ``"euler"``: ``x' = x + dt xdot``, i.e. ``A_d = 1 + dt A``, ``B_d = dt B``.

    (The discrete pairs are for models whose joints have one degree of freedom each.)

    ``tau`` None: the torque that holds the state, ``inverse_dynamics(q, qd, 0)`` (with ``f_ext``
    and ``friction``), so that ``qdd = 0`` there. ``f_ext`` and ``friction`` as in
    :func:`forward_dynamics` (held, and the model's viscous damping, respectively).

    Under constraints (``constraints``, added to ``model.constraints`` as by every constrained
    function; a model with ``model.constraints`` is always linearized under them): the same pairs of
    the constrained dynamics ``qdd = FD_c(q, qd, tau)`` of :func:`screwdyn.constrained_forward_dynamics`
    (Baumgarte gains included, docs/theory.md §17.8), its derivatives by
    :func:`screwdyn.constrained_forward_dynamics_derivatives` (``B``'s block ``dqdd_dtau`` in place of
    ``M^{-1}``); ``tau`` None is then ``constrained_inverse_dynamics(q, qd, 0, strict=False)``'s torque.
    The discrete steps are those of the scheme on that ODE (no projection onto the constraints).

    One state or a batch ``(..., nq)``, ``(..., nv)``; returns ``(A (..., 2nv, 2nv), B (..., 2nv, nv))``, into
    ``out = (A, B)`` when given (C-contiguous float64 arrays of those shapes).

    >>> import numpy as np, screwdyn
    >>> from screwdyn import models
    >>> pendulum = models.load("pendulum")
    >>> A, B = screwdyn.linearize(pendulum, [np.pi], [0.0])     # upright: an unstable equilibrium
    >>> bool(np.linalg.eigvals(A).real.max() > 0)
    True
    """
    from .dispatch import output

    check_model(model)
    n = model.n
    if dt is not None:
        if not isinstance(dt, (int, float, np.integer, np.floating)) or not np.isfinite(dt) or dt <= 0:
            raise InputError(f"dt must be None or a positive finite number of seconds, got {dt!r}")
        if scheme not in LINEARIZE_SCHEMES:
            raise InputError(f"scheme must be one of {LINEARIZE_SCHEMES}, got {scheme!r}")
        if not model._one_dof:
            raise InputError("linearize: a discrete pair (dt) for a model with free-flyer or spherical joints is "
                             "not available (its step moves q on the configuration manifold); the continuous pair "
                             "(dt=None) is")
    q, qd = vector(q, model.nq, "q", q_broadcasts(model)), vector(qd, n, "qd")
    accel, derivatives, hold = _dynamics(model, constraints, f_ext, friction)
    tau = vector(hold(q, qd) if tau is None else tau, n, "tau")
    Fq, Fv, Minv = derivatives(q, qd, tau)
    batch = Fq.shape[:-2]
    A = output(None if out is None else out[0], batch + (2 * n, 2 * n), "out[0]")
    B = output(None if out is None else out[1], batch + (2 * n, n), "out[1]")
    eye = np.eye(n)
    if dt is None:
        A[..., :n, :n] = 0.0
        _lie_blocks(model, qd, A)
        A[..., :n, n:] = eye
        A[..., n:, :n] = Fq
        A[..., n:, n:] = Fv
        B[..., :n, :] = 0.0
        B[..., n:, :] = Minv
        return A, B
    h = float(dt)
    if scheme == "euler":
        A[..., :n, :n] = eye
        A[..., :n, n:] = h * eye
        A[..., n:, :n] = h * Fq
        A[..., n:, n:] = eye + h * Fv
        B[..., :n, :] = 0.0
        B[..., n:, :] = h * Minv
    elif scheme == "semi_implicit_euler":     # qd' = qd + h a, q' = q + h qd'
        A[..., n:, :n] = h * Fq
        A[..., n:, n:] = eye + h * Fv
        A[..., :n, :n] = eye + h * A[..., n:, :n]
        A[..., :n, n:] = h * A[..., n:, n:]
        B[..., n:, :] = h * Minv
        B[..., :n, :] = h * B[..., n:, :]
    else:
        _rk4_step_derivatives(model, q, qd, tau, accel, derivatives, h, (Fq, Fv, Minv), A, B)
    return A, B


def _lie_blocks(model, qd, A):
    """The top-left blocks of a free-flyer's or spherical joint (docs/theory.md (14.12)): its ``q``
    moves as ``T' = T exp([V] dt)`` (4.9), so a perturbation ``T exp([dx])`` obeys
    ``d/dt dx = dV - [ad_V] dx``, ``V`` its velocity block ``(omega, v)`` (``omega`` for spherical)."""
    if model._one_dof:
        return
    from .spatial import ad

    for j in np.flatnonzero(model.nvs > 1):
        a, k = int(model.idx_vs[j]), int(model.nvs[j])
        V = np.zeros(qd.shape[:-1] + (6,))
        V[..., :k] = qd[..., a:a + k]
        adV = np.vectorize(ad, signature="(6)->(6,6)")(V) if V.ndim > 1 else ad(V)
        A[..., a:a + k, a:a + k] = -adV[..., :k, :k]


def _dynamics(model, constraints, f_ext, friction):
    """``(accel, derivatives, hold)`` of the dynamics :func:`linearize` differentiates: ``accel(q, qd, tau)``
    the acceleration, ``derivatives(q, qd, tau)`` its ``(dqdd_dq, dqdd_dqd, dqdd_dtau)``, ``hold(q, qd)`` the
    torque of ``qdd = 0``: forward dynamics, or with constraints (given, or the model's) constrained forward
    dynamics, with ``f_ext`` and ``friction`` held."""
    if constraints is None and not model.constraints:
        return (lambda q, qd, tau: forward_dynamics(model, q, qd, tau, f_ext, friction=friction),
                lambda q, qd, tau: forward_dynamics_derivatives(model, q, qd, tau, f_ext, friction),
                lambda q, qd: inverse_dynamics(model, q, qd, _zero(model), f_ext, friction))
    from .constrained import constrained_forward_dynamics, constrained_inverse_dynamics
    from .constrained_derivatives import constrained_forward_dynamics_derivatives

    cons = () if constraints is None else constraints

    def driven(qd, tau):
        return tau - friction_torques(model, qd) if friction else tau

    def accel(q, qd, tau):
        return constrained_forward_dynamics(model, q, qd, driven(qd, tau), cons, f_ext)[0]

    def derivatives(q, qd, tau):
        Fq, Fv, Fu = constrained_forward_dynamics_derivatives(model, q, qd, driven(qd, tau), cons, f_ext)[:3]
        return Fq, (Fv - Fu * model.damping if friction else Fv), Fu

    def hold(q, qd):
        tau = constrained_inverse_dynamics(model, q, qd, np.zeros(np.shape(qd)), cons, f_ext, strict=False)[0]
        return tau + friction_torques(model, qd) if friction else tau

    return accel, derivatives, hold


def _rk4_step_derivatives(model, q, qd, tau, accel, derivatives, h, first, A, B):
    """``A = d x' / d x``, ``B = d x' / d tau`` of the RK4 step ``x' = x + h/6 (k1 + 2 k2 + 2 k3 + k4)``,
    ``k_s = f(x_s)``, ``x_1 = x``, ``x_2 = x + h/2 k1``, ``x_3 = x + h/2 k2``, ``x_4 = x + h k3`` (docs/theory.md
    §14.5): ``dk_s = J(x_s) dx_s`` with ``J = [[0, 1], [dqdd_dq, dqdd_dqd]]`` and ``B``-part ``dqdd_dtau``
    (``M^{-1}`` without constraints), ``accel`` and ``derivatives`` of :func:`_dynamics`."""
    n = model.n
    batch = first[0].shape[:-2]
    eye2 = np.eye(2 * n)
    A[...] = eye2
    B[...] = 0.0
    Xx = np.broadcast_to(eye2, batch + (2 * n, 2 * n))    # d x_s / d x
    Xu = np.zeros(batch + (2 * n, n))                      # d x_s / d tau
    qs, vs = q, qd
    derivs = first
    for stage, (c, w) in enumerate(((0.5, 1.0), (0.5, 2.0), (1.0, 2.0), (None, 1.0))):
        if stage:
            derivs = derivatives(qs, vs, tau)
        Fq, Fv, Minv = derivs
        # k = (v, a): dk/dx = [[Xx_v], [Fq Xx_q + Fv Xx_v]], dk/dtau = [[Xu_v], [Fq Xu_q + Fv Xu_v + Minv]]
        Kx = np.concatenate((Xx[..., n:, :], Fq @ Xx[..., :n, :] + Fv @ Xx[..., n:, :]), axis=-2)
        Ku = np.concatenate((Xu[..., n:, :], Fq @ Xu[..., :n, :] + Fv @ Xu[..., n:, :] + Minv), axis=-2)
        A += (h * w / 6.0) * Kx
        B += (h * w / 6.0) * Ku
        if c is None:
            break
        a = accel(qs, vs, tau)
        qs, vs = q + (c * h) * vs, qd + (c * h) * a
        Xx = eye2 + (c * h) * Kx
        Xu = (c * h) * Ku


# ---------------------------------------------------------------------------------------------
# Energy, centre of mass, momentum.
# ---------------------------------------------------------------------------------------------
def _energy_terms(model, q, qd):
    """``out (..., 14)``: KE, U, first moment (3), momentum about {0} (6), centre of mass (3)."""
    return _ENERGY.call(model, q, qd, shape=(14,))


def _scalar(e, k):
    """Term ``k`` of :func:`_energy_terms`' ``e``: a float for one state, else an array (a copy)."""
    return float(e[k]) if e.ndim == 1 and type(e) is np.ndarray else e[..., k].copy()


def kinetic_energy(model: Model, q, qd):
    """Kinetic energy ``T = 1/2 qd^T M(q) qd`` [J] (docs/theory.md §11): the links'
    ``1/2 V_i^T G_i V_i`` plus the rotors' ``1/2 armature qd^2``, as Pinocchio's
    ``computeKineticEnergy``. A float for one state, an array ``(...)`` for a batch."""
    return _scalar(_energy_terms(model, q, qd), 0)


def potential_energy(model: Model, q):
    """Gravitational potential energy ``U = -sum_i m_i g^T c_i(q)`` [J] (``c_i`` the centre of
    mass of body ``i`` in the base frame; zero at the base origin, as Pinocchio's
    ``computePotentialEnergy``), so that ``gravity_torques = dU/dq``."""
    return _scalar(_energy_terms(model, q, _zero(model)), 1)


def mechanical_energy(model: Model, q, qd):
    """``kinetic_energy + potential_energy`` [J]: conserved by the unforced, frictionless dynamics."""
    e = _energy_terms(model, q, qd)
    with np.errstate(all="ignore"):
        total = finite_result(e[..., 0] + e[..., 1], ("q", "qd"))
    return float(total) if np.ndim(total) == 0 and not is_dask(total) else total


def center_of_mass(model: Model, q) -> np.ndarray:
    """Centre of mass of the moving bodies in the base frame, ``(..., 3)`` [m]
    (Pinocchio's ``centerOfMass``; the fixed base's own inertia is not part of the model)."""
    check_model(model)
    if model.total_mass <= 0.0:
        raise ModelError("center_of_mass: the model has no mass")
    # (the kernel divides the first moment by the mass: a weighted mean of the bodies' positions,
    # finite where the moment is, which the kernel checks)
    e = _energy_terms(model, q, _zero(model))
    return e[11:14] if e.ndim == 1 and type(e) is np.ndarray else e[..., 11:14].copy()


def momentum(model: Model, q, qd, *, about="base") -> np.ndarray:
    """Spatial momentum of the whole tree, ``(..., 6)`` as ``(angular, linear)``, in base-frame axes.

    ``about="base"``: angular momentum about the base frame's origin,
    ``sum_i [Ad_{T_{i,0}}]^T G_i V_i``; ``about="com"``: about the centre of mass (the centroidal
    momentum, Pinocchio's ``computeCentroidalMomentum`` with halves swapped). The linear part is
    ``m v_com`` either way. Rotor (armature) inertia is not included.
    """
    if about not in ("base", "com"):
        raise InputError(f"about must be 'base' or 'com', got {about!r}")
    if about == "com" and any_dask(q, qd):
        check_model(model)
        q, qd = vector(q, model.nq, "q", q_broadcasts(model)), vector(qd, model.n, "qd")
        return map_batches(partial(momentum, model, about=about), [q, qd], [1, 1], (6,), name="screwdyn-momentum")
    e = _energy_terms(model, q, qd)
    P = e[..., 5:11].copy()
    if about == "com":
        if model.total_mass <= 0.0:
            raise ModelError("momentum(about='com'): the model has no mass")
        with np.errstate(all="ignore"):
            P[..., :3] -= np.cross(e[..., 11:14], P[..., 3:])
        finite_result(P, ("q", "qd"))
    return P


# ---------------------------------------------------------------------------------------------
# Kinematics: poses, Jacobians, Jdot qd, J^T F.
# ---------------------------------------------------------------------------------------------
_REFERENCES = {"space": 0, "world": 0, "body": 1, "local": 1, "world_aligned": 2, "local_world_aligned": 2}
# (the values are algorithms.kinematics.SPACE, BODY, WORLD_ALIGNED; tests/test_kinematics.py checks it)


def _reference(reference):
    try:
        return _REFERENCES[reference]
    except (KeyError, TypeError):
        raise InputError(f"reference must be one of {sorted(_REFERENCES)}, got {reference!r}") from None


def _frame(model, frame):
    """``(body, T_body_frame)`` of a frame name or index (the pose a writable array, as the
    kernels' entry points take)."""
    check_model(model)
    found = model._derived.get(("frame", frame))
    if found is None:
        try:
            k = model.frame_index(frame)
        except ModelError as e:
            raise InputError(f"frame: {e}") from None
        body = int(model.frame_body[k])
        found = model._derived[("frame", frame)] = (int(model._body_row[body]) if body >= 0 else -1,
                                                     np.array(model.frame_pose[k]))
    return found


def _rows_of(model, bodies):
    """The kernels' rows (:mod:`screwdyn.algorithms.layout`) of bodies (-1: the base)."""
    bodies = np.asarray(bodies, dtype=np.int64)
    return np.where(bodies >= 0, model._body_row[np.maximum(bodies, 0)] if model.nbodies else -1, -1)


def _frames(model, key, make):
    """The frames ``bodies (k,)``, ``poses (k, 4, 4)`` that ``make()`` returns, as writable arrays,
    made once per model (``make`` is not called again: a call of forward kinematics costs what its
    kernel does, not the arrays' making)."""
    found = model._derived.get(key)
    if found is None:
        bodies, poses = make()
        found = model._derived[key] = (np.array(bodies, dtype=np.int64), np.array(poses, dtype=float))
    return found


def forward_kinematics(model: Model, q) -> np.ndarray:
    """Poses ``T_{0,f}`` in the base frame of every frame of the model (every URDF link, the base,
    added frames), in ``model.frame_names`` order: ``(..., k, 4, 4)``. See :func:`body_poses` for
    the moving bodies only."""
    check_model(model)
    frames = _frames(model, "frames", lambda: (_rows_of(model, model.frame_body), model.frame_pose))
    return _POSES.call(model, q, params=frames, shape=(len(model.frame_names), 4, 4))


def body_poses(model: Model, q) -> np.ndarray:
    """Poses ``T_{0,i}`` of the moving bodies (``model.link_names`` order, the frames on the joint
    axes), ``(..., nbodies, 4, 4)``."""
    check_model(model)
    n = model.nbodies
    frames = _frames(model, "bodies", lambda: (model._body_row, np.tile(np.eye(4), (n, 1, 1))))
    return _POSES.call(model, q, params=frames, shape=(n, 4, 4))


def frame_pose(model: Model, q, frame) -> np.ndarray:
    """Pose ``T_{0,f}`` of one frame (name or index in ``model.frame_names``), ``(..., 4, 4)``."""
    body, T = _frame(model, frame)
    frames = _frames(model, ("pose", frame), lambda: ([body], T[None]))
    poses = _POSES.call(model, q, params=frames, shape=(1, 4, 4))
    return poses[0] if poses.ndim == 3 else poses[..., 0, :, :]


def jacobian(model: Model, q, frame, reference="space", out=None) -> np.ndarray:
    """The Jacobian ``J(q)`` ``(..., 6, n)`` of a frame, rows ``(omega, v)``, for ``reference``
    (docs/theory.md §5):

    * ``"space"``: ``J_s``, twists in the base frame (Modern Robotics' space Jacobian;
      ``J_s qd`` is the spatial twist of the frame's body, its ``v`` the velocity of the point at
      the base origin). Pinocchio's ``WORLD`` with halves swapped.
    * ``"body"``: ``J_b``, the frame's twist in the frame itself (MR's body Jacobian; Pinocchio ``LOCAL``).
    * ``"world_aligned"``: angular velocity and the velocity of the frame's origin, both in
      base-frame axes (Pinocchio ``LOCAL_WORLD_ALIGNED``).

    Columns of joints not on the path from the base to the frame are zero.
    """
    ref = _reference(reference)
    body, T = _frame(model, frame)
    return _JACOBIAN.call(model, q, params=(body, T, ref), shape=(6, model.n), out=out)


def _frame_motion(model, q, qd, frame, reference):
    ref = _reference(reference)
    body, T = _frame(model, frame)
    return _FRAME_MOTION.call(model, q, qd, params=(body, T, ref), shape=((6,), (6,)))


def frame_velocity(model: Model, q, qd, frame, reference="space") -> np.ndarray:
    """``J(q) qd`` ``(..., 6)``, ``(omega, v)``, for ``reference`` as in :func:`jacobian` (one
    forward pass, no Jacobian formed)."""
    return _frame_motion(model, q, qd, frame, reference)[0]


def jdot_qd(model: Model, q, qd, frame, reference="space") -> np.ndarray:
    """The acceleration bias ``Jdot(q, qd) qd`` ``(..., 6)`` of a frame, ``(omega, v)``: the frame's
    acceleration when ``qdd = 0`` (no gravity), so that ``d/dt (J qd) = J qdd + Jdot qd``.

    ``reference`` as in :func:`jacobian`. For ``"world_aligned"`` it is the classical
    acceleration ``(omega_dot, p_ddot)`` of the frame's origin (Pinocchio's
    ``getFrameClassicalAcceleration`` at ``qdd = 0``); for ``"body"`` and ``"space"`` it is the
    spatial acceleration (the rate of the body / space twist)."""
    return _frame_motion(model, q, qd, frame, reference)[1]


def joint_torques_from_wrench(model: Model, q, frame, wrench, reference="body") -> np.ndarray:
    """``tau = J(q)^T F`` ``(..., n)`` for a wrench ``F = (n, f)`` at ``frame``: the joint torques
    that balance ``F`` in statics, i.e. that make the frame exert ``F`` on the environment
    (docs/theory.md §5, eq. (5.10)).

    ``reference`` says how ``F`` is expressed, dual to :func:`jacobian`: ``"body"`` (default, as
    the ``f_ext`` dict of :func:`inverse_dynamics`): in the frame, about its origin; ``"space"``:
    in base axes, about the base origin; ``"world_aligned"``: in base axes, about the frame's
    origin. ``q`` ``(..., n)`` and ``wrench`` ``(..., 6)`` broadcast.
    """
    w = vector(wrench, 6, "wrench")
    if any_dask(q, w):
        _reference(reference)
        _frame(model, frame)
        q = vector(q, model.nq, "q", q_broadcasts(model))
        return map_batches(partial(_torques_of_wrench, model, frame, reference), [q, w], [1, 1], (model.n,),
                           name="screwdyn-wrench-torques")
    if not np.all(np.isfinite(w)):
        raise InputError("wrench contains NaN or inf")
    J = jacobian(model, q, frame, reference)
    with np.errstate(all="ignore"):
        if J.ndim == 2 and w.ndim == 1:
            return finite_result(w @ J, ("q", "wrench"))
        try:
            return finite_result(np.einsum("...rj,...r->...j", J, w), ("q", "wrench"))
        except ValueError:
            raise InputError(f"q batch {J.shape[:-2]} and wrench {w.shape} do not broadcast") from None



def _torques_of_wrench(model, frame, reference, q, wrench):
    return joint_torques_from_wrench(model, q, frame, wrench, reference)


# ---------------------------------------------------------------------------------------------
# Centroidal dynamics.
# ---------------------------------------------------------------------------------------------
def centroidal_momentum_matrix(model: Model, q, out=None) -> np.ndarray:
    """The centroidal momentum matrix ``A_G(q)`` ``(..., 6, n)``: ``h_G = A_G qd`` is the robot's
    spatial momentum about its centre of mass in world-aligned axes, angular first ``(k_G, l)``
    (docs/theory.md eq. (11.6); Pinocchio's ``computeCentroidalMap`` with its halves swapped). Its
    ``l = m cdot``; for a floating base, ``A_G`` maps the whole momentum, base included."""
    check_model(model)
    return _CENTROIDAL.call(model, q, shape=(6, model.n), out=out)


def centroidal_momentum(model: Model, q, qd) -> np.ndarray:
    """``h_G = A_G(q) qd`` ``(..., 6)``: the momentum about the centre of mass, world-aligned axes,
    angular first: :func:`momentum` ``(about="com")`` (one forward pass, no ``A_G`` formed)."""
    return momentum(model, q, qd, about="com")
