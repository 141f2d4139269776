"""Contact simulation: one time step (:func:`step`) and what the rollouts with contacts need
(docs/theory.md §18; the kernels in :mod:`screwdyn.algorithms.contact_step` and
:mod:`screwdyn.algorithms.contact_rollout`).

A step is velocity-level, semi-implicit Euler: the contacts of the collision geometry with the
environment (:func:`screwdyn.detect`) at ``q``, then the impulses of the contacts, of the joints
at their limits, of the joints' dry friction and of the bilateral constraints (``model.constraints``
and those passed) solved together as one complementarity problem, on the exact Coulomb cone, by
ADMM to a stated residual (:class:`ContactSettings`), warm-started from the last step; then
``v' = v + M^-1 (dt (tau - h) + J^T lam)`` and ``q' = q (+) dt v'``.

What a step returns and a trajectory records (:class:`ContactRecord`) is documented there; the
layout of the rows is :mod:`screwdyn.algorithms.contact_step`'s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..algorithms import contact_step as _k
from ..algorithms.collide import P_DETECT
from ..algorithms.constraint_layout import CWIDTH
from ..algorithms.status import Status
from ..algorithms.work import STACK_LIMIT
from ..dispatch import Kernel, external_wrenches, on_large_stack, raise_status, vector, wrench_rows
from ..errors import InputError
from ..model import Model
from .limits import _limit_table

__all__ = ["ContactSettings", "ContactRecord", "StepResult", "step"]

DEFAULT_MAX_CONTACTS = 32
_KERNELS = {tier: Kernel("contact_rollout", tier) for tier in ("ground", "general")}


@dataclass(frozen=True)
class ContactSettings:
    """How :func:`step` and :func:`screwdyn.simulate` with an environment solve contacts.

    ``tolerance``       the complementarity residual the solver reaches [m/s] (a velocity: over 10 s
                        a resting body moves at most ``10 s * tolerance``)
    ``max_iterations``  ADMM iterations at most a step (the residual reached is recorded)
    ``stabilization``   ``beta``: the fraction of a penetration (or a joint beyond its limit) undone
                        in one step, ``u_n >= -beta phi / dt``
    ``bilateral_stabilization``  the same for the bilateral constraints' position errors (those
                        without Baumgarte gains of their own)
    ``bounce_velocity`` restitution applies to contacts closing faster than this [m/s]
    ``compliance``      None: rigid contacts; ``"solref"``: each contact's MuJoCo ``solref`` as a
                        stiffness and damping; ``(stiffness, damping)`` [1/s^2, 1/s] per unit of
                        the contact's effective mass, for every contact
    ``margin``          contacts are detected this far before they touch [m] (speculative
                        contacts: they close the gap within a step and no further); with
                        ``dt``, the fastest approach stopped without penetration is ``margin / dt``
    ``max_contacts``    contacts a state at most (None: the most the geometry can make, at most 32)
    ``self_collision``  the model's geometries with each other too (:func:`screwdyn.detect`)
    """
    tolerance: float = 1e-6
    max_iterations: int = 200
    stabilization: float = 0.2
    bilateral_stabilization: float = 0.5
    bounce_velocity: float = 0.01
    compliance: object = None
    margin: float = 0.002
    max_contacts: int | None = None
    self_collision: bool = False

    def array(self, dt):
        """The kernel's settings ``S`` (:mod:`screwdyn.algorithms.contact_step`)."""
        for name in ("tolerance", "bounce_velocity", "margin"):
            x = getattr(self, name)
            if not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
                raise InputError(f"ContactSettings.{name} must be a finite number >= 0, got {x!r}")
        for name in ("stabilization", "bilateral_stabilization"):
            x = getattr(self, name)
            if not (isinstance(x, (int, float)) and 0 <= x <= 1):
                raise InputError(f"ContactSettings.{name} must be a number in [0, 1], got {x!r}")
        if not (isinstance(self.max_iterations, (int, np.integer)) and self.max_iterations >= 1):
            raise InputError(f"ContactSettings.max_iterations must be a whole number >= 1, got {self.max_iterations!r}")
        S = np.zeros(_k.SETTINGS)
        S[_k.DT], S[_k.TOL], S[_k.MAX_ITER] = dt, self.tolerance, self.max_iterations
        S[_k.BETA], S[_k.BETA_BILATERAL], S[_k.BOUNCE] = self.stabilization, self.bilateral_stabilization, \
            self.bounce_velocity
        c = self.compliance
        if c is None:
            S[_k.COMPLIANCE] = _k.RIGID
        elif isinstance(c, str) and c == "solref":
            S[_k.COMPLIANCE] = _k.SOLREF_MODE
        else:
            try:
                k, d = (float(x) for x in c)
            except (TypeError, ValueError):
                raise InputError(f"ContactSettings.compliance must be None, 'solref' or (stiffness, damping), "
                                 f"got {c!r}") from None
            if not (math.isfinite(k) and math.isfinite(d) and k >= 0 and d >= 0 and k + d > 0):
                raise InputError(f"ContactSettings.compliance: stiffness and damping must be finite, >= 0 and "
                                 f"not both 0, got {c!r}")
            S[_k.COMPLIANCE], S[_k.C_STIFFNESS], S[_k.C_DAMPING] = _k.GIVEN, k, d
        return S


