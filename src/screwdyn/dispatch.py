"""The one place that calls the compiled kernels: it checks the inputs, picks a kernel's one-state
or batch entry point (:mod:`screwdyn.algorithms.entry`), handles ``out=``, and turns the kernels'
status codes into exceptions.

A call with one state ``(n,)`` of float64 vectors goes straight to the one-state entry point (the
*fast path*: a few attribute tests, no copy); a ``(B, n)`` float64 batch straight to the batch entry
point, which checks its arrays' layout itself. Anything else (lists, other dtypes, strides,
broadcasting, leading batch axes, ``f_ext`` given as a dict) takes the general path, which checks,
converts and copies once, then calls the same entry points. Sizes and values are checked here,
never in the kernels' loops; a NaN or inf is found by the kernel (``status[k]``) and reported here
with the argument's name and the batch index.

Entry points are compiled on first use, or loaded from numba's cache (``pip install`` compiles the
main ones into the package: :mod:`screwdyn.precompile`). When a first call has to compile, it says so
once, on stderr. A model whose work does not fit the stack of numba's threads runs its states one at a time,
on the main thread's stack or on a thread with a stack made for it (:func:`on_large_stack`).
"""
from __future__ import annotations

import importlib
import math
import os
import threading

import numpy as np

from . import _dask, _gpu
from .algorithms.target import MODE, cache_has, compile_note, say
from .algorithms.status import Status
from .algorithms.work import STACK_LIMIT
from .errors import InputError, ModelError, TooLargeError
from .model import Model
from .spatial import Ad, inverse_transform

__all__ = ["Kernel", "kernels", "call", "vector", "q_broadcasts", "check_model", "output", "external_wrenches",
           "raise_status", "check_room",
           "finite_result", "statuses"]

F64 = np.dtype(np.float64)
_ND = np.ndarray
_empty = np.empty
_NO_FEXT = np.zeros((1, 6))          # stands in for f_ext when there is none (the kernels do not read it)
_NO_FEXT3 = _NO_FEXT.reshape(1, 1, 6)
_NOT_ARRAYS = (AttributeError, TypeError, KeyError, ValueError)   # what the fast paths' tests and the entry
#   points raise for what is no array (and _dict_wrenches for a name or wrench it cannot read)
_FAST_ROWS = 1 << 16   # a batch of more states takes the general path, which checks that its result fits in memory
_ROOMY = 64 << 20      # bytes a call may allocate without asking how much memory is available


