"""Public dynamics functions: argument checks, batching, and dispatch to the compiled kernels.

Every function takes one state ``(n,)`` or a batch ``(..., n)`` (arguments broadcast against
each other) and answers with matching leading dimensions. Equation convention::

    tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i  (+ friction, when asked)

Sizes and values (NaN, inf) are checked here, once, never inside the kernels' loops.

Contents: inverse dynamics (RNEA), the terms of the equation (``mass_matrix`` by CRBA,
``coriolis_matrix``, ``gravity_torques``, ``bias_torques``, ``mass_matrix_inverse``), forward
dynamics (ABA or CRBA + ``L^T D L``), energies, centre of mass and momentum, and kinematics
(``forward_kinematics``, ``jacobian`` in space / body / world-aligned reference, ``jdot_qd``,
``joint_torques_from_wrench``). Reflected rotor inertia (``model.armature``) is part of ``M``
everywhere; friction enters only through ``friction=True``.
"""
from __future__ import annotations

import importlib

import numba
import numpy as np

from .algorithms import rnea as _rnea
from .errors import InputError, ModelError
from .model import Model
from .spatial import Ad, inverse_transform


class _LazyKernels:
    """A kernel module, imported on first use. Each kernel module creates a dispatcher per
    kernel (about a millisecond each), and a program that only runs inverse dynamics need not
    wait for the others (``bench/startup.py``). The first attribute lookup imports the module
    (``importlib.import_module`` holds the import lock, so threads may race here) and puts the
    module itself in this module's globals under ``alias``: later lookups find it directly."""

    def __init__(self, module, alias):
        self._module, self._alias = module, alias

    def __getattr__(self, attr):
        module = importlib.import_module(f"screwdyn.algorithms.{self._module}")
        globals()[self._alias] = module
        return getattr(module, attr)


_aba = _LazyKernels("aba", "_aba")
_coriolis = _LazyKernels("coriolis", "_coriolis")
_crba = _LazyKernels("crba", "_crba")
_energy = _LazyKernels("energy", "_energy")
_kin = _LazyKernels("kinematics", "_kin")
_ltdl = _LazyKernels("ltdl", "_ltdl")

__all__ = [
    "inverse_dynamics", "friction_torques", "external_wrenches",
    "mass_matrix", "mass_matrix_inverse", "gravity_torques", "bias_torques", "coriolis_matrix",
    "forward_dynamics",
    "kinetic_energy", "potential_energy", "mechanical_energy", "center_of_mass", "momentum",
    "forward_kinematics", "body_poses", "frame_pose", "jacobian", "frame_velocity", "jdot_qd",
    "joint_torques_from_wrench",
]

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
    if (type(out) is not np.ndarray or out.dtype != _F64 or out.shape != shape or not out.flags.c_contiguous
            or not out.flags.writeable):
        raise InputError(f"{name} must be a writable C-contiguous float64 array of shape {shape}")
    return out


def _writable_c(out):
    """Whether ``out`` may go to a compiled entry point as it is (``_Entries``): a float64 ndarray,
    C-contiguous and writable (the entry points check neither; its shape is the kernels' to check)."""
    return type(out) is _ND and out.dtype is _F64 and out.flags.carray   # C-contiguous, aligned, writable


_ND = np.ndarray
_empty = np.empty      # module globals: the fast paths save an attribute lookup on each
_contiguous = np.ascontiguousarray
_NO_FEXT3 = _rnea.NO_FEXT.reshape(1, 1, 6)   # the batch kernels' stand-in for no external wrench


