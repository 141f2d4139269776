"""A model's dynamic parameters as one vector ``pi``, the order of the regressor's columns.

Per body ``i`` (10 entries, all in body ``i``'s frame, which sits on its joint axis)::

    pi_i = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz)

with ``I = I_c + m [c]^T [c]`` the rotational inertia about the body frame's **origin**
(Steiner), not about the centre of mass. The vector is ``pi = (pi_0, ..., pi_{n-1})`` followed,
when asked for, by ``n`` entries per joint for each of, in this order,

* ``armature``: reflected rotor inertia ``n_r^2 I_m`` (``tau_i += armature_i qdd_i``),
* ``viscous``: viscous friction ``b_i`` (``tau_i += b_i qd_i``, ``model.damping``),
* ``coulomb``: Coulomb friction ``f_i`` (``tau_i += f_i sign(qd_i)``, ``model.friction``).

Pinocchio's ``Inertia.toDynamicParameters`` and ``computeJointTorqueRegressor`` use the same
quantities in the order ``(m, mc, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)``: entries 6 and 7 of each
body's block are swapped (:data:`PINOCCHIO_ORDER`).

A body is physically consistent when its pseudo-inertia (Wensing, Kim and Slotine, 2017)::

    J_i = [[Sigma, h], [h^T, m]],   Sigma = 0.5 tr(I) 1_3 - I  (= the second moment  int r r^T dm)

is positive semi-definite; that implies ``m >= 0`` and the triangle inequalities of the
principal moments about the centre of mass.
"""
from __future__ import annotations

import numpy as np

from .errors import InputError, ModelError

__all__ = [
    "inertial_parameters", "with_inertial_parameters", "parameter_names", "pseudo_inertia",
    "parameters_from_pseudo_inertia", "physical_consistency", "PARAMETER_NAMES", "PINOCCHIO_ORDER",
]

#: The ten per-body parameter names, in order.
PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")
#: ``pi_pinocchio = pi[PINOCCHIO_ORDER]`` (per body): Pinocchio writes (xx, xy, yy, xz, yz, zz).
PINOCCHIO_ORDER = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9])
#: Per-joint extra parameter groups, in the order their columns follow the inertial ones.
EXTRAS = ("armature", "viscous", "coulomb")
_EXTRA_PREFIX = {"armature": "Ia", "viscous": "fv", "coulomb": "fc"}
_TRIU = ([0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2])


def _flags(armature, viscous, coulomb):
    return [name for name, on in zip(EXTRAS, (armature, viscous, coulomb)) if on]


def parameter_names(model, *, armature=False, viscous=False, coulomb=False) -> list:
    """Names of the entries of ``pi``: ``"m_<link>"``, ``"mcx_<link>"``, ..., ``"Izz_<link>"``,
    then ``"Ia_<joint>"``, ``"fv_<joint>"``, ``"fc_<joint>"`` for the extras asked for."""
    names = [f"{p}_{link}" for link in model.link_names for p in PARAMETER_NAMES]
    for group in _flags(armature, viscous, coulomb):
        names += [f"{_EXTRA_PREFIX[group]}_{j}" for j in model.joint_names]
    return names


def inertial_parameters(model, *, armature=False, viscous=False, coulomb=False) -> np.ndarray:
    """The model's parameter vector ``pi`` (see the module docstring for the order).

    >>> import numpy as np, screwdyn
    >>> from screwdyn.inertia import point_mass
    >>> b = screwdyn.ModelBuilder("pendulum")
    >>> _ = b.add_body("link", "base", "joint", "revolute", axis=(0, 1, 0), inertial=point_mass(2.0, [0, 0, -0.5]))
    >>> inertial_parameters(b.build())
    array([ 2. ,  0. ,  0. , -1. ,  0.5,  0. ,  0. ,  0.5,  0. ,  0. ])
    """
    n = model.nbodies
    pi = np.empty((n, 10))
    pi[:, 0] = model.mass
    pi[:, 1:4] = model.mass[:, None] * model.com
    pi[:, 4:10] = model.inertia_origin[:, _TRIU[0], _TRIU[1]]
    parts = [pi.ravel()]
    extra = {"armature": model.armature, "viscous": model.damping, "coulomb": model.friction}
    parts += [np.asarray(extra[g], dtype=float) for g in _flags(armature, viscous, coulomb)]
    return np.concatenate(parts)


def _split(model, pi, armature, viscous, coulomb):
    groups = _flags(armature, viscous, coulomb)
    n, nv = model.nbodies, model.nv
    pi = np.asarray(pi, dtype=float)
    size = 10 * n + len(groups) * nv
    if pi.shape != (size,):
        what = " + ".join(["10 nbodies"] + [f"nv ({g})" for g in groups])
        raise InputError(f"pi must have shape ({size},) = {what} for this model, got {pi.shape}")
    if not np.all(np.isfinite(pi)):
        raise InputError("pi contains NaN or inf")
    body = pi[:10 * n].reshape(n, 10)
    extra = {g: pi[10 * n + k * nv: 10 * n + (k + 1) * nv] for k, g in enumerate(groups)}
    return body, extra


