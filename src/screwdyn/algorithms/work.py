"""Work arrays of the kernels, carved out of one flat ``float64`` buffer.

A single-state kernel takes its buffer from :func:`scratch`: on the stack of the calling thread
(free, and private to the call, so kernels are reentrant and release the GIL), or from the heap
for very large models. Batch kernels allocate one buffer per chunk of states. The single-state
kernels of ``dynamics``' fast paths are compiled without numba's runtime (:data:`NO_NRT`) and take
theirs from the stack only (:func:`stack_scratch`).

numba's ``reshape`` calls into a C helper for every array (about 0.04 us each, and ABA carves
twelve); :func:`block2` and :func:`block3` make row-major views (:func:`_rows`, built in the
compiled code, as are the stack arrays of :func:`_stack_vector`), which cost nothing, typed
C-contiguous: indexing them then needs no stride loaded from memory, and once a kernel's carve and
its per-state function are inlined (``inline="always"``) the compiler sees the row lengths as
constants. Each kernel's carve takes at most ``work_size(n) = WORK_PER_BODY * (n + 1) + WORK_EXTRA`` floats.

The single-state kernels take their 1-D inputs in any layout (``dynamics`` binds one compiled
entry point per kernel, see ``dynamics._Entries``): :func:`unit_stride` tests an input, and
:func:`contiguous` then retypes it as C-contiguous, so that the arithmetic indexes it as fast.
"""
import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.core import cgutils
from numba.core.cpu import CPUTargetOptions
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from .layout import WORK_EXTRA, WORK_PER_BODY

# A single-state kernel's answer for inputs it does not take as they are (a wrong length, a
# stride): the caller's general path then checks, copies and reports.
NOT_FAST = 9

# Above this many floats (512 KiB) the buffer comes from the heap: threads may have small stacks.
STACK_LIMIT = 65536

# Options of the single-state kernels that ``dynamics``' fast paths call: compiled without numba's
# reference-counting runtime (NRT; the target option ``_nrt``, in numba since 0.19 but not
# documented). Its compiled entry point then passes each array in as it is, where with the runtime
# it makes and frees a reference-counted record per array: a null kernel with three arrays takes
# 0.15 against 0.31 us a call. Such a kernel cannot allocate on the heap (:func:`stack_scratch`)
# nor call a compiled function that returns an array (numba refuses it). Empty, and the runtime
# stays, should a numba drop the option.
NO_NRT = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}


@intrinsic
def _stack_vector(typingctx, size):
    """A fresh ``(size,)`` float64 array on the stack of the current function (an LLVM ``alloca``
    of its own, which the compiler knows aliases no other array). Built here rather than by
    ``numba.carray``, whose implementation is a compiled function that returns an array: numba
    refuses that in a function compiled without its runtime (:data:`NO_NRT`)."""
    if not isinstance(size, types.Integer):
        return None
    vector = types.Array(types.float64, 1, "C")

    def codegen(context, builder, signature, args):
        n = context.cast(builder, args[0], signature.args[0], types.intp)
        data = builder.alloca(context.get_value_type(types.float64), size=n)
        itemsize = context.get_constant(types.intp, 8)
        out = context.make_array(vector)(context, builder)
        populate_array(out, data=data, shape=[n], strides=[itemsize], itemsize=itemsize, meminfo=None)
        return out._getvalue()
    return vector(size), codegen


@intrinsic
def _rows(typingctx, w, o, shape):
    """``w[o:]`` (``w`` a C-contiguous float64 vector) viewed as a row-major array of ``shape``, a
    tuple of integers: the same memory and owner, no copy and no check (the caller keeps
    ``o + prod(shape) <= len(w)``). numba's ``reshape`` calls a C helper (about 0.04 us an array),
    and its ``as_strided`` is a compiled function that returns an array, which numba refuses
    without its runtime (:data:`NO_NRT`)."""
    if not (isinstance(w, types.Array) and w.ndim == 1 and w.layout == "C" and w.dtype == types.float64
            and isinstance(o, types.Integer) and isinstance(shape, types.UniTuple)
            and isinstance(shape.dtype, types.Integer)):
        return None
    ndim = shape.count
    view = types.Array(types.float64, ndim, "C")

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, args[0])
        offset = context.cast(builder, args[1], signature.args[1], types.intp)
        dims = [context.cast(builder, d, shape.dtype, types.intp) for d in cgutils.unpack_tuple(builder, args[2], ndim)]
        itemsize = context.get_constant(types.intp, 8)
        strides = [itemsize]
        for d in reversed(dims[1:]):
            strides.insert(0, builder.mul(strides[0], d))
        out = context.make_array(view)(context, builder)
        populate_array(out, data=builder.gep(src.data, [offset], inbounds=True), shape=dims, strides=strides,
                       itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, view, out._getvalue())
    return view(w, o, shape), codegen


@intrinsic
def _retype_c(typingctx, a):
    """The array ``a`` typed C-contiguous: the same array, the same data model. Only for an array
    that is row-major contiguous (a 1-D array checked by :func:`unit_stride`, or a block)."""
    if not isinstance(a, types.Array):
        return None
    c = a.copy(layout="C")

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, c, args[0])
    return c(a), codegen


@njit(cache=True, inline="always")
def unit_stride(a):
    """Whether the 1-D float64 array ``a`` is contiguous."""
    return a.strides[0] == 8 or a.shape[0] <= 1


