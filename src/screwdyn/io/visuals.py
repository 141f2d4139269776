"""The ``<visual>`` elements of a URDF: geometry, origin, material, and where each mesh file is
(and the geoms of an MJCF model).

:func:`read_visuals` is called by :func:`screwdyn.load_urdf` (:func:`mjcf_visuals` by
:func:`screwdyn.load_mjcf`); it gives the :class:`~screwdyn.geometry.Visual` records of ``model.visuals``. Mesh files are not read here
(:mod:`screwdyn.viz` reads them when it draws), only found:

* ``package://PKG/rest``: the package folder ``PKG`` is looked for, in this order, in each entry
  of ``ROS_PACKAGE_PATH`` (the entry itself, ``ENTRY/PKG``, ``ENTRY/*/PKG``), in
  ``PREFIX/share/PKG`` for each entry of ``AMENT_PREFIX_PATH``, in the folders above the URDF
  file (a folder named ``PKG``, or holding one), and in the installed example-robot-data
  package. Extra slashes (``package:///PKG/...``, as Talos writes them) are ignored.
* ``file:///abs/path`` and absolute paths as they are; ``file://rel`` and relative paths from the
  URDF's folder (the working directory for a URDF given as a string).

A mesh that cannot be found gives one :class:`~screwdyn.geometry.VisualWarning` naming the link
and the file, and is kept with ``path=None`` (the viewer draws the rest). Malformed numbers are
:class:`~screwdyn.errors.URDFError` as everywhere in the URDF reader.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ..errors import URDFError
from ..geometry import Visual, VisualWarning
from .urdf import (
    _attr_numbers,
    _children,
    _example_robot_data_dir,
    _local,
    _one,
    _origin,
)

__all__ = ["mjcf_visuals", "read_visuals", "resolve_mesh", "source_dir"]


def source_dir(source) -> Path | None:
    """The folder of a URDF given by path (None for a URDF given as text)."""
    if isinstance(source, (bytes, bytearray)):
        return None
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return None
    try:
        return Path(source).resolve().parent
    except (TypeError, OSError):
        return None


def read_visuals(robot, base_dir: Path | None, stacklevel: int = 3) -> tuple:
    """``<visual>`` elements of every ``<link>`` of the parsed ``<robot>``, as
    :class:`~screwdyn.geometry.Visual` records in document order; a warning per mesh not found."""
    materials = {}
    for m in _children(robot, "material"):
        rgba = _rgba(m, f"<material name={m.get('name')!r}>")
        if m.get("name") and rgba is not None:
            materials[m.get("name")] = rgba
    visuals = []
    packages = _Packages(base_dir)
    for link_el in _children(robot, "link"):
        ln = link_el.get("name")
        for k, el in enumerate(_children(link_el, "visual")):
            owner = f"link {ln!r} <visual>" + (f" number {k + 1}" if k else "")
            try:
                visual = _read_visual(el, ln, owner, materials, packages, stacklevel + 1)
            except URDFError as e:   # the dynamics never need it: say so and go on
                warnings.warn(f"{e}; this visual is not drawn", VisualWarning, stacklevel=stacklevel)
                continue
            if visual is not None:
                visuals.append(visual)
    return tuple(visuals)


def _read_visual(el, ln, owner, materials, packages, stacklevel):
    """One ``<visual>`` as a :class:`Visual` (None for a geometry URDF does not define)."""
    geom = _one(el, "geometry", owner)
    shapes = [] if geom is None else [g for g in geom if isinstance(g.tag, str)]
    if not shapes:
        raise URDFError(f"{owner}: missing <geometry> (one of <mesh>, <box>, <cylinder>, <sphere>)")
    shape, where = shapes[0], f"{owner} <geometry>"
    kind = _local(shape.tag)
    common = {"color": _material(el, materials, owner), "name": el.get("name") or ""}
    origin = _origin(el, owner)
    if kind == "mesh":
        filename = (shape.get("filename") or "").strip()
        if not filename:
            raise URDFError(f"{where} <mesh>: missing required attribute 'filename'")
        scale = _attr_numbers(shape, "scale", 3, (1.0, 1.0, 1.0), where)
        path, why = packages.resolve(filename)
        if path is None:
            warnings.warn(f"link {ln!r}: mesh {filename!r} not found ({why}); it is not drawn",
                          VisualWarning, stacklevel=stacklevel)
        return Visual(ln, "mesh", origin, scale, filename=filename, path=None if path is None else str(path), **common)
    if kind == "box":
        size = _attr_numbers(shape, "size", 3, None, where)
    elif kind == "cylinder":
        size = [_attr_numbers(shape, key, 1, None, where)[0] for key in ("radius", "length")]
    elif kind == "sphere":
        size = _attr_numbers(shape, "radius", 1, None, where)
    else:
        warnings.warn(f"link {ln!r}: <visual> geometry <{kind}> is not a URDF geometry "
                      "(mesh, box, cylinder, sphere); it is not drawn", VisualWarning, stacklevel=stacklevel)
        return None
    if min(size) < 0:
        raise URDFError(f"{where} <{kind}>: sizes must not be negative, got {tuple(float(v) for v in size)}")
    return Visual(ln, kind, origin, size, **common)


def mjcf_visuals(m, body_names) -> tuple:
    """The geoms of a compiled MuJoCo model ``m`` that MuJoCo's viewer shows by default (groups 0
    to 2, not transparent; not planes, height fields or SDFs: the floor is the viewer's own), as
    :class:`~screwdyn.geometry.Visual` records on the frames ``body_names[geom_bodyid]``: primitives
    with MuJoCo's sizes, meshes by the triangles MuJoCo compiled (scaled and re-centred, as the
    geom's pose expects); colour the material's, else the geom's ``rgba``."""
    import mujoco

    kinds = {int(mujoco.mjtGeom.mjGEOM_SPHERE): "sphere", int(mujoco.mjtGeom.mjGEOM_CAPSULE): "capsule",
             int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): "ellipsoid", int(mujoco.mjtGeom.mjGEOM_CYLINDER): "cylinder",
             int(mujoco.mjtGeom.mjGEOM_BOX): "box", int(mujoco.mjtGeom.mjGEOM_MESH): "mesh"}
    out = []
    for g in range(m.ngeom):
        kind = kinds.get(int(m.geom_type[g]))
        rgba = m.mat_rgba[m.geom_matid[g]] if m.geom_matid[g] >= 0 else m.geom_rgba[g]
        if kind is None or not 0 <= m.geom_group[g] <= 2 or rgba[3] == 0:
            continue
        R = np.empty(9)
        mujoco.mju_quat2Mat(R, m.geom_quat[g])
        origin = np.eye(4)
        origin[:3, :3] = R.reshape(3, 3)
        origin[:3, 3] = m.geom_pos[g]
        size = m.geom_size[g]
        extra = {}
        if kind == "mesh":
            i = m.geom_dataid[g]
            V = m.mesh_vert[m.mesh_vertadr[i]:m.mesh_vertadr[i] + m.mesh_vertnum[i]]
            F = m.mesh_face[m.mesh_faceadr[i]:m.mesh_faceadr[i] + m.mesh_facenum[i]]
            size, extra = (1.0, 1.0, 1.0), {"vertices": V, "faces": F, "filename": m.mesh(i).name}
        else:
            size = {"sphere": size[:1], "capsule": (size[0], 2 * size[1]), "cylinder": (size[0], 2 * size[1]),
                    "ellipsoid": size, "box": 2 * size}[kind]
        out.append(Visual(body_names[m.geom_bodyid[g]], kind, origin, size, color=tuple(rgba),
                          name=m.geom(g).name, **extra))
    return tuple(out)


