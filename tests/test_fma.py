"""The fused multiply-add helpers of ``algorithms/fma.py``: one rounding where the CPU fuses,
the plain ``a * b + c`` where it does not, and dot products summed in the order they state."""
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from screwdyn.algorithms.fma import HAS_FMA, dot3, dot6, fma

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _rounded(x: Fraction) -> float:
    return float(x)   # Fraction -> float rounds to nearest, ties to even


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
        assert fma(a, b, c) == _rounded(exact)
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


def test_integer_arguments_are_promoted():
    assert fma(3, 4, 5) == 17.0
    assert isinstance(fma(3, 4, 5), float)
