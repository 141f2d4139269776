"""What :mod:`screwdyn.torch` and :mod:`screwdyn.jax` share: the step of the rollout and the
Jacobians their backward passes apply, on arrays the batched functions take (NumPy, or a library's
arrays: :mod:`screwdyn._gpu`).

The gradients are the analytic derivatives (docs/theory.md §14): a backward pass of inverse
dynamics applies ``(dtau_dq, dtau_dqd, dtau_dqdd)`` of :func:`screwdyn.inverse_dynamics_derivatives`,
one of forward dynamics ``(dqdd_dq, dqdd_dqd, M^-1)`` of
:func:`screwdyn.forward_dynamics_derivatives`, one of a step the discrete pair ``(A, B)`` of
:func:`screwdyn.linearize` ``(dt=, scheme=)``, as vector-Jacobian products ``g^T J``: the recursion
is never traced. Gradients with respect to ``q`` are for models whose joints have one degree of
freedom each (``nq == nv``: ``q`` is then its own tangent coordinate).
"""
from __future__ import annotations

import warnings

import numpy as np

from .errors import InputError

SCHEMES = ("rk4", "semi_implicit_euler")


def check_one_dof(model, what):
    if not model._one_dof:
        raise InputError(f"{what}: gradients with respect to q need a model whose joints have one degree of freedom "
                         "each (nq == nv); this one has free-flyer or spherical joints")


def check_step(dt, scheme):
    if scheme not in SCHEMES:
        raise InputError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if not (isinstance(dt, (int, float, np.floating)) and np.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be a positive number of seconds, got {dt!r}")


def step_numpy(model, q, qd, tau, dt, scheme):
    """One step of ``dt`` of ``xdot = (qd, FD(q, qd, tau))`` by ``scheme``, ``tau`` held: the step of
    :func:`screwdyn.simulate` (``friction=False, joint_limits=False``), for NumPy states ``(..., n)``."""
    from .sim import simulate
    q, qd, tau = np.broadcast_arrays(np.asarray(q, float), np.asarray(qd, float), np.asarray(tau, float))
    batch = q.shape[:-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # (simulate reports velocities beyond the model's limits)
        traj = simulate(model, q, qd, duration=dt, dt=dt, tau=tau[..., None, :] if batch else tau,
                        integrator=scheme, friction=False, joint_limits=False)
    return np.ascontiguousarray(traj.q[..., -1, :]), np.ascontiguousarray(traj.qd[..., -1, :])


def step_jacobians(model, q, qd, tau, dt, scheme):
    """``(A, B)`` of the step (:func:`screwdyn.linearize`), NumPy arrays ``(..., 2n, 2n)``, ``(..., 2n, n)``."""
    from .dynamics import linearize
    from ._gpu import to_numpy
    return linearize(model, to_numpy(q), to_numpy(qd), to_numpy(tau), dt=dt, scheme=scheme)
