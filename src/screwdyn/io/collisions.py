"""Collision geometry of a URDF (its ``<collision>`` elements) and of an MJCF model (its geoms), as
:class:`~screwdyn.geometry.Collision` records.

* URDF: each ``<collision>`` of a link, in document order: ``<box>``, ``<cylinder>``, ``<sphere>``
  as they are, ``<capsule>`` (an extension some robots use: ``radius``, ``length``) and
  ``<mesh>``: the file found as a visual's is (:mod:`screwdyn.io.visuals`), kept as its convex
  hull (:meth:`~screwdyn.geometry.Collision.hull`: read with trimesh and scipy's Qhull on first
  use, so loading stays fast), which is what MuJoCo and Pinocchio's convex tests take of meshes
  too. A mesh that cannot be found is left out, with one :class:`~screwdyn.errors.CollisionWarning`
  naming them all; one that cannot be read is left out of the contacts, with a warning, when
  they are first detected (:mod:`screwdyn.collision`). URDF gives no
  friction or compliance: the records take MuJoCo's defaults, with ``friction`` and
  ``restitution`` left unstated (the environment's apply, :mod:`screwdyn.collision`).
* MJCF: each geom that can collide (``contype`` or ``conaffinity`` not 0) with MuJoCo's compiled
  sizes and contact parameters (``friction``, ``condim``, ``solref``, ``solimp``, ``margin``,
  ``gap``, ``priority``, ``solmix``, ``group``, the bit masks); a mesh as the convex hull of
  MuJoCo's compiled vertices; an ellipsoid as a polytope of 402 points on its surface (with a
  warning: inscribed, within 0.4 % of its size); height fields and SDFs are left out with a
  warning. The geoms of the world body and of the bodies welded to it (MuJoCo's static geoms)
  make ``model.environment`` (:func:`mjcf_collisions`); the others ``model.collisions``.
"""
from __future__ import annotations

import functools
import os
import warnings

import numpy as np

from ..errors import CollisionWarning, URDFError
from ..geometry import Collision

__all__ = ["convex_hull", "mjcf_collisions", "read_collisions"]


