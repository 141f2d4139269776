"""Identification of the dynamic parameters of a robot from measured motion and torques.

Inverse dynamics is linear in the parameters (docs/theory.md §12.2, eq. (12.5))::

    tau = Y(q, qd, qdd) pi

``pi`` holds 10 parameters per body, ``(m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz,
I_zz)`` with the inertia about the body frame's origin, body by body, then optional per-joint
armature, viscous and Coulomb friction parameters (:mod:`screwdyn.model_params`).

Workflow::

    base = base_parameters(model, viscous=True, coulomb=True)   # identifiable combinations
    traj = excitation_trajectory(model, base=base)               # Fourier series, optimised
    q, qd, qdd = traj(t)                                         # run it on the robot, record tau
    est = identify(model, q, None, None, tau, t=t, base=base)   # qd, qdd by Savitzky-Golay
    est.beta, est.std                                            # base parameters, std. deviations
    phys = est.physical()                                        # a physically consistent pi

One module per step, all names re-exported here:

* :mod:`.torque_regressor`: :func:`regressor`, the matrix ``Y``;
* :mod:`.base`: :func:`base_parameters`, :func:`base_regressor`, :class:`BaseParameters`
  (``beta = K pi``, ``tau = Y_b beta``);
* :mod:`.excitation`: :func:`excitation_trajectory`, :class:`FourierTrajectory`;
* :mod:`.derivatives`: :func:`estimate_derivatives` (Savitzky-Golay);
* :mod:`.least_squares`: :func:`identify`, :class:`Identification`;
* :mod:`.physical`: :class:`PhysicalEstimate` and the barrier method behind
  :meth:`Identification.physical`;
* :mod:`.csv_io`: :func:`read_csv`, :func:`write_csv`, the format the ``screwdyn identify``
  command reads;
* :mod:`.logs`: :func:`read_logs`, Parquet and CSV log files as Dask arrays, one run per file;
* :mod:`.chunked`: :func:`identify` on Dask arrays, chunk by chunk (``pip install screwdyn[dask]``).

:func:`~screwdyn.plot.plot_torques` (measured against fitted torques) and the parameter
helpers of :mod:`screwdyn.model_params` are re-exported too.
"""
from ..model_params import (
    PARAMETER_NAMES, PINOCCHIO_ORDER, inertial_parameters, parameter_names, physical_consistency, pseudo_inertia,
    with_inertial_parameters,
)
from ..plot import plot_torques
from .base import BaseParameters, base_parameters, base_regressor
from .csv_io import CSV_FORMAT, read_csv, write_csv  # noqa: F401 (CSV_FORMAT: public, not in __all__, as before)
from .derivatives import estimate_derivatives
from .excitation import FourierTrajectory, excitation_trajectory
from .least_squares import Identification, identify
from .logs import read_logs
from .physical import PhysicalEstimate
from .torque_regressor import regressor

__all__ = [
    "regressor", "base_parameters", "base_regressor", "BaseParameters", "FourierTrajectory",
    "excitation_trajectory", "estimate_derivatives", "identify", "Identification", "PhysicalEstimate",
    "inertial_parameters", "with_inertial_parameters", "parameter_names", "physical_consistency",
    "pseudo_inertia", "read_csv", "write_csv", "read_logs", "plot_torques", "PARAMETER_NAMES", "PINOCCHIO_ORDER",
]
