"""What every kernel does around its arithmetic: lanes, work arrays, status, scheduling.

**The calling convention.** Every kernel computes a range of states ``k0 <= k < k1`` of its
batch arrays (states in rows: ``q (B, n)``, ``tau (B, n)``, ``M (B, n, n)``, ...) and writes
``status[k]`` (:class:`.status.Status`) for each. A single state is the batch of one, ``k0, k1 = 0, 1``,
through the kernel's ``*_one`` entry point, which views its vectors as rows of one (no copy). A
batch goes through its ``*_batch`` entry point, a ``prange`` over work units (:func:`units`), each
unit calling the kernel on the ranges it claims (:func:`claim`) until none is left. Both run the
same compiled kernel, so a state alone and in a batch give the same numbers bit for bit.

**Lanes.** The kernels of the main algorithms run ``L`` states side by side: each work quantity
is an array ``(..., L)`` and each step of a body is one loop over the lanes ``l < m`` with the
body's arithmetic, in plain numbers, inside. The compiler vectorises those loops (SIMD across
states). :func:`load` copies ``m`` states' rows into lanes and marks the lanes whose inputs hold
a NaN or inf; :func:`store` copies the results of the good lanes back into rows. A single state is
one lane.

**Work arrays** are separate stack allocations (``internals.stack``): the compiler then
knows that none overlaps another, and vectorises a loop that reads some and writes others without
run-time checks. The lane count is a compile-time constant, the kernel's ``lanes`` argument: 1 for
a single state, its module's ``LANES`` for a batch when that many lanes of work fit in
:data:`STACK_LIMIT` floats, else 1 (``screwdyn.dispatch.Kernel.lanes``); a model whose single lane
does not fit runs on a thread with a larger stack (``screwdyn.dispatch.on_large_stack``).
"""
import numpy as np
from numba.extending import overload

from .internals import address_of, as_contiguous, fetch_add, num_threads, stream_lanes, stream_line, window
from .layout import NQ
from .status import Status
from .target import ATOMICS, DRIVER, HELPER, INLINE, njit

# The floats a kernel keeps on the stack of the calling thread (512 KiB): numba's worker threads and
# Python's have 2 MiB or more, the main thread 8 MiB on Linux.
STACK_LIMIT = 65536

# Up to this many bodies, one state of every kernel fits STACK_LIMIT (the regressor's n x n x 6 work
# is the largest; tests/test_work.py checks each kernel's per_lane): the fast paths of
# screwdyn.dispatch take such models without asking each kernel.
STACK_BODIES = 102

# The most states a work unit claims at a time (a multiple of every kernel's LANES): small enough that
# a thread that starts late, or runs slower on a shared machine, leaves the rest to the others.
CLAIM = 128


# ---------------------------------------------------------------------------------- rows and lanes
@njit(**INLINE)
def load(X, k0, m, Xl, bad, code):
    """``Xl[i, l] = X[k0 + l, i]`` for ``l < m``: ``m`` states' rows of ``X (B, n)`` into the lanes
    of ``Xl (n, L)``. A lane whose row holds a NaN or inf gets ``bad[l] = code`` unless an earlier
    input already marked it (``x * 0`` is NaN for NaN and inf, 0 otherwise: no branch per number)."""
    n = Xl.shape[0]
    for l in range(m):
        s = 0.0
        for i in range(n):
            x = X[k0 + l, i]
            Xl[i, l] = x
            s += x * 0.0
        if s != 0.0 and bad[l] == 0:
            bad[l] = code


@njit(**INLINE)
def load_wrenches(F, k0, m, Fl, bad):
    """:func:`load` for the wrenches ``F (B, n, 6)`` into ``Fl (n, 6, L)``."""
    n = Fl.shape[0]
    for l in range(m):
        s = 0.0
        for i in range(n):
            for c in range(6):
                x = F[k0 + l, i, c]
                Fl[i, c, l] = x
                s += x * 0.0
        if s != 0.0 and bad[l] == 0:
            bad[l] = Status.NONFINITE_FEXT