def convex_hull(points):
    """``(vertices (V, 3), faces (F, 3))`` of the convex hull of ``points`` (scipy's Qhull), the
    faces wound counter-clockwise seen from outside; a flat or degenerate set is thickened by Qhull's
    ``QJ`` (joggled input)."""
    from scipy.spatial import ConvexHull, QhullError

    P = np.asarray(points, dtype=float).reshape(-1, 3)
    try:
        hull = ConvexHull(P)
    except QhullError:
        hull = ConvexHull(P, qhull_options="QJ")
    index = np.full(len(P), -1)
    index[hull.vertices] = np.arange(len(hull.vertices))
    F = hull.simplices.copy()
    a, b, c = P[F[:, 0]], P[F[:, 1]], P[F[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    F[inward] = F[inward][:, ::-1]          # wound counter-clockwise seen from outside
    return P[hull.vertices], index[F]


@functools.lru_cache(maxsize=256)
def _mesh_hull(path, mtime, size, scale):
    try:
        import trimesh
    except ImportError:
        raise OSError(f"reading the collision mesh {path!r} needs trimesh (pip install 'screwdyn[collision]')") \
            from None
    try:
        mesh = trimesh.load(path, force="mesh")
        V = np.asarray(mesh.vertices, dtype=float) * np.asarray(scale)
        V, F = convex_hull(V)
    except Exception as e:  # noqa: BLE001 - trimesh and Qhull raise many kinds on a bad file
        raise OSError(f"the collision mesh {path!r} cannot be read: {type(e).__name__}: {e}") from None
    V.setflags(write=False)
    F.setflags(write=False)
    return V, F


def mesh_hull(path, scale=(1.0, 1.0, 1.0)):
    """``(vertices, faces)`` of the convex hull of the mesh file ``path``'s vertices times ``scale``
    (trimesh reads it; cached per file, its modification time and the scale). Raises ``OSError``
    when it cannot be read."""
    st = os.stat(path)
    return _mesh_hull(str(path), st.st_mtime_ns, st.st_size, tuple(float(x) for x in scale))


def read_collisions(robot, base_dir, stacklevel=3) -> tuple:
    """The ``<collision>`` elements of every ``<link>`` of the parsed ``<robot>`` as
    :class:`~screwdyn.geometry.Collision` records (see the module docstring)."""
    from .urdf import _attr_numbers, _children, _local, _one, _origin
    from .visuals import _Packages

    packages = _Packages(base_dir)
    out, missing = [], []
    for link_el in _children(robot, "link"):
        ln = link_el.get("name")
        for k, el in enumerate(_children(link_el, "collision")):
            owner = f"link {ln!r} <collision>" + (f" number {k + 1}" if k else "")
            geom = _one(el, "geometry", owner)
            shapes = [] if geom is None else [g for g in geom if isinstance(g.tag, str)]
            if not shapes:
                raise URDFError(f"{owner}: missing <geometry> (one of <mesh>, <box>, <cylinder>, <sphere>)")
            shape, where = shapes[0], f"{owner} <geometry>"
            kind = _local(shape.tag)
            origin = _origin(el, owner)
            name = el.get("name") or ""
            if kind == "box":
                size = _attr_numbers(shape, "size", 3, None, where)
            elif kind in ("cylinder", "capsule"):
                size = [_attr_numbers(shape, key, 1, None, where)[0] for key in ("radius", "length")]
            elif kind == "sphere":
                size = _attr_numbers(shape, "radius", 1, None, where)
            elif kind == "mesh":
                filename = (shape.get("filename") or "").strip()
                scale = tuple(float(x) for x in _attr_numbers(shape, "scale", 3, (1.0, 1.0, 1.0), where))
                path, why = packages.resolve(filename)
                if path is None:
                    missing.append((f"{ln!r} ({filename})", why))
                    continue
                out.append(Collision(ln, "convex", origin, path=str(path), scale=scale, name=name, filename=filename))
                continue
            else:
                missing.append((repr(ln), f"<{kind}> is no URDF geometry"))
                continue
            if min(size) < 0:
                raise URDFError(f"{where} <{kind}>: sizes must not be negative, got {tuple(map(float, size))}")
            out.append(Collision(ln, kind, origin, tuple(size), name=name))
    if missing:   # one line: the reasons, each with the links it leaves out
        reasons = {}
        for link, why in missing:
            reasons.setdefault(why, []).append(link)
        warnings.warn(f"{len(missing)} <collision> geometries are left out (they do not collide): " + "; ".join(
            f"{why}: link{'s' if len(links) > 1 else ''} " + ", ".join(links[:3])
            + (f" and {len(links) - 3} more" if len(links) > 3 else "") for why, links in reasons.items()),
            CollisionWarning, stacklevel=stacklevel)
    return tuple(out)


def _ellipsoid(a, b, c):
    """Points on the ellipsoid of semi-axes ``(a, b, c)``: a 20 x 20 grid of latitudes and
    longitudes and the poles (402 points)."""
    th = np.linspace(0, np.pi, 22)[1:-1]
    ph = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    T, P = np.meshgrid(th, ph)
    pts = np.column_stack([np.sin(T).ravel() * np.cos(P).ravel(), np.sin(T).ravel() * np.sin(P).ravel(),
                           np.cos(T).ravel()])
    pts = np.vstack([pts, [[0, 0, 1], [0, 0, -1]]])
    return pts * np.array([a, b, c])


def mjcf_collisions(m, body_names, model) -> tuple:
    """``(collisions, obstacles)`` of the compiled MuJoCo model ``m``: the geoms that can collide, on
    the frames ``body_names[geom_bodyid]`` of ``model``; those of the world body and of bodies
    welded to it (fixed in the world) as obstacles (``link=None``, their pose in the world)."""
    import mujoco

    G = mujoco.mjtGeom
    kinds = {int(G.mjGEOM_PLANE): "plane", int(G.mjGEOM_SPHERE): "sphere", int(G.mjGEOM_CAPSULE): "capsule",
             int(G.mjGEOM_CYLINDER): "cylinder", int(G.mjGEOM_BOX): "box", int(G.mjGEOM_MESH): "convex",
             int(G.mjGEOM_ELLIPSOID): "convex"}
    collisions, obstacles, dropped, approximated = [], [], [], []
    for g in range(m.ngeom):
        if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
            continue
        name = m.geom(g).name or f"geom{g}"
        kind = kinds.get(int(m.geom_type[g]))
        if kind is None:
            dropped.append(name)
            continue
        R = np.empty(9)
        mujoco.mju_quat2Mat(R, m.geom_quat[g])
        origin = np.eye(4)
        origin[:3, :3] = R.reshape(3, 3)
        origin[:3, 3] = m.geom_pos[g]
        s = m.geom_size[g]
        extra = {}
        if int(m.geom_type[g]) == int(G.mjGEOM_MESH):
            i = m.geom_dataid[g]
            V, F = convex_hull(m.mesh_vert[m.mesh_vertadr[i]:m.mesh_vertadr[i] + m.mesh_vertnum[i]])
            size, extra = (), {"vertices": V, "faces": F, "filename": m.mesh(i).name}
        elif int(m.geom_type[g]) == int(G.mjGEOM_ELLIPSOID):
            V, F = convex_hull(_ellipsoid(*s))
            size, extra = (), {"vertices": V, "faces": F}
            approximated.append(name)
        else:
            size = {"plane": (), "sphere": s[:1], "capsule": (s[0], 2 * s[1]), "cylinder": (s[0], 2 * s[1]),
                    "box": 2 * s}[kind]
        params = dict(name=m.geom(g).name, contype=int(m.geom_contype[g]), conaffinity=int(m.geom_conaffinity[g]),
                      condim=int(m.geom_condim[g]), friction=tuple(m.geom_friction[g]), solref=tuple(m.geom_solref[g]),
                      solimp=tuple(m.geom_solimp[g]), margin=float(m.geom_margin[g]), gap=float(m.geom_gap[g]),
                      priority=int(m.geom_priority[g]), solmix=float(m.geom_solmix[g]), group=int(m.geom_group[g]))
        link = body_names[m.geom_bodyid[g]]
        k = model.frame_index(link)
        if model.frame_body[k] < 0:       # fixed in the world: an obstacle at its world pose
            obstacles.append(Collision(None, kind, model.frame_pose[k] @ origin, size, **extra, **params))
        elif kind == "plane":
            dropped.append(f"{name} (a plane on a moving body)")
        else:
            collisions.append(Collision(link, kind, origin, size, **extra, **params))
    if dropped:
        warnings.warn(f"MJCF geoms left out of the collision geometry (height fields, SDFs, planes on moving "
                      f"bodies): {dropped}", CollisionWarning, stacklevel=3)
    if approximated:
        warnings.warn(f"MJCF ellipsoid geoms {approximated} collide as polytopes of 402 points on their surface "
                      "(inscribed: up to 0.4 % of their size inside)", CollisionWarning, stacklevel=3)
    return tuple(collisions), tuple(obstacles)
