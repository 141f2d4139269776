"""The configuration space: ``q`` on its manifold and velocities in its tangent space
(docs/theory.md §4.5).

A model's ``q`` (``nq`` entries) holds one block per joint: a revolute or prismatic joint's angle
or displacement; a free-flyer's ``(x, y, z, qx, qy, qz, qw)``, the body's position in its parent
and a unit quaternion (scalar last, as Pinocchio, SciPy and ROS); a spherical joint's unit
quaternion ``(qx, qy, qz, qw)``. Velocities ``v`` (``nv`` entries) are tangent vectors: the
free-flyer's body twist ``(omega, v)`` in its own frame, the spherical joint's angular velocity in
its child frame. So ``q`` is not a vector space, and these functions take its place:

* :func:`integrate` ``q (+) v dt``: a free-flyer moves by ``T(q) exp([V] dt)`` (right
  multiplication by the exponential of its body twist on SE(3), as Pinocchio's), a spherical
  joint by ``R(q) exp([omega] dt)``, the others by ``q + v dt``;
* :func:`difference` ``q1 (-) q0``: the ``v`` with ``integrate(q0, v) = q1`` (``log``);
* :func:`neutral`, :func:`random_configuration`, :func:`normalize`.

All take one configuration ``(nq,)`` or a batch ``(..., nq)`` (arguments broadcast).

Layouts of other libraries (joints in the same order as ``model.joint_names``; give a Pinocchio
model to :func:`to_pinocchio` / :func:`from_pinocchio` to reorder by joint name):

* Pinocchio: ``q`` the same; a free-flyer's velocity (and acceleration, torque) block is linear
  first ``(v, omega)``, screwdyn's angular first ``(omega, v)``.
* MuJoCo (:func:`to_mujoco` / :func:`from_mujoco`): quaternions scalar first ``(qw, qx, qy,
  qz)``; a free joint's ``qvel`` is ``(R v, omega)``: the linear velocity of the body origin in
  the world frame, then the angular velocity in the body frame; its generalized force
  ``(R f, n)`` likewise (a hinge's or slide's entries are screwdyn's).
"""
from __future__ import annotations

import numpy as np

from .algorithms.joints import dexp_inverse_rows, integrate_rows
from .dispatch import shape_message
from .errors import InputError
from .model import FREE_FLYER, SPHERICAL, Model

__all__ = ["neutral", "integrate", "difference", "random_configuration", "normalize",
           "to_pinocchio", "from_pinocchio", "to_mujoco", "from_mujoco"]


# ---------------------------------------------------------------------------------- quaternions
# (..., 4) arrays (x, y, z, w), scalar last; (..., 3) vectors.
def quaternion_multiply(a, b):
    """The product ``a b`` of quaternions ``(..., 4)`` (scalar last): the rotation ``R(a) R(b)``."""
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - np.sum(av * bv, -1, keepdims=True)],
                          axis=-1)


def quaternion_conjugate(a):
    return np.concatenate([-a[..., :3], a[..., 3:]], axis=-1)


def quaternion_rotate(a, x):
    """``R(a) x`` for a unit quaternion ``a (..., 4)`` and vectors ``x (..., 3)``."""
    v, w = a[..., :3], a[..., 3:]
    t = 2.0 * np.cross(v, x)
    return x + w * t + np.cross(v, t)


def quaternion_log(a):
    """``omega`` with ``exp([omega]) = R(a)`` and ``|omega| <= pi``, for unit quaternions ``a``."""
    a = np.where(a[..., 3:] < 0.0, -a, a)            # the same rotation, the short way
    v, w = a[..., :3], a[..., 3]
    s = np.linalg.norm(v, axis=-1)
    t = 2.0 * np.arctan2(s, w)                        # the angle, in [0, pi]
    small = s < 1e-8
    factor = np.where(small, 2.0 / np.where(w == 0.0, 1.0, w), t / np.where(small, 1.0, s))
    return factor[..., None] * v


