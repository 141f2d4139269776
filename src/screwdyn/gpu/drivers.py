"""The CUDA kernels: thin drivers, one thread per state, around the one-state passes of
:mod:`.states` (which call the CPU kernels' per-body helpers).

Each kernel is made for one model size: ``n`` (rows of the packed model) and ``nq`` are
compile-time constants, so that a thread's work arrays are local arrays of fixed size
(``cuda.local.array``; the compiler keeps what it can in registers, the rest in local memory,
which consecutive threads read coalesced) and the loops over bodies have constant trip counts.
The precision of the state arrays and of the work arrays is the kernel's ``dtype`` (float64, or
float32 on request); the helpers' arithmetic is float64 wherever a model number (``kd``, float64)
or a constant enters it. Kernels are compiled on first launch (numba-cuda) and kept per
``(kind, n, nq, dtype)`` for the process.

Arguments, ``B`` states (C-contiguous device arrays; a state's rows are contiguous)::

    rnea   kd, q (B, nq), qd, qdd (B, n), fe (Bf, n, 6), use_fe, tau (B, n), status (B,)
    aba    kd, q, qd, tau, fe, use_fe, qdd, status
    crba   kd, q, M (B, n, n), status
    step   kd, q (B, nq), v (B, n), tau (B, n), h, steps, method, status: ``steps`` steps of ``h``
           in place on ``q, v`` (``x' = phi(x, tau)``, ``tau`` held), method SEMI_IMPLICIT_EULER or RK4

``fe`` has ``Bf = B`` rows (``use_fe``) or one unread row. ``status[k]``: the CPU kernels' codes
(:class:`screwdyn.algorithms.status.Status`).
"""
import math

import numpy as np
from numba import cuda   # (a global: numba-cuda's simulator swaps the kernels' global ``cuda`` for its own)

from ..algorithms.rollout import RK4, SEMI_IMPLICIT_EULER
from .states import (
    OVERFLOW, aba_state, crba_state, dexp_inverse_state, input_status, integrate_state, nonfinite, nonfinite_rows,
    rnea_state,
)

__all__ = ["kernel", "launch", "THREADS", "RK4", "SEMI_IMPLICIT_EULER"]

THREADS = 128      # threads per block (a thread's local arrays are large: few registers are left to share)
_KERNELS = {}


