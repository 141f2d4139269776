"""The Lagrangian route: closed-form ``tau = M(q) qdd + C(q, qd) qd + g(q)`` with SymPy (docs/theory.md §7).

For a tree of rigid bodies (:class:`Dynamics`):

* kinetic energy ``T = 1/2 qd^T M qd`` with (docs/theory.md §7.1, eq. (7.2))
  ``M = sum_i m_i J_v,i^T J_v,i + J_w,i^T R_i I_i R_i^T J_w,i  (+ diag(n_r^2 I_m), eq. (4.5))``,
  computed as ``M = sum_i J_i^T G_i J_i`` with the body Jacobian ``J_i`` (column ``j`` is
  ``[Ad_{T_{i,j}}] S_j``, the twist of body ``i`` in its own frame per unit ``qd_j``) and the
  spatial inertia ``G_i`` at the body frame: the same sum, with the Jacobians written in the
  body frame, where they depend only on the joints between ``j`` and ``i``;
* potential energy ``U = -sum_i m_i g^T r_i(q)``, ``r_i`` the CoM in the base frame; ``g = dU/dq``;
* Christoffel symbols ``c_ijk = 1/2 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k)`` and
  ``[C]_kj = sum_i c_ijk qd_i``, so that ``Mdot - 2C`` is skew-symmetric;
* joint friction ``b qd + f_c sign(qd)`` (viscous, Coulomb) added to ``tau``.

For any system given by its energies: :func:`lagrange_equations` (eq. (7.1); e.g. a particle on a
vertical line, or the pendulum of docs/theory.md §7.5 in ``q = theta``, eq. (7.18), or
``q = theta_m``, eq. (7.19)).
"""
from __future__ import annotations

import re
from functools import cached_property

import sympy as sp

from ..algorithms.layout import PRISMATIC
from ..errors import InputError
from .backend import SYMPY
from .kinematics import body_poses, joint_poses, scaled_axis
from .model import SymbolicModel
from .spatial import cross, inverse_transform

__all__ = ["Dynamics", "lagrange_equations", "coordinate_symbols", "as_symbolic"]


def as_symbolic(model) -> SymbolicModel:
    """A :class:`SymbolicModel` (a numeric :class:`~screwdyn.model.Model` is converted, numbers kept)."""
    return model if isinstance(model, SymbolicModel) else SymbolicModel.from_model(model)


def _derivative_name(name, order):
    """``q1 -> qd1, qdd1``; ``theta_2 -> thetad_2``; ``x -> xd, xdd``."""
    m = re.match(r"^(.*?)(_?\d+)$", name)
    stem, suffix = (m.group(1), m.group(2)) if m and m.group(1) else (name, "")
    return f"{stem}{'d' * order}{suffix}"


def coordinate_symbols(n=None, q=None, name="q"):
    """``(q, qd, qdd)``: three ``n x 1`` Matrices of real symbols.

    Default names ``q1..qn``, ``qd1..qdn``, ``qdd1..qddn``; given ``q`` (symbols), the rates are
    named after them (``theta1 -> thetad1, thetadd1``).
    """
    if q is None:
        q = [sp.Symbol(f"{name}{k}", real=True) for k in range(1, n + 1)]
    q = [sp.Symbol(s, real=True) if isinstance(s, str) else s for s in q]
    qd = [sp.Symbol(_derivative_name(s.name, 1), real=True) for s in q]
    qdd = [sp.Symbol(_derivative_name(s.name, 2), real=True) for s in q]
    return sp.Matrix(q), sp.Matrix(qd), sp.Matrix(qdd)


def _sym_vector(values, n, what):
    v = sp.Matrix([sp.Symbol(s, real=True) if isinstance(s, str) else s for s in values])
    if v.shape != (n, 1):
        raise InputError(f"{what} must have {n} entries, got {len(values)}")
    return v


