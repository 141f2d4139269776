"""Derivatives of constrained dynamics and of impulses (docs/theory.md §17): those of
:func:`screwdyn.constrained_forward_dynamics` and :func:`screwdyn.impulse_dynamics`, as Pinocchio's
``computeConstraintDynamicsDerivatives`` and ``computeImpulseDynamicsDerivatives``.

Conventions as :func:`screwdyn.forward_dynamics_derivatives`: ``[..., i, j] = d y_i / d x_j``; ``d/dq``
along each joint's screw axis, which for a free-flyer or spherical joint is the tangent space of
:func:`screwdyn.integrate` (``q exp(dq)``, the body-frame twist); ``lam`` in each constraint's
reference (its derivative too: a ``"world"`` block's is that of the world-aligned force). Every
function takes one state ``(n,)`` or a batch ``(..., n)`` and runs the compiled kernels of
:mod:`screwdyn.algorithms.constrained_derivatives`.
"""
from __future__ import annotations

import numpy as np

from .algorithms.work import STACK_LIMIT
from .constrained import _NO_FEXT, _run, _settings
from .constraints import Constraint, pack
from .dispatch import Kernel, check_model, vector
from .errors import InputError

__all__ = ["constrained_forward_dynamics_derivatives", "impulse_dynamics_derivatives"]

_DERIVATIVES = Kernel("constrained_derivatives", "constrained_derivatives")
_ND, F64, _empty = np.ndarray, np.dtype(np.float64), np.empty


def _prepared(model, constraints):
    """``(cd, m, floats)`` of :func:`screwdyn.constrained._constraints` for the derivatives' kernel."""
    check_model(model)
    if type(constraints) is not tuple:
        constraints = (constraints,) if isinstance(constraints, Constraint) else tuple(
            constraints if constraints is not None else ())
    cd, m, _ = pack(model, constraints)
    key = ("constrained derivatives work", m)
    floats = model._derived.get(key)
    if floats is None:
        import importlib
        kernels = importlib.import_module("screwdyn.algorithms.constrained_derivatives")
        floats = model._derived[key] = (_DERIVATIVES.entry.work_floats(model.n)
                                        + kernels.constraint_floats.py_func(model.n, m))
    return cd, m, floats


