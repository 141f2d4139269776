"""The world a robot touches: the ground and static obstacles, gathered in an :class:`Environment`.

Each is a :class:`~screwdyn.geometry.Collision` fixed in the world (``link=None``, ``origin`` its
pose in the world frame, which is the model's base frame)::

    Ground(height=0.0, normal=(0, 0, 1))     the half-space below a plane through (0, 0, height);
                                             a tilted normal is a slope
    Box(pose, size)                          a box of edge lengths size = (x, y, z)
    Sphere(pose, radius)                     pose: a 4x4 pose or a position (3,)
    Capsule(pose, radius, length)            along the pose's z axis, centred on its origin
    Cylinder(pose, radius, length)           likewise

Every constructor takes ``friction`` (one number, the sliding coefficient, or MuJoCo's three:
sliding, torsional, rolling) and ``restitution``, and MuJoCo's other contact parameters as keywords
(``solref``, ``solimp``, ``margin``, ``gap``, ``condim``, ``contype``, ``conaffinity``,
``priority``, ``name``). An obstacle's ``priority`` is 1 unless given: its friction, restitution
and compliance are the contact's when a robot touches it (a MuJoCo geom of a higher priority
sets the contact's parameters; a URDF's collision geometry has none of its own, an MJCF's does).
:func:`screwdyn.load_mjcf` keeps the geoms of MuJoCo's world body as ``model.environment``, with
MuJoCo's priorities.

>>> import screwdyn
>>> env = screwdyn.Environment(screwdyn.Ground(friction=0.8), screwdyn.Box((1.0, 0, 0.1), (0.2, 0.2, 0.2)))
>>> env
Environment(Ground(height=0, normal=(0, 0, 1)), Box(size=(0.2, 0.2, 0.2) at (1, 0, 0.1)))
"""
from __future__ import annotations

import numpy as np

from .errors import InputError
from .geometry import Collision

__all__ = ["Box", "Capsule", "Cylinder", "Environment", "Ground", "Sphere"]

OBSTACLE_PRIORITY = 1


def _pose(pose, what) -> np.ndarray:
    """A 4x4 pose from a 4x4 array or a position (3,)."""
    a = np.asarray(pose, dtype=float)
    if a.shape == (3,):
        T = np.eye(4)
        T[:3, 3] = a
        return T
    if a.shape != (4, 4):
        raise InputError(f"{what}: pose must be a 4x4 pose or a position (3,), got shape {a.shape}")
    return a


def _params(friction, restitution, kw):
    kw.setdefault("priority", OBSTACLE_PRIORITY)
    if friction is not None:
        f = np.atleast_1d(np.asarray(friction, dtype=float))
        kw["friction"] = f
    kw["restitution"] = restitution
    return kw


def _build(self, what, kind, origin, size, friction, restitution, kw):
    try:
        Collision.__init__(self, None, kind, origin, size, **_params(friction, restitution, kw))
    except ValueError as e:
        raise InputError(f"{what}: {str(e).removeprefix('Collision: ')}") from None


def _at(T) -> str:
    return "(" + ", ".join(f"{x:g}" for x in T[:3, 3]) + ")"


class Ground(Collision):
    """The ground: the half-space below the plane through ``(0, 0, height)`` with the unit
    ``normal`` (pointing out of the ground; normalised); a tilted normal is a slope. The plane's
    frame (``origin``) has its z axis along the normal and its x axis as near the world's x as
    the normal allows."""

    def __init__(self, height=0.0, normal=(0.0, 0.0, 1.0), friction=1.0, restitution=0.0, **params):
        n = np.asarray(normal, dtype=float).reshape(-1)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) < 1e-12:
            raise InputError(f"Ground: normal must be a non-zero finite 3-vector, got {normal!r}")
        if not np.isfinite(height):
            raise InputError(f"Ground: height must be finite, got {height!r}")
        n = n / np.linalg.norm(n)
        x = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        x = x - (x @ n) * n
        x /= np.linalg.norm(x)
        T = np.eye(4)
        T[:3, :3] = np.column_stack([x, np.cross(n, x), n])
        T[2, 3] = float(height)
        params.setdefault("name", "ground")
        _build(self, "Ground", "plane", T, (), friction, restitution, params)

    @property
    def height(self) -> float:
        return float(self.origin[2, 3])

    @property
    def normal(self) -> np.ndarray:
        return np.array(self.origin[:3, 2])

    def __repr__(self):
        return f"Ground(height={self.height:g}, normal=({', '.join(f'{x:g}' for x in self.normal)}))"


