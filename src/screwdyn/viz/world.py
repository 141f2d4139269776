"""What the viewer and the renderer draw besides the robot: its collision geometry, the
environment (the ground, a slope, obstacles) and contacts with their forces.

* :func:`collision_parts`: ``model.collisions`` as :class:`~screwdyn.viz.scene.Part` (polytopes by
  their hull's triangles, primitives built here), in :data:`COLLISION_COLOR`.
* :func:`environment_parts`: the obstacles of an :class:`~screwdyn.environment.Environment` as
  parts fixed to the base frame, in :data:`OBSTACLE_COLOR`; its first plane is the ground, drawn by
  the renderer's floor (a horizontal ground) or as a checkered slab of its plane
  (:func:`slope_mesh`, a tilted one).
* :func:`contact_mesh`: a marker at each contact point and an arrow along each contact force.

Contacts come as :class:`screwdyn.collision.Contacts` (the rows that hold a contact are drawn), or
as points ``(k, 3)``; forces as ``(k, 3)`` vectors in the world frame [N] (the force on side A; a
solver's ``(lambda_n, lambda_t1, lambda_t2)`` in a contact's frame is ``lambda @ frame``), drawn
from the point, ``force_scale`` metres per newton.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import scene as _scene

__all__ = ["COLLISION_COLOR", "CONTACT_COLOR", "FORCE_COLOR", "OBSTACLE_COLOR", "collision_parts", "contact_points",
           "contact_mesh", "environment_parts", "ground_of", "marker_radius", "slope_mesh"]

COLLISION_COLOR = (0.93, 0.55, 0.20, 1.0)
OBSTACLE_COLOR = (0.58, 0.62, 0.70, 1.0)
CONTACT_COLOR = (0.86, 0.13, 0.15, 1.0)
FORCE_COLOR = (0.12, 0.42, 0.90, 1.0)
_SLOPE = ((0.88, 0.89, 0.90, 1.0), (0.80, 0.81, 0.83, 1.0))


def shape_mesh(c, color):
    """``(V, F, C)`` of a :class:`~screwdyn.geometry.Collision` in its own frame (a plane: None)."""
    if c.kind == "box":
        return _scene.box(c.size, color)
    if c.kind == "sphere":
        return _scene.sphere(c.size[0], color, segments=32)
    if c.kind == "cylinder":
        return _scene.cylinder(c.size[0], c.size[1], color)
    if c.kind == "capsule":
        return _scene.capsule((0.0, 0.0, -0.5 * c.size[1]), (0.0, 0.0, 0.5 * c.size[1]), c.size[0], color, segments=32)
    if c.kind == "convex":
        V, F = c.hull()
        return np.asarray(V), np.asarray(F), np.tile(np.asarray(color, float), (len(F), 1))
    return None


def collision_parts(model, color=COLLISION_COLOR) -> list:
    """``model.collisions`` as parts, each on its link's frame at its origin."""
    out, count = [], {}
    for c in model.collisions:
        try:
            mesh = shape_mesh(c, color)
        except OSError as e:           # a mesh that cannot be read: the rest is drawn
            import warnings
            from ..errors import VisualWarning
            warnings.warn(f"{e}; it is not drawn", VisualWarning, stacklevel=3)
            continue
        if mesh is None:
            continue
        k = count[c.link] = count.get(c.link, -1) + 1
        out.append(_scene.Part(f"{_scene.node_name(c.link)}/collision_{k}", model.frame_index(c.link),
                               np.array(c.origin), *mesh))
    return out


def ground_of(environment):
    """The environment's ground (its first plane), or None."""
    return None if environment is None else environment.ground


def environment_parts(model, environment, color=OBSTACLE_COLOR) -> list:
    """The obstacles of ``environment`` but its planes, as parts fixed to the base frame."""
    if environment is None:
        return []
    base = model.frame_index(model.base_name)
    out = []
    for k, o in enumerate(environment.obstacles):
        mesh = shape_mesh(o, color if o.kind != "convex" else color)
        if mesh is not None:
            out.append(_scene.Part(f"environment/{_scene.node_name(o.name or o.kind)}_{k}", base, np.array(o.origin),
                                   *mesh))
    return out


