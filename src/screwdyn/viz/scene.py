"""What the viewer and the renderer draw: triangle meshes attached to the frames of a model.

:func:`parts` turns a model into a list of :class:`Part`: each a triangle mesh (vertices in its
own frame, per-face colours) with its fixed pose in one frame of the model. Its pose in the base
frame at ``q`` is ::

    T_0_part = screwdyn.forward_kinematics(model, q)[part.frame] @ part.pose

(the kinematics functions, never ``q`` read directly, so that any joint type works). The parts are

* ``geometry="visual"``: ``model.visuals`` (the URDF's ``<visual>`` elements, an MJCF's geoms):
  mesh files read with trimesh (STL, OBJ, COLLADA through pycollada, and what else trimesh reads),
  meshes given by their triangles, boxes, cylinders, spheres, capsules, ellipsoids built here. A mesh that was not found or cannot be read is a warning and is left out.
* ``geometry="skeleton"``: a stick figure with volume, for models without visuals (the bundled
  robots): a capsule from each body's frame origin to each child body's (and to the extra frames of
  the leaf bodies: tool, end effector), a cylinder along each revolute joint's axis, a box on each
  prismatic joint and a rail along its travel, and a plate at the base.
* ``geometry="auto"`` (the default): the visuals, unless there are none or not one of the URDF's
  meshes was found (a robot whose meshes are not installed would show only its small primitives):
  then the skeleton.

Primitives are built with NumPy only, so bundled robots render without the optional packages.
"""
from __future__ import annotations

import functools
import itertools
import os
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..geometry import VisualWarning
from ..model import PRISMATIC, REVOLUTE

__all__ = ["BASE_COLOR", "DEFAULT_COLOR", "GEOMETRIES", "JOINT_COLOR", "LINK_COLOR", "MeshReadError", "Part",
           "axes", "box", "capsule", "com_marker", "cylinder", "floor_tile", "link_radius", "node_name",
           "parts", "read_mesh", "samples", "skeleton_parts", "sphere", "up_rotation", "world_vertices"]

GEOMETRIES = ("auto", "visual", "skeleton")
DEFAULT_COLOR = (0.78, 0.79, 0.81, 1.0)   # a visual with no colour of its own
LINK_COLOR = (0.62, 0.70, 0.82, 1.0)      # skeleton: links
JOINT_COLOR = (0.96, 0.62, 0.22, 1.0)     # skeleton: joints
BASE_COLOR = (0.35, 0.36, 0.40, 1.0)      # skeleton: the base plate


@dataclass(frozen=True, eq=False)
class Part:
    """A triangle mesh rigidly attached to frame ``frame`` of a model at ``pose``.

    Attributes::

        name         str        unique, "/"-separated (link/visual_k), a node name for viewers
        frame        int        index into model.frame_names
        pose         (4, 4)     pose of the mesh in that frame
        vertices     (V, 3)     in the mesh's own frame, scale applied [m]
        faces        (F, 3)     vertex indices
        face_colors  (F, 4)     RGBA in [0, 1]
    """

    name: str
    frame: int
    pose: np.ndarray
    vertices: np.ndarray
    faces: np.ndarray
    face_colors: np.ndarray


# ---------------------------------------------------------------------------- primitives
def _colors(faces, color):
    return np.tile(np.asarray(color, dtype=float), (len(faces), 1))


def box(size, color=DEFAULT_COLOR):
    """``(vertices, faces, face_colors)`` of a box of edge lengths ``size`` centred on the origin."""
    h = 0.5 * np.asarray(size, dtype=float)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float) * h
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    faces = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))], dtype=np.int64)
    return corners, faces, _colors(faces, color)