def with_inertial_parameters(model, pi, *, armature=False, viscous=False, coulomb=False):
    """A copy of ``model`` whose parameters are ``pi`` (the layout of :func:`inertial_parameters`
    with the same flags). The centre of mass is ``h / m``; a body with ``m = 0`` must have
    ``h = 0``. The armature is stored as ``rotor_inertia = armature / gear_ratio^2``.
    No physical-consistency check is made (identified parameters need not be consistent):
    see :func:`physical_consistency`.
    """
    body, extra = _split(model, pi, armature, viscous, coulomb)
    m = body[:, 0].copy()
    h = body[:, 1:4]
    massless = m == 0
    if np.any(massless & np.any(h != 0, axis=1)):
        k = int(np.flatnonzero(massless & np.any(h != 0, axis=1))[0])
        raise ModelError(f"pi: body {model.link_names[k]!r} has zero mass but a nonzero first moment m c")
    com = np.where(massless[:, None], 0.0, h / np.where(massless, 1.0, m)[:, None])
    Io = np.empty((model.nbodies, 3, 3))
    Io[:, _TRIU[0], _TRIU[1]] = body[:, 4:10]
    Io[:, _TRIU[1], _TRIU[0]] = body[:, 4:10]
    cc = np.einsum("ni,ni->n", com, com)
    Ic = Io - m[:, None, None] * (cc[:, None, None] * np.eye(3) - np.einsum("ni,nj->nij", com, com))
    changes = dict(mass=m, com=com, inertia_com=Ic)
    if "armature" in extra:
        if np.any(model.gear_ratio == 0):
            raise ModelError("with_inertial_parameters: a joint with gear_ratio 0 cannot take an armature")
        changes["rotor_inertia"] = extra["armature"] / model.gear_ratio**2
    if "viscous" in extra:
        changes["damping"] = extra["viscous"].copy()
    if "coulomb" in extra:
        changes["friction"] = extra["coulomb"].copy()
    return model.replace(**changes)


def pseudo_inertia(pi_body) -> np.ndarray:
    """Pseudo-inertia matrices ``J (..., 4, 4)`` from body parameter blocks ``(..., 10)``."""
    p = np.asarray(pi_body, dtype=float)
    I = np.empty(p.shape[:-1] + (3, 3))
    I[..., _TRIU[0], _TRIU[1]] = p[..., 4:10]
    I[..., _TRIU[1], _TRIU[0]] = p[..., 4:10]
    J = np.empty(p.shape[:-1] + (4, 4))
    J[..., :3, :3] = 0.5 * np.trace(I, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - I
    J[..., :3, 3] = p[..., 1:4]
    J[..., 3, :3] = p[..., 1:4]
    J[..., 3, 3] = p[..., 0]
    return J


def parameters_from_pseudo_inertia(J) -> np.ndarray:
    """The inverse of :func:`pseudo_inertia`: ``m = J_44``, ``h = J_{1:3,4}``, ``I = tr(Sigma) 1 - Sigma``."""
    J = np.asarray(J, dtype=float)
    Sigma = J[..., :3, :3]
    I = np.trace(Sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - Sigma
    p = np.empty(J.shape[:-2] + (10,))
    p[..., 0] = J[..., 3, 3]
    p[..., 1:4] = J[..., :3, 3]
    p[..., 4:10] = I[..., _TRIU[0], _TRIU[1]]
    return p


def physical_consistency(model, pi, *, armature=False, viscous=False, coulomb=False, tol=1e-9):
    """Check ``pi`` for physical consistency.

    Returns ``(ok, margins)``: ``margins`` holds, per body, the smallest eigenvalue of its
    pseudo-inertia ``J_i`` (>= 0 for a physical body), then the extra parameters themselves
    (armature and friction must be >= 0); ``ok`` is ``margins >= -tol * scale`` everywhere,
    ``scale`` the largest |entry| of the body's ``J_i`` (of the extra group).
    """
    body, extra = _split(model, pi, armature, viscous, coulomb)
    J = pseudo_inertia(body)
    eig = np.linalg.eigvalsh(J)[:, 0]
    scale = np.maximum(np.abs(J).max(axis=(1, 2)), 1e-300)
    ok = eig >= -tol * scale
    margins = [eig]
    for g in extra.values():
        margins.append(g)
        ok = np.concatenate([ok, g >= -tol * max(np.abs(g).max(initial=0.0), 1e-300)])
    return bool(np.all(ok)), np.concatenate(margins)
