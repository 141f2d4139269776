"""Forward simulation: integrate ``M(q) qdd + h(q, qd) = tau + J^T F_ext - tau_friction + tau_limit``
in time, one rollout or a batch of them.

The state is ``x = (q, qd)`` and the vector field is (docs/theory.md §13, eq. (13.1))::

    xdot = (qd, FD(q, qd, sat(tau(t, q, qd)) - tau_f(qd) + tau_lim, F_ext(t, q, qd)))

with ``FD`` :func:`screwdyn.forward_dynamics`. Integrators:

``"euler"``
    Explicit Euler, exactly Modern Robotics' ``EulerStep`` (eq. (13.2): ``x_{k+1} = x_k + dt f(x_k)``)::

        q_{k+1}  = q_k  + dt qd_k
        qd_{k+1} = qd_k + dt qdd_k

    First order; energy grows (it is not symplectic).
``"semi_implicit_euler"``
    Symplectic (semi-implicit) Euler: ``qd_{k+1} = qd_k + dt qdd_k``, then ``q_{k+1} = q_k + dt qd_{k+1}``.
    First order, but energy stays bounded (it oscillates) over long runs.
``"rk4"``
    The classical fourth-order Runge-Kutta method on ``x``. The default.
``"RK45"``, ``"DOP853"``, ``"Radau"``
    SciPy's adaptive :func:`scipy.integrate.solve_ivp` (Dormand-Prince 5(4), 8(5,3), and the
    implicit Radau IIA of order 5 for stiff problems such as large Coulomb friction), with
    tolerances ``rtol``, ``atol``; the output is sampled every ``dt``.

**Batches.** ``q0 (..., nq)`` and ``qd0 (..., nv)`` with leading axes run one rollout per
state, all together: the fixed-step integrators step every rollout through the compiled rollout
kernel (:mod:`screwdyn.algorithms.rollout`: ``L`` rollouts side by side through the ABA kernel,
over numba's threads), whose loop over the steps is compiled too. A batch gives the same numbers
as its rollouts run one at a time, bit for bit. The adaptive integrators run a batch one rollout
after another (a loop over SciPy's solver). A rollout that diverges is reported by its index
(:class:`SimulationWarning`) and its samples from then on are NaN; the others run to the end.
With ``q0`` (or ``qd0``, or ``tau`` per rollout) a Dask array chunked along the batch, each chunk
of rollouts is one ``simulate`` call where Dask's scheduler runs it (a cluster's workers), and the
trajectory holds Dask arrays, lazily (``info["diverged"]``: a boolean Dask array of the batch)::

    traj = simulate(panda, da.from_array(Q0, chunks=10_000), None, 2.0)   # on a dask.distributed Client
    q_end = traj.q[:, -1].compute()

Torques and external wrenches may be given as

* ``None``: zero (a passive robot);
* a constant: ``tau`` ``(n,)`` or a scalar; ``f_ext`` ``(nb, 6)`` (wrenches ``(n, f)`` on each of the
  ``nb = model.nbodies`` bodies in its own frame, as :func:`screwdyn.inverse_dynamics` takes them;
  ``nb == n`` without free-flyer or spherical joints) or a dict ``{link_or_frame: wrench (6,) in that
  frame}``;
* an array per step: ``tau`` ``(steps, n)`` (or ``(steps + 1, n)``), ``f_ext`` ``(steps, nb, 6)`` or a
  dict of ``(steps, 6)`` arrays, held constant over each step (zero-order hold), the same for every
  rollout of a batch;
* per rollout: ``tau`` ``(..., steps, n)`` (or ``(..., 1, n)``: constant), the leading axes those of
  the batch; ``f_ext`` ``(..., steps, nb, 6)`` likewise;
* a callable ``tau(t, q, qd) -> (n,)`` (a controller: see :mod:`screwdyn.control`), or
  ``f_ext(t, q, qd) -> (nb, 6) or dict``. It is evaluated at every stage of the integrator, with the
  whole batch at once (``q (B, nq)``, ``qd (B, nv)``, flattened; it may answer ``(B, n)`` or
  ``(n,)``); with ``hold=True``, once per step at its start and held over the step (a digital
  controller at ``1 / dt``, as MuJoCo applies its controls), which keeps the fixed-step loop compiled.

Joint friction (``friction=True``, the default) is the model's ``damping qd + friction sign(qd)``
(:func:`screwdyn.friction_torques`). The Coulomb term jumps at ``qd = 0``: a robot at rest
chatters at the integrator's precision instead of sticking; "Radau" handles the stiffness best.

**Joint limits** (``joint_limits=True``, the default; docs/theory.md eq. (13.7)): a joint beyond its
range ``[q_lower, q_upper]`` by ``x = q - q_lim`` is given the acceleration of a critically damped
spring, as MuJoCo's soft constraints (``solref = (timeconst, dampratio)``, impedance 1)::

    qdd_i = -k x - c qd_i,    k = 1 / (tc zeta)^2,  c = 2 / tc,  tc = max(timeconst, 2 dt)

by a limit torque that pushes it back and never pulls it in (the torques of several joints beyond
their limits solved together by projected Gauss-Seidel on their block of ``M^-1``, whose columns
are ABA calls at the state: FD is affine in the torque). The depth then obeys
``x'' + (2 / tc) x' + x / tc^2 = 0`` whatever the robot's inertia: a joint that meets its limit at
speed ``v`` goes at most ``v tc / e`` beyond it (0.007 rad at 10 rad/s) and returns to it.
Defaults (:class:`JointLimits`): ``timeconst = 0.002 s`` (the stiffest the clamp allows at
``dt = 1 ms``; MuJoCo's default is 0.02 s), ``dampratio = 1``; ``JointLimits(stiffness=k,
damping=c)`` sets ``k`` [1/s^2] and ``c`` [1/s] directly; ``joint_limits=False`` switches the limits
off. A joint beyond a limit costs one more ABA call per evaluation. Velocity and effort limits are
not enforced: a rollout that exceeds them is reported (:class:`LimitWarning`, naming joints, times
and rollouts; ``Trajectory.info["limits"]``); ``saturate=True`` clips the applied torque to the
effort limit, ``|tau_i| <= model.effort_limit[i]``.
"""
from __future__ import annotations

import itertools
import math
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .algorithms.rollout import (
    COULOMB, DAMPING, EFFORT, EULER, FIRST_Q, FIRST_V, LIM_WIDTH, LOWER, PEAK_Q, PEAK_V, QMAX, QMIN, RK4,
    SEMI_IMPLICIT_EULER, STIFFNESS, SWEEPS, UPPER, VISCOUS, VMAX, WATCH,
)
from .algorithms.status import Status
from ._dask import any_dask
from .dispatch import Kernel, check_room, statuses, wrench_rows
from .errors import InputError, ModelError, ScrewdynError, ScrewdynWarning

__all__ = ["simulate", "Trajectory", "JointLimits", "SimulationError", "SimulationWarning", "LimitWarning",
           "INTEGRATORS", "ProgressBar"]

#: Fixed-step integrators (compiled rollouts) and adaptive ones (SciPy's solve_ivp).
FIXED_STEP = ("euler", "semi_implicit_euler", "rk4")
IMPLICIT = ("Radau",)   # given the analytic Jacobian of the vector field (docs/theory.md §14.6)
ADAPTIVE = ("RK45", "DOP853", "Radau")
INTEGRATORS = FIXED_STEP + ADAPTIVE
_ALIASES = {"explicit_euler": "euler", "symplectic_euler": "semi_implicit_euler",
            "semi-implicit-euler": "semi_implicit_euler", "semi_implicit": "semi_implicit_euler",
            "rk45": "RK45", "dop853": "DOP853", "radau": "Radau"}
