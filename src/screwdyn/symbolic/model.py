"""The symbolic robot model: a :class:`~screwdyn.model.Model` whose numbers may be SymPy expressions.

The tree structure is the one of :class:`~screwdyn.model.Model` (flat tuples indexed by body,
``parent[i] < i``; body ``i``'s frame lies on its joint axis; ``S_i = (a, 0)`` revolute or
``(0, a)`` prismatic; ``T_{p(i),i}(q) = T_parent_body[i] exp([S_i] q_i)``), and every parameter
(poses, axes, masses, centres of mass, inertias, rotor inertias, gear ratios, viscous and
Coulomb friction, gravity) may be a number or any SymPy expression.

Four ways to get one:

* :meth:`SymbolicModel.from_model`: a numeric model with chosen numbers replaced by symbols;
* :meth:`SymbolicModel.from_urdf`: the same, loading the URDF with :func:`screwdyn.load_urdf`;
* :meth:`SymbolicModel.from_screws`: Modern Robotics lists ``M_list, G_list, S_list``;
* :class:`SymbolicModelBuilder`: link by link in code, as :class:`~screwdyn.model.ModelBuilder`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..algorithms.layout import PRISMATIC, REVOLUTE
from ..errors import ModelError
from .backend import SYMPY
from .spatial import Ad, cross, inverse_transform, skew, transform

__all__ = ["SymbolicModel", "SymbolicModelBuilder", "to_sympy"]

_JOINT_TYPES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
_PER_BODY = ("joint_axis", "joint_scale", "T_parent_body", "mass", "com", "inertia_com", "rotor_inertia",
             "gear_ratio", "damping", "friction")
_SHAPES = {"joint_axis": (3, 1), "T_parent_body": (4, 4), "com": (3, 1), "inertia_com": (3, 3)}


def to_sympy(x, tol=1e-12):
    """A number or array as SymPy, with floats within ``tol`` of an integer made exact.

    Rotations read from files carry entries like ``6.1e-17`` for ``cos(pi/2)`` and ``1.0`` for
    ``1``; making those exact ``0`` and ``1`` keeps the closed-form expressions short.
    Arrays become ``ImmutableMatrix`` (vectors as columns); SymPy objects pass through.
    """
    if isinstance(x, sp.MatrixBase):
        return sp.ImmutableMatrix(x.applyfunc(lambda e: to_sympy(e, tol)))
    if isinstance(x, (list, tuple, np.ndarray)):
        a = np.empty(np.shape(x) if not isinstance(x, np.ndarray) else x.shape, dtype=object)
        flat = [to_sympy(e, tol) for e in np.asarray(x, dtype=object).reshape(-1)]
        a.reshape(-1)[:] = flat
        return sp.ImmutableMatrix(a.reshape(a.shape[0], -1).tolist())
    if isinstance(x, sp.Basic):
        return x
    if isinstance(x, (bool, np.bool_)):
        raise ModelError(f"expected a number, got {x!r}")
    if isinstance(x, (int, np.integer)):
        return sp.Integer(int(x))
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise ModelError(f"parameter {x!r} is not finite")
        r = round(float(x))
        return sp.Integer(r) if abs(float(x) - r) <= tol else sp.Float(float(x))
    return sp.sympify(x)


def _matrix(x, shape, what):
    m = to_sympy(x)
    if not isinstance(m, sp.MatrixBase):
        raise ModelError(f"{what}: expected a {shape} array, got {x!r}")
    if m.shape != shape:
        if shape[1] == 1 and m.shape in ((1, shape[0]),):
            m = m.T
        else:
            raise ModelError(f"{what}: expected shape {shape}, got {m.shape}")
    return sp.ImmutableMatrix(m)


def _scalar(x, what):
    s = to_sympy(x)
    if isinstance(s, sp.MatrixBase):
        raise ModelError(f"{what}: expected a scalar, got a matrix")
    return s


def inertia_about_origin(mass, com, inertia_com):
    """``I_o = I_c + m [c]^T [c]`` (Steiner, docs/theory.md eq. (3.3)) about the frame origin; SymPy,
    no division."""
    C = skew(SYMPY, com)
    return sp.ImmutableMatrix(inertia_com + mass * (C.T @ C))


@dataclass(frozen=True, eq=False)
class SymbolicModel:
    """A kinematic tree whose parameters are SymPy expressions (numbers included).

    Attributes (``n`` bodies = joints = entries of ``q``; matrices are SymPy ``ImmutableMatrix``)::

        parent          (n,) ints   parent body, -1 for the base; parent[i] < i
        joint_type      (n,) ints   REVOLUTE (0) or PRISMATIC (1)
        joint_axis      n x (3, 1)  unit joint axis a_i in body i's frame
        joint_scale     n exprs     the joint moves joint_scale * q_i along its axis (1 by default)
        T_parent_body   n x (4, 4)  pose of body i in its parent at q = 0
        mass            n exprs     m_i
        com             n x (3, 1)  centre of mass c_i in body i's frame
        inertia_com     n x (3, 3)  rotational inertia about the CoM, body axes
        rotor_inertia   n exprs     motor rotor inertia I_m
        gear_ratio      n exprs     n_r (motor angle / joint angle)
        damping         n exprs     viscous friction coefficient (joint side)
        friction        n exprs     Coulomb friction (joint side)
        gravity         (3, 1)      gravity in the base frame (the base accelerates by -gravity)
        frame_names, frame_body, frame_pose   named frames: body carrying each, pose in that body
    """

    name: str
    joint_names: tuple
    link_names: tuple
    parent: tuple
    joint_type: tuple
    joint_axis: tuple
    T_parent_body: tuple
    mass: tuple
    com: tuple
    inertia_com: tuple
    rotor_inertia: tuple
    gear_ratio: tuple
    damping: tuple
    friction: tuple
    gravity: sp.ImmutableMatrix
    base_name: str = "base"
    frame_names: tuple = ()
    frame_body: tuple = ()
    frame_pose: tuple = ()
    joint_scale: tuple = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.joint_names)
        if self.joint_scale is None:
            object.__setattr__(self, "joint_scale", (1,) * n)
        for key in ("joint_names", "link_names", "frame_names"):
            object.__setattr__(self, key, tuple(getattr(self, key)))
        object.__setattr__(self, "parent", tuple(int(p) for p in self.parent))
        object.__setattr__(self, "joint_type", tuple(int(t) for t in self.joint_type))
        object.__setattr__(self, "frame_body", tuple(int(b) for b in self.frame_body))
        for key in _PER_BODY:
            vals = tuple(getattr(self, key))
            if len(vals) != n:
                raise ModelError(f"SymbolicModel.{key} has {len(vals)} entries for {n} bodies")
            if key in _SHAPES:
                vals = tuple(_matrix(v, _SHAPES[key], f"{key}[{i}]") for i, v in enumerate(vals))
            else:
                vals = tuple(_scalar(v, f"{key}[{i}]") for i, v in enumerate(vals))
            object.__setattr__(self, key, vals)
        object.__setattr__(self, "gravity", _matrix(self.gravity, (3, 1), "gravity"))
        object.__setattr__(self, "frame_pose", tuple(_matrix(T, (4, 4), "frame_pose") for T in self.frame_pose))
        if len(self.link_names) != n or len(self.parent) != n or len(self.joint_type) != n:
            raise ModelError("link_names, parent and joint_type need one entry per body")
        if any(p >= i or p < -1 for i, p in enumerate(self.parent)):
            raise ModelError("bodies must be ordered with -1 <= parent[i] < i")
        if any(t not in (REVOLUTE, PRISMATIC) for t in self.joint_type):
            raise ModelError("joint_type entries must be REVOLUTE (0) or PRISMATIC (1)")
        if not len(self.frame_names) == len(self.frame_body) == len(self.frame_pose):
            raise ModelError("frame_names, frame_body and frame_pose must have the same length")

    # ------------------------------------------------------------------ derived quantities
    @property
    def n(self) -> int:
        """Degrees of freedom (= number of moving bodies)."""
        return len(self.joint_names)

    @property
    def armature(self) -> tuple:
        """Reflected rotor inertia ``n_r^2 I_m`` on the diagonal of ``M`` (docs/theory.md §4.3, eq. (4.5))."""
        return tuple(nr**2 * Im for nr, Im in zip(self.gear_ratio, self.rotor_inertia))

    @property
    def first_moment(self) -> tuple:
        """``h_i = m_i c_i`` in body ``i``'s frame."""
        return tuple(sp.ImmutableMatrix(m * c) for m, c in zip(self.mass, self.com))

    @property
    def inertia_origin(self) -> tuple:
        """Inertia about each body frame's origin, ``I_c + m [c]^T [c]`` (Steiner)."""
        return tuple(inertia_about_origin(m, c, I) for m, c, I in zip(self.mass, self.com, self.inertia_com))

    def spatial_inertia(self, i) -> sp.Matrix:
        """The 6x6 spatial inertia ``G_i`` of body ``i`` in its own frame, ``(omega, v)`` order::

            G_i = [[I_o, [h]], [-[h], m I_3]]      (= spatial_inertia(m, c, I_c), docs/theory.md eq. (3.6))

        from the mass, first moment ``h = m c`` and inertia about the origin ``I_o``: no division
        by the mass, so a body merged from parts stays polynomial in their parameters."""
        i = self.body_index(i)
        H = skew(SYMPY, self.first_moment[i])
        return sp.Matrix(sp.BlockMatrix([[sp.Matrix(self.inertia_origin[i]), H], [-H, self.mass[i] * sp.eye(3)]]))

    @property
    def parameters(self) -> list:
        """The free symbols of the model, sorted by name."""
        syms = set()
        for key in _PER_BODY:
            for v in getattr(self, key):
                syms |= v.free_symbols
        syms |= self.gravity.free_symbols
        for T in self.frame_pose:
            syms |= T.free_symbols
        return sorted(syms, key=lambda s: s.name)

    @property
    def children(self) -> tuple:
        """``children[i]``: the bodies whose parent is ``i``."""
        out = [[] for _ in range(self.n)]
        for i, p in enumerate(self.parent):
            if p >= 0:
                out[p].append(i)
        return tuple(tuple(c) for c in out)

    def ancestors(self, i) -> list:
        """Body ``i`` and its ancestors, from ``i`` down to the root."""
        chain = []
        while i >= 0:
            chain.append(i)
            i = self.parent[i]
        return chain

    def body_index(self, name) -> int:
        """Index of a body given as an index, a link name or the name of its joint."""
        if isinstance(name, (int, np.integer)):
            if not -self.n <= name < self.n:
                raise ModelError(f"body index {name} out of range for a model with {self.n} bodies")
            return int(name) % self.n
        if name in self.link_names:
            return self.link_names.index(name)
        if name in self.joint_names:
            return self.joint_names.index(name)
        raise ModelError(f"unknown body {name!r}; links are {list(self.link_names)}, joints {list(self.joint_names)}")

    def frame(self, name):
        """``(body, pose)`` of a named frame (or of a body's own frame, given its name or index)."""
        if isinstance(name, str) and name in self.frame_names:
            k = self.frame_names.index(name)
            return self.frame_body[k], self.frame_pose[k]
        return self.body_index(name), sp.ImmutableMatrix(sp.eye(4))

    # ------------------------------------------------------------------ transformations
    def replace(self, **changes) -> "SymbolicModel":
        """A copy with some fields changed (the model itself is immutable)."""
        return dataclasses.replace(self, **changes)

    def subs(self, *args, **kwargs) -> "SymbolicModel":
        """A copy with ``expr.subs(*args, **kwargs)`` applied to every parameter (e.g. numbers for symbols)."""
        changes = {}
        for key in _PER_BODY:
            changes[key] = tuple(v.subs(*args, **kwargs) for v in getattr(self, key))
        changes["gravity"] = self.gravity.subs(*args, **kwargs)
        changes["frame_pose"] = tuple(T.subs(*args, **kwargs) for T in self.frame_pose)
        return self.replace(**changes)

    def to_model(self):
        """The numeric :class:`~screwdyn.model.Model` (every parameter must be a number).

        Built with :class:`~screwdyn.model.ModelBuilder`, body by body, so the numeric model is
        checked as any other; joint limits are left unbounded."""
        from ..inertia import RigidBody
        from ..model import ModelBuilder

        free = self.parameters
        if free:
            raise ModelError(f"to_model: the model still has free symbols {free}; substitute them first (subs)")

        def num(x):
            return np.array(x, dtype=float).reshape(np.shape(x)) if isinstance(x, sp.MatrixBase) else float(x)

        b = ModelBuilder(self.name, base=self.base_name, gravity=num(self.gravity).reshape(3))
        for i in range(self.n):
            parent = self.base_name if self.parent[i] < 0 else self.link_names[self.parent[i]]
            b.add_body(self.link_names[i], parent, self.joint_names[i], "prismatic" if self.joint_type[i] else "revolute",
                       axis=num(self.joint_axis[i]).reshape(3), origin=num(self.T_parent_body[i]),
                       inertial=RigidBody(num(self.mass[i]), num(self.com[i]).reshape(3), num(self.inertia_com[i])),
                       rotor_inertia=num(self.rotor_inertia[i]), gear_ratio=num(self.gear_ratio[i]),
                       damping=num(self.damping[i]), friction=num(self.friction[i]),
                       joint_scale=num(self.joint_scale[i]))
        taken = set(self.link_names) | {self.base_name}
        for name, body, pose in zip(self.frame_names, self.frame_body, self.frame_pose):
            if name not in taken:
                b.add_frame(name, self.base_name if body < 0 else self.link_names[body], num(pose))
        return b.build()

    def __repr__(self):
        types = "".join("RP"[t] for t in self.joint_type)
        params = self.parameters
        shown = ", ".join(map(str, params[:8])) + (", ..." if len(params) > 8 else "")
        return f"SymbolicModel({self.name!r}, n={self.n}, joints={types}, symbols=[{shown}])"

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_model(cls, model, symbols=None, *, symbolic_masses=False, symbolic_coms=False,
                   symbolic_inertias=False, symbolic_gravity=False, symbolic_friction=False,
                   symbolic_rotors=False, tol=1e-12) -> "SymbolicModel":
        """The symbolic copy of a numeric :class:`~screwdyn.model.Model`, some numbers made symbols.

        Numbers within ``tol`` of an integer become exact (``6e-17 -> 0``, ``1.0 -> 1``).

        Flags (symbol names use the 1-based body number ``k``):

        * ``symbolic_masses``: ``m_k``;
        * ``symbolic_coms``: ``cx_k, cy_k, cz_k``;
        * ``symbolic_inertias``: a symmetric ``Ixx_k, Ixy_k, Ixz_k, Iyy_k, Iyz_k, Izz_k``;
        * ``symbolic_gravity``: ``g`` times the direction of the model's gravity (``(0, 0, -g)``);
        * ``symbolic_friction``: viscous ``b_k`` and Coulomb ``fc_k``;
        * ``symbolic_rotors``: rotor inertia ``Im_k`` and gear ratio ``nr_k``.

        ``symbols`` (applied after the flags) maps what to replace to its new value:

        * ``"gravity"``: a 3-vector;
        * a field name (``"mass"``, ``"com"``, ``"inertia_com"``, ``"T_parent_body"``, ``"joint_axis"``,
          ``"rotor_inertia"``, ``"gear_ratio"``, ``"damping"``, ``"friction"``): a list with one value
          per body (``None`` keeps the number) or a dict ``{body: value}``;
        * ``(field, body)``: the value for one body;
        * ``(field, body, index)``: one entry, ``index`` an int for vectors or ``(row, col)``.

        A body is its index, link name or joint name. For example, a link length read from a URDF:
        ``symbols={("T_parent_body", "elbow_joint", (2, 3)): L2, ("mass", "forearm_link"): m3}``.

        Revolute and prismatic joints only: a model with a free-flyer or spherical joint is refused
        (a :class:`ModelError`), their quaternion coordinates having no Lagrangian of the form
        ``1/2 qd^T M(q) qd`` in ``q`` (use the numeric functions, which take them).
        """
        multi = [name for name, t in zip(model.joint_names, model.joint_type) if t not in (REVOLUTE, PRISMATIC)]
        if multi:
            raise ModelError(f"the symbolic layer derives revolute and prismatic joints only; {model.name!r} has "
                             f"free-flyer or spherical joints {multi} (the numeric functions take them)")
        base = cls(
            name=model.name, joint_names=model.joint_names, link_names=model.link_names,
            parent=tuple(int(p) for p in model.parent), joint_type=tuple(int(t) for t in model.joint_type),
            joint_axis=[to_sympy(a, tol) for a in model.joint_axis],
            joint_scale=[to_sympy(v, tol) for v in getattr(model, "joint_scale", np.ones(model.n))],
            T_parent_body=[to_sympy(T, tol) for T in model.T_parent_body],
            mass=[to_sympy(m, tol) for m in model.mass], com=[to_sympy(c, tol) for c in model.com],
            inertia_com=[to_sympy(I, tol) for I in model.inertia_com],
            rotor_inertia=[to_sympy(v, tol) for v in model.rotor_inertia],
            gear_ratio=[to_sympy(v, tol) for v in model.gear_ratio],
            damping=[to_sympy(v, tol) for v in model.damping], friction=[to_sympy(v, tol) for v in model.friction],
            gravity=to_sympy(model.gravity, tol), base_name=model.base_name,
            frame_names=model.frame_names, frame_body=tuple(int(b) for b in model.frame_body),
            frame_pose=[to_sympy(T, tol) for T in model.frame_pose],
        )
        return base.with_symbols(symbols, symbolic_masses=symbolic_masses, symbolic_coms=symbolic_coms,
                                 symbolic_inertias=symbolic_inertias, symbolic_gravity=symbolic_gravity,
                                 symbolic_friction=symbolic_friction, symbolic_rotors=symbolic_rotors)

    def with_symbols(self, symbols=None, *, symbolic_masses=False, symbolic_coms=False, symbolic_inertias=False,
                     symbolic_gravity=False, symbolic_friction=False, symbolic_rotors=False) -> "SymbolicModel":
        """A copy with parameters replaced by symbols; arguments as in :meth:`from_model`."""
        n = self.n
        fields = {key: list(getattr(self, key)) for key in _PER_BODY}
        gravity = self.gravity
        ks = range(1, n + 1)
        if symbolic_masses:
            fields["mass"] = [sp.Symbol(f"m_{k}", positive=True) for k in ks]
        if symbolic_coms:
            fields["com"] = [sp.Matrix(sp.symbols(f"cx_{k} cy_{k} cz_{k}", real=True)) for k in ks]
        if symbolic_inertias:
            fields["inertia_com"] = [_symmetric_inertia(k) for k in ks]
        if symbolic_friction:
            fields["damping"] = [sp.Symbol(f"b_{k}", nonnegative=True) for k in ks]
            fields["friction"] = [sp.Symbol(f"fc_{k}", nonnegative=True) for k in ks]
        if symbolic_rotors:
            fields["rotor_inertia"] = [sp.Symbol(f"Im_{k}", nonnegative=True) for k in ks]
            fields["gear_ratio"] = [sp.Symbol(f"nr_{k}", real=True) for k in ks]
        if symbolic_gravity:
            g = sp.Symbol("g", positive=True)
            norm = sp.sqrt(sum(e**2 for e in gravity))
            if norm == 0:
                raise ModelError("symbolic_gravity: the model's gravity is zero, so it has no direction")
            gravity = (gravity / norm).applyfunc(lambda e: to_sympy(float(e)) if e.is_number else e) * g

        for key, value in (symbols or {}).items():
            if key == "gravity":
                gravity = value
                continue
            if isinstance(key, str):
                if key not in fields:
                    raise ModelError(f"symbols: unknown field {key!r}; fields are {list(fields)} and 'gravity'")
                items = value.items() if isinstance(value, dict) else enumerate(value)
                for body, v in items:
                    if v is not None:
                        fields[key][self.body_index(body)] = v
                continue
            if not isinstance(key, tuple) or len(key) not in (2, 3) or key[0] not in fields:
                raise ModelError(f"symbols: key {key!r} is not a field name, (field, body) or (field, body, index)")
            i = self.body_index(key[1])
            if len(key) == 2:
                fields[key[0]][i] = value
            else:
                m = sp.Matrix(fields[key[0]][i])
                idx = key[2]
                if isinstance(idx, tuple):
                    m[idx[0], idx[1]] = value
                    if key[0] == "inertia_com" and idx[0] != idx[1]:
                        m[idx[1], idx[0]] = value
                else:
                    m[idx] = value
                fields[key[0]][i] = m
        return self.replace(gravity=gravity, **fields)

    @classmethod
    def from_urdf(cls, path, symbols=None, **flags) -> "SymbolicModel":
        """Load a URDF with :func:`screwdyn.load_urdf`, then replace numbers by symbols (see :meth:`from_model`)."""
        try:
            from .. import load_urdf
        except ImportError:
            try:
                from ..io.urdf import load_urdf
            except ImportError as exc:
                raise ModelError("SymbolicModel.from_urdf needs screwdyn.load_urdf (screwdyn.io.urdf), "
                                 "which is not available in this installation") from exc
        return cls.from_model(load_urdf(path), symbols=symbols, **flags)

    @classmethod
    def from_screws(cls, M_list, G_list, S_list, gravity=(0, 0, -sp.Symbol("g", positive=True)),
                    name="screw_chain") -> "SymbolicModel":
        """A serial chain from Modern Robotics lists (docs/theory.md §4.2), entries numbers or SymPy
        expressions.

        ``M_list``: home poses ``M_{i-1,i}`` of the CoM frames ``{i}``; an extra last entry
        ``M_{n,n+1}`` adds the tip frame ``"ee"``. ``G_list``: spatial inertias ``G_i`` (6x6,
        ``(omega, v)``) in ``{i}``. ``S_list``: space-frame screw axes, as columns of a ``6 x n``
        matrix or a list of 6-vectors. As :meth:`screwdyn.model.Model.from_screws`, each body
        frame is moved onto its joint axis (``A_i = [Ad_{M_{0,i}^-1}] S_i``); the CoM frames are
        kept as frames ``"link{i}_com"``; a non-unit axis gives the joint its ``joint_scale``.
        """
        Ms = [_matrix(M, (4, 4), f"M_list[{i}]") for i, M in enumerate(M_list)]
        Gs = [_matrix(G, (6, 6), f"G_list[{i}]") for i, G in enumerate(G_list)]
        if isinstance(S_list, (sp.MatrixBase, np.ndarray)):
            S = sp.Matrix(S_list)
            if S.shape[0] != 6:
                raise ModelError(f"S_list must be a 6 x n matrix of screw-axis columns, got shape {S.shape}")
            Ss = [S[:, j] for j in range(S.shape[1])]
        else:
            Ss = [_matrix(s, (6, 1), f"S_list[{j}]") for j, s in enumerate(S_list)]
        n = len(Ss)
        if len(Gs) != n or len(Ms) not in (n, n + 1):
            raise ModelError(f"from_screws: {n} screw axes need {n} spatial inertias and {n} or {n + 1} M's "
                             f"(got {len(Gs)} and {len(Ms)})")
        b = SymbolicModelBuilder(name=name, base="base", gravity=gravity)
        M0 = sp.eye(4)
        T_prevp_prev = sp.eye(4)
        prev = "base"
        for i in range(n):
            M0 = M0 @ Ms[i]
            A = (Ad(SYMPY, inverse_transform(SYMPY, M0)) @ Ss[i]).applyfunc(sp.trigsimp)
            w, v = A[:3, 0], A[3:, 0]
            if all(sp.simplify(e) == 0 for e in w):
                scale = sp.simplify(sp.sqrt(v.dot(v)))
                jtype, axis, r = "prismatic", (v / scale).applyfunc(sp.simplify), sp.zeros(3, 1)
            else:
                scale = sp.simplify(sp.sqrt(w.dot(w)))
                jtype, axis = "revolute", (w / scale).applyfunc(sp.simplify)
                r = (cross(SYMPY, w, v) / scale**2).applyfunc(sp.trigsimp)   # a point on the axis
            T_i_ip = transform(SYMPY, sp.eye(3), r)
            m, c, I = _body_from_spatial(Gs[i])
            b.add_body(f"link{i + 1}", prev, f"joint{i + 1}", jtype, axis=axis,
                       origin=(T_prevp_prev @ Ms[i] @ T_i_ip).applyfunc(sp.expand),
                       mass=m, com=c - r, inertia=I, joint_scale=scale)
            b.add_frame(f"link{i + 1}_com", f"link{i + 1}", inverse_transform(SYMPY, T_i_ip))
            T_prevp_prev = inverse_transform(SYMPY, T_i_ip)
            prev = f"link{i + 1}"
        if len(Ms) == n + 1:
            b.add_frame("ee", prev, T_prevp_prev @ Ms[n])
        return b.build()