@njit(**INLINE)
def lanes_of(Yl, Y, b):
    """Where the lanes' outputs are written: the work array ``Yl (..., L)``, which :func:`store` then
    copies into rows of ``Y`` (a flagged state's row left as it was); with one lane (``L`` a
    compile-time 1), ``Y``'s row ``b`` itself, seen with ``Yl``'s shape, and nothing to copy (Talos'
    one-state mass and Coriolis matrices: 1,936 numbers, 3-4 % of the call)."""
    if Yl.shape[Yl.ndim - 1] == 1:
        return window(Y, b * Yl.size, Yl.shape)
    return Yl


@njit(**INLINE)
def store(Yl, k0, m, Y, status, bad):
    """``Y[k0 + l] = Yl[:, l]`` for the good lanes ``l < m`` (``Y (B, size)``, ``Yl (size, L)``) and
    ``status[k0 + l] = bad[l]`` for all; with one lane :func:`lanes_of` wrote ``Y`` already. A good
    lane whose result holds a NaN or inf (finite inputs, a result beyond float64) gets OVERFLOW
    (``y - y`` is 0 for a finite ``y``: an integer count the compiler vectorises, no branch per number)."""
    for l in range(m):
        code = bad[l]
        if code == 0:
            nonfinite = 0
            if Yl.shape[1] > 1:
                for c in range(Yl.shape[0]):
                    y = Yl[c, l]
                    Y[k0 + l, c] = y
                    nonfinite += (y - y) != 0.0
            else:
                for c in range(Yl.shape[0]):
                    nonfinite += (Yl[c, 0] - Yl[c, 0]) != 0.0
            if nonfinite:
                code = Status.OVERFLOW
        status[k0 + l] = code


