"""Text and LaTeX of closed-form dynamics, for people and for the ``screwdyn derive`` command.

``derive_text(model)`` derives ``M(q)``, ``C(q, qd)`` and ``g(q)`` by the Lagrangian route
(:class:`~screwdyn.symbolic.Dynamics`) and returns them as text (or LaTeX), optionally
simplified (``trigsimp``) or with common subexpressions pulled out (``cse``).
``derive(model_or_name)`` does the same for a model, the name of a worked example, or a model
spec of :func:`screwdyn.models.resolve`.
"""
from __future__ import annotations

import os

import sympy as sp

from ..errors import InputError, ModelError
from .lagrange import Dynamics, as_symbolic
from .model import SymbolicModel

__all__ = ["derive", "derive_text", "format_dynamics", "resolve_model"]


def resolve_model(model_or_name) -> SymbolicModel:
    """A :class:`SymbolicModel` from a model or a name: a worked example of
    :mod:`screwdyn.symbolic.examples` (symbolic parameters), else any model spec of
    :func:`screwdyn.models.resolve` (a bundled robot, a URDF file, an ``example-robot-data``
    robot; numbers kept)."""
    if not isinstance(model_or_name, (str, os.PathLike)):
        return as_symbolic(model_or_name)
    name = os.fspath(model_or_name)
    from .examples import WORKED_EXAMPLES

    if name in WORKED_EXAMPLES:
        return WORKED_EXAMPLES[name]()[0]
    from .. import models

    try:
        source = models.resolve(name)
    except ModelError as e:
        raise InputError(f"{e}; not a worked example ({', '.join(sorted(WORKED_EXAMPLES))})") from None
    return as_symbolic(models.load(source))


def _dof(n):
    return f"{n} degree{'s' if n != 1 else ''} of freedom"


def _entries(M, name, symmetric, fmt, one_based=True):
    rows = []
    for r in range(M.rows):
        for c in range(M.cols):
            if symmetric and c < r:
                continue
            idx = f"{r + 1},{c + 1}" if M.cols > 1 else f"{r + 1}"
            rows.append((idx, fmt(M[r, c])))
    return rows


def format_dynamics(dyn: Dynamics, latex=False, cse=False) -> str:
    """``M``, ``C``, ``g`` of a :class:`Dynamics` as text (one entry a line) or LaTeX."""
    model = dyn.model
    named = dyn.matrices(("M", "C", "g"))
    has_friction = any(e != 0 for e in dyn.friction)
    if has_friction:
        named["friction"] = dyn.friction
    replacements = []
    if cse:
        result = dyn.cse(tuple(named))
        replacements, named = result.replacements, result.exprs
    types = "".join("RP"[t] for t in model.joint_type)
    law = "tau = M(q) qdd + C(q, qd) qd + g(q)" + (" + tau_f(qd)" if has_friction else "")
    params = ", ".join(map(str, dyn.parameters)) or "(none)"
    if latex:
        names = dyn.latex_names()

        def fmt(e):
            return sp.latex(e, symbol_names=names)

        out = [f"% {model.name}: {_dof(model.n)} ({types}); {law}",
               f"% q = [{', '.join(map(str, dyn.q))}]; parameters: {params}"]
        out += [f"{sp.latex(s)} = {fmt(e)}" for s, e in replacements]
        labels = {"M": "M(q)", "C": r"C(q, \dot{q})", "g": "g(q)", "friction": r"\tau_f(\dot{q})"}
        for key, M in named.items():
            out.append(f"{labels[key]} = {sp.latex(M, symbol_names=names)}")
        return "\n\n".join(out) + "\n"

    out = [f"{model.name}: {_dof(model.n)} ({types})", law,
           f"q = [{', '.join(map(str, dyn.q))}], qd = [{', '.join(map(str, dyn.qd))}]",
           f"parameters: {params}"]
    if replacements:
        out.append("")
        out.append(f"common subexpressions ({len(replacements)}):")
        out += [f"  {s} = {e}" for s, e in replacements]
    titles = {"M": "M(q) (symmetric, upper triangle)", "C": "C(q, qd)", "g": "g(q)",
              "friction": "tau_f(qd) (viscous and Coulomb friction)"}
    for key, M in named.items():
        out.append("")
        out.append(titles[key] + ":")
        out += [f"  {key}[{i}] = {e}" for i, e in _entries(M, key, key == "M", str)]
    return "\n".join(out) + "\n"


def derive_text(model, latex=False, simplify=False, cse=False) -> str:
    """Derive ``M(q)``, ``C(q, qd)``, ``g(q)`` of ``model`` and return them as text (or LaTeX).

    ``model``: a :class:`SymbolicModel` or numeric :class:`~screwdyn.model.Model`.
    ``simplify``: ``trigsimp`` the entries (slow beyond a few joints).
    ``cse``: pull common subexpressions out first (short output for real robots).
    """
    return format_dynamics(Dynamics(as_symbolic(model), simplify=simplify), latex=latex, cse=cse)


def derive(model_or_name, latex=False, simplify=False, cse=False) -> str:
    """:func:`derive_text` for a model, a worked-example name (``"planar_2r"``, ...) or a model spec
    of :func:`screwdyn.models.resolve` (:func:`resolve_model`)."""
    return derive_text(resolve_model(model_or_name), latex=latex, simplify=simplify, cse=cse)