class _Entries:
    """The compiled entry points of the single-state kernels and of the batch kernels of the four
    main functions, each bound on first use.

    numba's dispatcher types every argument of every call (about 0.04 us an array); the compiled
    entry point of one signature skips that, but checks little: numba's unboxing refuses an
    object that is no numpy array (``TypeError``) and one whose items are not 8 bytes, but it
    would read an int64 array as floats and write past its records for a 2-D one. So a fast path
    calls it only with ``model._kd`` of an exact :class:`Model`, an output it made itself or a
    caller's ``out`` that is a writable, aligned, C-contiguous float64 ndarray of the right
    ``ndim`` (tested inline too: ``out.flags.carray``), and
    inputs it has tested inline (a helper call would cost more than the tests) for ``ndim == 1``
    and ``dtype is float64`` (``ndim == 2`` for a batch, ``(B, n)`` states). It does not test their
    type: what is no array fails a test (``AttributeError``) or the unboxing (``TypeError``), both
    caught (``_NOT_ARRAYS``), and goes the general path. Lengths, shapes and strides are the
    kernels' to check: they return ``NOT_FAST`` before any loop. On any code but 0 (``NOT_FAST``, a
    NaN or inf input) a single-state fast path goes on to the general path, which checks, copies,
    computes again or reports (only a failing call pays twice).
    The single-state fast paths call the ``*_fast`` twins of the kernels, compiled without numba's
    reference-counting runtime (:data:`.algorithms.work.NO_NRT`): their entry points take each
    array as it is, where with the runtime they make and free a record per array (UR5, minima of
    one run: ``mass_matrix`` 1.30 -> 1.02 us, ``inverse_dynamics`` 1.56 -> 1.26). They keep their
    work on the stack, and answer ``NOT_FAST`` for a model too large for it (over 681 bodies),
    which then takes the general path and its kernels with the runtime. A batch through its entry point
    skips the general path's broadcasting and copies and numba's typing of eight arguments: about
    8-9 us a call (UR5 at ``B = 2``: 16-17 -> 7.8 us).
    The batch signatures are the ones the general path compiles (writable C-contiguous arrays,
    ``fext`` the ``(1, 1, 6)`` no-wrench stand-in), so the two share one compiled kernel.
    """
    _C3 = numba.types.Array(numba.types.float64, 3, "C")
    _C2 = numba.types.Array(numba.types.float64, 2, "C")
    _C1 = numba.types.Array(numba.types.float64, 1, "C")
    _A1 = numba.types.Array(numba.types.float64, 1, "A")
    _S1 = numba.types.Array(numba.types.int64, 1, "C")
    _B = numba.types.boolean
    _SIGNATURES = {   # kernel name: (its module, the signature)
        "rnea": (_rnea, (_C2, _A1, _A1, _A1, _C1)),
        "crba": (_crba, (_C2, _A1, _C2)),
        "aba": (_aba, (_C2, _A1, _A1, _A1, _C1)),
        "coriolis": (_coriolis, (_C2, _A1, _A1, _C2)),
        "rnea_fast": (_rnea, (_C2, _A1, _A1, _A1, _C1)),
        "crba_fast": (_crba, (_C2, _A1, _C2)),
        "aba_fast": (_aba, (_C2, _A1, _A1, _A1, _C1)),
        "coriolis_fast": (_coriolis, (_C2, _A1, _A1, _C2)),
        "rnea_batch": (_rnea, (_C2, _C2, _C2, _C2, _C3, _B, _C2, _S1)),
        "crba_batch": (_crba, (_C2, _C2, _C3, _S1)),
        "aba_batch": (_aba, (_C2, _C2, _C2, _C2, _C3, _B, _C2, _S1)),
        "coriolis_batch": (_coriolis, (_C2, _C2, _C2, _C3, _S1)),
    }

    def __init__(self):
        for name in self._SIGNATURES:
            setattr(self, name, self._binder(name))

    def _binder(self, name):
        """A stand-in for the entry point that compiles it (or loads it from numba's cache) on its
        first call and puts it in its place. (A class ``__getattr__`` would do the same, but it makes
        every attribute lookup on the instance a slow one, and the fast paths make one a call.)"""
        def bind(*args):
            module, signature = self._SIGNATURES[name]
            entry = getattr(module, name).compile(signature)
            setattr(self, name, entry)
            return entry(*args)
        bind.__name__ = name
        return bind


_entry = _Entries()
_NOT_ARRAYS = (AttributeError, TypeError)   # what the fast paths' tests and the entry points raise for non-arrays


def _raise_nonfinite(code, index=None, names=_ARG_OF_CODE):
    where = "" if index is None else f" (batch index {index})"
    if code == 5:
        raise ModelError(f"the mass matrix is singular{where}: a joint moves neither mass nor rotational "
                         "inertia (give its subtree inertia or the joint an armature)")
    raise InputError(f"{names[code]} contains NaN or inf{where}")


def _try_batch(kernel, batch_shape, *args, names=_ARG_OF_CODE):
    """Run a batch kernel (or its compiled entry point, ``_Entries``) whose last argument is
    ``status (B,)``; the kernel spreads the states over numba's threads
    (:func:`.algorithms.work.thread_chunks`). Raise for the first state it flags (NaN/inf input,
    singular mass matrix). Returns False, with nothing computed, when the kernel answers NOT_FAST
    for a layout it does not index (only the fast paths pass such arrays), else True."""
    B = args[1].shape[0]   # every batch kernel takes (kd, states (B, ...), ...)
    status = np.zeros(B, dtype=np.int64)
    if kernel(*args, status):   # 0 or None
        return False
    if np.count_nonzero(status):   # (a C call, where status.any() reduces through a ufunc: 0.8 against 4 us at B = 1,000)
        _raise_batch_status(status, batch_shape, names)
    return True


