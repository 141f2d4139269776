"""Bundled robots: URDF files shipped with screwdyn, each citing the source of every parameter.

>>> from screwdyn import models
>>> models.names()
('planar_2r', 'planar_rp', 'pr', 'cartesian_ppp', 'pendulum', 'puma560', 'ur5', 'panda')
>>> models.load("planar_2r")
Model('planar_2r', n=2, joints=RR, mass=2 kg)
>>> models.load("pendulum").armature       # n_r^2 I_m of its motor (docs/theory.md eq. (4.5))
array([0.05])

=================  ====  ==============================================================
name               DoF   what
=================  ====  ==============================================================
``planar_2r``      2     point-mass 2R arm of docs/theory.md §7.5 / Modern Robotics 8.1.1
``planar_rp``      2     planar RP arm with point masses, in a vertical plane
``pr``             2     the PR robot of docs/theory.md §7.5, on a horizontal plane
``cartesian_ppp``  3     Cartesian PPP robot
``pendulum``       1     actuated pendulum of docs/theory.md §7.5: gear, rotor, friction
``puma560``        6     PUMA 560, Armstrong, Khatib & Burdick 1986 / Corke's Toolbox
``ur5``            6     Universal Robots UR5 as in ROS ur_description (example-robot-data)
``panda``          7     Franka Emika Panda, Gaz et al. 2019 identified parameters
=================  ====  ==============================================================

The files are plain URDF (any URDF tool reads them). Gear ratios and rotor inertias, which the
URDF format has no place for, are written in ``<transmission>`` elements (the ROS
``<mechanicalReduction>`` and a ``<screwdyn:rotor_inertia value=...>`` element, as Drake's
``drake:rotor_inertia``); :func:`load` applies them to the model.

Every place that takes a model by name (the ``screwdyn`` commands, :func:`screwdyn.symbolic.derive`,
the benchmark) reads it with :func:`resolve`: a bundled robot name, else a MuJoCo MJCF file, else
a URDF file, else an ``example-robot-data`` robot name (:data:`screwdyn.io.EXAMPLE_ROBOTS`).
:func:`load` takes the same.
"""
from __future__ import annotations

import functools
import os
import re
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["names", "load", "path", "home", "resolve", "ModelSource", "KINDS"]

_NAMES = ("planar_2r", "planar_rp", "pr", "cartesian_ppp", "pendulum", "puma560", "ur5", "panda", "solo12",
          "talos_reduced")

# Legged robots: loaded with a floating base (a free-flyer "root_joint" first in q).
_FLOATING = {"solo12", "talos_reduced"}

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
    # the robots' own SRDF poses (example-robot-data): by joint name, the base's (x, y, z, quaternion)
    "solo12": {"root_joint": (0.0, 0.0, 0.235, 0.0, 0.0, 0.0, 1.0), "FL_HAA": 0.1, "FL_HFE": 0.8, "FL_KFE": -1.6,
               "HL_HAA": 0.1, "HL_HFE": -0.8, "HL_KFE": 1.6, "FR_HAA": -0.1, "FR_HFE": 0.8, "FR_KFE": -1.6,
               "HR_HAA": -0.1, "HR_HFE": -0.8, "HR_KFE": 1.6},                   # "straight_standing"
    "talos_reduced": {"root_joint": (0.0, 0.0, 1.01927, 0.0, 0.0, 0.0, 1.0),     # "half_sitting"
                      "arm_left_1_joint": 0.25847, "arm_left_2_joint": 0.173046, "arm_left_3_joint": -0.0002,
                      "arm_left_4_joint": -0.525366, "arm_left_7_joint": 0.1, "arm_right_1_joint": -0.25847,
                      "arm_right_2_joint": -0.173046, "arm_right_3_joint": 0.0002, "arm_right_4_joint": -0.525366,
                      "arm_right_7_joint": 0.1, "leg_left_3_joint": -0.411354, "leg_left_4_joint": 0.859395,
                      "leg_left_5_joint": -0.448041, "leg_left_6_joint": -0.001708, "leg_right_3_joint": -0.411354,
                      "leg_right_4_joint": 0.859395, "leg_right_5_joint": -0.448041,
                      "leg_right_6_joint": -0.001708, "torso_2_joint": 0.006761},
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
    pose = _HOME[name]
    if not isinstance(pose, dict):
        return np.array(pose, dtype=float)
    from ..configuration import neutral

    model = load(name)
    q = neutral(model)
    for joint, value in pose.items():
        j = model.joint_index(joint)
        q[model.idx_qs[j]:model.idx_qs[j] + model.nqs[j]] = value
    return q


# The kinds of model source, in the order :func:`resolve` tries them.
KINDS = ("bundled", "mjcf", "urdf", "example-robot-data")


@dataclass(frozen=True)
class ModelSource:
    """Where a model spec leads: ``kind`` (one of :data:`KINDS`) and the model file ``path``."""

    spec: str
    kind: str
    path: Path