@njit(cache=True, inline="always")
def rows_of(a, B, n):
    """Whether the 2-D array ``a`` (typed C-contiguous) is ``(B, n)`` with the strides of a
    C-contiguous array, as a batch kernel indexes it: a compiled entry point does not check the
    layout of what it is given (``dynamics``' batch fast paths), so the kernel does."""
    return (a.shape[0] == B and a.shape[1] == n and (n <= 1 or a.strides[1] == 8)
            and (B <= 1 or a.strides[0] == 8 * n))


@intrinsic
def _num_threads(typingctx):
    """numba's thread count for the calling thread (``numba.set_num_threads``, else
    ``NUMBA_NUM_THREADS``): a call of the threading layer's ``get_num_threads`` by its symbol, as
    numba's own parallel loops make it. ``numba.get_num_threads()`` in compiled code calls it
    through a ctypes pointer instead, which numba cannot cache. Only for ``parallel=True`` kernels:
    numba launches the threading layer (which defines the symbol) before it compiles one or loads
    one from its cache."""
    def codegen(context, builder, signature, args):
        fnty = llvm_ir.FunctionType(cgutils.intp_t, [])
        return builder.call(cgutils.get_or_insert_function(builder.module, fnty, "get_num_threads"), [])
    return types.intp(), codegen


# The most states a thread claims at a time in the batch kernels' lanes drivers (a multiple of
# every kernel's LANES): small enough that a thread that starts late, or runs slower on a shared
# machine, leaves the rest to the others; large enough that claims stay rare.
CLAIM = 128


@intrinsic
def _fetch_add(typingctx, counter, k):
    """``counter[0] += k`` as one atomic operation; returns the value before. ``counter`` is a
    1-D int64 array that the threads share."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.atomic_rmw("add", array.data, args[1], "monotonic")
    return types.int64(counter, types.int64), codegen


@njit(cache=True, inline="always")
def claim_size(B, chunks, lanes):
    """States per claim for a batch of ``B`` over ``chunks`` threads: about a sixteenth of a
    thread's share, in whole groups of ``lanes`` states, at most ``CLAIM``. Small claims keep the
    threads' finishing times close (the last claim is the most one thread can idle for, waiting on
    the other), which counts at ``B = 1,000``; a claim costs one atomic addition."""
    return max(lanes, min(CLAIM, B // (16 * max(chunks, 1)) // lanes * lanes))   # (B = 0: no chunks)


@njit(cache=True, inline="always")
def claim(counter, B, size):
    """The next ``size`` states ``start <= k < end`` of a batch of ``B`` that no thread has taken
    (``start >= end`` once none is left). ``counter (1,)`` int64, zero at first, is shared by the
    threads: each state goes to exactly one of them, in whatever order they come (dynamic
    scheduling), and a state's result does not depend on which thread or group computes it."""
    start = _fetch_add(counter, size)
    return start, min(B, start + size)


@njit(cache=True, inline="always")
def thread_chunks(B):
    """Work units for a batch of ``B`` states: one per numba thread, read where the kernel runs
    (so the Python side need not ask numba: about 1 us a call). A ``prange`` splits its
    iterations evenly over the threads once (static scheduling), so more units would balance
    nothing and cost each its work arrays; the lanes drivers balance by :func:`claim` instead."""
    return min(B, _num_threads())


@njit(cache=True, inline="always")
def contiguous(a):
    """``a``, checked by :func:`unit_stride`, typed C-contiguous (no copy)."""
    return _retype_c(a)


@njit(cache=True, inline="always")
def work_size(n):
    """Floats in the work buffer of a model with ``n`` bodies."""
    return WORK_PER_BODY * (n + 1) + WORK_EXTRA


@njit(cache=True, inline="always")
def scratch(n):
    """The work buffer of one single-state call, ``(work_size(n),)``: on the stack up to
    ``STACK_LIMIT`` floats, else on the heap. Call it once per kernel entry, never in a loop."""
    if fits_stack(n):
        return stack_scratch(n)
    return np.empty(work_size(n))


@njit(cache=True, inline="always")
def fits_stack(n):
    """Whether the work buffer of a model with ``n`` bodies goes on the stack (:func:`scratch`)."""
    return work_size(n) <= STACK_LIMIT


@njit(cache=True, inline="always")
def stack_scratch(n):
    """The work buffer of one single-state call on the stack, for a kernel compiled without numba's
    runtime (:data:`NO_NRT`), which cannot allocate on the heap; the caller has tested
    :func:`fits_stack`. Once per kernel entry, never in a loop."""
    return _stack_vector(work_size(n))


@njit(cache=True, inline="always")
def stack2(a, b):
    """A fresh ``(a, b)`` array on the stack, in memory of its own (a separate ``alloca``, which
    the compiler knows aliases no other array, so that it vectorises loops that read one such
    array and write another). Once per kernel call, never in a loop; the caller keeps the total
    under ``STACK_LIMIT``."""
    return _rows(_stack_vector(a * b), 0, (a, b))


@njit(cache=True, inline="always")
def stack3(a, b, c):
    """As :func:`stack2`, ``(a, b, c)``."""
    return _rows(_stack_vector(a * b * c), 0, (a, b, c))


@njit(cache=True, inline="always")
def block2(w, o, a, b):
    """``w[o: o + a b]`` viewed as an ``(a, b)`` row-major array."""
    return _rows(w, o, (a, b))


@njit(cache=True, inline="always")
def block3(w, o, a, b, c):
    """``w[o: o + a b c]`` viewed as an ``(a, b, c)`` row-major array."""
    return _rows(w, o, (a, b, c))