def _run_batch(kernel, batch_shape, *args, names=_ARG_OF_CODE):
    """:func:`_try_batch` on the general path, whose arrays every kernel takes."""
    if not _try_batch(kernel, batch_shape, *args, names=names):
        raise AssertionError(f"{kernel.__name__} refused the layout of its arrays")


def _raise_batch_status(status, batch_shape, names=_ARG_OF_CODE):
    k = int(np.flatnonzero(status)[0])
    _raise_nonfinite(int(status[k]), tuple(int(x) for x in np.unravel_index(k, batch_shape)) if batch_shape else None,
                     names)


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
    finite = np.isfinite(qd)
    if not finite.all():
        where = ""
        if qd.ndim > 1:
            where = f" (batch index {tuple(int(i) for i in np.argwhere(~finite.all(axis=-1))[0])})"
        raise InputError("qd contains NaN or inf" + where)
    return model.damping * qd + model.friction * np.sign(qd)


def _batch_arrays(n, arrays, names):
    """Broadcast state arrays to one batch; returns (batch_shape, list of (B, n) C-contiguous arrays)."""
    shape = arrays[0].shape
    try:
        if any(a.shape != shape for a in arrays):   # (np.broadcast_shapes costs 5 us: only when needed)
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(f"{nm} {a.shape}" for nm, a in zip(names, arrays))
        raise InputError(f"state arrays do not broadcast to one batch: {shapes}") from None
    return shape[:-1], [_c_batch(a, shape, n) for a in arrays]


def _c_batch(a, shape, n):
    """``a`` broadcast to ``shape`` as a writable C-contiguous ``(B, n)`` array: the kernels are
    compiled for that one array type (a read-only view would compile another signature)."""
    if a.shape != shape:
        a = np.broadcast_to(a, shape)
    if not (a.flags.c_contiguous and a.flags.writeable):
        a = np.array(a, order="C")
    return a.reshape(-1, n)


def inverse_dynamics(model: Model, q, qd, qdd, f_ext=None, friction=False, out=None) -> np.ndarray:
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
    if type(model) is Model and f_ext is None and not friction:
        try:    # see _Entries: only float64 arrays of one state or a (B, n) batch reach the entry points
            if q.ndim == 1:
                if qd.ndim == 1 and qdd.ndim == 1 and q.dtype is _F64 and qd.dtype is _F64 and qdd.dtype is _F64:
                    if out is None:
                        tau = _empty(model.n)
                        if not _entry.rnea_fast(model._kd, q, qd, qdd, tau):
                            return tau
                    elif (type(out) is _ND and out.dtype is _F64 and out.ndim == 1 and out.flags.carray
                          and not _entry.rnea_fast(model._kd, q, qd, qdd, out)):
                        return out
            elif (q.ndim == qd.ndim == qdd.ndim == 2 and q.dtype is _F64 and qd.dtype is _F64 and qdd.dtype is _F64
                  and (out is None or _writable_c(out) and out.ndim == 2)):
                tau = _empty(q.shape) if out is None else out
                if _try_batch(_entry.rnea_batch, q.shape[:1], model._kd, q, qd, qdd, _NO_FEXT3, False, tau):
                    return tau
        except _NOT_ARRAYS:
            pass
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    qdd = _vector(qdd, n, "qdd")
    kd = model._kd
    if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1 and (f_ext is None or isinstance(f_ext, dict)):
        tau = _output(out, (n,))
        q, qd, qdd = _contiguous(q), _contiguous(qd), _contiguous(qdd)
        if f_ext is None:
            code = _entry.rnea(kd, q, qd, qdd, tau)
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
        _run_batch(_rnea.rnea_batch, batch_shape, kd, Q, QD, QDD, FE, f_ext is not None, tau.reshape(-1, n))
    if friction:
        tau += friction_torques(model, qd)
    return tau


# ---------------------------------------------------------------------------------------------
# The rest of the equations of motion: M, C, g, h, forward dynamics.
# ---------------------------------------------------------------------------------------------
_FD_NAMES = {1: "q", 2: "qd", 3: "tau", 4: "f_ext"}


