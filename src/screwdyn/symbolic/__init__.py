"""Symbolic closed-form dynamics with SymPy: the Lagrangian route, and RNEA on expressions.

``tau = M(q) qdd + C(q, qd) qd + g(q)`` (+ viscous and Coulomb friction, + reflected rotor
inertia on the diagonal of ``M``). Twists are ``(omega, v)``, wrenches ``(n, f)``.

* Models: :class:`SymbolicModel` (``from_model``, ``from_urdf``, ``from_screws``) and
  :class:`SymbolicModelBuilder`; any parameter may be a SymPy expression.
* Euler-Lagrange (docs/theory.md §7): :class:`Dynamics` (``M``, ``C``, ``g``, ``tau``, ``T``,
  ``U``, ``christoffel``) and, for any coordinates and energies, :func:`lagrange_equations`.
* Newton-Euler (docs/theory.md §6): :func:`rnea`, one generic implementation for SymPy and NumPy.
* Constraints (docs/theory.md §15.8): :class:`ConstrainedDynamics`, holonomic constraints by
  Lagrange multipliers (a pendulum held on a circle, a closed four-bar).
* Output: :meth:`Dynamics.cse` (operation counts before/after), :meth:`Dynamics.latex`,
  :meth:`Dynamics.lambdify`, :meth:`Dynamics.ccode`; :func:`derive_text` for the CLI.
* The worked examples of docs/theory.md §7.5, and a few more: :mod:`screwdyn.symbolic.examples`.

>>> import sympy as sp
>>> from screwdyn.symbolic import Dynamics, rnea
>>> from screwdyn.symbolic.examples import planar_2r
>>> model, s = planar_2r()
>>> dyn = Dynamics(model)
>>> (dyn.tau - rnea(model, dyn.q, dyn.qd, dyn.qdd)).applyfunc(sp.simplify) == sp.zeros(2, 1)
True
"""
from .backend import NUMPY, SYMPY, backend_for
from .constrained import ConstrainedDynamics
from .derive import derive, derive_text
from .lagrange import Dynamics, as_symbolic, coordinate_symbols, lagrange_equations
from .model import SymbolicModel, SymbolicModelBuilder, to_sympy
from .output import CSEResult, count_ops, cse
from .rnea import rnea
from .simplification import is_trig_zero, simplify_matrix, trig_equal
from .spatial import rot_x, rot_y, rot_z, rotation_from_rpy, translation

__all__ = [
    "SymbolicModel",
    "SymbolicModelBuilder",
    "Dynamics",
    "ConstrainedDynamics",
    "lagrange_equations",
    "rnea",
    "derive",
    "derive_text",
    "cse",
    "count_ops",
    "CSEResult",
    "coordinate_symbols",
    "as_symbolic",
    "to_sympy",
    "is_trig_zero",
    "trig_equal",
    "simplify_matrix",
    "translation",
    "rot_x",
    "rot_y",
    "rot_z",
    "rotation_from_rpy",
    "SYMPY",
    "NUMPY",
    "backend_for",
]
