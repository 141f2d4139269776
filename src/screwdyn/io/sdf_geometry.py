"""The ``<visual>`` and ``<collision>`` geometry of an SDFormat model's links, as
:class:`~screwdyn.geometry.Visual` records (read by :func:`screwdyn.load_sdf`).

Shapes: ``box`` (``size``), ``sphere`` (``radius``), ``cylinder`` and ``capsule`` (``radius``,
``length``), ``ellipsoid`` (``radii``), ``mesh`` (``uri``, ``scale``; the file found as a URDF
mesh is, ``model://PKG/...`` as ``package://PKG/...``, see :mod:`screwdyn.io.visuals`). Other
shapes (``plane``, ``heightmap``, ``polyline``, ...) give a
:class:`~screwdyn.geometry.VisualWarning` and are left out. The colour is the ``<material>``'s
``<diffuse>``, else its ``<ambient>``.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import SDFError
from ..geometry import Visual, VisualWarning
from ..spatial import inverse_transform
from .urdf import _local
from .visuals import _Packages

__all__ = ["sdf_geometry"]


def sdf_geometry(links: dict, tag: str, legacy: bool, frames, base_dir, label) -> tuple:
    """The ``<tag>`` (``"visual"`` or ``"collision"``) elements of the ``links`` (``{name: element}``)
    as :class:`Visual` records on the link frames, in document order. ``frames`` resolves a pose's
    ``relative_to`` (:class:`screwdyn.io.sdf._Frames`)."""
    from .sdf import _kid, _kids, _numbers, _pose

    packages = _Packages(base_dir)
    out = []
    for ln, link_el in links.items():
        for k, el in enumerate(_kids(link_el, tag)):
            where = f"{label}: link {ln!r} <{tag} name={el.get('name')!r}>"
            rel, T = _pose(el, where, legacy)
            if rel is not None and not legacy:
                T = inverse_transform(frames.pose(ln)) @ frames.pose(rel) @ T
            geometry = _kid(el, "geometry")
            shapes = [] if geometry is None else [g for g in geometry if isinstance(g.tag, str)]
            if not shapes:
                raise SDFError(f"{where}: missing <geometry>")
            shape = shapes[0]
            kind = _local(shape.tag)

            def number(name, count=1, default=None):
                c = _kid(shape, name)
                if c is None:
                    if default is None:
                        raise SDFError(f"{where} <{kind}>: missing <{name}>")
                    return np.array(default, dtype=float)
                return _numbers(c.text, count, f"{where} <{kind}><{name}>")

            extra = {}
            if kind == "box":
                size = number("size", 3)
            elif kind == "sphere":
                size = number("radius")
            elif kind in ("cylinder", "capsule"):
                size = np.concatenate([number("radius"), number("length")])
            elif kind == "ellipsoid":
                size = number("radii", 3)
            elif kind == "mesh":
                uri = (_kid(shape, "uri").text or "").strip() if _kid(shape, "uri") is not None else ""
                if not uri:
                    raise SDFError(f"{where} <mesh>: missing <uri>")
                size = number("scale", 3, (1.0, 1.0, 1.0))
                path, why = packages.resolve(uri)
                if path is None:
                    warnings.warn(f"link {ln!r}: mesh {uri!r} not found ({why}); it is not drawn",
                                  VisualWarning, stacklevel=4)
                extra = {"filename": uri, "path": None if path is None else str(path)}
            else:
                warnings.warn(f"{where}: geometry <{kind}> is not a box, sphere, cylinder, capsule, ellipsoid or "
                              "mesh; it is left out", VisualWarning, stacklevel=4)
                continue
            out.append(Visual(ln, kind, T, size, color=_color(el, where), name=el.get("name") or "", **extra))
    return tuple(out)


def _color(el, where):
    from .sdf import _kid, _numbers

    material = _kid(el, "material")
    for name in ("diffuse", "ambient"):
        c = None if material is None else _kid(material, name)
        if c is not None and (c.text or "").strip():
            return tuple(np.clip(_numbers(c.text, 4, f"{where} <material><{name}>"), 0.0, 1.0))
    return None