def _se3_v_inverse(omega, x):
    """``V(omega)^-1 x = x - [omega] x / 2 + k [omega]^2 x``, ``V = 1 + b [omega] + c [omega]^2`` the
    translation of ``exp`` of the twist ``(omega, x)`` (Modern Robotics eq. 3.88; ``V`` itself is
    :func:`screwdyn.algorithms.joints.se3_translation`)."""
    t = np.linalg.norm(omega, axis=-1, keepdims=True)
    t2 = t * t
    small = t < 1e-3
    ts = np.where(small, 1.0, t)
    wx = np.cross(omega, x)
    wwx = np.cross(omega, wx)
    k = np.where(small, 1.0 / 12.0 + t2 / 720.0, (1.0 - 0.5 * ts / np.tan(0.5 * ts)) / (ts * ts))
    return x - 0.5 * wx + k * wwx


# ---------------------------------------------------------------------------------- blocks
def _blocks(model):
    """Index arrays of the joints' blocks, made once per model: ``(one_q, one_v)`` of the one-DoF
    joints, ``(free_q (k, 7), free_v (k, 6))`` and ``(ball_q (k, 4), ball_v (k, 3))``."""
    found = model._derived.get("configuration_blocks")
    if found is None:
        t = model.joint_type
        one = (t != FREE_FLYER) & (t != SPHERICAL)
        free, ball = t == FREE_FLYER, t == SPHERICAL
        found = (model.idx_qs[one], model.idx_vs[one],
                 model.idx_qs[free][:, None] + np.arange(7), model.idx_vs[free][:, None] + np.arange(6),
                 model.idx_qs[ball][:, None] + np.arange(4), model.idx_vs[ball][:, None] + np.arange(3))
        model._derived["configuration_blocks"] = found
    return found


def _array(x, n, name, broadcast=True):
    """``x`` as a float array whose last axis has length ``n``; a scalar or a last axis of 1 is
    broadcast to ``n`` as NumPy does, unless ``broadcast`` is False (``q`` with quaternions)."""
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} must be an array of numbers: {e}") from None
    if x.ndim == 0 or x.shape[-1] != n:
        if broadcast and (x.ndim == 0 or x.shape[-1] == 1):
            return np.broadcast_to(x.reshape(x.shape[:-1] + (1,)), x.shape[:-1] + (n,)).copy()
        raise InputError(shape_message(x.shape, n, name, broadcast))
    return x


