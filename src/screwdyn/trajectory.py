"""Point-to-point joint trajectories with polynomial time scaling (Lynch & Park, Modern Robotics, ch. 9).

A straight line in joint space ``q(s) = q_start + s (q_end - q_start)`` is timed by a scaling
``s(t)``, ``0 <= t <= T``:

* cubic (MR eq. 9.7): ``s = 3 (t/T)^2 - 2 (t/T)^3`` — zero velocity at both ends;
* quintic (MR eq. 9.11): ``s = 10 (t/T)^3 - 15 (t/T)^4 + 6 (t/T)^5`` — zero velocity and
  acceleration at both ends.

So ``qd = sd (q_end - q_start)`` and ``qdd = sdd (q_end - q_start)``. Before ``t = 0`` and after
``t = T`` the trajectory rests at its ends (the cubic's acceleration jumps there; at ``t = 0`` and
``t = T`` exactly it takes its value inside the interval). Feed a :class:`JointTrajectory` to a controller of
:mod:`screwdyn.control` or to :func:`screwdyn.inverse_dynamics` (see :meth:`JointTrajectory.torques`).
"""
from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["cubic_time_scaling", "quintic_time_scaling", "time_scaling", "JointTrajectory",
           "joint_trajectory", "as_reference"]

_METHODS = {3: "cubic", 5: "quintic", "cubic": "cubic", "quintic": "quintic"}


def _duration(Tf):
    try:
        Tf = float(Tf)
    except (TypeError, ValueError):
        raise InputError(f"the duration Tf must be a number, got {Tf!r}") from None
    if not np.isfinite(Tf) or Tf <= 0:
        raise InputError(f"the duration Tf must be positive and finite, got {Tf!r}")
    return Tf


def cubic_time_scaling(Tf, t):
    """``s(t) = 3 (t/Tf)^2 - 2 (t/Tf)^3`` (Modern Robotics ``CubicTimeScaling``).

    >>> round(cubic_time_scaling(2, 0.6), 6)
    0.216
    """
    return time_scaling(Tf, t, "cubic")[0]


def quintic_time_scaling(Tf, t):
    """``s(t) = 10 (t/Tf)^3 - 15 (t/Tf)^4 + 6 (t/Tf)^5`` (Modern Robotics ``QuinticTimeScaling``).

    >>> round(quintic_time_scaling(2, 0.6), 6)
    0.16308
    """
    return time_scaling(Tf, t, "quintic")[0]


def time_scaling(Tf, t, method="quintic"):
    """``(s, sd, sdd)`` at times ``t`` (scalar or array), held at the ends outside ``[0, Tf]``."""
    Tf = _duration(Tf)
    kind = _method(method)
    if isinstance(t, (float, int)) and not isinstance(t, bool):   # one time (a controller's call): plain floats
        t = float(t)
        s, sd, sdd = _polynomial(min(max(t / Tf, 0.0), 1.0), Tf, kind)
        inside = 0.0 <= t <= Tf   # the cubic's acceleration jumps at the ends: keep the inner value
        return s, (sd if inside else 0.0), (sdd if inside else 0.0)
    t = np.asarray(t, dtype=float)
    s, sd, sdd = _polynomial(np.clip(t / Tf, 0.0, 1.0), Tf, kind)
    inside = (t >= 0) & (t <= Tf)
    sd = np.where(inside, sd, 0.0)
    sdd = np.where(inside, sdd, 0.0)
    if s.ndim == 0:
        return float(s), float(sd), float(sdd)
    return s, sd, sdd


def _polynomial(r, Tf, kind):
    """``(s, sd, sdd)`` at ``r = t / Tf`` in ``[0, 1]`` (a float or an array: the same operations)."""
    r2 = r * r
    r3 = r2 * r
    if kind == "cubic":
        return 3 * r2 - 2 * r3, (6 * r - 6 * r2) / Tf, (6 - 12 * r) / (Tf * Tf)
    r4 = r3 * r
    r5 = r4 * r
    return (10 * r3 - 15 * r4 + 6 * r5, (30 * r2 - 60 * r3 + 30 * r4) / Tf,
            (60 * r - 180 * r2 + 120 * r3) / (Tf * Tf))


