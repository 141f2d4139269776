"""Arrays of other libraries through the batched functions: PyTorch tensors, JAX arrays, CuPy
arrays, numba device arrays, on the CPU or on an NVIDIA GPU. The result is of the kind of the
first such state argument, on its device, in its precision (float32 in, float32 out).

:mod:`screwdyn.dispatch` calls :func:`call_kernel` when a state is no NumPy array but exports
DLPack (``__dlpack__``) or the CUDA array interface (``__cuda_array_interface__``):

* on the CPU (a CPU tensor, a JAX CPU array): the states are read as NumPy arrays without a copy
  (DLPack), the CPU kernels compute, and the result goes back without a copy where the library
  can take NumPy memory (PyTorch; JAX copies);
* on a GPU, for inverse dynamics (with ``gravity_torques``, ``bias_torques``), forward dynamics
  (ABA) and the mass matrix, a batch of at least :data:`screwdyn.gpu.MIN_BATCH` states runs on the
  GPU (:mod:`screwdyn.gpu.drivers`), its arrays read in place (zero-copy) when they are
  C-contiguous, full-batch and of one floating type, else converted once on the GPU by their own
  library; every other function, and smaller batches, copy the states to the host, compute on the
  CPU and copy the result back to the device.

Nothing GPU-related is imported until such an array is passed: :func:`foreign` only looks at the
object's type.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import InputError

__all__ = ["foreign", "any_foreign", "call_kernel", "to_numpy", "like", "on_gpu"]

_ND = np.ndarray
_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13   # DLPack device types
GPU_KERNELS = {"rnea": "rnea", "aba": "aba", "crba": "crba"}   # dispatch key -> screwdyn.gpu.drivers kind


def foreign(x) -> bool:
    """Whether ``x`` is an array of another library (it exports DLPack or the CUDA array interface,
    and is no NumPy array or scalar)."""
    t = type(x)
    if t is _ND or t is float or t is int or t is list or t is tuple or isinstance(x, np.generic):
        return False
    return hasattr(t, "__dlpack_device__") or _cai(x) is not None or _numba_device(x)


def _numba_device(x) -> bool:
    """A numba device array (numba-cuda's simulator's has no CUDA array interface)."""
    return type(x).__module__.startswith("numba.cuda") and hasattr(x, "copy_to_host")


def any_foreign(*xs) -> bool:
    """Whether any of ``xs`` (the values of a dict too) is :func:`foreign`."""
    return any(foreign(x) or (type(x) is dict and any(foreign(v) for v in x.values())) for x in xs)


def library(x) -> str:
    """``"torch"``, ``"jax"``, ``"cupy"``, ``"numba"`` or ``"dlpack"`` (another): who made ``x``."""
    top = type(x).__module__.split(".")[0]
    if top in ("torch", "cupy", "numba"):
        return top
    if top in ("jax", "jaxlib"):
        return "jax"
    return "dlpack"


def on_gpu(x) -> bool:
    """Whether ``x``'s memory is on a GPU (its DLPack device is CUDA, or it has only the CUDA array
    interface, as a numba device array)."""
    if hasattr(type(x), "__dlpack_device__"):
        try:
            return int(x.__dlpack_device__()[0]) in (_CUDA, _CUDA_MANAGED)
        except (TypeError, ValueError, RuntimeError, BufferError):
            pass
    return _cai(x) is not None or _numba_device(x)


def _cai(x):
    try:
        return x.__cuda_array_interface__
    except (AttributeError, RuntimeError, TypeError):
        return None


def _device_id(x):
    if hasattr(type(x), "__dlpack_device__"):
        return int(x.__dlpack_device__()[1])
    return 0


def to_numpy(x, name="array") -> np.ndarray:
    """``x`` as a NumPy array: its memory itself on the CPU (DLPack), a copy from a GPU."""
    if not foreign(x):
        return x
    lib = library(x)
    if lib == "torch":
        x = x.detach()
        return x.numpy() if x.device.type == "cpu" else x.cpu().numpy()
    if on_gpu(x):
        if lib == "cupy":
            return x.get()
        if lib == "numba":
            return x.copy_to_host()
        return _numba_view(x).copy_to_host()
    try:
        return np.from_dlpack(x)
    except (TypeError, BufferError, RuntimeError, ValueError):
        try:
            return np.asarray(x)
        except (TypeError, ValueError) as e:
            raise InputError(f"{name}: a {type(x).__name__} that screwdyn cannot read: {e}") from None


def _numba_view(x):
    """A numba device array on ``x``'s GPU memory, without a copy (CUDA array interface, else DLPack)."""
    from numba import cuda
    if _cai(x) is not None:
        return cuda.as_cuda_array(x)
    import cupy   # (DLPack only: through CuPy)
    return cuda.as_cuda_array(cupy.from_dlpack(x))


def like(y, x):
    """The NumPy result ``y`` (or a tuple of them) as an array of ``x``'s kind, device and float type."""
    if isinstance(y, tuple):
        return tuple(like(v, x) for v in y)
    lib = library(x)
    dtype = np.float32 if _float32(x) else np.float64
    y = y.astype(dtype, copy=False)
    gpu = on_gpu(x)
    if lib == "torch":
        import torch
        t = torch.from_numpy(np.ascontiguousarray(y))
        return t.to(x.device) if gpu else t
    if lib == "jax":
        import jax
        return jax.device_put(y, next(iter(x.devices())))
    if lib == "cupy":
        import cupy
        with cupy.cuda.Device(_device_id(x)):
            return cupy.asarray(y)
    if lib == "numba":
        from numba import cuda
        return cuda.to_device(np.ascontiguousarray(y))
    return y


def _c_contiguous(x) -> bool:
    """Whether the device array ``x`` is C-contiguous (its strides those of its shape)."""
    stride, size = x.dtype.itemsize, x.dtype.itemsize
    for d, st in zip(reversed(x.shape), reversed(x.strides)):
        if d > 1 and st != stride:
            return False
        stride *= d
    return size > 0


def _float32(x) -> bool:
    return "float32" in str(getattr(x, "dtype", ""))


# ---------------------------------------------------------------------------------- the call
def call_kernel(kernel, model, states, shape=None, fext=None, params=(), out=None):
    """:func:`screwdyn.dispatch.call` where a state (or ``f_ext``) is :func:`foreign`."""
    from .dispatch import check_model, general
    check_model(model)
    first = next(x for x in (*states, fext) if foreign(x))
    if out is not None:
        raise InputError("out= takes a NumPy array; with arrays of another library the result is a new array of "
                         "that library")
    if fext is not None and not isinstance(fext, dict) and foreign(fext) and not on_gpu(fext):
        fext = to_numpy(fext, "f_ext")
    kind = GPU_KERNELS.get(kernel.key)
    if kind is not None and not params and on_gpu(first) and not isinstance(fext, dict):
        from . import gpu
        y = gpu.run(kind, kernel, model, states, fext, first)
        if y is not None:
            return y
    if isinstance(fext, dict):
        fext = {k: to_numpy(v, f"f_ext[{k!r}]") for k, v in fext.items()}
    elif fext is not None:
        fext = to_numpy(fext, "f_ext")
    host = [to_numpy(s, nm) for s, nm in zip(states, kernel.entry.states)]
    return like(general(kernel, model, host, shape, fext, params, None), first)


def batch_size(states):
    """The number of states of a call (the product of the broadcast batch axes)."""
    shapes = [tuple(getattr(s, "shape", np.shape(s)))[:-1] for s in states]
    try:
        return math.prod(np.broadcast_shapes(*shapes))
    except ValueError:
        return 0