def _single(*arrays):
    return all(a.ndim == 1 for a in arrays)


def _fext_single(model, f_ext):
    """``f_ext`` for one state as a C-contiguous ``(n, 6)`` array (or the no-wrench stand-in)."""
    if f_ext is None:
        return _rnea.NO_FEXT
    # always a writable C array: one compiled specialization of the kernels
    return np.require(external_wrenches(model, f_ext), np.float64, ["C", "W"])


def _fext_batch(model, f_ext, batch_shape):
    """``f_ext`` for a batch as a writable C-contiguous ``(B, n, 6)`` array."""
    if f_ext is None:
        return _NO_FEXT3
    return np.require(external_wrenches(model, f_ext, batch_shape), np.float64, ["C", "W"]).reshape(-1, model.n, 6)


def mass_matrix(model: Model, q, out=None) -> np.ndarray:
    """The joint-space mass matrix ``M(q)`` by the Composite Rigid Body Algorithm (``O(n d)``).

    ``M`` is symmetric positive definite (both triangles written) and includes the reflected rotor
    inertia ``armature = gear_ratio^2 rotor_inertia`` on its diagonal (note 004), as Pinocchio's
    ``crba``. ``q``: ``(n,)`` or ``(..., n)``; returns ``(..., n, n)``.
    """
    if type(model) is Model:
        try:
            if q.ndim == 1:
                if q.dtype is _F64:
                    if out is None:
                        M = _empty(model._nn)
                        if not _entry.crba_fast(model._kd, q, M):
                            return M
                    elif (type(out) is _ND and out.dtype is _F64 and out.ndim == 2 and out.flags.carray
                          and not _entry.crba_fast(model._kd, q, out)):
                        return out
            elif q.ndim == 2 and q.dtype is _F64 and (out is None or _writable_c(out) and out.ndim == 3):
                M = _empty((q.shape[0],) + model._nn) if out is None else out
                if _try_batch(_entry.crba_batch, q.shape[:1], model._kd, q, M):
                    return M
        except _NOT_ARRAYS:
            pass
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    if q.ndim == 1:
        M = _output(out, (n, n))
        code = _entry.crba(model._kd, _contiguous(q), M)
        if code:
            _raise_nonfinite(code)
        return M
    batch_shape, (Q,) = _batch_arrays(n, [q], ["q"])
    M = _output(out, batch_shape + (n, n))
    _run_batch(_crba.crba_batch, batch_shape, model._kd, Q, M.reshape(-1, n, n))
    return M


def mass_matrix_inverse(model: Model, q, out=None) -> np.ndarray:
    """``M(q)^{-1}`` (armature included): CRBA, then the sparse ``L^T D L`` factorization of
    ``M`` (Featherstone's branch-induced sparsity, no fill-in) and ``n`` solves; ``O(n^2 d)``.
    Exactly symmetric. ``q``: ``(n,)`` or ``(..., n)``; returns ``(..., n, n)``.
    Raises :class:`ModelError` when ``M`` is singular (a joint that moves no inertia)."""
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    if q.ndim == 1:
        Mi = _output(out, (n, n))
        code = _ltdl.minv(model._kd, q, Mi)
        if code:
            _raise_nonfinite(code)
        return Mi
    batch_shape, (Q,) = _batch_arrays(n, [q], ["q"])
    Mi = _output(out, batch_shape + (n, n))
    _run_batch(_ltdl.minv_batch, batch_shape, model._kd, Q, Mi.reshape(-1, n, n))
    return Mi


def gravity_torques(model: Model, q, out=None) -> np.ndarray:
    """Gravity torques ``g(q) = dU/dq`` (RNEA with ``qd = qdd = 0``; Pinocchio's
    ``computeGeneralizedGravity``). ``q``: ``(n,)`` or ``(..., n)``; returns ``(..., n)``."""
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    zero = np.zeros(n)
    if q.ndim == 1:
        tau = _output(out, (n,))
        code = _entry.rnea(model._kd, _contiguous(q), zero, zero, tau)
        if code:
            _raise_nonfinite(code)
        return tau
    return inverse_dynamics(model, q, zero, zero, out=out)


