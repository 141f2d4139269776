"""Joint limits in simulation (docs/theory.md eq. (13.7)): the soft position limits, the per-joint
table the compiled rollouts read, and their record of the limits exceeded.

The rollout kernel (:mod:`screwdyn.algorithms.rollout`) applies the limits and keeps the record
``W``; the functions here build its table ``lim (n, LIM_WIDTH)`` and do the same in NumPy for the
integrators that call back into Python (``method="crba"``, SciPy's adaptive solvers).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms.rollout import (
    COULOMB, DAMPING, EFFORT, FIRST_Q, FIRST_V, LIM_WIDTH, LOWER, PEAK_Q, PEAK_V, QMAX, QMIN, STIFFNESS, SWEEPS,
    UPPER, VISCOUS, VMAX, WATCH,
)
from ..errors import InputError


@dataclass(frozen=True)
class JointLimits:
    """The joint-limit model of :func:`simulate` (see the module docstring; docs/theory.md (13.7)).

    A joint ``x = q - q_lim`` beyond its limit is given the acceleration ``-k x - c qd``:
    ``timeconst`` [s] and ``dampratio`` set ``k = 1 / (tc dampratio)^2`` [1/s^2] and ``c = 2 / tc``
    [1/s] with ``tc = max(timeconst, 2 dt)`` (MuJoCo's ``solref`` and its clamp). ``stiffness`` and
    ``damping`` (``(n,)`` or scalars, [1/s^2] and [1/s]), when given, are used instead.
    """
    timeconst: float = 0.002
    dampratio: float = 1.0
    stiffness: object = None
    damping: object = None

    def constants(self, model, dt):
        """``(k, c)``, each ``(n,)``, for ``model`` at step ``dt``."""
        n = model.n
        for name in ("timeconst", "dampratio"):
            v = getattr(self, name)
            if not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"JointLimits.{name} must be a positive number, got {v!r}")
        tc = max(float(self.timeconst), 2.0 * float(dt))
        k = 1.0 / (tc * self.dampratio) ** 2 if self.stiffness is None else self.stiffness
        c = 2.0 / tc if self.damping is None else self.damping
        out = []
        for name, x in (("stiffness", k), ("damping", c)):
            x = np.array(np.broadcast_to(np.asarray(x, dtype=float), (n,)) if np.ndim(x) == 0 else x, dtype=float)
            if x.shape != (n,) or not np.all(np.isfinite(x)) or np.any(x < 0):
                raise InputError(f"JointLimits.{name} must be {n} finite numbers >= 0, got {x!r}")
            out.append(x)
        return out[0], out[1]


def _limit_table(model, joint_limits, friction, saturate, dt):
    """The per-joint table ``lim (n, LIM_WIDTH)`` the rollouts read (:mod:`screwdyn.algorithms.rollout`)."""
    n = model.n
    lim = np.zeros((n, LIM_WIDTH))
    lim[:, LOWER], lim[:, UPPER] = -np.inf, np.inf
    if isinstance(joint_limits, str):
        if joint_limits != "hard":
            raise InputError(f"joint_limits must be True, False, 'hard' or a JointLimits, got {joint_limits!r}")
        lim[:, LOWER], lim[:, UPPER] = _dof_limits(model)      # rigid rows of the contact step: k = c = 0
    elif joint_limits is True:
        joint_limits = JointLimits()
    if joint_limits is not False and joint_limits is not None and not isinstance(joint_limits, str):
        if not isinstance(joint_limits, JointLimits):
            raise InputError(f"joint_limits must be True, False, 'hard' or a JointLimits, got {joint_limits!r}")
        lim[:, STIFFNESS], lim[:, DAMPING] = joint_limits.constants(model, dt)
        lim[:, LOWER], lim[:, UPPER] = _dof_limits(model)
    if friction:
        lim[:, VISCOUS], lim[:, COULOMB] = model.damping, model.friction
    lim[:, EFFORT] = model.effort_limit if saturate else np.inf
    (lim[:, QMIN], lim[:, QMAX]), lim[:, VMAX] = _dof_limits(model), model.velocity_limit
    return lim


def _dof_limits(model):
    """Position limits per degree of freedom (none on a free-flyer's or spherical joint's)."""
    if model.nq == model.nv:
        return model.q_lower, model.q_upper
    lo, hi = np.full(model.nv, -np.inf), np.full(model.nv, np.inf)
    one = model.nvs == 1
    lo[model.idx_vs[one]], hi[model.idx_vs[one]] = model.q_lower[model.idx_qs[one]], model.q_upper[model.idx_qs[one]]
    return lo, hi


def _dof_positions(model, q):
    """``q (..., nq)`` as one position per degree of freedom ``(..., nv)``: a one-DoF joint's
    coordinate (the joint limits are theirs); a free-flyer's or spherical joint's degrees of freedom
    get 0, where no limit is."""
    if model.nq == model.nv:
        return q
    qmap = model._derived.get("dof_positions")
    if qmap is None:
        one = model.nvs == 1
        qmap = model._derived["dof_positions"] = (model.idx_vs[one], model.idx_qs[one])
    out = np.zeros(q.shape[:-1] + (model.nv,))
    out[..., qmap[0]] = q[..., qmap[1]]
    return out


def _limit_arrays(model):
    """A trajectory's ``limits``: the model's position, velocity and effort limits."""
    return {"q_lower": model.q_lower, "q_upper": model.q_upper, "velocity": model.velocity_limit,
            "effort": model.effort_limit}


def _watch_start(B, n):
    """The rollouts' record against the limits before the first sample (see the rollout kernel's ``W``)."""
    W = np.empty((B, WATCH, n))
    W[:, (FIRST_Q, FIRST_V)], W[:, (PEAK_Q, PEAK_V)] = -1.0, -np.inf
    return W


def _watch(lim, Q, V):
    """The rollout kernel's ``W`` of recorded samples ``Q, V (B, N, n)``, for the integrators that
    call back into Python (NaN samples of diverged rollouts left out)."""
    with np.errstate(invalid="ignore"):
        x = np.maximum(Q - lim[:, QMAX], lim[:, QMIN] - Q)
        v = np.abs(V)
        W = _watch_start(len(Q), Q.shape[2])
        for first, peak, value, over in ((FIRST_Q, PEAK_Q, x, x > 0.0), (FIRST_V, PEAK_V, v, v > lim[:, VMAX])):
            W[:, peak] = np.fmax(W[:, peak], np.fmax.reduce(value, axis=1))
            W[:, first] = np.where(over.any(axis=1), over.argmax(axis=1), -1.0)
    return W


def _drive(lim, tau, qd):
    """``sat(tau) - (b qd + f_c sgn qd)`` of rows ``(B, n)`` (``tau`` already saturated): the rollout
    kernel's ``drive`` (:mod:`screwdyn.algorithms.rollout`) in NumPy, for ``method="crba"``."""
    return tau - (lim[:, VISCOUS] * qd + lim[:, COULOMB] * np.sign(qd))


