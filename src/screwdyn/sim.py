"""Forward simulation: integrate ``M(q) qdd + h(q, qd) = tau + J^T F_ext - tau_friction`` in time.

The state is ``x = (q, qd)`` and the vector field is (docs/theory.md §13, eq. (13.1))::

    xdot = (qd, FD(q, qd, tau(t, q, qd), F_ext(t, q, qd)))

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
    tolerances ``rtol``, ``atol``; the output is sampled every ``dt``. Radau's Newton steps get the
    analytic Jacobian of the vector field (:func:`screwdyn.linearize`, docs/theory.md §14.6) unless
    ``tau`` or ``f_ext`` is a callable (whose own derivative is unknown: SciPy differences then).

Torques and external wrenches may be given as

* ``None``: zero (a passive robot);
* a constant: ``tau`` ``(n,)`` or a scalar; ``f_ext`` ``(n, 6)`` (wrenches ``(n, f)`` on each body in
  its own frame) or a dict ``{link_or_frame: wrench (6,) in that frame}``;
* an array per step: ``tau`` ``(steps, n)`` (or ``(steps + 1, n)``), ``f_ext`` ``(steps, n, 6)`` or a
  dict of ``(steps, 6)`` arrays, held constant over each step (zero-order hold);
* a callable ``tau(t, q, qd) -> (n,)`` (a controller: see :mod:`screwdyn.control`), or
  ``f_ext(t, q, qd) -> (n, 6) or dict``; it is evaluated at every stage of the integrator.

Joint friction (``friction=True``, the default) is the model's ``damping qd + friction sign(qd)``
(:func:`screwdyn.friction_torques`). The Coulomb term jumps at ``qd = 0``: a robot at rest
chatters at the integrator's precision instead of sticking; "Radau" handles the stiffness best.
Joint limits are not enforced (there are no contacts).
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError, ScrewdynError

__all__ = ["simulate", "Trajectory", "SimulationError", "INTEGRATORS", "ProgressBar"]

#: Fixed-step integrators (this module) and adaptive ones (SciPy's solve_ivp).
FIXED_STEP = ("euler", "semi_implicit_euler", "rk4")
ADAPTIVE = ("RK45", "DOP853", "Radau")
IMPLICIT = ("Radau",)   # given the analytic Jacobian of the vector field (docs/theory.md §14.6)
INTEGRATORS = FIXED_STEP + ADAPTIVE
_ALIASES = {"explicit_euler": "euler", "symplectic_euler": "semi_implicit_euler",
            "semi-implicit-euler": "semi_implicit_euler", "semi_implicit": "semi_implicit_euler",
            "rk45": "RK45", "dop853": "DOP853", "radau": "Radau"}


class SimulationError(ScrewdynError):
    """The integration failed: the state diverged (NaN or inf) or the adaptive solver gave up."""


def _sd():
    import screwdyn  # the package namespace: forward_dynamics and the energies live there
    return screwdyn


# ---------------------------------------------------------------------------- the trajectory
@dataclass(eq=False)
class Trajectory:
    """A simulated (or sampled) motion: arrays over ``N`` samples of ``n`` joints.

    Attributes::

        t                 (N,)    time [s]
        q, qd, qdd        (N, n)  joint positions, velocities, accelerations
        tau               (N, n)  applied joint torques/forces (friction not included)
        kinetic_energy    (N,)    1/2 qd^T M(q) qd [J] (rotor inertia included)
        potential_energy  (N,)    gravitational potential energy [J] (zero at the base origin)
        total_energy      (N,)    their sum
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    joint_names: tuple = ()
    model_name: str = ""
    integrator: str = ""
    dt: float = float("nan")
    info: dict = field(default_factory=dict)

    @property
    def total_energy(self) -> np.ndarray:
        return self.kinetic_energy + self.potential_energy

    @property
    def n(self) -> int:
        return self.q.shape[1]

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return (f"Trajectory({self.model_name!r}, {len(self)} samples, t = {self.t[0]:g}..{self.t[-1]:g} s, "
                f"integrator={self.integrator!r})")

    def energy_drift(self, relative=True) -> float:
        """``max_t |E(t) - E(0)|``; with ``relative``, divided by the largest kinetic energy
        reached (the energy that actually moved), so that the zero of the potential does not matter."""
        drift = float(np.max(np.abs(self.total_energy - self.total_energy[0])))
        if not relative:
            return drift
        scale = float(np.max(self.kinetic_energy))
        return drift / scale if scale > 0 else drift

    def view(self, model=None, **options):
        """Show the motion in a web browser with a time slider and play button (:func:`screwdyn.view`;
        ``options`` as there). ``model``: by default the one :func:`simulate` was given
        (``info["model"]``). Returns the running :class:`~screwdyn.viz.Viewer`."""
        model = self.info.get("model") if model is None else model
        if model is None:
            raise InputError("Trajectory.view: this trajectory does not know its model (it was not made by "
                             "simulate); pass it: traj.view(model)")
        from .viz.viewer import view

        return view(model, self, **options)

    # ------------------------------------------------------------------ export
    def columns(self) -> dict:
        """Column name -> 1-D array: ``t``, ``q_<joint>``, ``qd_<joint>``, ``qdd_<joint>``,
        ``tau_<joint>``, ``kinetic_energy``, ``potential_energy``, ``total_energy``."""
        names = self.joint_names or tuple(f"q{i}" for i in range(self.n))
        cols = {"t": self.t}
        for key in ("q", "qd", "qdd", "tau"):
            arr = getattr(self, key)
            for i, jn in enumerate(names):
                cols[f"{key}_{jn}"] = arr[:, i]
        cols["kinetic_energy"] = self.kinetic_energy
        cols["potential_energy"] = self.potential_energy
        cols["total_energy"] = self.total_energy
        return cols

    def to_csv(self, path):
        """Write the columns of :meth:`columns` as CSV with a header line."""
        cols = self.columns()
        data = np.column_stack(list(cols.values()))
        np.savetxt(path, data, delimiter=",", header=",".join(cols), comments="", fmt="%.17g")

    def to_npz(self, path):
        """Write the arrays and metadata to a NumPy ``.npz`` file (read back with :meth:`from_npz`)."""
        np.savez(path, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, tau=self.tau,
                 kinetic_energy=self.kinetic_energy, potential_energy=self.potential_energy,
                 joint_names=np.array(self.joint_names, dtype=str), model_name=np.array(self.model_name),
                 integrator=np.array(self.integrator), dt=np.array(self.dt))

    @classmethod
    def from_npz(cls, path) -> "Trajectory":
        with np.load(path) as z:
            return cls(t=z["t"], q=z["q"], qd=z["qd"], qdd=z["qdd"], tau=z["tau"],
                       kinetic_energy=z["kinetic_energy"], potential_energy=z["potential_energy"],
                       joint_names=tuple(str(s) for s in z["joint_names"]), model_name=str(z["model_name"]),
                       integrator=str(z["integrator"]), dt=float(z["dt"]))

    def to_dataframe(self):
        """A :class:`pandas.DataFrame` of :meth:`columns` indexed by ``t`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Trajectory.to_dataframe needs pandas (pip install pandas); "
                              "to_csv and to_npz work without it") from None
        return pd.DataFrame(self.columns()).set_index("t")


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


def _source(value, name, n, steps, model, wrench):
    """Normalise ``tau`` or ``f_ext`` to ``(kind, data)``: kind in zero / const / steps / call."""
    if value is None:
        return "zero", None
    if callable(value):
        return "call", value
    if wrench:
        if isinstance(value, dict):
            try:
                batch = np.broadcast_shapes(*(np.shape(w)[:-1] for w in value.values()))
            except ValueError:
                raise InputError("f_ext: the wrench arrays of the dict do not broadcast to one shape") from None
            value = _sd().external_wrenches(model, value, batch)
        arr = np.asarray(value, dtype=float)
        if arr.shape == (n, 6):
            return "const", np.ascontiguousarray(arr)
        if arr.ndim == 3 and arr.shape[1:] == (n, 6) and arr.shape[0] in (steps, steps + 1):
            return "steps", np.ascontiguousarray(arr)
        raise InputError(f"f_ext must be ({n}, 6), ({steps}, {n}, 6) per step, a dict or a callable; "
                         f"got shape {arr.shape}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, an array or a callable tau(t, q, qd)") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape == (n,):
        kind = "const"
    elif arr.ndim == 2 and arr.shape[1] == n and arr.shape[0] in (steps, steps + 1):
        kind = "steps"
    else:
        raise InputError(f"{name} must be a scalar, ({n},), ({steps}, {n}) per step or a callable "
                         f"tau(t, q, qd); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or inf")
    return kind, np.ascontiguousarray(arr)


def _evaluator(kind, data, name, n, model, wrench):
    """A function ``(t, q, qd, k) -> value`` (k: the step index, for per-step arrays)."""
    if kind == "zero":
        z = None if wrench else np.zeros(n)
        return lambda t, q, qd, k: z
    if kind == "const":
        return lambda t, q, qd, k: data
    if kind == "steps":
        last = len(data) - 1
        return lambda t, q, qd, k: data[k if k <= last else last]
    shape = (n, 6) if wrench else (n,)

    def call(t, q, qd, k):
        out = data(t, q.copy(), qd.copy())
        if wrench and isinstance(out, dict):
            out = _sd().external_wrenches(model, out)
        out = np.asarray(out, dtype=float)
        if out.shape != shape:
            if not wrench and out.ndim == 0:
                return np.full(n, float(out))
            raise InputError(f"{name}(t, q, qd) returned shape {out.shape}, expected {shape}")
        return out
    return call


def _integrator_name(integrator):
    name = _ALIASES.get(integrator, integrator)
    if name not in INTEGRATORS:
        raise InputError(f"unknown integrator {integrator!r}; choose one of {', '.join(INTEGRATORS)}")
    return name


# ---------------------------------------------------------------------------- simulate
def simulate(model, q0=None, qd0=None, duration=1.0, dt=1e-3, *, tau=None, f_ext=None, integrator="rk4",
             friction=True, method="aba", rtol=1e-10, atol=1e-12, ivp_options=None,
             progress=False) -> Trajectory:
    """Simulate ``model`` from ``(q0, qd0)`` for ``duration`` seconds, sampled every ``dt``.

    Parameters
    ----------
    q0, qd0 : ``(n,)`` initial joint positions and velocities (default zeros).
    duration, dt : simulated time and sampling step [s]; the step of the fixed-step integrators.
        When ``dt`` does not divide ``duration`` the last step is shorter.
    tau : applied joint torques: None, constant, per step, or a callable ``tau(t, q, qd)``
        (see the module docstring). Friction is not part of ``tau``: it is added by the model.
    f_ext : external wrenches ``(n, f)`` on the bodies, same kinds as ``tau``.
    integrator : ``"euler"``, ``"semi_implicit_euler"``, ``"rk4"`` (default), ``"RK45"``,
        ``"DOP853"`` or ``"Radau"``.
    friction : include the model's joint friction (viscous ``damping`` and Coulomb ``friction``).
    method : forward-dynamics algorithm passed to :func:`screwdyn.forward_dynamics`.
    rtol, atol : tolerances of the adaptive integrators.
    ivp_options : more keyword arguments for :func:`scipy.integrate.solve_ivp` (``max_step``,
        ``first_step``, ``jac`` ...).
    progress : True for a progress bar on stderr, or a callable ``progress(fraction)``.

    Returns a :class:`Trajectory`; ``qdd`` and ``tau`` are those at each sample.

    >>> from screwdyn import models
    >>> arm = models.load("planar_2r")
    >>> traj = simulate(arm, q0=[0.0, 0.0], duration=1.0, dt=1e-3, friction=False)
    >>> traj.q.shape, bool(traj.energy_drift() < 1e-8)
    ((1001, 2), True)
    """
    sd = _sd()
    if not isinstance(model, sd.Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")
    n = model.n
    name = _integrator_name(integrator)
    q = _state(q0, n, "q0")
    qd = _state(qd0, n, "qd0")
    t = _time_grid(duration, dt)
    steps = len(t) - 1
    tau_kind, tau_data = _source(tau, "tau", n, steps, model, wrench=False)
    f_kind, f_data = _source(f_ext, "f_ext", n, steps, model, wrench=True)
    tau_of = _evaluator(tau_kind, tau_data, "tau", n, model, wrench=False)
    f_of = _evaluator(f_kind, f_data, "f_ext", n, model, wrench=True)
    fd = sd.forward_dynamics
    damping, coulomb = model.damping, model.friction
    with_friction = bool(friction) and bool(np.any(damping) or np.any(coulomb))

    def accel(tk, q, qd, k):
        tk_tau = tau_of(tk, q, qd, k)
        if with_friction:   # screwdyn.friction_torques(model, qd), without re-checking our own qd
            drive = tk_tau - (damping * qd + coulomb * np.sign(qd))
        else:
            drive = tk_tau
        return fd(model, q, qd, drive, f_of(tk, q, qd, k), method=method), tk_tau

    def jacobian(tk, q, qd, k):   # d xdot / dx, docs/theory.md (14.12): the analytic Jacobian for Radau
        return sd.linearize(model, q, qd, tau_of(tk, q, qd, k), f_ext=f_of(tk, q, qd, k), friction=with_friction)[0]

    bar = ProgressBar(f"simulating {model.name}") if progress is True else (progress or None)
    started = time.perf_counter()
    try:
        if name in FIXED_STEP:
            Q, QD, QDD, TAU, nfev = _fixed_step(name, accel, q, qd, t, bar)
        else:
            per_step = "steps" in (tau_kind, f_kind)
            state_free = "call" not in (tau_kind, f_kind)   # (a controller's own derivative is unknown)
            Q, QD, QDD, TAU, nfev = _adaptive(name, accel, q, qd, t, bar, per_step,
                                              dict(rtol=rtol, atol=atol, **(ivp_options or {})),
                                              jacobian if name in IMPLICIT and state_free else None)
    finally:
        if isinstance(bar, ProgressBar):
            bar.close()
    elapsed = time.perf_counter() - started
    K = np.asarray(sd.kinetic_energy(model, Q, QD), dtype=float).reshape(len(t))
    U = np.asarray(sd.potential_energy(model, Q), dtype=float).reshape(len(t))
    return Trajectory(t=t, q=Q, qd=QD, qdd=QDD, tau=TAU, kinetic_energy=K, potential_energy=U,
                      joint_names=tuple(model.joint_names), model_name=model.name, integrator=name,
                      dt=float(dt), info={"nfev": nfev, "wall_time": elapsed, "friction": bool(friction),
                                          "model": model})


def _state(x, n, name):
    if x is None:
        return np.zeros(n)
    try:
        x = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an array of {n} numbers") from None
    if x.ndim == 0:
        x = np.full(n, float(x))
    if x.shape != (n,):
        raise InputError(f"{name} must have shape ({n},) for this model, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise InputError(f"{name} contains NaN or inf")
    return x


def _diverged(tk, name, dt, err=None):
    hint = " (try a smaller dt, or integrator='rk4' or 'Radau')" if name in FIXED_STEP else ""
    why = f": {err}" if err is not None else ""
    return SimulationError(f"the simulation diverged at t = {tk:.6g} s with integrator {name!r}, "
                           f"dt = {dt:g} s{hint}{why}")


def _fixed_step(name, accel, q, qd, t, bar):
    N, n = len(t), len(q)
    Q, QD, QDD, TAU = (np.empty((N, n)) for _ in range(4))
    every = max(1, (N - 1) // 200)
    with np.errstate(over="ignore", invalid="ignore"):   # divergence is detected below and reported
        _fixed_loop(name, accel, q, qd, t, bar, Q, QD, QDD, TAU, every)
    nfev = (N - 1) * (4 if name == "rk4" else 1) + 1
    return Q, QD, QDD, TAU, nfev


def _fixed_loop(name, accel, q, qd, t, bar, Q, QD, QDD, TAU, every):
    N = len(t)
    for k in range(N - 1):
        tk, h = t[k], t[k + 1] - t[k]
        Q[k], QD[k] = q, qd
        try:
            a, TAU[k] = accel(tk, q, qd, k)
            QDD[k] = a
            if name == "euler":                       # Modern Robotics EulerStep
                q, qd = q + h * qd, qd + h * a
            elif name == "semi_implicit_euler":       # symplectic Euler
                qd = qd + h * a
                q = q + h * qd
            else:                                     # classical RK4 on x = (q, qd)
                h2 = 0.5 * h
                v2 = qd + h2 * a
                a2, _ = accel(tk + h2, q + h2 * qd, v2, k)
                v3 = qd + h2 * a2
                a3, _ = accel(tk + h2, q + h2 * v2, v3, k)
                v4 = qd + h * a3
                a4, _ = accel(tk + h, q + h * v3, v4, k)
                q = q + (h / 6.0) * (qd + 2.0 * v2 + 2.0 * v3 + v4)
                qd = qd + (h / 6.0) * (a + 2.0 * a2 + 2.0 * a3 + a4)
        except InputError as e:
            if np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and "NaN or inf" not in str(e):
                raise
            raise _diverged(tk, name, h, e) from None
        if not math.isfinite(q @ q + qd @ qd):   # NaN, inf, or beyond 1e154: diverged
            raise _diverged(t[k + 1], name, h)
        if bar is not None and k % every == 0:
            bar((k + 1) / (N - 1))
    Q[-1], QD[-1] = q, qd
    QDD[-1], TAU[-1] = accel(t[-1], q, qd, N - 1)


def _adaptive(name, accel, q0, qd0, t, bar, per_step, options, jacobian=None):
    from scipy.integrate import solve_ivp

    n = len(q0)
    N = len(t)
    seg = [0]
    span = t[-1] - t[0]
    if jacobian is not None and "jac" not in options:
        options = dict(options, jac=lambda tk, x: jacobian(tk, x[:n], x[n:], seg[0]))

    def rhs(tk, x):
        a, _ = accel(tk, x[:n], x[n:], seg[0])
        if bar is not None:
            bar((tk - t[0]) / span)
        return np.concatenate((x[n:], a))

    x0 = np.concatenate((q0, qd0))
    nfev = 0
    try:
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
    except InputError as e:
        if "NaN or inf" not in str(e):
            raise
        raise _diverged(float("nan"), name, t[1] - t[0], e) from None
    if not np.all(np.isfinite(X)):
        raise _diverged(t[int(np.argmax(~np.all(np.isfinite(X), axis=1)))], name, t[1] - t[0])
    Q = np.ascontiguousarray(X[:, :n])
    QD = np.ascontiguousarray(X[:, n:])
    QDD, TAU = np.empty((N, n)), np.empty((N, n))
    for k in range(N):
        QDD[k], TAU[k] = accel(t[k], Q[k], QD[k], k)
    return Q, QD, QDD, TAU, nfev + N