def _make(kind, n, nq, dtype):
    N, NQ, N1 = n, nq, n + 1
    ty = np.float32 if dtype == np.float32 else np.float64

    if kind == "rnea":
        @cuda.jit
        def rnea(kd, q, qd, qdd, fe, use_fe, tau, status):
            k = cuda.grid(1)
            if k >= q.shape[0]:
                return
            W = cuda.local.array((N, 12), ty)
            V = cuda.local.array((N1, 6), ty)
            A = cuda.local.array((N1, 6), ty)
            F = cuda.local.array((N1, 6), ty)
            f = fe[k if use_fe else 0]
            code = input_status(q[k], qd[k], qdd[k], f, use_fe)
            if code == 0:
                rnea_state(kd, q[k], qd[k], qdd[k], f, use_fe, tau[k], W, V, A, F)
                if nonfinite(tau[k]):
                    code = OVERFLOW
            status[k] = code
        return rnea

    if kind == "aba":
        @cuda.jit
        def aba(kd, q, qd, tau, fe, use_fe, qdd, status):
            k = cuda.grid(1)
            if k >= q.shape[0]:
                return
            R = cuda.local.array((N1, 9), ty)
            r = cuda.local.array((N, 3), ty)
            J = cuda.local.array((N, 6), ty)
            V = cuda.local.array((N1, 6), ty)
            C = cuda.local.array((N, 6), ty)
            IA = cuda.local.array((N, 21), ty)
            pA = cuda.local.array((N, 6), ty)
            U = cuda.local.array((N, 6), ty)
            Du = cuda.local.array((N, 2), ty)
            f = fe[k if use_fe else 0]
            code = input_status(q[k], qd[k], tau[k], f, use_fe)
            if code == 0:
                code = aba_state(kd, q[k], qd[k], tau[k], f, use_fe, qdd[k], R, r, J, V, C, IA, pA, U, Du)
                if code == 0 and nonfinite(qdd[k]):
                    code = OVERFLOW
            status[k] = code
        return aba

    if kind == "crba":
        @cuda.jit
        def crba(kd, q, M, status):
            k = cuda.grid(1)
            if k >= q.shape[0]:
                return
            R = cuda.local.array((N1, 9), ty)
            r = cuda.local.array((N, 3), ty)
            J = cuda.local.array((N, 6), ty)
            Ic = cuda.local.array((N, 10), ty)
            code = input_status(q[k], q[k], q[k], M[k], False)
            if code == 0:
                crba_state(kd, q[k], M[k], R, r, J, Ic)
                if nonfinite_rows(M[k]):
                    code = OVERFLOW
            status[k] = code
        return crba

    if kind == "step":
        @cuda.jit
        def step(kd, q, v, tau, h, steps, method, status):
            k = cuda.grid(1)
            if k >= q.shape[0]:
                return
            R = cuda.local.array((N1, 9), ty)
            r = cuda.local.array((N, 3), ty)
            J = cuda.local.array((N, 6), ty)
            V = cuda.local.array((N1, 6), ty)
            C = cuda.local.array((N, 6), ty)
            IA = cuda.local.array((N, 21), ty)
            pA = cuda.local.array((N, 6), ty)
            U = cuda.local.array((N, 6), ty)
            Du = cuda.local.array((N, 2), ty)
            Qs = cuda.local.array(NQ, ty)          # a stage's q
            Vs = cuda.local.array((1, N), np.float64)   # a stage's v (float64: joint_dexp_inverse's tuples are
            Ks = cuda.local.array((1, N), np.float64)   # of one type); a stage's rate of xi (RK4 on a manifold)
            Wv = cuda.local.array((1, N), np.float64)   # k1 + 2 k2 + 2 k3 + k4
            Wa = cuda.local.array(N, ty)           # a1 + 2 a2 + 2 a3 + a4
            a = cuda.local.array(N, ty)
            qc, vc, t = q[k], v[k], tau[k]
            code = input_status(qc, vc, t, C, False)
            manifold = NQ != N
            s = 0
            while code == 0 and s < steps:
                code = aba_state(kd, qc, vc, t, C, False, a, R, r, J, V, C, IA, pA, U, Du)
                if method == SEMI_IMPLICIT_EULER:                              # (13.3)
                    for i in range(N):
                        vc[i] = vc[i] + h * a[i]
                    integrate_state(kd, qc, vc, h, qc)
                else:                                                         # (13.4), as rollout.advance
                    h2 = 0.5 * h
                    for i in range(N):
                        Vs[0, i] = vc[i] + h2 * a[i]
                        Wa[i] = a[i]
                        Ks[0, i] = Vs[0, i]
                    if manifold:
                        for i in range(N):
                            Wv[0, i] = vc[i]
                        dexp_inverse_state(kd, Wv, h2, Vs, Ks)
                    for i in range(N):
                        Wv[0, i] = vc[i] + 2.0 * Ks[0, i]
                    integrate_state(kd, qc, vc, h2, Qs)
                    for stage in range(1, 4):
                        code = max(code, aba_state(kd, Qs, Vs[0], t, C, False, a, R, r, J, V, C, IA, pA, U, Du))
                        if stage < 3:
                            c = h2 if stage == 1 else h
                            w = 2.0 if stage == 1 else 1.0
                            integrate_state(kd, qc, Ks[0], c, Qs)
                            for i in range(N):
                                Wa[i] = Wa[i] + 2.0 * a[i]
                                Vs[0, i] = vc[i] + c * a[i]
                            if manifold:
                                dexp_inverse_state(kd, Ks, c, Vs, Ks)
                            else:
                                for i in range(N):
                                    Ks[0, i] = Vs[0, i]
                            for i in range(N):
                                Wv[0, i] = Wv[0, i] + w * Ks[0, i]
                        else:
                            h6 = h / 6.0
                            integrate_state(kd, qc, Wv[0], h6, qc)
                            for i in range(N):
                                vc[i] = vc[i] + h6 * (Wa[i] + a[i])
                s += 1
            if code == 0 and (nonfinite(qc) or nonfinite(vc)):
                code = OVERFLOW
            status[k] = code
        return step
    raise ValueError(f"no GPU kernel {kind!r}")


def kernel(kind, n, nq, dtype=np.float64):
    """The CUDA kernel ``kind`` (``"rnea"``, ``"aba"``, ``"crba"``, ``"step"``) for a model of ``n``
    rows and ``nq`` coordinates, its arrays of ``dtype``: made on first use, compiled on first launch."""
    key = (kind, n, nq, np.dtype(dtype).name)
    found = _KERNELS.get(key)
    if found is None:
        found = _KERNELS[key] = _make(kind, n, nq, np.dtype(dtype))
    return found


def launch(kind, model, B, args, dtype=np.float64, threads=THREADS):
    """Launch ``kind`` for ``model`` on ``B`` states: ``args`` the kernel's arguments after ``kd``."""
    if B == 0:
        return
    kd = model._derived.get("gpu_kd")
    if kd is None:
        kd = model._derived["gpu_kd"] = cuda.to_device(np.ascontiguousarray(model._kd))
    threads = min(threads, B)
    kernel(kind, model.n, model.nq, dtype)[math.ceil(B / threads), threads](kd, *args)