# ---------------------------------------------------------------------------------- the entry points
class Kernel:
    """An algorithm's entry points (``ENTRIES[key]`` of ``screwdyn.algorithms.<module>``), imported
    and bound on first use: importing every kernel module up front would make ``import screwdyn``
    create all their dispatchers."""

    _said = False                     # the compile note is said once per process
    _lock = threading.Lock()

    def __init__(self, module, key):
        self.module, self.key = module, key
        self._entry = None

    def __reduce__(self):   # by name: what is compiled stays behind (a Dask worker loads its own)
        return Kernel, (self.module, self.key)

    @property
    def entry(self):
        if self._entry is None:
            self._entry = importlib.import_module(f"screwdyn.algorithms.{self.module}").ENTRIES[self.key]
        return self._entry

    def call(self, *args, **kwargs):
        """``call(model, *states, fext=None, out=None, params=(), shape=None)``: the kernel on
        ``states`` (see :func:`call`). The first use writes this kernel's fast path in place of this
        method (:func:`_fast_path`)."""
        self.call = _fast_path(self)
        return self.call(*args, **kwargs)

    def one(self, *args):
        """The one-state entry point (see :mod:`screwdyn.algorithms.entry`); the first call binds it
        in place of this method."""
        entry = self.bind("one")
        self.one = entry
        return entry(*args)

    def batch(self, lanes):
        """The batch entry point compiled for ``lanes`` lanes (None: a kernel without lanes)."""
        compiled = self.entry.compiled.get(("batch", lanes))
        return compiled if compiled is not None else self.bind("batch", lanes)

    def bind(self, which, lanes=None):
        """The compiled entry point of a signature, from numba's cache or compiled now."""
        entry = self.entry
        key = (which, lanes)
        compiled = entry.compiled.get(key)
        if compiled is None:
            dispatcher = entry.one if which == "one" else entry.batch
            if not hasattr(dispatcher, "compile"):   # NUMBA_DISABLE_JIT=1: the kernel is its Python function
                compiled = entry.compiled[key] = dispatcher
                return compiled
            signature = entry.signature(which, lanes)
            if not Kernel._said and not cache_has(dispatcher, signature):
                with Kernel._lock:
                    if not Kernel._said:
                        Kernel._said = True
                        say(f"compiling {entry.name} on its first use (seconds; each function's first call "
                            f"compiles what it uses, once: 'screwdyn compile' does all ahead; {compile_note()}; "
                            f"numba mode {MODE})")
            compiled = entry.compiled[key] = dispatcher.compile(signature)
        return compiled

    def lanes(self, n):
        """The lanes a batch runs with for a model of ``n`` bodies: the entry's LANES when they fit
        STACK_LIMIT, else the most of LANES / 2, LANES / 4, ..., MIN_LANES that fit (a floating
        Talos, 50 bodies: the mass matrix 8 of its 16), else 1 (each count compiles on first use;
        None for a kernel without lanes); 0 when one lane does not fit, and its states go one at
        a time (:func:`on_large_stack`)."""
        entry = self.entry
        per_lane = entry.work_floats(n)
        if per_lane > STACK_LIMIT:
            return 0
        if not entry.lanes:
            return None
        lanes = entry.lanes
        while lanes > 1 and lanes * per_lane > STACK_LIMIT:
            lanes = fewer_lanes(lanes)
        return lanes

    def lanes_for(self, model):
        """:meth:`lanes` for ``model``, worked out once per model."""
        key = ("lanes", self.key)
        lanes = model._derived.get(key, -1)
        if lanes == -1:
            lanes = model._derived[key] = self.lanes(model.n)
        return lanes

    def run_batch(self, args, lanes):
        """The batch entry point on ``args`` (outputs and ``status`` last), one batch at a time: a
        batch runs on all of numba's threads and releases the GIL, and numba's workqueue threading
        layer (where neither TBB nor OpenMP is installed) ends the process when two Python threads
        enter a parallel region at once."""
        with _ONE_BATCH:
            return self.batch(lanes)(*args) if lanes is None else self.batch(lanes)(*args, lanes)


_ONE_BATCH = threading.Lock()
# the fewest lanes above one a batch runs with: two lanes buy 1.3-2x over one for the models too large
# for four (docs/performance.md), less than their compile time (5-9 s per kernel) is worth
MIN_LANES = 4


def fewer_lanes(lanes):
    """The lane count below ``lanes`` (> 1) that a batch may compile: half of it down to MIN_LANES,
    then one (:meth:`Kernel.lanes`, and ``screwdyn compile``'s variants)."""
    return lanes // 2 if lanes > MIN_LANES else 1