class Dynamics:
    """Closed-form equations of motion of a tree by the Euler-Lagrange route.

    ``tau = M(q) qdd + C(q, qd) qd + g(q) + b qd + f_c sign(qd)``

    ``model``: a :class:`SymbolicModel` (or a numeric :class:`~screwdyn.model.Model`, whose
    numbers are kept). ``q, qd, qdd``: the coordinate symbols (default ``q1..``, ``qd1..``,
    ``qdd1..``). ``simplify``: simplify ``M`` with ``trigsimp`` before differentiating it, then
    ``C`` and ``g`` (worth it for small models; slow for six joints).

    Attributes (computed on first use, then kept): ``M`` (n x n), ``C`` (n x n), ``g`` (n x 1),
    ``tau`` (n x 1), ``T`` (kinetic energy), ``U`` (potential energy), ``christoffel``
    (``c[i, j, k]``, an n x n x n array), ``friction`` (``b qd + f_c sign(qd)``), ``poses``
    (``T_{0,i}(q)``), ``body_jacobians``.

    >>> from screwdyn.symbolic.examples import planar_2r
    >>> model, s = planar_2r()
    >>> dyn = Dynamics(model, simplify=True)
    >>> dyn.M[1, 1]
    L2**2*m2
    >>> dyn.g[1]
    L2*g*m2*cos(q1 + q2)
    """

    def __init__(self, model, q=None, qd=None, qdd=None, *, simplify=False):
        self.model = as_symbolic(model)
        n = self.model.n
        q0, qd0, qdd0 = coordinate_symbols(n, q)
        self.q = q0
        self.qd = qd0 if qd is None else _sym_vector(qd, n, "qd")
        self.qdd = qdd0 if qdd is None else _sym_vector(qdd, n, "qdd")
        self.simplify = simplify
        self.n = n

    def __repr__(self):
        return f"Dynamics({self.model!r}, q={list(self.q)})"

    def _simp(self, e):
        return sp.trigsimp(e) if self.simplify else e

    # ------------------------------------------------------------------ kinematics (cached)
    @cached_property
    def joint_poses(self):
        """``T_{p(i),i}(q_i)`` for each body."""
        return joint_poses(self.model, list(self.q), SYMPY)

    @cached_property
    def poses(self):
        """``T_{0,i}(q)``: pose of each body frame in the base frame."""
        return body_poses(self.model, list(self.q), SYMPY, self.joint_poses)

    @cached_property
    def body_jacobians(self):
        """``J_i`` (6 x n) with ``V_i = J_i qd``, the twist ``(omega, v)`` of body ``i`` in its own frame.

        Column ``j`` (``j`` = ``i`` or an ancestor) is ``[Ad_{T_{i,j}}] S_j``: ``(a, p x a)`` with
        ``a = R_{i,j} a_j`` for a revolute joint (``p`` the origin of ``{j}`` in ``{i}``, on the
        axis) and ``(0, a)`` for a prismatic one; other columns are zero.
        """
        m, n = self.model, self.n
        out = []
        for i in range(n):
            J = sp.zeros(6, n)
            T_i_j = sp.eye(4)
            j = i
            while j >= 0:
                R, p = T_i_j[:3, :3], T_i_j[:3, 3]
                a = R @ scaled_axis(m, j)
                if m.joint_type[j] == PRISMATIC:
                    J[3:, j] = a
                else:
                    J[:3, j] = a
                    J[3:, j] = cross(SYMPY, p, a)
                T_i_j = T_i_j @ inverse_transform(SYMPY, self.joint_poses[j])   # T_{i,p(j)}
                j = m.parent[j]
            out.append(J)
        return out

    @cached_property
    def inertias(self):
        """``G_i``, the spatial inertia of each body in its own frame (division-free form)."""
        return [self.model.spatial_inertia(i) for i in range(self.n)]

    # ------------------------------------------------------------------ the equations of motion
    @cached_property
    def M(self) -> sp.Matrix:
        """The mass matrix ``M(q) = sum_i J_i^T G_i J_i + diag(n_r^2 I_m)`` (symmetric, n x n)."""
        m, n = self.model, self.n
        M = sp.zeros(n, n)
        for i in range(n):
            J, G = self.body_jacobians[i], self.inertias[i]
            chain = sorted(m.ancestors(i))          # root ... i
            GJ = {k: G @ J[:, k] for k in chain}
            for a, j in enumerate(chain):
                for k in chain[a:]:
                    M[j, k] += (J[:, j].T @ GJ[k])[0, 0]
        for j in range(n):
            M[j, j] += m.armature[j]
            for k in range(j, n):
                M[j, k] = self._simp(M[j, k])
                M[k, j] = M[j, k]
        return M

    @cached_property
    def dM(self) -> list:
        """``[dM/dq_k for k in range(n)]``.

        From ``M = sum_i J_i^T G_i J_i`` and the derivative of a body Jacobian's columns,
        ``dJ_j/dq_k = [ad_{J_j}] J_k`` when joint ``k`` lies strictly between ``j`` and body ``i``
        (zero otherwise): ``dM/dq_k = sum_i (dJ_i^T G_i J_i + J_i^T G_i dJ_i)``, built from the
        Jacobian columns with no symbolic differentiation. With ``simplify``, the simplified
        ``M`` is differentiated instead (shorter expressions for ``trigsimp``).
        """
        if self.simplify:
            return [self.M.diff(qk) for qk in self.q]
        m, n = self.model, self.n
        dM = [sp.zeros(n, n) for _ in range(n)]
        for i in range(n):
            J, G = self.body_jacobians[i], self.inertias[i]
            chain = sorted(m.ancestors(i))          # root ... i
            GJ = {a: G @ J[:, a] for a in chain}
            for pos, k in enumerate(chain):
                # dJ_i/dq_k: columns j above k on the chain
                dJ = {j: _bracket(J[:, j], J[:, k]) for j in chain[:pos]}
                if not dJ:
                    continue
                GdJ = {j: G @ col for j, col in dJ.items()}
                for x, a in enumerate(chain):
                    for b in chain[x:]:
                        term = sp.S.Zero
                        if a in dJ:
                            term += (dJ[a].T @ GJ[b])[0, 0]
                        if b in dJ:
                            term += (J[:, a].T @ GdJ[b])[0, 0]
                        if term != 0:
                            dM[k][a, b] += term
        for k in range(n):
            for a in range(n):
                for b in range(a + 1, n):
                    dM[k][b, a] = dM[k][a, b]
        return dM

    @cached_property
    def christoffel(self) -> sp.ImmutableDenseNDimArray:
        """Christoffel symbols of the first kind, ``c[i, j, k] = 1/2 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k)``."""
        n, dM = self.n, self.dM
        c = [[[0] * n for _ in range(n)] for _ in range(n)]
        for i in range(n):
            for j in range(i, n):
                for k in range(n):
                    c[i][j][k] = c[j][i][k] = self._simp((dM[i][k, j] + dM[j][k, i] - dM[k][i, j]) / 2)
        return sp.ImmutableDenseNDimArray(c)

    @cached_property
    def C(self) -> sp.Matrix:
        """The Coriolis matrix ``[C]_kj = sum_i c_ijk qd_i`` (Christoffel form: ``Mdot - 2C`` is skew).

        With ``simplify``, the Christoffel symbols are simplified and the sums factored."""
        n, c, qd = self.n, self.christoffel, self.qd
        C = sp.Matrix(n, n, lambda k, j: sum((c[i, j, k] * qd[i] for i in range(n)), sp.S.Zero))
        return C.applyfunc(sp.factor_terms) if self.simplify else C

    @cached_property
    def U(self):
        """Potential energy ``U(q) = -sum_i g^T (m_i r_i)``, ``m_i r_i = R_{0,i} h_i + m_i p_{0,i}``."""
        m = self.model
        U = sp.S.Zero
        for i, T in enumerate(self.poses):
            mr = T[:3, :3] @ m.first_moment[i] + m.mass[i] * T[:3, 3]
            U -= (m.gravity.T @ mr)[0, 0]
        return U

    @cached_property
    def g(self) -> sp.Matrix:
        """The gravity vector ``g(q) = dU/dq`` (n x 1)."""
        return sp.Matrix([self._simp(sp.diff(self.U, qi)) for qi in self.q])

    @cached_property
    def T(self):
        """Kinetic energy ``T = 1/2 qd^T M qd``."""
        return (self.qd.T @ self.M @ self.qd)[0, 0] / 2

    @cached_property
    def friction(self) -> sp.Matrix:
        """Joint friction forces ``b_i qd_i + f_c,i sign(qd_i)`` (viscous and Coulomb)."""
        m = self.model
        return sp.Matrix([m.damping[i] * self.qd[i] + m.friction[i] * sp.sign(self.qd[i]) for i in range(self.n)])

    @cached_property
    def coriolis(self) -> sp.Matrix:
        """``c(q, qd) = C(q, qd) qd``, the velocity-product forces."""
        return (self.C @ self.qd).applyfunc(self._simp)

    @cached_property
    def tau(self) -> sp.Matrix:
        """``tau = M qdd + C qd + g + b qd + f_c sign(qd)`` (n x 1)."""
        return self.M @ self.qdd + self.C @ self.qd + self.g + self.friction

    @property
    def Mdot(self) -> sp.Matrix:
        """``dM/dt = sum_k dM/dq_k qd_k``."""
        return sum((dMk * qdk for dMk, qdk in zip(self.dM, self.qd)), sp.zeros(self.n, self.n))

    # ------------------------------------------------------------------ Jacobians and forces (theory.md §7.1)
    def point_jacobian(self, body, point=(0, 0, 0)) -> sp.Matrix:
        """``J_v`` (3 x n): velocity, in the base frame, of a point fixed on ``body`` (given in its frame).

        Column ``j``: ``z_j x (r - o_j)`` for a revolute joint ``j`` (axis ``z_j`` through ``o_j``),
        ``z_j`` for a prismatic one, zero for a joint that does not carry the body: the linear rows
        of the world-aligned Jacobian (docs/theory.md eq. (5.3)) of a frame at the point.
        """
        m = self.model
        i, pose = m.frame(body)
        T0 = self.poses[i]
        local = pose[:3, :3] @ sp.Matrix(point) + pose[:3, 3]
        r = T0[:3, :3] @ local + T0[:3, 3]
        J = sp.zeros(3, self.n)
        for j in m.ancestors(i):
            z = self.poses[j][:3, :3] @ scaled_axis(m, j)
            J[:, j] = z if m.joint_type[j] == PRISMATIC else cross(SYMPY, z, r - self.poses[j][:3, 3])
        return J

    def link_jacobians(self, body):
        """``(J_v, J_w)``, both 3 x n in the base frame, of the CoM and angular velocity of ``body``
        (docs/theory.md §7.1).

        ``M = sum_i m_i J_v^T J_v + J_w^T R_i I_i R_i^T J_w`` with these, plus the rotor terms.
        """
        m = self.model
        i = m.body_index(body)
        Jv = self.point_jacobian(i, m.com[i])
        Jw = sp.zeros(3, self.n)
        for j in m.ancestors(i):
            if m.joint_type[j] != PRISMATIC:
                Jw[:, j] = self.poses[j][:3, :3] @ scaled_axis(m, j)
        return Jv, Jw

    def generalized_force(self, body, point, force) -> sp.Matrix:
        """``J_v^T f``: the joint forces equivalent to a force ``f`` (base frame) applied at a point of ``body``."""
        return self.point_jacobian(body, point).T @ sp.Matrix(force)

    # ------------------------------------------------------------------ output
    @property
    def parameters(self) -> list:
        """The model's free symbols (every symbol but the coordinates)."""
        return self.model.parameters

    def matrices(self, what=("M", "C", "g")) -> dict:
        """``{name: Matrix}`` for names among ``"M"``, ``"C"``, ``"g"``, ``"tau"``, ``"coriolis"``, ``"friction"``."""
        if isinstance(what, str):
            what = (what,)
        out = {}
        for name in what:
            if name not in ("M", "C", "g", "tau", "coriolis", "friction"):
                raise InputError(f"unknown quantity {name!r}; choose from M, C, g, tau, coriolis, friction")
            out[name] = getattr(self, name)
        return out

    def subs(self, *args, **kwargs) -> dict:
        """``{"M", "C", "g", "tau"}`` with ``subs`` applied (e.g. numbers for the parameters)."""
        return {k: v.subs(*args, **kwargs) for k, v in self.matrices(("M", "C", "g", "tau")).items()}

    def cse(self, what=("M", "C", "g"), **kwargs):
        """Common-subexpression elimination of the chosen matrices; see :func:`~screwdyn.symbolic.output.cse`."""
        from .output import cse

        return cse(self.matrices(what), **kwargs)

    def count_ops(self, what=("M", "C", "g")) -> int:
        """Operation count (``sympy.count_ops``) of the chosen matrices, summed."""
        from .output import count_ops

        return count_ops(self.matrices(what))

    def latex(self, what=("M", "C", "g"), **kwargs) -> str:
        """LaTeX of the chosen matrices, with ``\\dot q`` and ``\\ddot q`` for the rates."""
        from .output import latex

        return latex(self.matrices(what), symbol_names=self.latex_names(), **kwargs)

    def latex_names(self) -> dict:
        """``{symbol: LaTeX}`` printing the rates as ``\\dot{q}_{1}``, ``\\ddot{q}_{1}``."""
        names = {}
        for q, qd, qdd in zip(self.q, self.qd, self.qdd):
            base = sp.latex(q)
            m = re.match(r"^(.*?)(_\{.*\}|_.*)$", base)
            stem, sub = (m.group(1), m.group(2)) if m else (base, "")
            names[qd] = rf"\dot{{{stem}}}{sub}"
            names[qdd] = rf"\ddot{{{stem}}}{sub}"
        return names

    def arguments(self, name) -> list:
        """The argument vectors of the numeric function of quantity ``name``: ``q`` [, ``qd`` [, ``qdd``]]."""
        return {"M": [self.q], "g": [self.q], "C": [self.q, self.qd], "coriolis": [self.q, self.qd],
                "friction": [self.qd], "tau": [self.q, self.qd, self.qdd]}[name]

    def lambdify(self, what="tau", params=None):
        """A fast NumPy function of quantity ``what``; see :func:`~screwdyn.symbolic.output.lambdify_dynamics`."""
        from .output import lambdify_dynamics

        return lambdify_dynamics(self, what, params)

    def ccode(self, what=("M", "C", "g", "tau"), prefix=None, params=None) -> str:
        """C source of the chosen quantities; see :func:`~screwdyn.symbolic.output.ccode_dynamics`."""
        from .output import ccode_dynamics

        return ccode_dynamics(self, what, prefix=prefix, params=params)

    def text(self, latex=False, cse=False) -> str:
        """Human-readable ``M``, ``C``, ``g``; see :func:`~screwdyn.symbolic.derive.derive_text`."""
        from .derive import format_dynamics

        return format_dynamics(self, latex=latex, cse=cse)