def _limits(fd, lim, q, qd, a, qv=None):
    """The joint limits added to the accelerations ``a`` at rows ``q, qd (B, n)``: the rollout kernel's
    ``limits`` in NumPy, for ``method="crba"`` (``fd(e)``: the accelerations with the drive torques
    plus ``e``, so that ``M^-1 e_i = fd(e_i) - a``; ``qv`` the positions per degree of freedom,
    :func:`_dof_positions`, ``q`` itself when None)."""
    qv = q if qv is None else qv
    with np.errstate(invalid="ignore"):
        side = np.where(qv > lim[:, UPPER], 1.0, np.where(qv < lim[:, LOWER], -1.0, 0.0))
    joints = np.flatnonzero(side.any(axis=0))
    if not len(joints):
        return a
    columns = {}
    for i in joints:
        e = np.zeros_like(qd)
        e[:, i] = 1.0
        columns[i] = fd(e) - a
    F = np.zeros_like(qd)
    for _ in range(SWEEPS):
        for i in joints:
            on = side[:, i] != 0.0
            x = qv[:, i] - np.where(side[:, i] > 0.0, lim[i, UPPER], lim[i, LOWER])
            reference = -lim[i, STIFFNESS] * x - lim[i, DAMPING] * qd[:, i]
            f = F[:, i] + (reference - a[:, i]) / columns[i][:, i]
            f = np.where(side[:, i] > 0.0, np.minimum(f, 0.0), np.maximum(f, 0.0))
            df = np.where(on, f - F[:, i], 0.0)
            F[:, i] += df
            a = a + columns[i] * df[:, None]
    return a


def _saturate(lim, tau):
    e = lim[:, EFFORT]
    return np.minimum(np.maximum(tau, -e), e)