def _main_thread_room():
    """Floats of work a kernel may keep on the main thread's stack: half its size limit
    (``RLIMIT_STACK``; 8 MiB on most Linux systems), at least STACK_LIMIT."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    except (ImportError, OSError, ValueError):   # pragma: no cover - no resource module (Windows)
        return STACK_LIMIT
    if soft == resource.RLIM_INFINITY:
        soft = 8 << 20
    return max(STACK_LIMIT, min(soft, 256 << 20) // 16)


_MAIN_ROOM = _main_thread_room()


def fits_this_thread(floats):
    """Whether ``floats`` float64 numbers of work fit the calling thread's stack: STACK_LIMIT on any
    thread (Python's and numba's have 512 KiB or more), more on the main thread (:func:`_main_thread_room`)."""
    if floats <= STACK_LIMIT:
        return True
    return floats <= _MAIN_ROOM and threading.current_thread() is threading.main_thread()


class _LargeStack:
    """One thread, made on first use, whose stack holds a large model's work; calls are handed to it
    in turn (a thread made per call cost 100-200 us)."""

    def __init__(self):
        self.size = 0
        self.thread = None
        self.jobs = None

    def run(self, floats, function, args):
        need = max(8 * floats * 2 + (4 << 20), 32 << 20)
        with Kernel._lock:
            if self.thread is None or need > self.size:
                import queue
                if self.jobs is not None:
                    self.jobs.put(None)   # the smaller thread ends
                self.jobs, self.size = queue.Queue(), need
                previous = threading.stack_size(need)
                try:
                    self.thread = threading.Thread(target=self._serve, args=(self.jobs,), name="screwdyn-large-model",
                                                   daemon=True)
                    self.thread.start()
                finally:
                    threading.stack_size(previous)
            done = threading.Event()
            box = []
            self.jobs.put((function, args, box, done))   # (under the lock: a call needing a larger thread
            #   then ends this one only after it has served the jobs queued before)
        done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    @staticmethod
    def _serve(jobs):
        while True:
            job = jobs.get()
            if job is None:
                return
            function, args, box, done = job
            try:
                box.append((True, function(*args)))
            except BaseException as e:   # noqa: BLE001 - handed back to the caller
                box.append((False, e))
            done.set()


_LARGE = _LargeStack()


def on_large_stack(floats, function, *args):
    """``function(*args)`` on the calling thread if ``floats`` float64 numbers of work fit its stack,
    else on a thread whose stack holds them with room to spare."""
    if fits_this_thread(floats):
        return function(*args)
    return _LARGE.run(floats, function, args)


# ---------------------------------------------------------------------------------- checks
def check_model(model):
    if not isinstance(model, Model):
        raise InputError(f"model must be a screwdyn.Model, got {type(model).__name__}")


def vector(x, n, name, broadcast=True) -> np.ndarray:
    """``x`` as a float64 array whose last axis has length ``n``: real numbers (integers, booleans,
    floats of any precision, Python numbers in an object array), never complex numbers or text. A
    scalar, or an array whose last axis has length 1, is broadcast along that axis as NumPy does (a
    read-only view), unless ``broadcast`` is False (``q`` of a model whose ``q`` holds quaternions:
    :func:`q_broadcasts`)."""
    if type(x) is not _ND or x.dtype is not F64:
        if _dask.is_dask(x):
            return _dask.vector(x, n, name, broadcast)
        if x is None:   # (NumPy would make it a NaN, which a scalar then broadcasts)
            raise InputError(f"{name} must be an array of numbers, got None")
        try:
            a = np.asarray(x)
            if a.dtype.kind == "c":
                raise InputError(f"{name} must be real, got complex numbers ({a.dtype})")
            if a.dtype.kind not in "biufO":
                raise InputError(f"{name} must be an array of numbers, got {a.dtype} ({type(x).__name__})")
            x = a.astype(F64, copy=False)
        except (TypeError, ValueError, OverflowError) as e:
            if isinstance(e, InputError):
                raise
            raise InputError(f"{name} must be an array of real numbers: {e}") from None
    if x.ndim == 0 or x.shape[-1] != n:
        if broadcast and (x.ndim == 0 or x.shape[-1] == 1):
            return np.broadcast_to(x.reshape(x.shape[:-1] + (1,)) if x.ndim else x.reshape(1), x.shape[:-1] + (n,))
        raise InputError(shape_message(x.shape, n, name, broadcast))
    return x


def shape_message(shape, n, name, broadcast=True):
    """The error for a state array ``name`` of ``shape`` where ``(n,)`` or ``(..., n)`` is needed."""
    why = ""
    if not broadcast and (not shape or shape[-1] == 1):
        why = (": this model's q holds quaternions (free-flyer or spherical joints), which one number cannot "
               "stand for (screwdyn.neutral(model) is the zero configuration)")
    return f"{name} must have shape ({n},) or (..., {n}) for this model, got shape {tuple(shape)}{why}"


def q_broadcasts(model) -> bool:
    """Whether a scalar ``q`` broadcasts to every joint: when ``q`` has one coordinate per degree of
    freedom (no quaternions)."""
    return model.nq == model.nv


def output(out, shape, name="out") -> np.ndarray:
    """``out`` checked as a writable C-contiguous float64 array of ``shape``, or a new one."""
    if out is None:
        return _empty(shape)
    if (type(out) is not _ND or out.dtype != F64 or out.shape != shape or not out.flags.c_contiguous
            or not out.flags.writeable):
        raise InputError(f"{name} must be a writable C-contiguous float64 array of shape {shape}")
    return out


def _rows(a, shape, n):
    """``a`` broadcast to ``shape`` as a writable C-contiguous ``(B, n)`` array (the entry points are
    compiled for that one array type: a read-only view would compile another)."""
    B = math.prod(shape[:-1])
    if a.size == 0:
        return np.zeros((B, n))   # (numpy gives an empty array's reshape any strides; the entry points check them)
    if a.shape != shape:
        a = np.broadcast_to(a, shape)
    if not (a.flags.c_contiguous and a.flags.writeable):
        a = np.array(a, order="C")
    return a.reshape(B, n)


def available_memory():
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``, else the free
    physical pages), or None where neither can be read."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):   # pragma: no cover - no sysconf (Windows)
        return None


def _size(nbytes):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.3g} {unit}" if unit != "bytes" else f"{nbytes} bytes"
        nbytes /= 1024


def check_room(name, nbytes, what, advice="split the batch"):
    """Raise :class:`TooLargeError` before any work when ``nbytes`` (``what``: the arrays it is made
    of) exceed the memory available, saying what to do (``advice``); calls of less than 64 MiB are
    not checked."""
    if nbytes > _ROOMY:
        room = available_memory()
        if room is not None and nbytes > room:
            raise TooLargeError(f"{name}: {what} need {_size(nbytes)}, more than the {_size(room)} of memory "
                                f"available; {advice}")


def batch_shape_of(arrays, names):
    """The batch shape (leading axes) the state arrays broadcast to (their last axes, ``nq`` or
    ``nv`` long, are not broadcast)."""
    shape = arrays[0].shape[:-1]
    if any(a.shape[:-1] != shape for a in arrays):   # (np.broadcast_shapes costs 5 us: only when needed)
        try:
            shape = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
        except ValueError:
            shapes = ", ".join(f"{nm} {a.shape}" for nm, a in zip(names, arrays))
            raise InputError(f"state arrays do not broadcast to one batch: {shapes}") from None
    return shape


def raise_status(code, names, index=None):
    """Raise for a kernel's status ``code`` (``names``: its state arguments, in order)."""
    where = "" if index is None else f" (batch index {index})"
    code = int(code)
    if code == Status.SINGULAR:
        raise ModelError(f"the mass matrix is singular or not positive definite{where}: a joint moves neither mass "
                         "nor rotational inertia (give its subtree inertia or the joint an armature), or a body's "
                         "inertia is not positive semi-definite (load_urdf warned of it)")
    if code == Status.OVERFLOW:
        raise InputError(f"the result is not finite{where}: it overflows float64 for these finite inputs "
                         f"({', '.join(names)}) with this model's numbers; they are too large")
    if code == Status.NONFINITE_FEXT:
        raise InputError(f"f_ext contains NaN or inf{where}")
    if code == Status.NO_BLAS:   # pragma: no cover - scipy is a dependency
        raise RuntimeError("scipy's BLAS (scipy.linalg.cython_blas) could not be loaded; reinstall scipy")
    if Status.NONFINITE <= code < Status.NONFINITE + len(names):
        raise InputError(f"{names[code - Status.NONFINITE]} contains NaN or inf{where}")
    raise AssertionError(f"a kernel answered status {code}")   # pragma: no cover - NOT_FAST on the general path


