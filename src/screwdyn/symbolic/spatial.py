"""The spatial-vector toolkit of docs/theory.md §1-§3, generic over the element type.

The same operators as :mod:`screwdyn.spatial`, written once against a backend ``xp``
(:data:`~screwdyn.symbolic.backend.SYMPY` or :data:`~screwdyn.symbolic.backend.NUMPY`), so that
the reference algorithms of this package run on SymPy expressions and on floats alike.

Conventions (as everywhere in screwdyn): twists ``V = (omega, v)``, wrenches ``F = (n, f)``;
``T_a_b = (R, p)`` is the pose of ``{b}`` in ``{a}``;
``[Ad_T] = [[R, 0], [[p] R, R]]``; ``[ad_V] = [[[omega], 0], [[v], [omega]]]``.

The joint interface (:func:`joint_transform`, :func:`motion_subspace`; docs/theory.md §4.2) is the
only place that branches on the joint type: body ``i``'s frame lies on its joint axis ``a``, so
``S_i = (a, 0)`` (revolute) or ``(0, a)`` (prismatic), and
``T_{p(i),i}(q_i) = T_{p(i),i}(0) exp([S_i] q_i)``.
"""
from __future__ import annotations

import sympy as sp

from ..algorithms.layout import PRISMATIC
from .backend import SYMPY

__all__ = [
    "skew",
    "cross",
    "transform",
    "inverse_transform",
    "Ad",
    "ad",
    "rotation_about",
    "joint_transform",
    "motion_subspace",
    "spatial_inertia",
    "rot_x",
    "rot_y",
    "rot_z",
    "rotation_from_rpy",
    "translation",
]


def skew(xp, a):
    """``[a]``, the 3x3 skew-symmetric matrix with ``[a] b = a x b``."""
    return xp.matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def cross(xp, a, b):
    """``a x b`` for 3-vectors."""
    return xp.vector([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def transform(xp, R, p):
    """The 4x4 homogeneous transform ``T = (R, p)``."""
    return xp.block([[R, xp.matrix([[p[0]], [p[1]], [p[2]]])], [xp.matrix([[0, 0, 0]]), xp.matrix([[1]])]])


def inverse_transform(xp, T):
    """``T^-1 = (R^T, -R^T p)``."""
    R, p = T[:3, :3], T[:3, 3]
    return transform(xp, R.T, -(R.T @ p))


def Ad(xp, T):
    """``[Ad_T] = [[R, 0], [[p] R, R]]`` (docs/theory.md eq. (2.5)): ``V_a = [Ad_{T_a_b}] V_b``."""
    R, p = T[:3, :3], T[:3, 3]
    Z = xp.matrix([[0, 0, 0]] * 3)
    return xp.block([[R, Z], [skew(xp, p) @ R, R]])


def ad(xp, V):
    """``[ad_V] = [[[omega], 0], [[v], [omega]]]`` (docs/theory.md eq. (2.12)); ``[ad_V]^T`` acts on
    wrenches."""
    W = skew(xp, [V[0], V[1], V[2]])
    Z = xp.matrix([[0, 0, 0]] * 3)
    return xp.block([[W, Z], [skew(xp, [V[3], V[4], V[5]]), W]])


def rotation_about(xp, axis, angle):
    """Rodrigues: ``Rot(a, q) = I + sin q [a] + (1 - cos q) [a]^2`` for a unit axis ``a``."""
    A = skew(xp, axis)
    return xp.eye(3) + xp.sin(angle) * A + (1 - xp.cos(angle)) * (A @ A)


def joint_transform(xp, joint_type, axis, q):
    """``exp([S] q)``: a rotation by ``q`` about ``axis`` through the origin, or a translation ``axis q``."""
    if joint_type == PRISMATIC:
        return transform(xp, xp.eye(3), [axis[0] * q, axis[1] * q, axis[2] * q])
    return transform(xp, rotation_about(xp, axis, q), [0, 0, 0])


def motion_subspace(xp, joint_type, axis):
    """The screw axis ``S = (a, 0)`` (revolute) or ``(0, a)`` (prismatic) in the body frame, ``(omega, v)``."""
    a = xp.vector([axis[0], axis[1], axis[2]])
    zero = xp.zeros(3)
    return xp.concat(zero, a) if joint_type == PRISMATIC else xp.concat(a, zero)


def spatial_inertia(xp, mass, com, inertia_com):
    """The 6x6 spatial inertia at the body frame (docs/theory.md eq. (3.6); the generalised
    Steiner theorem (3.8)), ``(omega, v)`` order::

        G = [[I_c - m [c][c],  m [c]],
             [   -m [c],       m I_3]]
    """
    C = skew(xp, com)
    return xp.block([[inertia_com - mass * (C @ C), mass * C], [-mass * C, mass * xp.eye(3)]])


# ---------------------------------------------------------------------- SymPy conveniences
def rot_x(angle) -> sp.Matrix:
    """The SymPy rotation matrix about x by ``angle``."""
    return rotation_about(SYMPY, (1, 0, 0), sp.sympify(angle))


def rot_y(angle) -> sp.Matrix:
    """The SymPy rotation matrix about y by ``angle``."""
    return rotation_about(SYMPY, (0, 1, 0), sp.sympify(angle))


def rot_z(angle) -> sp.Matrix:
    """The SymPy rotation matrix about z by ``angle``."""
    return rotation_about(SYMPY, (0, 0, 1), sp.sympify(angle))


def rotation_from_rpy(rpy) -> sp.Matrix:
    """URDF roll-pitch-yaw as a SymPy matrix: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    return rot_z(y) @ rot_y(p) @ rot_x(r)


def translation(xyz=(0, 0, 0), R=None) -> sp.Matrix:
    """The SymPy 4x4 transform ``(R, xyz)``; ``R`` defaults to the identity."""
    return transform(SYMPY, sp.eye(3) if R is None else sp.Matrix(R), [sp.sympify(v) for v in xyz])
