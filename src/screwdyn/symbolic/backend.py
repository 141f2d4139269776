"""Element-type backends: the few array operations the generic algorithms of this package use.

The readable reference algorithms of :mod:`screwdyn.symbolic` (forward kinematics, the
recursive Newton-Euler algorithm) are written once, against a backend ``xp``, and run on

* :data:`SYMPY`: SymPy ``Matrix`` objects whose entries are expressions (closed-form dynamics);
* :data:`NUMPY`: ``float64`` NumPy arrays (the same algorithm, numerically).

A backend offers: ``matrix(rows)``, ``vector(entries)`` (a column 3- or 6-vector), ``zeros(n)``
(a zero vector), ``eye(n)``, ``block(rows_of_blocks)``, ``concat(a, b)`` (stack two vectors),
``dot(a, b)``, ``sin``, ``cos``, ``sign``. Products are ``@``, transposes ``.T``; entries are read
with ``v[k]`` and ``T[:3, :3]``, ``T[:3, 3]``, which mean the same on both backends.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

__all__ = ["SYMPY", "NUMPY", "Backend", "backend_for"]


class Backend:
    """Interface of a backend (see the module docstring); :data:`SYMPY` and :data:`NUMPY` implement it."""

    name = "abstract"

    def __repr__(self):
        return f"<screwdyn.symbolic backend {self.name!r}>"


class _SympyBackend(Backend):
    name = "sympy"
    sin = staticmethod(sp.sin)
    cos = staticmethod(sp.cos)
    sign = staticmethod(sp.sign)

    @staticmethod
    def matrix(rows):
        return sp.Matrix(rows)

    @staticmethod
    def vector(entries):
        return sp.Matrix(list(entries))

    @staticmethod
    def zeros(n):
        return sp.zeros(n, 1)

    @staticmethod
    def eye(n):
        return sp.eye(n)

    @staticmethod
    def block(rows):
        return sp.Matrix.vstack(*[sp.Matrix.hstack(*row) for row in rows])

    @staticmethod
    def concat(a, b):
        return sp.Matrix.vstack(a, b)

    @staticmethod
    def dot(a, b):
        return sum((x * y for x, y in zip(a, b)), sp.S.Zero)


class _NumpyBackend(Backend):
    name = "numpy"
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sign = staticmethod(np.sign)

    @staticmethod
    def matrix(rows):
        return np.array(rows, dtype=float)

    @staticmethod
    def vector(entries):
        return np.array(list(entries), dtype=float).reshape(-1)

    @staticmethod
    def zeros(n):
        return np.zeros(n)

    @staticmethod
    def eye(n):
        return np.eye(n)

    @staticmethod
    def block(rows):
        return np.block([[np.asarray(b, dtype=float) for b in row] for row in rows])

    @staticmethod
    def concat(a, b):
        return np.concatenate([a, b])

    @staticmethod
    def dot(a, b):
        return float(np.dot(a, b))


SYMPY = _SympyBackend()
NUMPY = _NumpyBackend()


def _is_symbolic(x) -> bool:
    if isinstance(x, (sp.Basic, sp.MatrixBase)):
        return True
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype == object):
        return any(_is_symbolic(e) for e in x)
    return False


def backend_for(*values) -> Backend:
    """:data:`SYMPY` if any value is (or holds) a SymPy object, else :data:`NUMPY`."""
    return SYMPY if any(_is_symbolic(v) for v in values) else NUMPY