def resolve(spec, kinds=KINDS) -> ModelSource:
    """The model file that the model spec ``spec`` (a string or path) names, trying ``kinds`` in order:

    ``"bundled"``
        a bundled robot name (:func:`names`), its file :func:`path`;
    ``"mjcf"``
        an existing MuJoCo MJCF file (its root element is ``<mujoco>``), read by
        :func:`screwdyn.load_mjcf`;
    ``"urdf"``
        an existing file;
    ``"example-robot-data"``
        a robot name of :data:`screwdyn.io.EXAMPLE_ROBOTS`, or a path relative to the package's
        ``robots`` directory (:func:`screwdyn.io.urdf.example_robot_data_path`).

    Raises :class:`~screwdyn.errors.ModelError` (``unknown model ...``) saying why each kind did
    not match.

    >>> resolve("pendulum").kind, resolve("pendulum").path.name
    ('bundled', 'pendulum.urdf')
    """
    spec = os.fspath(spec)
    tried = []
    for kind in kinds:
        if kind == "bundled":
            if spec in _NAMES:
                return ModelSource(spec, kind, path(spec))
            tried.append(f"not a bundled robot (bundled robots are {', '.join(_NAMES)})")
        elif kind == "mjcf":
            p = Path(spec)
            root = _root_element(p) if p.is_file() else None
            if root == "mujoco":
                return ModelSource(spec, kind, p)
            tried.append("not an MJCF file (" + ("a directory" if p.is_dir() else "no such file" if root is None
                                                 else f"its root element is <{root}>, not <mujoco>") + ")")
        elif kind == "urdf":
            p = Path(spec)
            if p.is_file():
                return ModelSource(spec, kind, p)
            tried.append(f"not a URDF file ({'a directory' if p.is_dir() else 'no such file'})")
        elif kind == "example-robot-data":
            from ..io.urdf import example_robot_data_path

            try:
                return ModelSource(spec, kind, example_robot_data_path(spec))
            except KeyError:
                tried.append("not an example-robot-data robot (a name of screwdyn.io.EXAMPLE_ROBOTS or a path "
                             "ending in .urdf under its robots directory)")
            except FileNotFoundError as e:
                tried.append(f"not an example-robot-data robot ({e})")
        else:
            raise ValueError(f"resolve: unknown kind {kind!r}; kinds are {KINDS}")
    from ..errors import ModelError

    raise ModelError(f"unknown model {spec!r}: " + "; ".join(tried))


def load(spec, floating_base=False):
    """The robot that ``spec`` names (:func:`resolve`), or a :class:`ModelSource` that
    :func:`resolve` returned, as a :class:`~screwdyn.Model`; with ``floating_base``, its root
    link joined to the world by a free-flyer (:func:`screwdyn.load_urdf`).

    A bundled robot is cached (models are immutable): gravity ``(0, 0, -9.81)``; transmissions in
    the file set ``gear_ratio`` and ``rotor_inertia`` (the reflected inertia
    ``gear_ratio**2 * rotor_inertia`` enters ``M``). Any other file is read by
    :func:`screwdyn.load_mjcf` (MJCF; its free joints are its floating bases) or
    :func:`screwdyn.load_urdf` on each call, its warnings shown.
    """
    source = spec if isinstance(spec, ModelSource) else resolve(spec)
    if source.kind == "bundled":
        return _load_bundled(source.spec, bool(floating_base))
    if source.kind == "mjcf":
        if floating_base:
            from ..errors import ModelError

            raise ModelError(f"{source.spec!r} is an MJCF file, whose <freejoint> elements say which bodies float; "
                             "floating_base applies to URDF files")
        from ..io.mjcf import load_mjcf

        return load_mjcf(source.path)
    from ..io.urdf import load_urdf

    return load_urdf(source.path, floating_base=floating_base)


@functools.lru_cache(maxsize=None)
def _load_bundled(name: str, floating_base=False):
    from ..inertia import InertiaWarning
    from ..io.urdf import load_urdf

    from ..geometry import VisualWarning

    with warnings.catch_warnings():
        if name in _QUIET_INERTIA:
            warnings.simplefilter("ignore", InertiaWarning)
        # the meshes of solo12 and talos_reduced are example-robot-data's: optional (without them the
        # viewer draws a stick figure), so not a warning on every load
        warnings.simplefilter("ignore", VisualWarning)
        return load_urdf(path(name), floating_base=floating_base or name in _FLOATING)


# The first element tag of an XML document, after its declaration, comments and doctype.
_FIRST_TAG = re.compile(rb"\s*(?:<\?.*?\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*<\s*([A-Za-z_][\w.:-]*)", re.DOTALL)


def _root_element(p: Path):
    """The root element's name of the XML file ``p`` (read from its first 64 KiB), or ``""``."""
    try:
        with open(p, "rb") as f:
            head = f.read(65536)
    except OSError:
        return ""
    match = _FIRST_TAG.match(head.removeprefix(b"\xef\xbb\xbf"))
    return match.group(1).decode(errors="replace").rsplit(":", 1)[-1] if match else ""


def _check(name):
    if name not in _NAMES:
        from ..errors import ModelError
        raise ModelError(f"unknown bundled robot {name!r}; bundled robots are {', '.join(_NAMES)}")


