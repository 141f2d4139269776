"""Joint-space controllers as callables ``tau = controller(t, q, qd)`` for :func:`screwdyn.simulate`;
each takes one state ``(n,)`` or a batch of rollouts' states ``(B, n)``.

With the error ``e = q_d(t) - q`` and its rate ``ed = qd_d(t) - qd`` (Lynch & Park, Modern
Robotics, ch. 11.4):

* :class:`GravityCompensationPD` (MR eq. 11.36, without the integral term)::

      tau = Kp e + Kd ed + g(q)

  converges to a set point ``q_d`` (Lyapunov, MR 11.4.2.2) but lags a moving reference.
* :class:`ComputedTorquePD` (computed torque / inverse dynamics control, MR eq. 11.35 without
  the integral term, as MR's ``ComputedTorque``)::

      tau = M(q) (qdd_d + Kp e + Kd ed) + h(q, qd) = ID(q, qd, qdd_d + Kp e + Kd ed)

  one RNEA call. With an exact model the error obeys ``e'' + Kd e' + Kp e = 0``: it stays zero
  when it starts at zero and decays otherwise.

``Kp`` and ``Kd`` are scalars, ``(n,)`` diagonals or ``(n, n)`` matrices. The reference is a
:class:`~screwdyn.trajectory.JointTrajectory`, any callable ``t -> (q_d, qd_d, qdd_d)``, or a
constant set point ``q_d``. ``friction=True`` adds the model's friction torques
``damping qd + friction sign(qd)`` to the command (exact compensation, as when simulating
with ``friction=True``).
"""
from __future__ import annotations

import numpy as np

from .errors import InputError
from .trajectory import as_reference

__all__ = ["GravityCompensationPD", "ComputedTorquePD", "gravity_compensation_pd", "computed_torque_pd",
           "gravity_compensation"]


def _gain(K, n, name):
    K = np.array(K, dtype=float)
    if K.ndim == 0:
        K = np.full(n, float(K))
    if K.shape not in ((n,), (n, n)) or not np.all(np.isfinite(K)):
        raise InputError(f"{name} must be a scalar, ({n},) or ({n}, {n}) finite gains, got shape {K.shape}")
    return K


def _apply(K, e):
    """``K e`` for a diagonal ``(n,)`` or full ``(n, n)`` gain and an error ``(n,)`` or a batch ``(B, n)``."""
    return K * e if K.ndim == 1 else e @ K.T


class _Controller:
    def __init__(self, model, reference, Kp, Kd, friction):
        import screwdyn
        if not isinstance(model, screwdyn.Model):
            raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")
        self.model = model
        self.reference = as_reference(reference, model.n)
        self.Kp = _gain(Kp, model.n, "Kp")
        self.Kd = _gain(Kd, model.n, "Kd")
        self.friction = bool(friction)
        self._zero = np.zeros(model.n)
        self._id = screwdyn.inverse_dynamics

    def error(self, t, q, qd):
        """``(e, ed)`` = (position error, velocity error) at time ``t``."""
        q_d, qd_d, _ = self.reference(t)
        return q_d - q, qd_d - qd

    def __repr__(self):
        return f"{type(self).__name__}({self.model.name!r}, friction={self.friction})"


class GravityCompensationPD(_Controller):
    """``tau = Kp (q_d - q) + Kd (qd_d - qd) + g(q)`` (MR 11.4.2.2); see the module docstring."""

    def __call__(self, t, q, qd):
        q_d, qd_d, _ = self.reference(t)
        g = self._id(self.model, q, self._zero, self._zero)
        tau = _apply(self.Kp, q_d - q) + _apply(self.Kd, qd_d - qd) + g
        if self.friction:
            tau += self.model.damping * qd + self.model.friction * np.sign(qd)
        return tau


class ComputedTorquePD(_Controller):
    """``tau = M(q) (qdd_d + Kp e + Kd ed) + h(q, qd)`` by one RNEA call (MR eq. 11.35)."""

    def __call__(self, t, q, qd):
        q_d, qd_d, qdd_d = self.reference(t)
        a = qdd_d + _apply(self.Kp, q_d - q) + _apply(self.Kd, qd_d - qd)
        return self._id(self.model, q, qd, a, friction=self.friction)


def gravity_compensation_pd(model, reference, Kp, Kd, friction=False) -> GravityCompensationPD:
    """PD control plus gravity compensation towards ``reference`` (see :class:`GravityCompensationPD`)."""
    return GravityCompensationPD(model, reference, Kp, Kd, friction)


def computed_torque_pd(model, reference, Kp, Kd, friction=True) -> ComputedTorquePD:
    """Computed-torque PD control along ``reference`` (see :class:`ComputedTorquePD`).

    >>> import numpy as np
    >>> from screwdyn import models
    >>> from screwdyn.sim import simulate
    >>> from screwdyn.trajectory import JointTrajectory
    >>> arm = models.load("planar_2r")
    >>> ref = JointTrajectory([0.0, 0.0], [1.0, -0.5], duration=1.0)
    >>> ctrl = computed_torque_pd(arm, ref, Kp=100.0, Kd=20.0)
    >>> traj = simulate(arm, ref(0.0)[0], duration=1.0, dt=1e-3, tau=ctrl)
    >>> bool(np.abs(traj.q - ref(traj.t)[0]).max() < 1e-9)
    True
    """
    return ComputedTorquePD(model, reference, Kp, Kd, friction)


def gravity_compensation(model, friction=False) -> GravityCompensationPD:
    """``tau = g(q)``: holds the robot where it is released (at rest) against gravity."""
    ctrl = GravityCompensationPD(model, np.zeros(model.n), 0.0, 0.0, friction)
    return ctrl
