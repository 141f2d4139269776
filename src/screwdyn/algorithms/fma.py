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
"""
import platform

import llvmlite.binding as llvm
import numba
from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.extending import intrinsic


def _host_has_fma():
    if numba.config.CPU_NAME:     # compiling for a named CPU (a portable cache): it may lack FMA
        return False
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        return bool(llvm.get_host_cpu_features().get("fma", False))
    return True                   # aarch64, ppc64le, s390x: fused multiply-add is in the base ISA


HAS_FMA = _host_has_fma()


@intrinsic
def _fused(typingctx, a, b, c):
    """``llvm.fma.f64(a, b, c)``: one instruction where the CPU has it."""
    if not all(isinstance(x, (types.Float, types.Integer)) for x in (a, b, c)):
        return None

    def codegen(context, builder, signature, args):
        x = [context.cast(builder, v, t, types.float64) for v, t in zip(args, signature.args)]
        d = llvm_ir.DoubleType()
        f = builder.module.declare_intrinsic("llvm.fma", [d], llvm_ir.FunctionType(d, [d, d, d]))
        return builder.call(f, x)
    return types.float64(a, b, c), codegen


if HAS_FMA:
    @njit(cache=True, inline="always")
    def fma(a, b, c):
        """``a * b + c`` with one rounding."""
        return _fused(a, b, c)
else:
    @njit(cache=True, inline="always")
    def fma(a, b, c):
        """``a * b + c`` (this CPU has no fused multiply-add)."""
        return a * b + c


@njit(cache=True, inline="always")
def dot3(a0, a1, a2, b0, b1, b2):
    """``a0 b0 + a1 b1 + a2 b2``, summed in that order (two fused multiply-adds)."""
    return fma(a2, b2, fma(a1, b1, a0 * b0))


@njit(cache=True, inline="always")
def dot6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """``a . b`` for 6-vectors, summed in order (five fused multiply-adds)."""
    return fma(a5, b5, fma(a4, b4, fma(a3, b3, fma(a2, b2, fma(a1, b1, a0 * b0)))))
