"""Bundled robots: URDF files shipped with screwdyn, each citing the source of every parameter.

>>> from screwdyn import models
>>> models.names()
('planar_2r', 'planar_rp', 'pr', 'cartesian_ppp', 'pendulum', 'puma560', 'ur5', 'panda')
>>> models.load("planar_2r")
Model('planar_2r', n=2, joints=RR, mass=2 kg)
>>> models.load("pendulum").armature       # I_m n_r^2 of note 004's motor
array([0.05])

=================  ====  ==============================================================
name               DoF   what
=================  ====  ==============================================================
``planar_2r``      2     textbook point-mass 2R arm of note 001 / Modern Robotics 8.1.1
``planar_rp``      2     planar RP arm with point masses (note 001)
``pr``             2     the PR robot of note 004, on a horizontal plane
``cartesian_ppp``  3     Cartesian PPP robot (note 001)
``pendulum``       1     note 004's actuated pendulum: gear, rotor inertia, viscous friction
``puma560``        6     PUMA 560, Armstrong, Khatib & Burdick 1986 / Corke's Toolbox
``ur5``            6     Universal Robots UR5 as in ROS ur_description (example-robot-data)
``panda``          7     Franka Emika Panda, Gaz et al. 2019 identified parameters
=================  ====  ==============================================================

The files are plain URDF (any URDF tool reads them). Gear ratios and rotor inertias, which the
URDF format has no place for, are written in ``<transmission>`` elements (the ROS
``<mechanicalReduction>`` and a ``<screwdyn:rotor_inertia value=...>`` element, as Drake's
``drake:rotor_inertia``); :func:`load` applies them to the model.
"""
from __future__ import annotations

import functools
import warnings
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["names", "load", "path", "home"]

_NAMES = ("planar_2r", "planar_rp", "pr", "cartesian_ppp", "pendulum", "puma560", "ur5", "panda")

# A configuration worth starting a simulation from (same order as model.joint_names).
_HOME = {
    "planar_2r": (0.0, 0.0),                                     # stretched out horizontally
    "planar_rp": (0.0, 0.7),
    "pr": (0.0, 0.0),
    "cartesian_ppp": (0.25, 0.25, 0.2),
    "pendulum": (np.pi / 2,),                                    # horizontal: swings down
    "puma560": (0.0, np.pi / 4, np.pi, 0.0, np.pi / 4, 0.0),     # Corke's nominal pose qn
    "ur5": (0.0, -np.pi / 2, np.pi / 2, 0.0, np.pi / 2, 0.0),
    "panda": (0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4),  # Franka's "ready" pose
}

# Published parameter sets that break the triangle inequality on purpose (see the file).
_QUIET_INERTIA = {"puma560"}


def names() -> tuple:
    """The names of the bundled robots."""
    return _NAMES


def path(name: str) -> Path:
    """The path of the bundled URDF file ``name``."""
    _check(name)
    return Path(str(resources.files(__package__) / "data" / f"{name}.urdf"))


def home(name: str) -> np.ndarray:
    """A configuration of robot ``name`` to start simulations and pictures from."""
    _check(name)
    return np.array(_HOME[name], dtype=float)


@functools.lru_cache(maxsize=None)
def load(name: str):
    """The bundled robot ``name`` as a :class:`~screwdyn.Model` (immutable, so cached).

    Gravity is ``(0, 0, -9.81)``; transmissions in the file set ``gear_ratio`` and
    ``rotor_inertia`` (the reflected inertia ``gear_ratio**2 * rotor_inertia`` enters ``M``).
    """
    from ..io.urdf import load_urdf
    from ..inertia import InertiaWarning

    p = path(name)
    with warnings.catch_warnings():
        if name in _QUIET_INERTIA:
            warnings.simplefilter("ignore", InertiaWarning)
        return load_urdf(p)


def _check(name):
    if name not in _NAMES:
        from ..errors import ModelError
        raise ModelError(f"unknown bundled robot {name!r}; bundled robots are {', '.join(_NAMES)}")