class ContactRecord(NamedTuple):
    """Contacts with their forces, of a step or of a trajectory's steps: ``data (..., K,
    REC_WIDTH)`` in the layout of :mod:`screwdyn.algorithms.contact_step` (a row per contact, its
    first ``count`` rows; ``BODY = -1`` after them) and ``count (...)``. Unpacks as ``data, count``,
    as :class:`screwdyn.collision.Contacts` (the viewer and :func:`screwdyn.viz.animate` draw
    either: the point is in the same columns). The properties are views of ``data``'s columns, in
    the world frame::

        active       (..., K)     rows that hold a contact
        body, other  (..., K)     body of side A (``model.link_names`` index), of side B (-1: the world)
        point        (..., K, 3)  contact points [m]
        normal       (..., K, 3)  unit normals from B into A
        penetration  (..., K)     depth [m] (negative: a gap; a contact detected within the margin)
        force        (..., K, 3)  the force on A at the point [N] (zero in the rows without a contact)
        local_force  (..., K, 3)  the same in the contact frame: normal, tangent 1, tangent 2 [N]

    ``total_force()`` sums the forces of each state.
    """

    data: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, data):
        """The record of ``data`` (its count from the rows that hold a contact)."""
        return cls(data, (data[..., _k.BODY] >= 0).sum(axis=-1))

    def _col(self, c, k=None):
        return self.data[..., c] if k is None else self.data[..., c:c + k]

    active = property(lambda self: self.data[..., _k.BODY] >= 0)
    body = property(lambda self: self._col(_k.BODY).astype(np.int64))
    other = property(lambda self: self._col(_k.OTHER).astype(np.int64))
    point = property(lambda self: self._col(_k.POINT_, 3))
    normal = property(lambda self: self._col(_k.NORMAL_, 3))
    penetration = property(lambda self: self._col(_k.PENETRATION))
    force = property(lambda self: np.where(self.active[..., None], self._col(_k.FORCE, 3), 0.0))
    local_force = property(lambda self: np.where(self.active[..., None], self._col(_k.LOCAL, 3), 0.0))

    def total_force(self) -> np.ndarray:
        """``(..., 3)``: the sum of the contact forces of each state [N]."""
        return self.force.sum(axis=-2)

    def select(self, index):
        """The record of batch member (or sample) ``index``."""
        return ContactRecord(self.data[index], np.asarray(self.count)[index])

    def __repr__(self):
        return (f"ContactRecord({self.data.shape[:-2]} states, K={self.data.shape[-2]}, "
                f"{int(np.sum(self.count))} contacts)")


