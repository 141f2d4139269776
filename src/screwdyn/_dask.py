"""Dask arrays through the batched functions: each function mapped over the chunks of the batch axes.

A function of states ``(..., n)`` computes each state on its own, so a batch split along its batch
axes is computed chunk by chunk with the same kernels (:mod:`screwdyn.dispatch` calls
:func:`call_kernel` when a state is a Dask array)::

    tau = inverse_dynamics(model, q, qd, qdd)     # q (B, n) a Dask array in chunks of B: tau is one, lazily
    tau[k0:k1] == inverse_dynamics(model, q[k0:k1].compute(), ...)   # each chunk, bit for bit

:func:`map_batches` is the one place that does it, for any function of per-state arrays: batch axes
broadcast as NumPy's do (a NumPy array beside Dask ones is one chunk that every chunk reads), the
chunks of the batch axes are aligned, the state (core) axes are put in one chunk, and the result is
a Dask array with its shape and dtype known before anything runs. An error in a chunk (a NaN in
``q``) is raised with the batch index in the whole array. A chunk that a scheduler runs on a pool
thread (Dask's threads, a distributed worker's) runs its kernels on that one thread: Dask runs
the chunks side by side, one per core (numba's threads on top would oversubscribe the cores); a
chunk computed on the main thread (the synchronous scheduler) uses all of numba's threads.

Nothing here imports Dask until a Dask array is given: :func:`is_dask` only looks at the object
(Dask is an optional extra, ``pip install screwdyn[dask]``).
"""
from __future__ import annotations

import contextlib
import math
import re
import sys
import threading
from functools import partial

import numba
import numpy as np

from .errors import InputError, ScrewdynError

__all__ = ["any_dask", "as_array", "call_kernel", "chunk_threads", "compute", "is_dask", "located", "map_batches",
           "vector"]


def is_dask(x) -> bool:
    """Whether ``x`` is a Dask collection (array, data frame, ...), without importing Dask: no object
    can be one before Dask was imported."""
    return "dask" in sys.modules and getattr(type(x), "__dask_graph__", None) is not None


def any_dask(*xs) -> bool:
    """Whether any of ``xs`` is a Dask collection (:func:`is_dask`); the values of dicts are looked at too."""
    if "dask" not in sys.modules:
        return False
    return any(is_dask(x) or (type(x) is dict and any(is_dask(v) for v in x.values())) for x in xs)


def as_array(x, name):
    """``x`` as a Dask array of float64 with known chunk sizes (a NumPy or other array: one chunk)."""
    import dask.array as da
    if is_dask(x) and not isinstance(x, da.Array):
        raise InputError(f"{name} is a {type(x).__name__}: pass a Dask array (a Dask data frame's "
                         "to_dask_array(lengths=True))")
    if not isinstance(x, da.Array):
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as e:
            raise InputError(f"{name} must be an array of numbers: {e}") from None
        return da.from_array(x, chunks=x.shape or ())
    if any(math.isnan(c) for c in x.shape):
        raise InputError(f"{name} is a Dask array of unknown chunk sizes {x.shape}: call its compute_chunk_sizes() "
                         "first (or a data frame's to_dask_array(lengths=True))")
    if x.dtype != np.float64:
        if not (np.issubdtype(x.dtype, np.number) or x.dtype == np.bool_) or np.issubdtype(x.dtype, np.complexfloating):
            raise InputError(f"{name} must be an array of numbers, got a Dask array of dtype {x.dtype}")
        x = x.astype(np.float64)
    return x


def vector(x, n, name, broadcast=True):
    """:func:`screwdyn.dispatch.vector` for a Dask array: checked (last axis ``n``, a scalar or a last
    axis of 1 broadcast to it unless ``broadcast`` is False) and float64, lazily."""
    import dask.array as da

    from .dispatch import shape_message
    x = as_array(x, name)
    if x.ndim == 0 or x.shape[-1] != n:
        if broadcast and (x.ndim == 0 or x.shape[-1] == 1):
            return da.broadcast_to(x.reshape(x.shape[:-1] + (1,)) if x.ndim else x.reshape(1), x.shape[:-1] + (n,))
        raise InputError(shape_message(x.shape, n, name, broadcast))
    return x


# ---------------------------------------------------------------------------------- mapping over chunks
_INDEX = re.compile(r"batch index \(([-\d, ]*)\)")