def _check(model):
    if not isinstance(model, Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")


# ---------------------------------------------------------------------------------- the functions
def neutral(model: Model) -> np.ndarray:
    """The neutral configuration ``(nq,)``: zero joint angles and displacements, identity
    quaternions ``(0, 0, 0, 1)`` (a free-flyer at its parent's origin), as Pinocchio's ``neutral``."""
    _check(model)
    q = np.zeros(model.nq)
    _, _, free_q, _, ball_q, _ = _blocks(model)
    q[free_q[:, 6]] = 1.0
    q[ball_q[:, 3]] = 1.0
    return q


def normalize(model: Model, q) -> np.ndarray:
    """``q`` with each quaternion block scaled to unit length (a new array). Raises for a zero
    quaternion, which is no rotation."""
    _check(model)
    q = np.array(_array(q, model.nq, "q", model.nq == model.nv), dtype=float)
    _, _, free_q, _, ball_q, _ = _blocks(model)
    for idx in (free_q[:, 3:], ball_q):
        if idx.size:
            block = q[..., idx]
            norm = np.linalg.norm(block, axis=-1, keepdims=True)
            if not np.all(norm > 0.0):
                raise InputError("q has a zero quaternion (no rotation has it)")
            q[..., idx] = block / norm
    return q


def integrate(model: Model, q, v, dt=1.0) -> np.ndarray:
    """``q (+) v dt``: the configuration reached from ``q (..., nq)`` moving with the constant
    velocity ``v (..., nv)`` for ``dt`` (docs/theory.md §4.5). A free-flyer's pose becomes
    ``T(q) exp([V dt])`` (its body twist ``V = (omega, v)``, right multiplication on SE(3), as
    Pinocchio's ``integrate``), a spherical joint's rotation ``R(q) exp([omega dt])``, the others
    ``q + v dt``. Quaternions come out of unit length. The compiled arithmetic of the rollouts
    (:func:`screwdyn.algorithms.joints.joint_integrate`)."""
    _check(model)
    q = _array(q, model.nq, "q", model.nq == model.nv)
    v = _array(v, model.nv, "v")
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise InputError(f"dt must be a number, got {dt!r}") from None
    return _on_rows(lambda Q, V, out: integrate_rows(model._kd, Q, V, dt, out), q, v)


def _on_rows(kernel, a, b):
    """``kernel(A, B, OUT)`` on ``a (..., k)`` and ``b (..., m)`` broadcast against each other and
    laid out as C-contiguous rows; returns ``OUT`` (``a``'s row length) in the broadcast shape."""
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    A = np.ascontiguousarray(np.broadcast_to(a, shape + a.shape[-1:]).reshape(-1, a.shape[-1]))
    B = np.ascontiguousarray(np.broadcast_to(b, shape + b.shape[-1:]).reshape(-1, b.shape[-1]))
    out = np.empty_like(A)
    with np.errstate(all="ignore"):   # (non-finite inputs give non-finite outputs, as numpy's arithmetic)
        kernel(A, B, out)
    return out.reshape(shape + a.shape[-1:])


def _unit(a):
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def dexp_inverse(model: Model, xi, v) -> np.ndarray:
    """``d xi / dt`` when ``q(t) = q0 (+) xi(t)`` (:func:`integrate`) moves with the velocity ``v``:
    for a free-flyer or spherical joint ``v + [xi, v] / 2 + [xi, [xi, v]] / 12`` (the inverse of
    the right-trivialized differential of ``exp``, to the order a fourth-order Runge-Kutta-Munthe-Kaas
    step needs; ``[., .]`` the twists' bracket ``ad``), the others ``v``. ``xi, v (..., nv)``. The
    compiled arithmetic of the rollouts (:func:`screwdyn.algorithms.joints.joint_dexp_inverse`)."""
    _check(model)
    xi, v = _array(xi, model.nv, "xi"), _array(v, model.nv, "v")
    return _on_rows(lambda X, V, out: dexp_inverse_rows(model._kd, X, V, out), xi, v)


def difference(model: Model, q0, q1) -> np.ndarray:
    """``q1 (-) q0``: the velocity ``v (..., nv)`` with ``integrate(model, q0, v) == q1`` (a
    free-flyer's ``log(T(q0)^-1 T(q1))`` in its body frame, a spherical joint's
    ``log(R(q0)^T R(q1))`` with ``|omega| <= pi``, the others ``q1 - q0``), as Pinocchio's
    ``difference``."""
    _check(model)
    q0 = _array(q0, model.nq, "q0", model.nq == model.nv)
    q1 = _array(q1, model.nq, "q1", model.nq == model.nv)
    shape = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    out = np.empty(shape + (model.nv,))
    one_q, one_v, free_q, free_v, ball_q, ball_v = _blocks(model)
    out[..., one_v] = q1[..., one_q] - q0[..., one_q]
    if free_q.size:
        a, b = q0[..., free_q], q1[..., free_q]
        ra, rb = _unit(a[..., 3:]), _unit(b[..., 3:])
        w = quaternion_log(quaternion_multiply(quaternion_conjugate(ra), rb))
        dp = quaternion_rotate(quaternion_conjugate(ra), b[..., :3] - a[..., :3])
        out[..., free_v[:, :3]] = w
        out[..., free_v[:, 3:]] = _se3_v_inverse(w, dp)
    if ball_q.size:
        ra, rb = _unit(q0[..., ball_q]), _unit(q1[..., ball_q])
        out[..., ball_v] = quaternion_log(quaternion_multiply(quaternion_conjugate(ra), rb))
    return out


def random_configuration(model: Model, rng=None, size=None) -> np.ndarray:
    """A random configuration ``(nq,)`` (or ``(*size, nq)``), reproducible for a given NumPy
    ``Generator`` (or seed) ``rng``: one-DoF joints uniform between their limits (unlimited:
    revolute in ``[-pi, pi]``, prismatic in ``[-1, 1]`` m), quaternions uniform on the rotations
    (a normalised Gaussian 4-vector), a free-flyer's position uniform in its limits
    (``q_lower``/``q_upper`` where finite, else ``[-1, 1]`` m)."""
    _check(model)
    rng = np.random.default_rng(rng)
    shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    lo, hi = np.array(model.q_lower), np.array(model.q_upper)
    one_q, _, free_q, _, ball_q, _ = _blocks(model)
    one_types = model.joint_type[(model.joint_type != FREE_FLYER) & (model.joint_type != SPHERICAL)]
    default = np.where(one_types == 0, np.pi, 1.0)
    lo[one_q] = np.where(np.isfinite(lo[one_q]), lo[one_q], -default)
    hi[one_q] = np.where(np.isfinite(hi[one_q]), hi[one_q], default)
    pos = free_q[:, :3].ravel()
    lo[pos] = np.where(np.isfinite(lo[pos]), lo[pos], -1.0)
    hi[pos] = np.where(np.isfinite(hi[pos]), hi[pos], 1.0)
    q = rng.uniform(np.where(np.isfinite(lo), lo, 0.0), np.where(np.isfinite(hi), hi, 0.0), shape + (model.nq,))
    for idx in (free_q[:, 3:], ball_q):
        if idx.size:
            g = rng.standard_normal(shape + idx.shape)
            q[..., idx] = _unit(g)
    return q


# ---------------------------------------------------------------------------------- other layouts
def _free_swap(model, x, name):
    """``x (..., nv)`` with each free-flyer's (angular, linear) halves swapped (its own inverse)."""
    x = np.array(_array(x, model.nv, name), dtype=float)
    _, _, _, free_v, _, _ = _blocks(model)
    if free_v.size:
        x[..., free_v] = x[..., np.concatenate([free_v[:, 3:], free_v[:, :3]], axis=1)]
    return x


def _pinocchio_order(model, pin_model):
    """``(iq, iv)``: screwdyn's ``q[iq]`` and ``v[iv]`` are Pinocchio's ``q``, ``v`` (joints matched
    by name; Pinocchio's universe joint has none)."""
    iq, iv = np.empty(model.nq, dtype=np.int64), np.empty(model.nv, dtype=np.int64)
    names = {pin_model.names[k]: k for k in range(1, pin_model.njoints)}
    if set(names) != set(model.joint_names) or pin_model.nq != model.nq or pin_model.nv != model.nv:
        raise InputError("pin_model's joints are not this model's (joint names and sizes must match)")
    for j, name in enumerate(model.joint_names):
        pj = pin_model.joints[names[name]]
        if pj.nq != model.nqs[j] or pj.nv != model.nvs[j]:
            raise InputError(f"joint {name!r}: Pinocchio's has nq={pj.nq}, nv={pj.nv}; screwdyn's "
                             f"{model.nqs[j]}, {model.nvs[j]}")
        iq[pj.idx_q:pj.idx_q + pj.nq] = model.idx_qs[j] + np.arange(pj.nq)
        iv[pj.idx_v:pj.idx_v + pj.nv] = model.idx_vs[j] + np.arange(pj.nv)
    return iq, iv


def to_pinocchio(model: Model, q=None, v=None, pin_model=None):
    """``(q, v)`` in Pinocchio's layout (either may be None and is returned as None): ``q`` as it
    is, the free-flyers' velocity blocks ``(v, omega)``. ``v`` may be any vector of the tangent
    space or its dual: velocities, accelerations, torques (a free-flyer's wrench ``(f, n)``). With
    ``pin_model`` (a ``pinocchio.Model`` of the same joints), the joints are put in its order."""
    _check(model)
    order = _pinocchio_order(model, pin_model) if pin_model is not None else None
    if q is not None:
        q = _array(q, model.nq, "q", model.nq == model.nv)
        q = q[..., order[0]] if order is not None else np.array(q)
    if v is not None:
        v = _free_swap(model, v, "v")
        if order is not None:
            v = v[..., order[1]]
    return q, v


def from_pinocchio(model: Model, q=None, v=None, pin_model=None):
    """The inverse of :func:`to_pinocchio`: ``(q, v)`` in screwdyn's layout."""
    _check(model)
    if pin_model is not None:
        iq, iv = _pinocchio_order(model, pin_model)
        if q is not None:
            q_in = _array(q, model.nq, "q", model.nq == model.nv)
            q = np.empty_like(q_in)
            q[..., iq] = q_in
        if v is not None:
            v_in = _array(v, model.nv, "v")
            v = np.empty_like(v_in)
            v[..., iv] = v_in
    elif q is not None:
        q = np.array(_array(q, model.nq, "q", model.nq == model.nv))
    if v is not None:
        v = _free_swap(model, v, "v")
    return q, v


def _scalar_first(model, q, forward):
    q = np.array(q, dtype=float)
    _, _, free_q, _, ball_q, _ = _blocks(model)
    for idx in (free_q[:, 3:], ball_q):
        if idx.size:
            q[..., idx] = q[..., np.roll(idx, 1 if forward else -1, axis=1)]
    return q


def _free_rotations(model, q):
    _, _, free_q, _, _, _ = _blocks(model)
    return _unit(q[..., free_q[:, 3:]])


def to_mujoco(model: Model, q, v=None, force=None):
    """``(qpos, qvel, qfrc)`` in MuJoCo's layout for joints in ``model.joint_names`` order (None for
    what is not given): quaternions scalar first; a free joint's velocity ``(R v, omega)`` (the
    body origin's linear velocity in the world frame, the angular velocity in the body frame) and
    its generalized force ``(R f, n)`` for screwdyn's body twist ``(omega, v)`` and wrench ``(n, f)``."""
    _check(model)
    q = _array(q, model.nq, "q", model.nq == model.nv)
    qpos = _scalar_first(model, q, True)
    out = [qpos]
    _, _, _, free_v, _, _ = _blocks(model)
    for x, name in ((v, "v"), (force, "force")):
        if x is None:
            out.append(None)
            continue
        x = np.array(_array(x, model.nv, name), dtype=float)
        if free_v.size:
            rot = _free_rotations(model, q)
            ang, lin = x[..., free_v[:, :3]], x[..., free_v[:, 3:]]
            x[..., free_v[:, :3]] = quaternion_rotate(rot, lin)
            x[..., free_v[:, 3:]] = ang
        out.append(x)
    return tuple(out)


def from_mujoco(model: Model, qpos, qvel=None, qfrc=None):
    """The inverse of :func:`to_mujoco`: ``(q, v, force)`` in screwdyn's layout."""
    _check(model)
    q = _scalar_first(model, _array(qpos, model.nq, "qpos", model.nq == model.nv), False)
    out = [q]
    _, _, _, free_v, _, _ = _blocks(model)
    for x, name in ((qvel, "qvel"), (qfrc, "qfrc")):
        if x is None:
            out.append(None)
            continue
        x = np.array(_array(x, model.nv, name), dtype=float)
        if free_v.size:
            rot = quaternion_conjugate(_free_rotations(model, q))
            lin, ang = x[..., free_v[:, :3]], x[..., free_v[:, 3:]]
            x[..., free_v[:, :3]] = ang
            x[..., free_v[:, 3:]] = quaternion_rotate(rot, lin)
        out.append(x)
    return tuple(out)
