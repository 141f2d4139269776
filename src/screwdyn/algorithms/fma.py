"""Fused multiply-adds, ``fma(a, b, c) = a b + c`` rounded once, and the dot products made of them.

The kernels' products of 3x3 rotations, inertias and 6-vectors are sums of products. Written as
chains of :func:`fma` they take half the instructions (a product and a sum in one) and are as
accurate or more (one rounding where there were two). The fusing is explicit, never left to the
compiler (numba's ``fastmath={"contract"}`` lets LLVM fuse where it likes, and it fuses a
vectorised loop over states in other places than the same arithmetic for one state): so a
batch, whose kernels run many states side by side in vectorised loops, still gives the
single-state kernel's numbers bit for bit.

On a CPU without the FMA instructions (x86 before 2013), or when numba compiles for another CPU
than this one (``NUMBA_CPU_NAME``), LLVM's ``llvm.fma`` would be a call into the C library, many
times slower: there :func:`fma` is the plain ``a * b + c``.

These are numba intrinsics: they are called from compiled code only (the tests wrap them in
``njit`` functions).
"""
import platform

import llvmlite.binding as llvm
import numba
from llvmlite import ir as llvm_ir
from numba import types
from numba.extending import intrinsic


def _host_has_fma():
    if numba.config.CPU_NAME:     # compiling for a named CPU (a portable cache): it may lack FMA
        return False
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        return bool(llvm.get_host_cpu_features().get("fma", False))
    return True                   # aarch64, ppc64le, s390x: fused multiply-add is in the base ISA


HAS_FMA = _host_has_fma()


def _fma_ir(builder, x, y, z):
    """The IR of ``x * y + z``: one ``llvm.fma.f64`` where the CPU fuses, else a product and a sum
    (without fast-math flags, so LLVM does not contract them either)."""
    if HAS_FMA:
        d = llvm_ir.DoubleType()
        f = builder.module.declare_intrinsic("llvm.fma", [d], llvm_ir.FunctionType(d, [d, d, d]))
        return builder.call(f, [x, y, z])
    return builder.fadd(builder.fmul(x, y), z)


def _floats(args):
    return all(isinstance(x, (types.Float, types.Integer)) for x in args)


def _as_doubles(context, builder, values, value_types):
    return [context.cast(builder, v, t, types.float64) for v, t in zip(values, value_types)]


def _dot_ir(builder, a, b):
    """The IR of ``a0 b0 + a1 b1 + ...`` summed in that order: the first term a product, each next
    one fused into the sum."""
    acc = builder.fmul(a[0], b[0])
    for x, y in zip(a[1:], b[1:]):
        acc = _fma_ir(builder, x, y, acc)
    return acc


def _fused_sum(args):
    """Signature and code of :func:`_dot_ir` of ``args`` (the a's, then the b's). Emitted as LLVM IR
    at the call site: no numba function is called or inlined, so the kernels compile as fast as
    they did before the fusing (numba's ``inline="always"`` helpers here cost 30 % more compile
    time)."""
    if not _floats(args):
        return None

    def codegen(context, builder, signature, llargs):
        x = _as_doubles(context, builder, llargs, signature.args)
        n = len(x) // 2
        return _dot_ir(builder, x[:n], x[n:])
    return types.float64(*args), codegen


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with one rounding (where the CPU fuses; see the module docstring)."""
    if not _floats((a, b, c)):
        return None

    def codegen(context, builder, signature, args):
        return _fma_ir(builder, *_as_doubles(context, builder, args, signature.args))
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
    """``A B`` for 3x3 matrices given as 9-tuples, row-major, and answered as one: entry ``(i, j)``
    is :func:`dot3` of row ``i`` of ``A`` and column ``j`` of ``B``."""
    if not all(isinstance(X, types.BaseTuple) and len(X) == 9 and _floats(X.types) for X in (A, B)):
        return None
    out = types.UniTuple(types.float64, 9)

    def codegen(context, builder, signature, args):
        a, b = (_as_doubles(context, builder, [builder.extract_value(t, k) for k in range(9)], ty.types)
                for t, ty in zip(args, signature.args))
        c = [_dot_ir(builder, a[3 * i:3 * i + 3], b[j::3]) for i in range(3) for j in range(3)]
        return context.make_tuple(builder, out, c)
    return out(A, B), codegen