class _Chunk:
    """``func`` on one chunk: NumPy blocks of the arrays in, the result (several packed in one
    array) out; the last ``len(batch)`` blocks are the positions along each batch axis, for
    errors. A picklable object: distributed workers receive it."""

    def __init__(self, func, nb, cores):
        self.func, self.nb, self.cores = func, nb, cores

    def __call__(self, *blocks):
        nb = self.nb
        arrays, where = [_one(b) for b in blocks[:len(blocks) - nb]], blocks[len(blocks) - nb:]
        try:
            with chunk_threads():
                y = self.func(*arrays)
        except ScrewdynError as e:
            raise located(e, [int(p[0]) if p.size else 0 for p in where]) from None
        if self.cores is None:
            return y
        return np.concatenate([np.reshape(v, v.shape[:v.ndim - len(c)] + (-1,)) for v, c in zip(y, self.cores)],
                              axis=-1)


def _one(block):
    """The block of an array whose core axes are one chunk: Dask hands it in a list per core axis
    (``concatenate=False``, which spares the copy that concatenating one block costs)."""
    while type(block) is list:
        block = block[0]
    return block


@contextlib.contextmanager
def chunk_threads():
    """The kernels of a chunk run on one thread when a scheduler's pool thread runs it (Dask runs
    the chunks side by side, one per core: numba's threads on top would oversubscribe the cores),
    on all of numba's threads on the main thread (the synchronous scheduler)."""
    if threading.current_thread() is threading.main_thread():
        yield
        return
    threads = numba.get_num_threads()
    numba.set_num_threads(1)   # (for this thread only)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


def located(error, starts):
    """``error`` (raised by a chunk that starts at batch index ``starts``) with its batch index
    counted in the whole array."""
    message = str(error)
    found = _INDEX.search(message)
    if found:
        index = [int(i) for i in found.group(1).replace(" ", "").split(",") if i]
        whole = tuple(s + i for s, i in zip(starts[len(starts) - len(index):], index))
        message = message[:found.start()] + f"batch index {whole}" + message[found.end():]
    else:
        message += f" (in the chunk at batch index {tuple(starts)})"
    return type(error)(message)


def map_batches(func, arrays, core_ndims, out_cores, *, name="screwdyn"):
    """``func`` mapped over the chunks of the batch axes of ``arrays``: a Dask array, lazily.

    Parameters
    ----------
    func : called as ``func(*blocks)`` with a NumPy block of each array: the chunk's batch axes (of
        length 1 where that array broadcasts) and all its core axes. Returns an array
        ``(*chunk_batch, *out_core)``, or a tuple of them when ``out_cores`` is a tuple of shapes.
        It must pickle (a module-level function, or a ``functools.partial`` of one) to run on
        distributed workers.
    arrays : NumPy or Dask arrays ``(*batch_k, *core_k)``; their batch shapes broadcast as NumPy's.
    core_ndims : the number of core (trailing, per-state) axes of each array: 1 for a state
        ``(..., n)``, 2 for wrenches ``(..., n, 6)``. Core axes are put in one chunk.
    out_cores : the shape of ``func``'s result for one state (``(n, n)`` for a mass matrix), or a
        tuple of such shapes.

    Returns a Dask array ``(*batch, *out_core)`` of float64 (a tuple of them), whose batch axes
    are chunked as the inputs' (aligned where they differ). Errors of ``func`` that name a
    batch index are raised with the index in the whole batch.
    """
    import dask.array as da
    from dask.base import tokenize

    arrays = [as_array(a, f"argument {k}") for k, a in enumerate(arrays)]
    batches = [a.shape[:a.ndim - c] for a, c in zip(arrays, core_ndims)]
    try:
        batch = np.broadcast_shapes(*batches)
    except ValueError:
        raise InputError(f"the batch shapes {batches} do not broadcast") from None
    nb = len(batch)
    batch_ind = tuple(f"b{i}" for i in range(nb))
    args = []
    for k, (a, c) in enumerate(zip(arrays, core_ndims)):
        if a.ndim - c < nb:
            a = a.reshape((1,) * (nb - a.ndim + c) + a.shape)
        if c and any(len(ch) > 1 for ch in a.chunks[a.ndim - c:]):
            a = a.rechunk({ax: -1 for ax in range(a.ndim - c, a.ndim)})
        args += [a, batch_ind + tuple(f"c{k}.{j}" for j in range(c))]
    chunkss, aligned = da.unify_chunks(*args)   # the batch chunks aligned, as Dask aligns them
    args[::2] = aligned
    for i in range(nb):   # positions along each batch axis, for errors: a chunk gets its own
        args += [da.arange(batch[i], chunks=(chunkss[batch_ind[i]],)), (batch_ind[i],)]
    multi = len(out_cores) > 0 and all(isinstance(c, tuple) for c in out_cores)
    cores = tuple(tuple(c) for c in out_cores) if multi else (tuple(out_cores),)
    core = (sum(math.prod(c) for c in cores),) if multi else cores[0]
    out_ind = batch_ind + tuple(f"o{j}" for j in range(len(core)))
    token = tokenize(func, *args[::2], cores)
    y = da.blockwise(_Chunk(func, nb, cores if multi else None), out_ind, *args,
                     new_axes={f"o{j}": s for j, s in enumerate(core)}, dtype=np.float64,
                     meta=np.empty((0,) * len(out_ind)), concatenate=False, name=f"{name}-{token}")
    if not multi:
        return y
    parts, start = [], 0
    for c in cores:
        size = math.prod(c)
        parts.append(y[..., start:start + size].reshape(batch + c))
        start += size
    return tuple(parts)


