"""Everything screwdyn takes from numba beyond its documented API, in this one module, each piece
with a plain fallback.

The kernels are written against the names below (how they are compiled and cached, and the
decorator options ``KERNEL``, ``HELPER``, ...: :mod:`.target`). By default (``MODE == "fast"``) they are:

* :func:`stack`: a fresh array on the stack of the calling kernel (an LLVM ``alloca``),
  each one memory of its own, so that the compiler vectorises loops reading one and writing
  another without checking them for overlap.
* :func:`window`: a C-contiguous array seen with another shape, built in the compiled code: numba's
  ``reshape`` calls a C helper per array, and a kernel without the runtime cannot call
  ``as_strided``.
* :func:`as_contiguous`: a 1-D array that the caller checked to have a unit stride, typed
  C-contiguous (the same memory), so that the arithmetic indexes it without loading a stride.
* :func:`fetch_add`, :func:`num_threads`: an atomic addition, for the batch drivers' dynamic
  scheduling, and numba's thread count read in compiled code (a call of the threading layer's
  ``get_num_threads`` by its symbol; ``numba.get_num_threads()`` there goes through a ctypes
  pointer, which numba cannot cache).
* :func:`release_gil`, :func:`restore_gil`: the GIL released by a one-state entry point for a
  long kernel only (numba's ``nogil`` releases it for every call, and handing it to a waiting
  thread costs more than a short call).
* :func:`fma`, :func:`dot3`, :func:`dot6`, :func:`matmul3`: fused multiply-adds written as LLVM IR
  at the call site (one rounding where the CPU fuses: explicit, so that the vectorised loop over
  states and one state give the same numbers bit for bit; never left to the compiler).
* :func:`lanes_fms`, :func:`lanes_copy`, :func:`lanes_div`, :func:`lanes_dot`, :func:`lanes_dot_runs`,
  :func:`lanes_zero`: one operation on
  a kernel's lanes as one LLVM vector operation, where the compiler would leave a loop scalar (the
  rows of a solve, which it cannot tell apart).
* :func:`gemm`: a matrix product by the BLAS that scipy ships, called through numba's own wrapper
  ``numba_xxgemm`` (the one behind ``np.dot``, which needs the runtime and contiguous arrays): on
  views with a row stride, without the GIL, cacheable.

``MODE == "plain"`` (:mod:`.target`) uses none of them: the runtime stays on, the kernels are
numba's ``nogil``, helpers are numba's ordinary functions, work arrays come from ``np.empty``,
views from ``reshape``, the batch drivers split a batch evenly over ``prange`` (no atomics),
``fma(a, b, c)`` is ``a * b + c``. The same kernels, slower, with the same results to rounding;
``tests/test_internals.py`` runs the kernels in this mode too. The package pins the numba version these were written against (pyproject.toml).
"""
import numpy as np
from numba import types
from numba.extending import intrinsic

from .target import ATOMICS, FAST, HAS_FMA, HELPER, njit

__all__ = ["stack", "scratch", "window", "release_gil", "restore_gil",
           "as_contiguous", "fetch_add", "num_threads", "fma", "dot3", "dot6", "matmul3",
           "lanes_fms", "lanes_copy", "lanes_div", "lanes_dot", "lanes_dot_runs", "lanes_zero", "gemm",
           "GEMM_ONE_THREAD", "ATOMICS"]

if FAST:
    from llvmlite import ir as _llir
    from numba.core import cgutils as _cgutils
    from numba.core.imputils import impl_ret_borrowed as _impl_ret_borrowed
    from numba.np.arrayobj import populate_array as _populate_array


# ---------------------------------------------------------------------------------- fused arithmetic
def _reals(args):
    return all(isinstance(x, (types.Float, types.Integer)) for x in args)