class StepResult(NamedTuple):
    """What :func:`step` returns (one state ``(n,)`` or a batch ``(..., n)``): the next state, the
    contacts of the step with their forces, the joint-limit and dry-friction torques ``(..., 2,
    nv)`` (rows: limit, friction), the bilateral constraints' forces ``(..., mb)`` (in the order of
    :func:`screwdyn.constraints.constraint_set`), and the solver's iterations and residual [m/s]
    ``(...)``. Pass it as the next call's ``warm_start``."""
    q: np.ndarray
    qd: np.ndarray
    contacts: ContactRecord
    joint_torques: np.ndarray
    constraint_forces: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    info: np.ndarray


class _Scene:
    """A model, its environment, constraints and settings packed for the kernels: the collider's
    tables (the detection distance widened by the margin), the constraints ``cd``, the joint table
    ``lim``, the settings ``S``, the contact rows ``K`` and the kernel."""

    def __init__(self, model, environment, constraints, joint_limits, friction, saturate, dt, settings):
        from ..collision import collider
        from ..constraints import pack

        if not isinstance(model, Model):
            raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")
        settings = ContactSettings() if settings is None else settings
        if not isinstance(settings, ContactSettings):
            raise InputError(f"settings must be a screwdyn.ContactSettings, got {type(settings).__name__}")
        self.model, self.settings = model, settings
        from ..environment import Environment
        col = collider(model, Environment() if environment is False else environment,
                       self_collision=settings.self_collision, max_contacts=settings.max_contacts)
        K = settings.max_contacts or max(1, min(col.bound, DEFAULT_MAX_CONTACTS))
        pairs = np.array(col.pairs)
        pairs[:, P_DETECT] += settings.margin
        self.collider, self.geoms, self.pairs, self.vertices, self.graph, self.K = \
            col, col.geoms, pairs, col.vertices, col.graph, K
        self.kernel = _KERNELS[col.tier]
        cd, mb, self.constraints = pack(model, tuple(constraints) if not hasattr(constraints, "kind") else constraints)
        self.cd = np.ascontiguousarray(cd) if len(cd) else np.zeros((0, CWIDTH))
        self.mb = mb
        self.lim = _limit_table(model, joint_limits, friction, saturate, dt)
        self.S = settings.array(dt)
        rows = _k.max_rows.py_func(K, mb, self.lim)
        self.floats = (_k.work_size.py_func(model.nv, model.nq, K, len(self.geoms), rows, len(self.cd),
                                            self.cd.shape[1])
                       + self.kernel.entry.work_floats(model.nv) - _k.per_lane.py_func(model.nv))

    @property
    def active(self) -> bool:
        """Whether there is anything to solve: obstacles, constraints, or hard joint limits."""
        return len(self.collider.pairs) > 0 or self.mb > 0

    def roll(self, t, tau, fext, s0, s1, Q, V, A, TAU, REC, JF, BL, INFO, dead):
        """The rollout kernel (:mod:`screwdyn.algorithms.contact_rollout`) on the samples ``s0 ..
        s1`` of the rollouts ``Q, V, ... (B, N, .)`` whose ``dead`` status is zero (``dead`` updated):
        one rollout at a time (on a large stack when its work needs one), or the batch entry."""
        model, B = self.model, len(Q)
        use = fext is not None
        fext = np.zeros((1, 1, 1, 6)) if fext is None else fext
        params = (self.lim, t, tau, fext, use, self.geoms, self.pairs, self.vertices, self.graph, self.cd, self.S, s0,
                  s1)
        status = dead.copy()
        if B == 1 or self.floats > STACK_LIMIT:
            pick = lambda x, k: x[k:k + 1] if len(x) > 1 else x
            for k in range(B):
                if not status[k]:
                    status[k] = on_large_stack(self.floats, self.kernel.one, model._kd, self.lim, t, pick(tau, k),
                                               pick(fext, k), use, *params[5:], Q[k], V[k], A[k], TAU[k], REC[k],
                                               JF[k], BL[k], INFO[k])
        else:
            self.kernel.run_batch((model._kd, *params, Q, V, A, TAU, REC, JF, BL, INFO, status), None)
        np.copyto(dead, status, where=dead == 0)


