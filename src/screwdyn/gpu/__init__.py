"""screwdyn on an NVIDIA GPU (``pip install "screwdyn[gpu]"``: numba-cuda).

The batched functions take arrays on a GPU as they take NumPy arrays, and answer with an array of
the same kind on the same device: PyTorch tensors, CuPy arrays, JAX arrays and numba device
arrays (read in place through the CUDA array interface or DLPack)::

    q = torch.rand(1 << 20, 7, device="cuda", dtype=torch.float64)
    tau = screwdyn.inverse_dynamics(panda, q, qd, qdd)          # a CUDA tensor, computed on the GPU

Inverse dynamics (and ``gravity_torques``, ``bias_torques``), forward dynamics by ABA and the
mass matrix run on the GPU (:mod:`.drivers`: one thread per state, the CPU kernels' per-body
helpers compiled by numba-cuda); the other functions copy the states to the host, compute with
the CPU kernels and copy the result back (same kind, same device). :func:`rollout` steps many
states on the GPU (semi-implicit Euler or RK4).

Precision: float64 (agreeing with the CPU kernels to 1e-12 relative) unless the states are float32
(``dtype=torch.float32``, ``np.float32`` ...): then the state arrays, the work arrays and the
result are float32, while the helpers' arithmetic stays float64 wherever a model number (float64)
or a constant enters it, which is most of it. Error of float32, relative to the largest entry of
the float64 result: at most 1e-5 (stated bound); measured 5e-8 to 7e-7 for inverse and forward
dynamics and the mass matrix of the Panda, the UR5 and random trees in numba-cuda's simulator,
which computes in float64 and rounds at every store into a float32 array (``tests/test_gpu.py``).
A GPU rounds the same stores; ``bench/gpu.py`` measures it there.

A batch of fewer than :data:`MIN_BATCH` states on a GPU is computed on the CPU (the launch, about
5 us, and the status check would cost more than the work). The value is a setting, not yet
measured on a GPU (``bench/gpu.py`` measures the crossover).

The first launch of a kernel for a model size compiles it (1-3 s each with NVVM; not cached across
processes).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _gpu
from ..errors import InputError

__all__ = ["MIN_BATCH", "available", "rollout", "run"]

#: Batches on a GPU with fewer states than this are computed on the CPU (a setting; unmeasured).
MIN_BATCH = 4096


def available() -> bool:
    """Whether numba-cuda is installed and sees a GPU (or runs its simulator)."""
    try:
        from numba import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:   # noqa: BLE001 - a driver that fails to load is no GPU
        return False


def _torch_dtype(dtype):
    import torch
    return torch.float32 if dtype == np.float32 else torch.float64


def device_rows(x, shape, dtype):
    """``x`` broadcast to ``shape`` as a C-contiguous device array of ``dtype`` (a numba device
    array, and the object that owns its memory), read in place when it already is one."""
    from numba import cuda
    lib = _gpu.library(x) if _gpu.foreign(x) else "numpy"
    if lib == "torch":
        t = x.detach().to(_torch_dtype(dtype)).expand(shape).contiguous()
        return cuda.as_cuda_array(t), t
    if lib == "cupy":
        import cupy
        with cupy.cuda.Device(_gpu._device_id(x)):
            c = cupy.ascontiguousarray(cupy.broadcast_to(x.astype(dtype, copy=False), shape))
        return cuda.as_cuda_array(c), c
    if lib == "numba" and tuple(x.shape) == tuple(shape) and x.dtype == dtype and _gpu._c_contiguous(x):
        return x, x
    if lib == "jax":
        import jax.numpy as jnp
        j = jnp.broadcast_to(x.astype(dtype), shape)
        try:
            return cuda.as_cuda_array(j), j
        except (AttributeError, TypeError):
            pass
    h = np.ascontiguousarray(np.broadcast_to(np.asarray(_gpu.to_numpy(x), dtype=dtype), shape))
    d = cuda.to_device(h)
    return d, d


def empty_like_kind(x, shape, dtype):
    """A new device array of ``shape`` and ``dtype`` of ``x``'s kind on its GPU, and its numba view."""
    from numba import cuda
    lib = _gpu.library(x)
    if lib == "torch":
        import torch
        t = torch.empty(shape, dtype=_torch_dtype(dtype), device=x.device)
        return t, cuda.as_cuda_array(t)
    if lib in ("cupy", "jax"):
        try:
            import cupy
        except ImportError:
            cupy = None
        if cupy is not None:
            with cupy.cuda.Device(_gpu._device_id(x)):
                c = cupy.empty(shape, dtype=dtype)
            if lib == "jax":
                import jax.dlpack
                return _Deferred(lambda: jax.dlpack.from_dlpack(c)), cuda.as_cuda_array(c)
            return c, cuda.as_cuda_array(c)
    d = cuda.device_array(shape, dtype=dtype)
    if lib == "jax":   # without CuPy, through the host
        import jax
        return _Deferred(lambda: jax.device_put(d.copy_to_host(), next(iter(x.devices())))), d
    return d, d


class _Deferred:
    """A result made once the kernel has written its memory (a JAX array: immutable)."""

    def __init__(self, make):
        self.make = make


def _done(y):
    return y.make() if isinstance(y, _Deferred) else y