def bias_torques(model: Model, q, qd, f_ext=None, out=None) -> np.ndarray:
    """The bias torques ``h = C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i``: RNEA with ``qdd = 0``
    (Pinocchio's ``nonLinearEffects`` when ``f_ext`` is None), so that ``tau = M qdd + h``.

    ``f_ext`` as in :func:`inverse_dynamics`. Returns ``(..., n)``."""
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    if f_ext is None and q.ndim == 1 and qd.ndim == 1:
        tau = _output(out, (n,))
        code = _entry.rnea(model._kd, _contiguous(q), _contiguous(qd), np.zeros(n), tau)
        if code:
            _raise_nonfinite(code)
        return tau
    return inverse_dynamics(model, q, qd, np.zeros(n), f_ext, out=out)


def coriolis_matrix(model: Model, q, qd, out=None) -> np.ndarray:
    """The Coriolis matrix ``C(q, qd)`` of ``tau = M qdd + C qd + g``, built from the Christoffel
    symbols of ``M`` (notes 003, 004): ``C_kj = sum_i c_ijk qd_i``, ``c_ijk = 1/2 (dM_kj/dq_i +
    dM_ki/dq_j - dM_ij/dq_k)``. Hence ``Mdot - 2C`` is skew-symmetric and ``C qd`` is the
    velocity-product torque ``bias_torques - gravity_torques``.

    Computed by the recursive ``O(n d)`` algorithm of Echeandia & Wensing (2021), the one of
    Pinocchio's ``computeCoriolisMatrix`` (equal to it). Returns ``(..., n, n)``.
    """
    if type(model) is Model:
        try:
            if q.ndim == 1:
                if qd.ndim == 1 and q.dtype is _F64 and qd.dtype is _F64:
                    if out is None:
                        C = _empty(model._nn)
                        if not _entry.coriolis_fast(model._kd, q, qd, C):
                            return C
                    elif (type(out) is _ND and out.dtype is _F64 and out.ndim == 2 and out.flags.carray
                          and not _entry.coriolis_fast(model._kd, q, qd, out)):
                        return out
            elif (q.ndim == qd.ndim == 2 and q.dtype is _F64 and qd.dtype is _F64
                  and (out is None or _writable_c(out) and out.ndim == 3)):
                C = _empty((q.shape[0],) + model._nn) if out is None else out
                if _try_batch(_entry.coriolis_batch, q.shape[:1], model._kd, q, qd, C):
                    return C
        except _NOT_ARRAYS:
            pass
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    if _single(q, qd):
        C = _output(out, (n, n))
        code = _entry.coriolis(model._kd, _contiguous(q), _contiguous(qd), C)
        if code:
            _raise_nonfinite(code)
        return C
    batch_shape, (Q, QD) = _batch_arrays(n, [q, qd], ["q", "qd"])
    C = _output(out, batch_shape + (n, n))
    _run_batch(_coriolis.coriolis_batch, batch_shape, model._kd, Q, QD, C.reshape(-1, n, n))
    return C


_FD_METHODS = ("aba", "crba")