# ---------------------------------------------------------------------------------- the kernels
def _kernel_chunk(kernel, model, shape, params, nstates, *blocks):
    from .dispatch import general
    fext = blocks[nstates] if len(blocks) > nstates else None
    return general(kernel, model, blocks[:nstates], shape, fext, params, None)


def _wrench_chunk(model, names, *wrenches):
    from .dispatch import external_wrenches
    shape = np.broadcast_shapes(*(w.shape[:-1] for w in wrenches))
    return external_wrenches(model, dict(zip(names, wrenches)), shape)


def _meta(x):
    """A NumPy stand-in for ``x`` with no states: its last axis, a batch of 0 (or ``x`` itself when
    it has no axes)."""
    return np.empty((0,) + tuple(x.shape[-1:])) if x.ndim else np.empty(())


def call_kernel(kernel, model, states, shape=None, fext=None, params=(), out=None):
    """:func:`screwdyn.dispatch.call` where a state or ``f_ext`` is a Dask array: checked now, by
    the dispatch's own checks on stand-ins without states (so the shapes each argument takes are
    the dispatch's), then the kernel mapped over the chunks (:func:`map_batches`)."""
    from .dispatch import batch_shape_of, check_model, general
    check_model(model)
    if out is not None:
        raise InputError("out= takes a NumPy array: with Dask arrays the result is a new Dask array "
                         "(dask.array.store writes it where you want)")
    from .dispatch import q_broadcasts
    names = kernel.entry.states
    spread = q_broadcasts(model)
    states = [vector(s, model.nq if nm == "q" else model.n, nm, spread or nm != "q") for s, nm in zip(states, names)]
    metas = [_meta(s) for s in states]
    fmeta = None
    if isinstance(fext, dict):
        from .dispatch import external_wrenches
        fnames = list(fext)
        one = external_wrenches(model, {nm: np.zeros(6) for nm in fnames})   # an unknown name raises here
        fext = map_batches(partial(_wrench_chunk, model, fnames), [fext[nm] for nm in fnames], [1] * len(fnames),
                           one.shape, name="screwdyn-f_ext")
    if fext is not None:
        fext = as_array(fext, "f_ext")
        fmeta = np.empty((0,) + fext.shape[-2:]) if fext.ndim >= 2 else np.empty(fext.shape)
    try:
        ys = general(kernel, model, metas, shape, fmeta, params, None)
    except InputError as e:
        raise _with_shapes(e, names, states, metas, fext, fmeta) from None
    batch_shape_of(states + ([fext[..., 0]] if fext is not None else []), list(names) + ["f_ext"])
    ys = ys if isinstance(ys, tuple) else (ys,)
    cores = tuple(y.shape[1:] for y in ys)
    arrays = states + ([fext] if fext is not None else [])
    return map_batches(partial(_kernel_chunk, kernel, model, shape, params, len(states)), arrays,
                       [1] * len(states) + ([2] if fext is not None else []),
                       cores if len(cores) > 1 else cores[0], name=f"screwdyn-{kernel.key}")


def _with_shapes(error, names, states, metas, fext, fmeta):
    """A shape error of the stand-ins, with the shapes of the arrays given."""
    message = str(error)
    for nm, s, m in list(zip(names, states, metas)) + [("f_ext", fext, fmeta)]:
        if s is not None and message.startswith(nm + " "):
            message = message.replace(f"got shape {m.shape}", f"got shape {s.shape}")
    return type(error)(message)


# ---------------------------------------------------------------------------------- computing
def compute(*collections):
    """``dask.compute(*collections)``, with a progress bar when the Dask configuration says
    ``screwdyn.progress: true`` (``with dask.config.set({"screwdyn.progress": True}): ...``): the
    distributed client's when one is the default, else Dask's local ``ProgressBar``."""
    import dask
    if not dask.config.get("screwdyn.progress", False):
        return dask.compute(*collections)
    client = None
    if "distributed" in sys.modules:
        from distributed import default_client
        try:
            client = default_client()
        except ValueError:
            client = None
    if client is not None:
        from distributed import progress
        futures = client.compute(list(collections))
        progress(futures)   # (a text bar in a terminal, a widget in a notebook)
        return tuple(client.gather(futures))
    from dask.diagnostics import ProgressBar
    with ProgressBar(out=sys.stderr):
        return dask.compute(*collections)
