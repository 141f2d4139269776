"""What :func:`~screwdyn.sim.simulate` is given, checked and put in the shapes the integrators
read: the time grid, the initial states as rows, and the torques and external wrenches (none,
constants, per step, per rollout, or callables such as the controllers of :mod:`screwdyn.control`).
"""
from __future__ import annotations

import math

import numpy as np

from ..dispatch import shape_message, wrench_rows
from ..errors import InputError


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
        if x.ndim == 0 or x.shape[-1] != size:   # a scalar or a last axis of 1: every joint (not q's quaternions)
            if (x.ndim == 0 or x.shape[-1] == 1) and (name == "qd0" or nq == nv):
                x = np.broadcast_to(x.reshape(x.shape[:-1] + (1,)), x.shape[:-1] + (size,))
            else:
                raise InputError(shape_message(x.shape, size, name, name == "qd0" or nq == nv))
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
            from .. import external_wrenches   # (screwdyn's, looked up at the call: what a test patches there is used)
            value = external_wrenches(model, value, shape)
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
        if arr.ndim == 0 or arr.shape == (1,):
            arr = np.full(n, float(arr[()] if arr.ndim == 0 else arr[0]))
        arr = _per_step(arr, (n,), batch, steps, name, forms)
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or inf")
    return "array", arr


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
            from .. import external_wrenches
            out = external_wrenches(self.model, out, np.broadcast_shapes(*(np.shape(w)[:-1] for w in out.values())))
        out = np.asarray(out, dtype=float)
        nb = self.model.nbodies
        if out.shape == (nb, 6):
            out = out[None]
        elif out.shape != (B, nb, 6) or self.single or member is not None:
            want = f"({nb}, 6)" + ("" if self.single or member is not None else f" or ({B}, {nb}, 6)")
            raise InputError(f"f_ext(t, q, qd) returned shape {out.shape}, expected {want}")
        return wrench_rows(self.model, out)