def forward_dynamics(model: Model, q, qd, tau, f_ext=None, method="aba", friction=False, out=None) -> np.ndarray:
    """Forward dynamics: ``qdd`` solving ``M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i^T F_ext_i = tau``
    (``- friction_torques(model, qd)`` on the right when ``friction=True``).

    ``method="aba"`` (default): the Articulated-Body Algorithm, ``O(n)``, as Pinocchio's ``aba``.
    ``method="crba"``: ``h`` by RNEA, ``M`` by CRBA, and ``M qdd = tau - h`` solved by the sparse
    ``L^T D L`` (Cholesky-type) factorization of ``M`` (note 002's route, Featherstone's ``FDcrb``).
    Both include the armature in ``M``.

    Parameters as :func:`inverse_dynamics`, with ``tau`` ``(n,)`` or ``(..., n)`` [N m, N] in place of
    ``qdd``. Returns ``qdd`` ``(..., n)``. Raises :class:`ModelError` when ``M`` is singular.
    """
    if type(model) is Model and f_ext is None and not friction and method == "aba":
        try:
            if q.ndim == 1:
                if qd.ndim == 1 and tau.ndim == 1 and q.dtype is _F64 and qd.dtype is _F64 and tau.dtype is _F64:
                    if out is None:
                        qdd = _empty(model.n)
                        if not _entry.aba_fast(model._kd, q, qd, tau, qdd):
                            return qdd
                    elif (type(out) is _ND and out.dtype is _F64 and out.ndim == 1 and out.flags.carray
                          and not _entry.aba_fast(model._kd, q, qd, tau, out)):
                        return out
            elif (q.ndim == qd.ndim == tau.ndim == 2 and q.dtype is _F64 and qd.dtype is _F64 and tau.dtype is _F64
                  and (out is None or _writable_c(out) and out.ndim == 2)):
                qdd = _empty(q.shape) if out is None else out
                if _try_batch(_entry.aba_batch, q.shape[:1], model._kd, q, qd, tau, _NO_FEXT3, False, qdd,
                              names=_FD_NAMES):
                    return qdd
        except _NOT_ARRAYS:
            pass
    _check_model(model)
    if method not in _FD_METHODS:
        raise InputError(f"method must be one of {_FD_METHODS}, got {method!r}")
    n = model.n
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    tau = _vector(tau, n, "tau")
    if friction:
        tau = tau - friction_torques(model, qd)
    kd = model._kd
    if _single(q, qd, tau) and (f_ext is None or isinstance(f_ext, dict) or np.ndim(f_ext) == 2):
        qdd = _output(out, (n,))
        q, qd, tau = _contiguous(q), _contiguous(qd), _contiguous(tau)
        if method == "aba":
            if f_ext is None:
                code = _entry.aba(kd, q, qd, tau, qdd)
            else:
                code = _aba.aba_fext(kd, q, qd, tau, _fext_single(model, f_ext), qdd)
        else:
            code = _ltdl.fd_crb(kd, q, qd, tau, _fext_single(model, f_ext), qdd, f_ext is not None)
        if code:
            _raise_nonfinite(code, names=_FD_NAMES)
        return qdd
    batch_shape, (Q, QD, TAU) = _batch_arrays(n, [q, qd, tau], ["q", "qd", "tau"])
    FE = _fext_batch(model, f_ext, batch_shape)
    qdd = _output(out, batch_shape + (n,))
    kernel = _aba.aba_batch if method == "aba" else _ltdl.fd_crb_batch
    _run_batch(kernel, batch_shape, kd, Q, QD, TAU, FE, f_ext is not None, qdd.reshape(-1, n), names=_FD_NAMES)
    return qdd


# ---------------------------------------------------------------------------------------------
# Energy, centre of mass, momentum.
# ---------------------------------------------------------------------------------------------
def _energy_terms(model, q, qd):
    """``(batch_shape, out (..., 11))``: KE, U, first moment (3), momentum about {0} (6)."""
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    if qd is None:
        qd = np.zeros(n)
    else:
        qd = _vector(qd, n, "qd")
    if _single(q, qd):
        out = np.empty(11)
        code = _energy.energy(model._kd, q, qd, out)
        if code:
            _raise_nonfinite(code)
        return (), out
    batch_shape, (Q, QD) = _batch_arrays(n, [q, qd], ["q", "qd"])
    out = np.empty(batch_shape + (11,))
    _run_batch(_energy.energy_batch, batch_shape, model._kd, Q, QD, out.reshape(-1, 11))
    return batch_shape, out


def _scalar(batch_shape, x):
    return float(x) if batch_shape == () else x.copy()


def kinetic_energy(model: Model, q, qd):
    """Kinetic energy ``T = 1/2 qd^T M(q) qd`` [J]: the links' ``1/2 V_i^T G_i V_i`` plus the rotors'
    ``1/2 armature qd^2``, as Pinocchio's ``computeKineticEnergy`` (which includes the armature for
    the joints a URDF gives; Pinocchio 4.1 omits it for ``RevoluteUnaligned`` joints).
    A float for one state, an array ``(...)`` for a batch."""
    batch_shape, e = _energy_terms(model, q, qd)
    return _scalar(batch_shape, e[..., 0])


def potential_energy(model: Model, q):
    """Gravitational potential energy ``U = -sum_i m_i g^T c_i(q)`` [J] (``c_i`` the centre of
    mass of body ``i`` in the base frame; zero at the base origin, as Pinocchio's
    ``computePotentialEnergy``), so that ``gravity_torques = dU/dq``."""
    batch_shape, e = _energy_terms(model, q, None)
    return _scalar(batch_shape, e[..., 1])


def mechanical_energy(model: Model, q, qd):
    """``kinetic_energy + potential_energy`` [J]: conserved by the unforced, frictionless dynamics."""
    batch_shape, e = _energy_terms(model, q, qd)
    return _scalar(batch_shape, e[..., 0] + e[..., 1])


