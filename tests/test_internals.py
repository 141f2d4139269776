"""What screwdyn takes from numba's internals (``algorithms/internals.py``): fused multiply-adds
with one rounding where the CPU fuses and the plain ``a * b + c`` where it does not, dot products
summed in the order they state, stack arrays and views; and the plain fallback of each, which the
whole kernel layer runs on when ``SCREWDYN_NUMBA=plain`` (same results to rounding)."""
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from screwdyn.algorithms import internals as _fma
from screwdyn.algorithms.target import HAS_FMA

# the helpers are numba intrinsics, callable from compiled code only


@njit
def fma(a, b, c):
    return _fma.fma(a, b, c)


@njit
def dot3(a0, a1, a2, b0, b1, b2):
    return _fma.dot3(a0, a1, a2, b0, b1, b2)


@njit
def dot6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    return _fma.dot6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_fma_rounds_once_where_the_cpu_fuses():
    # (1 + 2^-30)(1 - 2^-30) - 1 = -2^-60 exactly; the product alone rounds to 1.0
    a, b, c = 1.0 + 2.0**-30, 1.0 - 2.0**-30, -1.0
    assert a * b + c == 0.0
    if HAS_FMA:
        assert fma(a, b, c) == -(2.0**-60)
    else:
        assert fma(a, b, c) == 0.0


@settings(max_examples=200, deadline=None)
@given(finite, finite, finite)
def test_fma_is_the_exact_value_rounded(a, b, c):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if HAS_FMA:
        assert fma(a, b, c) == float(exact)   # Fraction -> float rounds to nearest, ties to even
    else:
        assert fma(a, b, c) == a * b + c


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=12, max_size=12))
def test_dot_products_are_chains_of_fma_in_order(x):
    a, b = x[:6], x[6:]
    acc = a[0] * b[0]
    for i in range(1, 3):
        acc = fma(a[i], b[i], acc)
    assert dot3(*a[:3], *b[:3]) == acc
    for i in range(3, 6):
        acc = fma(a[i], b[i], acc)
    assert dot6(*a, *b) == acc
    # and they are dot products: within a few ulps of the exact value
    exact = float(sum(Fraction(p) * Fraction(q) for p, q in zip(a, b)))
    scale = float(sum(abs(p * q) for p, q in zip(a, b)))
    assert abs(dot6(*a, *b) - exact) <= 8 * np.finfo(float).eps * scale


@njit
def matmul3(A, B):
    return _fma.matmul3((A[0, 0], A[0, 1], A[0, 2], A[1, 0], A[1, 1], A[1, 2], A[2, 0], A[2, 1], A[2, 2]),
                        (B[0, 0], B[0, 1], B[0, 2], B[1, 0], B[1, 1], B[1, 2], B[2, 0], B[2, 1], B[2, 2]))


@settings(max_examples=100, deadline=None)
@given(st.lists(finite, min_size=18, max_size=18))
def test_matmul3_is_the_product_entry_by_entry_of_dot3(x):
    A, B = np.array(x[:9]).reshape(3, 3), np.array(x[9:]).reshape(3, 3)
    C = np.array(matmul3(A, B)).reshape(3, 3)
    for i in range(3):
        for j in range(3):
            assert C[i, j] == dot3(A[i, 0], A[i, 1], A[i, 2], B[0, j], B[1, j], B[2, j])
    scale = np.abs(A) @ np.abs(B)
    assert np.all(np.abs(C - A @ B) <= 8 * np.finfo(float).eps * scale)


def test_integer_arguments_are_promoted():
    assert fma(3, 4, 5) == 17.0
    assert isinstance(fma(3, 4, 5), float)
    assert dot3(1, 2, 3, 4.0, 5.0, 6.0) == 32.0


def test_the_helpers_emit_llvm_fma_exactly_where_the_cpu_fuses():
    fma(1.0, 2.0, 3.0)
    ir = next(iter(fma.inspect_llvm().values()))
    assert ("llvm.fma.f64" in ir) == HAS_FMA


def test_no_fusing_when_numba_compiles_for_a_named_cpu(tmp_path):
    # a portable cache (NUMBA_CPU_NAME) may run on a CPU without FMA: there fma is a * b + c
    import os
    import subprocess
    import sys

    code = ("from numba import njit\n"
            "from screwdyn.algorithms.internals import fma\nfrom screwdyn.algorithms.target import HAS_FMA\n"
            "f = njit(lambda a, b, c: fma(a, b, c))\n"
            "print(HAS_FMA, f(1.0 + 2.0**-30, 1.0 - 2.0**-30, -1.0))\n")
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "0.0"]