@njit(**INLINE)
def flat(A):
    """A C-contiguous ``(B, ...)`` array as ``(B, size)`` (the same memory)."""
    return window(A, 0, (A.shape[0], A.size // max(A.shape[0], 1)))


# ---------------------------------------------------------------------------------- layouts
@njit(**HELPER)
def q_size(kd):
    """``nq``, the length of ``q`` of the packed model ``kd`` (:mod:`.layout`; ``n`` degrees of
    freedom are its rows but one)."""
    return int(kd[kd.shape[0] - 1, NQ])


@njit(**HELPER)
def is_vector(a, n):
    """Whether the 1-D array ``a`` has length ``n`` and a unit stride (or at most one item)."""
    return a.shape[0] == n and (a.strides[0] == a.itemsize or n <= 1)


@njit(**HELPER)
def is_rows(a, B, n):
    """Whether the 2-D array ``a`` (typed C-contiguous) is ``(B, n)`` with a C array's strides: a
    compiled entry point does not check the layout of what it is given, so the entry does."""
    return (a.shape[0] == B and a.shape[1] == n and (n <= 1 or a.strides[1] == a.itemsize)
            and (B <= 1 or a.strides[0] == n * a.itemsize))


@njit(**INLINE)
def row(a):
    """The vector ``a`` (checked by :func:`is_vector`) as a ``(1, n)`` row: no copy."""
    return window(as_contiguous(a), 0, (1, a.shape[0]))


# ---------------------------------------------------------------------------------- scheduling
@njit(**HELPER)
def claim_size(B, threads, lanes):
    """States per claim: about a sixteenth of a thread's share, whole groups of ``lanes``, at most
    :data:`CLAIM` (the last claim is the most one thread can idle for, waiting on the other)."""
    return max(lanes, min(CLAIM, B // (16 * max(threads, 1)) // lanes * lanes))


if ATOMICS:
    @njit(**DRIVER)
    def units(B, lanes):
        """``(units, size, counter)`` of a batch of ``B`` states: one work unit per numba thread,
        claiming ``size`` states at a time from the shared ``counter`` (dynamic scheduling: a thread
        that starts late or runs slower takes fewer)."""
        threads = min(B, num_threads())
        return threads, claim_size(B, threads, lanes), np.zeros(1, dtype=np.int64)

    @njit(**HELPER)
    def claim(counter, unit, B, size):
        """The next states ``start <= k < end`` that no unit has taken (``start >= end``: none left)."""
        start = fetch_add(counter, size)
        return start, min(B, start + size)
else:
    @njit(**DRIVER)
    def units(B, lanes):
        """Plain mode: a unit per claim of ``CLAIM`` states, split evenly over the threads by ``prange``."""
        return (B + CLAIM - 1) // CLAIM, CLAIM, np.zeros(max(1, (B + CLAIM - 1) // CLAIM), dtype=np.int64)

    @njit(**HELPER)
    def claim(counter, unit, B, size):
        """Plain mode: unit ``u`` takes states ``u size .. (u + 1) size`` once."""
        if counter[unit]:
            return B, B
        counter[unit] = 1
        return unit * size, min(B, (unit + 1) * size)


# ---------------------------------------------------------------------------------- tuples in lanes
# A work array (c, L) holds a quantity of c numbers for each lane: these read lane l's numbers as a
# tuple and write a tuple into it, in straight-line code (a loop indexing the tuple would index it at
# run time, a switch that may raise, and keep LLVM from vectorising the loop over the lanes).
def put(A, l, t):
    """``A[c, l] = t[c]`` for each number ``c`` of the tuple ``t`` (compiled: the overload below; this
    body runs under ``NUMBA_DISABLE_JIT=1``)."""
    for c, x in enumerate(t):
        A[c, l] = x


def add(A, l, t):
    """``A[c, l] += t[c]`` for each number ``c`` of the tuple ``t``."""
    for c, x in enumerate(t):
        A[c, l] += x


UNROLLED = {k: v for k, v in HELPER.items() if k != "cache"}   # (made by exec: no source file to cache by)


def _unrolled(statement, count):
    """``def impl(A, l, t)`` running ``statement`` for ``c = 0 .. count - 1``, written out."""
    lines = "".join(f"    {statement.format(c=c)}\n" for c in range(count)) or "    pass\n"
    namespace = {}
    exec(f"def impl(A, l, t):\n{lines}", namespace)
    return namespace["impl"]


@overload(put, jit_options=UNROLLED)
def _put(A, l, t):
    return _unrolled("A[{c}, l] = t[{c}]", len(t))


@overload(add, jit_options=UNROLLED)
def _add(A, l, t):
    return _unrolled("A[{c}, l] += t[{c}]", len(t))


@njit(**HELPER)
def get3(A, l):
    return A[0, l], A[1, l], A[2, l]


@njit(**HELPER)
def get6(A, l):
    return A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l]


@njit(**HELPER)
def get9(A, l):
    return A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l], A[6, l], A[7, l], A[8, l]


@njit(**HELPER)
def get10(A, l):
    return A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l], A[6, l], A[7, l], A[8, l], A[9, l]


@njit(**HELPER)
def get12(A, l):
    return (A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l], A[6, l], A[7, l], A[8, l], A[9, l], A[10, l],
            A[11, l])


@njit(**HELPER)
def get21(A, l):
    return (A[0, l], A[1, l], A[2, l], A[3, l], A[4, l], A[5, l], A[6, l], A[7, l], A[8, l], A[9, l], A[10, l],
            A[11, l], A[12, l], A[13, l], A[14, l], A[15, l], A[16, l], A[17, l], A[18, l], A[19, l], A[20, l])


@njit(**INLINE)
def zero_lanes(A, m):
    """``A[i, j, l] = 0`` for the lanes ``l < m`` of an ``(a, b, L)`` work array."""
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            for l in range(m):
                A[i, j, l] = 0.0


@njit(**INLINE)
def copy_lanes(src, dst, m):
    """``dst[c, l] = src[c, l]`` for the lanes ``l < m``: a parent's or child's numbers copied out
    before a loop that writes the array they sit in (one loop over the lanes, the numbers inside)."""
    for l in range(m):
        for c in range(src.shape[0]):
            dst[c, l] = src[c, l]



# ---------------------------------------------------------------------------------- outputs past the cache
# A batch whose output is larger than this many bytes is written with non-temporal stores, around the
# caches, a group of states at a time from work that stays in the cache (tests: the derivatives'
# test_a_batch_past_the_cache_is_streamed_and_equals_single_states; docs/performance.md). Talos'
# derivatives of inverse dynamics (46 KB a state), one thread, this machine's 2 MiB L2 and shared L3:
# B = 1,000 (46 MB) 6.0-6.2 us a state streamed against 5.8-8.1 with plain stores (the more, the busier
# the machine's L3); B = 512 (23 MB) 6.2-6.3 against 5.8-6.0, B = 64 7.4 against 5.8.
STREAM_BYTES = 32 << 20


