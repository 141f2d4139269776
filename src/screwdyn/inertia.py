"""Rigid-body inertia: shapes, rotation, Steiner's theorem, compound bodies, spatial inertia.

docs/theory.md §3. A rigid body is its mass ``m``, centre of mass ``c`` and rotational
inertia ``I_c`` about the centre of mass, all written in one frame ``{b}``.

* Rotated frame (§3.1, eq. (3.4)): ``I_c' = R_bc^T I_b R_bc``; here :meth:`RigidBody.transformed`.
* Steiner (§3.1, eq. (3.3)): ``I_q = I_c + m (q^T q I_3 - q q^T) = I_c + m [q]^T [q]``.
* Compound body: inertias add once expressed about one point in one frame (§3.3, eq. (3.11)).
* Spatial inertia at ``{b}`` with ``c != 0`` (§3.2, eq. (3.6), and §3.3, eq. (3.8), the
  "generalised Steiner theorem" of Lynch & Park, sect. 8.2), twist ordering ``(omega, v)``::

      G_b = [[I_c - m [c][c],  m [c]],
             [   -m [c],       m I_3]]

  which equals ``[Ad_T_cb]^T G_c [Ad_T_cb]`` with ``G_c = diag(I_c, m I_3)``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .errors import InertiaWarning, ModelError
from .spatial import Ad, skew

__all__ = [
    "RigidBody",
    "steiner",
    "rotate_inertia",
    "spatial_inertia",
    "compound",
    "check_inertia",
    "clamp_principal_moments",
    "InertiaWarning",
    "box",
    "cylinder",
    "hollow_cylinder",
    "sphere",
    "ellipsoid",
    "rod",
    "point_mass",
]


def steiner(inertia_com, mass, r) -> np.ndarray:
    """Inertia about the point ``r`` (axes unchanged) from the inertia about the CoM:
    ``I_r = I_c + m (r^T r I_3 - r r^T)``."""
    r = np.asarray(r, dtype=float)
    return np.asarray(inertia_com, dtype=float) + mass * (r @ r * np.eye(3) - np.outer(r, r))


def rotate_inertia(inertia, R) -> np.ndarray:
    """The inertia of a body in frame ``{a}`` given it in ``{b}`` and ``R = R_ab``: ``R I_b R^T``."""
    R = np.asarray(R, dtype=float)
    return R @ np.asarray(inertia, dtype=float) @ R.T


def spatial_inertia(mass, com, inertia_com) -> np.ndarray:
    """The ``6 x 6`` spatial inertia ``G_b`` at the frame origin, twist order ``(omega, v)``."""
    C = skew(com)
    G = np.zeros((6, 6))
    G[:3, :3] = np.asarray(inertia_com, dtype=float) - mass * C @ C
    G[:3, 3:] = mass * C
    G[3:, :3] = -mass * C
    G[3:, 3:] = mass * np.eye(3)
    return G


def check_inertia(mass, inertia, name="body", strict=False, tol=1e-9, indefinite=False):
    """Check that ``mass`` and the CoM ``inertia`` describe a physical rigid body.

    Errors (:class:`ModelError`, naming ``name``): non-finite numbers, negative mass,
    an asymmetric matrix, a negative eigenvalue. A positive semi-definite inertia whose
    principal moments break the triangle inequality ``I1 + I2 >= I3`` (common in CAD exports)
    gives an :class:`InertiaWarning`, or an error when ``strict``.

    ``indefinite=True``: an inertia with a negative eigenvalue is no error; its principal moments
    (ascending) are returned for the caller to decide (:func:`screwdyn.io.urdf.load_urdf`), and
    the triangle inequality is not checked. Returns None otherwise.
    """
    I = np.asarray(inertia, dtype=float)
    if not np.isfinite(mass):
        raise ModelError(f"{name}: mass is not a finite number ({mass!r})")
    if mass < 0:
        raise ModelError(f"{name}: negative mass {mass!r}")
    if I.shape != (3, 3):
        raise ModelError(f"{name}: inertia must be 3x3, got shape {I.shape}")
    if not np.all(np.isfinite(I)):
        raise ModelError(f"{name}: inertia has a NaN or inf entry")
    scale = max(1.0, float(np.abs(I).max()))
    if not np.allclose(I, I.T, atol=tol * scale, rtol=0):
        raise ModelError(f"{name}: inertia matrix is not symmetric")
    eig = np.linalg.eigvalsh(0.5 * (I + I.T))
    if eig[0] < -tol * scale:
        if indefinite:
            return eig
        raise ModelError(
            f"{name}: inertia is not positive semi-definite (eigenvalues {np.array2string(eig, precision=4)})"
        )
    if eig[0] + eig[1] < eig[2] - 1e-6 * scale * max(eig[2], 1e-300) - tol * scale:
        msg = (
            f"{name}: principal moments {np.array2string(eig, precision=6)} break the triangle "
            "inequality I1 + I2 >= I3; no rigid body has this inertia"
        )
        if strict:
            raise ModelError(msg)
        warnings.warn(msg, InertiaWarning, stacklevel=3)


def clamp_principal_moments(inertia) -> np.ndarray:
    """The positive semi-definite matrix nearest to the symmetric ``inertia`` (in the Frobenius
    norm): its negative principal moments set to zero, its principal axes kept."""
    I = np.asarray(inertia, dtype=float)
    w, V = np.linalg.eigh(0.5 * (I + I.T))
    return (V * np.maximum(w, 0.0)) @ V.T


@dataclass(frozen=True)
class RigidBody:
    """A rigid body: ``mass``, centre of mass ``com`` and ``inertia`` about the CoM, in one frame.

    >>> b = box(2.0, 0.2, 0.1, 0.1) + point_mass(1.0, [0.3, 0.0, 0.0])
    >>> b.mass, b.com.round(3)
    (3.0, array([0.1, 0. , 0. ]))
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", np.array(self.com, dtype=float).reshape(3))
        object.__setattr__(self, "inertia", np.array(self.inertia, dtype=float).reshape(3, 3))

    def validate(self, name="body", strict=False) -> "RigidBody":
        check_inertia(self.mass, self.inertia, name, strict)
        if not np.all(np.isfinite(self.com)):
            raise ModelError(f"{name}: centre of mass has a NaN or inf entry")
        return self

    def inertia_about(self, point) -> np.ndarray:
        """Inertia about ``point`` (written in this frame), axes parallel to the frame (Steiner)."""
        return steiner(self.inertia, self.mass, self.com - np.asarray(point, dtype=float))

    def transformed(self, T_a_b) -> "RigidBody":
        """The same body written in frame ``{a}``, given the pose ``T_a_b`` of this frame ``{b}``."""
        T = np.asarray(T_a_b, dtype=float)
        R, p = T[:3, :3], T[:3, 3]
        return RigidBody(self.mass, R @ self.com + p, rotate_inertia(self.inertia, R))

    def spatial_inertia(self, T_b_f=None) -> np.ndarray:
        """The spatial inertia ``G_f`` at frame ``{f}`` (the body's own frame if ``T_b_f`` is None),
        given the pose ``T_b_f`` of ``{f}`` in the body's frame: ``Ad(T_b_f)^T G_b Ad(T_b_f)``."""
        G = spatial_inertia(self.mass, self.com, self.inertia)
        if T_b_f is None:
            return G
        A = Ad(T_b_f)
        return A.T @ G @ A

    def principal_axes(self):
        """``(moments, R)``: principal moments ascending and the rotation whose columns are the axes."""
        w, V = np.linalg.eigh(self.inertia)
        if np.linalg.det(V) < 0:
            V[:, 2] = -V[:, 2]
        return w, V

    def __add__(self, other: "RigidBody") -> "RigidBody":
        return compound([self, other])

    @classmethod
    def from_spatial(cls, G) -> "RigidBody":
        """Recover ``(m, c, I_c)`` from a ``6 x 6`` spatial inertia at a frame."""
        G = np.asarray(G, dtype=float)
        m = G[3, 3]
        if m <= 0:
            return cls(0.0, np.zeros(3), G[:3, :3])
        C = G[:3, 3:] / m
        c = np.array([C[2, 1], C[0, 2], C[1, 0]])
        return cls(m, c, G[:3, :3] + m * skew(c) @ skew(c))


