"""The pinhole camera of :func:`screwdyn.render`.

Camera axes as OpenCV's: ``x`` right, ``y`` down, ``z`` forward along the optical axis. A point
``p`` in the base frame has camera coordinates ``p_c = R^T (p - position)`` (the columns of ``R``
are the camera axes in the base frame) and lands on the image at ::

    u = f x_c / z_c + W / 2,    v = f y_c / z_c + H / 2,    f = (H / 2) / tan(fov / 2)

for an image ``W`` pixels wide and ``H`` high, ``fov`` the vertical field of view; pixel
``(row i, column j)`` covers ``j <= u < j + 1``, ``i <= v < i + 1``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["Camera"]


def _unit(v, what):
    v = np.asarray(v, dtype=float).reshape(3)
    n = np.linalg.norm(v)
    if not np.isfinite(n) or n < 1e-12:
        raise InputError(f"camera: {what} is zero or not finite")
    return v / n


@dataclass(frozen=True)
class Camera:
    """A camera at ``position`` looking at ``target``, ``up`` upward on the image, ``fov`` the
    vertical field of view in degrees. :meth:`orbit` places one by angles around a target."""

    position: tuple
    target: tuple
    up: tuple = (0.0, 0.0, 1.0)
    fov: float = 35.0

    def __post_init__(self):
        for key in ("position", "target", "up"):
            v = np.asarray(getattr(self, key), dtype=float).reshape(-1)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise InputError(f"camera: {key} must be 3 finite numbers, got {getattr(self, key)!r}")
            object.__setattr__(self, key, tuple(float(x) for x in v))
        if not 1.0 <= float(self.fov) <= 170.0:
            raise InputError(f"camera: fov must be between 1 and 170 degrees, got {self.fov!r}")
        self.rotation()   # checks that the view direction is not along up

    @classmethod
    def orbit(cls, target=(0.0, 0.0, 0.0), distance=2.0, azimuth=-50.0, elevation=25.0, fov=35.0,
              up=(0.0, 0.0, 1.0)):
        """A camera ``distance`` from ``target``, seen from ``azimuth`` degrees about the z axis
        (measured from +x towards +y) and ``elevation`` degrees above the xy plane."""
        az, el = np.radians(azimuth), np.radians(elevation)
        d = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
        if not np.isfinite(distance) or distance <= 0:
            raise InputError(f"camera: distance must be a positive number, got {distance!r}")
        return cls(tuple(np.asarray(target, dtype=float) + distance * d), tuple(target), up, fov)

    def rotation(self) -> np.ndarray:
        """``R`` (3, 3): the camera's x (right), y (down), z (forward) axes in the base frame, as columns."""
        z = _unit(np.subtract(self.target, self.position), "the view direction (target - position)")
        x = np.cross(z, _unit(self.up, "up"))
        if np.linalg.norm(x) < 1e-9:
            raise InputError("camera: the view direction is along 'up'; give another up vector")
        x /= np.linalg.norm(x)
        return np.column_stack([x, np.cross(z, x), z])

    def focal(self, height) -> float:
        """The focal length in pixels for an image ``height`` pixels high."""
        return 0.5 * height / np.tan(np.radians(self.fov) / 2)

    def to_camera(self, points) -> np.ndarray:
        """Points ``(..., 3)`` in camera coordinates."""
        return (np.asarray(points, dtype=float) - self.position) @ self.rotation()

    def project(self, points, width, height):
        """``(u, v, z)``: the image coordinates of points ``(..., 3)`` and their depth along the optical axis."""
        p = self.to_camera(points)
        f = self.focal(height)
        with np.errstate(divide="ignore", invalid="ignore"):
            return f * p[..., 0] / p[..., 2] + 0.5 * width, f * p[..., 1] / p[..., 2] + 0.5 * height, p[..., 2]

    @classmethod
    def fit(cls, points, width, height, azimuth=-50.0, elevation=25.0, fov=35.0, fill=0.86, target=None,
            distance=None, up=(0.0, 0.0, 1.0)):
        """An orbit camera at the given angles, aimed and placed so that ``points`` ``(m, 3)`` fill
        ``fill`` of the image (the larger of its width and height); ``target`` or ``distance`` given
        are kept as they are."""
        P = np.asarray(points, dtype=float).reshape(-1, 3)
        lo, hi = P.min(axis=0), P.max(axis=0)
        t = 0.5 * (lo + hi) if target is None else np.asarray(target, dtype=float)
        radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.05)
        half = np.radians(fov) / 2
        half_w = np.arctan(np.tan(half) * width / height)
        d = radius / np.sin(min(half, half_w)) if distance is None else float(distance)
        cam = cls.orbit(t, d, azimuth, elevation, fov, up)
        for _ in range(4):
            u, v, z = cam.project(P, width, height)
            if np.any(z <= 1e-6):
                break
            if target is None:    # move the target so that the points' box is centred on the image
                R, f = cam.rotation(), cam.focal(height)
                du, dv = 0.5 * (u.min() + u.max()) - 0.5 * width, 0.5 * (v.min() + v.max()) - 0.5 * height
                zc = float(np.linalg.norm(np.subtract(cam.target, cam.position)))
                t = t + R[:, 0] * du * zc / f + R[:, 1] * dv * zc / f
            if distance is None:
                frac = max((u.max() - u.min()) / width, (v.max() - v.min()) / height)
                d *= frac / fill
            cam = cls.orbit(t, d, azimuth, elevation, fov, up)
        return cam