def center_of_mass(model: Model, q) -> np.ndarray:
    """Centre of mass of the moving bodies in the base frame, ``(..., 3)`` [m]
    (Pinocchio's ``centerOfMass``; the fixed base's own inertia is not part of the model)."""
    _check_model(model)
    if model.total_mass <= 0.0:
        raise ModelError("center_of_mass: the model has no mass")
    _, e = _energy_terms(model, q, None)
    return e[..., 2:5] / model.total_mass


def momentum(model: Model, q, qd, *, about="base") -> np.ndarray:
    """Spatial momentum of the whole tree, ``(..., 6)`` as ``(angular, linear)``, in base-frame axes.

    ``about="base"``: angular momentum about the base frame's origin,
    ``sum_i [Ad_{T_{i,0}}]^T G_i V_i``; ``about="com"``: about the centre of mass (the centroidal
    momentum, Pinocchio's ``computeCentroidalMomentum`` with halves swapped). The linear part is
    ``m v_com`` either way. Rotor (armature) inertia is not included.
    """
    if about not in ("base", "com"):
        raise InputError(f"about must be 'base' or 'com', got {about!r}")
    batch_shape, e = _energy_terms(model, q, qd)
    P = e[..., 5:11].copy()
    if about == "com":
        if model.total_mass <= 0.0:
            raise ModelError("momentum(about='com'): the model has no mass")
        c = e[..., 2:5] / model.total_mass
        P[..., :3] -= np.cross(c, P[..., 3:])
    return P


# ---------------------------------------------------------------------------------------------
# Kinematics: poses, Jacobians, Jdot qd, J^T F.
# ---------------------------------------------------------------------------------------------
_REFERENCES = {"space": "SPACE", "world": "SPACE", "body": "BODY", "local": "BODY",   # constants of _kin
               "world_aligned": "WORLD_ALIGNED", "local_world_aligned": "WORLD_ALIGNED"}


def _reference(reference):
    try:
        return getattr(_kin, _REFERENCES[reference])   # (read here: the module loads on first use)
    except (KeyError, TypeError):
        raise InputError(f"reference must be one of {sorted(_REFERENCES)}, got {reference!r}") from None


def _frame_index(model, frame):
    try:
        return model.frame_index(frame)
    except ModelError as e:
        raise InputError(f"frame: {e}") from None


def _frame(model, frame):
    """``(body, T_body_frame)`` of a frame name or index."""
    k = _frame_index(model, frame)
    return int(model.frame_body[k]), model.frame_pose[k]


def _poses(model, q, fbody, fpose):
    _check_model(model)
    n = model.n
    q = _vector(q, n, "q")
    k = fbody.shape[0]
    if q.ndim == 1:
        out = np.empty((k, 4, 4))
        code = _kin.poses(model._kd, q, fbody, fpose, out)
        if code:
            _raise_nonfinite(code)
        return out
    batch_shape, (Q,) = _batch_arrays(n, [q], ["q"])
    out = np.empty(batch_shape + (k, 4, 4))
    _run_batch(_kin.poses_batch, batch_shape, model._kd, Q, fbody, fpose, out.reshape(-1, k, 4, 4))
    return out


def forward_kinematics(model: Model, q) -> np.ndarray:
    """Poses ``T_{0,f}`` in the base frame of every frame of the model (every URDF link, the base,
    added frames), in ``model.frame_names`` order: ``(..., k, 4, 4)``. See :func:`body_poses` for
    the moving bodies only."""
    _check_model(model)
    return _poses(model, q, model.frame_body, model.frame_pose)


def body_poses(model: Model, q) -> np.ndarray:
    """Poses ``T_{0,i}`` of the moving bodies (``model.link_names`` order, the frames on the joint
    axes), ``(..., n, 4, 4)``."""
    _check_model(model)
    n = model.n
    return _poses(model, q, np.arange(n, dtype=np.int64), np.broadcast_to(np.eye(4), (n, 4, 4)).copy())


def frame_pose(model: Model, q, frame) -> np.ndarray:
    """Pose ``T_{0,f}`` of one frame (name or index in ``model.frame_names``), ``(..., 4, 4)``."""
    _check_model(model)
    k = _frame_index(model, frame)
    return _poses(model, q, model.frame_body[k:k + 1], model.frame_pose[k:k + 1])[..., 0, :, :]