def _revolve(profile, segments):
    """A surface of revolution about z of the ``(r, z)`` polyline ``profile``, a closed surface when
    it starts and ends on the axis (r = 0: one vertex there): ``(vertices, faces)``."""
    phi = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(phi), np.sin(phi)], axis=1)
    verts, rows = [], []    # rows[k]: the vertex indices of profile point k, one per angle
    scale = max(abs(r) for r, _ in profile)
    for r, z in profile:
        start = sum(len(v) for v in verts)
        if abs(r) <= 1e-12 * scale:
            verts.append(np.array([[0.0, 0.0, z]]))
            rows.append(np.full(segments, start))
        else:
            verts.append(np.column_stack([r * ring, np.full(segments, z)]))
            rows.append(start + np.arange(segments))
    faces = []
    for a, b in itertools.pairwise(rows):
        a1, b1 = np.roll(a, -1), np.roll(b, -1)
        faces.append(np.stack([a, a1, b1], axis=1))
        faces.append(np.stack([a, b1, b], axis=1))
    F = np.vstack(faces)
    keep = (F[:, 0] != F[:, 1]) & (F[:, 1] != F[:, 2]) & (F[:, 0] != F[:, 2])
    return np.vstack(verts), F[keep]


def cylinder(radius, length, color=DEFAULT_COLOR, segments=32):
    """A closed cylinder of axis z, centred on the origin."""
    h = 0.5 * length
    V, F = _revolve([(0.0, -h), (radius, -h), (radius, h), (0.0, h)], segments)
    return V, F, _colors(F, color)


