"""Lie algebra on SE(3): the spatial-vector toolkit of docs/theory.md §1-§2.

Conventions (used everywhere in screwdyn):

* A twist is ``V = (omega, v)``: angular part first, then linear (docs/theory.md §1.2, eq. (1.3)).
* A wrench is ``F = (n, f)``: moment first, then force (eq. (1.4)).
* A homogeneous transform ``T = (R, p)`` is a ``(4, 4)`` array; ``T_a_b`` is the pose of
  frame ``{b}`` seen from ``{a}`` (``T_{a,b}`` in docs/theory.md §1.1).
* ``[Ad_T] = [[R, 0], [[p] R, R]]`` maps a twist written in ``{b}`` to ``{a}``.
* ``[ad_V] = [[[omega], 0], [[v], [omega]]]`` is the Lie bracket ``ad_V(W) = [V, W]``;
  ``[ad_V]^T`` acts on wrenches (the co-adjoint action, docs/theory.md §2.6, eq. (2.16)).

Every function takes plain NumPy arrays and returns new arrays; they are the readable
reference against which the compiled kernels in :mod:`screwdyn.algorithms` are tested.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "skew",
    "unskew",
    "rotation_from_rpy",
    "rpy_from_rotation",
    "transform",
    "inverse_transform",
    "Ad",
    "ad",
    "ad_dual",
    "exp_so3",
    "log_so3",
    "exp_se3",
    "log_se3",
    "twist_matrix",
]

_EPS = 1e-12


def skew(a) -> np.ndarray:
    """The skew-symmetric matrix ``[a]`` with ``[a] b = a x b``.

    >>> skew([1.0, 2.0, 3.0])
    array([[ 0., -3.,  2.],
           [ 3.,  0., -1.],
           [-2.,  1.,  0.]])
    """
    a = np.asarray(a, dtype=float)
    x, y, z = a
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def unskew(S) -> np.ndarray:
    """The vector ``a`` of a skew-symmetric matrix ``S = [a]`` (its antisymmetric part)."""
    S = np.asarray(S, dtype=float)
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def rotation_from_rpy(rpy) -> np.ndarray:
    """Rotation of URDF roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, y, z)."""
    r, p, y = np.asarray(rpy, dtype=float)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def rpy_from_rotation(R) -> np.ndarray:
    """Roll, pitch, yaw of a rotation, inverse of :func:`rotation_from_rpy` (pitch in [-pi/2, pi/2])."""
    R = np.asarray(R, dtype=float)
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if abs(np.cos(pitch)) < 1e-10:  # gimbal lock: put everything in yaw
        return np.array([0.0, pitch, np.arctan2(-R[0, 1], R[1, 1])])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def transform(R=None, p=None) -> np.ndarray:
    """The homogeneous transform ``T = (R, p)`` as a ``(4, 4)`` array."""
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def inverse_transform(T) -> np.ndarray:
    """``T^-1 = (R^T, -R^T p)``, exact (no general matrix inverse)."""
    T = np.asarray(T, dtype=float)
    R, p = T[:3, :3], T[:3, 3]
    return transform(R.T, -R.T @ p)


def Ad(T) -> np.ndarray:
    """The ``6 x 6`` adjoint ``[Ad_T] = [[R, 0], [[p] R, R]]`` of ``T = (R, p)`` (docs/theory.md §2.3, eq. (2.5)).

    ``V_a = Ad(T_a_b) @ V_b`` re-expresses a twist ``(omega, v)`` from ``{b}`` in ``{a}``;
    ``F_b = Ad(T_a_b).T @ F_a`` does the same for a wrench ``(n, f)`` the other way.
    """
    T = np.asarray(T, dtype=float)
    R, p = T[:3, :3], T[:3, 3]
    A = np.zeros((6, 6))
    A[:3, :3] = R
    A[3:, :3] = skew(p) @ R
    A[3:, 3:] = R
    return A


def ad(V) -> np.ndarray:
    """The ``6 x 6`` Lie bracket matrix ``[ad_V] = [[[omega], 0], [[v], [omega]]]`` of a twist
    (docs/theory.md §2.5, eq. (2.12))."""
    V = np.asarray(V, dtype=float)
    A = np.zeros((6, 6))
    W = skew(V[:3])
    A[:3, :3] = W
    A[3:, :3] = skew(V[3:])
    A[3:, 3:] = W
    return A


def ad_dual(V, F) -> np.ndarray:
    """The wrench action ``[ad_V]^T F = (-[omega] n - [v] f, -[omega] f)`` (docs/theory.md §2.6, eq. (2.16))."""
    V = np.asarray(V, dtype=float)
    F = np.asarray(F, dtype=float)
    w, v, n, f = V[:3], V[3:], F[:3], F[3:]
    return np.concatenate([-np.cross(w, n) - np.cross(v, f), -np.cross(w, f)])


def exp_so3(omega_theta) -> np.ndarray:
    """Rodrigues' formula: ``exp([omega] theta)`` for the exponential coordinates ``omega theta``."""
    w = np.asarray(omega_theta, dtype=float)
    theta = np.linalg.norm(w)
    W = skew(w)
    if theta < 1e-8:  # second-order Taylor expansion
        return np.eye(3) + W + 0.5 * W @ W
    return np.eye(3) + np.sin(theta) / theta * W + (1.0 - np.cos(theta)) / theta**2 * W @ W