@njit
def _views(w):
    a = _fma.window(w, 4, (3, 5))
    b = _fma.window(w, 10, (2, 3, 4))
    a[1, 2] = -1.0
    s = _fma.stack((2, 3))
    for i in range(2):
        for j in range(3):
            s[i, j] = 10 * i + j
    return a.copy(), b.copy(), s.sum()


def test_views_alias_the_array_and_stack_arrays_are_their_own():
    w = np.arange(40.0)
    a, b, total = _views(w)
    np.testing.assert_array_equal(b, w[10:34].reshape(2, 3, 4))   # after the write through a
    assert w[4 + 5 + 2] == -1.0 and a[1, 2] == -1.0 and b[0, 0, 1] == -1.0
    assert total == 36.0


PLAIN = """
import numpy as np, screwdyn
from screwdyn.algorithms import target
assert target.MODE == "{mode}", target.MODE
rng = np.random.default_rng(5)
out = []
for name in ("ur5", "panda"):
    m = screwdyn.models.load(name)
    Q, QD, QDD = rng.normal(size=(3, 20, m.n))
    for f, args in ((screwdyn.inverse_dynamics, (Q, QD, QDD)), (screwdyn.mass_matrix, (Q,))):
        batch = f(m, *args)
        for k in (0, 19):
            one = f(m, *(a[k] if isinstance(a, np.ndarray) else a for a in args))
            assert np.array_equal(one, batch[k]), f.__name__   # one state and a batch: the same kernel
        out.append(batch)
np.save("{path}", np.concatenate([np.ravel(x) for x in out]))
"""


def test_plain_mode_runs_every_kernel_with_the_same_results(tmp_path):
    """With SCREWDYN_NUMBA=plain the kernels use none of the internals (the runtime on, heap work
    arrays, reshape views, an even split of batches, a * b + c): they give the fast mode's results
    to rounding, and a state alone equals the same state in a batch in both. (Two kernels, a vector
    and a matrix output, which use every piece of internals.py: plain mode compiles at every run.)"""
    import os
    import subprocess
    import sys

    results = {}
    for mode in ("fast", "plain"):
        path = tmp_path / f"{mode}.npy"
        env = dict(os.environ, SCREWDYN_NUMBA=mode)   # (plain mode does not cache; fast mode shares the cache)
        r = subprocess.run([sys.executable, "-c", PLAIN.format(mode=mode, path=path)], env=env, capture_output=True,
                           text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        results[mode] = np.load(path)
    fast, plain = results["fast"], results["plain"]
    assert np.allclose(plain, fast, rtol=1e-11, atol=1e-11 * np.abs(fast).max())


@njit
def _gemm(A, B, C, alpha, beta, trans_a):
    return _fma.gemm(A, B, C, alpha, beta, trans_a)


GEMM = """
import numpy as np
from numba import njit
from screwdyn.algorithms import internals, target
assert target.MODE == "{mode}", target.MODE

@njit
def gemm(A, B, C, alpha, beta, trans_a):
    return internals.gemm(A, B, C, alpha, beta, trans_a)

rng = np.random.default_rng(3)
W = rng.normal(size=(3, 9, 11))
for trans_a in (False, True):
    A = W[0, 1:6, 2:7]                      # blocks of C arrays: a row stride of 11
    B, C = W[1, 2:7, 1:5], W[2].copy()
    ref = -2.0 * ((A.T if trans_a else A) @ B) + 0.5 * C[3:8, 4:8]
    assert gemm(A, B, C[3:8, 4:8], -2.0, 0.5, trans_a) == 0
    assert np.allclose(C[3:8, 4:8], ref, rtol=1e-14, atol=1e-14), trans_a
    assert np.array_equal(np.delete(C, np.s_[3:8], 0), np.delete(W[2], np.s_[3:8], 0))   # nothing else written
    assert np.array_equal(C[3:8, :4], W[2, 3:8, :4]) and np.array_equal(C[3:8, 8:], W[2, 3:8, 8:])
"""


def test_gemm_is_blas_on_blocks_in_both_modes():
    """``internals.gemm``, ``C = alpha op(A) B + beta C`` on blocks of larger arrays (rows a stride
    apart), with and without ``A`` transposed: numpy's product, and nothing outside ``C``'s block
    written, by BLAS (fast mode) and by the plain loops."""
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(4)
    A, B, C = rng.normal(size=(3, 6, 6))
    assert _gemm(A, B, C, 1.0, 0.0, False) == 0
    np.testing.assert_allclose(C, A @ B, rtol=1e-14, atol=1e-14)
    for mode in ("fast", "plain"):
        r = subprocess.run([sys.executable, "-c", GEMM.format(mode=mode)], env=dict(os.environ, SCREWDYN_NUMBA=mode),
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