def compound(bodies) -> RigidBody:
    """The compound of rigid bodies written in one common frame: total mass, mass-weighted CoM,
    and the sum of the inertias moved to the common CoM by Steiner's theorem (docs/theory.md §3.3, eq. (3.11))."""
    bodies = list(bodies)
    m = sum(b.mass for b in bodies)
    if m <= 0:
        return RigidBody(0.0, np.zeros(3), sum((b.inertia for b in bodies), np.zeros((3, 3))))
    c = sum(b.mass * b.com for b in bodies) / m
    I = sum(b.inertia_about(c) for b in bodies)
    return RigidBody(m, c, I)


def _placed(mass, diag, com, R):
    I = np.diag(np.asarray(diag, dtype=float))
    if R is not None:
        I = rotate_inertia(I, R)
    return RigidBody(mass, np.zeros(3) if com is None else com, I)


def box(mass, lx, ly, lz, com=None, R=None) -> RigidBody:
    """Solid box with sides ``lx, ly, lz`` along x, y, z: ``Ixx = m (ly^2 + lz^2) / 12`` etc.
    (Lynch & Park, sect. 8.2.1)."""
    return _placed(mass, [mass * (ly**2 + lz**2) / 12, mass * (lx**2 + lz**2) / 12, mass * (lx**2 + ly**2) / 12], com, R)