def finite_result(y, names):
    """``y``, a result computed in Python from finite ones, or the error of a kernel whose result
    overflows (``names``: the arguments it came from). Compute ``y`` under ``np.errstate(all="ignore")``."""
    if not np.isfinite(y).all():
        raise_status(Status.OVERFLOW, names)
    return y


def _raise_first(status, batch_shape, names):
    k = int(np.flatnonzero(status)[0])
    raise_status(status[k], names, tuple(int(x) for x in np.unravel_index(k, batch_shape)) if batch_shape else None)


def _frame_wrench_maps(model):
    """``{frame name: (body, [Ad_{T_{f,b}}])}``, made once per model: a wrench ``F_f`` (a row) on the
    frame is ``F_b = np.dot(F_f, A)`` on the body (``[Ad_{T_{f,b}}]^T F_f``)."""
    maps = model._derived.get("wrench_maps")
    if maps is None:
        maps = {name: (int(model.frame_body[k]), Ad(inverse_transform(model.frame_pose[k])))
                for k, name in enumerate(model.frame_names)}
        model._derived["wrench_maps"] = maps
    return maps


def _dict_wrenches(model, f_ext):
    """The kernels' ``(n, 6)`` wrenches (:func:`wrench_rows`) of a dict of single wrenches ``(6,)`` by
    frame name, for the fast paths (a name or shape it cannot read raises, and the general path
    reports it)."""
    maps = model._derived.get("wrench_maps") or _frame_wrench_maps(model)
    F = np.zeros((model.n, 6))
    rows = model._body_row
    for name, w in f_ext.items():
        b, A = maps[name]
        if b >= 0:
            F[rows[b]] += np.dot(w, A)   # a (6,) wrench, or a ValueError for the general path
    return F


