"""The joint-torque regressor: inverse dynamics as a linear function of the inertial parameters.

::

    tau = Y(q, qd, qdd) pi

``pi`` holds 10 parameters per body, ``(m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz,
I_zz)`` with the inertia about the body frame's origin, body by body, then optional per-joint
armature, viscous and Coulomb friction parameters (:mod:`screwdyn.model_params`), whose columns
of ``Y`` are ``qdd_i``, ``qd_i`` and ``sign(qd_i)``. The compiled kernel is
:mod:`screwdyn.algorithms.regressor`; :func:`regressor` checks the arguments and runs it on one
state or a batch.
"""
from __future__ import annotations

import numpy as np

from .._dask import is_dask
from ..algorithms.regressor import ARMATURE, COULOMB, VISCOUS
from ..dispatch import Kernel, check_model, output
from ..model import Model

__all__ = ["regressor"]


_REGRESSOR = Kernel("regressor", "regressor")


def _extras(armature, viscous, coulomb) -> int:
    return (ARMATURE if armature else 0) | (VISCOUS if viscous else 0) | (COULOMB if coulomb else 0)


def regressor(model: Model, q, qd, qdd, *, armature=False, viscous=False, coulomb=False, out=None) -> np.ndarray:
    """The joint-torque regressor ``Y`` with ``tau = Y pi`` (:mod:`screwdyn.algorithms.regressor`).

    ``tau`` is ``inverse_dynamics(model, q, qd, qdd)`` (plus ``friction_torques`` when both
    ``viscous`` and ``coulomb`` are on) and ``pi = inertial_parameters(model, armature=...,
    viscous=..., coulomb=...)``. Computed by a Newton-Euler recursion: forward pass for the
    twists and accelerations, then each body's ``6 x 10`` wrench regressor projected on the joints
    of its path to the base.

    Parameters
    ----------
    q, qd, qdd : ``(n,)`` or ``(..., n)``, broadcasting against each other.
    armature, viscous, coulomb : append ``n`` columns each: ``qdd_i``, ``qd_i``, ``sign(qd_i)``.
    out : optional preallocated C-contiguous result.

    Returns ``Y`` ``(..., n, 10 n [+ n per extra])``; the columns are ordered as
    :func:`screwdyn.model_params.parameter_names`.

    >>> import screwdyn
    >>> from screwdyn.inertia import point_mass
    >>> from screwdyn.model_params import inertial_parameters
    >>> b = screwdyn.ModelBuilder("pendulum")                  # gravity (0, 0, -9.81)
    >>> _ = b.add_body("link", "base", "joint", "revolute", axis=(0, 1, 0), inertial=point_mass(2.0, [0, 0, -0.5]))
    >>> model = b.build()
    >>> Y = regressor(model, [0.3], [1.0], [2.0])
    >>> bool((Y[0, [0, 2, 4, 5, 6, 8, 9]] == 0).all())   # only m c_x, m c_z (gravity) and I_yy act
    True
    >>> Y[0, [1, 3, 7]].round(3)      # -g cos q, -g sin q, qdd
    array([-9.372, -2.899,  2.   ])
    >>> (Y @ inertial_parameters(model)).round(6), screwdyn.inverse_dynamics(model, [0.3], [1.0], [2.0]).round(6)
    (array([3.899053]), array([3.899053]))
    """
    check_model(model)
    n, nb = model.n, model.nbodies
    extra = n * (bool(armature) + bool(viscous) + bool(coulomb))
    params = (_extras(armature, viscous, coulomb),)
    if nb == n:
        return _REGRESSOR.call(model, q, qd, qdd, params=params, shape=(n, 10 * n + extra), out=out)
    # a joint of several degrees of freedom: the kernel's columns are per row (:mod:`..algorithms.layout`),
    # the bodies' those of their joints' last rows
    Y = _REGRESSOR.call(model, q, qd, qdd, params=params, shape=(n, 10 * n + extra))
    cols = np.concatenate([(10 * model._body_row[:, None] + np.arange(10)).ravel(), 10 * n + np.arange(extra)])
    if is_dask(Y):
        return Y[..., cols]
    return np.take(Y, cols, axis=-1, out=output(out, Y.shape[:-1] + (10 * nb + extra,)))