def sphere(radius, color=DEFAULT_COLOR, segments=24):
    """A UV sphere centred on the origin."""
    theta = np.linspace(np.pi, 0.0, segments // 2 + 1)
    V, F = _revolve([(radius * np.sin(t), radius * np.cos(t)) for t in theta], segments)
    return V, F, _colors(F, color)


def capsule(a, b, radius, color=LINK_COLOR, segments=20):
    """A capsule (cylinder with hemispherical ends) from point ``a`` to point ``b``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    length = float(np.linalg.norm(b - a))
    m = max(segments // 4, 2)
    south = [(radius * np.sin(t), radius * np.cos(t) - 0.5 * length) for t in np.linspace(np.pi, np.pi / 2, m + 1)]
    north = [(radius * np.sin(t), radius * np.cos(t) + 0.5 * length) for t in np.linspace(np.pi / 2, 0.0, m + 1)]
    V, F = _revolve(south + north, segments)
    T = _align_z(b - a)
    T[:3, 3] = 0.5 * (a + b)
    return V @ T[:3, :3].T + T[:3, 3], F, _colors(F, color)


def _align_z(d):
    """A pose whose z axis is along ``d`` (identity for a zero ``d``)."""
    T = np.eye(4)
    n = np.linalg.norm(d)
    if n < 1e-12:
        return T
    z = d / n
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    return T


def _merge(pieces):
    V, F, C, off = [], [], [], 0
    for v, f, c in pieces:
        V.append(v)
        F.append(f + off)
        C.append(c)
        off += len(v)
    return np.vstack(V), np.vstack(F), np.vstack(C)


def axes(length, radius=None):
    """A frame triad: red x, green y, blue z capsules of ``length`` from the origin."""
    radius = 0.06 * length if radius is None else radius
    cols = [(0.85, 0.15, 0.15, 1.0), (0.15, 0.7, 0.2, 1.0), (0.15, 0.3, 0.9, 1.0)]
    return _merge([capsule(np.zeros(3), length * e, radius, c, segments=12) for e, c in zip(np.eye(3), cols)])


def com_marker(radius):
    """The centre-of-mass symbol: a sphere in black and yellow octants."""
    V, F, _ = sphere(radius, segments=32)
    c = V[F].mean(axis=1)
    dark = np.prod(np.sign(c + 1e-12), axis=1) > 0
    C = np.where(dark[:, None], (0.1, 0.1, 0.1, 1.0), (0.98, 0.8, 0.1, 1.0))
    return V, F, C


# ---------------------------------------------------------------------------- mesh files
class MeshReadError(Exception):
    """A mesh file that trimesh cannot read."""


def read_mesh(path, scale=(1.0, 1.0, 1.0)):
    """``(vertices, faces, face_colors or None)`` of the mesh file ``path`` (every geometry of the
    file moved to its place and joined), scaled by ``scale``. Needs trimesh (and pycollada for
    COLLADA); raises :class:`MeshReadError` when the file cannot be read."""
    st = os.stat(path)
    V, F, C = _read_mesh_cached(str(path), st.st_mtime_ns, st.st_size)
    return V * np.asarray(scale, dtype=float), F, C


@functools.lru_cache(maxsize=256)
def _read_mesh_cached(path, mtime, size):
    try:
        import trimesh
    except ImportError:
        raise ImportError("reading mesh files needs trimesh (pip install 'screwdyn[viewer]' or 'screwdyn[render]')") \
            from None
    try:
        scene = trimesh.load(path, force="scene")
    except Exception as e:  # noqa: BLE001 - trimesh raises many kinds (ValueError, KeyError, XML errors)
        raise MeshReadError(f"{type(e).__name__}: {e}") from None
    pieces, colored = [], False
    for node in scene.graph.nodes_geometry:
        T, name = scene.graph[node]
        g = scene.geometry[name]
        if not hasattr(g, "faces") or len(g.faces) == 0:
            continue
        V = np.asarray(g.vertices, dtype=float) @ T[:3, :3].T + T[:3, 3]
        C = _mesh_colors(g)
        colored |= C is not None
        pieces.append((V, np.asarray(g.faces, dtype=np.int64),
                       C if C is not None else np.full((len(g.faces), 4), np.nan)))
    if not pieces:
        raise MeshReadError("no triangles in the file")
    V, F, C = _merge(pieces)
    V, F = _weld(V, F)
    if colored:
        C = np.where(np.isnan(C), DEFAULT_COLOR, C)
    V.setflags(write=False)
    F.setflags(write=False)
    C.setflags(write=False)
    return V, F, (C if colored else None)


def _weld(V, F):
    """One vertex per position: mesh files repeat vertices per face or per normal (3 to 1 on the Panda)."""
    order = np.lexsort(V.T)
    Vs = V[order]
    first = np.ones(len(V), dtype=bool)
    first[1:] = np.any(Vs[1:] != Vs[:-1], axis=1)
    index = np.empty(len(V), dtype=np.int64)
    index[order] = np.cumsum(first) - 1
    return Vs[first], index[F]


def _mesh_colors(g):
    """Per-face RGBA in [0, 1] of a trimesh geometry, or None when it has no colour of its own."""
    vis = g.visual
    kind = getattr(vis, "kind", None)
    if kind == "face":
        return np.asarray(vis.face_colors, dtype=float) / 255.0
    if kind == "vertex":
        return np.asarray(vis.vertex_colors, dtype=float)[g.faces].mean(axis=1) / 255.0
    mat = getattr(vis, "material", None)
    if mat is None:
        return None
    image = getattr(mat, "baseColorTexture", None) or getattr(mat, "image", None)
    uv = getattr(vis, "uv", None)
    if image is not None and uv is not None and len(uv) == len(g.vertices):
        img = np.asarray(image.convert("RGBA"), dtype=float) / 255.0
        h, w = img.shape[:2]
        c = np.asarray(uv, dtype=float)[g.faces].mean(axis=1) % 1.0
        return img[((1.0 - c[:, 1]) * (h - 1)).round().astype(int), (c[:, 0] * (w - 1)).round().astype(int)]
    rgba = getattr(mat, "baseColorFactor", None)
    if rgba is None:
        rgba = getattr(mat, "diffuse", None)
    if rgba is None:
        return None
    rgba = np.asarray(rgba, dtype=float).reshape(-1)
    rgba = rgba / 255.0 if rgba.max() > 1.0 or rgba.dtype.kind in "ui" else rgba
    return np.tile(np.r_[rgba[:3], rgba[3] if len(rgba) > 3 else 1.0], (len(g.faces), 1))


# ---------------------------------------------------------------------------- the parts of a model
def parts(model, geometry="auto", stacklevel=3) -> list:
    """The :class:`Part` list that draws ``model`` (see the module docstring for ``geometry``).
    A visual whose mesh was not found or cannot be read gives a
    :class:`~screwdyn.geometry.VisualWarning` and is left out."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}, got {geometry!r}")
    out = []
    if geometry in ("auto", "visual"):
        out = _visual_parts(model, stacklevel + 1)
    meshes = [v for v in model.visuals if v.kind == "mesh"]
    drawn_meshes = sum(p.name in _mesh_names(model) for p in out)
    if geometry == "skeleton" or (geometry == "auto" and (not out or (meshes and not drawn_meshes))):
        out = skeleton_parts(model)   # auto: no visuals, or not one of its meshes found (a bare robot)
    return out