def constrained_forward_dynamics_derivatives(model, q, qd, tau, constraints=(), f_ext=None, *, mu=None, accuracy=1e-12,
                                             max_iter=50):
    """The partial derivatives of :func:`screwdyn.constrained_forward_dynamics` ``(qdd, lam)`` (docs/theory.md
    §17.1-§17.6; Pinocchio's ``computeConstraintDynamicsDerivatives``): ``(dqdd_dq, dqdd_dqd, dqdd_dtau,
    dlam_dq, dlam_dqd, dlam_dtau)``, the first three ``(..., nv, nv)``, the others ``(..., m, nv)``
    (``[..., i, j] = d y_i / d x_j``).

    Differentiating ``M qdd + h = tau + J^T lam`` and ``J qdd + gamma + Kd J qd + Kp e = 0`` (every
    constraint kind, reference and Baumgarte gain) gives the KKT system (17.1) of the derivatives,
    solved with the factors of the forward solve: with ``G = J M^{-1} J^T``,
    ``dqdd_dtau = M^{-1} - M^{-1} J^T G^{-1} J M^{-1}``, ``dlam_dtau = -G^{-1} J M^{-1}``. ``d/dq`` is taken
    along ``integrate`` (a free-flyer's body twist), ``f_ext`` held in each body's frame; each ``lam``
    block's derivative is in its reference (a ``"world"`` block: the world-aligned force's).

    Redundant constraints (``G`` singular): ``qdd`` and its derivatives are unique; ``lam`` is the
    minimum-norm force and ``dlam_*`` its derivatives (§17.6, (17.10)): the minimum-norm solution of the
    derivatives' system, by the same proximal iterations, plus for ``dlam_dq`` the turn with ``q`` of the
    null space of ``J^T`` (zero where the redundant rows are in one frame's axes). Redundant rows are
    consistent only where ``J qd`` meets them: along a change that breaks it the derivative is that of
    the least-squares continuation.

    Parameters and settings as :func:`screwdyn.constrained_forward_dynamics`. Raises as it does
    (conflicting or, with ``mu = 0``, redundant constraints; a singular ``M``).
    """
    cd, m, floats = _prepared(model, constraints)
    mu, accuracy, max_iter = _settings(mu, accuracy, max_iter)
    n = model.n
    if (f_ext is None and floats <= STACK_LIMIT and type(q) is _ND and type(qd) is _ND and type(tau) is _ND
            and q.dtype is F64 and qd.dtype is F64 and tau.dtype is F64 and q.ndim == 1 and qd.ndim == 1
            and tau.ndim == 1):   # one state (a controller's call): the kernel without _run's generality
        D, Dl = _empty((3, n, n)), _empty((3, m, n))
        code = _DERIVATIVES.one(model._kd, q, qd, tau, _NO_FEXT, False, cd, 0.0, False, mu, accuracy, max_iter, D, Dl)
        if code == 0:
            return D[0], D[1], D[2], Dl[0], Dl[1], Dl[2]
    D, Dl = _run(_DERIVATIVES, model, cd, m, floats, (q, qd, tau), ("q", "qd", "tau"),
                 (0.0, False, mu, accuracy, max_iter), ((3, n, n), (3, m, n)), f_ext)
    return (D[..., 0, :, :], D[..., 1, :, :], D[..., 2, :, :], Dl[..., 0, :, :], Dl[..., 1, :, :],
            Dl[..., 2, :, :])


def _without_gravity(model):
    """``model`` with zero gravity (made once per model): the impulse's kernels read ``M w`` from RNEA."""
    found = model._derived.get("without gravity")
    if found is None:
        found = model._derived["without gravity"] = model.with_gravity(np.zeros(3))
    return found


def impulse_dynamics_derivatives(model, q, qd_minus, constraints=(), restitution=0.0, *, mu=None, accuracy=1e-12,
                                 max_iter=50):
    """The partial derivatives of :func:`screwdyn.impulse_dynamics` ``(qd_plus, impulse)`` (docs/theory.md
    §17.7): ``(dqd_plus_dq, dqd_plus_dqd_minus, dimpulse_dq, dimpulse_dqd_minus)``, ``(..., nv, nv)``
    twice then ``(..., m, nv)`` twice, as :func:`constrained_forward_dynamics_derivatives`.

    ``dqd_plus_dqd_minus = 1 - (1 + r) M^{-1} J^T G^{-1} J`` is the derivative of the velocity after the
    impact; Pinocchio's ``computeImpulseDynamicsDerivatives`` gives that of the change ``qd_plus -
    qd_minus`` (``data.ddq_dv``, without the identity). Parameters and settings as
    :func:`screwdyn.impulse_dynamics`.
    """
    check_model(model)
    try:
        r = float(restitution)
    except (TypeError, ValueError):
        raise InputError(f"restitution must be a number in [0, 1], got {restitution!r}") from None
    if not 0.0 <= r <= 1.0:
        raise InputError(f"restitution must be in [0, 1], got {r}")
    free = _without_gravity(model)
    cd, m, floats = _prepared(free, constraints)
    mu, accuracy, max_iter = _settings(mu, accuracy, max_iter)
    n = model.n
    qd_minus = vector(qd_minus, n, "qd_minus")
    D, Dl = _run(_DERIVATIVES, free, cd, m, floats, (q, qd_minus, np.zeros(qd_minus.shape)),
                 ("q", "qd_minus", "tau"), (r, True, mu, accuracy, max_iter), ((3, n, n), (3, m, n)))
    return D[..., 0, :, :], D[..., 1, :, :], Dl[..., 0, :, :], Dl[..., 1, :, :]