def _scene(model, environment, constraints, joint_limits, friction, saturate, dt, settings):
    """The :class:`_Scene`, kept with the model for the same arguments (a loop of :func:`step` calls
    packs it once)."""
    key = ("contact_scene", id(environment), settings, joint_limits if isinstance(joint_limits, (bool, str))
           else id(joint_limits), bool(friction), bool(saturate), float(dt),
           tuple(id(c) for c in constraints) if isinstance(constraints, (tuple, list)) else id(constraints))
    found = model._derived.get(key) if isinstance(model, Model) else None
    if found is None or found[0] is not environment:
        found = (environment, settings, _Scene(model, environment, constraints, joint_limits, friction, saturate, dt,
                                               settings))
        model._derived[key] = found
    return found[2]


def step(model, q, qd, tau=None, dt=1e-3, environment=None, *, f_ext=None, constraints=(), joint_limits=True,
         friction=True, saturate=False, contact_settings=None, warm_start=None) -> StepResult:
    """One time step of ``dt`` [s] with contacts: from ``(q, qd)`` (``(nq,)``, ``(nv,)`` or a batch
    ``(..., nq)``, ``(..., nv)``: many robots, each with its own contacts) under the torques ``tau``
    (None: zero) and the wrenches ``f_ext`` (as :func:`screwdyn.inverse_dynamics` takes them),
    held over the step. See the module docstring and docs/theory.md §18.

    ``environment``: a :class:`~screwdyn.environment.Environment` (None: ``model.environment``;
    False: none). ``constraints``: bilateral constraints besides ``model.constraints``.
    ``joint_limits``: True (each limit a compliant row, :class:`~screwdyn.sim.JointLimits`' default
    stiffness), a ``JointLimits``, ``"hard"`` (rigid rows) or False; ``friction``: the joints'
    viscous damping (explicit) and dry friction (a row each); ``saturate``: clip ``tau`` to the
    effort limits. ``contact_settings``: :class:`ContactSettings`. ``warm_start``: the last call's result.

    >>> import numpy as np, screwdyn
    >>> from screwdyn.geometry import Collision
    >>> b = screwdyn.ModelBuilder("ball")
    >>> _ = b.add_body("ball", "base", "free", "free_flyer", mass=1.0, inertia=np.eye(3) * 4e-3)
    >>> ball = b.build().replace(collisions=(Collision("ball", "sphere", np.eye(4), (0.1,)),))
    >>> ground = screwdyn.Environment(screwdyn.Ground())
    >>> s = screwdyn.step(ball, [0, 0, 0.1, 0, 0, 0, 1], np.zeros(6), dt=1e-3, environment=ground)
    >>> s.q[:3].round(9).tolist(), round(float(s.contacts.total_force()[2]), 6)   # it rests: its weight
    ([0.0, 0.0, 0.1], 9.81)
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")
    if not (isinstance(dt, (int, float, np.integer, np.floating)) and math.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be a positive number of seconds, got {dt!r}")
    scene = _scene(model, environment, constraints, joint_limits, friction, saturate, float(dt), contact_settings)
    n, nq = model.nv, model.nq
    q = vector(q, nq, "q", nq == n)
    qd = vector(qd, n, "qd")
    tau = np.zeros(n) if tau is None else vector(tau, n, "tau")
    batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1], tau.shape[:-1])
    B = math.prod(batch)
    rows = [np.ascontiguousarray(np.broadcast_to(x, batch + x.shape[-1:]).reshape(B, x.shape[-1]))
            for x in (q, qd, tau)]
    F = None
    if f_ext is not None:
        F = np.ascontiguousarray(np.broadcast_to(wrench_rows(model, external_wrenches(model, f_ext, batch)),
                                                 batch + (n, 6)).reshape(B, n, 6))
    # the rollout kernel on three samples: the last step's records at 0, the state at 1, its step's at 1
    t = np.array([-dt, 0.0, dt], dtype=float)
    K, mb = scene.K, scene.mb
    Q, V, A, TAU = np.zeros((B, 3, nq)), np.zeros((B, 3, n)), np.zeros((B, 3, n)), np.zeros((B, 3, n))
    REC, JF, BL, INFO = np.zeros((B, 3, K, _k.REC_WIDTH)), np.zeros((B, 3, 2, n)), np.zeros((B, 3, mb)), \
        np.zeros((B, 3, _k.INFO_WIDTH))
    Q[:, 1], V[:, 1] = rows[0], rows[1]
    REC[..., _k.BODY] = -1.0
    if warm_start is not None:
        if not isinstance(warm_start, StepResult):
            raise InputError(f"warm_start must be the StepResult of the last step, got {type(warm_start).__name__}")
        last = warm_start
        for X, p in ((REC, last.contacts.data), (JF, last.joint_torques), (BL, last.constraint_forces)):
            if p.size != X[:, 0].size:
                raise InputError("warm_start is the result of a step of another shape, batch or contact setting")
            X[:, 0] = p.reshape(X[:, 0].shape)
    dead = np.zeros(B, dtype=np.int64)
    scene.roll(t, rows[2][:, None], None if F is None else F[:, None], 1, 1, Q, V, A, TAU, REC, JF, BL, INFO, dead)
    if dead.any():
        k = int(np.flatnonzero(dead)[0])
        raise_status(int(dead[k]), ("q", "qd", "tau"), np.unravel_index(k, batch) if batch else None)
    shape = lambda x: x.reshape(batch + x.shape[1:])
    info = INFO[:, 1]
    return StepResult(shape(Q[:, 2].copy()), shape(V[:, 2].copy()), ContactRecord.of(shape(REC[:, 1].copy())),
                      shape(JF[:, 1].copy()), shape(BL[:, 1].copy()), shape(info[:, _k.ITERATIONS]).astype(np.int64),
                      shape(info[:, _k.RESIDUAL].copy()), shape(info.copy()))


def _rollouts(scene, t, inputs, Q, V, A, TAU, dead, bar, record):
    """The rollouts of :func:`screwdyn.simulate` with contacts: ``Q, V, A, TAU (B, N, .)`` (the
    initial states in sample 0) stepped to the end; returns ``(contacts, solver)`` for the
    trajectory, ``contacts`` a ``(B, N, K, REC_WIDTH)`` array (None unless ``record``). A callable
    torque or wrench is evaluated once per step, at its start (the scheme's only stage)."""
    model = scene.model
    B, N = len(Q), len(t)
    n, K, mb = model.nv, scene.K, scene.mb
    R = N if record else 2
    REC, JF, BL = np.zeros((B, R, K, _k.REC_WIDTH)), np.zeros((B, R, 2, n)), np.zeros((B, R, mb))
    INFO = np.zeros((B, N, _k.INFO_WIDTH))

    def run(s0, s1, tau, fext):
        scene.roll(t, tau, fext, s0, s1, Q, V, A, TAU, REC, JF, BL, INFO, dead)

    calls = "call" in (inputs.tau[0], inputs.fext[0])
    if not calls:
        tau = inputs.tau[1]
        fext = inputs.fext[1] if inputs.fext[0] == "array" else None
        chunks = 1 if bar is None else min(N - 1, 100)
        edges = np.linspace(0, N - 1, chunks + 1).round().astype(int)
        for s0, s1 in zip(edges[:-1], edges[1:]):
            run(int(s0), int(s1) - 1 if s1 < N - 1 else N - 1, tau, fext)
            if bar is not None:
                bar(s1 / (N - 1))
    else:
        every = max(1, (N - 1) // 200)
        for k in range(N):
            tau = inputs.torque(t[k], Q[:, k], V[:, k], k)
            fext = inputs.wrenches(t[k], Q[:, k], V[:, k], k)
            run(k, k, np.ascontiguousarray(tau[:, None]),
                None if fext is None else np.ascontiguousarray(fext[:, None]))
            if bar is not None and k % every == 0:
                bar(k / (N - 1))
    solver = {"iterations": INFO[..., _k.ITERATIONS].astype(np.int64), "residual": INFO[..., _k.RESIDUAL],
              "found": INFO[..., _k.FOUND].astype(np.int64)}
    if record:
        solver["joint_torques"], solver["constraint_forces"] = JF, BL
    return (REC if record else None), solver