def _mesh_names(model):
    """The part names that the mesh visuals of ``model`` get (``link/visual_k``: the k-th <visual>)."""
    names, count = set(), {}
    for v in model.visuals:
        k = count[v.link] = count.get(v.link, -1) + 1
        if v.kind == "mesh":
            names.add(f"{node_name(v.link)}/visual_{k}")
    return names


def _visual_parts(model, stacklevel):
    out, count, no_trimesh = [], {}, None
    for v in model.visuals:
        k = count[v.link] = count.get(v.link, -1) + 1    # the k-th <visual> of its link names its node
        frame = model.frame_index(v.link)
        color = DEFAULT_COLOR if v.color is None else v.color
        if v.kind == "mesh" and v.vertices is not None:
            V, F, C = v.vertices * np.asarray(v.size), v.faces, _colors(v.faces, color)
        elif v.kind == "mesh":
            if v.path is None or no_trimesh:
                continue   # load_urdf warned; or said once below
            try:
                V, F, C = read_mesh(v.path, v.size)
            except ImportError as e:
                no_trimesh = e
                warnings.warn(f"{e}; the meshes of {model.name!r} are not drawn", VisualWarning, stacklevel=stacklevel)
                continue
            except (OSError, MeshReadError) as e:
                warnings.warn(f"link {v.link!r}: mesh {v.path!r} cannot be read ({e}); it is not drawn",
                              VisualWarning, stacklevel=stacklevel)
                continue
            if C is None:
                C = _colors(F, color)
        elif v.kind == "box":
            V, F, C = box(v.size, color)
        elif v.kind == "cylinder":
            V, F, C = cylinder(v.size[0], v.size[1], color)
        elif v.kind == "capsule":
            V, F, C = capsule((0.0, 0.0, -0.5 * v.size[1]), (0.0, 0.0, 0.5 * v.size[1]), v.size[0], color, segments=32)
        elif v.kind == "ellipsoid":
            V, F, C = sphere(1.0, color, segments=32)
            V = V * np.asarray(v.size)
        else:
            V, F, C = sphere(v.size[0], color, segments=32)
        out.append(Part(f"{node_name(v.link)}/visual_{k}", frame, np.array(v.origin), V, F, C))
    return out


def node_name(name):
    """A frame or link name usable in a "/"-separated node path."""
    return str(name).replace("/", "_").strip() or "_"


def skeleton_parts(model):
    """The stick figure with volume (see the module docstring), sized from the robot's extent."""
    from ..plot import skeleton

    body_frame = [model.frame_index(name) for name in model.link_names]
    base = model.frame_index(model.base_name)
    r = link_radius(model)
    out, segments = [], {}
    for a, b in skeleton(model):
        # segment a -> b, drawn in frame a (fixed there for a revolute joint at b)
        body_b = int(model.frame_body[b])
        if body_b >= 0 and body_frame[body_b] == b:        # a body's own origin: its joint placement
            end = model.T_parent_body[body_b][:3, 3]
        else:                                             # a frame on a leaf body
            end = model.frame_pose[b][:3, 3]
        if np.linalg.norm(end) > 1e-9:
            segments.setdefault(int(a), []).append(end)
    for a, ends in segments.items():
        ends.sort(key=lambda e: -np.linalg.norm(e))
        kept = []
        for e in ends:   # one capsule per direction: a shorter one inside a longer would flicker
            if not any(e @ k > (1 - 1e-6) * np.linalg.norm(e) * np.linalg.norm(k) for k in kept):
                kept.append(e)
        for k, e in enumerate(kept):
            out.append(Part(f"{node_name(model.frame_names[a])}/link_{k}", a, np.eye(4), *capsule(np.zeros(3), e, r)))
    fixed_base = True
    for i in range(len(model.joint_names)):   # a joint per body
        axis = model.joint_axis[i]
        parent = base if model.parent[i] < 0 else body_frame[model.parent[i]]
        if model.joint_type[i] == REVOLUTE:
            V, F, C = cylinder(1.45 * r, 3.6 * r, JOINT_COLOR, segments=28)
        elif model.joint_type[i] != PRISMATIC:    # a joint of several degrees of freedom: a ball
            V, F, C = sphere(1.6 * r, JOINT_COLOR)
            fixed_base &= model.parent[i] >= 0
        else:
            V, F, C = box((2.4 * r, 2.4 * r, 3.6 * r), JOINT_COLOR)
            T = model.T_parent_body[i]
            lo, hi = (np.clip(x * model.joint_scale[i], -1.0, 1.0) if np.isfinite(x) else s
                      for x, s in ((model.q_lower[i], -0.5), (model.q_upper[i], 0.5)))
            d = T[:3, :3] @ axis
            rail = capsule(T[:3, 3] + lo * d, T[:3, 3] + hi * d, 0.45 * r, BASE_COLOR, segments=12)
            out.append(Part(f"{node_name(model.frame_names[parent])}/rail_{i}", parent, np.eye(4), *rail))
        out.append(Part(f"{node_name(model.link_names[i])}/joint", body_frame[i], _align_z(axis), V, F, C))
    if fixed_base:   # a plate where the robot is bolted down (none under a floating base)
        V, F, C = cylinder(3.0 * r, 0.8 * r, BASE_COLOR, segments=36)
        pose = np.eye(4)
        pose[2, 3] = -0.4 * r
        out.append(Part(f"{node_name(model.base_name)}/base", base, pose, V, F, C))
    return out