def resolve_mesh(filename: str, base_dir: Path | None = None) -> Path | None:
    """The file a URDF mesh ``filename`` (``package://``, ``file://``, a path) refers to, or None.
    ``base_dir``: the URDF's folder (relative paths and the package search start there)."""
    return _Packages(base_dir).resolve(filename)[0]


def _rgba(el, owner):
    c = _one(el, "color", owner)
    if c is None:
        return None
    rgba = _attr_numbers(c, "rgba", 4, None, owner)
    return tuple(np.clip(rgba, 0.0, 1.0))


def _material(visual_el, materials, owner):
    """RGBA of the visual's ``<material>``: its own ``<color>``, else the robot-level material it names."""
    m = _one(visual_el, "material", owner)
    if m is None:
        return None
    rgba = _rgba(m, f"{owner} <material>")
    if rgba is None:
        rgba = materials.get(m.get("name"))
    return rgba


class _Packages:
    """Finds mesh files; remembers the package folders it found for one URDF."""

    def __init__(self, base_dir: Path | None):
        self.base_dir = base_dir
        self.found: dict[str, Path | None] = {}

    def resolve(self, filename: str):
        """``(path or None, why not)``."""
        lower = filename.lower()
        if lower.startswith(("package://", "model://")):
            rest = filename.split("://", 1)[1].lstrip("/")
            pkg, _, rel = rest.partition("/")
            root = self.package(pkg)
            if root is None:
                return None, (f"no package {pkg!r} in ROS_PACKAGE_PATH, AMENT_PREFIX_PATH, the folders above "
                              "the URDF or example-robot-data")
            path = Path(os.path.normpath(root / rel))
            return (path, "") if path.is_file() else (None, f"package {pkg!r} is {root}, which has no {rel}")
        if lower.startswith("file://"):
            filename = filename[len("file://"):]
        path = Path(filename).expanduser()
        if not path.is_absolute():
            path = (self.base_dir or Path.cwd()) / path
        path = Path(os.path.normpath(path))
        return (path, "") if path.is_file() else (None, f"no file {path}")

    def package(self, pkg: str) -> Path | None:
        if pkg not in self.found:
            self.found[pkg] = self._search(pkg)
        return self.found[pkg]

    def _search(self, pkg: str) -> Path | None:
        if not pkg:
            return None
        for entry in _env_paths("ROS_PACKAGE_PATH"):
            if entry.name == pkg and entry.is_dir():
                return entry
            for cand in [entry / pkg, *(d / pkg for d in _subdirs(entry))]:
                if cand.is_dir():
                    return cand
        for entry in _env_paths("AMENT_PREFIX_PATH"):
            if (entry / "share" / pkg).is_dir():
                return entry / "share" / pkg
        if self.base_dir is not None:
            for folder in (self.base_dir, *self.base_dir.parents):
                if folder.name == pkg:
                    return folder
                if (folder / pkg).is_dir():
                    return folder / pkg
        robots = _example_robot_data_dir()
        if robots is not None:
            for cand in (robots.parent, robots / pkg, robots.parent.parent / pkg):
                if cand.name == pkg and cand.is_dir():
                    return cand
        return None


def _env_paths(var):
    return [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]


def _subdirs(entry: Path):
    try:
        return [d for d in entry.iterdir() if d.is_dir()]
    except OSError:
        return []
