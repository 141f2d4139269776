"""The robot model: a kinematic tree stored as flat arrays indexed by body, ``parent[i] < i``.

Each moving body ``i`` (``0 <= i < nbodies``) carries exactly one joint that joins it to its
parent body ``parent[i]`` (``-1``: the fixed base): revolute or prismatic (one degree of
freedom), spherical (three) or a free-flyer (six; a floating base). Fixed joints are merged:
the child's inertia is lumped into the body that carries it and the child link is kept as a
named frame. Body ``i``'s frame is the URDF frame of its link, which lies on the joint axis.

``q`` (``nq`` entries) and the velocities ``qd``, ``qdd`` and torques ``tau`` (``nv == n``
entries) are ordered as ``model.joint_names``; joint ``j``'s blocks are
``q[idx_qs[j]:idx_qs[j] + nqs[j]]`` and ``qd[idx_vs[j]:idx_vs[j] + nvs[j]]`` (Pinocchio's names).
A free-flyer's q block is ``(x, y, z, qx, qy, qz, qw)``, the body's position in its parent and a
unit quaternion (scalar last), its v block the body's twist in its own frame ``(omega, v)``; a
spherical joint's q block is a unit quaternion, its v block the angular velocity in the child
frame (docs/theory.md §4.5). Build a model with :class:`ModelBuilder` (in code),
:func:`screwdyn.load_urdf`, or :meth:`Model.from_screws` (Modern Robotics lists).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .algorithms.work import STACK_BODIES
from .algorithms.layout import (
    ARMAT, AXIS, AXISK, BALL, FREE, GRAVITY, INNER, IORG, JSCALE, JTYPE, MASS, MCOM, NQ, ONE_DOF, PARENT, POS, POSEK,
    PRISMATIC, QIDX, REVOLUTE, ROT, WIDTH,
)
from .errors import ModelError
from .inertia import RigidBody, check_inertia, compound
from .spatial import Ad, inverse_transform

__all__ = ["Model", "ModelBuilder", "REVOLUTE", "PRISMATIC", "FREE_FLYER", "SPHERICAL"]

FREE_FLYER = 2   # model.joint_type of a free-flyer (floating base): nq 7, nv 6
SPHERICAL = 3    # of a spherical (ball) joint: nq 4, nv 3

_JOINT_TYPES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC, "free_flyer": FREE_FLYER,
                "floating": FREE_FLYER, "spherical": SPHERICAL}
JOINT_NQ = np.array([1, 1, 7, 4])   # by joint type
JOINT_NV = np.array([1, 1, 6, 3])
JOINT_LETTER = "RPFS"


@dataclass(frozen=True, eq=False)
class Model:
    """An immutable kinematic tree. Body arrays are indexed by body ``i`` (= joint ``i``, in
    ``joint_names`` order); joint arrays by degree of freedom or by entry of ``q``.

    Attributes (shapes in brackets; ``nb`` moving bodies, ``nv == n`` degrees of freedom, ``nq``
    configuration entries, ``k`` frames; for a model of revolute and prismatic joints only,
    ``nb == nv == nq``)::

        parent          (nb,)      parent body, -1 for the base; parent[i] < i
        joint_type      (nb,)      REVOLUTE (0), PRISMATIC (1), FREE_FLYER (2) or SPHERICAL (3)
        joint_axis      (nb, 3)    unit joint axis in the body frame (zero for FREE_FLYER, SPHERICAL)
        joint_scale     (nb,)      the joint moves joint_scale * q along its axis (1 from URDF)
        T_parent_body   (nb, 4, 4) pose of body i in its parent at the neutral q (M_{p(i),i}, Xtree)
        mass            (nb,)      body mass [kg]
        com             (nb, 3)    centre of mass in the body frame [m]
        inertia_com     (nb, 3, 3) rotational inertia about the CoM, body axes [kg m^2]
        nqs, nvs        (nb,)      sizes of each joint's q and v blocks
        idx_qs, idx_vs  (nb,)      where each joint's q and v blocks start
        rotor_inertia   (nv,)      motor rotor inertia I_m about its spin axis [kg m^2]
        gear_ratio      (nv,)      n_r = motor angle / joint angle
        damping         (nv,)      viscous friction coefficient [N m s / rad or N s / m]
        friction        (nv,)      Coulomb friction [N m or N]
        velocity_limit, effort_limit   (nv,)   limits (inf: none)
        q_lower, q_upper               (nq,)   position limits (inf: none)
        gravity         (3,)       gravity in the base frame [m/s^2]
        frame_names     (k,)       every URDF link, the base, and added frames
        frame_body      (k,)       the body carrying each frame (-1: base)
        frame_pose      (k, 4, 4)  pose of each frame in its body's frame
        mimic           dict       joint -> (leader joint, multiplier, offset)
        visuals         tuple      visual geometry of the links (screwdyn.geometry.Visual), each
                                   attached to a frame by link name; the dynamics ignore it
        constraints     tuple      constraints of the model's file (screwdyn.constraints: loops,
                                   welds, couplings), which every constrained function applies
                                   before those its call passes; none by default
        collisions      tuple      collision geometry of the links (screwdyn.geometry.Collision),
                                   attached likewise; screwdyn.collision detects its contacts
        environment     Environment | None   the world's static geometry that came with the model
                                   (an MJCF's floor and obstacles; screwdyn.environment)
    """

    name: str
    joint_names: tuple
    link_names: tuple
    base_name: str
    parent: np.ndarray
    joint_type: np.ndarray
    joint_axis: np.ndarray
    joint_scale: np.ndarray
    T_parent_body: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia_com: np.ndarray
    rotor_inertia: np.ndarray
    gear_ratio: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    gravity: np.ndarray
    frame_names: tuple
    frame_body: np.ndarray
    frame_pose: np.ndarray
    mimic: dict = field(default_factory=dict)
    visuals: tuple = ()
    constraints: tuple = ()
    collisions: tuple = ()
    environment: object = None
    n: int = field(init=False)  # degrees of freedom, nv

    def __post_init__(self):
        nb = len(self.joint_names)
        joint_type = np.array(self.joint_type, dtype=np.int64).reshape(nb)
        if np.any((joint_type < 0) | (joint_type > SPHERICAL)):
            raise ModelError("joint_type entries must be REVOLUTE (0), PRISMATIC (1), FREE_FLYER (2) or SPHERICAL (3)")
        nqs, nvs = JOINT_NQ[joint_type], JOINT_NV[joint_type]
        nq, nv = int(nqs.sum()), int(nvs.sum())
        object.__setattr__(self, "n", nv)
        arrays = {
            "parent": (np.int64, (nb,)), "joint_type": (np.int64, (nb,)), "joint_axis": (float, (nb, 3)),
            "joint_scale": (float, (nb,)), "T_parent_body": (float, (nb, 4, 4)), "mass": (float, (nb,)),
            "com": (float, (nb, 3)), "inertia_com": (float, (nb, 3, 3)), "rotor_inertia": (float, (nv,)),
            "gear_ratio": (float, (nv,)), "damping": (float, (nv,)), "friction": (float, (nv,)),
            "q_lower": (float, (nq,)), "q_upper": (float, (nq,)), "velocity_limit": (float, (nv,)),
            "effort_limit": (float, (nv,)), "gravity": (float, (3,)),
            "frame_body": (np.int64, (len(self.frame_names),)), "frame_pose": (float, (len(self.frame_names), 4, 4)),
        }
        for key, (dtype, shape) in arrays.items():
            a = np.array(getattr(self, key), dtype=dtype)
            if a.size != int(np.prod(shape)):
                raise ModelError(f"{key} must have shape {shape} for this model, got {a.shape}")
            a = a.reshape(shape)
            a.setflags(write=False)
            object.__setattr__(self, key, a)
        for key in ("joint_names", "link_names", "frame_names", "visuals", "constraints", "collisions"):
            object.__setattr__(self, key, tuple(getattr(self, key)))
        frames = set(self.frame_names)
        for c in self.collisions:
            if getattr(c, "link", None) not in frames:
                raise ModelError(f"collision {c!r}: its link is not a frame of the model (collisions are attached "
                                 "to links; the world's are an Environment)")
        if len(self.link_names) != nb:
            raise ModelError("link_names and joint_names must have one entry per body")
        if np.any(self.parent >= np.arange(nb)):
            raise ModelError("bodies must be ordered with parent[i] < i")
        if not np.all(np.isfinite(self.gravity)):
            raise ModelError("gravity has a NaN or inf entry")
        for key, value in (("nqs", nqs), ("nvs", nvs), ("idx_qs", np.cumsum(nqs) - nqs),
                           ("idx_vs", np.cumsum(nvs) - nvs)):
            value = np.array(value, dtype=np.int64)
            value.setflags(write=False)
            object.__setattr__(self, key, value)
        object.__setattr__(self, "nq", nq)
        object.__setattr__(self, "nv", nv)
        object.__setattr__(self, "nbodies", nb)
        rows = self.idx_vs + self.nvs - 1           # the kernels' row of each body (its joint's last)
        object.__setattr__(self, "_body_row", rows)
        object.__setattr__(self, "_one_dof", nb == nv)   # a row per body: f_ext arrays go to the kernels as they are
        object.__setattr__(self, "_kd", self._pack())
        self._check_finite()
        object.__setattr__(self, "_shape", (nv,))   # shapes and zeros the public functions pass on
        object.__setattr__(self, "_nn", (nv, nv))
        object.__setattr__(self, "_zero", np.zeros(nv))
        object.__setattr__(self, "_stack_fits", nv <= STACK_BODIES)   # see screwdyn.dispatch.call
        object.__setattr__(self, "_derived", {})  # what screwdyn.dispatch works out once per model
        object.__setattr__(self, "_frame_index", {f: k for k, f in enumerate(self.frame_names)})
        object.__setattr__(self, "_body_index", {b: k for k, b in enumerate(self.link_names)})
        for k, c in enumerate(self.constraints):
            compatible = getattr(c, "compatible", None)
            if compatible is None:
                raise ModelError(f"constraints[{k}] is a {type(c).__name__}, not a screwdyn constraint "
                                 "(screwdyn.constraints)")
            if not compatible(self):
                raise ModelError(f"constraints[{k}] ({c!r}) was made for a model of another tree or other frames")

    @property
    def is_floating(self) -> bool:
        """Whether a joint of the model is a free-flyer (a floating base)."""
        return bool(np.any(self.joint_type == FREE_FLYER))

    @property
    def has_manifold_joints(self) -> bool:
        """Whether ``q`` holds quaternions (free-flyer or spherical joints): ``nq != nv``."""
        return self.nq != self.nv

    @property
    def q_names(self) -> tuple:
        """A name per entry of ``q`` (``nq``): a one-DoF joint's name; ``name.x`` .. ``name.qw`` for a
        free-flyer's ``(x, y, z, qx, qy, qz, qw)``, ``name.qx`` .. ``name.qw`` for a spherical joint."""
        return self._names(("x", "y", "z", "qx", "qy", "qz", "qw"), ("qx", "qy", "qz", "qw"))

    @property
    def v_names(self) -> tuple:
        """A name per degree of freedom (entries of ``qd``, ``qdd``, ``tau``; ``nv``): a one-DoF
        joint's name; ``name.wx`` .. ``name.vz`` for a free-flyer's twist ``(omega, v)``,
        ``name.wx`` .. ``name.wz`` for a spherical joint's angular velocity."""
        return self._names(("wx", "wy", "wz", "vx", "vy", "vz"), ("wx", "wy", "wz"))

    def _names(self, free, ball):
        out = []
        for name, t in zip(self.joint_names, self.joint_type):
            parts = free if t == FREE_FLYER else ball if t == SPHERICAL else None
            out += [name] if parts is None else [f"{name}.{p}" for p in parts]
        return tuple(out)

    def joint_of_dof(self) -> np.ndarray:
        """``(nv,)``: the joint (body) index of each degree of freedom."""
        return np.repeat(np.arange(self.nbodies), self.nvs)

    def __getstate__(self):
        """The fields a model is built from, nothing derived (the packed ``_kd``, the ``_derived``
        cache): a pickle (a Dask task's model) is small and holds nothing compiled."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    def __setstate__(self, state):
        for key, value in state.items():
            object.__setattr__(self, key, value)
        self.__post_init__()

    # ------------------------------------------------------------------ derived quantities
    @property
    def armature(self) -> np.ndarray:
        """Reflected rotor inertia ``n_r^2 I_m`` added to the diagonal of ``M`` (docs/theory.md §4.3, eq. (4.5))."""
        return self.gear_ratio**2 * self.rotor_inertia

    @property
    def inertia_origin(self) -> np.ndarray:
        """``(n, 3, 3)`` inertia about each body frame's origin, ``I_c + m [c]^T [c]`` (Steiner)."""
        c = self.com
        cc = np.einsum("ni,ni->n", c, c)
        return self.inertia_com + self.mass[:, None, None] * (
            cc[:, None, None] * np.eye(3) - np.einsum("ni,nj->nij", c, c)
        )

    @property
    def spatial_inertias(self) -> np.ndarray:
        """``(n, 6, 6)`` spatial inertia ``G_i`` of each body in its own frame, ``(omega, v)`` order."""
        return np.array([RigidBody(m, c, I).spatial_inertia() for m, c, I in zip(self.mass, self.com, self.inertia_com)])

    @property
    def total_mass(self) -> float:
        m = self._derived.get("total_mass")
        if m is None:
            m = self._derived["total_mass"] = float(self.mass.sum())
        return m

    def body(self, i) -> RigidBody:
        """Body ``i`` (index or link name) as a :class:`~screwdyn.inertia.RigidBody` in its own frame."""
        i = self.body_index(i)
        return RigidBody(self.mass[i], self.com[i], self.inertia_com[i])

    def body_index(self, name) -> int:
        if isinstance(name, (int, np.integer)):
            if not -self.nbodies <= name < self.nbodies:
                raise ModelError(f"body index {name} out of range for a model with {self.nbodies} bodies")
            return int(name) % self.nbodies
        try:
            return self._body_index[name]
        except KeyError:
            raise ModelError(f"unknown link {name!r}; moving links are {list(self.link_names)}") from None

    def frame_index(self, name) -> int:
        if isinstance(name, (int, np.integer)):
            if not 0 <= name < len(self.frame_names):
                raise ModelError(f"frame index {name} out of range ({len(self.frame_names)} frames)")
            return int(name)
        try:
            return self._frame_index[name]
        except KeyError:
            raise ModelError(f"unknown frame {name!r}; frames are {list(self.frame_names)}") from None

    def joint_index(self, name) -> int:
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise ModelError(f"unknown joint {name!r}; joints are {list(self.joint_names)}") from None

    def inertial_parameters(self, *, armature=False, viscous=False, coulomb=False) -> np.ndarray:
        """The parameter vector ``pi`` with ``tau = Y(q, qd, qdd) pi`` (see :mod:`screwdyn.ident`):
        per body ``m, m c_x, m c_y, m c_z, Ixx, Ixy, Ixz, Iyy, Iyz, Izz`` (inertia about the body frame
        origin), then optional per-joint armature, viscous and Coulomb coefficients."""
        from .model_params import inertial_parameters
        return inertial_parameters(self, armature=armature, viscous=viscous, coulomb=coulomb)

    def with_inertial_parameters(self, pi, *, armature=False, viscous=False, coulomb=False) -> "Model":
        """A copy of the model whose inertias (and optional joint terms) are ``pi``, ordered as
        :meth:`inertial_parameters` gives them."""
        from .model_params import with_inertial_parameters
        return with_inertial_parameters(self, pi, armature=armature, viscous=viscous, coulomb=coulomb)

    def replace(self, **changes) -> "Model":
        """A copy with some fields changed (the model itself is immutable), checked and repacked."""
        return dataclasses.replace(self, **changes)

    def with_gravity(self, gravity) -> "Model":
        return self.replace(gravity=np.asarray(gravity, dtype=float))

    def _check_finite(self):
        """Every number the kernels read is finite, and no frame pose holds a NaN or inf: finite
        inputs can overflow (a compound of huge inertias, a rotor inertia times a squared gear ratio)."""
        bad = np.flatnonzero(~np.isfinite(self._kd[:self.nv]).all(axis=1))
        if bad.size:
            i = int(np.searchsorted(self.idx_vs, bad[0], side="right")) - 1   # the body of that kernel row
            raise ModelError(f"the body of joint {self.joint_names[i]!r} (link {self.link_names[i]!r}): its pose, "
                             "axis, inertia or armature is not finite (the numbers overflow float64)")
        bad = np.flatnonzero(~np.isfinite(self.frame_pose).all(axis=(1, 2)))
        if bad.size:
            raise ModelError(f"frame {self.frame_names[int(bad[0])]!r}: its pose is not finite")
        if np.isnan(np.concatenate([self.q_lower, self.q_upper, self.velocity_limit, self.effort_limit])).any():
            raise ModelError("a joint limit is NaN")

    def _pack(self) -> np.ndarray:
        """The packed array of :mod:`screwdyn.algorithms.layout` read by the kernels: one row per
        degree of freedom (a joint of several takes consecutive rows, its body on the last)."""
        nv, rows = self.nv, self._body_row
        kd = np.zeros((nv + 1, WIDTH))
        kd[:nv, PARENT] = -1
        kd[:nv, JSCALE] = 1.0
        kd[:nv, QIDX] = -1
        kd[:nv, POSEK] = INNER
        Io = self.inertia_origin
        for j in range(self.nbodies):
            r0, k = int(self.idx_vs[j]), int(self.nvs[j])
            r = rows[j]
            p = self.parent[j]
            kd[r0, PARENT] = -1 if p < 0 else rows[p]
            kd[r0 + 1:r + 1, PARENT] = np.arange(r0, r)
            kd[r0, ROT:ROT + 9] = self.T_parent_body[j, :3, :3].reshape(9)
            kd[r0, POS:POS + 3] = self.T_parent_body[j, :3, 3]
            kd[r0, QIDX] = self.idx_qs[j]
            kd[r0 + 1:r + 1, ROT:ROT + 9] = np.eye(3).reshape(9)
            jt = self.joint_type[j]
            if jt in (REVOLUTE, PRISMATIC):
                kd[r0, POSEK] = ONE_DOF
                kd[r0, AXIS:AXIS + 3] = self.joint_axis[j]
                kd[r0, JTYPE] = jt
                kd[r0, JSCALE] = self.joint_scale[j]
                hits = np.flatnonzero(self.joint_axis[j] == 1.0)   # revolute about exactly x, y or z: cheaper
                if jt == REVOLUTE and len(hits) == 1 and np.count_nonzero(self.joint_axis[j]) == 1:
                    kd[r0, AXISK] = hits[0] + 1
            else:   # rows of the motion subspace: rotations about x, y, z (then translations along x, y, z)
                kd[r0, POSEK] = FREE if jt == FREE_FLYER else BALL
                for c in range(k):
                    kd[r0 + c, AXIS + c % 3] = 1.0
                    kd[r0 + c, JTYPE] = REVOLUTE if c < 3 else PRISMATIC
                    kd[r0 + c, AXISK] = c + 1 if c < 3 else 0
            kd[r, MASS] = self.mass[j]
            kd[r, MCOM:MCOM + 3] = self.mass[j] * self.com[j]
            kd[r, IORG:IORG + 6] = Io[j][[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
        kd[:nv, ARMAT] = self.armature
        kd[nv, GRAVITY:GRAVITY + 3] = self.gravity
        kd[nv, NQ] = self.nq
        # left writable: numba's dispatcher types a writable array on its fastest path, and no
        # kernel writes to it (the public arrays above are read-only)
        return kd

    def __repr__(self):
        types = "".join(JOINT_LETTER[t] for t in self.joint_type)
        sizes = "" if self.nq == self.nv else f", nq={self.nq}, nv={self.nv}"
        return f"Model({self.name!r}, n={self.n}{sizes}, joints={types}, mass={self.total_mass:.4g} kg)"

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_screws(cls, M_list, G_list, S_list, gravity=(0.0, 0.0, -9.81), name="screw_chain") -> "Model":
        """A serial chain from Modern Robotics lists (Lynch & Park, ch. 8; docs/theory.md §4.2).

        ``M_list``: the home poses ``M_{i-1,i}`` of the CoM frames ``{i}``, ``i = 1..n``; an
        extra last entry ``M_{n,n+1}`` adds the tip frame ``"ee"``. ``G_list``: spatial
        inertias ``G_i`` (6x6, (omega, v)) in ``{i}``. ``S_list``: space-frame screw axes, as
        the columns of a ``(6, n)`` array (MR's ``Slist``) or a list of ``n`` 6-vectors.

        Each body's frame is moved onto its joint axis (``A_i = Ad_{M_{0,i}^-1} S_i``); the CoM
        frames are kept as frames ``"link{i}_com"``, so poses and inertias are unchanged.
        """
        Ms = [np.asarray(M, dtype=float) for M in M_list]
        Gs = [np.asarray(G, dtype=float) for G in G_list]
        if isinstance(S_list, np.ndarray):
            if S_list.ndim != 2 or S_list.shape[0] != 6:
                raise ModelError(f"S_list must be a (6, n) array of screw-axis columns, got shape {S_list.shape}")
            Ss = [S_list[:, j].astype(float) for j in range(S_list.shape[1])]
        else:
            Ss = [np.asarray(S, dtype=float).reshape(6) for S in S_list]
        n = len(Ss)
        if len(Gs) != n or len(Ms) not in (n, n + 1):
            raise ModelError(f"from_screws: {n} screw axes need {n} spatial inertias and {n} or {n + 1} M's "
                             f"(got {len(Gs)} and {len(Ms)})")
        b = ModelBuilder(name=name, base="base", gravity=gravity)
        M0 = np.eye(4)           # M_{0,i}
        T_prevp_prev = np.eye(4)  # T_{(i-1)', i-1}: previous canonical body frame -> previous CoM frame
        prev = "base"
        for i in range(n):
            for what, arr, shape in (("M_list", Ms[i], (4, 4)), ("G_list", Gs[i], (6, 6))):
                if arr.shape != shape or not np.all(np.isfinite(arr)):
                    raise ModelError(f"from_screws: {what}[{i}] must be a finite {shape} array")
            M0 = M0 @ Ms[i]
            A = Ad(inverse_transform(M0)) @ Ss[i]           # screw axis in {i} (docs/theory.md eq. (4.4))
            w, v = A[:3], A[3:]
            s = np.linalg.norm(w)
            if s > 1e-12 and abs(w @ v) < 1e-9 * s * max(1.0, np.linalg.norm(v)):
                jtype, axis, r = "revolute", w, np.cross(w, v) / s**2   # r: a point on the axis
            elif s <= 1e-12 and np.linalg.norm(v) > 1e-12:
                jtype, axis, r, s = "prismatic", v, np.zeros(3), np.linalg.norm(v)
            else:
                raise ModelError(f"from_screws: S_list[{i}] = {Ss[i]} is neither a revolute (zero pitch) "
                                 "nor a prismatic (omega = 0) screw axis")
            T_i_ip = np.eye(4)
            T_i_ip[:3, 3] = r                                  # canonical frame {i'} on the axis
            body = RigidBody.from_spatial(Gs[i]).transformed(inverse_transform(T_i_ip))
            b.add_body(f"link{i + 1}", prev, f"joint{i + 1}", jtype, axis=axis,
                       origin=T_prevp_prev @ Ms[i] @ T_i_ip, inertial=body, joint_scale=s)
            b.add_frame(f"link{i + 1}_com", f"link{i + 1}", inverse_transform(T_i_ip))
            T_prevp_prev = inverse_transform(T_i_ip)
            prev = f"link{i + 1}"
        if len(Ms) == n + 1:
            b.add_frame("ee", prev, T_prevp_prev @ Ms[n])
        return b.build()


@dataclass
class _Link:
    name: str
    inertial: RigidBody


@dataclass
class _Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    limits: tuple
    damping: float
    friction: float
    rotor_inertia: float
    gear_ratio: float
    mimic: tuple | None
    scale: float


class ModelBuilder:
    """Build a :class:`Model` in code, link by link and joint by joint (as a URDF does).

    >>> import numpy as np
    >>> from screwdyn.inertia import point_mass
    >>> b = ModelBuilder("planar_2r", gravity=(0, -9.81, 0))
    >>> _ = b.add_body("link1", "base", "joint1", "revolute", axis=(0, 0, 1), inertial=point_mass(1.0, [1, 0, 0]))
    >>> _ = b.add_body("link2", "link1", "joint2", "revolute", axis=(0, 0, 1),
    ...            origin=np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]),
    ...            inertial=point_mass(1.0, [1, 0, 0]))
    >>> b.build()
    Model('planar_2r', n=2, joints=RR, mass=2 kg)
    """

    def __init__(self, name="robot", base="base", gravity=(0.0, 0.0, -9.81), strict=False):
        self.name = name
        self.base = base
        try:
            self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        except (TypeError, ValueError):
            raise ModelError(f"gravity must be 3 numbers (a vector in the base frame), got {gravity!r}") from None
        self.strict = strict
        self._links: dict[str, _Link] = {}
        self._joints: list[_Joint] = []
        self._frames: list[tuple] = []
        self.add_link(base)

    def add_link(self, name, inertial: RigidBody | None = None, mass=None, com=(0.0, 0.0, 0.0), inertia=None):
        """Add a link; its inertia is ``inertial`` or ``(mass, com, inertia about the CoM)``
        in the link frame. A link without either is massless (as the URDF specification says)."""
        if name in self._links:
            raise ModelError(f"link {name!r} is defined twice")
        if inertial is None:
            inertial = RigidBody(0.0 if mass is None else mass, com, np.zeros((3, 3)) if inertia is None else inertia)
        check_inertia(inertial.mass, inertial.inertia, f"link {name!r}", self.strict)
        if not np.all(np.isfinite(inertial.com)):
            raise ModelError(f"link {name!r}: centre of mass has a NaN or inf entry")
        self._links[name] = _Link(name, inertial)
        return self

    def add_joint(self, name, type, parent, child, origin=None, axis=(0.0, 0.0, 1.0), lower=-np.inf, upper=np.inf,
                  effort=np.inf, velocity=np.inf, damping=0.0, friction=0.0, rotor_inertia=0.0, gear_ratio=1.0,
                  mimic=None, joint_scale=1.0):
        """Add a joint of ``type`` ``"revolute"``, ``"continuous"``, ``"prismatic"``, ``"fixed"``,
        ``"spherical"`` (3 DoF) or ``"free_flyer"`` (6 DoF, also ``"floating"``) placing link
        ``child`` at ``origin`` (pose at the neutral ``q``, in ``parent``'s frame) with the joint
        ``axis`` in the child frame (one-DoF joints). ``mimic = (leader_joint, multiplier, offset)``
        is recorded in ``model.mimic``; the joint itself stays an independent degree of freedom. The
        joint moves ``joint_scale * q`` (1 for URDF; a screw axis with ``|omega| != 1`` has another).
        ``effort``, ``velocity``, ``damping``, ``friction``, ``rotor_inertia``, ``gear_ratio``: one
        number, or one per degree of freedom of the joint; ``lower``, ``upper`` apply to one-DoF
        joints (the q blocks of the others are unlimited)."""
        if any(j.name == name for j in self._joints):
            raise ModelError(f"joint {name!r} is defined twice")
        if type not in _JOINT_TYPES and type != "fixed":
            raise ModelError(f"joint {name!r}: unsupported joint type {type!r} "
                             "(supported: revolute, continuous, prismatic, fixed, spherical, free_flyer/floating)")
        T = np.eye(4) if origin is None else np.asarray(origin, dtype=float)
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise ModelError(f"joint {name!r}: origin must be a finite 4x4 transform")
        R = T[:3, :3]
        if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
            raise ModelError(f"joint {name!r}: origin rotation is not a rotation matrix")
        one_dof = type in ("revolute", "continuous", "prismatic")
        nv = 0 if type == "fixed" else int(JOINT_NV[_JOINT_TYPES[type]])
        a = np.asarray(axis, dtype=float).reshape(3) if one_dof else np.zeros(3)
        norm = np.linalg.norm(a)
        if one_dof and (not np.isfinite(norm) or norm < 1e-12):
            raise ModelError(f"joint {name!r}: axis {axis!r} is zero or not finite")
        nums = dict(lower=lower, upper=upper, joint_scale=joint_scale)
        per_dof = dict(effort=effort, velocity=velocity, damping=damping, friction=friction,
                       rotor_inertia=rotor_inertia, gear_ratio=gear_ratio)
        for key, val in per_dof.items():
            v = np.asarray(val, dtype=float).reshape(-1)
            if v.size == 1:
                v = np.full(max(nv, 1), v[0])
            elif v.size != nv:
                raise ModelError(f"joint {name!r}: {key} needs one number or {nv} (one per degree of freedom), "
                                 f"got {v.size}")
            per_dof[key] = v
        for key, val in list(nums.items()) + list(per_dof.items()):
            if np.any(np.isnan(val)):
                raise ModelError(f"joint {name!r}: {key} is NaN")
        if not np.isfinite(joint_scale) or joint_scale <= 0:
            raise ModelError(f"joint {name!r}: joint_scale must be a positive number, got {joint_scale}")
        for key in ("effort", "velocity", "damping", "friction", "rotor_inertia"):
            if np.any(per_dof[key] < 0):
                bad = per_dof[key][per_dof[key] < 0][0]
                raise ModelError(f"joint {name!r}: {key} must be >= 0, got {bad}")
        if lower > upper:
            raise ModelError(f"joint {name!r}: lower limit {lower} is above upper limit {upper}")
        if not one_dof:
            lower, upper = -np.inf, np.inf
        if type == "continuous":
            lower, upper = -np.inf, np.inf
        self._joints.append(_Joint(name, type, parent, child, T, a / norm if norm > 0 else a,
                                   (lower, upper, per_dof["velocity"], per_dof["effort"]), per_dof["damping"],
                                   per_dof["friction"], per_dof["rotor_inertia"], per_dof["gear_ratio"], mimic,
                                   float(joint_scale)))
        return self

    def add_body(self, name, parent, joint_name, joint_type, axis=(0.0, 0.0, 1.0), origin=None,
                 inertial: RigidBody | None = None, mass=None, com=(0.0, 0.0, 0.0), inertia=None, **joint_kwargs):
        """Add link ``name`` and the joint ``joint_name`` that attaches it to ``parent``."""
        self.add_link(name, inertial, mass, com, inertia)
        return self.add_joint(joint_name, joint_type, parent, name, origin, axis, **joint_kwargs)

    def add_frame(self, name, parent, pose=None):
        """Add a named frame rigidly attached to link (or frame) ``parent`` at ``pose``."""
        self._frames.append((name, parent, np.eye(4) if pose is None else np.asarray(pose, dtype=float)))
        return self

    @np.errstate(over="ignore", invalid="ignore")   # an overflow gives inf, which the Model reports by name
    def build(self) -> Model:
        """Check the tree and merge fixed joints; returns the immutable :class:`Model`."""
        children: dict[str, list[_Joint]] = {name: [] for name in self._links}
        parent_joint: dict[str, _Joint] = {}
        for j in self._joints:
            for role, link in (("parent", j.parent), ("child", j.child)):
                if link not in self._links:
                    raise ModelError(f"joint {j.name!r}: {role} link {link!r} is not defined")
            if j.child in parent_joint:
                raise ModelError(f"link {j.child!r} has two parents (joints {parent_joint[j.child].name!r} and {j.name!r})")
            if j.child == self.base:
                raise ModelError(f"joint {j.name!r}: the base link {self.base!r} cannot be a child")
            parent_joint[j.child] = j
            children[j.parent].append(j)
        roots = [name for name in self._links if name not in parent_joint]
        if len(roots) > 1:
            extra = [r for r in roots if r != self.base]
            raise ModelError(f"the tree has several roots: links {extra} have no parent joint (the base is {self.base!r})")

        # Depth-first, children in declaration order: parent[i] < i, subtrees contiguous.
        bodies = []       # (joint, link) per moving body
        owner = {self.base: (-1, np.eye(4))}  # link -> (body carrying it, pose in that body's frame)
        parent_of, T_tree = [], []
        link_bodies: dict[int, list] = {-1: []}
        stack = [self.base]
        seen = set()
        order = []
        while stack:
            link = stack.pop()
            if link in seen:
                raise ModelError(f"link {link!r} is reached twice: the joints form a loop")
            seen.add(link)
            order.append(link)
            for j in reversed(children[link]):
                stack.append(j.child)
        unreached = [name for name in self._links if name not in seen]
        if unreached:
            raise ModelError(f"links {unreached} are not connected to the base {self.base!r}: the joints form a loop")
        for link in order:
            if link == self.base:
                continue
            j = parent_joint[link]
            pb, T_pb_parent = owner[j.parent]
            T = T_pb_parent @ j.origin
            if j.type == "fixed":
                owner[link] = (pb, T)
            else:
                i = len(bodies)
                bodies.append((j, link))
                parent_of.append(pb)
                T_tree.append(T)
                owner[link] = (i, np.eye(4))
                link_bodies[i] = []
            link_bodies[owner[link][0]].append(link)

        n = len(bodies)
        inertials = []
        for i in range(n):
            parts = [self._links[l].inertial.transformed(owner[l][1]) for l in link_bodies[i]]
            inertials.append(compound(parts))
        frame_names = [self.base] + [l for l in order if l != self.base]
        frame_body = [owner[l][0] for l in frame_names]
        frame_pose = [owner[l][1] for l in frame_names]
        for fname, fparent, pose in self._frames:
            if fname in frame_names:
                raise ModelError(f"frame {fname!r} is defined twice")
            if fparent not in frame_names:
                raise ModelError(f"frame {fname!r}: parent {fparent!r} is not a link or frame")
            k = frame_names.index(fparent)
            frame_names.append(fname)
            frame_body.append(frame_body[k])
            frame_pose.append(frame_pose[k] @ pose)
        joints = [j for j, _ in bodies]
        mimic = {j.name: j.mimic for j in joints if j.mimic is not None}
        for jn, (leader, _, _) in mimic.items():
            if leader not in [j.name for j in joints]:
                raise ModelError(f"joint {jn!r} mimics {leader!r}, which is not a moving joint of the model")
        nqs = [int(JOINT_NQ[_JOINT_TYPES[j.type]]) for j in joints]
        return Model(
            name=self.name,
            joint_names=[j.name for j in joints],
            link_names=[l for _, l in bodies],
            base_name=self.base,
            parent=np.array(parent_of, dtype=np.int64),
            joint_type=np.array([_JOINT_TYPES[j.type] for j in joints], dtype=np.int64),
            joint_axis=np.array([j.axis for j in joints]).reshape(n, 3),
            joint_scale=np.array([j.scale for j in joints], dtype=float),
            T_parent_body=np.array(T_tree).reshape(n, 4, 4),
            mass=np.array([b.mass for b in inertials]),
            com=np.array([b.com for b in inertials]).reshape(n, 3),
            inertia_com=np.array([b.inertia for b in inertials]).reshape(n, 3, 3),
            rotor_inertia=_per_dof(joints, "rotor_inertia"),
            gear_ratio=_per_dof(joints, "gear_ratio"),
            damping=_per_dof(joints, "damping"),
            friction=_per_dof(joints, "friction"),
            q_lower=np.concatenate([[j.limits[0]] if k == 1 else np.full(k, -np.inf) for j, k in zip(joints, nqs)]
                                   + [np.zeros(0)]),
            q_upper=np.concatenate([[j.limits[1]] if k == 1 else np.full(k, np.inf) for j, k in zip(joints, nqs)]
                                   + [np.zeros(0)]),
            velocity_limit=np.concatenate([j.limits[2] for j in joints] + [np.zeros(0)]),
            effort_limit=np.concatenate([j.limits[3] for j in joints] + [np.zeros(0)]),
            gravity=self.gravity,
            frame_names=frame_names,
            frame_body=np.array(frame_body, dtype=np.int64),
            frame_pose=np.array(frame_pose).reshape(len(frame_names), 4, 4),
            mimic=mimic,
        )


def _per_dof(joints, key):
    """A joint field given per degree of freedom, over all joints: ``(nv,)``."""
    return np.concatenate([np.asarray(getattr(j, key), dtype=float) for j in joints] + [np.zeros(0)])