def link_radius(model):
    """A radius for the skeleton's links: 3.5 % of the robot's size (the distance from the base to
    its farthest frame at the zero configuration), within [5 mm, 10 cm]."""
    import screwdyn

    P = np.asarray(screwdyn.forward_kinematics(model, screwdyn.neutral(model)))[:, :3, 3]
    extent = float(np.max(np.linalg.norm(P, axis=1))) if len(P) else 1.0
    return float(np.clip(0.035 * extent, 0.005, 0.1))


def floor_tile(size):
    """A round floor tile (1, 2 or 5 times a power of ten) of about a fifth of ``size``."""
    x = max(size / 5, 1e-3)
    e = np.floor(np.log10(x))
    m = x / 10**e
    return float((1 if m < 1.5 else 2 if m < 3.5 else 5) * 10**e)


def up_rotation(model) -> np.ndarray:
    """The rotation ``R`` (3, 3) that turns the model's upward direction (against its gravity) into
    +z: pictures are drawn in the frame ``R p`` so that "up" is up (identity for gravity along -z or zero)."""
    g = np.asarray(model.gravity, dtype=float)
    n = np.linalg.norm(g)
    if n == 0:
        return np.eye(3)
    u = -g / n
    c = u[2]
    if c > 1 - 1e-12:
        return np.eye(3)
    if c < -1 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    v = np.cross(u, [0.0, 0.0, 1.0])
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)    # Rodrigues: the shortest rotation from u to z


def world_vertices(part_list, T_frames):
    """Vertices of every part in the base frame, joined: ``(V, 3)``, given the frames' poses
    ``T_frames`` ``(k, 4, 4)`` (``screwdyn.forward_kinematics``)."""
    out = []
    for p in part_list:
        T = T_frames[p.frame] @ p.pose
        out.append(p.vertices @ T[:3, :3].T + T[:3, 3])
    return np.vstack(out) if out else np.zeros((0, 3))


def samples(trajectory):
    """``(t (N,), q (N, nq))`` of a :class:`~screwdyn.Trajectory` or a ``(t, q)`` pair."""
    if isinstance(trajectory, tuple) and len(trajectory) == 2:
        t, Q = (np.asarray(a, dtype=float) for a in trajectory)
    elif hasattr(trajectory, "t") and hasattr(trajectory, "q"):
        t, Q = np.asarray(trajectory.t, dtype=float), np.asarray(trajectory.q, dtype=float)
    else:
        raise InputError("trajectory: a screwdyn.Trajectory or a (t, q) pair of arrays")
    if Q.ndim != 2 or t.shape != (len(Q),) or len(t) == 0 or np.any(np.diff(t) <= 0):
        raise InputError(f"trajectory: t (N,) increasing and q (N, nq), got {t.shape} and {Q.shape}")
    return t, Q