def jacobian(model: Model, q, frame, reference="space", out=None) -> np.ndarray:
    """The Jacobian ``J(q)`` ``(..., 6, n)`` of a frame, rows ``(omega, v)``, for ``reference``:

    * ``"space"``: ``J_s``, twists in the base frame (Modern Robotics' space Jacobian;
      ``J_s qd`` is the spatial twist of the frame's body, its ``v`` the velocity of the point at
      the base origin). Pinocchio's ``WORLD`` with halves swapped.
    * ``"body"``: ``J_b``, the frame's twist in the frame itself (MR's body Jacobian; Pinocchio ``LOCAL``).
    * ``"world_aligned"``: angular velocity and the velocity of the frame's origin, both in
      base-frame axes (Pinocchio ``LOCAL_WORLD_ALIGNED``).

    Columns of joints not on the path from the base to the frame are zero.
    """
    _check_model(model)
    n = model.n
    ref = _reference(reference)
    body, Tbf = _frame(model, frame)
    q = _vector(q, n, "q")
    if q.ndim == 1:
        J = _output(out, (6, n))
        code = _kin.jacobian(model._kd, q, body, Tbf, ref, J)
        if code:
            _raise_nonfinite(code)
        return J
    batch_shape, (Q,) = _batch_arrays(n, [q], ["q"])
    J = _output(out, batch_shape + (6, n))
    _run_batch(_kin.jacobian_batch, batch_shape, model._kd, Q, body, Tbf, ref, J.reshape(-1, 6, n))
    return J


def _frame_motion(model, q, qd, frame, reference):
    _check_model(model)
    n = model.n
    ref = _reference(reference)
    body, Tbf = _frame(model, frame)
    q = _vector(q, n, "q")
    qd = _vector(qd, n, "qd")
    if _single(q, qd):
        vel, acc = np.empty(6), np.empty(6)
        code = _kin.frame_motion(model._kd, q, qd, body, Tbf, ref, vel, acc)
        if code:
            _raise_nonfinite(code)
        return vel, acc
    batch_shape, (Q, QD) = _batch_arrays(n, [q, qd], ["q", "qd"])
    vel, acc = np.empty(batch_shape + (6,)), np.empty(batch_shape + (6,))
    _run_batch(_kin.frame_motion_batch, batch_shape, model._kd, Q, QD, body, Tbf, ref, vel.reshape(-1, 6),
               acc.reshape(-1, 6))
    return vel, acc


def frame_velocity(model: Model, q, qd, frame, reference="space") -> np.ndarray:
    """``J(q) qd`` ``(..., 6)``, ``(omega, v)``, for ``reference`` as in :func:`jacobian` (one
    forward pass, no Jacobian formed)."""
    return _frame_motion(model, q, qd, frame, reference)[0]


def jdot_qd(model: Model, q, qd, frame, reference="space") -> np.ndarray:
    """The acceleration bias ``Jdot(q, qd) qd`` ``(..., 6)`` of a frame, ``(omega, v)``: the frame's
    acceleration when ``qdd = 0`` (no gravity), so that ``d/dt (J qd) = J qdd + Jdot qd``.

    ``reference`` as in :func:`jacobian`. For ``"world_aligned"`` it is the classical
    acceleration ``(omega_dot, p_ddot)`` of the frame's origin (Pinocchio's
    ``getFrameClassicalAcceleration`` at ``qdd = 0``); for ``"body"`` and ``"space"`` it is the
    spatial acceleration (the rate of the body / space twist)."""
    return _frame_motion(model, q, qd, frame, reference)[1]


def joint_torques_from_wrench(model: Model, q, frame, wrench, reference="body") -> np.ndarray:
    """``tau = J(q)^T F`` ``(..., n)`` for a wrench ``F = (n, f)`` at ``frame``: the joint torques
    that balance ``F`` in statics, i.e. that make the frame exert ``F`` on the environment (note
    001's end-effector forces; note 002's ``J^T F_ext``).

    ``reference`` says how ``F`` is expressed, dual to :func:`jacobian`: ``"body"`` (default, as
    the ``f_ext`` dict of :func:`inverse_dynamics`): in the frame, about its origin; ``"space"``:
    in base axes, about the base origin; ``"world_aligned"``: in base axes, about the frame's
    origin. ``q`` ``(..., n)`` and ``wrench`` ``(..., 6)`` broadcast.
    """
    w = _vector(wrench, 6, "wrench")
    if not np.all(np.isfinite(w)):
        raise InputError("wrench contains NaN or inf")
    J = jacobian(model, q, frame, reference)
    if J.ndim == 2 and w.ndim == 1:
        return w @ J
    try:
        return np.einsum("...rj,...r->...j", J, w)
    except ValueError:
        raise InputError(f"q batch {J.shape[:-2]} and wrench {w.shape} do not broadcast") from None