def log_so3(R) -> np.ndarray:
    """Exponential coordinates ``omega theta`` of a rotation, with ``theta`` in ``[0, pi]``."""
    R = np.asarray(R, dtype=float)
    cos_theta = np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0)
    theta = np.arccos(cos_theta)
    if theta < 1e-8:
        return unskew(R - R.T) * 0.5 * (1.0 + theta**2 / 6.0)
    if np.pi - theta < 1e-6:  # near pi: axis from the symmetric part, sign from the antisymmetric
        B = 0.5 * (R + np.eye(3))
        k = int(np.argmax(np.diag(B)))
        axis = B[:, k] / np.sqrt(max(B[k, k], _EPS))
        s = unskew(R - R.T)
        if np.dot(s, axis) < 0:
            axis = -axis
        axis /= np.linalg.norm(axis)
        return axis * theta
    return unskew(R - R.T) * theta / (2.0 * np.sin(theta))   # R - R^T = 2 sin(theta) [omega]


def twist_matrix(V) -> np.ndarray:
    """The ``4 x 4`` matrix ``[V] = [[[omega], v], [0, 0]]`` in se(3)."""
    V = np.asarray(V, dtype=float)
    M = np.zeros((4, 4))
    M[:3, :3] = skew(V[:3])
    M[:3, 3] = V[3:]
    return M


def _series_coefficients(theta):
    """``(a, b, c)`` with ``a = sin t / t``, ``b = (1 - cos t) / t^2``, ``c = (t - sin t) / t^3``;
    Taylor series below ``t = 1e-3`` so that nothing cancels."""
    t2 = theta * theta
    if theta < 1e-3:
        return 1 - t2 / 6 + t2 * t2 / 120, 0.5 - t2 / 24 + t2 * t2 / 720, 1 / 6 - t2 / 120 + t2 * t2 / 5040
    return np.sin(theta) / theta, (1 - np.cos(theta)) / t2, (theta - np.sin(theta)) / (t2 * theta)


def exp_se3(V_theta) -> np.ndarray:
    """``exp([V] theta)`` for the exponential coordinates ``V theta = (omega theta, v theta)``.

    With ``[w] = [omega theta]`` and ``t = |omega theta|`` (Modern Robotics eq. 3.88)::

        R = I + (sin t / t) [w] + ((1 - cos t) / t^2) [w]^2
        p = (I + ((1 - cos t) / t^2) [w] + ((t - sin t) / t^3) [w]^2) v
    """
    V = np.asarray(V_theta, dtype=float)
    W = skew(V[:3])
    a, b, c = _series_coefficients(np.linalg.norm(V[:3]))
    W2 = W @ W
    T = np.eye(4)
    T[:3, :3] = np.eye(3) + a * W + b * W2
    T[:3, 3] = (np.eye(3) + b * W + c * W2) @ V[3:]
    return T


def log_se3(T) -> np.ndarray:
    """Exponential coordinates ``V theta`` (``(omega, v)`` order) with ``exp_se3(log_se3(T)) = T``.

    ``v = (I - [w]/2 + ((1 - (t/2) cot(t/2)) / t^2) [w]^2) p`` with ``[w] = [omega theta]``.
    """
    T = np.asarray(T, dtype=float)
    w = log_so3(T[:3, :3])
    t = np.linalg.norm(w)
    if t < 1e-3:
        k = 1 / 12 + t * t / 720
    else:
        k = (1 - 0.5 * t / np.tan(0.5 * t)) / (t * t)
    W = skew(w)
    return np.concatenate([w, (np.eye(3) - 0.5 * W + k * W @ W) @ T[:3, 3]])