def run(kind, kernel, model, states, fext, first):
    """Kernel ``kind`` of :mod:`.drivers` on the GPU for the dispatch's ``kernel`` (see
    :mod:`screwdyn._gpu`): the result as ``first``'s kind, or None when the call is to go through
    the host (a batch under :data:`MIN_BATCH`, wrenches on a model with multi-DoF joints)."""
    from numba import cuda

    from ..dispatch import _raise_first, batch_shape_of
    from .drivers import launch
    entry = kernel.entry
    names = entry.states
    shapes = [tuple(s.shape) if hasattr(s, "shape") else np.shape(s) for s in states]
    for s, nm, k in zip(shapes, names, [model.nq if nm == "q" else model.n for nm in names]):
        if len(s) == 0 or s[-1] != k:
            raise InputError(f"{nm} must have shape ({k},) or (..., {k}) for this model, got shape {s}")
    batch_shape = batch_shape_of([np.empty(s[:-1] + (0,)) for s in shapes], names)
    B = math.prod(batch_shape)
    if B < MIN_BATCH or (fext is not None and not model._one_dof):
        return None
    dtype = np.float32 if all(_gpu._float32(s) for s in states if _gpu.foreign(s)) else np.float64
    keep, rows = [], []
    for s, nm in zip(states, names):
        k = model.nq if nm == "q" else model.n
        d, owner = device_rows(s, batch_shape + (k,), dtype)
        keep.append(owner)
        rows.append(d.reshape(B, k))
    if fext is None:
        fe, use_fe = cuda.to_device(np.zeros((1, model.n, 6), dtype=dtype)), False
    else:
        d, owner = device_rows(fext, batch_shape + (model.n, 6), dtype)
        keep.append(owner)
        fe, use_fe = d.reshape(B, model.n, 6), True
    per_state = (model.n, model.n) if kind == "crba" else (model.n,)
    y, view = empty_like_kind(first, batch_shape + per_state, dtype)
    status = cuda.device_array(B, dtype=np.int64)
    flat = view.reshape((B,) + per_state)
    args = (*rows, flat, status) if kind == "crba" else (*rows, fe, use_fe, flat, status)
    launch(kind, model, B, args, dtype)
    codes = status.copy_to_host()
    if np.count_nonzero(codes):
        _raise_first(codes, batch_shape, names)
    return _done(y)


def rollout(model, q, v, tau, dt, steps=1, method="rk4"):
    """``steps`` steps of ``dt`` [s] of ``x' = phi(x, tau)`` for every state, on the GPU, ``tau``
    held: ``method`` ``"rk4"`` (Runge-Kutta-Munthe-Kaas on free-flyer and spherical joints) or
    ``"semi_implicit_euler"``, the schemes of :func:`screwdyn.linearize` and of
    :func:`screwdyn.simulate` without its joint limits, friction and torque saturation (the same
    numbers as ``simulate(..., friction=False, joint_limits=False)`` to rounding).

    ``q (B, nq)``, ``v (B, nv)``, ``tau (B, nv)``: device arrays (any kind, see :mod:`screwdyn.gpu`) or
    NumPy arrays (copied to the GPU). Returns ``(q', v')`` of the kind of ``q``. Raises
    :class:`screwdyn.ModelError` / :class:`screwdyn.InputError` for a state whose mass matrix is
    singular or whose numbers are not finite, naming its batch index.
    """
    from numba import cuda

    from ..dispatch import _raise_first, check_model
    from .drivers import RK4, SEMI_IMPLICIT_EULER, launch
    check_model(model)
    methods = {"rk4": RK4, "semi_implicit_euler": SEMI_IMPLICIT_EULER}
    if method not in methods:
        raise InputError(f"method must be one of {tuple(methods)}, got {method!r}")
    if not (isinstance(dt, (int, float, np.floating)) and math.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be a positive number of seconds, got {dt!r}")
    B = int(q.shape[0]) if len(getattr(q, "shape", ())) == 2 else 0
    if B == 0 or tuple(q.shape) != (B, model.nq) or tuple(v.shape) != (B, model.n):
        raise InputError(f"q, v must have shapes (B, {model.nq}), (B, {model.n}); got {tuple(q.shape)}, "
                         f"{tuple(getattr(v, 'shape', ()))}")
    dtype = np.float32 if _gpu._float32(q) else np.float64
    like = q if _gpu.foreign(q) else None
    keep = []
    rows = []
    for x, k in ((q, model.nq), (v, model.n), (tau, model.n)):
        d, owner = device_rows(x, (B, k), dtype)
        rows.append(_copy(d))   # (stepped in place: the inputs stay as given)
        keep.append(owner)
    status = cuda.device_array(B, dtype=np.int64)
    launch("step", model, B, (rows[0], rows[1], rows[2], float(dt), int(steps), methods[method], status), dtype)
    codes = status.copy_to_host()
    if np.count_nonzero(codes):
        _raise_first(codes, (B,), ("q", "qd", "tau"))
    if like is None:
        return rows[0].copy_to_host(), rows[1].copy_to_host()
    out = []
    for d, k in ((rows[0], model.nq), (rows[1], model.n)):
        y, view = empty_like_kind(like, (B, k), dtype)
        view.copy_to_device(d)
        out.append(_done(y))
    return tuple(out)


def _copy(d):
    from numba import cuda
    c = cuda.device_array(d.shape, dtype=d.dtype)
    c.copy_to_device(d)
    return c