_METHOD = {"euler": EULER, "semi_implicit_euler": SEMI_IMPLICIT_EULER, "rk4": RK4}
_ROLLOUT = Kernel("rollout", "rollout")
_FD_CRB = Kernel("ltdl", "fd_crb")
# Below this many rollouts, the integrators that call back into Python (a kernel call per stage or
# step) run on one thread: a parallel call wakes numba's other threads each time, 10-50 us on an idle
# machine and milliseconds on a busy one, more than the work of a few hundred states.
SERIAL_BELOW = 512
_FD_METHODS = ("aba", "crba")
_NO_FEXT = np.zeros((1, 1, 1, 6))


class SimulationError(ScrewdynError):
    """The integration failed: the state diverged (NaN or inf) or the adaptive solver gave up."""


class SimulationWarning(ScrewdynWarning):
    """Some rollouts of a batch diverged (their indices are named); the others ran to the end."""


class LimitWarning(SimulationWarning):
    """A rollout exceeded a velocity or effort limit (or a position limit, with ``joint_limits=False``)."""


def _sd():
    import screwdyn  # the package namespace: forward_dynamics and the energies live there
    return screwdyn


def _integrate(model, q, v, dt):
    """``q (+) v dt``: the configuration reached from ``q`` moving with velocity ``v`` for ``dt``
    (every position update of the Python stage loop; :func:`screwdyn.integrate`, the compiled
    :func:`screwdyn.algorithms.joints.joint_integrate` of the rollouts). Revolute and prismatic
    joints: ``q + dt v``; free-flyers and spherical joints on their manifolds, quaternions kept unit."""
    if model.nq != model.nv:
        return _sd().integrate(model, q, v, dt)
    return q + dt * v


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


# ---------------------------------------------------------------------------- joint limits
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
    if joint_limits is True:
        joint_limits = JointLimits()
    if joint_limits is not False and joint_limits is not None:
        if not isinstance(joint_limits, JointLimits):
            raise InputError(f"joint_limits must be True, False or a JointLimits, got {joint_limits!r}")
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


class _Field:
    """The accelerations ``a = FD(q, qd, drive(q, qd, sat(tau)), F)`` of rows ``(B, n)`` for the
    integrators that call back into Python, with ``sat(tau)`` and each row's status: the rollout
    kernel evaluating one sample (``method="aba"``: the same compiled arithmetic as the rollouts), or
    :func:`_drive` and the CRBA forward dynamics (``method="crba"``)."""

    def __init__(self, model, lim, B, method):
        self.model, self.lim, self.B, self.method = model, lim, B, method
        n = model.n
        self.t = np.zeros(1)
        self.Q, self.V, self.A, self.TAU = (np.empty((B, 1, size)) for size in (model.nq, n, n, n))
        self.W = _watch_start(B, n)   # (not read: _stages and _adaptive watch what they record)
        self._rows = {}

    def _row(self, k):
        """Rollout ``k``'s rows of the work arrays, for the one-state entry point (made once)."""
        row = self._rows.get(k)
        if row is None:
            row = self._rows[k] = (self.Q[k], self.V[k], self.A[k], self.TAU[k], self.W[k])
        return row

    def __call__(self, q, qd, tau, F):
        """``(a, sat(tau), status)`` at ``q (B, nq)``, ``qd (B, n)`` with ``tau (B or 1, n)``, ``F (B or 1, n, 6)``
        (on the kernels' rows) or None."""
        model, lim, B = self.model, self.lim, self.B
        use = F is not None
        if self.method == "aba":
            self.Q[:, 0], self.V[:, 0] = q, qd
            tau3 = np.ascontiguousarray(tau[:, None])
            f4 = np.ascontiguousarray(F[:, None]) if use else _NO_FEXT
            pick = lambda x, k: x[k:k + 1] if len(x) > 1 else x
            args = (lim, self.t, tau3, f4, use, RK4, 0, 0)
            st = statuses(_ROLLOUT, model, B, args + (self.Q, self.V, self.A, self.TAU, self.W),
                          lambda k: (lim, self.t, pick(tau3, k), pick(f4, k), use, RK4, 0, 0, *self._row(k)))
            return self.A[:, 0].copy(), self.TAU[:, 0].copy(), st
        n = model.n
        tp = np.broadcast_to(_saturate(lim, tau), (B, n))
        F = np.ascontiguousarray(np.broadcast_to(F, (B, n, 6))) if use else _NO_FEXT[0]

        def fd(q, qd, d):
            a = np.empty((B, n))
            st = statuses(_FD_CRB, model, B, (q, qd, d, F, use, a),
                          lambda j: (q[j], qd[j], d[j], F[j] if use else F[0], use, a[j]))
            return a, st

        d = _drive(lim, tp, qd)
        a, st = fd(q, qd, d)
        a = _limits(lambda e: fd(q, qd, d + e)[0], lim, q, qd, a, _dof_positions(model, q))
        return a, tp, st


