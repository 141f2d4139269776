"""``simulate``: checks its arguments, runs the rollouts with the integrator asked for (compiled or
a stage at a time), and gathers them in a :class:`~screwdyn.sim.trajectory.Trajectory`; a batch
given as Dask arrays runs chunk by chunk where Dask's scheduler puts it.
"""
from __future__ import annotations

import math
import sys
import threading
import time
import warnings

import numpy as np

from .._dask import any_dask
from ..algorithms.status import Status
from ..dispatch import check_room
from ..errors import InputError
from ..model import Model
from .inputs import _Inputs, _source, _states, _time_grid
from .integrators import (
    _FD_METHODS, FIXED_STEP, SERIAL_BELOW, _adaptive, _compiled, _Field, _integrator_name, _serial, _stages,
)
from .limits import _dof_positions, _limit_arrays, _limit_table, _watch, _watch_start
from .report import SimulationError, SimulationWarning, _Report, _singular, _warn_limits
from .contacts import ContactRecord
from .contacts import _rollouts as _contact_rollouts
from .trajectory import Trajectory
from ..algorithms.contact_step import REC_WIDTH


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


def simulate(model, q0=None, qd0=None, duration=1.0, dt=1e-3, *, tau=None, f_ext=None, integrator=None,
             friction=True, joint_limits=True, saturate=False, hold=False, method="aba", rtol=1e-10, atol=1e-12,
             ivp_options=None, progress=False, environment=None, constraints=(), contact_settings=None,
             record_contacts=True) -> Trajectory:
    """Simulate ``model`` from ``(q0, qd0)`` for ``duration`` seconds, sampled every ``dt``: one
    rollout, or a batch of rollouts run together (see the module docstring).

    Parameters
    ----------
    q0, qd0 : ``(nq,)``, ``(nv,)`` initial joint positions and velocities (default zeros), or
        ``(..., nq)``, ``(..., nv)`` (broadcasting) for a batch of rollouts; a scalar (or a last
        axis of 1) is every joint's, as NumPy broadcasts it (not for a ``q0`` with quaternions).
    duration, dt : simulated time and sampling step [s]; the step of the fixed-step integrators.
        When ``dt`` does not divide ``duration`` the last step is shorter.
    tau : applied joint torques: None, constant, per step, per rollout, or a callable
        ``tau(t, q, qd)`` (see the module docstring). Friction and joint limits are not part of
        ``tau``: they are added by the model.
    f_ext : external wrenches ``(n, f)`` on the bodies, same kinds as ``tau``.
    integrator : ``"euler"``, ``"semi_implicit_euler"``, ``"rk4"`` (the default without contacts),
        ``"RK45"``, ``"DOP853"`` or ``"Radau"``; with contacts ``"semi_implicit_euler"`` only (the
        default there).
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
    environment : the world the robot touches, a :class:`~screwdyn.environment.Environment` (None:
        ``model.environment``, an MJCF's floor; False: none). With an environment (or
        ``joint_limits="hard"``, or ``contact_settings``) the simulation steps with contacts
        (:mod:`screwdyn.sim.contacts`, docs/theory.md §18): velocity-level semi-implicit Euler, the
        contacts on the exact Coulomb cone, the joint limits (compliant as :class:`JointLimits`
        says, or rigid with ``"hard"``), the joints' dry friction and the constraints (the model's
        and ``constraints``) solved together each step, as one complementarity problem.
    constraints : constraints held along the motion (:mod:`screwdyn.constraints`: contacts welded to
        the world, loops, couplings), after the model's own ``model.constraints``, which always
        apply. Without contacts: every rollout integrates the constrained dynamics
        (:func:`screwdyn.constrained_forward_dynamics`) and is projected back onto the constraints
        after each step (docs/theory.md §15.9); ``info["constraints"]`` holds the largest
        violation of the recorded samples. Fixed-step integrators only (compiled), without
        enforced joint limits (``joint_limits=False``), and callables only with ``hold=True``.
        With contacts: bilateral rows of the contact problem, at the velocity level, their drift
        corrected by ``ContactSettings.bilateral_stabilization``.
    contact_settings : a :class:`~screwdyn.sim.contacts.ContactSettings` (tolerance, compliance ...).
    record_contacts : keep each step's contacts and forces in ``Trajectory.contacts`` (and the
        joint-limit, friction and constraint forces in ``Trajectory.solver``); False keeps only the
        solver's iterations and residuals (large batches).

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
    if not isinstance(model, Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")
    options = dict(integrator=integrator, friction=friction, joint_limits=joint_limits, saturate=saturate, hold=hold,
                   method=method, rtol=rtol, atol=atol, ivp_options=ivp_options, environment=environment,
                   constraints=constraints, contact_settings=contact_settings, record_contacts=record_contacts)
    if any_dask(q0, qd0, tau, f_ext):
        return _dask_simulate(model, q0, qd0, duration, dt, tau, f_ext, options)
    n = model.n
    nq, nv = getattr(model, "nq", n), getattr(model, "nv", n)
    scene = _contact_scene(model, environment, constraints, joint_limits, friction, saturate, dt, contact_settings)
    name = _integrator_name(integrator or ("semi_implicit_euler" if scene is not None else "rk4"))
    if scene is not None and (name != "semi_implicit_euler" or method != "aba"):
        raise InputError(f"with contacts simulate steps with integrator 'semi_implicit_euler' (a velocity-level "
                         f"scheme); got integrator={name!r}, method={method!r} (pass environment=False for the smooth "
                         "integrators)")
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
    constrained, given = (None, ()) if scene is not None else _constrained(model, constraints, name, method, lim, tau,
                                                                          f_ext, hold)
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
    contacts = solver = None
    try:
        calls = "call" in (tau_src[0], f_src[0])
        if scene is not None:
            if record_contacts:
                check_room("simulate", 8 * B * N * (scene.K * REC_WIDTH + 2 * nv + scene.mb),
                           f"the contact records of {B} rollout{'s' if B > 1 else ''} of {N} samples",
                           "pass record_contacts=False, split the batch, or simulate a shorter time")
            with np.errstate(over="ignore", invalid="ignore"), _serial(B if calls else SERIAL_BELOW):
                contacts, solver = _contact_rollouts(scene, t, inputs, Q, V, A, TAU, dead, bar, record_contacts)
            W = _watch(lim, _dof_positions(model, Q), V)
        elif name in FIXED_STEP and method == "aba" and not calls:
            _compiled(name, model, lim, t, inputs, Q, V, A, TAU, W, dead, bar, constrained)
        elif name in FIXED_STEP and method == "aba" and hold:
            with np.errstate(over="ignore", invalid="ignore"), _serial(B):   # (the callables see diverged rows)
                _compiled(name, model, lim, t, inputs, Q, V, A, TAU, W, dead, bar, constrained)
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
    if scene is not None:
        info["contacts"] = {"environment": scene.collider.environment, "constraints": scene.constraints,
                            "settings": scene.settings, "max_contacts": scene.K}
    warn = not getattr(_IN_CHUNK, "on", False)
    if constrained is not None:
        _constraints_failed(dead, batch)
        info["constraints"] = _violation(model, given, Q, V, batch)
    _check_dead(dead, Q, t, batch, name, info, warn)
    info["limits"] = report.summary(t, W, joint_limits is not False, saturate)
    if warn:
        _warn_limits(model, info["limits"], batch)
    shape = batch + (N,)
    return Trajectory(t=t, q=Q.reshape(shape + (nq,)), qd=V.reshape(shape + (nv,)), qdd=A.reshape(shape + (nv,)),
                      tau=TAU.reshape(shape + (nv,)), joint_names=model.v_names, model_name=model.name,
                      integrator=name, dt=float(dt), info=info, limits=_limit_arrays(model), model=model,
                      contacts=None if contacts is None else
                      ContactRecord.of(contacts.reshape(shape + contacts.shape[2:])),
                      solver=None if solver is None else {k: v.reshape(shape + v.shape[2:]) for k, v in solver.items()})


def _contact_scene(model, environment, constraints, joint_limits, friction, saturate, dt, settings):
    """The contact scene (:mod:`screwdyn.sim.contacts`) when the simulation has an environment, hard
    joint limits or contact settings; else None (the smooth integrators, and the constrained
    rollouts for constraints)."""
    env = model.environment if environment is None else (None if environment is False else environment)
    given = (constraints,) if hasattr(constraints, "kind") else tuple(constraints or ())
    if env is None and not isinstance(joint_limits, str) and settings is None:
        return None
    from .contacts import _scene
    return _scene(model, False if env is None else env, given, joint_limits, friction, saturate, float(dt), settings)


# Set on a thread while it runs a chunk of a Dask batch (_rollout_chunk): its simulate warns of
# nothing. (warnings.catch_warnings would change the filters of every thread: the scheduler's
# threads run chunks side by side, and one chunk's exit restored what another had just set.)
_IN_CHUNK = threading.local()


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

    from .._dask import as_array, map_batches
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
    if info.pop("constraints") or model.constraints:
        info["constraints"] = None   # (each chunk's violation stays in its worker, as its limits report)
    return Trajectory(t=t, q=Q, qd=V, qdd=A, tau=TAU, joint_names=model.v_names, model_name=model.name,
                      integrator=_integrator_name(options["integrator"] or "rk4"), dt=float(dt), info=info,
                      limits=_limit_arrays(model), model=model)


def _rollout_chunk(model, duration, dt, tau, f_ext, split, options, q0, qd0, *per_rollout):
    """One chunk of :func:`_dask_simulate`: ``(Q, V, A, TAU, diverged)`` of its rollouts."""
    from .._dask import chunk_threads
    rest = iter(per_rollout)
    tau = next(rest) if split[0] else tau
    f_ext = next(rest) if split[1] else f_ext
    batch = np.broadcast_shapes(q0.shape[:-1], qd0.shape[:-1])
    _IN_CHUNK.on = True   # no warnings: in a worker no one reads them (info["diverged"] says it)
    try:
        with chunk_threads():
            traj = simulate(model, q0, qd0, duration, dt, tau=tau, f_ext=f_ext, **options)
    finally:
        _IN_CHUNK.on = False
    diverged = np.zeros(batch)
    for index in traj.info["diverged"]:
        diverged[index] = 1.0
    return traj.q, traj.qd, traj.qdd, traj.tau, diverged


def _constrained(model, constraints, name, method, lim, tau, f_ext, hold):
    """``((cd, mu, accuracy, max_iter), given)`` for the constrained rollouts when ``model.constraints``
    and ``constraints`` hold any, else ``(None, given)`` (``given``: the call's constraints, a tuple);
    what the constrained rollouts do not do is refused here."""
    from ..algorithms.constrained_rollout import ROWS_PER_DOF
    from ..constrained import MU_RELATIVE
    from ..constraints import Constraint, pack

    if isinstance(constraints, Constraint):
        constraints = (constraints,)
    given = tuple(constraints) if constraints is not None else ()
    cd, m, _ = pack(model, given)
    if m == 0:
        return None, given
    refused = [what for what, bad in (
        (f"integrator {name!r} (the fixed-step ones only: euler, semi_implicit_euler, rk4)", name not in FIXED_STEP),
        (f"method {method!r} (method='aba')", method != "aba"),
        ("enforced joint limits (pass joint_limits=False)", bool(np.any(np.isfinite(lim[:, [0, 1]])))),
        ("a callable tau or f_ext evaluated at every stage (pass hold=True)",
         not hold and (callable(tau) or callable(f_ext))))
        if bad]
    if refused:
        raise InputError(f"simulate with constraints ({m} rows) does not take {'; '.join(refused)}")
    if m > ROWS_PER_DOF * model.n:
        raise InputError(f"simulate with constraints takes at most {ROWS_PER_DOF * model.n} constraint rows for this "
                         f"model ({ROWS_PER_DOF} per degree of freedom), got {m}")
    return (cd, -MU_RELATIVE, 1e-12, 50), given


def _constraints_failed(dead, batch):
    """Raise when the constraints of a rollout conflicted or were singular (its KKT solve failed)."""
    from ..algorithms.constrained import CONFLICTING, REDUNDANT

    bad = np.flatnonzero((dead == CONFLICTING) | (dead == REDUNDANT))
    if len(bad):
        where = f" (rollout {tuple(int(i) for i in np.unravel_index(bad[0], batch))})" if batch else ""
        raise InputError(f"simulate: the constraints conflict{where}: redundant constraints asked for accelerations no "
                         "force gives (or the constraints were redundant with mu = 0)")


def _violation(model, given, Q, V, batch, chunk=4096):
    """The largest constraint violation of each rollout's samples: ``{"rows": m, "position": max |e|,
    "velocity": max |J qd|}`` over ``model.constraints`` and ``given`` (``e`` of
    :func:`screwdyn.constraint_error`; floats for one rollout, arrays of the batch's shape otherwise;
    NaN for a rollout that diverged), computed a chunk of samples at a time."""
    from ..constrained import constraint_error, constraint_jacobian

    B, N = Q.shape[:2]
    q, v = Q.reshape(B * N, -1), V.reshape(B * N, -1)
    pos, vel = np.full(B * N, np.nan), np.full(B * N, np.nan)
    good = np.flatnonzero(np.isfinite(q).all(axis=1) & np.isfinite(v).all(axis=1))
    m = 0
    for s in range(0, len(good), chunk):
        k = good[s:s + chunk]
        e = constraint_error(model, q[k], given)
        J = constraint_jacobian(model, q[k], given)
        m = e.shape[-1]
        pos[k] = np.abs(e).max(axis=-1, initial=0.0)
        vel[k] = np.abs(np.einsum("kij,kj->ki", J, v[k])).max(axis=-1, initial=0.0)
    pos, vel = pos.reshape(B, N).max(axis=1), vel.reshape(B, N).max(axis=1)
    if not batch:
        return {"rows": m, "position": float(pos[0]), "velocity": float(vel[0])}
    return {"rows": m, "position": pos.reshape(batch), "velocity": vel.reshape(batch)}


def _check_dead(dead, Q, t, batch, name, info, warn=True):
    """Raise for a singular model or a single rollout that diverged; note (and with ``warn``, warn)
    the rollouts of a batch that did."""
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
    if not warn:
        return
    shown = ", ".join(f"{i} at t = {w:.4g} s" for i, w in list(zip(index, when))[:10])
    warnings.warn(SimulationWarning(
        f"{len(bad)} of {len(dead)} rollouts diverged with integrator {name!r}{hint}: {shown}"
        f"{', ...' if len(bad) > 10 else ''}; their samples from then on are NaN (Trajectory.info['diverged'])"),
        stacklevel=3)