def _bracket(V, W):
    """``[ad_V] W = (w x w', v x w' + w x v')`` for twists ``V = (w, v)``, ``W = (w', v')``."""
    w, v, w2, v2 = V[:3, 0], V[3:, 0], W[:3, 0], W[3:, 0]
    return sp.Matrix.vstack(cross(SYMPY, w, w2), cross(SYMPY, v, w2) + cross(SYMPY, w, v2))


def _is_function_of(e, t):
    return isinstance(e, sp.core.function.AppliedUndef) and e.args == (t,)


def lagrange_equations(T, U, q, qd=None, qdd=None, generalized_forces=None, t=None, simplify=False) -> sp.Matrix:
    """The Euler-Lagrange equations ``d/dt dL/dqd_k - dL/dq_k - f_k`` with ``L = T - U`` (docs/theory.md eq. (7.1)).

    Returns the ``n x 1`` Matrix of residuals ``E_k = d/dt (dL/dqd_k) - dL/dq_k - f_k`` (the
    equations of motion read ``E = 0``); without ``generalized_forces``, ``E`` is the generalized
    force the motion requires.

    ``q``: the generalized coordinates, either symbols (then ``qd``, ``qdd`` are symbols too,
    named ``xd``, ``xdd`` after ``x`` when not given, and ``d/dt`` is
    ``sum_i (d/dq_i) qd_i + (d/dqd_i) qdd_i``) or functions of time ``x(t)`` (then ``T`` and ``U``
    may use ``x(t).diff(t)`` or the symbols ``qd``, and the result uses ``x(t).diff(t, 2)``
    unless ``qdd`` symbols are given).

    >>> m, g = sp.symbols("m g", positive=True)
    >>> x, xd = sp.symbols("x xd", real=True)
    >>> lagrange_equations(m * xd**2 / 2, m * g * x, [x], [xd])
    Matrix([[g*m + m*xdd]])
    """
    q = list(q)
    n = len(q)
    Q = sp.zeros(n, 1) if generalized_forces is None else sp.Matrix(list(generalized_forces))
    if Q.shape != (n, 1):
        raise InputError(f"generalized_forces must have {n} entries")
    T, U = sp.sympify(T), sp.sympify(U)
    time_functions = all(isinstance(e, sp.core.function.AppliedUndef) for e in q)
    if time_functions:
        t = q[0].args[0] if t is None else t
        if not all(_is_function_of(e, t) for e in q):
            raise InputError("the coordinates must all be functions of the same time symbol")
        rates = [e.diff(t) for e in q]
        back = {}
        if qd is not None:
            T, U, Q = (x.subs(dict(zip(qd, rates))) for x in (T, U, Q))
            back.update(dict(zip(rates, qd)))
        L = T - U
        E = sp.Matrix([sp.diff(sp.diff(L, rates[k]), t) - sp.diff(L, q[k]) for k in range(n)]) - Q
        if qdd is not None:
            E = E.subs({e.diff(t, 2): s for e, s in zip(q, qdd)})
        if back:
            E = E.subs(back)
    else:
        _, qd0, qdd0 = coordinate_symbols(q=q)
        qd = list(qd0) if qd is None else list(qd)
        qdd = list(qdd0) if qdd is None else list(qdd)
        if len(qd) != n or len(qdd) != n:
            raise InputError(f"q, qd and qdd must have the same length ({n})")
        L = T - U

        def ddt(e):
            out = sum((sp.diff(e, q[i]) * qd[i] + sp.diff(e, qd[i]) * qdd[i] for i in range(n)), sp.S.Zero)
            return out + (sp.diff(e, t) if t is not None else 0)

        E = sp.Matrix([ddt(sp.diff(L, qd[k])) - sp.diff(L, q[k]) for k in range(n)]) - Q
    return E.applyfunc(sp.simplify) if simplify else E