# ---------------------------------------------------------------------------- the trajectory
class Trajectory:
    """A simulated (or sampled) motion: arrays over ``N`` samples of ``n`` joints, with the batch
    axes of the initial states in front for a batch of rollouts.

    Attributes::

        t                 (N,)          time [s]
        q                 (..., N, nq)  joint positions
        qd, qdd           (..., N, nv)  joint velocities, accelerations
        tau               (..., N, nv)  applied joint torques/forces (after saturation; friction and
                                        joint-limit torques not included)
        kinetic_energy    (..., N)      1/2 qd^T M(q) qd [J] (rotor inertia included)
        potential_energy  (..., N)      gravitational potential energy [J] (zero at the base origin)
        total_energy      (..., N)      their sum
        limits            dict of (n,) q_lower, q_upper, velocity, effort (or None)
        info              nfev, wall_time, the limits report ("limits"), diverged rollouts ...

    The energies are computed when first read (from the model that made the trajectory), NaN for
    the samples of a diverged rollout. ``traj[i]`` is rollout ``i`` of a batch.
    """

    def __init__(self, t, q, qd, qdd, tau, kinetic_energy=None, potential_energy=None, joint_names=(),
                 model_name="", integrator="", dt=float("nan"), info=None, limits=None, model=None):
        self.t, self.q, self.qd, self.qdd, self.tau = t, q, qd, qdd, tau
        self._kinetic, self._potential = kinetic_energy, potential_energy
        self.joint_names, self.model_name, self.integrator, self.dt = tuple(joint_names), model_name, integrator, dt
        self.info = {} if info is None else info
        self.limits = limits
        self.model = model

    # ------------------------------------------------------------------ shape
    @property
    def batch_shape(self) -> tuple:
        """The leading axes of a batch (``()`` for one rollout)."""
        return self.q.shape[:-2]

    @property
    def n(self) -> int:
        return self.qd.shape[-1]

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        batch = f"{self.batch_shape} rollouts x " if self.batch_shape else ""
        return (f"Trajectory({self.model_name!r}, {batch}{len(self)} samples, t = {self.t[0]:g}..{self.t[-1]:g} s, "
                f"integrator={self.integrator!r})")

    def __getitem__(self, index) -> Trajectory:
        """Rollout ``index`` of a batch (an integer, or a tuple for several batch axes) as a trajectory."""
        if not self.batch_shape:
            raise InputError("this trajectory is one rollout: there is no member to select")
        index = index if isinstance(index, tuple) else (index,)
        try:
            pick = lambda x: None if x is None else x[index]
            q = self.q[index]
        except (IndexError, TypeError) as e:
            raise InputError(f"rollout index {index} for a batch of shape {self.batch_shape}: {e}") from None
        return Trajectory(self.t, q, pick(self.qd), pick(self.qdd), pick(self.tau), pick(self._kinetic),
                          pick(self._potential), self.joint_names, self.model_name, self.integrator, self.dt,
                          dict(self.info, member=index), self.limits, self.model)

    # ------------------------------------------------------------------ energies
    def _energies(self):
        if self._kinetic is None or self._potential is None:
            if self.model is None:
                raise InputError("this trajectory has no energies and no model to compute them from")
            if any_dask(self.q, self.qd):   # lazily, chunk by chunk
                from functools import partial

                from ._dask import map_batches
                self._kinetic, self._potential = map_batches(partial(_energy_samples, self.model), [self.q, self.qd],
                                                             [1, 1], ((), ()), name="screwdyn-energies")
            else:
                self._kinetic, self._potential = _energy_samples(self.model, self.q, self.qd)
        return self._kinetic, self._potential

    @property
    def kinetic_energy(self) -> np.ndarray:
        return self._energies()[0]

    @property
    def potential_energy(self) -> np.ndarray:
        return self._energies()[1]

    @property
    def total_energy(self) -> np.ndarray:
        K, U = self._energies()
        return K + U

    def energy_drift(self, relative=True):
        """``max_t |E(t) - E(0)|``; with ``relative``, divided by the largest kinetic energy
        reached (the energy that actually moved), so that the zero of the potential does not matter.
        A float for one rollout, an array of the batch shape for a batch."""
        E = self.total_energy
        drift = np.max(np.abs(E - E[..., :1]), axis=-1)
        if relative:
            scale = np.max(self.kinetic_energy, axis=-1)
            drift = np.where(scale > 0, drift / np.where(scale > 0, scale, 1.0), drift)
        return float(drift) if drift.ndim == 0 else drift

    # ------------------------------------------------------------------ limits
    def limit_report(self) -> list:
        """The limits exceeded, one line each (``info["limits"]``; empty when none was)."""
        return _report_lines(self.info.get("limits", {}), self.batch_shape)

    def view(self, model=None, **options):
        """Show the motion in a web browser with a time slider and play button (:func:`screwdyn.view`;
        ``options`` as there). ``model``: by default the one :func:`simulate` was given. Returns the
        running :class:`~screwdyn.viz.Viewer`."""
        model = self.model if model is None else model
        if model is None:
            raise InputError("Trajectory.view: this trajectory does not know its model (it was not made by "
                             "simulate); pass it: traj.view(model)")
        from .viz.viewer import view

        return view(model, self, **options)

    # ------------------------------------------------------------------ export
    def columns(self) -> dict:
        """Column name -> 1-D array: ``t``, ``q_<joint>``, ``qd_<joint>``, ``qdd_<joint>``,
        ``tau_<joint>``, ``kinetic_energy``, ``potential_energy``, ``total_energy``; for a batch, a
        ``rollout`` column (the flat index of the rollout) first, the rollouts one after another."""
        names = self.joint_names or tuple(f"q{i}" for i in range(self.n))
        N = len(self.t)
        B = int(np.prod(self.batch_shape, dtype=int))
        cols = {}
        if self.batch_shape:
            cols["rollout"] = np.repeat(np.arange(B), N)
        cols["t"] = np.tile(self.t, B)
        q_names = names
        if self.q.shape[-1] != len(names):   # quaternions in q: a name per entry (Model.q_names)
            q_names = self.model.q_names if self.model is not None else tuple(f"q{i}" for i in range(self.q.shape[-1]))
        for key in ("q", "qd", "qdd", "tau"):
            arr = getattr(self, key).reshape(B * N, -1)
            for i, jn in enumerate(q_names if key == "q" else names):
                cols[f"{key}_{jn}"] = arr[:, i]
        cols["kinetic_energy"] = self.kinetic_energy.reshape(-1)
        cols["potential_energy"] = self.potential_energy.reshape(-1)
        cols["total_energy"] = self.total_energy.reshape(-1)
        return cols

    def to_csv(self, path):
        """Write the columns of :meth:`columns` as CSV with a header line."""
        cols = self.columns()
        data = np.column_stack(list(cols.values()))
        np.savetxt(path, data, delimiter=",", header=",".join(cols), comments="", fmt="%.17g")

    def to_npz(self, path):
        """Write the arrays (batch axes kept) and metadata to a NumPy ``.npz`` file (read back with
        :meth:`from_npz`)."""
        limits = {f"limit_{k}": v for k, v in (self.limits or {}).items()}
        np.savez(path, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, tau=self.tau,
                 kinetic_energy=self.kinetic_energy, potential_energy=self.potential_energy,
                 joint_names=np.array(self.joint_names, dtype=str), model_name=np.array(self.model_name),
                 integrator=np.array(self.integrator), dt=np.array(self.dt), **limits)

    @classmethod
    def from_npz(cls, path) -> Trajectory:
        with np.load(path) as z:
            limits = {k[6:]: z[k] for k in z.files if k.startswith("limit_")} or None
            return cls(t=z["t"], q=z["q"], qd=z["qd"], qdd=z["qdd"], tau=z["tau"],
                       kinetic_energy=z["kinetic_energy"], potential_energy=z["potential_energy"],
                       joint_names=tuple(str(s) for s in z["joint_names"]), model_name=str(z["model_name"]),
                       integrator=str(z["integrator"]), dt=float(z["dt"]), limits=limits)

    def to_dataframe(self):
        """A :class:`pandas.DataFrame` of :meth:`columns` indexed by ``t`` (by ``(rollout, t)`` for a
        batch; needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Trajectory.to_dataframe needs pandas (pip install pandas); "
                              "to_csv and to_npz work without it") from None
        return pd.DataFrame(self.columns()).set_index(["rollout", "t"] if self.batch_shape else "t")


# ---------------------------------------------------------------------------- progress bar
class ProgressBar:
    """A one-line progress bar on stderr: ``bar(fraction)``, then ``bar.close()``."""

    def __init__(self, label="simulating", stream=None, width=30, min_interval=0.1):
        self.label, self.stream, self.width, self.min_interval = label, stream or sys.stderr, width, min_interval
        self.start = time.perf_counter()
        self._last = -1.0
        self._shown = False

    def __call__(self, fraction):
        now = time.perf_counter()
        if fraction < 1.0 and now - self._last < self.min_interval:
            return
        self._last = now
        fraction = min(max(float(fraction), 0.0), 1.0)
        filled = int(round(self.width * fraction))
        elapsed = now - self.start
        eta = elapsed / fraction - elapsed if fraction > 0 else float("nan")
        eta_s = f" eta {eta:4.1f} s" if fraction < 1 and math.isfinite(eta) else ""
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                          f"{100 * fraction:5.1f}% {elapsed:5.1f} s{eta_s}   ")
        self.stream.flush()
        self._shown = True

    def close(self):
        if self._shown:
            self(1.0)
            self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------------------- inputs
def _time_grid(duration, dt):
    for name, v in (("duration", duration), ("dt", dt)):
        if not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v) or v <= 0:
            raise InputError(f"{name} must be a positive finite number of seconds, got {v!r}")
    steps = max(1, math.ceil(duration / dt - 1e-9))
    t = np.arange(steps + 1) * float(dt)
    t[-1] = float(duration)
    return t


def _states(q0, qd0, nq, nv):
    """The initial states as rows ``(B, nq)``, ``(B, nv)`` and their batch shape (``()``: one rollout)."""
    arrays = []
    for x, size, name in ((q0, nq, "q0"), (qd0, nv, "qd0")):
        if x is None:
            x = np.zeros(size)
        try:
            x = np.array(x, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be an array of {size} numbers, or (..., {size}) for a batch") from None
        if x.ndim == 0:
            x = np.full(size, float(x))
        if x.shape[-1] != size:
            raise InputError(f"{name} must have shape ({size},), or (..., {size}) for a batch of rollouts, "
                             f"for this model; got shape {x.shape}")
        bad = ~np.isfinite(x).all(axis=-1)
        if bad.any():
            where = f" (rollout {tuple(int(i) for i in np.argwhere(bad)[0])})" if x.ndim > 1 else ""
            raise InputError(f"{name} contains NaN or inf{where}")
        arrays.append(x)
    try:
        batch = np.broadcast_shapes(arrays[0].shape[:-1], arrays[1].shape[:-1])
    except ValueError:
        raise InputError(f"q0 {arrays[0].shape} and qd0 {arrays[1].shape} do not broadcast to one batch") from None
    rows = [np.ascontiguousarray(np.broadcast_to(x, batch + x.shape[-1:]).reshape(-1, x.shape[-1])) for x in arrays]
    return rows[0], rows[1], batch


def _per_step(arr, item, batch, steps, name, forms):
    """``arr`` (a constant of shape ``item``, per step ``(T, *item)``, per rollout ``(*batch, T, *item)``
    with ``T`` in ``(1, steps, steps + 1)``) as ``(Bt, Tt, *item)`` with ``Bt`` 1 or ``B``."""
    k, nb = len(item), len(batch)
    if arr.shape == item:
        return np.ascontiguousarray(arr.reshape((1, 1) + item))
    if arr.ndim == k + 1 and arr.shape[1:] == item and arr.shape[0] in (steps, steps + 1):
        return np.ascontiguousarray(arr[None])
    if (nb and arr.ndim == nb + k + 1 and arr.shape[:nb] == batch and arr.shape[nb + 1:] == item
            and arr.shape[nb] in (1, steps, steps + 1)):
        return np.ascontiguousarray(arr.reshape((-1,) + arr.shape[nb:]))
    raise InputError(f"{name} must be {forms}; got shape {arr.shape}")


def _source(value, name, model, steps, batch, wrench):
    """``tau`` or ``f_ext`` as ``("none", None)``, ``("array", (Bt, Tt, n[, 6]))`` or ``("call", f)``."""
    n = model.n
    if value is None:
        return ("none", None) if wrench else ("array", np.zeros((1, 1, n)))
    if callable(value):
        return "call", value
    lead = f"({', '.join(map(str, batch))}, " if batch else "("
    if wrench:   # one wrench per body (model.nbodies; as inverse_dynamics takes them), then the kernels' rows
        nb = model.nbodies
        forms = (f"({nb}, 6), ({steps}, {nb}, 6) per step" + (f", {lead}{steps}, {nb}, 6) per rollout" if batch else "")
                 + ", a dict or a callable")
        if isinstance(value, dict):
            try:
                shape = np.broadcast_shapes(*(np.shape(w)[:-1] for w in value.values()))
            except ValueError:
                raise InputError("f_ext: the wrench arrays of the dict do not broadcast to one shape") from None
            value = _sd().external_wrenches(model, value, shape)
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"f_ext must be {forms}") from None
        arr = np.ascontiguousarray(wrench_rows(model, _per_step(arr, (nb, 6), batch, steps, name, forms)))
    else:
        forms = (f"a scalar, ({n},), ({steps}, {n}) per step" + (f", {lead}{steps}, {n}) per rollout" if batch else "")
                 + " or a callable tau(t, q, qd)")
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be {forms}") from None
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        arr = _per_step(arr, (n,), batch, steps, name, forms)
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or inf")
    return "array", arr


def _integrator_name(integrator):
    name = _ALIASES.get(integrator, integrator)
    if name not in INTEGRATORS:
        raise InputError(f"unknown integrator {integrator!r}; choose one of {', '.join(INTEGRATORS)}")
    return name


class _Inputs:
    """``tau`` and ``f_ext`` at ``(t, q, qd)`` of step ``k`` for rows ``(B, n)``, as the integrators
    that call back into Python ask for them: the arrays' rows, or the callables' answers (checked;
    with ``hold``, evaluated at the first call of each step and kept for its other stages)."""

    def __init__(self, model, tau, fext, hold, report, single):
        self.model, self.n = model, model.n
        self.tau, self.fext, self.hold, self.report, self.single = tau, fext, hold, report, single
        self._held = {}

    def _held_call(self, key, f, t, q, qd, k, member):
        if not self.hold:
            return f(t, q, qd, member)
        got = self._held.get(key)
        if got is None or got[:2] != (k, member):
            got = self._held[key] = (k, member, f(t, q, qd, member))
        return got[2]

    def _args(self, t, q, qd, member):
        """A callable's arguments: the rows ``(B, n)`` of a batch, one rollout's vectors ``(n,)``."""
        one = self.single or member is not None
        return (t, q[0].copy(), qd[0].copy()) if one else (t, q.copy(), qd.copy())

    def torque(self, t, q, qd, k, member=None):
        """Commanded torques ``(B, n)`` (or ``(1, n)`` for all) at the rows ``q, qd (B, n)``;
        ``member``: the rollout whose single row ``q`` is (the adaptive solvers' loop)."""
        return self._value(self.tau, "tau", self._check_tau, t, q, qd, k, member)

    def wrenches(self, t, q, qd, k, member=None):
        """Wrenches ``(B, n, 6)`` (or ``(1, n, 6)``) on the kernels' rows (:func:`.dispatch.wrench_rows`), or None."""
        return self._value(self.fext, "fext", self._check_fext, t, q, qd, k, member)

    def _value(self, source, key, check, t, q, qd, k, member):
        kind, data = source
        if kind == "none":
            return None
        if kind == "array":
            x = data[:, min(k, data.shape[1] - 1)]
            return x if member is None or len(x) == 1 else x[member:member + 1]
        return self._held_call(key, check, t, q, qd, k, member)   # (under the integrators' errstate: NaN rows)

    def _check_tau(self, t, q, qd, member):
        out = np.asarray(self.tau[1](*self._args(t, q, qd, member)), dtype=float)
        B = len(q)
        if out.ndim == 0:
            out = np.full(self.n, float(out))
        if out.shape == (self.n,):
            out = out[None]
        elif out.shape != (B, self.n) or self.single or member is not None:
            want = f"({self.n},)" + ("" if self.single or member is not None else f" or ({B}, {self.n})")
            raise InputError(f"tau(t, q, qd) returned shape {np.shape(out)}, expected {want}")
        self.report.effort(t, out, member)
        return out

    def _check_fext(self, t, q, qd, member):
        out = self.fext[1](*self._args(t, q, qd, member))
        B = len(q)
        if isinstance(out, dict):
            out = _sd().external_wrenches(self.model, out, np.broadcast_shapes(*(np.shape(w)[:-1] for w in out.values())))
        out = np.asarray(out, dtype=float)
        nb = self.model.nbodies
        if out.shape == (nb, 6):
            out = out[None]
        elif out.shape != (B, nb, 6) or self.single or member is not None:
            want = f"({nb}, 6)" + ("" if self.single or member is not None else f" or ({B}, {nb}, 6)")
            raise InputError(f"f_ext(t, q, qd) returned shape {out.shape}, expected {want}")
        return wrench_rows(self.model, out)


# ---------------------------------------------------------------------------- limits report
class _Report:
    """Limits exceeded: per joint the largest excess, the first time, and which rollouts."""

    def __init__(self, model, B):
        self.model, self.B = model, B
        self.effort_seen = {}
        self.limit = model.effort_limit
        self.limited = bool(np.isfinite(self.limit).any())

    def effort(self, t, tau, member=None):
        """Commanded torques ``(B or 1, n)`` at time ``t`` (or ``(Bt, T, n)`` at times ``t (T,)``);
        ``member``: the one rollout they are of."""
        if not self.limited or not np.count_nonzero(np.abs(tau) > self.limit):   # (count_nonzero: 1 us less than any())
            return
        over = np.abs(tau) - self.limit
        tau = np.abs(tau).reshape(len(tau), -1, self.model.n)
        over = over.reshape(tau.shape)
        times = np.broadcast_to(np.asarray(t, dtype=float).reshape(-1), tau.shape[1:2])
        for j in np.flatnonzero(np.any(over > 0, axis=(0, 1))):
            hit = over[:, :, j] > 0
            members = ([member] if member is not None else np.flatnonzero(hit.any(axis=1)) if len(tau) > 1
                       else range(self.B))
            first = float(times[np.flatnonzero(hit.any(axis=0))[0]])
            e = self.effort_seen.setdefault(int(j), {"max": 0.0, "t": first, "rollouts": set()})
            e["max"] = max(e["max"], float(tau[:, :, j].max()))
            e["t"] = min(e["t"], first)
            e["rollouts"].update(int(b) for b in members)

    def summary(self, t, W, joint_limits, saturate):
        """``{"position": .., "velocity": .., "effort": ..}``, each ``{joint: {"max", "limit", "t",
        "rollouts"}}`` for the joints that went beyond their limits (position: by how much), from the
        rollouts' record ``W`` (the rollout kernel's)."""
        m = self.model
        names = m.v_names
        out = {"position": {}, "velocity": {}, "effort": {}}
        slides = np.repeat(m.joint_type == 1, m.nvs)
        for kind, first, peak, limit, unit in (("position", FIRST_Q, PEAK_Q, None, ("rad", "m")),
                                               ("velocity", FIRST_V, PEAK_V, m.velocity_limit, ("rad/s", "m/s"))):
            hit = W[:, first] >= 0                                                          # (B, n)
            for j in np.flatnonzero(hit.any(axis=0)):
                members = np.flatnonzero(hit[:, j])
                out[kind][names[j]] = {
                    "max": float(W[members, peak, j].max()), "limit": None if limit is None else float(limit[j]),
                    "t": float(t[int(W[members, first, j].min())]), "rollouts": members.tolist(),
                    "unit": unit[int(slides[j])]}
        for j, e in sorted(self.effort_seen.items()):
            out["effort"][names[j]] = {"max": e["max"], "limit": float(m.effort_limit[j]), "t": e["t"],
                                       "rollouts": sorted(e["rollouts"]), "saturated": bool(saturate),
                                       "unit": "N" if slides[j] else "N m"}
        out["joint_limits"] = bool(joint_limits)
        return out


def _report_lines(report, batch_shape=()):
    lines = []
    for kind in ("position", "velocity", "effort"):
        for joint, e in report.get(kind, {}).items():
            who = ""
            if batch_shape:
                r = e["rollouts"]
                who = (f" in {len(r)} of {int(np.prod(batch_shape))} rollouts ({', '.join(map(str, r[:8]))}"
                       f"{', ...' if len(r) > 8 else ''})")
            u = e["unit"]
            if kind == "position":
                what = f"beyond its position limits by up to {e['max']:.3g} {u}"
                if report.get("joint_limits"):
                    what += " (soft limits)"
            elif kind == "velocity":
                what = f"|qd| up to {e['max']:.4g} {u} > velocity limit {e['limit']:.4g}"
            else:
                what = (f"|tau| commanded up to {e['max']:.4g} {u} > effort limit {e['limit']:.4g}"
                        + (" (saturated)" if e.get("saturated") else ""))
            lines.append(f"{joint}: {what}, from t = {e['t']:.4g} s{who}")
    return lines


# ---------------------------------------------------------------------------- simulate
def simulate(model, q0=None, qd0=None, duration=1.0, dt=1e-3, *, tau=None, f_ext=None, integrator="rk4",
             friction=True, joint_limits=True, saturate=False, hold=False, method="aba", rtol=1e-10, atol=1e-12,
             ivp_options=None, progress=False) -> Trajectory:
    """Simulate ``model`` from ``(q0, qd0)`` for ``duration`` seconds, sampled every ``dt``: one
    rollout, or a batch of rollouts run together (see the module docstring).

    Parameters
    ----------
    q0, qd0 : ``(nq,)``, ``(nv,)`` initial joint positions and velocities (default zeros), or
        ``(..., nq)``, ``(..., nv)`` (broadcasting) for a batch of rollouts.
    duration, dt : simulated time and sampling step [s]; the step of the fixed-step integrators.
        When ``dt`` does not divide ``duration`` the last step is shorter.
    tau : applied joint torques: None, constant, per step, per rollout, or a callable
        ``tau(t, q, qd)`` (see the module docstring). Friction and joint limits are not part of
        ``tau``: they are added by the model.
    f_ext : external wrenches ``(n, f)`` on the bodies, same kinds as ``tau``.
    integrator : ``"euler"``, ``"semi_implicit_euler"``, ``"rk4"`` (default), ``"RK45"``,
        ``"DOP853"`` or ``"Radau"``.
    friction : include the model's joint friction (viscous ``damping`` and Coulomb ``friction``).
    joint_limits : True (default) for the soft position limits of the module docstring, False for
        none, or a :class:`JointLimits` with other constants.
    saturate : clip the applied torque to ``[-effort_limit, effort_limit]`` (default: apply it as
        given; either way an excess is reported).
    hold : evaluate a callable ``tau`` or ``f_ext`` once per step (at its start) and hold it over
        the step, instead of at every stage of the integrator.
    method : forward-dynamics algorithm: ``"aba"`` (the compiled rollouts) or ``"crba"``.
    rtol, atol : tolerances of the adaptive integrators.
    ivp_options : more keyword arguments for :func:`scipy.integrate.solve_ivp` (``max_step``,
        ``first_step``, ``jac`` ...).
    progress : True for a progress bar on stderr, or a callable ``progress(fraction)``.

    Returns a :class:`Trajectory` (batch axes in front); ``qdd`` and ``tau`` are those at each
    sample. Raises :class:`SimulationError` when a single rollout diverges; warns
    (:class:`SimulationWarning`) naming the rollouts of a batch that did, and (:class:`LimitWarning`)
    naming the joints that exceeded a velocity or effort limit.

    >>> from screwdyn import models
    >>> arm = models.load("planar_2r")
    >>> traj = simulate(arm, q0=[0.0, 0.0], duration=1.0, dt=1e-3, friction=False)
    >>> traj.q.shape, bool(traj.energy_drift() < 1e-8)
    ((1001, 2), True)
    >>> import numpy as np
    >>> batch = simulate(arm, q0=np.linspace(-1, 1, 5)[:, None] * [1.0, 0.0], duration=1.0, dt=1e-3)
    >>> batch.q.shape, bool(np.array_equal(batch[4].q, simulate(arm, [1.0, 0.0], duration=1.0, dt=1e-3).q))
    ((5, 1001, 2), True)
    """
    sd = _sd()
    if not isinstance(model, sd.Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")
    options = dict(integrator=integrator, friction=friction, joint_limits=joint_limits, saturate=saturate, hold=hold,
                   method=method, rtol=rtol, atol=atol, ivp_options=ivp_options)
    if any_dask(q0, qd0, tau, f_ext):
        return _dask_simulate(model, q0, qd0, duration, dt, tau, f_ext, options)
    n = model.n
    nq, nv = getattr(model, "nq", n), getattr(model, "nv", n)
    name = _integrator_name(integrator)
    if method not in _FD_METHODS:
        raise InputError(f"method must be one of {_FD_METHODS}, got {method!r}")
    q, qd, batch = _states(q0, qd0, nq, nv)
    B = len(q)
    t = _time_grid(duration, dt)
    N, steps = len(t), len(t) - 1
    check_room("simulate", 8 * B * N * (nq + 3 * nv),
               f"the trajectory of {B} rollout{'s' if B > 1 else ''} of {N} samples (q, qd, qdd, tau)",
               "split the batch, or simulate a shorter time or with a larger dt" if B > 1
               else "simulate a shorter time or with a larger dt")
    tau_src = _source(tau, "tau", model, steps, batch, wrench=False)
    f_src = _source(f_ext, "f_ext", model, steps, batch, wrench=True)
    lim = _limit_table(model, joint_limits, friction, saturate, dt)
    report = _Report(model, B)
    if tau_src[0] == "array":
        data = tau_src[1]
        report.effort(t[np.minimum(np.arange(data.shape[1]), steps)], data)
    inputs = _Inputs(model, tau_src, f_src, bool(hold), report, single=not batch)

    Q, V, A, TAU = (np.empty((B, N, d)) for d in (nq, nv, nv, nv))
    Q[:, 0], V[:, 0] = q, qd
    W = _watch_start(B, nv)
    dead = np.zeros(B, dtype=np.int64)
    bar = ProgressBar(f"simulating {model.name}") if progress is True else (progress or None)
    started = time.perf_counter()
    try:
        calls = "call" in (tau_src[0], f_src[0])
        if name in FIXED_STEP and method == "aba" and not calls:
            _compiled(name, model, lim, t, inputs, Q, V, A, TAU, W, dead, bar)
        elif name in FIXED_STEP and method == "aba" and hold:
            with np.errstate(over="ignore", invalid="ignore"), _serial(B):   # (the callables see diverged rows)
                _compiled(name, model, lim, t, inputs, Q, V, A, TAU, W, dead, bar)
        elif name in FIXED_STEP:
            with np.errstate(over="ignore", invalid="ignore"), _serial(B):   # divergence is detected and reported
                _stages(name, model, t, inputs, _Field(model, lim, B, method), Q, V, A, TAU, dead, bar)
            W = _watch(lim, _dof_positions(model, Q), V)
        else:
            per_step = hold and calls or any(s[0] == "array" and s[1].shape[1] > 1 for s in (tau_src, f_src))
            with np.errstate(over="ignore", invalid="ignore"), _serial(1):
                nfev = _adaptive(name, t, inputs, _Field(model, lim, 1, method), Q, V, A, TAU, dead, bar, per_step,
                                 dict(rtol=rtol, atol=atol, **(ivp_options or {})), single=not batch,
                                 friction=bool(friction))
            W = _watch(lim, _dof_positions(model, Q), V)
    finally:
        if isinstance(bar, ProgressBar):
            bar.close()
    elapsed = time.perf_counter() - started
    if name in FIXED_STEP:
        nfev = steps * (4 if name == "rk4" else 1) + 1
    info = {"nfev": nfev, "wall_time": elapsed, "friction": bool(friction), "joint_limits": joint_limits,
            "saturate": bool(saturate), "hold": bool(hold)}
    _check_dead(dead, Q, t, batch, name, info)
    info["limits"] = report.summary(t, W, joint_limits is not False, saturate)
    _warn_limits(model, info["limits"], batch)
    shape = batch + (N,)
    return Trajectory(t=t, q=Q.reshape(shape + (nq,)), qd=V.reshape(shape + (nv,)), qdd=A.reshape(shape + (nv,)),
                      tau=TAU.reshape(shape + (nv,)), joint_names=model.v_names, model_name=model.name,
                      integrator=name, dt=float(dt), info=info, limits=_limit_arrays(model), model=model)


def _energy_samples(model, q, qd):
    """Kinetic and potential energy of samples ``(..., nq)``, ``(..., nv)``; NaN where a sample is not finite."""
    sd = _sd()
    Q, QD = q.reshape(-1, q.shape[-1]), qd.reshape(-1, qd.shape[-1])
    ok = np.isfinite(Q).all(axis=1) & np.isfinite(QD).all(axis=1)
    K, U = np.full(len(Q), np.nan), np.full(len(Q), np.nan)
    if ok.all():
        K[:], U[:] = sd.kinetic_energy(model, Q, QD), sd.potential_energy(model, Q)
    elif ok.any():
        K[ok], U[ok] = sd.kinetic_energy(model, Q[ok], QD[ok]), sd.potential_energy(model, Q[ok])
    return K.reshape(q.shape[:-1]), U.reshape(q.shape[:-1])


def _limit_arrays(model):
    """A trajectory's ``limits``: the model's position, velocity and effort limits."""
    return {"q_lower": model.q_lower, "q_upper": model.q_upper, "velocity": model.velocity_limit,
            "effort": model.effort_limit}


# ---------------------------------------------------------------------------- on Dask
def _dask_simulate(model, q0, qd0, duration, dt, tau, f_ext, options):
    """:func:`simulate` of a batch whose ``q0`` or ``qd0`` (or per-rollout ``tau``, ``f_ext``) is a Dask
    array: the rollouts in chunks of the batch, each chunk one :func:`simulate` call where a scheduler
    runs it (a cluster's workers), lazily. The trajectory's ``q``, ``qd``, ``qdd``, ``tau`` are Dask
    arrays ``(*batch, N, n)`` chunked along the batch as the inputs; ``info["diverged"]`` a Dask array
    ``(*batch,)`` of booleans. Arrays of ``tau`` / ``f_ext`` per rollout (``(*batch, T, n)``,
    ``(*batch, T, n, 6)``) are split with the rollouts; constants, per-step arrays, dicts and callables
    go to every chunk whole (a callable must pickle for a distributed cluster). Each chunk's limits
    report and warnings stay in the worker: ``info["limits"]`` is None."""
    from functools import partial

    from ._dask import as_array, map_batches
    n, nq, nv = model.n, model.nq, model.nv
    t = _time_grid(duration, dt)
    N = len(t)
    q0 = as_array(np.zeros(nq) if q0 is None else q0, "q0")
    qd0 = as_array(np.zeros(nv) if qd0 is None else qd0, "qd0")
    for x, size, label in ((q0, nq, "q0"), (qd0, nv, "qd0")):
        if x.ndim == 0 or x.shape[-1] != size:
            raise InputError(f"{label} must have shape (..., {size}) for a batch of rollouts, for this model; "
                             f"got shape {x.shape}")
    try:
        batch = np.broadcast_shapes(q0.shape[:-1], qd0.shape[:-1])
    except ValueError:
        raise InputError(f"q0 {q0.shape} and qd0 {qd0.shape} do not broadcast to one batch") from None
    if not batch:
        raise InputError("q0 and qd0 are one state: Dask runs batches of rollouts, (B, nq) and (B, nv)")
    arrays, cores, split = [q0, qd0], [1, 1], []
    for value, label, core in ((tau, "tau", 2), (f_ext, "f_ext", 3)):
        per_rollout = (not callable(value) and not isinstance(value, dict) and value is not None
                       and np.ndim(value) == len(batch) + core)
        if per_rollout:
            arrays.append(value)
            cores.append(core)
        elif any_dask(value):
            raise InputError(f"{label} as a Dask array must be per rollout, {tuple(batch)} + (T, "
                             f"{n if core == 2 else f'{model.nbodies}, 6'}); pass a shared one as a NumPy array")
        split.append(per_rollout)
    shared = [None if cut else value for cut, value in zip(split, (tau, f_ext))]   # (the split ones go by chunk)
    run = partial(_rollout_chunk, model, duration, dt, *shared, tuple(split), options)
    Q, V, A, TAU, diverged = map_batches(run, arrays, cores, ((N, nq), (N, nv), (N, nv), (N, nv), ()),
                                         name="screwdyn-simulate")
    info = dict(options, nfev=None, wall_time=None, limits=None, diverged=diverged > 0.5)
    info.pop("ivp_options")
    return Trajectory(t=t, q=Q, qd=V, qdd=A, tau=TAU, joint_names=model.v_names, model_name=model.name,
                      integrator=_integrator_name(options["integrator"]), dt=float(dt), info=info,
                      limits=_limit_arrays(model), model=model)


def _rollout_chunk(model, duration, dt, tau, f_ext, split, options, q0, qd0, *per_rollout):
    """One chunk of :func:`_dask_simulate`: ``(Q, V, A, TAU, diverged)`` of its rollouts."""
    from ._dask import chunk_threads
    rest = iter(per_rollout)
    tau = next(rest) if split[0] else tau
    f_ext = next(rest) if split[1] else f_ext
    batch = np.broadcast_shapes(q0.shape[:-1], qd0.shape[:-1])
    with chunk_threads(), warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulationWarning)   # (in a worker no one reads them: info["diverged"])
        traj = simulate(model, q0, qd0, duration, dt, tau=tau, f_ext=f_ext, **options)
    diverged = np.zeros(batch)
    for index in traj.info["diverged"]:
        diverged[index] = 1.0
    return traj.q, traj.qd, traj.qdd, traj.tau, diverged


def _check_dead(dead, Q, t, batch, name, info):
    """Raise for a singular model or a single rollout that diverged; note and warn the rollouts of a
    batch that did."""
    if not np.any(dead):
        info["diverged"] = []
        return
    singular = np.flatnonzero(dead == Status.SINGULAR)
    if len(singular):
        raise _singular(f" (rollout {tuple(int(i) for i in np.unravel_index(singular[0], batch))})" if batch else "")
    bad = np.flatnonzero(dead)
    when = [float(t[np.argmax(~np.isfinite(Q[b]).all(axis=1))]) for b in bad]
    hint = " (try a smaller dt, or integrator='rk4' or 'Radau')" if name in FIXED_STEP else ""
    if not batch:
        raise SimulationError(f"the simulation diverged at t = {when[0]:.6g} s with integrator {name!r}, "
                              f"dt = {t[1] - t[0]:g} s{hint}")
    index = [tuple(int(i) for i in np.unravel_index(b, batch)) if len(batch) > 1 else int(b) for b in bad]
    info["diverged"] = index
    shown = ", ".join(f"{i} at t = {w:.4g} s" for i, w in list(zip(index, when))[:10])
    warnings.warn(SimulationWarning(
        f"{len(bad)} of {len(dead)} rollouts diverged with integrator {name!r}{hint}: {shown}"
        f"{', ...' if len(bad) > 10 else ''}; their samples from then on are NaN (Trajectory.info['diverged'])"),
        stacklevel=3)


@contextmanager
def _serial(B):
    """numba's thread count 1 for the calling thread while ``B < SERIAL_BELOW`` rollouts are stepped a
    stage or a step at a time (the callables called in between run on one thread too)."""
    if B >= SERIAL_BELOW:
        yield
        return
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _singular(where):
    return ModelError(f"the mass matrix is singular{where}: a joint moves neither mass nor rotational "
                      "inertia (give its subtree inertia or the joint an armature)")


def _warn_limits(model, report, batch):
    kinds = ("velocity", "effort") + (() if report["joint_limits"] else ("position",))
    lines = _report_lines({k: report[k] for k in kinds}, batch)
    if report["joint_limits"]:   # a start beyond a limit: the soft limit pushes it back at once
        lines += [line.replace("beyond its position limits", "starts beyond its position limits")
                  for joint, line in zip(report["position"], _report_lines({"position": report["position"]}, batch))
                  if report["position"][joint]["t"] == 0.0]
    if lines:
        warnings.warn(LimitWarning(f"{model.name}: limits exceeded: " + "; ".join(lines)), stacklevel=3)


# ---------------------------------------------------------------------------- the integrators
def _compiled(name, model, lim, t, inputs, Q, V, A, TAU, W, dead, bar):
    """The fixed-step integrators in the compiled rollout kernel: one call for the whole run (in
    chunks for a progress bar), or one per step when a callable is held over each step."""
    B, N = len(Q), len(t)
    code = _METHOD[name]

    def run(s0, s1, tau, fext):
        use = fext is not None
        fext = _NO_FEXT if fext is None else fext
        pick = lambda x, k: x[k:k + 1] if len(x) > 1 else x
        st = statuses(_ROLLOUT, model, B, (lim, t, tau, fext, use, code, s0, s1, Q, V, A, TAU, W),
                      lambda k: (lim, t, pick(tau, k), pick(fext, k), use, code, s0, s1, Q[k], V[k], A[k], TAU[k],
                                 W[k]),
                      status=dead.copy())
        np.copyto(dead, st, where=dead == 0)

    calls = "call" in (inputs.tau[0], inputs.fext[0])
    if not calls:
        tau = inputs.tau[1]
        fext = inputs.fext[1] if inputs.fext[0] == "array" else None
        chunks = 1 if bar is None else min(N - 1, 100)
        edges = np.linspace(0, N - 1, chunks + 1).round().astype(int)
        for s0, s1 in itertools.pairwise(edges):
            run(int(s0), int(s1), tau, fext)
            if bar is not None:
                bar(s1 / (N - 1))
        return
    every = max(1, (N - 1) // 200)
    for k in range(N):
        tau = inputs.torque(t[k], Q[:, k], V[:, k], k)
        fext = inputs.wrenches(t[k], Q[:, k], V[:, k], k)
        run(k, min(k + 1, N - 1), np.ascontiguousarray(tau[:, None]),
            None if fext is None else np.ascontiguousarray(fext[:, None]))
        if bar is not None and k % every == 0:
            bar(k / (N - 1))


def _stages(name, model, t, inputs, field, Q, V, A, TAU, dead, bar):
    """The fixed-step integrators in Python, a stage at a time, each evaluating the whole batch
    (:class:`_Field`): for a callable evaluated at every stage, and for ``method="crba"``. The same
    operations in the same order as the compiled rollouts (:mod:`screwdyn.algorithms.rollout`)."""
    N = len(t)
    q, qd = Q[:, 0].copy(), V[:, 0].copy()
    every = max(1, (N - 1) // 200)

    def accel(tk, q, qd, k):
        a, tp, st = field(q, qd, inputs.torque(tk, q, qd, k), inputs.wrenches(tk, q, qd, k))
        if st.any():
            np.copyto(dead, np.where(st == Status.SINGULAR, st, Status.NONFINITE), where=(dead == 0) & (st != 0))
        return a, tp

    def record(k, q, qd, a, tp):
        Q[:, k], V[:, k], A[:, k], TAU[:, k] = q, qd, a, tp
        if dead.any():
            Q[dead != 0, k], V[dead != 0, k], A[dead != 0, k], TAU[dead != 0, k] = np.nan, np.nan, np.nan, np.nan

    for k in range(N - 1):
        tk, h = t[k], t[k + 1] - t[k]
        a, tp = accel(tk, q, qd, k)
        record(k, q, qd, a, tp)
        if name == "euler":                       # Modern Robotics EulerStep
            q, qd = _integrate(model, q, qd, h), qd + h * a
        elif name == "semi_implicit_euler":       # symplectic Euler
            qd = qd + h * a
            q = _integrate(model, q, qd, h)
        elif model.nq != model.nv:                # RK4 on the manifold: Runge-Kutta-Munthe-Kaas (docs/theory.md §13)
            q, qd = _rkmk4(model, accel, tk, h, q, qd, a, k)
        else:                                     # classical RK4 on x = (q, qd)
            h2 = 0.5 * h
            v2 = qd + h2 * a
            a2, _ = accel(tk + h2, _integrate(model, q, qd, h2), v2, k)
            v3 = qd + h2 * a2
            a3, _ = accel(tk + h2, _integrate(model, q, v2, h2), v3, k)
            v4 = qd + h * a3
            a4, _ = accel(tk + h, _integrate(model, q, v3, h), v4, k)
            q = _integrate(model, q, qd + 2.0 * v2 + 2.0 * v3 + v4, h / 6.0)
            qd = qd + (h / 6.0) * (a + 2.0 * a2 + 2.0 * a3 + a4)
        gone = ~np.isfinite(np.sum(q * q, axis=1) + np.sum(qd * qd, axis=1))   # NaN, inf, or beyond 1e308: diverged
        if gone.any() or dead.any():
            dead[gone & (dead == 0)] = Status.NONFINITE
            q[dead != 0], qd[dead != 0] = np.nan, np.nan
        if bar is not None and k % every == 0:
            bar((k + 1) / (N - 1))
    a, tp = accel(t[-1], q, qd, N - 1)
    record(N - 1, q, qd, a, tp)


def _rkmk4(model, accel, tk, h, q, qd, a, k):
    """One RK4 step of ``q (+)= xi``, ``xi' = dexp^-1_xi(qd)``, ``qd' = a`` from ``(q, qd)`` with
    ``a = accel(q, qd)`` (Munthe-Kaas 1998; :func:`screwdyn.configuration.dexp_inverse`): fourth
    order on the joints' manifolds, where adding the stages' velocities in ``q``'s tangent space is
    second order. Revolute and prismatic joints step as classical RK4."""
    sd = _sd()
    from .configuration import dexp_inverse

    h2 = 0.5 * h
    v2 = qd + h2 * a
    x2 = h2 * qd
    a2, _ = accel(tk + h2, sd.integrate(model, q, x2), v2, k)
    k2 = dexp_inverse(model, x2, v2)
    v3 = qd + h2 * a2
    x3 = h2 * k2
    a3, _ = accel(tk + h2, sd.integrate(model, q, x3), v3, k)
    k3 = dexp_inverse(model, x3, v3)
    v4 = qd + h * a3
    x4 = h * k3
    a4, _ = accel(tk + h, sd.integrate(model, q, x4), v4, k)
    k4 = dexp_inverse(model, x4, v4)
    return (sd.integrate(model, q, qd + 2.0 * k2 + 2.0 * k3 + k4, h / 6.0),
            qd + (h / 6.0) * (a + 2.0 * a2 + 2.0 * a3 + a4))


def _adaptive(name, t, inputs, field, Q, V, A, TAU, dead, bar, per_step, options, single, friction=True):
    """SciPy's adaptive solvers, one rollout after another (a callable gets one rollout's state,
    ``q (nq,)``)."""
    from scipy.integrate import solve_ivp

    B, N = len(Q), len(t)
    model = field.model
    if model.nq != model.nv:
        raise InputError(f"integrator {name!r} integrates q as a vector; a model with free-flyer or spherical joints "
                         "(q holds quaternions) needs a fixed-step one on the manifold: 'rk4', 'euler' or "
                         "'semi_implicit_euler'")
    state_free = "call" not in (inputs.tau[0], inputs.fext[0])   # (a controller's own derivative is unknown)
    nfev = 0
    for b in range(B):
        def accel(tk, q, qd, k, b=b):
            q, qd = q[None], qd[None]
            a, tp, st = field(q, qd, inputs.torque(tk, q, qd, k, b), inputs.wrenches(tk, q, qd, k, b))
            if st[0] == Status.SINGULAR:
                raise _singular(f" (rollout {b})" if not single else "")
            if st[0]:
                raise SimulationError(f"the simulation diverged at t = {tk:.6g} s with integrator {name!r}")
            return a[0], tp[0]

        def jacobian(tk, q, qd, k, b=b):   # d xdot / dx, docs/theory.md (14.12): the analytic Jacobian for Radau
            tau = inputs.torque(tk, q[None], qd[None], k, b)[0]
            F = inputs.wrenches(tk, q[None], qd[None], k, b)
            return _sd().linearize(model, q, qd, tau, f_ext=None if F is None else F[0], friction=friction)[0]

        try:
            X, count = _solve(solve_ivp, name, accel, Q[b, 0], V[b, 0], t, bar, b, B, per_step, options,
                              jacobian if name in IMPLICIT and state_free else None)
        except SimulationError:
            if single:
                raise
            dead[b] = Status.NONFINITE
            Q[b, 1:], V[b, 1:], A[b], TAU[b] = np.nan, np.nan, np.nan, np.nan
            continue
        nfev += count + N
        n = Q.shape[2]
        Q[b], V[b] = X[:, :n], X[:, n:]
        for k in range(N):
            A[b, k], TAU[b, k] = accel(t[k], Q[b, k], V[b, k], k)
    return nfev


def _solve(solve_ivp, name, accel, q0, qd0, t, bar, b, B, per_step, options, jacobian=None):
    n = len(q0)
    N = len(t)
    seg = [0]
    span = t[-1] - t[0]
    if jacobian is not None and "jac" not in options:
        options = dict(options, jac=lambda tk, x: jacobian(tk, x[:n], x[n:], seg[0]))

    def rhs(tk, x):
        a, _ = accel(tk, x[:n], x[n:], seg[0])
        if bar is not None:
            bar((b + (tk - t[0]) / span) / B)
        return np.concatenate((x[n:], a))

    x0 = np.concatenate((q0, qd0))
    nfev = 0
    if per_step:   # zero-order hold: integrate step by step so that no step straddles a jump
        X = np.empty((N, 2 * n))
        X[0] = x0
        for k in range(N - 1):
            seg[0] = k
            sol = solve_ivp(rhs, (t[k], t[k + 1]), X[k], method=name, **options)
            if sol.status != 0:
                raise SimulationError(f"{name} failed at t = {sol.t[-1]:.6g} s: {sol.message}")
            X[k + 1] = sol.y[:, -1]
            nfev += sol.nfev
    else:
        sol = solve_ivp(rhs, (t[0], t[-1]), x0, method=name, t_eval=t, **options)
        if sol.status != 0:
            raise SimulationError(f"{name} failed at t = {sol.t[-1]:.6g} s: {sol.message}")
        X = sol.y.T
        nfev = sol.nfev
    if not np.all(np.isfinite(X)):
        k = int(np.argmax(~np.all(np.isfinite(X), axis=1)))
        raise SimulationError(f"the simulation diverged at t = {t[k]:.6g} s with integrator {name!r}")
    return X, nfev
