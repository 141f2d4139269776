"""Visual geometry attached to the links of a model: what the viewer and the renderer draw.

The dynamics never read it. :func:`screwdyn.load_urdf` records each ``<visual>`` of a link as a
:class:`Visual` in ``model.visuals``, :func:`screwdyn.load_mjcf` each geom MuJoCo's viewer shows;
:mod:`screwdyn.viz` draws them.

A visual is attached to a URDF link by name, and every URDF link is a frame of the model
(``model.frame_names``), fixed-joint-merged links included. So the pose of the geometry in the
base frame at configuration ``q`` is ::

    T_0_geometry = screwdyn.frame_pose(model, q, visual.link) @ visual.origin

which follows any change of the joints (merged links, a floating base) that the frame poses
follow.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import VisualWarning

__all__ = ["KINDS", "Visual", "VisualWarning"]

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
