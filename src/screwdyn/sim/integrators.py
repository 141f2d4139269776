"""The integrators of :func:`~screwdyn.sim.simulate` (the formulas are in the package docstring,
docs/theory.md §13).

* The fixed-step ones (``euler``, ``semi_implicit_euler``, ``rk4``) in the compiled rollout kernel
  (:func:`_compiled`), or a stage at a time in Python (:func:`_stages`) when a callable is evaluated
  at every stage or for ``method="crba"``, with the same operations in the same order;
* SciPy's adaptive ``solve_ivp`` (``RK45``, ``DOP853``, ``Radau``), one rollout after another
  (:func:`_adaptive`).

:class:`_Field` evaluates the vector field for the integrators that call back into Python.
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager

import numpy as np

from ..algorithms.rollout import EULER, RK4, SEMI_IMPLICIT_EULER
from ..algorithms.status import Status
from ..configuration import dexp_inverse
from ..dispatch import Kernel, statuses
from ..errors import InputError
from .limits import _dof_positions, _drive, _limits, _saturate, _watch_start
from .report import SimulationError, _singular

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
_CONSTRAINED_ROLLOUT = Kernel("constrained_rollout", "constrained_rollout")
_FD_CRB = Kernel("ltdl", "fd_crb")
# Below this many rollouts, the integrators that call back into Python (a kernel call per stage or
# step) run on one thread: a parallel call wakes numba's other threads each time, 10-50 us on an idle
# machine and milliseconds on a busy one, more than the work of a few hundred states.
SERIAL_BELOW = 512
_FD_METHODS = ("aba", "crba")
_NO_FEXT = np.zeros((1, 1, 1, 6))


def _integrator_name(integrator):
    name = _ALIASES.get(integrator, integrator)
    if name not in INTEGRATORS:
        raise InputError(f"unknown integrator {integrator!r}; choose one of {', '.join(INTEGRATORS)}")
    return name


def _integrate(model, q, v, dt):
    """``q (+) v dt``: the configuration reached from ``q`` moving with velocity ``v`` for ``dt``
    (every position update of the Python stage loop; :func:`screwdyn.integrate`, the compiled
    :func:`screwdyn.algorithms.joints.joint_integrate` of the rollouts). Revolute and prismatic
    joints: ``q + dt v``; free-flyers and spherical joints on their manifolds, quaternions kept unit."""
    if model.nq != model.nv:
        from .. import integrate   # (screwdyn's, looked up at the call: what a test patches there is used)
        return integrate(model, q, v, dt)
    return q + dt * v


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


def _compiled(name, model, lim, t, inputs, Q, V, A, TAU, W, dead, bar, constrained=None):
    """The fixed-step integrators in the compiled rollout kernel: one call for the whole run (in
    chunks for a progress bar), or one per step when a callable is held over each step.
    ``constrained``: the leading arguments ``(cd, mu, accuracy, max_iter)`` of the constrained
    rollouts (:mod:`screwdyn.algorithms.constrained_rollout`), which then run instead."""
    B, N = len(Q), len(t)
    code = _METHOD[name]
    kernel, lead = (_ROLLOUT, ()) if constrained is None else (_CONSTRAINED_ROLLOUT, tuple(constrained))

    def run(s0, s1, tau, fext):
        use = fext is not None
        fext = _NO_FEXT if fext is None else fext
        pick = lambda x, k: x[k:k + 1] if len(x) > 1 else x
        st = statuses(kernel, model, B, (*lead, lim, t, tau, fext, use, code, s0, s1, Q, V, A, TAU, W),
                      lambda k: (*lead, lim, t, pick(tau, k), pick(fext, k), use, code, s0, s1, Q[k], V[k], A[k],
                                 TAU[k], W[k]),
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
    from .. import integrate

    h2 = 0.5 * h
    v2 = qd + h2 * a
    x2 = h2 * qd
    a2, _ = accel(tk + h2, integrate(model, q, x2), v2, k)
    k2 = dexp_inverse(model, x2, v2)
    v3 = qd + h2 * a2
    x3 = h2 * k2
    a3, _ = accel(tk + h2, integrate(model, q, x3), v3, k)
    k3 = dexp_inverse(model, x3, v3)
    v4 = qd + h * a3
    x4 = h * k3
    a4, _ = accel(tk + h, integrate(model, q, x4), v4, k)
    k4 = dexp_inverse(model, x4, v4)
    return (integrate(model, q, qd + 2.0 * k2 + 2.0 * k3 + k4, h / 6.0),
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
            from .. import linearize
            return linearize(model, q, qd, tau, f_ext=None if F is None else F[0], friction=friction)[0]

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