def _method(method):
    try:
        return _METHODS[method]
    except (KeyError, TypeError):
        raise InputError(f"method must be 'cubic' (3) or 'quintic' (5), got {method!r}") from None


class JointTrajectory:
    """A straight-line joint motion from ``q_start`` to ``q_end`` in ``duration`` seconds.

    Calling it at time ``t`` (scalar or array ``(N,)``) gives ``(q, qd, qdd)``, each ``(n,)`` or ``(N, n)``.

    >>> traj = JointTrajectory([0, 0], [1, 2], duration=2.0, method="quintic")
    >>> q, qd, qdd = traj(1.0)
    >>> q, qd, qdd
    (array([0.5, 1. ]), array([0.9375, 1.875 ]), array([0., 0.]))
    """

    def __init__(self, q_start, q_end, duration, method="quintic"):
        self.q_start = np.array(q_start, dtype=float).reshape(-1)
        self.q_end = np.array(q_end, dtype=float).reshape(-1)
        if self.q_start.shape != self.q_end.shape:
            raise InputError(f"q_start and q_end must have the same length, got {self.q_start.shape} and {self.q_end.shape}")
        if not (np.all(np.isfinite(self.q_start)) and np.all(np.isfinite(self.q_end))):
            raise InputError("q_start and q_end must be finite")
        self.duration = _duration(duration)
        self.method = _method(method)

    @property
    def n(self) -> int:
        return len(self.q_start)

    def __repr__(self):
        return f"JointTrajectory(n={self.n}, duration={self.duration:g} s, method={self.method!r})"

    def __call__(self, t):
        s, sd, sdd = time_scaling(self.duration, t, self.method)
        d = self.q_end - self.q_start
        if type(s) is not float:
            s, sd, sdd = (np.asarray(x)[..., None] for x in (s, sd, sdd))
        return self.q_start + s * d, sd * d, sdd * d

    def times(self, N) -> np.ndarray:
        """``N >= 2`` equally spaced times from 0 to ``duration`` (both included)."""
        if int(N) != N or N < 2:
            raise InputError(f"N must be an integer >= 2, got {N!r}")
        return np.linspace(0.0, self.duration, int(N))

    def sample(self, N):
        """``(t, q, qd, qdd)`` at ``N`` equally spaced times, both ends included."""
        t = self.times(N)
        return (t,) + self(t)

    def torques(self, model, t, f_ext=None, friction=False) -> np.ndarray:
        """Inverse dynamics along the trajectory: ``tau(t)`` ``(N, n)`` (one RNEA per sample, batched)."""
        import screwdyn
        q, qd, qdd = self(np.asarray(t, dtype=float))
        return screwdyn.inverse_dynamics(model, q, qd, qdd, f_ext, friction=friction)


def joint_trajectory(q_start, q_end, Tf, N, method="quintic") -> np.ndarray:
    """The ``(N, n)`` waypoints of Modern Robotics' ``JointTrajectory(thetastart, thetaend, Tf, N, method)``;
    ``method`` is 3 / ``"cubic"`` or 5 / ``"quintic"``.

    >>> joint_trajectory([1, 0], [1.2, 0.5], Tf=4, N=3, method=3)
    array([[1.  , 0.  ],
           [1.1 , 0.25],
           [1.2 , 0.5 ]])
    """
    return JointTrajectory(q_start, q_end, Tf, method).sample(N)[1]


def as_reference(reference, n):
    """A function ``t -> (q_d, qd_d, qdd_d)`` from a :class:`JointTrajectory`, any callable with
    that signature, or a constant set point ``q_d`` ``(n,)`` (``qd_d = qdd_d = 0``)."""
    if callable(reference):
        if isinstance(reference, JointTrajectory) and reference.n != n:
            raise InputError(f"the reference trajectory has {reference.n} joints, the model {n}")
        return reference
    q_d = np.array(reference, dtype=float)
    if q_d.ndim == 0:
        q_d = np.full(n, float(q_d))
    if q_d.shape != (n,) or not np.all(np.isfinite(q_d)):
        raise InputError(f"the set point must be {n} finite numbers, got shape {q_d.shape}")
    zero = np.zeros(n)
    return lambda t: (q_d, zero, zero)
