"""Constrained dynamics: contacts, closed loops and joint couplings (docs/theory.md §15).

The constraints a call acts on are ``model.constraints`` (those of the model's file) followed by
the ``constraints`` it passes (:mod:`screwdyn.constraints`); their ``m`` rows are stacked in that
order in ``J``, ``gamma``, ``lam``. The equations (Pinocchio's ``constraintDynamics``)::

    M(q) qdd + h(q, qd) = tau + J(q)^T lam            h = C qd + g - sum_i J_i^T F_ext_i
    J(q) qdd + gamma(q, qd) = -Kd J qd - Kp e          each constraint's Baumgarte gains

``lam`` is what each constraint exerts on its body ``a`` (the sign of Pinocchio's ``lambda_c``),
each block in the constraint's reference (``"local"``: its frame's axes; ``"world"``: the
world's at its point); a 6-row block is ``(moment, force)``.

Every function takes one state ``(n,)`` or a batch ``(..., n)`` and runs compiled kernels
(:mod:`screwdyn.algorithms.constrained`): the sparse KKT factorization of :mod:`screwdyn.algorithms.kkt`,
``O(n d^2 + m d^2 + m^2 n + m^3)`` a state, no dense ``M^-1``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .algorithms.status import Status
from .algorithms.work import STACK_LIMIT
from .constraints import Constraint, pack
from .dispatch import Kernel, check_model, check_room, external_wrenches, on_large_stack, raise_status, vector, wrench_rows
from .errors import InputError, ModelError

__all__ = ["constraint_jacobian", "constraint_drift", "constraint_error", "delassus", "constrained_forward_dynamics",
           "impulse_dynamics", "constrained_inverse_dynamics", "ProximalInfo"]

_MOTION = Kernel("constrained", "constraint_motion")
_DELASSUS = Kernel("constrained", "delassus")
_DYNAMICS = Kernel("constrained", "constrained_dynamics")
F64 = np.dtype(np.float64)
_ND = np.ndarray
_empty = np.empty
_NO_FEXT = np.zeros((1, 6))
_NO_FEXT3 = _NO_FEXT.reshape(1, 1, 6)
# the default proximal damping, relative to the Delassus matrix's largest diagonal entry (docs/theory.md §15.5)
MU_RELATIVE = 1e-6


class ProximalInfo(NamedTuple):
    """How the proximal solve of each state went (arrays ``(...)`` for a batch, numbers for one
    state): ``iterations`` taken and the final ``residual = ||G lam - b||_inf`` [m/s^2, or m/s for an
    impulse] (docs/theory.md §15.5)."""
    iterations: object
    residual: object


# ---------------------------------------------------------------------------------- the calls
def _constraints(model, constraints, kernel):
    """``(cd, m, floats)``: the packed constraints (:func:`screwdyn.constraints.pack`), their rows and
    the floats of work a state of ``kernel`` takes with them (made once per model and set)."""
    check_model(model)
    if type(constraints) is not tuple:
        constraints = (constraints,) if isinstance(constraints, Constraint) else tuple(
            constraints if constraints is not None else ())
    cd, m, _ = pack(model, constraints)
    key = ("constrained work", kernel.key, m)
    floats = model._derived.get(key)
    if floats is None:
        floats = model._derived[key] = (kernel.entry.work_floats(model.n)
                                        + _kernels().constraint_floats.py_func(model.n, m))
    return cd, m, floats


def _run(kernel, model, cd, m, floats, states, names, params, shapes, fext=None):
    """``kernel`` on ``states`` (arrays ``(nq,)``/``(nv,)`` or batches that broadcast): its outputs,
    one per ``shapes`` entry (one state's shape), with the batch's leading axes."""
    if fext is None and floats <= STACK_LIMIT:   # the fast path: one state of float64 vectors
        fast = True
        for s in states:
            if type(s) is not np.ndarray or s.dtype is not F64 or s.ndim != 1:
                fast = False
                break
        if fast:
            outs = [_empty(sh) for sh in shapes]
            code = kernel.one(model._kd, *states, *_NO_FEXT_ARGS[kernel.entry.fext], cd, *params, *outs)
            if code == 0:
                return outs
            if code != Status.NOT_FAST:
                _raise(code, names)
    n = model.n
    sizes = [model.nq if nm == "q" else n for nm in names]
    states = [vector(s, k, nm) for s, k, nm in zip(states, sizes, names)]
    use_fext = fext is not None
    if all(s.ndim == 1 for s in states) and (not use_fext or isinstance(fext, dict) or np.ndim(fext) == 2):
        outs = [np.empty(sh) for sh in shapes]
        args = [np.ascontiguousarray(s) for s in states]
        if kernel.entry.fext:
            args += [np.require(wrench_rows(model, external_wrenches(model, fext)), F64, ["C", "W"]) if use_fext
                     else _NO_FEXT, use_fext]
        code = on_large_stack(floats, kernel.one, model._kd, *args, cd, *params, *outs)
        if code:
            _raise(code, names)
        return outs
    try:
        batch = np.broadcast_shapes(*(s.shape[:-1] for s in states))
    except ValueError:
        shapes_given = ", ".join(f"{nm} {s.shape}" for nm, s in zip(names, states))
        raise InputError(f"state arrays do not broadcast to one batch: {shapes_given}") from None
    if use_fext:
        F = external_wrenches(model, fext, batch)
        batch = F.shape[:-2]
        F = np.require(wrench_rows(model, F), F64, ["C", "W"]).reshape(math.prod(batch), n, 6)
    B = math.prod(batch)
    rows = [np.ascontiguousarray(np.broadcast_to(s, batch + (k,))).reshape(B, k) for s, k in zip(states, sizes)]
    check_room(kernel.entry.name, 8 * B * (sum(math.prod(sh) for sh in shapes) + sum(sizes)), "the results and "
               f"inputs of {B} states")
    outs = [np.empty((B,) + sh) for sh in shapes]
    status = np.zeros(B, dtype=np.int64)
    args = [model._kd, *rows]
    if kernel.entry.fext:
        args += [F, True] if use_fext else [_NO_FEXT3, False]
    if B:
        if floats <= STACK_LIMIT and B > 1:
            if kernel.run_batch((*args, cd, *params, *outs, status), None):   # pragma: no cover - laid out above
                raise AssertionError(f"{kernel.entry.name}: the batch entry point refused its arrays")
        else:
            for k in range(B):
                extra = ([F[k] if use_fext else _NO_FEXT, use_fext] if kernel.entry.fext else [])
                status[k] = on_large_stack(floats, kernel.one, model._kd, *(r[k] for r in rows), *extra, cd, *params,
                                           *(o[k] for o in outs))
        bad = np.flatnonzero(status)
        if bad.size:
            k = int(bad[0])
            _raise(status[k], names, tuple(int(i) for i in np.unravel_index(k, batch)) if batch else None)
    return [o.reshape(batch + sh) for o, sh in zip(outs, shapes)]


_NO_FEXT_ARGS = {True: (_NO_FEXT, False), False: ()}
_FORWARD, _IMPULSE = 0, 1   # the kernel's modes (algorithms.constrained.FORWARD, IMPULSE; tests check them)


def _kernels():
    """The kernels' module, imported on first use (``import screwdyn`` creates none of its dispatchers)."""
    import importlib
    return importlib.import_module("screwdyn.algorithms.constrained")


def _raise(code, names, index=None):
    where = "" if index is None else f" (batch index {index})"
    kernels = _kernels()
    if code == kernels.REDUNDANT:
        raise InputError(f"the constraints are redundant (their Delassus matrix J M^-1 J^T is singular){where} and "
                         "mu = 0: give mu > 0 (or None) for the minimum-norm forces")
    if code == kernels.CONFLICTING:
        raise InputError(f"the constraints conflict{where}: no force satisfies them all (the solve's residual stays "
                         f"above {kernels.CONFLICT:g} of its right side). Redundant constraints must agree: a point on "
                         "a body in 6D contact, or a loop closed twice, at velocities that satisfy them")
    raise_status(code, names, index)


def _settings(mu, accuracy, max_iter):
    """The kernels' settings: ``mu`` None is MU_RELATIVE times the largest diagonal entry of ``G``
    (passed as its negative, :func:`screwdyn.algorithms.kkt.kkt_solve`)."""
    if mu is None and type(accuracy) is float and type(max_iter) is int and accuracy >= 0.0 and max_iter >= 1:
        return -MU_RELATIVE, accuracy, max_iter
    try:
        mu, accuracy = (None if mu is None else float(mu)), float(accuracy)
    except (TypeError, ValueError):
        raise InputError(f"mu and accuracy must be numbers, got {mu!r}, {accuracy!r}") from None
    if mu is not None and not (np.isfinite(mu) and mu >= 0.0):
        raise InputError(f"mu must be None or a finite number >= 0, got {mu}")
    if not (np.isfinite(accuracy) and accuracy >= 0.0):
        raise InputError(f"accuracy must be a finite number >= 0, got {accuracy}")
    if not isinstance(max_iter, (int, np.integer)) or isinstance(max_iter, bool) or max_iter < 1:
        raise InputError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    return (-MU_RELATIVE if mu is None else mu), accuracy, int(max_iter)


def _info(info):
    if info.ndim == 1:
        return ProximalInfo(int(info[0]), float(info[1]))
    return ProximalInfo(info[..., 0].astype(np.int64), info[..., 1].copy())


# ---------------------------------------------------------------------------------- kinematics of constraints
def constraint_jacobian(model, q, constraints=()) -> np.ndarray:
    """The constraint Jacobian ``J(q)`` ``(..., m, nv)``: ``J qd`` is the constrained velocity, each
    constraint's rows in its reference (docs/theory.md (15.2)): a point's velocity relative to its
    partner, a frame's twist ``(omega, v)`` relative to its partner's, ``sum_j k_j qd_j`` of a
    coupling. Pinocchio's ``getConstraintsJacobian`` (with 6-row blocks angular first).
    ``constraints``: added to ``model.constraints`` (module docstring)."""
    cd, m, floats = _constraints(model, constraints, _MOTION)
    q = vector(q, model.nq, "q")
    return _run(_MOTION, model, cd, m, floats, (q, np.zeros(q.shape[:-1] + (model.n,))), ("q", "qd"), (),
                ((m, model.n), (m,), (m,)))[0]


def constraint_drift(model, q, qd, constraints=()) -> np.ndarray:
    """The drift ``gamma(q, qd)`` ``(..., m)`` of the KKT system: the acceleration of each constrained
    quantity at ``qdd = 0`` without gravity (a point's acceleration relative to its partner's; the
    rate of a frame's relative twist), so that ``J qdd + gamma`` is the constrained acceleration
    (docs/theory.md (15.3)). ``gamma = Jdot qd`` wherever the constraints hold at the velocity level
    (``J qd = 0``); elsewhere it is Pinocchio's ``contact_acceleration_drift`` convention, which
    differs from ``d/dt (J qd) - J qdd`` by terms in ``J qd``."""
    cd, m, floats = _constraints(model, constraints, _MOTION)
    return _run(_MOTION, model, cd, m, floats, (q, qd), ("q", "qd"), (), ((m, model.n), (m,), (m,)))[1]


def constraint_error(model, q, constraints=()) -> np.ndarray:
    """The position error ``e(q)`` ``(..., m)`` the Baumgarte corrector ``-Kp e`` acts on (docs/theory.md
    §15.3): a point's offset from its partner (or a contact's anchor) in the reference, ``log`` of
    a frame's pose relative to its target, ``sum_j k_j q_j - offset`` of a coupling. Zero where the
    constraints are assembled."""
    cd, m, floats = _constraints(model, constraints, _MOTION)
    q = vector(q, model.nq, "q")
    return _run(_MOTION, model, cd, m, floats, (q, np.zeros(q.shape[:-1] + (model.n,))), ("q", "qd"), (),
                ((m, model.n), (m,), (m,)))[2]


def delassus(model, q, constraints=()) -> np.ndarray:
    """The Delassus matrix ``G = J M^-1 J^T`` ``(..., m, m)`` (Pinocchio's ``computeDelassusMatrix``
    with ``mu = 0``): the constrained acceleration per unit of constraint force. Computed by the
    sparse factorization ``M = L^T D L`` and ``G = X^T D^-1 X``, ``X = L^-T J^T`` (docs/theory.md
    §15.4), never ``M^-1`` itself. Symmetric, positive semi-definite (singular for redundant
    constraints)."""
    cd, m, floats = _constraints(model, constraints, _DELASSUS)
    return _run(_DELASSUS, model, cd, m, floats, (q,), ("q",), (), ((m, m),))[0]


# ---------------------------------------------------------------------------------- dynamics
def constrained_forward_dynamics(model, q, qd, tau, constraints=(), f_ext=None, *, mu=None, accuracy=1e-12,
                                 max_iter=50, return_info=False):
    """Forward dynamics under constraints: ``(qdd, lam)`` solving (docs/theory.md §15.4)::

        M qdd + h = tau + J^T lam,        J qdd + gamma = -Kd J qd - Kp e

    ``h = C qd + g - sum_i J_i^T F_ext_i`` (``f_ext`` as in :func:`screwdyn.forward_dynamics`),
    ``J``, ``gamma``, ``e`` as :func:`constraint_jacobian`, :func:`constraint_drift`,
    :func:`constraint_error`, ``Kp``, ``Kd`` each constraint's Baumgarte gains.

    Solved as Pinocchio's ``constraintDynamics``: the KKT system factored sparsely (``M = L^T D L``,
    then the Delassus matrix ``G = J M^-1 J^T`` by its Cholesky) and the proximal iterations
    ``(G + mu 1) lam_{k+1} = b + mu lam_k`` from ``lam_0 = 0`` (Pinocchio's ``ProximalSettings(accuracy,
    mu, max_iter)``), which converge to the exact forces for independent constraints and to the
    minimum-norm forces for redundant ones (a foot in 6D contact and a point of it; a loop closed
    twice). ``mu = 0``: one exact solve, an error for redundant constraints. The iterations stop
    when the residual ``||G lam - b||_inf`` or the step ``||lam_{k+1} - lam_k||_inf`` is at most
    ``accuracy``, or after ``max_iter``.

    ``q (..., nq)``, ``qd, tau (..., nv)``; ``constraints``: added to ``model.constraints``.
    Returns ``qdd (..., nv)`` and ``lam (..., m)`` (each constraint's block in its reference, what
    it exerts on its body ``a``; 6-row blocks ``(moment, force)``), and with ``return_info`` a
    :class:`ProximalInfo`. Raises :class:`InputError` when redundant constraints conflict (no force
    satisfies them: the residual stays above 1e-8 of the forces), :class:`ModelError` for a
    singular ``M``.
    """
    cd, m, floats = _constraints(model, constraints, _DYNAMICS)
    mu, accuracy, max_iter = _settings(mu, accuracy, max_iter)
    if (f_ext is None and floats <= STACK_LIMIT and type(q) is _ND and type(qd) is _ND and type(tau) is _ND
            and q.dtype is F64 and qd.dtype is F64 and tau.dtype is F64 and q.ndim == 1 and qd.ndim == 1
            and tau.ndim == 1):   # one state (a controller's call): the kernel without _run's generality
        qdd, lam, info = _empty(model.n), _empty(m), _empty(2)
        code = _DYNAMICS.one(model._kd, q, qd, tau, _NO_FEXT, False, cd, 0.0, _FORWARD, mu, accuracy, max_iter, qdd,
                             lam, info)
        if code == 0:
            return (qdd, lam, _info(info)) if return_info else (qdd, lam)
    qdd, lam, info = _run(_DYNAMICS, model, cd, m, floats, (q, qd, tau), ("q", "qd", "tau"),
                          (0.0, _FORWARD, mu, accuracy, max_iter), ((model.n,), (m,), (2,)), f_ext)
    return (qdd, lam, _info(info)) if return_info else (qdd, lam)


def impulse_dynamics(model, q, qd_minus, constraints=(), restitution=0.0, *, mu=None, accuracy=1e-12, max_iter=50,
                     return_info=False):
    """The velocity after an impact: ``(qd_plus, impulse)`` with (docs/theory.md §15.6; Pinocchio's
    ``impulseDynamics``)::

        M (qd_plus - qd_minus) = J^T impulse,      J qd_plus = -restitution J qd_minus

    ``qd_plus`` is the velocity nearest ``qd_minus`` in the kinetic-energy metric among those
    meeting the constraints' velocity targets (Gauss's principle for impulses): with ``restitution``
    in ``[0, 1]`` the impact never adds kinetic energy (``0``: the constrained velocities stop;
    ``1``: they reverse, elastic). ``impulse (..., m)`` [N s, N m s] in each constraint's reference, on
    its body ``a``. Solved as :func:`constrained_forward_dynamics`, same settings (redundant
    constraints: the minimum-norm impulse). ``q (..., nq)``, ``qd_minus (..., nv)``.
    """
    cd, m, floats = _constraints(model, constraints, _DYNAMICS)
    mu, accuracy, max_iter = _settings(mu, accuracy, max_iter)
    try:
        r = float(restitution)
    except (TypeError, ValueError):
        raise InputError(f"restitution must be a number in [0, 1], got {restitution!r}") from None
    if not 0.0 <= r <= 1.0:
        raise InputError(f"restitution must be in [0, 1], got {r}")
    qd_minus = vector(qd_minus, model.n, "qd_minus")
    qd_plus, lam, info = _run(_DYNAMICS, model, cd, m, floats, (q, qd_minus, np.zeros(qd_minus.shape)),
                              ("q", "qd_minus", "tau"), (r, _IMPULSE, mu, accuracy, max_iter), ((model.n,), (m,), (2,)))
    return (qd_plus, lam, _info(info)) if return_info else (qd_plus, lam)


def constrained_inverse_dynamics(model, q, qd, qdd, constraints=(), f_ext=None, *, weights=None, strict=True,
                                 tolerance=1e-8):
    """The joint torques and constraint forces that produce ``qdd``: ``(tau, lam)`` with
    (docs/theory.md §15.7)::

        tau = M qdd + h - J^T lam,        tau_u = 0 on the unactuated rows (a free-flyer's)

    ``lam`` is the least-norm solution of ``J_u^T lam = (M qdd + h)_u`` (``J_u`` the unactuated
    columns of ``J``), weighted by ``weights (m,)`` (positive: minimizes ``sum_r w_r lam_r^2``) when
    given: the forces a whole-body controller asks of redundant contacts. A model with no free-flyer
    has no unactuated rows, and ``lam = 0``.

    ``qdd`` is taken as given. With ``strict`` (default) an :class:`InputError` is raised when it
    violates the constraints (``J qdd + gamma + Kd J qd + Kp e`` above ``tolerance`` times ``1 + |J
    qdd| + |gamma|``), or when no ``lam`` balances the unactuated rows (too few contacts for the
    motion: ``tau_u`` would be above ``tolerance`` times ``1 + |M qdd + h|``). With ``strict=False``
    the least-squares answer is returned instead: ``lam`` minimizes ``|tau_u|`` (then ``|lam|``),
    ``tau_u`` holds what no force could balance, and ``M qdd + h = tau + J^T lam`` holds exactly.
    ``f_ext`` as in :func:`screwdyn.inverse_dynamics`. Returns ``tau (..., nv)``, ``lam (..., m)``.
    """
    from .dynamics import inverse_dynamics

    cd, m, floats = _constraints(model, constraints, _MOTION)
    n = model.n
    tau0 = inverse_dynamics(model, q, qd, qdd, f_ext=f_ext)
    q, qd, qdd = vector(q, model.nq, "q"), vector(qd, n, "qd"), vector(qdd, n, "qdd")
    J, gamma, err = _run(_MOTION, model, cd, m, floats, (q, qd), ("q", "qd"), (), ((m, n), (m,), (m,)))
    batch = tau0.shape[:-1]
    J = np.broadcast_to(J, batch + (m, n))
    if weights is None:
        scale = np.ones(m)
    else:
        w = vector(weights, m, "weights")
        if w.ndim != 1 or not np.all(np.isfinite(w) & (w > 0)):
            raise InputError(f"weights must be {m} finite positive numbers (one per constraint row)")
        scale = 1.0 / np.sqrt(w)
    if strict and m:
        jqd = np.einsum("...ij,...j->...i", J, np.broadcast_to(qd, batch + (n,)))
        Kp, Kd = _gains(cd, m)
        a = np.einsum("...ij,...j->...i", J, np.broadcast_to(qdd, batch + (n,)))
        violation = np.abs(a + gamma + Kd * jqd + Kp * err).max(axis=-1)
        limit = tolerance * (1.0 + np.abs(a).max(axis=-1) + np.abs(gamma).max(axis=-1))
        if np.any(violation > limit):
            k = np.argwhere(np.atleast_1d(violation > limit))[0]
            where = f" (batch index {tuple(int(i) for i in k)})" if batch else ""
            raise InputError(f"constrained_inverse_dynamics: qdd violates the constraints{where}: J qdd + gamma + "
                             f"Kd J qd + Kp e is {float(np.atleast_1d(violation)[tuple(k)]):.3g} (pass strict=False "
                             "for the torques of this qdd anyway)")
    unact = np.flatnonzero(np.repeat(model.joint_type == 2, model.nvs))
    lam = np.zeros(batch + (m,))
    if unact.size and m:
        A = np.swapaxes(J[..., unact], -1, -2) * scale          # (..., u, m): J_u^T W^-1/2
        lam = scale * np.einsum("...ij,...j->...i", np.linalg.pinv(A, rcond=1e-12), tau0[..., unact])
    tau = tau0 - np.einsum("...ij,...i->...j", J, lam)
    if strict and unact.size:
        left = np.abs(tau[..., unact]).max(axis=-1)
        limit = tolerance * (1.0 + np.abs(tau0).max(axis=-1))
        if np.any(left > limit):
            k = np.argwhere(np.atleast_1d(left > limit))[0]
            where = f" (batch index {tuple(int(i) for i in k)})" if batch else ""
            raise InputError(f"constrained_inverse_dynamics: no constraint force balances the unactuated (free-flyer) "
                             f"rows{where}: {float(np.atleast_1d(left)[tuple(k)]):.3g} left over; the constraints cannot "
                             "produce this motion (pass strict=False for the least-squares forces)")
    if strict:
        tau[..., unact] = 0.0    # (rounding: they balance to within the check above)
    return tau, lam


def _gains(cd, m):
    """``(Kp, Kd)`` per constraint row ``(m,)`` each."""
    from .algorithms.constraint_layout import CKD, CKP, CROW, CSIZE

    Kp, Kd = np.zeros(m), np.zeros(m)
    for c in range(cd.shape[0]):
        r0, size = int(cd[c, CROW]), int(cd[c, CSIZE])
        Kp[r0:r0 + size], Kd[r0:r0 + size] = cd[c, CKP], cd[c, CKD]
    return Kp, Kd