def wrench_rows(model, F):
    """Body wrenches ``F (..., nbodies, 6)`` as the kernels take them, one per row of the packed
    model ``(..., n, 6)``: a body's on its joint's last row (:mod:`screwdyn.algorithms.layout`),
    zero on the others. The same array when every joint has one degree of freedom."""
    if model.nbodies == model.n:
        return F
    out = np.zeros(F.shape[:-2] + (model.n, 6))
    out[..., model._body_row, :] = F
    return out


def external_wrenches(model: Model, f_ext, batch_shape=()) -> np.ndarray:
    """``f_ext`` as an array ``(*batch_shape, nbodies, 6)`` of wrenches ``(n, f)`` on each body, in
    its frame (``model.link_names`` order; ``nbodies == n`` when every joint has one degree of freedom).

    ``f_ext`` is either that array (broadcastable) or a dict ``{frame_name: wrench}`` where the
    wrench ``(6,)`` or ``(..., 6)`` is expressed in the named frame (any link, merged fixed links
    included); it is moved to the carrying body's frame by ``F_b = [Ad_{T_{f,b}}]^T F_f``.
    A wrench on a frame fixed to the base does not load any joint and is dropped.
    """
    n = model.nbodies
    if isinstance(f_ext, dict):
        maps = _frame_wrench_maps(model)
        out = np.zeros(tuple(batch_shape) + (n, 6))
        for name, w in f_ext.items():
            try:
                b, A = maps[name]
            except (KeyError, TypeError):
                raise InputError(f"f_ext: unknown link or frame {name!r}; known: {list(model.frame_names)}") from None
            w = vector(w, 6, f"f_ext[{name!r}]")
            if b < 0:
                continue
            try:
                out[..., b, :] += np.dot(w, A)
            except ValueError:
                raise InputError(f"f_ext[{name!r}] has shape {w.shape}, which does not broadcast to the batch "
                                 f"shape {tuple(batch_shape)}") from None
        return out
    f = vector(f_ext, 6, "f_ext")
    if f.ndim < 2 or f.shape[-2] != n:
        raise InputError(f"f_ext must have shape ({n}, 6) or (..., {n}, 6) for this model, got shape {f.shape}")
    try:
        return np.broadcast_to(f, tuple(batch_shape) + (n, 6))
    except ValueError:
        raise InputError(f"f_ext shape {f.shape} does not broadcast to the batch shape {tuple(batch_shape)}") from None


