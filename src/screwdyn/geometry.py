"""Geometry attached to the links of a model: what the viewer and the renderer draw
(:class:`Visual`), and what collides (:class:`Collision`).

The dynamics never read the visuals. :func:`screwdyn.load_urdf` records each ``<visual>`` of a link as a
:class:`Visual` in ``model.visuals``, :func:`screwdyn.load_mjcf` each geom MuJoCo's viewer shows;
:mod:`screwdyn.viz` draws them.

A visual is attached to a URDF link by name, and every URDF link is a frame of the model
(``model.frame_names``), fixed-joint-merged links included. So the pose of the geometry in the
base frame at configuration ``q`` is ::

    T_0_geometry = screwdyn.frame_pose(model, q, visual.link) @ visual.origin

which follows any change of the joints (merged links, a floating base) that the frame poses
follow. A :class:`Collision` is attached the same way (``collision.link``, ``collision.origin``);
:func:`screwdyn.load_urdf` reads each ``<collision>`` into ``model.collisions``,
:func:`screwdyn.load_mjcf` each geom that collides, and :mod:`screwdyn.collision` detects contacts.
A collision on a fixed-joint-merged link is therefore carried by the body the link is merged into,
at the pose ``model.frame_pose[link] @ origin`` in that body's frame.

Collision geometry with ``link=None`` is fixed in the world (``origin`` is its pose there): the
ground and obstacles of :mod:`screwdyn.environment`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import CollisionWarning, VisualWarning

__all__ = ["COLLISION_KINDS", "Collision", "CollisionWarning", "DEFAULT_FRICTION", "DEFAULT_SOLIMP",
           "DEFAULT_SOLREF", "KINDS", "Visual", "VisualWarning"]

#: The geometry kinds a :class:`Visual` can have, with the meaning of its ``size``.
KINDS = {
    "mesh": "scale (sx, sy, sz) of the mesh's coordinates",
    "box": "edge lengths (x, y, z) [m], centred on the origin",
    "cylinder": "(radius, length) [m], the axis along z, centred on the origin",
    "sphere": "(radius,) [m]",
    "capsule": "(radius, length) [m]: a cylinder along z with hemispheres on its ends (MJCF)",
    "ellipsoid": "semi-axes (a, b, c) [m] along x, y, z (MJCF)",
}


@dataclass(frozen=True, eq=False)
class Visual:
    """One piece of visual geometry of a link.

    Attributes::

        link      str          the URDF link carrying it (a frame of the model)
        kind      str          "mesh", "box", "cylinder", "sphere", "capsule", "ellipsoid" (KINDS)
        origin    (4, 4)       pose of the geometry in the link's frame (URDF <visual><origin>)
        size      tuple        box (x, y, z); cylinder, capsule (radius, length); sphere (radius,);
                               ellipsoid (a, b, c); mesh: its scale (sx, sy, sz)
        filename  str          the mesh filename as the URDF writes it ("" for primitives)
        path      str | None   the mesh file found for it; None when it was not found
        color     tuple | None RGBA in [0, 1] from the URDF <material>; None: the mesh's own
                               colours, or the viewer's default
        name      str          the <visual name> ("" when none)
        vertices  (V, 3) | None  a mesh given by its triangles rather than a file (an MJCF mesh
        faces     (F, 3) | None  as MuJoCo compiled it), in the geometry's frame before ``size``
    """

    link: str
    kind: str
    origin: np.ndarray
    size: tuple
    filename: str = ""
    path: str | None = None
    color: tuple | None = None
    name: str = ""
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Visual.kind must be one of {tuple(KINDS)}, got {self.kind!r}")
        origin = np.array(self.origin, dtype=float).reshape(4, 4)
        origin.setflags(write=False)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "size", tuple(float(s) for s in self.size))
        if self.color is not None:
            object.__setattr__(self, "color", tuple(float(c) for c in self.color))
        if (self.vertices is None) != (self.faces is None) or (self.vertices is not None and self.kind != "mesh"):
            raise ValueError("Visual: vertices and faces come together, for a mesh")
        if self.vertices is not None:
            V = np.array(self.vertices, dtype=float).reshape(-1, 3)
            F = np.array(self.faces, dtype=np.int64).reshape(-1, 3)
            if len(F) and (F.min() < 0 or F.max() >= len(V)):
                raise ValueError(f"Visual: faces index vertices 0..{len(V) - 1}, got {F.min()}..{F.max()}")
            V.setflags(write=False)
            F.setflags(write=False)
            object.__setattr__(self, "vertices", V)
            object.__setattr__(self, "faces", F)

    def __repr__(self):
        what = self.filename if self.kind == "mesh" else f"{self.kind}{self.size}"
        return f"Visual({self.link!r}, {what})"


#: The kinds a :class:`Collision` can have, with the meaning of its ``size`` (the kernels' order:
#: ``screwdyn.algorithms.narrowphase`` numbers them 0 to 5 in this order).
COLLISION_KINDS = {
    "plane": "(): the half-space below the plane z = 0 of the geometry's frame (its normal is +z); infinite",
    "sphere": "(radius,) [m]",
    "capsule": "(radius, length) [m]: a cylinder along z with hemispheres on its ends, centred on the origin",
    "cylinder": "(radius, length) [m], the axis along z, centred on the origin",
    "box": "edge lengths (x, y, z) [m], centred on the origin",
    "convex": "(): a convex polytope, the hull of ``vertices`` (V, 3), or of a mesh file's (``path``, ``scale``)",
}
DEFAULT_FRICTION = (1.0, 0.005, 0.0001)   # MuJoCo's: sliding, torsional [m], rolling [m]
DEFAULT_SOLREF = (0.02, 1.0)              # MuJoCo's: time constant [s], damping ratio
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)   # MuJoCo's: dmin, dmax, width [m], midpoint, power


def _numbers(value, count, what, low=None):
    try:
        a = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"Collision: {what} must be {count} numbers, got {value!r}") from None
    if a.size != count or not np.all(np.isfinite(a)) or (low is not None and np.any(a < low)):
        bound = "" if low is None else f" >= {low}"
        raise ValueError(f"Collision: {what} must be {count} finite numbers{bound}, got {value!r}")
    return tuple(float(x) for x in a)


_SIZES = {"plane": 0, "sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "convex": 0}


@dataclass(frozen=True, eq=False)
class Collision:
    """One piece of collision geometry, on a link of a model or fixed in the world.

    Attributes::

        link        str | None   the link (a frame of the model) carrying it; None: fixed in the world
        kind        str          "plane", "sphere", "capsule", "cylinder", "box", "convex" (COLLISION_KINDS)
        origin      (4, 4)       pose of the geometry in the link's frame (in the world when link is None)
        size        tuple        sphere (radius,); capsule, cylinder (radius, length); box (x, y, z) edge
                                 lengths; () for a plane and a convex polytope [m]
        vertices    (V, 3) | None  a convex polytope given by points in the geometry's frame (it is their hull)
        faces       (F, 3) | None  the hull's triangles when ``vertices`` are its vertices (else found)
        path        str | None   a convex polytope given by a mesh file: the hull of its vertices times
        scale       (3,)         ``scale``, read on first use (:meth:`hull`; trimesh)
        name        str          the URDF <collision name> or the MJCF geom name ("" when none)
        filename    str          the mesh file a polytope is the hull of ("" when none)
        contype, conaffinity  int  MuJoCo's bit masks: a and b may touch when
                                 (a.contype & b.conaffinity) or (b.contype & a.conaffinity)
        condim      int          MuJoCo's contact dimension: 1 (frictionless), 3 (sliding friction),
                                 4 (and torsional), 6 (and rolling)
        friction    (3,) | None  (sliding, torsional [m], rolling [m]) coefficients; None (a URDF
                                 collision: URDF has none) takes the other surface's
        restitution float | None  coefficient of restitution in [0, 1]; None takes the other surface's
        solref      (2,)         MuJoCo's solref: (time constant [s], damping ratio), or (-stiffness,
                                 -damping) when both are negative
        solimp      (5,)         MuJoCo's solimp: (dmin, dmax, width [m], midpoint, power)
        margin      float        contacts are active from this distance on [m] (MuJoCo's margin)
        gap         float        and reported, inactive, from margin + gap (MuJoCo's gap) [m]
        priority    int          MuJoCo's priority: the surface of higher priority sets the contact's
                                 parameters; equal priorities mix them (screwdyn.collision)
        solmix      float        MuJoCo's solmix: the weight of this surface's solref and solimp
        group       int          MuJoCo's geom group (for drawing)

    The defaults are MuJoCo's (``DEFAULT_FRICTION``, ``DEFAULT_SOLREF``, ``DEFAULT_SOLIMP``). A
    polytope's vertices and triangles are :meth:`hull`'s.
    """

    link: str | None
    kind: str
    origin: np.ndarray
    size: tuple = ()
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    path: str | None = None
    scale: tuple = (1.0, 1.0, 1.0)
    name: str = ""
    filename: str = ""
    contype: int = 1
    conaffinity: int = 1
    condim: int = 3
    friction: tuple | None = None
    restitution: float | None = None
    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP
    margin: float = 0.0
    gap: float = 0.0
    priority: int = 0
    solmix: float = 1.0
    group: int = 0

    def __post_init__(self):
        if self.kind not in COLLISION_KINDS:
            raise ValueError(f"Collision.kind must be one of {tuple(COLLISION_KINDS)}, got {self.kind!r}")
        origin = np.array(self.origin, dtype=float).reshape(4, 4)
        R = origin[:3, :3]
        if (not np.all(np.isfinite(origin)) or not np.allclose(R.T @ R, np.eye(3), atol=1e-9)
                or np.linalg.det(R) < 0):
            raise ValueError(f"Collision {self.name or self.kind!r}: origin must be a finite rigid transform")
        origin.setflags(write=False)
        set_ = object.__setattr__
        set_(self, "origin", origin)
        set_(self, "size", _numbers(self.size, _SIZES[self.kind], f"the size of a {self.kind}", low=0.0))
        if (self.vertices is None and self.path is None) != (self.kind != "convex") or (
                self.vertices is not None and self.path is not None):
            raise ValueError("Collision: a convex polytope, and only it, has vertices or a mesh path (one of them)")
        set_(self, "scale", _numbers(self.scale, 3, "scale"))
        if self.vertices is not None:
            V = np.array(self.vertices, dtype=float).reshape(-1, 3)
            if len(V) == 0 or not np.all(np.isfinite(V)):
                raise ValueError(f"Collision {self.name!r}: a convex polytope needs finite vertices, got {len(V)}")
            V.setflags(write=False)
            set_(self, "vertices", V)
            if self.faces is not None:
                F = np.array(self.faces, dtype=np.int64).reshape(-1, 3)
                if len(F) and (F.min() < 0 or F.max() >= len(V)):
                    raise ValueError(f"Collision: faces index vertices 0..{len(V) - 1}")
                F.setflags(write=False)
                set_(self, "faces", F)
        if self.friction is not None:
            f = np.array(self.friction, dtype=float).reshape(-1)
            f = np.concatenate([f, np.array(DEFAULT_FRICTION[f.size:])]) if 0 < f.size < 3 else f
            set_(self, "friction", _numbers(f, 3, "friction", low=0.0))
        if self.restitution is not None:
            r = float(self.restitution)
            if not 0.0 <= r <= 1.0:
                raise ValueError(f"Collision: restitution must be in [0, 1], got {self.restitution!r}")
            set_(self, "restitution", r)
        set_(self, "solref", _numbers(self.solref, 2, "solref"))
        set_(self, "solimp", _numbers(self.solimp, 5, "solimp"))
        for key in ("margin", "gap", "solmix"):
            set_(self, key, _numbers(getattr(self, key), 1, key, low=0.0)[0])
        for key in ("contype", "conaffinity", "priority", "group"):
            set_(self, key, int(getattr(self, key)))
        if self.condim not in (1, 3, 4, 6):
            raise ValueError(f"Collision: condim must be 1, 3, 4 or 6, got {self.condim!r}")
        set_(self, "condim", int(self.condim))

    @property
    def half_sizes(self) -> tuple:
        """The sizes the kernels take: sphere ``(r, 0, 0)``, capsule and cylinder ``(r, length / 2, 0)``,
        box half edge lengths, ``(0, 0, 0)`` for a plane and a polytope."""
        s = self.size
        if self.kind == "sphere":
            return s[0], 0.0, 0.0
        if self.kind in ("capsule", "cylinder"):
            return s[0], 0.5 * s[1], 0.0
        if self.kind == "box":
            return 0.5 * s[0], 0.5 * s[1], 0.5 * s[2]
        return 0.0, 0.0, 0.0

    def bounding_radius(self) -> float:
        """The radius of a sphere about the geometry's origin that holds it (inf for a plane)."""
        s = self.half_sizes
        if self.kind == "plane":
            return float("inf")
        if self.kind == "convex":
            return float(np.sqrt((self.hull()[0] ** 2).sum(axis=1).max()))
        return {"sphere": s[0], "capsule": s[0] + s[1], "cylinder": float(np.hypot(s[0], s[1])),
                "box": float(np.linalg.norm(s))}[self.kind]

    def hull(self):
        """``(vertices (V, 3), faces (F, 3))`` of a convex polytope: the convex hull of its
        ``vertices``, or of its mesh file's scaled vertices (read once per file and scale, with
        trimesh; a :class:`CollisionWarning`-worthy failure raises ``OSError``); faces wound
        counter-clockwise seen from outside. None for the other kinds."""
        if self.kind != "convex":
            return None
        found = self.__dict__.get("_hull")
        if found is None:
            from .io.collisions import convex_hull, mesh_hull
            if self.vertices is not None and self.faces is not None:
                found = (self.vertices, self.faces)
            elif self.vertices is not None:
                found = convex_hull(self.vertices)
            else:
                found = mesh_hull(self.path, self.scale)
            object.__setattr__(self, "_hull", found)
        return found

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_hull"}

    def replace(self, **changes) -> "Collision":
        """A copy with some fields changed (a record is immutable), checked again."""
        import dataclasses
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Collision)}
        return Collision(**{**fields, **changes})   # (a Ground stays the record it is, a Collision)

    def __repr__(self):
        where = "world" if self.link is None else repr(self.link)
        what = (f"{len(self.vertices)} vertices" if self.vertices is not None else self.filename or str(self.path)) \
            if self.kind == "convex" else ", ".join(f"{x:g}" for x in self.size)
        return f"Collision({where}, {self.kind}({what}){', ' + repr(self.name) if self.name else ''})"
