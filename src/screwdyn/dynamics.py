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
    if friction:
        with np.errstate(all="ignore"):
            tau += friction_torques(model, qd)
        finite_result(tau, ("q", "qd", "qdd"))
    return tau


def friction_torques(model: Model, qd) -> np.ndarray:
    """Joint friction ``tau_f = b qd + f_c sign(qd)``: viscous ``model.damping`` and Coulomb
    ``model.friction`` (URDF ``<dynamics damping friction>``). Same shape as ``qd``."""
    check_model(model)
    qd = vector(qd, model.n, "qd")
    if is_dask(qd):
        return map_batches(partial(friction_torques, model), [qd], [1], (model.n,), name="screwdyn-friction")
    check_room("friction_torques", 24 * qd.size, f"the float64 result {qd.shape} and its work")
    finite = np.isfinite(qd)
    if not finite.all():
        where = ""
        if qd.ndim > 1:
            where = f" (batch index {tuple(int(i) for i in np.argwhere(~finite.all(axis=-1))[0])})"
        raise InputError("qd contains NaN or inf" + where)
    with np.errstate(all="ignore"):
        return finite_result(model.damping * qd + model.friction * np.sign(qd), ("qd",))


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
# Energy, centre of mass, momentum.
# ---------------------------------------------------------------------------------------------
def _energy_terms(model, q, qd):
    """``out (..., 11)``: KE, U, first moment (3), momentum about {0} (6)."""
    return _ENERGY.call(model, q, qd, shape=(11,))


def _scalar(x):
    return float(x) if x.ndim == 0 and not is_dask(x) else x.copy()


def kinetic_energy(model: Model, q, qd):
    """Kinetic energy ``T = 1/2 qd^T M(q) qd`` [J] (docs/theory.md §11): the links'
    ``1/2 V_i^T G_i V_i`` plus the rotors' ``1/2 armature qd^2``, as Pinocchio's
    ``computeKineticEnergy``. A float for one state, an array ``(...)`` for a batch."""
    return _scalar(_energy_terms(model, q, qd)[..., 0])


def potential_energy(model: Model, q):
    """Gravitational potential energy ``U = -sum_i m_i g^T c_i(q)`` [J] (``c_i`` the centre of
    mass of body ``i`` in the base frame; zero at the base origin, as Pinocchio's
    ``computePotentialEnergy``), so that ``gravity_torques = dU/dq``."""
    return _scalar(_energy_terms(model, q, _zero(model))[..., 1])


def mechanical_energy(model: Model, q, qd):
    """``kinetic_energy + potential_energy`` [J]: conserved by the unforced, frictionless dynamics."""
    e = _energy_terms(model, q, qd)
    with np.errstate(all="ignore"):
        return _scalar(finite_result(e[..., 0] + e[..., 1], ("q", "qd")))


def center_of_mass(model: Model, q) -> np.ndarray:
    """Centre of mass of the moving bodies in the base frame, ``(..., 3)`` [m]
    (Pinocchio's ``centerOfMass``; the fixed base's own inertia is not part of the model)."""
    check_model(model)
    if model.total_mass <= 0.0:
        raise ModelError("center_of_mass: the model has no mass")
    with np.errstate(all="ignore"):
        return finite_result(_energy_terms(model, q, _zero(model))[..., 2:5] / model.total_mass, ("q",))


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
        q, qd = vector(q, model.nq, "q"), vector(qd, model.n, "qd")
        return map_batches(partial(momentum, model, about=about), [q, qd], [1, 1], (6,), name="screwdyn-momentum")
    e = _energy_terms(model, q, qd)
    P = e[..., 5:11].copy()
    if about == "com":
        if model.total_mass <= 0.0:
            raise ModelError("momentum(about='com'): the model has no mass")
        with np.errstate(all="ignore"):
            P[..., :3] -= np.cross(e[..., 2:5] / model.total_mass, P[..., 3:])
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


def _frames(model, key, bodies, poses):
    """The frames ``bodies (k,)``, ``poses (k, 4, 4)`` as writable arrays, made once per model."""
    found = model._derived.get(key)
    if found is None:
        found = model._derived[key] = (np.array(bodies, dtype=np.int64), np.array(poses, dtype=float))
    return found


def forward_kinematics(model: Model, q) -> np.ndarray:
    """Poses ``T_{0,f}`` in the base frame of every frame of the model (every URDF link, the base,
    added frames), in ``model.frame_names`` order: ``(..., k, 4, 4)``. See :func:`body_poses` for
    the moving bodies only."""
    check_model(model)
    frames = _frames(model, "frames", _rows_of(model, model.frame_body), model.frame_pose)
    return _POSES.call(model, q, params=frames, shape=(len(model.frame_names), 4, 4))


def body_poses(model: Model, q) -> np.ndarray:
    """Poses ``T_{0,i}`` of the moving bodies (``model.link_names`` order, the frames on the joint
    axes), ``(..., nbodies, 4, 4)``."""
    check_model(model)
    n = model.nbodies
    frames = _frames(model, "bodies", model._body_row, np.tile(np.eye(4), (n, 1, 1)))
    return _POSES.call(model, q, params=frames, shape=(n, 4, 4))


def frame_pose(model: Model, q, frame) -> np.ndarray:
    """Pose ``T_{0,f}`` of one frame (name or index in ``model.frame_names``), ``(..., 4, 4)``."""
    body, T = _frame(model, frame)
    frames = _frames(model, ("pose", frame), [body], T[None])
    return _POSES.call(model, q, params=frames, shape=(1, 4, 4))[..., 0, :, :]


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
        q = vector(q, model.nq, "q")
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