# ---------------------------------------------------------------------------------- the call
# The fast path of a kernel, written out for its number of states: a loop over them, and tuples of
# arguments unpacked into the call, cost 0.3 us of a 0.9 us call of inverse dynamics.
_FAST_PATH = """
def call(model, {states}, fext=None, out=None, params=(), shape=None):
    try:
        if model._stack_fits:     # (what is no Model raises, and goes the general path)
            nd = {first}.ndim
            if {same}:
                if fext is None:
                    {no_fext}
                elif FEXT and type(fext) is dict and nd == 1:
                    fx, use = dict_wrenches(model, fext), True
                elif FEXT and fext.dtype is F64 and fext.ndim == nd + 1 and fext.flags.carray and model._one_dof:
                    {yes_fext}
                else:
                    nd = 0
                if MULTI:     # several outputs (a frame's velocity and acceleration): one state only
                    if nd == 1 and out is None and shape is not None:
                        y = tuple(map(empty, shape))
                        if not kernel.one(model._kd, {states}, {extra}*y):
                            return y
                elif nd == 1:
                    if out is None:
                        y = empty(model.{shape} if shape is None else shape)
                    elif out.dtype is F64 and out.ndim == OUT_NDIM and out.flags.carray:
                        y = out     # (its shape is the entry point's to check: NOT_FAST)
                    else:
                        y = None
                    if y is not None and not kernel.one(model._kd, {states}, {extra}y):
                        return y
                elif nd == 2 and {ndarrays} and {first}.shape[0] <= FAST_ROWS:   # (larger: the general path checks the memory; a Dask array's shape[0] could be 10^9)
                    B = {first}.shape[0]
                    if shape is None:
                        shape = model.{shape}
                    if out is None:
                        y = empty((B,) + shape)
                    elif out.dtype is F64 and out.flags.carray and out.shape == (B,) + shape:
                        y = out
                    else:
                        y = None
                    if y is not None:
                        status = zeros(B, dtype=int64)
                        if not kernel.run_batch((model._kd, {states}, {extra}y, status), kernel.lanes_for(model)):
                            if count_nonzero(status):   # (a C call, where status.any() goes through a ufunc)
                                raise_first(status, (B,), kernel.entry.states)
                            return y
    except NOT_ARRAYS:   # no array, no Model, an f_ext dict it cannot read: the general path says why
        pass
    return general(kernel, model, ({states},), shape, fext, params, out)
"""


def _fast_path(kernel):
    """:func:`call` for ``kernel``, its states as arguments (``kernel.call(model, q, qd, qdd, fext,
    out, params, shape)``): float64 arrays of one state or ``(B, n)`` states, ``f_ext`` none or a
    C-contiguous array, go straight to the entry points; everything else to :func:`general`."""
    entry = kernel.entry
    names = [f"s{a}" for a in range(len(entry.states))]
    source = _FAST_PATH.format(states=", ".join(names), first=names[0],
                               same=" and ".join([f"{x}.ndim == nd" for x in names[1:]]
                                                 + [f"{x}.dtype is F64" for x in names]),
                               ndarrays=" and ".join(f"type({x}) is ND" for x in names),
                               extra=("fx, use, " if entry.fext else "") + ("*params, " if entry.params else ""),
                               no_fext="fx, use = NO_FEXT, False" if entry.fext else "pass",
                               yes_fext="fx, use = fext, True",
                               shape="_nn" if entry.outputs == (2,) else "_shape")
    namespace = dict(Model=Model, ND=_ND, F64=F64, FEXT=entry.fext, MULTI=len(entry.outputs) > 1, NO_FEXT=_NO_FEXT,
                     OUT_NDIM=entry.outputs[0], empty=_empty, zeros=np.zeros, int64=np.int64, count_nonzero=np.count_nonzero,
                     raise_first=_raise_first, general=general, kernel=kernel, NOT_ARRAYS=_NOT_ARRAYS,
                     dict_wrenches=_dict_wrenches, FAST_ROWS=_FAST_ROWS)
    exec(compile(source, f"<screwdyn fast path of {kernel.key}>", "exec"), namespace)
    return namespace["call"]


def call(kernel: Kernel, model, states, shape=None, fext=None, params=(), out=None):
    """Run ``kernel`` on ``states`` (a tuple of arrays ``(n,)`` or ``(..., n)`` that broadcast) and
    return its output (``(..., *shape)``; ``out`` if given). ``shape`` is the output of one state:
    ``(n,)`` or, for a kernel whose output is a matrix, ``(n, n)`` when None; a tuple of shapes for
    a kernel with several outputs, which returns a tuple. ``fext``: the external wrenches, for the
    kernels that take them (:func:`external_wrenches`); ``params``: the kernel's other arguments."""
    return kernel.call(model, *states, fext=fext, out=out, params=params, shape=shape)


