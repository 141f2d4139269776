"""Public dynamics functions: argument checks, batching, and dispatch to the compiled kernels.

Every function takes one state ``(n,)`` or a batch ``(..., n)`` (arguments broadcast against
each other) and answers with matching leading dimensions. Equation convention::

    tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i  (+ friction, when asked)

Sizes and values (NaN, inf) are checked here, once, never inside the kernels' loops.
"""
from __future__ import annotations

import numba
import numpy as np

from .algorithms import rnea as _rnea
from .errors import InputError, ModelError
from .model import Model
from .spatial import Ad, inverse_transform

__all__ = ["inverse_dynamics", "friction_torques", "external_wrenches"]

_F64 = np.dtype(np.float64)
_ARG_OF_CODE = {1: "q", 2: "qd", 3: "qdd", 4: "f_ext"}


def _vector(x, n, name) -> np.ndarray:
    """``x`` as a float64 array whose last axis has length ``n``."""
    if type(x) is not np.ndarray or x.dtype is not _F64:
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as e:
            raise InputError(f"{name} must be an array of numbers: {e}") from None
    if x.ndim == 0 or x.shape[-1] != n:
        raise InputError(f"{name} must have shape ({n},) or (..., {n}) for this model, got shape {x.shape}")
    return x


def _check_model(model):
    if not isinstance(model, Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")


def _output(out, shape, name="out") -> np.ndarray:
    if out is None:
        return np.empty(shape)
    if type(out) is not np.ndarray or out.dtype != _F64 or out.shape != shape or not out.flags.c_contiguous:
        raise InputError(f"{name} must be a C-contiguous float64 array of shape {shape}")
    return out


def _chunks(B):
    """Work units for a batch of ``B`` states: a few per numba thread (numba's settings decide)."""
    return min(B, 8 * numba.get_num_threads())


def _raise_nonfinite(code, index=None):
    where = "" if index is None else f" (batch index {index})"
    raise InputError(f"{_ARG_OF_CODE[code]} contains NaN or inf{where}")


def _raise_batch_status(status, batch_shape):
    k = int(np.flatnonzero(status)[0])
    _raise_nonfinite(int(status[k]), np.unravel_index(k, batch_shape) if batch_shape else None)


def external_wrenches(model: Model, f_ext, batch_shape=()) -> np.ndarray:
    """``f_ext`` as an array ``(*batch_shape, n, 6)`` of wrenches ``(n, f)`` on each body, in its frame.

    ``f_ext`` is either that array (broadcastable) or a dict ``{frame_name: wrench}`` where the
    wrench ``(6,)`` or ``(..., 6)`` is expressed in the named frame (any link, merged fixed links
    included); it is moved to the carrying body's frame by ``F_b = [Ad_{T_f_b}]^T F_f``.
    A wrench on a frame fixed to the base does not load any joint and is dropped.
    """
    n = model.n
    if isinstance(f_ext, dict):
        out = np.zeros(tuple(batch_shape) + (n, 6))
        for name, w in f_ext.items():
            try:
                k = model.frame_index(name)
            except ModelError:
                raise InputError(f"f_ext: unknown link or frame {name!r}; known: {list(model.frame_names)}") from None
            w = _vector(w, 6, f"f_ext[{name!r}]")
            b = model.frame_body[k]
            if b < 0:
                continue
            try:
                out[..., b, :] += w @ Ad(inverse_transform(model.frame_pose[k]))
            except ValueError:
                raise InputError(f"f_ext[{name!r}] has shape {w.shape}, which does not broadcast to the batch "
                                 f"shape {tuple(batch_shape)}") from None
        return out
    f = _vector(f_ext, 6, "f_ext")
    if f.ndim < 2 or f.shape[-2] != n:
        raise InputError(f"f_ext must have shape ({n}, 6) or (..., {n}, 6) for this model, got shape {f.shape}")
    try:
        return np.broadcast_to(f, tuple(batch_shape) + (n, 6))
    except ValueError:
        raise InputError(f"f_ext shape {f.shape} does not broadcast to the batch shape {tuple(batch_shape)}") from None


def friction_torques(model: Model, qd) -> np.ndarray:
    """Joint friction ``tau_f = b qd + f_c sign(qd)``: viscous ``model.damping`` and Coulomb
    ``model.friction`` (URDF ``<dynamics damping friction>``). Same shape as ``qd``."""
    _check_model(model)
    qd = _vector(qd, model.n, "qd")
    if not np.all(np.isfinite(qd)):
        raise InputError("qd contains NaN or inf")
    return model.damping * qd + model.friction * np.sign(qd)


def _batch_arrays(n, arrays, names):
    """Broadcast state arrays to one batch; returns (batch_shape, list of (B, n) C-contiguous arrays)."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(f"{nm} {a.shape}" for nm, a in zip(names, arrays))
        raise InputError(f"state arrays do not broadcast to one batch: {shapes}") from None
    flat = [np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1, n) for a in arrays]
    return shape[:-1], flat


def inverse_dynamics(model: Model, q, qd, qdd, f_ext=None, *, friction=False, out=None) -> np.ndarray:
    """Inverse dynamics by the Recursive Newton-Euler Algorithm (note 000).

    ``tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i``, with the reflected rotor inertia
    (armature) in ``M``; ``+ friction_torques(model, qd)`` when ``friction=True``.

    Parameters
    ----------
    q, qd, qdd : ``(n,)`` or ``(..., n)`` joint positions [rad, m], velocities and accelerations,
        ordered as ``model.joint_names``; they broadcast against each other.
    f_ext : ``(..., n, 6)`` wrenches ``(n, f)`` the environment exerts on each body, in that body's
        frame, or a dict ``{link_or_frame_name: wrench in that frame}``.
    out : optional preallocated result ``(..., n)``.

    Returns ``tau`` ``(..., n)`` [N m, N].
    """
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    qdd = _vector(qdd, n, "qdd")
    kd = model._kd
    if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1 and (f_ext is None or isinstance(f_ext, dict)):
        tau = _output(out, (n,))
        if f_ext is None:
            code = _rnea.rnea(kd, q, qd, qdd, tau)
        else:
            code = _rnea.rnea_fext(kd, q, qd, qdd, external_wrenches(model, f_ext), tau)
        if code:
            _raise_nonfinite(code)
    else:
        batch_shape, (Q, QD, QDD) = _batch_arrays(n, (q, qd, qdd), ("q", "qd", "qdd"))
        if f_ext is not None:
            fext = external_wrenches(model, f_ext, batch_shape)
            if fext.shape[:-2] != batch_shape:  # f_ext brought extra batch axes
                batch_shape = fext.shape[:-2]
                _, (Q, QD, QDD) = _batch_arrays(n, (np.broadcast_to(q, batch_shape + (n,)), qd, qdd),
                                                ("q", "qd", "qdd"))
            FE = np.ascontiguousarray(fext).reshape(-1, n, 6)
        else:
            FE = _rnea.NO_FEXT.reshape(1, 1, 6)
        tau = _output(out, batch_shape + (n,))
        status = np.zeros(Q.shape[0], dtype=np.int64)
        _rnea.rnea_batch(kd, Q, QD, QDD, FE, f_ext is not None, tau.reshape(-1, n), status, _chunks(Q.shape[0]))
        if status.any():
            _raise_batch_status(status, batch_shape)
    if friction:
        tau += friction_torques(model, qd)
    return tau
