"""What a simulation reports: its errors and warnings, and the limits its rollouts exceeded.

:class:`SimulationError` (a single rollout diverged, or the adaptive solver gave up),
:class:`SimulationWarning` (rollouts of a batch diverged), :class:`LimitWarning` (velocity or
effort limits exceeded; position limits too with ``joint_limits=False``), and the report behind
``Trajectory.info["limits"]``: per joint the largest excess, the first time, and which rollouts.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..algorithms.rollout import FIRST_Q, FIRST_V, PEAK_Q, PEAK_V
from ..errors import ModelError, ScrewdynError, ScrewdynWarning


class SimulationError(ScrewdynError):
    """The integration failed: the state diverged (NaN or inf) or the adaptive solver gave up."""


class SimulationWarning(ScrewdynWarning):
    """Some rollouts of a batch diverged (their indices are named); the others ran to the end."""


class LimitWarning(SimulationWarning):
    """A rollout exceeded a velocity or effort limit (or a position limit, with ``joint_limits=False``).

    Its message is one line: per kind of limit, the joints, the worst excess and how many rollouts.
    Its ``report`` is the whole report, the trajectory's ``info["limits"]`` (see
    :class:`~screwdyn.sim.Trajectory`), one line per joint by ``Trajectory.limit_report()``."""

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report


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


def _warn_limits(model, report, batch):
    """Warn (:class:`LimitWarning`, one line) of the velocity and effort limits exceeded (position
    limits too with ``joint_limits=False``; with them, a start beyond one): per kind, which joints,
    the worst excess and in how many rollouts. The details are the trajectory's
    (``info["limits"]``, :meth:`~screwdyn.sim.Trajectory.limit_report`) and the warning's ``report``."""
    kinds = ("velocity", "effort") if report["joint_limits"] else ("position", "velocity", "effort")
    parts = [_kind_summary(kind, report[kind], batch) for kind in kinds if report[kind]]
    if report["joint_limits"]:   # a start beyond a limit: the soft limit pushes it back at once
        start = {j: e for j, e in report["position"].items() if e["t"] == 0.0}
        if start:
            parts.append(_kind_summary("start", start, batch))
    if parts:
        warnings.warn(LimitWarning(f"{model.name}: " + "; ".join(parts)
                                   + "; details: trajectory.limit_report()", report), stacklevel=3)


def _kind_summary(kind, entries, batch, shown=3):
    """One clause of the warning: ``velocity limit exceeded by 6 joints, worst panda_joint4 (|qd| up
    to 13.4 rad/s, limit 2.17), in 10 of 10 rollouts`` (the joints named when at most ``shown``)."""
    names = list(entries)
    joints = ", ".join(names) if len(names) <= shown else f"{len(names)} joints"
    if kind in ("position", "start"):
        worst = max(names, key=lambda j: entries[j]["max"])
        e = entries[worst]
        how = f"up to {e['max']:.3g} {e['unit']}"
        what = (f"{joints} beyond {'its' if len(names) == 1 else 'their'} position limits from t = 0 s"
                if kind == "start" else f"position limits exceeded by {joints}")
    else:
        worst = max(names, key=lambda j: entries[j]["max"] / entries[j]["limit"] if entries[j]["limit"] else np.inf)
        e = entries[worst]
        how = (f"{'|qd|' if kind == 'velocity' else '|tau|'} up to {e['max']:.3g} {e['unit']}, limit {e['limit']:.3g}"
               + (", saturated" if e.get("saturated") else ""))
        what = f"{kind} limit exceeded by {joints}"
    what += f", worst {worst} ({how})" if len(names) > 1 else f" ({how})"
    if batch:
        rollouts = set().union(*(entries[j]["rollouts"] for j in names))
        what += f", in {len(rollouts)} of {int(np.prod(batch))} rollouts"
    return what


def _singular(where):
    return ModelError(f"the mass matrix is singular{where}: a joint moves neither mass nor rotational "
                      "inertia (give its subtree inertia or the joint an armature)")
