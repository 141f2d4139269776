"""Constrained dynamics in closed form: holonomic constraints ``phi(q) = 0`` with Lagrange
multipliers (docs/theory.md §15.1, §15.8).

For the tree of a :class:`~screwdyn.symbolic.Dynamics` and ``k`` constraints ``phi(q) = 0``, the
equations of motion are the KKT system (docs/theory.md (15.14))::

    M qdd + C qd + g = tau + A^T lam          A = d phi / dq   (k x n)
    A qdd + Adot qd = 0                        Adot qd = d/dq (A qd) qd

``lam`` the multipliers: the generalized force of the constraints is ``A^T lam``. With ``phi`` the
position of a point of a body minus its anchor (:meth:`ConstrainedDynamics.point`), ``A`` is the
point's Jacobian and ``lam`` the force the anchor exerts on the point, in base axes: the
``lam`` of :func:`screwdyn.constrained_forward_dynamics` for a :class:`~screwdyn.PointLoop` with
``reference="world"``, which the worked example of a closed four-bar checks
(``examples/symbolic_worked_examples.py``).

>>> import sympy as sp
>>> from screwdyn.symbolic import Dynamics
>>> from screwdyn.symbolic.examples import particle_xy
>>> model, s = particle_xy()                       # a point mass in a vertical plane
>>> dyn = Dynamics(model)
>>> x, y = dyn.q
>>> cd = ConstrainedDynamics(dyn, [(x**2 + y**2 - s.l**2) / 2])   # held on a circle: a pendulum
>>> qdd, lam = cd.solve()
>>> sp.simplify(lam[0] - s.m * (s.g * y - dyn.qd[0]**2 - dyn.qd[1]**2) / (x**2 + y**2))
0
"""
from __future__ import annotations

from functools import cached_property

import sympy as sp

from ..errors import InputError

__all__ = ["ConstrainedDynamics"]


class ConstrainedDynamics:
    """The KKT system of a :class:`~screwdyn.symbolic.Dynamics` under holonomic constraints.

    ``phi``: ``k`` expressions in ``dyn.q`` (a list or a ``k x 1`` Matrix), zero on the constraint
    manifold. ``lam``: the multiplier symbols (default ``lambda1..lambdak``).

    Attributes (computed on first use): ``A`` (``k x n``, ``d phi / dq``), ``Adot_qd`` (``k x 1``),
    ``equations`` (the ``n + k`` residuals of (15.14), zero along a motion), ``kkt`` (the ``(n + k)``
    square matrix ``[[M, -A^T], [A, 0]]`` of the unknowns ``(qdd, lam)``); :meth:`solve` gives
    ``(qdd, lam)`` in closed form.
    """

    def __init__(self, dyn, phi, lam=None):
        self.dyn = dyn
        phi = list(phi)
        if not phi:
            raise InputError("phi must hold at least one constraint")
        self.phi = sp.Matrix(phi)
        k = self.phi.shape[0]
        unknown = self.phi.free_symbols & (set(dyn.qd) | set(dyn.qdd))
        if unknown:
            raise InputError(f"phi must depend on the positions q only (holonomic), not on {sorted(map(str, unknown))}")
        lam = sp.symbols(f"lambda1:{k + 1}", real=True) if lam is None else lam
        self.lam = sp.Matrix(list(lam) if isinstance(lam, (list, tuple, sp.MatrixBase)) else [lam])
        if self.lam.shape != (k, 1):
            raise InputError(f"lam must have {k} symbols, one per constraint")
        self.k = k

    @classmethod
    def point(cls, dyn, body, point=(0, 0, 0), anchor=(0, 0, 0), rows=(0, 1, 2), lam=None):
        """The constraints holding a point of ``body`` (in its frame) at ``anchor`` (in the base
        frame): ``phi = r(q) - anchor``, the base-frame ``rows`` of it (a planar mechanism: two)."""
        m = dyn.model
        i, pose = m.frame(body)
        T0 = dyn.poses[i]
        r = T0[:3, :3] @ (pose[:3, :3] @ sp.Matrix(point) + pose[:3, 3]) + T0[:3, 3] - sp.Matrix(anchor)
        return cls(dyn, [r[j] for j in rows], lam)

    @cached_property
    def A(self) -> sp.Matrix:
        """``A = d phi / dq`` (``k x n``)."""
        return self.phi.jacobian(self.dyn.q)

    @cached_property
    def Adot_qd(self) -> sp.Matrix:
        """``Adot qd = d/dq (A qd) qd`` (``k x 1``): the constraint's acceleration at ``qdd = 0``."""
        return (self.A @ self.dyn.qd).jacobian(self.dyn.q) @ self.dyn.qd

    @cached_property
    def equations(self) -> sp.Matrix:
        """``(M qdd + C qd + g - tau - A^T lam ; A qdd + Adot qd)``, ``(n + k) x 1``: zero along a
        motion (``tau`` the symbols ``tau1..taun``, :attr:`tau`)."""
        d = self.dyn
        return sp.Matrix.vstack(d.M @ d.qdd + d.coriolis + d.g - self.tau - self.A.T @ self.lam,
                                self.A @ d.qdd + self.Adot_qd)

    @cached_property
    def tau(self) -> sp.Matrix:
        """The joint-torque symbols ``tau1..taun`` of :attr:`equations` and :meth:`solve`."""
        return sp.Matrix(sp.symbols(f"tau1:{self.dyn.n + 1}", real=True))

    @cached_property
    def kkt(self) -> sp.Matrix:
        """``[[M, -A^T], [A, 0]]``: :attr:`equations` is ``kkt (qdd, lam) - (tau - C qd - g, -Adot qd)``."""
        return sp.Matrix.vstack(sp.Matrix.hstack(self.dyn.M, -self.A.T), sp.Matrix.hstack(self.A, sp.zeros(self.k)))

    def solve(self, tau=None, values=None, simplify=False):
        """``(qdd, lam)`` solving the KKT system in closed form, for the joint torques ``tau`` (default
        zero: the free motion under gravity and the constraints); with ``values`` (a dict of
        symbols to numbers or expressions: parameters, a state) substituted into the system before
        it is solved (a fast numeric solve where the closed form is large). The constraints must
        be independent (``A`` of full row rank) for the solution to exist."""
        d = self.dyn
        tau = sp.zeros(d.n, 1) if tau is None else sp.Matrix(list(tau))
        rhs = sp.Matrix.vstack(tau - d.coriolis - d.g, -self.Adot_qd)
        kkt = self.kkt
        if values is not None:
            kkt, rhs = kkt.subs(values), rhs.subs(values)
        x = kkt.LUsolve(rhs)
        if simplify:
            x = x.applyfunc(sp.simplify)
        return x[:d.n, :], x[d.n:, :]