def general(kernel: Kernel, model, states, shape=None, fext=None, params=(), out=None):
    """:func:`call` for any input: checks, converts and copies, then the same entry points (a Dask
    array: mapped over its chunks, :func:`screwdyn._dask.call_kernel`; a PyTorch, JAX or CuPy array or
    a numba device array, on the CPU or a GPU: :func:`screwdyn._gpu.call_kernel`)."""
    check_model(model)
    if _dask.any_dask(*states, fext):
        return _dask.call_kernel(kernel, model, states, shape, fext, params, out)
    if _gpu.any_foreign(*states, fext):   # a tensor, a CuPy or JAX array, on the CPU or a GPU
        return _gpu.call_kernel(kernel, model, states, shape, fext, params, out)
    entry = kernel.entry
    names = entry.states
    n = model.n
    if shape is None:
        shape = model._nn if entry.outputs == (2,) else model._shape
    sizes = [model.nq if nm == "q" else n for nm in names]
    spread = q_broadcasts(model)
    states = [vector(s, k, nm, spread or nm != "q") for s, k, nm in zip(states, sizes, names)]
    shapes = (shape,) if type(shape[0]) is int else shape
    outs_given = (out,) if len(shapes) == 1 else (out or (None,) * len(shapes))
    use_fext = fext is not None
    single = all(s.ndim == 1 for s in states) and (not use_fext or isinstance(fext, dict) or np.ndim(fext) == 2)
    if single:
        ys = [output(o, sh) for o, sh in zip(outs_given, shapes)]
        args = [np.require(s, F64, ["C", "W"]) for s in states]   # (a read-only view would compile another signature)
        if entry.fext:
            args += [np.require(wrench_rows(model, external_wrenches(model, fext)), F64, ["C", "W"]) if use_fext
                     else _NO_FEXT, use_fext]
        elif use_fext:
            raise InputError(f"{entry.name} takes no f_ext")
        if kernel.lanes_for(model) == 0:
            code = on_large_stack(entry.work_floats(n), kernel.one, model._kd, *args, *params, *ys)
        else:
            code = kernel.one(model._kd, *args, *params, *ys)
        if code:
            raise_status(code, names)
        return ys[0] if len(ys) == 1 else tuple(ys)

    batch_shape = batch_shape_of(states, names)
    _check_batch_room(entry, model, states, batch_shape, shapes, outs_given, fext)
    if use_fext:
        F = external_wrenches(model, fext, batch_shape)
        if F.shape[:-2] != batch_shape:   # f_ext brought extra batch axes
            batch_shape = F.shape[:-2]
        F = np.require(wrench_rows(model, F), F64, ["C", "W"]).reshape(math.prod(batch_shape), n, 6)
    rows = [_rows(s, batch_shape + (k,), k) for s, k in zip(states, sizes)]
    B = rows[0].shape[0]
    ys = [output(o, batch_shape + sh, "out") for o, sh in zip(outs_given, shapes)]
    flat = [y.reshape((B,) + sh) if y.size else np.empty((B,) + sh) for y, sh in zip(ys, shapes)]
    if B:
        args = [model._kd, *rows]
        if entry.fext:
            args += [F, True] if use_fext else [_NO_FEXT3, False]
        status = np.zeros(B, dtype=np.int64)
        lanes = kernel.lanes_for(model)
        if lanes == 0:
            on_large_stack(entry.work_floats(n), _one_at_a_time, kernel, entry, args, params, flat, status)
        elif kernel.run_batch((*args, *params, *flat, status), lanes):
            raise AssertionError(f"{entry.name}: the batch entry point refused the general path's arrays")
        if np.count_nonzero(status):
            _raise_first(status, batch_shape, names)
    return ys[0] if len(ys) == 1 else tuple(ys)