def slope_mesh(ground, centre, radius, tile):
    """``(V, F, C)``: a checkered square of the ground's plane around the point of it nearest
    ``centre``, ``2 radius`` wide, tiles ``tile`` wide (a tilted ground, which the renderer's
    horizontal floor cannot draw)."""
    T = np.asarray(ground.origin)
    n, x, y = T[:3, 2], T[:3, 0], T[:3, 1]
    c = np.asarray(centre, float)
    c = c - ((c - T[:3, 3]) @ n) * n
    m = max(1, int(np.ceil(radius / tile)))
    u0 = np.floor(((c - T[:3, 3]) @ x) / tile) - m
    v0 = np.floor(((c - T[:3, 3]) @ y) / tile) - m
    V, F, C = [], [], []
    for i in range(2 * m):
        for j in range(2 * m):
            a, b = (u0 + i) * tile, (v0 + j) * tile
            k = len(V)
            V += [T[:3, 3] + a * x + b * y, T[:3, 3] + (a + tile) * x + b * y,
                  T[:3, 3] + (a + tile) * x + (b + tile) * y, T[:3, 3] + a * x + (b + tile) * y]
            F += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
            C += [_SLOPE[int(u0 + v0 + i + j) % 2]] * 2
    return np.array(V), np.array(F, dtype=np.int64), np.array(C)


def contact_points(contacts):
    """The points ``(k, 3)`` of one state's contacts: a :class:`~screwdyn.collision.Contacts` (its
    rows that hold a contact), a ``(data, count)`` pair, or points ``(k, 3)``."""
    if contacts is None:
        return np.zeros((0, 3))
    if isinstance(contacts, tuple) and len(contacts) == 2:
        data, count = np.asarray(contacts[0]), int(np.asarray(contacts[1]))
        if data.ndim != 2:
            raise InputError(f"contacts: one state's rows (K, WIDTH) and count, got data of shape {data.shape}")
        from ..algorithms.collide import POS
        return data[:min(count, len(data)), POS:POS + 3]
    P = np.asarray(contacts, dtype=float)
    if P.ndim != 2 or P.shape[1] != 3:
        raise InputError(f"contacts: a screwdyn Contacts of one state or points (k, 3), got shape {P.shape}")
    return P


def marker_radius(points):
    """The radius of the contact markers for a scene of ``points`` (its vertices): 2.5 % of its
    largest extent, within [5 mm, 5 cm]."""
    P = np.asarray(points, dtype=float).reshape(-1, 3)
    extent = float(np.max(np.ptp(P, axis=0))) if len(P) else 0.0
    return float(np.clip(0.025 * extent, 0.005, 0.05))


def _arrow(length, radius):
    """An arrow along +z from the origin: a shaft and a cone of a third of its length."""
    head = min(length / 3, 6 * radius)
    V, F = _scene._revolve([(0.0, 0.0), (radius, 0.0), (radius, length - head), (2.6 * radius, length - head),
                            (0.0, length)], 16)
    return V, F


def contact_mesh(points, forces=None, radius=0.01, force_scale=None):
    """``(V, F, C)`` in the world frame: a sphere of ``radius`` at each point and, given forces
    ``(k, 3)`` [N], an arrow from each point along its force, ``force_scale`` m/N long (default: the
    largest force ``15 radius`` long)."""
    pieces = []
    P = np.asarray(points, dtype=float).reshape(-1, 3)
    Vs, Fs, _ = _scene.sphere(radius, CONTACT_COLOR, segments=12)
    for p in P:
        pieces.append((Vs + p, Fs, np.tile(CONTACT_COLOR, (len(Fs), 1))))
    if forces is not None:
        Fv = np.asarray(forces, dtype=float).reshape(-1, 3)
        if len(Fv) != len(P):
            raise InputError(f"forces: one per contact ({len(P)}), got {len(Fv)}")
        mags = np.linalg.norm(Fv, axis=1)
        if force_scale is None:
            force_scale = 15 * radius / mags.max() if len(mags) and mags.max() > 0 else 0.0
        for p, f, mag in zip(P, Fv, mags):
            length = mag * force_scale
            if length <= 2 * radius:
                continue
            V, F = _arrow(length, 0.5 * radius)
            T = _scene._align_z(f)
            pieces.append((V @ T[:3, :3].T + p, F, np.tile(FORCE_COLOR, (len(F), 1))))
    if not pieces:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros((0, 4))
    return _scene._merge(pieces)