def cylinder(mass, radius, length, com=None, R=None) -> RigidBody:
    """Solid cylinder along z: ``Ixx = Iyy = m (3 r^2 + h^2) / 12``, ``Izz = m r^2 / 2``
    (Lynch & Park, sect. 8.2.1)."""
    t = mass * (3 * radius**2 + length**2) / 12
    return _placed(mass, [t, t, mass * radius**2 / 2], com, R)


def hollow_cylinder(mass, outer_radius, inner_radius, length, com=None, R=None) -> RigidBody:
    """Hollow cylinder (tube) along z, radii ``a > b``: ``Izz = m (a^2 + b^2) / 2``,
    ``Ixx = Iyy = m (3 (a^2 + b^2) + h^2) / 12``: the solid :func:`cylinder` of radius ``a`` less the
    one of radius ``b``, at equal density."""
    if inner_radius > outer_radius:
        raise ModelError("hollow_cylinder: inner_radius is larger than outer_radius")
    s = outer_radius**2 + inner_radius**2
    t = mass * (3 * s + length**2) / 12
    return _placed(mass, [t, t, mass * s / 2], com, R)


def sphere(mass, radius, com=None) -> RigidBody:
    """Solid sphere: ``I = 2/5 m r^2`` about every axis."""
    i = 0.4 * mass * radius**2
    return _placed(mass, [i, i, i], com, None)


def ellipsoid(mass, a, b, c, com=None, R=None) -> RigidBody:
    """Solid ellipsoid with semi-axes ``a, b, c``: ``Ixx = m (b^2 + c^2) / 5`` etc. (Lynch & Park, sect. 8.2.1)."""
    return _placed(mass, [mass * (b**2 + c**2) / 5, mass * (a**2 + c**2) / 5, mass * (a**2 + b**2) / 5], com, R)


def rod(mass, length, com=None, R=None) -> RigidBody:
    """Thin rod along z about its centre: ``Ixx = Iyy = m L^2 / 12``, ``Izz = 0``."""
    i = mass * length**2 / 12
    return _placed(mass, [i, i, 0.0], com, R)


def point_mass(mass, position=(0.0, 0.0, 0.0)) -> RigidBody:
    """A point mass at ``position``: zero inertia about its own centre."""
    return RigidBody(mass, position, np.zeros((3, 3)))