def _check_batch_room(entry, model, states, batch_shape, shapes, outs_given, fext):
    """:func:`check_room` for a batch: its outputs not given, the copies of states and ``f_ext``
    that are broadcast or not C-contiguous, and the status array."""
    n = model.n
    if fext is not None and not isinstance(fext, dict):
        try:
            batch_shape = np.broadcast_shapes(batch_shape, np.shape(fext)[:-2])
        except (ValueError, TypeError):   # external_wrenches says why
            pass
    B = math.prod(batch_shape)
    sizes = [s.shape[-1] for s in states]
    if B * 8 * (1 + sum(sizes) + 6 * n) + sum(8 * B * math.prod(sh) for sh in shapes) <= _ROOMY:
        return   # (the most it can be: every state and f_ext copied)
    copies = sum(B * k * 8 for s, k in zip(states, sizes)
                 if s.shape != tuple(batch_shape) + (k,) or not (s.flags.c_contiguous and s.flags.writeable))
    if fext is not None:
        copies += B * n * 6 * 8
    outs = [tuple(batch_shape) + tuple(sh) for o, sh in zip(outs_given, shapes) if o is None]
    parts = [f"the float64 result{'s' if len(outs) > 1 else ''} {', '.join(map(str, outs))}"] if outs else []
    parts += ["copies of the inputs"] if copies else []
    check_room(entry.name, 8 * sum(math.prod(shp) for shp in outs) + copies + 8 * B,
               f"{' and '.join(parts) or 'the work arrays'} of {B} states")


def _one_at_a_time(kernel, entry, args, params, outs, status):
    """A batch state by state through the one-state entry point (a model too large for lanes)."""
    kd, rows = args[0], args[1:1 + len(entry.states)]
    F, use_fext = (args[-2], args[-1]) if entry.fext else (None, False)
    for k in range(status.shape[0]):
        extra = [F[k] if use_fext else _NO_FEXT, use_fext] if entry.fext else []
        status[k] = kernel.one(kd, *(r[k] for r in rows), *extra, *params, *(y[k] for y in outs))


def statuses(kernel: Kernel, model, B, batch_args, member_args, status=None) -> np.ndarray:
    """Run ``kernel`` on arguments its caller has checked and laid out (C-contiguous float64 arrays
    of the entry's signature) and return the status of each of the ``B`` states, raising nothing:
    for callers that report per state and go on with the others (:func:`screwdyn.simulate`'s
    batches). ``batch_args``: the batch entry's arguments between ``kd`` and ``status``;
    ``member_args(k)``: the one-state entry's for state ``k``, used for a batch of one and for a
    model whose one lane of work does not fit numba's threads (states one at a time, on a large
    stack). ``status``: ``(B,)`` int64 read and written by kernels that keep it across calls."""
    if status is None:
        status = np.zeros(B, dtype=np.int64)
    if B == 0:
        return status
    if B == 1 or kernel.lanes_for(model) == 0:
        floats = model._derived.get(("work", kernel.key))
        if floats is None:
            floats = model._derived[("work", kernel.key)] = kernel.entry.work_floats(model.n)
        for k in range(B):
            code = on_large_stack(floats, kernel.one, model._kd, *member_args(k))
            if code == Status.NOT_FAST:   # pragma: no cover - the caller's layout is wrong
                raise AssertionError(f"{kernel.key}: arguments not laid out as the entry point takes them")
            status[k] = code
    elif kernel.run_batch((model._kd, *batch_args, status), kernel.lanes_for(model)):   # pragma: no cover - as above
        raise AssertionError(f"{kernel.key}: arguments not laid out as the entry point takes them")
    return status


# ---------------------------------------------------------------------------------- compiling ahead
def kernels():
    """A :class:`Kernel` for every entry of every kernel module of :mod:`screwdyn.algorithms`."""
    import pkgutil

    from . import algorithms
    found = []
    for info in pkgutil.iter_modules(algorithms.__path__):
        module = importlib.import_module(f"{algorithms.__name__}.{info.name}")
        found += [Kernel(info.name, key) for key in getattr(module, "ENTRIES", {})]
    return found
