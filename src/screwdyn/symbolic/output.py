"""Usable output of closed-form dynamics: CSE with operation counts, LaTeX, NumPy functions, C source.

* :func:`cse`: ``sympy.cse`` over several matrices at once, with ``sympy.count_ops`` before and
  after (the replacements count once each, however often they are used);
* :func:`latex`: ``M(q) = [...]`` and so on, the rates printed as ``\\dot q``;
* :func:`lambdify_dynamics`: ``M(q)``, ``C(q, qd)``, ``g(q)``, ``tau(q, qd, qdd)`` as NumPy
  functions (``sympy.lambdify`` with CSE);
* :func:`ccode_dynamics`: the same as C99 functions written with ``sympy.ccode``.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy import S
from sympy.core.function import _coeff_isneg
from sympy.core.operations import LatticeOp
from sympy.printing.numpy import NumPyPrinter
from sympy.simplify.radsimp import fraction

from ..errors import InputError

__all__ = ["CSEResult", "cse", "count_ops", "latex", "lambdify_dynamics", "numpy_function", "ccode_dynamics"]

_LABELS = {"M": r"M(q)", "C": r"C(q, \dot{q})", "g": r"g(q)", "tau": r"\tau",
           "coriolis": r"c(q, \dot{q})", "friction": r"\tau_f(\dot{q})"}


def count_ops(named) -> int:
    """``sum(sympy.count_ops(e))`` over every entry of every matrix in ``{name: Matrix}``.

    The count is the one of ``sympy.count_ops`` (operations of the expression *tree*: a shared
    subexpression counts each time it appears), computed once per distinct subexpression.
    """
    memo = {}
    return sum(_count_ops(e, memo) for M in named.values() for e in sp.Matrix(M))


def _local_ops(a):
    """``(operations at node a, children to count)``, the step of ``sympy.count_ops`` (non-visual)."""
    ops = 0
    if a.is_Rational:
        if a is not S.One:
            return int(a.p < 0) + int(a.q != 1), ()
    elif a.is_Mul:
        if _coeff_isneg(a):
            ops += 1
            a = a.as_two_terms()[1] if a.args[0] is S.NegativeOne else -a
        n, d = fraction(a)
        if n.is_Integer:
            return ops + 1 + int(n < 0), (d,)
        if d is not S.One:
            return ops + 1, ((d, n) if not d.is_Integer else (n,))
    elif a.is_Add:
        children = []
        for k, ak in enumerate(a.args):
            neg = _coeff_isneg(ak)
            children.append(-ak if neg else ak)
            ops += int(k > 0)
        if all(_coeff_isneg(ak) for ak in a.args):
            ops += 1
        return ops, tuple(children)
    if a.is_Pow and a.exp is S.NegativeOne:
        return ops + 1, (a.base,)
    if a == S.Exp1:
        return ops + 1, ()
    if a.is_Pow and a.base == S.Exp1:
        return ops + 1, (a.exp,)
    if a.is_Mul or isinstance(a, LatticeOp):
        ops += len(a.args) - 1
    elif a.args and (a.is_Pow or a.is_Function or isinstance(a, (sp.Derivative, sp.Integral, sp.Sum))):
        ops += 1
    return ops, (() if a.is_Symbol else a.args)


def _count_ops(expr, memo):
    """``sympy.count_ops(expr)`` for an expression, memoised over shared subexpressions."""
    expr = sp.sympify(expr)
    if not isinstance(expr, sp.Expr) or expr.is_Relational:
        return sp.count_ops(expr)
    stack = [expr]
    while stack:
        a = stack[-1]
        if a in memo:
            stack.pop()
            continue
        ops, children = _local_ops(a)
        todo = [c for c in children if c not in memo]
        if todo:
            stack.extend(todo)
            continue
        memo[a] = ops + sum(memo[c] for c in children)
        stack.pop()
    return memo[expr]


@dataclass
class CSEResult:
    """The outcome of :func:`cse`.

    ``replacements``: ``[(x_k, expr_k)]`` in evaluation order; ``exprs``: ``{name: Matrix}``
    written with the ``x_k``; ``ops_before`` / ``ops_after``: ``sympy.count_ops`` totals;
    ``seconds``: the time ``sympy.cse`` took.
    """

    replacements: list
    exprs: dict
    ops_before: int
    ops_after: int
    seconds: float

    def __str__(self):
        return (f"CSE: {self.ops_before} operations -> {self.ops_after} "
                f"({len(self.replacements)} subexpressions, {self.seconds:.2f} s)")


def cse(named, prefix="x", order="none") -> CSEResult:
    """Common-subexpression elimination over all matrices of ``{name: Matrix}`` together."""
    names = list(named)
    mats = [sp.Matrix(named[k]) for k in names]
    before = count_ops(named)
    t0 = time.perf_counter()
    replacements, reduced = sp.cse(mats, symbols=sp.numbered_symbols(prefix), order=order)
    seconds = time.perf_counter() - t0
    after = count_ops({"replacements": [e for _, e in replacements], **dict(zip(names, reduced))})
    return CSEResult(replacements, dict(zip(names, reduced)), before, after, seconds)


def latex(named, symbol_names=None, **kwargs) -> str:
    """``M(q) = ...`` for each matrix of ``{name: Matrix}``, one display equation per line."""
    lines = []
    for name, M in named.items():
        body = sp.latex(M, symbol_names=symbol_names or {}, **kwargs)
        lines.append(f"{_LABELS.get(name, name)} = {body}")
    return "\n\n".join(lines)


def _parameter_list(dyn, params):
    return list(dyn.parameters) if params is None else list(params)


def lambdify_dynamics(dyn, what="tau", params=None):
    """A NumPy function of one or several quantities of a :class:`~screwdyn.symbolic.Dynamics`.

    ``what``: ``"M"`` -> ``f(q)``, ``"g"`` -> ``f(q)``, ``"C"`` / ``"coriolis"`` -> ``f(q, qd)``,
    ``"tau"`` -> ``f(q, qd, qdd)``; each takes array-likes of length ``n`` and returns a NumPy
    array, ``(n, n)`` or ``(n,)``. A tuple such as ``("M", "C", "g")`` gives one function of the
    longest argument list (here ``f(q, qd)``) returning a tuple, with one CSE shared by all.
    If the model has free parameters (or ``params`` is given, a list of symbols), the function
    takes one more argument, their values in that order (by default ``dyn.parameters``).

    The function is Python source written by ``sympy``'s ``NumPyPrinter`` after ``sympy.cse``
    (what ``sympy.lambdify(..., cse=True)`` does, without its walks over the expanded tree,
    which dominate for a six-joint arm); its source is in ``function.source``.
    """
    several = not isinstance(what, str)
    names = tuple(what) if several else (what,)
    exprs = [dyn.matrices(names)[k] for k in names]
    nargs = max(len(dyn.arguments(k)) for k in names)
    args = [list(a) for a in dyn.arguments("tau")[:nargs]]
    argnames = ["q", "qd", "qdd"][:nargs]
    plist = _parameter_list(dyn, params)
    if plist:
        args.append(plist)
        argnames.append("params")
    function = numpy_function(argnames, args, exprs, name="_".join(names) + "_numeric")
    out = function if several else (lambda *values: function(*values)[0])
    out.__name__ = function.__name__
    out.__doc__ = (f"({', '.join(names)}) = f({', '.join(argnames)}) of {dyn.model.name!r}, from screwdyn.symbolic."
                   + (f" params = [{', '.join(map(str, plist))}]." if plist else ""))
    out.parameters = plist
    out.source = function.source
    return out


def numpy_function(argnames, args, exprs, name="f"):
    """Compile ``exprs`` (SymPy matrices) into ``f(*argnames)`` returning a tuple of NumPy arrays.

    ``args[k]`` lists the symbols unpacked from argument ``argnames[k]``; column matrices come
    back as ``(n,)`` arrays. Raises :class:`InputError` if an expression has another symbol.
    """
    rename = {}
    lines = [f"def {name}({', '.join(argnames)}):"]
    for aname, syms in zip(argnames, args):
        for k, s in enumerate(syms):
            rename[s] = sp.Symbol(f"{aname}_{k}")
            lines.append(f"    {aname}_{k} = {aname}[{k}]")
    # CSE first: xreplace walks the expression tree without memo, the reduced one is small.
    replacements, reduced = sp.cse([sp.Matrix(e) for e in exprs], symbols=sp.numbered_symbols("x_"), order="none")
    replacements = [(s, e.xreplace(rename)) for s, e in replacements]
    reduced = [M.xreplace(rename) for M in reduced]
    known = set(rename.values()) | {s for s, _ in replacements}
    missing = set().union(*(e.free_symbols for _, e in replacements), *(M.free_symbols for M in reduced)) - known
    if missing:
        back = {v: k for k, v in rename.items()}
        raise InputError(f"{name}: the expressions depend on {sorted(str(back.get(s, s)) for s in missing)}, "
                         "which are not arguments; pass params= or substitute them first")
    printer = NumPyPrinter({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": False})
    for s, e in replacements:
        lines.append(f"    {s} = {printer.doprint(e)}")
    results = []
    for M in reduced:
        rows = [", ".join(printer.doprint(M[r, c]) for c in range(M.cols)) for r in range(M.rows)]
        if M.cols == 1:
            results.append(f"numpy.array([{', '.join(printer.doprint(e) for e in M)}], dtype=float)")
        else:
            results.append("numpy.array([" + ", ".join(f"[{row}]" for row in rows) + "], dtype=float)")
    lines.append(f"    return ({', '.join(results)},)")
    source = "\n".join(lines) + "\n"
    namespace = {"numpy": np}
    namespace.update({k: getattr(np, k) for k in ("sin", "cos", "tan", "sqrt", "sign", "exp", "log", "abs", "pi")})
    exec(compile(source, f"<screwdyn.symbolic {name}>", "exec"), namespace)
    function = namespace[name]
    function.source = source
    return function


def _c_identifier(name):
    s = re.sub(r"\W", "_", name)
    return s if re.match(r"[A-Za-z_]", s) else f"s_{s}"


def ccode_dynamics(dyn, what=("M", "C", "g", "tau"), prefix=None, params=None) -> str:
    """C99 source with one function per quantity, written with ``sympy.ccode`` after CSE.

    ``void <prefix>_M(const double *q, [const double *p,] double *out)``, likewise ``_g``;
    ``_C(q, qd, ...)``; ``_tau(q, qd, qdd, ...)``. Matrices are written row-major into ``out``.
    ``p`` holds the model's free parameters in the order given in the file's comment.
    """
    if isinstance(what, str):
        what = (what,)
    prefix = _c_identifier(prefix or dyn.model.name)
    plist = _parameter_list(dyn, params)
    named = dyn.matrices(what)
    lines = [
        f"/* Closed-form dynamics of {dyn.model.name!r}, generated by screwdyn.symbolic.",
        " * tau = M(q) qdd + C(q, qd) qd + g(q) + b qd + fc sign(qd); matrices row-major.",
        f" * q = [{', '.join(map(str, dyn.q))}]",
        f" * p = [{', '.join(map(str, plist))}] */" if plist else " */",
        "#include <math.h>",
        "",
    ]
    for name, expr in named.items():
        vec_names = ["q", "qd", "qdd"][:len(dyn.arguments(name))]
        vectors = dict(zip(vec_names, dyn.arguments(name)))
        # CSE first: free_symbols and xreplace walk the expression tree without memo.
        replacements, (reduced,) = sp.cse([expr], symbols=sp.numbered_symbols("x"), order="none")
        used = set().union(reduced.free_symbols, *(e.free_symbols for _, e in replacements))
        used -= {s for s, _ in replacements}
        missing = used - {s for v in vectors.values() for s in v} - set(plist)
        if missing:
            raise InputError(f"ccode: {name} depends on {sorted(map(str, missing))}, which are not arguments")
        rename = {}
        decls = []
        for vname, vec in list(vectors.items()) + ([("p", plist)] if plist else []):
            for k, s in enumerate(vec):
                cname = f"{vname}_{k}" if vname != "p" else f"p_{_c_identifier(s.name)}"
                rename[s] = sp.Symbol(cname, real=True)
                if s in used:
                    decls.append(f"    const double {cname} = {vname}[{k}];")
        replacements = [(s, e.xreplace(rename)) for s, e in replacements]
        reduced = reduced.xreplace(rename)
        signature = ", ".join([f"const double *{v}" for v in vec_names] + (["const double *p"] if plist else [])
                              + ["double *out"])
        lines.append(f"void {prefix}_{name}({signature})")
        lines.append("{")
        lines.extend(decls)
        for sym, e in replacements:
            lines.append(f"    const double {sym} = {sp.ccode(e, standard='c99')};")
        for k, e in enumerate(reduced):
            lines.append(f"    out[{k}] = {sp.ccode(e, standard='c99')};")
        lines.append("}")
        lines.append("")
    return "\n".join(lines)