if FAST:
    def _fma_ir(builder, x, y, z):
        """``x * y + z``: one ``llvm.fma.f64`` where the CPU fuses, else a product and a sum
        (without fast-math flags, so LLVM does not contract them either)."""
        if HAS_FMA:
            d = x.type       # a double, or a vector of them (the lanes: llvm.fma.v8f64)
            if isinstance(d, _llir.VectorType):
                f = _cgutils.get_or_insert_function(builder.module, _llir.FunctionType(d, [d, d, d]),
                                                    f"llvm.fma.v{d.count}f64")
            else:
                f = builder.module.declare_intrinsic("llvm.fma", [d], _llir.FunctionType(d, [d, d, d]))
            return builder.call(f, [x, y, z])
        return builder.fadd(builder.fmul(x, y), z)

    def _doubles(context, builder, values, value_types):
        return [context.cast(builder, v, t, types.float64) for v, t in zip(values, value_types)]

    def _dot_ir(builder, a, b):
        """``a0 b0 + a1 b1 + ...`` in that order: the first term a product, each next one fused in."""
        acc = builder.fmul(a[0], b[0])
        for x, y in zip(a[1:], b[1:]):
            acc = _fma_ir(builder, x, y, acc)
        return acc

    def _fused_sum(args):
        if not _reals(args):
            return None

        def codegen(context, builder, signature, llargs):
            x = _doubles(context, builder, llargs, signature.args)
            return _dot_ir(builder, x[:len(x) // 2], x[len(x) // 2:])
        return types.float64(*args), codegen

    @intrinsic
    def fma(typingctx, a, b, c):
        """``a * b + c`` with one rounding (where the CPU fuses)."""
        if not _reals((a, b, c)):
            return None

        def codegen(context, builder, signature, args):
            return _fma_ir(builder, *_doubles(context, builder, args, signature.args))
        return types.float64(a, b, c), codegen

    @intrinsic
    def dot3(typingctx, a0, a1, a2, b0, b1, b2):
        """``a0 b0 + a1 b1 + a2 b2``, summed in that order (two fused multiply-adds)."""
        return _fused_sum((a0, a1, a2, b0, b1, b2))

    @intrinsic
    def dot6(typingctx, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
        """``a . b`` for 6-vectors, summed in order (five fused multiply-adds)."""
        return _fused_sum((a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5))

    @intrinsic
    def matmul3(typingctx, A, B):
        """``A B`` for 3x3 matrices given as 9-tuples, row-major: entry ``(i, j)`` is :func:`dot3` of
        row ``i`` of ``A`` and column ``j`` of ``B``."""
        if not all(isinstance(X, types.BaseTuple) and len(X) == 9 and _reals(X.types) for X in (A, B)):
            return None
        out = types.UniTuple(types.float64, 9)

        def codegen(context, builder, signature, args):
            a, b = (_doubles(context, builder, [builder.extract_value(t, k) for k in range(9)], ty.types)
                    for t, ty in zip(args, signature.args))
            return context.make_tuple(builder, out, [_dot_ir(builder, a[3 * i:3 * i + 3], b[j::3])
                                                     for i in range(3) for j in range(3)])
        return out(A, B), codegen
else:
    @njit(**HELPER)
    def fma(a, b, c):
        return a * b + c

    @njit(**HELPER)
    def dot3(a0, a1, a2, b0, b1, b2):
        return a0 * b0 + a1 * b1 + a2 * b2

    @njit(**HELPER)
    def dot6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
        return a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3 + a4 * b4 + a5 * b5

    @njit(**HELPER)
    def matmul3(A, B):
        return (dot3(A[0], A[1], A[2], B[0], B[3], B[6]), dot3(A[0], A[1], A[2], B[1], B[4], B[7]),
                dot3(A[0], A[1], A[2], B[2], B[5], B[8]), dot3(A[3], A[4], A[5], B[0], B[3], B[6]),
                dot3(A[3], A[4], A[5], B[1], B[4], B[7]), dot3(A[3], A[4], A[5], B[2], B[5], B[8]),
                dot3(A[6], A[7], A[8], B[0], B[3], B[6]), dot3(A[6], A[7], A[8], B[1], B[4], B[7]),
                dot3(A[6], A[7], A[8], B[2], B[5], B[8]))


# ---------------------------------------------------------------------------------- arrays
# Work arrays start on a cache line (64 bytes): with the default 8-byte alignment their vector loads
# split cache lines in some processes and not in others (wherever the stack happens to start), and
# a kernel's speed changed by 20 % from one process to the next.
ALIGN = 64

if FAST:
    @intrinsic
    def stack(typingctx, shape):
        """A fresh C-contiguous float64 array of ``shape`` (a tuple of integers) on the stack of the
        calling function: an LLVM ``alloca`` emitted at the call site, so call it in the kernel's
        own body, once (never in a loop, never from a helper that returns it)."""
        if not (isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer)):
            return None
        ndim = shape.count
        result = types.Array(types.float64, ndim, "C")

        def codegen(context, builder, signature, args):
            dims = [context.cast(builder, d, shape.dtype, types.intp)
                    for d in _cgutils.unpack_tuple(builder, args[0], ndim)]
            size = dims[0]
            for d in dims[1:]:
                size = builder.mul(size, d)
            data = builder.alloca(context.get_value_type(types.float64), size=size)
            data.align = ALIGN
            itemsize = context.get_constant(types.intp, 8)
            strides = [itemsize]
            for d in reversed(dims[1:]):
                strides.insert(0, builder.mul(strides[0], d))
            out = context.make_array(result)(context, builder)
            _populate_array(out, data=data, shape=dims, strides=strides, itemsize=itemsize, meminfo=None)
            return out._getvalue()
        return result(shape), codegen

    @intrinsic
    def scratch(typingctx, rows, lanes):
        """A fresh C-contiguous ``(rows, lanes)`` float64 array on the stack, both sizes compile-time
        constants (literal integers: a kernel's ``lanes`` argument is one): a static ``alloca`` in the
        function's entry block, which LLVM promotes to registers where it can (a one-lane kernel's
        per-body scratch then costs no memory traffic)."""
        if not (isinstance(rows, types.IntegerLiteral) and isinstance(lanes, types.IntegerLiteral)):
            return None
        r, c = rows.literal_value, lanes.literal_value
        result = types.Array(types.float64, 2, "C")

        def codegen(context, builder, signature, args):
            with builder.goto_entry_block():
                size = context.get_constant(types.intp, r * c)
                data = builder.alloca(context.get_value_type(types.float64), size=size)
                data.align = ALIGN
            itemsize = context.get_constant(types.intp, 8)
            out = context.make_array(result)(context, builder)
            shape = [context.get_constant(types.intp, r), context.get_constant(types.intp, c)]
            _populate_array(out, data=data, shape=shape, strides=[context.get_constant(types.intp, 8 * c), itemsize],
                            itemsize=itemsize, meminfo=None)
            return out._getvalue()
        return result(rows, lanes), codegen

    @intrinsic
    def window(typingctx, w, o, shape):
        """``w[o:]`` (a C-contiguous array of any ``ndim``, read flat) seen as a C-contiguous array of
        ``shape`` (a tuple of integers): the same memory and owner, no copy, no check (the caller
        keeps ``o + prod(shape) <= w.size``)."""
        if not (isinstance(w, types.Array) and w.layout == "C" and isinstance(o, types.Integer)
                and isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer)):
            return None
        ndim = shape.count
        result = types.Array(w.dtype, ndim, "C")

        def codegen(context, builder, signature, args):
            src = context.make_array(signature.args[0])(context, builder, args[0])
            offset = context.cast(builder, args[1], signature.args[1], types.intp)
            dims = [context.cast(builder, d, shape.dtype, types.intp)
                    for d in _cgutils.unpack_tuple(builder, args[2], ndim)]
            itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(w.dtype)))
            strides = [itemsize]
            for d in reversed(dims[1:]):
                strides.insert(0, builder.mul(strides[0], d))
            out = context.make_array(result)(context, builder)
            _populate_array(out, data=builder.gep(src.data, [offset], inbounds=True), shape=dims, strides=strides,
                            itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
            return _impl_ret_borrowed(context, builder, result, out._getvalue())
        return result(w, o, shape), codegen

    @intrinsic
    def as_contiguous(typingctx, a):
        """``a`` (its strides checked to be a C array's) typed C-contiguous: the same array, no copy."""
        if not isinstance(a, types.Array):
            return None
        c = a.copy(layout="C")

        def codegen(context, builder, signature, args):
            return _impl_ret_borrowed(context, builder, c, args[0])
        return c(a), codegen

    def _stream_store(builder, value, data, offset):
        """One non-temporal store of the 8-double ``value`` at ``data[offset]`` (64-byte aligned)."""
        store = builder.store(value, _vector_at(builder, data, offset, 8), align=64)
        store.set_metadata("nontemporal", builder.module.add_metadata([_llir.Constant(_llir.IntType(32), 1)]))

    @intrinsic
    def stream_line(typingctx, x, ox, y, oy, stride):
        """``x[ox + c] = y[oy + c stride]`` for ``c < 8`` (C-contiguous float64 arrays, flat offsets)
        as one non-temporal store of a whole cache line: ``x[ox]`` must be 64-byte aligned."""
        if not (all(isinstance(a, types.Array) and a.layout == "C" and a.dtype == types.float64 for a in (x, y))
                and all(isinstance(i, types.Integer) for i in (ox, oy, stride))):
            return None

        def codegen(context, builder, signature, args):
            intp = context.get_value_type(types.intp)
            ox_, oy_, st_ = (context.cast(builder, args[j], signature.args[j], types.intp) for j in (1, 3, 4))
            xd, yd = (context.make_array(signature.args[j])(context, builder, args[j]).data for j in (0, 2))
            vt = _llir.VectorType(_llir.DoubleType(), 8)
            v = _llir.Constant(vt, None)
            for c in range(8):
                at = builder.add(oy_, builder.mul(_llir.Constant(intp, c), st_))
                v = builder.insert_element(v, builder.load(builder.gep(yd, [at]), align=8), _llir.Constant(intp, c))
            _stream_store(builder, v, xd, ox_)
            return context.get_dummy_value()
        return types.none(x, ox, y, oy, stride), codegen

    @intrinsic
    def stream_lanes(typingctx, x, ox, sx, y, oy, m, lanes):
        """``x[ox + l sx + c] = y[oy + c lanes + l]`` for ``c < 8`` and ``l < m``: eight entries of ``m``
        of the ``lanes`` runs that sit side by side in ``y`` (a literal number of them), each run's as
        one non-temporal store of a whole cache line of ``x`` (``x[ox + l sx]`` 64-byte aligned)."""
        if not (all(isinstance(a, types.Array) and a.layout == "C" and a.dtype == types.float64 for a in (x, y))
                and all(isinstance(i, types.Integer) for i in (ox, sx, oy, m))
                and isinstance(lanes, types.IntegerLiteral)):
            return None
        L = lanes.literal_value

        def codegen(context, builder, signature, args):
            intp = context.get_value_type(types.intp)
            ox_, sx_, oy_, m_ = (context.cast(builder, args[j], signature.args[j], types.intp) for j in (1, 2, 4, 5))
            xd, yd = (context.make_array(signature.args[j])(context, builder, args[j]).data for j in (0, 3))
            block = builder.load(_vector_at(builder, yd, oy_, 8 * L), align=8)
            for l in range(L):
                with builder.if_then(builder.icmp_signed("<", _llir.Constant(intp, l), m_)):
                    v = builder.shuffle_vector(block, _llir.Constant(block.type, None),
                                               _llir.Constant(_llir.VectorType(_llir.IntType(32), 8),
                                                              [l + c * L for c in range(8)]))
                    _stream_store(builder, v, xd, builder.add(ox_, builder.mul(_llir.Constant(intp, l), sx_)))
            return context.get_dummy_value()
        return types.none(x, ox, sx, y, oy, m, lanes), codegen

    @intrinsic
    def store_fence(typingctx):
        """A full memory fence (x86: ``mfence``): the non-temporal stores before it, weakly ordered,
        are seen by other threads before anything after it."""
        def codegen(context, builder, signature, args):
            builder.fence("seq_cst")
            return context.get_dummy_value()
        return types.none(), codegen

    @intrinsic
    def address_of(typingctx, x, ox):
        """The address of ``x``'s flat element ``ox`` (a C-contiguous array), as an integer."""
        if not (isinstance(x, types.Array) and x.layout == "C" and isinstance(ox, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            at = builder.gep(data, [context.cast(builder, args[1], signature.args[1], types.intp)])
            return builder.ptrtoint(at, _llir.IntType(64))
        return types.int64(x, ox), codegen

    @intrinsic
    def fetch_add(typingctx, counter, k):
        """``counter[0] += k`` as one atomic operation (``counter``: a 1-D int64 array the threads
        share); returns the value before."""
        if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
            return None

        def codegen(context, builder, signature, args):
            array = context.make_array(signature.args[0])(context, builder, args[0])
            return builder.atomic_rmw("add", array.data, args[1], "monotonic")
        return types.int64(counter, types.int64), codegen

    @intrinsic
    def num_threads(typingctx):
        """numba's thread count for the calling thread (``numba.set_num_threads``, else
        ``NUMBA_NUM_THREADS``). Only in ``parallel=True`` functions: numba launches the threading
        layer, which defines the symbol, before it compiles or loads one."""
        def codegen(context, builder, signature, args):
            fnty = _llir.FunctionType(_cgutils.intp_t, [])
            return builder.call(_cgutils.get_or_insert_function(builder.module, fnty, "get_num_threads"), [])
        return types.intp(), codegen

    @intrinsic
    def release_gil(typingctx, long_call):
        """``PyEval_SaveThread()`` when ``long_call`` (a boolean) is true, else a null pointer: the
        GIL released for a one-state entry point's work, as numba's ``nogil`` would, but only for a
        call long enough to pay for it. Handing the GIL to a waiting thread wakes it on another core
        (several microseconds on a VM): a call shorter than that, released, makes a pool of threads
        slower than one thread (docs/performance.md). Pair it with :func:`restore_gil` on every path
        after it; nothing between them may raise (the kernels cannot: ``error_model`` numpy, no
        bounds checks, no runtime)."""
        if not isinstance(long_call, types.Boolean):
            return None

        def codegen(context, builder, signature, args):
            ptr = _llir.IntType(8).as_pointer()
            save = _cgutils.get_or_insert_function(builder.module, _llir.FunctionType(ptr, []), "PyEval_SaveThread")
            state = _cgutils.alloca_once_value(builder, _llir.Constant(ptr, None))
            with builder.if_then(args[0]):
                builder.store(builder.call(save, []), state)
            return builder.load(state)
        return types.voidptr(long_call), codegen

    @intrinsic
    def restore_gil(typingctx, state):
        """``PyEval_RestoreThread(state)`` for a state that :func:`release_gil` returned (nothing for
        its null pointer): the GIL taken back."""
        if state != types.voidptr:
            return None

        def codegen(context, builder, signature, args):
            ptr = _llir.IntType(8).as_pointer()
            restore = _cgutils.get_or_insert_function(builder.module, _llir.FunctionType(_llir.VoidType(), [ptr]),
                                                      "PyEval_RestoreThread")
            with builder.if_then(builder.icmp_unsigned("!=", args[0], _llir.Constant(ptr, None))):
                builder.call(restore, [args[0]])
            return context.get_dummy_value()
        return types.none(state), codegen
else:
    @njit(**HELPER)
    def stream_line(x, ox, y, oy, stride):
        xf, yf = x.reshape(-1), y.reshape(-1)
        for c in range(8):
            xf[ox + c] = yf[oy + c * stride]

    @njit(**HELPER)
    def stream_lanes(x, ox, sx, y, oy, m, lanes):
        xf, yf = x.reshape(-1), y.reshape(-1)
        for l in range(m):
            for c in range(8):
                xf[ox + l * sx + c] = yf[oy + c * lanes + l]

    @njit(**HELPER)
    def store_fence():
        pass

    @njit(**HELPER)
    def address_of(x, ox):
        return x.ctypes.data + ox * x.itemsize

    @njit(**HELPER)
    def release_gil(long_call):   # plain mode: the kernels are nogil, every call releases the GIL
        return 0

    @njit(**HELPER)
    def restore_gil(state):
        pass

    @njit(**HELPER)
    def stack(shape):
        return np.empty(shape)

    @njit(**HELPER)
    def scratch(rows, lanes):
        return np.empty((rows, lanes))

    @njit(**HELPER)
    def window(w, o, shape):
        size = 1
        for d in shape:
            size *= d
        return w.reshape(-1)[o:o + size].reshape(shape)

    @njit(**HELPER)
    def as_contiguous(a):
        return np.ascontiguousarray(a)

    def fetch_add(counter, k):   # pragma: no cover - never called in plain mode (ATOMICS is False)
        raise NotImplementedError

    def num_threads():   # pragma: no cover - never called in plain mode
        raise NotImplementedError


# ---------------------------------------------------------------------------------- lanes as vectors
# ``lanes_*(..., L)``: one operation on the ``L`` lanes that sit side by side at a flat offset of
# C-contiguous float64 arrays (``L`` a compile-time constant, a kernel's ``lanes``), written as one
# LLVM vector operation on ``<L x double>``. A loop whose body is a handful of lane operations on
# rows of one work array (a solve: row ``i`` minus a multiple of row ``k``) is not vectorised by
# the compiler, which cannot tell that the rows do not overlap and, with ``L`` fixed, unrolls the
# lanes into scalars; these are vectors whatever the loop around them. Each lane's arithmetic is
# the scalar one (``lanes_fms``: a product, then a difference, not fused; ``lanes_dot*``: the fused
# sums of :func:`dot6`), so a lane gives the numbers of one state computed alone.
if FAST:
    def _vector_at(builder, data, offset, L):
        """A pointer to the ``<L x double>`` at ``data[offset]`` (``data`` a ``double*``)."""
        return builder.bitcast(builder.gep(data, [offset]), _llir.VectorType(_llir.DoubleType(), L).as_pointer())

    def _lane_pointer(context, builder, array_type, array, offset, L):
        return _vector_at(builder, context.make_array(array_type)(context, builder, array).data, offset, L)

    def _lanes_codegen(body, nargs, L):
        """The code of a lane operation on ``nargs`` (array, offset) pairs: ``body(builder, pointers, L)``."""
        def codegen(context, builder, signature, values):
            pointers = [_lane_pointer(context, builder, signature.args[2 * j], values[2 * j],
                                      context.cast(builder, values[2 * j + 1], signature.args[2 * j + 1], types.intp),
                                      L) for j in range(nargs)]
            body(builder, pointers, L)
            return context.get_dummy_value()
        return codegen

    def _lanes_typed(args):
        """``L`` when ``args`` are (float64 C array, integer) pairs then a literal ``L``, else None."""
        lanes = args[-1]
        if not (isinstance(lanes, types.IntegerLiteral)
                and all(isinstance(a, types.Array) and a.layout == "C" and a.dtype == types.float64
                        and isinstance(o, types.Integer) for a, o in zip(args[0:-1:2], args[1:-1:2]))):
            return None
        return lanes.literal_value

    def _load(builder, p):
        return builder.load(p, align=8)

    def _store(builder, v, p):
        builder.store(v, p, align=8)

    @intrinsic
    def lanes_fms(typingctx, x, ox, a, oa, y, oy, lanes):
        """``x[ox + l] -= a[oa + l] * y[oy + l]`` for ``l < lanes`` (flat offsets)."""
        L = _lanes_typed((x, ox, a, oa, y, oy, lanes))
        if L is None:
            return None
        return types.none(x, ox, a, oa, y, oy, lanes), _lanes_codegen(
            lambda b, p, L: _store(b, b.fsub(_load(b, p[0]), b.fmul(_load(b, p[1]), _load(b, p[2]))), p[0]), 3, L)

    @intrinsic
    def lanes_copy(typingctx, x, ox, y, oy, lanes):
        """``x[ox + l] = y[oy + l]`` for ``l < lanes`` (flat offsets)."""
        L = _lanes_typed((x, ox, y, oy, lanes))
        if L is None:
            return None
        return types.none(x, ox, y, oy, lanes), _lanes_codegen(lambda b, p, L: _store(b, _load(b, p[1]), p[0]), 2, L)

    @intrinsic
    def lanes_div(typingctx, x, ox, y, oy, lanes):
        """``x[ox + l] /= y[oy + l]`` for ``l < lanes`` (flat offsets)."""
        L = _lanes_typed((x, ox, y, oy, lanes))
        if L is None:
            return None
        return types.none(x, ox, y, oy, lanes), _lanes_codegen(
            lambda b, p, L: _store(b, b.fdiv(_load(b, p[0]), _load(b, p[1])), p[0]), 2, L)

    @intrinsic
    def lanes_dot(typingctx, x, ox, a, oa, y, oy, count, lanes):
        """``x[ox + l] = sum_c a[oa + c lanes + l] y[oy + c lanes + l]`` over ``c < count`` (a literal),
        for ``l < lanes``: the dot products of ``count``-vectors stored a number per row of lanes
        (a ``(count, L)`` work array), summed in order as :func:`dot6` does for one state."""
        L = _lanes_typed((x, ox, a, oa, y, oy, lanes))
        if L is None or not isinstance(count, types.IntegerLiteral):
            return None
        c = count.literal_value

        def body(b, p, L):
            va, vy = ([_load(b, b.gep(q, [_llir.Constant(_llir.IntType(64), k)])) for k in range(c)] for q in p[1:])
            _store(b, _dot_ir(b, va, vy), p[0])
        return types.none(x, ox, a, oa, y, oy, count, lanes), _lanes_codegen(body, 3, L)

    @intrinsic
    def lanes_dot_runs(typingctx, x, ox, sx, a, oa, sa, y, oy, sy, sk, count, k, lanes):
        """``x[ox + t sx + l] = sum_c a[oa + c sa + l] y[oy + t sk + c sy + l]`` over ``c < count`` (at
        least one; a run-time number, with run-time strides), for ``t < k`` (a literal) and ``l < lanes``:
        :func:`lanes_dot` as a loop, ``k`` sums at once kept in registers (a row of a matrix times ``k``
        columns, in lanes: ``k`` independent chains of fused multiply-adds, where one chain would wait
        on each addition)."""
        L = _lanes_typed((x, ox, a, oa, y, oy, lanes))
        if L is None or not isinstance(k, types.IntegerLiteral) or not all(
                isinstance(t, types.Integer) for t in (sx, sa, sy, sk, count)):
            return None
        K = k.literal_value

        def codegen(context, builder, signature, values):
            i64 = _llir.IntType(64)
            vt = _llir.VectorType(_llir.DoubleType(), L)
            ox_, sx_, oa_, sa_, oy_, sy_, sk_, count_ = (context.cast(builder, values[j], signature.args[j], types.intp)
                                                         for j in (1, 2, 4, 5, 7, 8, 9, 10))
            xd, ad, yd = (context.make_array(signature.args[j])(context, builder, values[j]).data for j in (0, 3, 6))

            def lane(ptr, offset):
                return _load(builder, _vector_at(builder, ptr, offset, L))

            def column(t):
                return builder.add(oy_, builder.mul(_llir.Constant(i64, t), sk_))
            accs = [_cgutils.alloca_once(builder, vt) for _ in range(K)]
            va = lane(ad, oa_)
            for t in range(K):
                builder.store(builder.fmul(va, lane(yd, column(t))), accs[t])
            with _cgutils.for_range(builder, builder.sub(count_, _llir.Constant(i64, 1))) as loop:
                c = builder.add(loop.index, _llir.Constant(i64, 1))
                va = lane(ad, builder.add(oa_, builder.mul(c, sa_)))
                for t in range(K):
                    vy = lane(yd, builder.add(column(t), builder.mul(c, sy_)))
                    builder.store(_fma_ir(builder, va, vy, builder.load(accs[t])), accs[t])
            for t in range(K):
                o = builder.add(ox_, builder.mul(_llir.Constant(i64, t), sx_))
                _store(builder, builder.load(accs[t]), _vector_at(builder, xd, o, L))
            return context.get_dummy_value()
        return types.none(x, ox, sx, a, oa, sa, y, oy, sy, sk, count, k, lanes), codegen

    @intrinsic
    def lanes_zero(typingctx, x, ox, lanes):
        """``x[ox + l] = 0`` for ``l < lanes`` (flat offset)."""
        L = _lanes_typed((x, ox, lanes))
        if L is None:
            return None
        zero = _llir.Constant(_llir.VectorType(_llir.DoubleType(), L), [0.0] * L)
        return types.none(x, ox, lanes), _lanes_codegen(lambda b, p, L: _store(b, zero, p[0]), 1, L)
else:
    @njit(**HELPER)
    def lanes_fms(x, ox, a, oa, y, oy, L):
        xf, af, yf = x.reshape(-1), a.reshape(-1), y.reshape(-1)
        for l in range(L):
            xf[ox + l] -= af[oa + l] * yf[oy + l]

    @njit(**HELPER)
    def lanes_copy(x, ox, y, oy, L):
        xf, yf = x.reshape(-1), y.reshape(-1)
        for l in range(L):
            xf[ox + l] = yf[oy + l]

    @njit(**HELPER)
    def lanes_div(x, ox, y, oy, L):
        xf, yf = x.reshape(-1), y.reshape(-1)
        for l in range(L):
            xf[ox + l] /= yf[oy + l]

    @njit(**HELPER)
    def lanes_dot(x, ox, a, oa, y, oy, count, L):
        xf, af, yf = x.reshape(-1), a.reshape(-1), y.reshape(-1)
        for l in range(L):
            s = af[oa + l] * yf[oy + l]
            for c in range(1, count):
                s = af[oa + c * L + l] * yf[oy + c * L + l] + s
            xf[ox + l] = s

    @njit(**HELPER)
    def lanes_dot_runs(x, ox, sx, a, oa, sa, y, oy, sy, sk, count, k, L):
        xf, af, yf = x.reshape(-1), a.reshape(-1), y.reshape(-1)
        for t in range(k):
            for l in range(L):
                s = af[oa + l] * yf[oy + t * sk + l]
                for c in range(1, count):
                    s = af[oa + c * sa + l] * yf[oy + t * sk + c * sy + l] + s
                xf[ox + t * sx + l] = s

    @njit(**HELPER)
    def lanes_zero(x, ox, L):
        xf = x.reshape(-1)
        for l in range(L):
            xf[ox + l] = 0.0


# ---------------------------------------------------------------------------------- BLAS
# ``gemm(A, B, C, alpha, beta, trans_a)``: ``C = alpha op(A) B + beta C`` (``op(A) = A^T`` when
# ``trans_a``), each a 2-D float64 array whose rows are contiguous (a C array or a block of one:
# any row stride). Returns 0, or -1 where scipy's BLAS cannot be loaded. A row-major product is
# BLAS' column-major one transposed: ``C^T = B^T op(A)^T``, so B goes first. OpenBLAS splits a
# product over its own threads from ``m n k > 4 x 65536`` (its GEMM_MULTITHREAD_THRESHOLD times
# SMP_THRESHOLD_MIN); callers keep under it (:data:`GEMM_ONE_THREAD`), so that a kernel uses numba's
# threads only.
GEMM_ONE_THREAD = 4 * 65536

if FAST:
    @intrinsic
    def gemm(typingctx, A, B, C, alpha, beta, trans_a):
        """``C = alpha op(A) B + beta C`` by BLAS ``dgemm`` (see above)."""
        if not (all(isinstance(X, types.Array) and X.ndim == 2 and X.dtype == types.float64 for X in (A, B, C))
                and _reals((alpha, beta)) and isinstance(trans_a, types.Boolean)):
            return None

        def codegen(context, builder, signature, args):
            intp = _cgutils.intp_t
            a, b, c = (context.make_array(t)(context, builder, v) for t, v in zip(signature.args[:3], args[:3]))
            a0, a1 = _cgutils.unpack_tuple(builder, a.shape, 2)
            k, n = _cgutils.unpack_tuple(builder, b.shape, 2)
            m = builder.select(args[5], a1, a0)
            eight = _llir.Constant(intp, 8)

            def ld(x):
                return builder.sdiv(_cgutils.unpack_tuple(builder, x.strides, 2)[0], eight)

            def slot(j):
                return _cgutils.alloca_once_value(builder, context.cast(builder, args[j], signature.args[j],
                                                                        types.float64))
            vp, ch = _llir.IntType(8).as_pointer(), _llir.IntType(8)
            fnty = _llir.FunctionType(_llir.IntType(32), [ch, ch, ch, intp, intp, intp, vp, vp, intp, vp, intp, vp,
                                                          vp, intp])
            fn = _cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
            no, tr = _llir.Constant(ch, ord("n")), _llir.Constant(ch, ord("t"))

            def ptr(p):
                return builder.bitcast(p, vp)
            return builder.call(fn, [_llir.Constant(ch, ord("d")), no, builder.select(args[5], tr, no), n, m, k,
                                     ptr(slot(3)), ptr(b.data), ld(b), ptr(a.data), ld(a), ptr(slot(4)), ptr(c.data),
                                     ld(c)])
        return types.int32(A, B, C, alpha, beta, trans_a), codegen
else:
    @njit(**HELPER)
    def gemm(A, B, C, alpha, beta, trans_a):
        m, n, k = (A.shape[1] if trans_a else A.shape[0]), B.shape[1], B.shape[0]
        for i in range(m):
            for j in range(n):
                s = 0.0
                for t in range(k):
                    s += (A[t, i] if trans_a else A[i, t]) * B[t, j]
                C[i, j] = alpha * s + beta * C[i, j]
        return 0
