"""Seeing the robot: a browser viewer (:func:`view`, viser) and pictures without a display
(:func:`render`, :func:`animate`: a software renderer).

What is drawn is :mod:`screwdyn.viz.scene`: the URDF's visual geometry (``model.visuals``) or,
for models without any, a stick figure with volume. Poses come from
:func:`screwdyn.forward_kinematics`.
"""
from .camera import Camera
from .renderer import Renderer, animate, render

__all__ = ["Camera", "Renderer", "Viewer", "animate", "render", "view"]


def __getattr__(name):
    if name in ("view", "Viewer"):   # viser is optional: imported when the viewer is asked for
        from . import viewer
        return getattr(viewer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