class Box(Collision):
    """A box of edge lengths ``size = (x, y, z)`` centred at ``pose`` (4x4, or a position)."""

    def __init__(self, pose, size, friction=1.0, restitution=0.0, **params):
        _build(self, "Box", "box", _pose(pose, "Box"), size, friction, restitution, params)

    def __repr__(self):
        return f"Box(size=({', '.join(f'{x:g}' for x in self.size)}) at {_at(self.origin)})"


class Sphere(Collision):
    """A sphere of ``radius`` centred at ``pose`` (4x4, or a position)."""

    def __init__(self, pose, radius, friction=1.0, restitution=0.0, **params):
        _build(self, "Sphere", "sphere", _pose(pose, "Sphere"), (radius,), friction, restitution, params)

    def __repr__(self):
        return f"Sphere(radius={self.size[0]:g} at {_at(self.origin)})"


class Capsule(Collision):
    """A capsule of ``radius`` and ``length`` (of its cylinder) along the z axis of ``pose``."""

    def __init__(self, pose, radius, length, friction=1.0, restitution=0.0, **params):
        _build(self, "Capsule", "capsule", _pose(pose, "Capsule"), (radius, length), friction, restitution, params)

    def __repr__(self):
        return f"Capsule(radius={self.size[0]:g}, length={self.size[1]:g} at {_at(self.origin)})"


class Cylinder(Collision):
    """A cylinder of ``radius`` and ``length`` along the z axis of ``pose``."""

    def __init__(self, pose, radius, length, friction=1.0, restitution=0.0, **params):
        _build(self, "Cylinder", "cylinder", _pose(pose, "Cylinder"), (radius, length), friction, restitution,
               params)

    def __repr__(self):
        return f"Cylinder(radius={self.size[0]:g}, length={self.size[1]:g} at {_at(self.origin)})"


class Environment:
    """Static collision geometry fixed in the world: ``Environment(Ground(), Box(...), ...)``.
    Environments given among the objects are flattened (``Environment(model.environment, Box(...))``);
    None is skipped. ``obstacles`` is the tuple of :class:`~screwdyn.geometry.Collision` records,
    each with ``link=None``; obstacle ``k`` is ``-1 - k`` in a contact's ``GEOM_B``
    (:mod:`screwdyn.collision`)."""

    def __init__(self, *objects):
        obstacles = []
        for obj in objects:
            if obj is None:
                continue
            if isinstance(obj, Environment):
                obstacles += obj.obstacles
            elif isinstance(obj, Collision):
                if obj.link is not None:
                    raise InputError(f"Environment: {obj!r} is attached to link {obj.link!r}; an obstacle is fixed "
                                     "in the world (link=None)")
                obstacles.append(obj)
            elif isinstance(obj, (list, tuple)):
                obstacles += Environment(*obj).obstacles
            else:
                raise InputError(f"Environment: expected Ground, Box, Sphere, Capsule, Cylinder or Collision "
                                 f"records, got {type(obj).__name__}")
        self.obstacles = tuple(obstacles)

    @property
    def ground(self):
        """The first plane among the obstacles, or None."""
        return next((o for o in self.obstacles if o.kind == "plane"), None)

    def __len__(self):
        return len(self.obstacles)

    def __iter__(self):
        return iter(self.obstacles)

    def __add__(self, other):
        return Environment(self, other)

    def __repr__(self):
        return f"Environment({', '.join(map(repr, self.obstacles))})"