@njit(**HELPER)
def stream_plan(S, X, o, run, m, pieces):
    """Plan the copy of ``m`` runs of ``run`` floats of work into ``X[o:o + m run]`` (flat,
    C-contiguous; run ``l`` at ``o + l run``) in ``pieces`` steps of :func:`stream_step`: ``S`` (six
    int64) holds ``o``, ``run``, the floats of each run done, the first float of run 0 on a line
    boundary of ``X``, the floats of a step (whole lines) and ``m``."""
    head = 0
    while head < run and address_of(X, o + head) % 64 != 0:
        head += 1
    S[0], S[1], S[2], S[3], S[5] = o, run, 0, head, m
    S[4] = ((run + pieces - 1) // pieces + 7) // 8 * 8


@njit(**HELPER)
def stream_step(S, X, Y, all_rest, lanes):
    """The next step of the copy that ``S`` plans (all that is left when ``all_rest``) from work ``Y``
    holding the runs side by side (float ``f`` of run ``l`` at ``Y[f lanes + l]``; one lane: a plain
    run): whole lines of ``X`` by non-temporal stores (``internals.stream_lanes`` where every run's
    lines start at the same float, else ``internals.stream_line`` a run at a time), the partial
    lines at the ends of the runs by plain ones. The caller fences (``internals.store_fence``)
    before its output is read."""
    o, run, done, head, m = S[0], S[1], S[2], S[3], S[5]
    if done >= run:
        return
    end = run if all_rest else min(run, max(head, done) + S[4])
    xf, yf = X.reshape(-1), Y.reshape(-1)
    if m == 1 or run % 8 == 0:
        f = done
        while f < end and f < head:
            for l in range(m):
                xf[o + l * run + f] = yf[f * lanes + l]
            f += 1
        while f + 8 <= end:
            stream_lanes(X, o + f, run, Y, f * lanes, m, lanes)
            f += 8
        while f < end:
            for l in range(m):
                xf[o + l * run + f] = yf[f * lanes + l]
            f += 1
    else:
        for l in range(m):
            f = done
            while f < end and address_of(X, o + l * run + f) % 64 != 0:
                xf[o + l * run + f] = yf[f * lanes + l]
                f += 1
            while f + 8 <= end:
                stream_line(X, o + l * run + f, Y, f * lanes + l, lanes)
                f += 8
            while f < end:
                xf[o + l * run + f] = yf[f * lanes + l]
                f += 1
    S[2] = end


# ---------------------------------------------------------------------------------- one state at a time
@njit(**HELPER)
def finite(x):
    """Whether the 1-D array ``x`` holds no NaN or inf (``x * 0`` is 0 exactly for the others)."""
    s = 0.0
    for v in x:
        s += v * 0.0
    return s == 0.0


@njit(**HELPER)
def check(status, k, code, x):
    """``status[k] = code`` when the 1-D ``x`` holds a NaN or inf and no earlier input was flagged."""
    if status[k] == 0 and not finite(x):
        status[k] = code


@njit(**HELPER)
def overflowed(status, k, Y):
    """``status[k] = OVERFLOW`` (unless already flagged) when row ``k`` of the C-contiguous ``Y (B, ...)``
    holds a NaN or inf: finite inputs whose result is beyond float64 (counted as in :func:`store`)."""
    size = Y.size // Y.shape[0]
    y = window(Y, k * size, (size,))
    nonfinite = 0
    for c in range(size):
        nonfinite += (y[c] - y[c]) != 0.0
    if nonfinite and status[k] == 0:
        status[k] = Status.OVERFLOW


@njit(**HELPER)
def one_state(status):
    """``(0, 1)`` as run-time integers, for a kernel that takes one state at a time (literals would
    compile it once more, specialised to them, for nothing)."""
    B = status.shape[0]
    return B - 1, B
