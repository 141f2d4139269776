"""Deciding trigonometric identities in the joint angles, fast and exactly.

``sympy.simplify(a - b) == 0`` is the general test, but it slows down quickly with the size of
the expressions. The dynamics of a robot are polynomials in ``sin q_i``, ``cos q_i`` (and in
prismatic coordinates, rates and parameters), possibly over a polynomial denominator, so
``a == b`` can be decided by writing ``s_i = sin q_i``, ``c_i = cos q_i`` and reducing the
numerator of ``a - b`` modulo the ideal ``(s_i^2 + c_i^2 - 1)`` (the generators are a Groebner
basis: their leading terms ``s_i^2`` are coprime), which is what :func:`is_trig_zero` does.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["is_trig_zero", "trig_equal", "simplify_matrix"]


def is_trig_zero(expr, angles) -> bool:
    """True iff ``expr`` is identically zero, for ``expr`` polynomial in ``sin``/``cos`` of ``angles``
    (single angles and their integer sums, e.g. ``cos(q1 + q2)``) and rational in everything else."""
    e, previous = sp.sympify(expr), None
    while e != previous:                 # expand_trig leaves sin(a + b) from sin(2 (a + b)) to a next pass
        e, previous = sp.expand_trig(e), e
    s = [sp.Dummy(f"s{k}") for k in range(len(angles))]
    c = [sp.Dummy(f"c{k}") for k in range(len(angles))]
    e = e.xreplace({sp.sin(a): si for a, si in zip(angles, s)}).xreplace({sp.cos(a): ci for a, ci in zip(angles, c)})
    num = sp.expand(sp.numer(sp.together(e)))
    if num == 0:
        return True
    functions = num.atoms(sp.Function)
    if any(f.has(*angles) for f in functions):
        raise ValueError("is_trig_zero: the expression is not polynomial in sin/cos of the angles")
    num = num.xreplace({f: sp.Dummy() for f in functions})
    others = sorted(num.free_symbols - set(s) - set(c), key=str)
    gens = s + c + others
    _, r = sp.reduced(num, [si**2 + ci**2 - 1 for si, ci in zip(s, c)], *gens, order="lex")
    return sp.expand(r) == 0


def trig_equal(a, b, angles) -> bool:
    """``a == b`` identically (matrices entrywise), by :func:`is_trig_zero`."""
    if isinstance(a, sp.MatrixBase) or isinstance(b, sp.MatrixBase):
        A, B = sp.Matrix(a), sp.Matrix(b)
        return A.shape == B.shape and all(is_trig_zero(x - y, angles) for x, y in zip(A, B))
    return is_trig_zero(sp.sympify(a) - sp.sympify(b), angles)


def simplify_matrix(M, method=sp.trigsimp):
    """``M`` with ``method`` (default ``trigsimp``) applied to every entry."""
    return sp.Matrix(M).applyfunc(method)