def _symmetric_inertia(k):
    xx, xy, xz, yy, yz, zz = sp.symbols(f"Ixx_{k} Ixy_{k} Ixz_{k} Iyy_{k} Iyz_{k} Izz_{k}", real=True)
    return sp.Matrix([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _body_from_spatial(G):
    """``(m, c, I_c)`` from a 6x6 spatial inertia at a frame (the inverse of :func:`spatial_inertia`)."""
    G = sp.Matrix(G)
    m = G[3, 3]
    if m == 0:
        return m, sp.zeros(3, 1), G[:3, :3]
    C = G[:3, 3:] / m
    c = sp.Matrix([C[2, 1], C[0, 2], C[1, 0]])
    S = skew(SYMPY, c)
    return m, c, (G[:3, :3] + m * S @ S).applyfunc(sp.cancel)


@dataclass
class _Part:
    body: int          # the moving body carrying this link, -1: the base
    pose: sp.Matrix    # pose of the link frame in that body's frame


class SymbolicModelBuilder:
    """Build a :class:`SymbolicModel` in code, body by body; any entry may be a SymPy expression.

    Parents must be added before their children. A ``"fixed"`` joint merges the link into the
    body carrying its parent (mass, first moment and inertia about that body's origin add up)
    and keeps the link as a named frame.

    >>> import sympy as sp
    >>> from screwdyn.symbolic import translation
    >>> L1, L2, m1, m2, g = sp.symbols("L1 L2 m1 m2 g", positive=True)
    >>> b = SymbolicModelBuilder("planar_2r", gravity=(0, -g, 0))
    >>> _ = b.add_body("link1", "base", "joint1", "revolute", axis=(0, 0, 1), mass=m1, com=(L1, 0, 0))
    >>> _ = b.add_body("link2", "link1", "joint2", "revolute", axis=(0, 0, 1), origin=translation((L1, 0, 0)),
    ...                mass=m2, com=(L2, 0, 0))
    >>> b.build()
    SymbolicModel('planar_2r', n=2, joints=RR, symbols=[L1, L2, g, m1, m2])
    """

    def __init__(self, name="robot", base="base", gravity=(0, 0, -sp.Symbol("g", positive=True))):
        self.name = name
        self.base = base
        self.gravity = gravity
        self._parts = {base: _Part(-1, sp.eye(4))}
        self._bodies = []     # dicts of body fields
        self._frames = []

    def add_body(self, name, parent, joint_name, joint_type, axis=(0, 0, 1), origin=None, mass=0,
                 com=(0, 0, 0), inertia=None, rotor_inertia=0, gear_ratio=1, damping=0, friction=0, joint_scale=1):
        """Add link ``name`` joined to ``parent`` by joint ``joint_name`` of type ``"revolute"``,
        ``"continuous"``, ``"prismatic"`` or ``"fixed"``, placed at ``origin`` (4x4 pose in the parent
        at ``q = 0``), with the unit ``axis`` in the link frame, mass, CoM and inertia about the CoM;
        the joint moves ``joint_scale * q`` along its axis."""
        if name in self._parts:
            raise ModelError(f"link {name!r} is defined twice")
        if parent not in self._parts:
            raise ModelError(f"body {name!r}: parent {parent!r} is not defined yet (add parents first)")
        if joint_type not in _JOINT_TYPES and joint_type != "fixed":
            raise ModelError(f"joint {joint_name!r}: unsupported joint type {joint_type!r}")
        T = _matrix(sp.eye(4) if origin is None else origin, (4, 4), f"joint {joint_name!r} origin")
        com = _matrix(com, (3, 1), f"link {name!r} com")
        inertia = _matrix(sp.zeros(3, 3) if inertia is None else inertia, (3, 3), f"link {name!r} inertia")
        mass = _scalar(mass, f"link {name!r} mass")
        owner = self._parts[parent]
        T_body_link = owner.pose @ T
        if joint_type == "fixed":
            if owner.body < 0:
                raise ModelError(f"link {name!r}: a fixed joint to the base carries no moving body")
            self._merge(owner.body, T_body_link, mass, com, inertia)
            self._parts[name] = _Part(owner.body, T_body_link)
            self._frames.append((name, owner.body, T_body_link))
            return self
        a = _matrix(axis, (3, 1), f"joint {joint_name!r} axis")
        if all(e == 0 for e in a):
            raise ModelError(f"joint {joint_name!r}: axis is zero")
        self._bodies.append(dict(
            joint_name=joint_name, link_name=name, parent=owner.body, joint_type=_JOINT_TYPES[joint_type],
            joint_axis=a, T_parent_body=T_body_link, mass=mass, h=mass * com,
            Io=inertia_about_origin(mass, com, inertia), rotor_inertia=rotor_inertia, gear_ratio=gear_ratio,
            damping=damping, friction=friction, joint_scale=joint_scale))
        self._parts[name] = _Part(len(self._bodies) - 1, sp.eye(4))
        self._frames.append((name, len(self._bodies) - 1, sp.eye(4)))
        return self

    def _merge(self, i, T, mass, com, inertia):
        """Add a rigid part (mass, CoM, inertia about its CoM, in a frame at pose ``T`` in body ``i``).

        Parts add without division as mass, first moment ``h = m c`` and inertia about the body
        origin ``I_o = R I_c R^T + m [c]^T [c]`` (compound bodies, docs/theory.md §3.3: rotation
        (3.4) and Steiner (3.3))."""
        body = self._bodies[i]
        R, p = T[:3, :3], T[:3, 3]
        c_part = R @ com + p
        body["mass"] = body["mass"] + mass
        body["h"] = body["h"] + mass * c_part
        body["Io"] = body["Io"] + inertia_about_origin(mass, c_part, R @ inertia @ R.T)

    def add_frame(self, name, parent, pose=None):
        """Add a named frame rigidly attached to link (or frame) ``parent`` at ``pose``."""
        if parent not in self._parts:
            raise ModelError(f"frame {name!r}: parent {parent!r} is not a link or frame")
        owner = self._parts[parent]
        T = owner.pose @ _matrix(sp.eye(4) if pose is None else pose, (4, 4), f"frame {name!r} pose")
        self._parts[name] = _Part(owner.body, T)
        self._frames.append((name, owner.body, T))
        return self

    def build(self) -> SymbolicModel:
        """The immutable :class:`SymbolicModel`."""
        B = []
        for b in self._bodies:
            m = b["mass"]
            com = sp.zeros(3, 1) if m == 0 else b["h"] / m
            # I_c = I_o - m [c]^T [c]; with no merged part this gives back the inertia as entered.
            B.append(dict(b, com=com, inertia_com=b["Io"] - inertia_about_origin(m, com, sp.zeros(3, 3))))
        return SymbolicModel(
            name=self.name, joint_names=[b["joint_name"] for b in B], link_names=[b["link_name"] for b in B],
            parent=[b["parent"] for b in B], joint_type=[b["joint_type"] for b in B],
            **{key: [b[key] for b in B] for key in _PER_BODY},
            gravity=self.gravity, base_name=self.base,
            frame_names=[f[0] for f in self._frames], frame_body=[f[1] for f in self._frames],
            frame_pose=[f[2] for f in self._frames],
        )
